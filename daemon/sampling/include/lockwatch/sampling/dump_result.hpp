// SPDX-License-Identifier: Apache-2.0
// What taking one thread dump produced: the text, or a labelled failure.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "lockwatch/sampling/bounded_reply.hpp"

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

struct DumpRequest {
  int pid = 0;                                    // as seen from our PID namespace
  bool locks = false;                             // -l: walks the heap inside the safepoint; opt-in
  std::chrono::milliseconds timeout{10'000};      // the whole dump, connect to last byte
  ReplyBounds bounds;                             // past them the dump is too_large
  DumpForm form = DumpForm::print;                // json: the attach backend only; ignores `locks`
};

struct DumpResult {
  Outcome outcome = Outcome::io_error;
  std::string text;                               // the dump as jstack prints it (no status line), or the JSON file
  std::string error;                              // for people: what failed and what to do
  std::chrono::steady_clock::duration elapsed{};
  DumpForm form = DumpForm::print;                // what `text` is (what was asked for, also on failure)
};

}  // namespace lockwatch::sampling
