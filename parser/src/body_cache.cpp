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
  threads.clear();
  texts.clear();
  bytes = 0;
}

void BodyCache::Impl::end_dump(std::size_t threads_in_dump) {
  threads_listed = threads_in_dump;
  std::erase_if(threads, [this](const auto& kv) { return kv.second.dump != dump; });
  std::erase_if(texts, [this](const auto& kv) {
    if (kv.second->dump == dump) return false;
    bytes -= kv.first.size();
    return true;
  });
}

const std::shared_ptr<ParsedBody>* BodyCache::Impl::by_thread(std::uint64_t key) const {
  const auto it = threads.find(key);
  return it == threads.end() ? nullptr : &it->second.body;
}

std::shared_ptr<ParsedBody> BodyCache::Impl::by_text(std::string_view text) const {
  const auto it = texts.find(text);
  return it == texts.end() ? nullptr : it->second;
}

void BodyCache::Impl::add(const std::shared_ptr<ParsedBody>& body) {
  if (texts.try_emplace(std::string_view(body->text), body).second) bytes += body->text.size();
}

bool BodyCache::Impl::note(std::uint64_t key, const std::shared_ptr<ParsedBody>& body) {
  auto& entry = threads[key];
  if (entry.body != body) entry.body = body;
  entry.dump = dump;
  return std::exchange(body->dump, dump) != dump;
}

BodyCache::BodyCache() : impl_(std::make_unique<Impl>()) {}
BodyCache::~BodyCache() = default;
std::size_t BodyCache::size() const noexcept { return impl_->texts.size(); }
std::size_t BodyCache::bytes() const noexcept { return impl_->bytes; }
std::uint64_t BodyCache::reused() const noexcept { return impl_->reused; }

}  // namespace lockwatch::parser
