// SPDX-License-Identifier: Apache-2.0
// Push parser for thread dumps: feed bytes split anywhere, get whole dumps out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "lockwatch/model/thread_dump.hpp"
#include "lockwatch/parser/body_cache.hpp"

namespace lockwatch::parser {

/// Hard limits. Hitting one stops or trims parsing cleanly and is counted, never a crash.
struct ParserLimits {
  std::size_t max_line_bytes = 64 * 1024;         // longer lines keep both halves (counted in long_lines)
  std::size_t max_total_bytes = std::size_t{2} << 30;  // input past this is ignored; parsing stops
  std::size_t max_threads = 200'000;              // per dump; parsing stops past it
  std::size_t max_frames_per_thread = 4096;       // HotSpot prints at most 1024 by default
  // Lock lines ("- locked", "- waiting to lock", owned synchronizers) per thread: a real
  // stack holds a few per frame; a hostile one may print 200 000 in one thread.
  std::size_t max_locks_per_thread = 4096;
  std::size_t max_dumps = 100'000;                // per stream; parsing stops past it
  /// Thread entries over every dump of the stream; parsing stops past it (StopReason::
  /// max_threads). A daemon's reply holds one dump, and the attach client bounds its thread
  /// entries by this count instead of scanning every byte of it again (sampling::TextChunks).
  std::size_t max_stream_threads = SIZE_MAX;
};

enum class StopReason : std::uint8_t { none, max_total_bytes, max_threads, max_dumps };
enum class Encoding : std::uint8_t { utf8, utf16le, utf16be };

/// Stream-wide counters (per-dump ones live in model::DumpStats).
struct ParseStats {
  std::uint64_t bytes = 0;          // input bytes fed (before transcoding), read or not
  std::uint64_t lines = 0;          // lines seen, inside and outside dumps
  std::uint64_t long_lines = 0;     // lines cut at max_line_bytes
  std::uint64_t junk_lines = 0;     // non-blank lines outside any dump (prompts, log lines, status "0")
  std::uint64_t dumps = 0;          // dumps completed
  std::uint64_t threads = 0;        // thread entries taken in, over every dump (JSON: not counted)
  std::uint64_t incomplete_dumps = 0;  // dumps that ended before their end marker (truncated)
  Encoding encoding = Encoding::utf8;
  StopReason stopped = StopReason::none;
};

/// Push-based, chunk-invariant parser. The result does not depend on how the input is
/// split across feed() calls. Several dumps in one stream come out as several dumps.
/// Recognizes jstack / jcmd Thread.print / SIGQUIT text from JDK 1.5 to 25 and the
/// JDK 21+ Thread.dump_to_file plain and JSON forms. Never throws on bad input.
class DumpParser {
 public:
  explicit DumpParser(ParserLimits limits = {}) : DumpParser(limits, nullptr) {}
  /// With `bodies`, thread bodies equal to their last dump's are taken from the cache, and
  /// the cache learns this dump's (BodyCache). The cache is the caller's to share between
  /// the successive parsers of one target, one at a time.
  DumpParser(ParserLimits limits, std::shared_ptr<BodyCache> bodies);
  ~DumpParser();
  DumpParser(DumpParser&&) noexcept;
  DumpParser& operator=(DumpParser&&) noexcept;

  void feed(std::string_view chunk);
  /// End of input: flushes a last line without '\n' and closes the open dump.
  void finish();
  /// Dumps completed so far (a dump completes at the start of the next one or at finish()).
  std::vector<model::ThreadDump> take_dumps();
  const ParseStats& stats() const noexcept;
  /// Whether a dump has begun in what was fed so far (open, or completed and maybe taken).
  /// Once true, parse_dumps() of the whole input is not empty, whatever follows: so a caller
  /// that only needs to know whether the text is a dump can stop feeding here. A JSON
  /// document is read whole at finish(), so for JSON this stays false until then.
  bool dump_begun() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Convenience for whole buffers: feed + finish + take_dumps.
std::vector<model::ThreadDump> parse_dumps(std::string_view text, ParserLimits limits = {},
                                           ParseStats* stats = nullptr);

}  // namespace lockwatch::parser
