// SPDX-License-Identifier: Apache-2.0
// What a BodyCache holds: the last dump's threads in order, and parsed bodies by text. Used
// by the DumpParser only.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "lockwatch/model/thread_dump.hpp"
#include "lockwatch/parser/body_cache.hpp"
#include "lockwatch/parser/dump_parser.hpp"
#include "thread_header.hpp"

namespace lockwatch::parser {

/// One parsed body. `fields` holds only what body lines set (state, state_detail,
/// carrying_vthread, mounted_frames_begin, frames, locks, notes), as views into `text`.
struct ParsedBody {
  std::string text;          // the lines, each ending in '\n'; the last one blank
  std::vector<model::Frame> frames;  // what fields' lists view
  std::vector<model::LockRef> locks;
  std::vector<std::string_view> notes;
  model::ThreadInfo fields;
  std::uint64_t id = 0;      // ThreadInfo::body_id: unique in the process, never reused
  std::uint32_t lines = 0;
  // What parsing the lines added to the dump's counters.
  std::uint32_t unknown_lines = 0;
  std::uint32_t frames_dropped = 0;
  std::uint32_t locks_dropped = 0;
  std::uint64_t dump = 0;     // the last dump (BodyCache::Impl::dump) that used it
};

struct BodyCache::Impl {
  /// A thread's identity across dumps: its #id, else its nid (VM threads). None: no body kept.
  static std::optional<std::uint64_t> key_of(const model::ThreadInfo& t) {
    if (t.java_id) return *t.java_id & ~(std::uint64_t{1} << 63);
    if (t.nid) return *t.nid | std::uint64_t{1} << 63;
    return std::nullopt;
  }

  /// One thread of a dump, in the order the dump lists them: its header line (in a buffer of
  /// the dump's lines), how that header is laid out, and the body it had.
  struct Listed {
    std::uint32_t at = 0, size = 0;
    detail::HeaderLayout layout;
    std::optional<std::uint64_t> key;
    std::shared_ptr<ParsedBody> body;
  };

  /// The bodies were parsed under these limits; other limits parse differently.
  void use_limits(const ParserLimits& l);
  void begin_dump();
  /// Drops what the dump that just ended did not use; its threads are the last dump's now.
  void end_dump();

  /// The thread the last dump listed next, if its header can be compared (a layout).
  const Listed* expected_thread() const {
    return expected < last.size() && last[expected].layout.usable ? &last[expected] : nullptr;
  }
  std::string_view line_of(const Listed& l) const { return std::string_view(last_lines).substr(l.at, l.size); }
  /// A hint for the threads after the one just refit. Why: the last dump's bodies lie
  /// scattered on the heap, and the first touch of each (its shared count as the match takes
  /// it, its text as the match compares) was a cache miss a thread. The body expected after
  /// next is fetched, and the text of the next one, whose body the step before fetched.
  void prefetch_expected() const {
    if (expected + 1 < last.size()) {
      if (const auto* body = last[expected + 1].body.get()) {
        const auto* object = reinterpret_cast<const char*>(body);
        __builtin_prefetch(object - 16);  // make_shared's counts sit just before the object
        for (std::size_t at = 0; at < sizeof(ParsedBody); at += 64) __builtin_prefetch(object + at);
      }
    }
    if (expected < last.size()) {
      if (const auto* body = last[expected].body.get()) {
        __builtin_prefetch(body->text.data());
        __builtin_prefetch(body->text.data() + 64);
      }
    }
  }
  /// Where the last dump listed thread `key`, when the order of the threads broke.
  const Listed* find(std::uint64_t key);
  /// A thread of this dump, in order; its body comes with note().
  void list(std::string_view line, const detail::HeaderLayout& layout, std::optional<std::uint64_t> key);
  /// The last thread listed is not one after all (its header went on over the next line).
  void unlist() { if (!next.empty()) next.pop_back(); }
  /// The body of this text if one is kept, else nothing.
  std::shared_ptr<ParsedBody> by_text(std::string_view text) const;
  /// A body just parsed, to be found by its text.
  void add(const std::shared_ptr<ParsedBody>& body);
  /// The thread listed last has `body`; false when the body was used in this dump already.
  bool note(const std::shared_ptr<ParsedBody>& body);

  std::optional<ParserLimits> limits;
  // The last dump's threads, and this dump's as it is read. A dump mostly lists its threads
  // in the order of the last one, so a header is compared with the one that came next there
  // (refit_thread_header) and its body with that thread's: no hashing per thread. `by_key` is
  // built from `last` only when the order breaks.
  std::vector<Listed> last, next;
  std::string last_lines, next_lines;
  std::size_t expected = 0;  // in `last`: the thread expected next
  std::unordered_map<std::uint64_t, std::size_t> by_key;  // key -> index in `last`
  bool by_key_built = false;
  // By their own text, so threads of one stack share one body; a body's `dump` says whether
  // it is still used (hashing a body's text again each time it is reused would cost more than
  // comparing it).
  std::unordered_map<std::string_view, std::shared_ptr<ParsedBody>> texts;
  std::uint64_t dump = 0;
  std::size_t bytes = 0;
  std::uint64_t reused = 0;
};

}  // namespace lockwatch::parser
