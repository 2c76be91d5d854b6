// SPDX-License-Identifier: Apache-2.0
// Samples as lists of interned blocks (a thread's lines up to a blank line); a block is a
// list of interned lines; thread headers are stored as templates plus their numbers.
#include "lockwatch/store/ring.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
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

// Encodes the text line by line as it arrives, or gives up (releasing what it took) as soon
// as what this one sample adds passes max_bytes: then it could not be kept even alone, and
// the ring must not grow past its bound to find that out.
struct Ring::Writer::State {
  explicit State(Impl& r) : ring(&r) {}
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  ~State() { give_up(); }

  bool append(std::string_view chunk) {
    bytes += chunk.size();
    if (given_up) return false;
    call_before = ring->pool_bytes;
    const bool ok = take_lines(chunk);
    settle();
    return ok;
  }

  // End of text: a last line without '\n' is a line too (and says so in final_newline).
  bool finish() {
    if (given_up) return false;
    call_before = ring->pool_bytes;
    s.final_newline = carry.empty();
    if (!carry.empty() && !line(carry)) return false;
    if (!block.empty()) s.blocks.push_back(ring->acquire_shape(block));
    block.clear();
    settle();
    s.blocks.shrink_to_fit();
    s.numbers.shrink_to_fit();
    return true;
  }

  void give_up() {
    if (given_up) return;
    given_up = true;
    ring->release(s, block);
    s = {}, block = {}, carry = {};
  }

  bool take_lines(std::string_view chunk) {
    std::size_t at = 0;
    if (!carry.empty()) {  // the line the last chunk ended inside
      const auto nl = chunk.find('\n');
      carry.append(chunk.substr(0, nl));
      if (nl == std::string_view::npos) return carry_fits();
      const bool ok = line(carry);
      carry.clear();
      if (!ok) return false;
      at = nl + 1;
    }
    while (at < chunk.size()) {
      const auto nl = chunk.find('\n', at);
      if (nl == std::string_view::npos) return carry.assign(chunk.substr(at)), carry_fits();
      if (!line(chunk.substr(at, nl - at))) return false;
      at = nl + 1;
    }
    return true;
  }

  bool line(std::string_view text) {
    block.push_back(ring->line_id(text, s.numbers));
    if (is_blank(text)) s.blocks.push_back(ring->acquire_shape(std::exchange(block, {})));
    if (added() > ring->limits.max_bytes) return give_up(), false;
    return true;
  }

  // A line longer than max_bytes would add more than max_bytes once complete, so a hostile
  // endless line is not carried to its end. (Only a sample kept before the limits shrank can
  // hold such a line already; refusing its repeat then is the bound's side to err on.)
  bool carry_fits() {
    if (carry.size() <= ring->limits.max_bytes) return true;
    give_up();
    return false;
  }

  // What this sample adds: the pool bytes it took (per call, so that an eviction between
  // calls, which only frees others' entries, is not counted against it) and its own lists.
  std::uint64_t added() const {
    const auto pool = pool_added + static_cast<std::int64_t>(ring->pool_bytes) - static_cast<std::int64_t>(call_before);
    return static_cast<std::uint64_t>(std::max<std::int64_t>(pool, 0)) + s.numbers.size() +
           (s.blocks.size() + block.size()) * sizeof(Id);
  }
  void settle() {
    if (!given_up) pool_added += static_cast<std::int64_t>(ring->pool_bytes) - static_cast<std::int64_t>(call_before);
  }

  Impl* ring;
  Stored s;
  Shape block;        // the open block's lines
  std::string carry;  // the open line: the text since the last '\n'
  std::int64_t pool_added = 0;
  std::uint64_t call_before = 0;  // pool bytes when the current call began
  std::uint64_t bytes = 0;
  bool given_up = false;
};

Ring::Writer::Writer(std::unique_ptr<State> state) : state_(std::move(state)) {}
Ring::Writer::Writer(Writer&&) noexcept = default;
Ring::Writer& Ring::Writer::operator=(Writer&&) noexcept = default;
Ring::Writer::~Writer() = default;
bool Ring::Writer::append(std::string_view chunk) { return state_ && state_->append(chunk); }
bool Ring::Writer::given_up() const noexcept { return !state_ || state_->given_up; }
std::uint64_t Ring::Writer::bytes() const noexcept { return state_ ? state_->bytes : 0; }
void Ring::Writer::abandon() {
  if (state_) state_->give_up();
}

Ring::Ring(RingLimits limits) : impl_(std::make_unique<Impl>()) { impl_->limits = limits; }
Ring::~Ring() = default;
Ring::Ring(Ring&&) noexcept = default;
Ring& Ring::operator=(Ring&&) noexcept = default;

std::optional<std::uint64_t> Ring::add(std::string_view text, sampling::DumpFacts facts) {
  auto writer = begin();
  writer.append(text);
  return commit(std::move(writer), std::move(facts));
}

Ring::Writer Ring::begin() { return Writer(std::make_unique<Writer::State>(*impl_)); }

std::optional<std::uint64_t> Ring::commit(Writer&& writer, sampling::DumpFacts facts) {
  if (!writer.state_ || writer.state_->ring != impl_.get()) throw std::invalid_argument("a ring writer commits to its own ring");
  const auto state = std::move(writer.state_);
  if (!state->finish()) return ++impl_->refused, std::nullopt;
  Stored s = std::move(state->s);
  state->s = {}, state->given_up = true;  // spent: its references are the sample's now
  s.info = {impl_->next_id++, state->bytes, std::move(facts)};
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
