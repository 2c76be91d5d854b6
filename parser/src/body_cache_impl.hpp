// SPDX-License-Identifier: Apache-2.0
// What a BodyCache holds: parsed bodies by thread and by text. Used by the DumpParser only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "lockwatch/model/thread_dump.hpp"
#include "lockwatch/parser/body_cache.hpp"
#include "lockwatch/parser/dump_parser.hpp"

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

  /// The bodies were parsed under these limits; other limits parse differently.
  void use_limits(const ParserLimits& l);
  void begin_dump() { ++dump; }
  /// Drops what the dump that just ended did not use; `threads` is how many it listed.
  void end_dump(std::size_t threads);
  const std::shared_ptr<ParsedBody>* by_thread(std::uint64_t key) const;
  /// The body of this text if one is kept, else nothing.
  std::shared_ptr<ParsedBody> by_text(std::string_view text) const;
  /// A body just parsed, to be found by its text.
  void add(const std::shared_ptr<ParsedBody>& body);
  /// Records that thread `key` had `body` in the current dump; false when the body was used
  /// in this dump already.
  bool note(std::uint64_t key, const std::shared_ptr<ParsedBody>& body);

  struct Entry {
    std::shared_ptr<ParsedBody> body;
    std::uint64_t dump = 0;  // the last dump in which the thread had it
  };
  std::optional<ParserLimits> limits;
  std::unordered_map<std::uint64_t, Entry> threads;
  // By their own text, so threads of one stack share one body; a body's `dump` says whether
  // it is still used (hashing a body's text again each time it is reused would cost more than
  // comparing it).
  std::unordered_map<std::string_view, std::shared_ptr<ParsedBody>> texts;
  std::uint64_t dump = 0;
  std::size_t threads_listed = 0;  // by the last dump: the next one lists about as many
  std::size_t bytes = 0;
  std::uint64_t reused = 0;
};

}  // namespace lockwatch::parser
