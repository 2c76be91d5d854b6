// SPDX-License-Identifier: Apache-2.0
// The parsed thread bodies of a target's last dump, for the parser of its next dump.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace lockwatch::parser {

/// Why it exists: a JVM's threads mostly show the same stack from one sample to the next
/// (the daemon's 1000-thread bench: nine in ten). A DumpParser given a BodyCache compares
/// what follows each thread's header with the body that thread had in the last dump, byte
/// for byte as it streams in, and when it is the same takes the parsed form from here: no
/// line split, classified or copied. Everything else is parsed as without a cache, and the
/// result is the same dump either way (the dump_parser fuzzer checks it).
///
/// A body here is a thread's lines after its header up to the first blank line, when they
/// are all plain stack lines (state, frames, locks, compile task, carrier); the cache holds
/// the bodies the last dump used - at most one dump's worth - with equal bodies shared, so
/// threads of one stack share one body (and one ThreadInfo::body_id). Dumps that took a
/// body keep it alive (model::ThreadDump::shared). One parser at a time; not thread-safe.
class BodyCache {
 public:
  BodyCache();
  ~BodyCache();
  BodyCache(const BodyCache&) = delete;
  BodyCache& operator=(const BodyCache&) = delete;

  /// Distinct bodies kept, and their text's bytes.
  std::size_t size() const noexcept;
  std::size_t bytes() const noexcept;
  /// Thread bodies taken from the cache instead of being parsed, since it was made.
  std::uint64_t reused() const noexcept;

 private:
  friend class DumpParser;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lockwatch::parser
