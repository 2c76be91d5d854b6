// SPDX-License-Identifier: Apache-2.0
// The one record of a finished thread dump, from the backend that took it to the ring.
//
// Each fact is written once, where it is known - the backend: outcome, form, source, elapsed,
// error, text; the scheduler: when it started, whether it was an -l or a burst dump - and then
// carried unchanged: the service parses the text, the ring keeps the facts beside it, the API
// and the incident files print them. Units stay std::chrono until they are printed.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "lockwatch/sampling/bounded_reply.hpp"
#include "lockwatch/sampling/text_chunks.hpp"

namespace lockwatch::sampling {

/// Closed set: it becomes a metric label, so it must never grow from input.
enum class Outcome : std::uint8_t {
  ok,
  timeout,         // the dump did not complete within the deadline
  attach_refused,  // no attach listener, attach disabled, wrong uid/gid, connection refused/reset
  target_gone,     // no such process, or it exited during the dump
  io_error,        // any other socket / pipe / file error
  parse_error,     // the reply was not a thread dump (bad status line, no dump in the text)
  tool_failed,     // the jstack backend's tool could not run or exited non-zero
  too_large,       // the reply passed a bound (bytes, threads), or the sample did not fit the ring
  untrusted,       // a path or peer of the target failed a safety check: symlink, FIFO, owner, credentials
  dump_file_failed,  // a JSON dump's file could not be written (read-only or full /tmp) or the JVM refused the command
};
std::string_view to_string(Outcome outcome) noexcept;

/// Which of the JVM's two thread dumps a sample is. Closed set: a label downstream.
enum class DumpForm : std::uint8_t {
  print,  // Thread.print (the attach `threaddump`, jstack's text): platform threads only
  json,   // Thread.dump_to_file -format=json (JDK 21+): virtual threads too
};
std::string_view to_string(DumpForm form) noexcept;  // "print", "json"

/// Which backend took the dump. Set by the backend itself, so a reload that switches the
/// backend while a dump is in flight cannot mislabel it.
enum class DumpSource : std::uint8_t {
  none,    // no backend answered: the scheduler's watchdog gave up on it
  attach,  // the attach socket (lockwatch's own client)
  jstack,  // the JDK's jstack tool
};
std::string_view to_string(DumpSource source) noexcept;  // "none", "attach", "jstack"

struct DumpRequest {
  int pid = 0;                                    // as seen from our PID namespace
  bool locks = false;                             // -l: walks the heap inside the safepoint; opt-in
  std::chrono::milliseconds timeout{10'000};      // the whole dump, connect to last byte
  ReplyBounds bounds;                             // past them the dump is too_large
  DumpForm form = DumpForm::print;                // json: the attach backend only; ignores `locks`
  /// When set, the attach backend hands the dump's text over here as it arrives, chunk by
  /// chunk (on the thread running the backend), and keeps none of it: the record's text is
  /// then "" and whoever set the sink has the text. Only a dump's own text goes here - the
  /// payload of a Thread.print whose status is 0, or the JSON file - never an error reply;
  /// the bounds hold as without it. The jstack backend ignores it and keeps its text.
  std::function<void(std::string_view)> on_text{};
  /// Instead of on_text (the attach backend; when both are set this one): the same text,
  /// read straight into buffers the caller lends and given back to it filled - nothing is
  /// copied between the socket (or the JSON file) and the caller. The last buffer is given
  /// before the record is delivered.
  TextChunks chunks{};
};

/// Everything known of a finished dump except its text: what the ring keeps per sample.
struct DumpFacts {
  Outcome outcome = Outcome::io_error;
  std::string error;                              // for people: what failed and what to do; "" when ok
  std::chrono::steady_clock::duration elapsed{};  // connect (or tool start) to the last byte
  DumpForm form = DumpForm::print;                // what the text is (what was asked for, also on failure)
  DumpSource source = DumpSource::none;           // set by the backend
  std::chrono::system_clock::time_point started{};  // set by the scheduler: when the dump was asked for
  bool locks = false;                             // set by the scheduler: an -l dump (j.u.c. owners listed)
  bool burst = false;                             // set by the scheduler: taken by an incident burst
};

/// For printing only (API, logs, metrics): the record itself keeps std::chrono.
inline double unix_seconds(std::chrono::system_clock::time_point t) noexcept {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}
inline double seconds(std::chrono::steady_clock::duration d) noexcept { return std::chrono::duration<double>(d).count(); }

struct DumpRecord : DumpFacts {
  std::string text;                               // the dump as jstack prints it (no status line), or the JSON file;
                                                  // "" when it went to DumpRequest::on_text
};

/// The error text for an ok record whose text the parser found no dump in (the parser
/// decides; this only words it): "attach answered 25 bytes without a thread dump: '...'".
/// `head`: the first bytes of what came (120 are shown), `bytes`: how many came.
std::string no_dump_error(DumpSource source, std::string_view head, std::uint64_t bytes);

/// The error text for a reply past limits.max_threads, whoever counted it (the reader, or the
/// parser that told it): "the reply held more than limits.max_threads (N) thread entries: "
/// followed by `what_then` ("dropped the connection", "not kept (B bytes read)").
std::string too_many_threads_error(std::uint64_t bound, std::string_view what_then);

}  // namespace lockwatch::sampling
