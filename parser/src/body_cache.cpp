// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/parser/body_cache.hpp"

#include "body_cache_impl.hpp"

#include <utility>

namespace lockwatch::parser {
namespace {

bool same(const ParserLimits& a, const ParserLimits& b) {
  return a.max_line_bytes == b.max_line_bytes && a.max_frames_per_thread == b.max_frames_per_thread &&
         a.max_locks_per_thread == b.max_locks_per_thread;
}

}  // namespace

void BodyCache::Impl::use_limits(const ParserLimits& l) {
  if (limits && same(*limits, l)) return;
  limits = l;
  last.clear(), next.clear(), last_lines.clear(), next_lines.clear(), by_key.clear();
  by_key_built = false;
  texts.clear();
  bytes = 0;
}

void BodyCache::Impl::begin_dump() {
  ++dump;
  next.clear();
  next_lines.clear();
  expected = 0;
}

void BodyCache::Impl::end_dump() {
  std::swap(last, next);
  std::swap(last_lines, next_lines);
  next.clear();
  next_lines.clear();
  by_key_built = false;
  std::erase_if(texts, [this](const auto& kv) {
    if (kv.second->dump == dump) return false;
    bytes -= kv.first.size();
    return true;
  });
}

const BodyCache::Impl::Listed* BodyCache::Impl::find(std::uint64_t key) {
  // Mostly the thread expected next whose header changed beyond its times (a new state, a
  // new stack address): the order holds, and the map is not built for it.
  if (expected < last.size() && last[expected].key == key) return &last[expected++];
  if (!by_key_built) {
    by_key.clear();
    for (std::size_t i = 0; i < last.size(); ++i)
      if (last[i].key) by_key.try_emplace(*last[i].key, i);
    by_key_built = true;
  }
  const auto it = by_key.find(key);
  if (it == by_key.end()) return nullptr;
  expected = it->second + 1;  // the threads after it are expected next
  return &last[it->second];
}

void BodyCache::Impl::list(std::string_view line, const detail::HeaderLayout& layout, std::optional<std::uint64_t> key) {
  Listed& l = next.emplace_back();
  l.at = static_cast<std::uint32_t>(next_lines.size());
  l.size = static_cast<std::uint32_t>(line.size());
  if (next_lines.size() + line.size() <= 0xFFFF'FFFFu) {
    next_lines.append(line);
    l.layout = layout;
  }
  l.key = key;
}

std::shared_ptr<ParsedBody> BodyCache::Impl::by_text(std::string_view text) const {
  const auto it = texts.find(text);
  return it == texts.end() ? nullptr : it->second;
}

void BodyCache::Impl::add(const std::shared_ptr<ParsedBody>& body) {
  if (texts.try_emplace(std::string_view(body->text), body).second) bytes += body->text.size();
}

bool BodyCache::Impl::note(const std::shared_ptr<ParsedBody>& body) {
  if (!next.empty()) next.back().body = body;
  return std::exchange(body->dump, dump) != dump;
}

BodyCache::BodyCache() : impl_(std::make_unique<Impl>()) {}
BodyCache::~BodyCache() = default;
std::size_t BodyCache::size() const noexcept { return impl_->texts.size(); }
std::size_t BodyCache::bytes() const noexcept { return impl_->bytes; }
std::uint64_t BodyCache::reused() const noexcept { return impl_->reused; }

}  // namespace lockwatch::parser
