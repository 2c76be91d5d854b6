// SPDX-License-Identifier: Apache-2.0
// Samples as lists of interned blocks (a thread's lines up to a blank line); a block is a
// list of interned lines; thread headers are stored as templates plus their numbers.
#include "lockwatch/store/ring.hpp"

#include <algorithm>
#include <optional>
#include <utility>

#include "header_numbers.hpp"
#include "lockwatch/store/intern_pool.hpp"

namespace lockwatch::store {
namespace {

using Id = std::uint32_t;
using Shape = std::vector<Id>;
constexpr Id template_bit = 0x8000'0000u;  // the line is a header template: numbers follow
// What a hash node, its bucket and the pool's entry cost besides the value itself.
constexpr std::uint64_t entry_overhead = 80;

struct ShapeHash {
  std::size_t operator()(const Shape& s) const noexcept {
    std::size_t h = 1469598103934665603ull;
    for (Id id : s) h = (h ^ id) * 1099511628211ull;
    return h;
  }
};

struct Stored {
  SampleInfo info;
  std::vector<Id> blocks;  // shape ids
  std::string numbers;     // varints cut out of the headers, in order
  bool final_newline = true;
  std::uint64_t bytes = 0;
};

std::uint64_t bytes_of(const Stored& s) {
  return sizeof(Stored) + s.blocks.capacity() * sizeof(Id) + s.numbers.capacity() + s.info.dump.error.capacity();
}

bool is_blank(std::string_view line) { return line.empty() || line == "\r"; }

}  // namespace

struct Ring::Impl {
  RingLimits limits;
  InternPool<std::string, StringHash> lines;
  InternPool<Shape, ShapeHash> shapes;
  std::deque<Stored> samples;
  std::uint64_t next_id = 1;
  std::uint64_t pool_bytes = 0;
  std::uint64_t sample_bytes = 0;
  std::uint64_t evictions = 0;
  std::uint64_t refused = 0;

  Id acquire_line(std::string_view text) {
    const auto before = lines.size();
    const auto size = text.size();
    const Id id = lines.acquire(text);
    if (lines.size() > before) pool_bytes += size + entry_overhead;
    return id;
  }

  void release_line(Id id) {
    const auto size = lines.get(id & ~template_bit).size();
    if (lines.release(id & ~template_bit)) pool_bytes -= size + entry_overhead;
  }

  // A shape owns one reference to each of its lines; a shape seen before already does.
  Id acquire_shape(const Shape& shape) {
    const auto before = shapes.size();
    const Id id = shapes.acquire(shape);
    if (shapes.size() > before) pool_bytes += shape.size() * sizeof(Id) + entry_overhead;
    else for (Id line : shape) release_line(line);
    return id;
  }

  void release_shape(Id id) {
    const Shape shape = shapes.get(id);
    if (!shapes.release(id)) return;
    pool_bytes -= shape.size() * sizeof(Id) + entry_overhead;
    for (Id line : shape) release_line(line);
  }

  Id line_id(std::string_view line, std::string& numbers) {
    if (detail::cut_numbers(line, tmpl, numbers)) return acquire_line(tmpl) | template_bit;
    return acquire_line(line);
  }
  std::string tmpl;  // line_id's buffer, kept: a header line is cut on every thread of every dump

  // Encodes `text`, or gives up (releasing what it took) as soon as what this one sample
  // adds passes max_bytes: then it could not be kept even alone, and the ring must not
  // grow past its bound to find that out.
  std::optional<Stored> encode(std::string_view text) {
    Stored s;
    s.final_newline = text.empty() || text.back() == '\n';
    const auto pool_before = pool_bytes;
    Shape block;
    for (std::size_t at = 0; at < text.size();) {
      const auto end = std::min(text.find('\n', at), text.size());
      const auto line = text.substr(at, end - at);
      block.push_back(line_id(line, s.numbers));
      if (is_blank(line)) s.blocks.push_back(acquire_shape(std::exchange(block, {})));
      at = end + 1;
      const auto added = pool_bytes - pool_before + s.numbers.size() + (s.blocks.size() + block.size()) * sizeof(Id);
      if (added > limits.max_bytes) return release(s, block), std::nullopt;
    }
    if (!block.empty()) s.blocks.push_back(acquire_shape(block));
    s.blocks.shrink_to_fit();
    s.numbers.shrink_to_fit();
    return s;
  }

  void release(const Stored& s, const Shape& open_block) {
    for (Id block : s.blocks) release_shape(block);
    for (Id line : open_block) release_line(line);
  }

  void evict_oldest() {
    for (Id block : samples.front().blocks) release_shape(block);
    sample_bytes -= samples.front().bytes;
    samples.pop_front();
    ++evictions;
  }

  void enforce() {
    while (samples.size() > limits.max_samples || (samples.size() > 1 && pool_bytes + sample_bytes > limits.max_bytes))
      evict_oldest();
  }

  const Stored* find(std::uint64_t id) const {
    auto it = std::lower_bound(samples.begin(), samples.end(), id, [](const Stored& s, std::uint64_t v) { return s.info.id < v; });
    return it != samples.end() && it->info.id == id ? &*it : nullptr;
  }

  // Header templates keep their text around the numbers, which is all collapsing needs.
  std::vector<std::string_view> line_views(Id block) const {
    std::vector<std::string_view> out;
    for (Id line : shapes.get(block)) out.push_back(lines.get(line & ~template_bit));
    return out;
  }

  std::string render(const Stored& s) const {
    std::string out;
    std::size_t pos = 0;
    for (Id block : s.blocks)
      for (Id line : shapes.get(block)) {
        if (line & template_bit) detail::paste_numbers(lines.get(line & ~template_bit), s.numbers, pos, out);
        else out.append(lines.get(line));
        out.push_back('\n');
      }
    if (!s.final_newline && !out.empty()) out.pop_back();
    return out;
  }
};

Ring::Ring(RingLimits limits) : impl_(std::make_unique<Impl>()) { impl_->limits = limits; }
Ring::~Ring() = default;
Ring::Ring(Ring&&) noexcept = default;
Ring& Ring::operator=(Ring&&) noexcept = default;

std::optional<std::uint64_t> Ring::add(std::string_view text, sampling::DumpFacts facts) {
  auto encoded = impl_->encode(text);
  if (!encoded) return ++impl_->refused, std::nullopt;
  Stored s = std::move(*encoded);
  s.info = {impl_->next_id++, text.size(), std::move(facts)};
  s.bytes = bytes_of(s);
  impl_->sample_bytes += s.bytes;
  impl_->samples.push_back(std::move(s));
  impl_->enforce();
  return impl_->samples.back().info.id;
}

std::vector<SampleInfo> Ring::list() const {
  std::vector<SampleInfo> out;
  out.reserve(impl_->samples.size());
  for (const auto& s : impl_->samples) out.push_back(s.info);
  return out;
}

std::optional<SampleInfo> Ring::info(std::uint64_t id) const {
  const auto* s = impl_->find(id);
  return s ? std::optional(s->info) : std::nullopt;
}

std::optional<std::string> Ring::text(std::uint64_t id) const {
  const auto* s = impl_->find(id);
  return s ? std::optional(impl_->render(*s)) : std::nullopt;
}

std::optional<std::uint64_t> Ring::first_id() const {
  if (impl_->samples.empty()) return std::nullopt;
  return impl_->samples.front().info.id;
}

void Ring::set_limits(RingLimits limits) {
  impl_->limits = limits;
  impl_->enforce();
}

std::size_t Ring::size() const noexcept { return impl_->samples.size(); }
std::uint64_t Ring::bytes() const noexcept { return impl_->pool_bytes + impl_->sample_bytes; }
std::uint64_t Ring::evictions() const noexcept { return impl_->evictions; }
std::uint64_t Ring::refused() const noexcept { return impl_->refused; }

}  // namespace lockwatch::store
