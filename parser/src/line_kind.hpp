// SPDX-License-Identifier: Apache-2.0
// Stateless classification of one line of a thread dump, by prefix (no regex).
#pragma once

#include <cstdint>
#include <string_view>

namespace lockwatch::parser::detail {

enum class LineKind : std::uint8_t {
  blank,
  dump_header,      // "Full thread dump OpenJDK 64-Bit Server VM (...):"
  timestamp,        // "2024-05-01 12:00:00" (jstack) or "2025-04-22T07:47:09Z" (dump_to_file)
  quoted,           // starts with '"': a thread header, or "name": in a deadlock report
  plain_header,     // "#12 \"name\" ..." (Thread.dump_to_file plain)
  thread_state,     // "   java.lang.Thread.State: BLOCKED (on object monitor)"
  carrying,         // "   Carrying virtual thread #22"       (JDK 21+)
  mounted,          // "   Mounted virtual thread #22"        (JDK 23+)
  compile_task,     // "   No compile task" / "   Compiling: ..."
  frame,            // "\tat ..." (pasted copies use spaces)
  lock,             // "\t- ..."
  owned_header,     // "   Locked ownable synchronizers:"
  smr_header,       // "Threads class SMR info:"                (JDK 10+)
  jni,              // "JNI global refs: 4, weak refs: 0" / "JNI global references: 235"
  deadlock_found,   // "Found one Java-level deadlock:"
  deadlock_stacks,  // "Java stack information for the threads listed above:"
  deadlock_footer,  // "Found 2 deadlocks."
  separator,        // "=============================="
  heap,             // "Heap" (SIGQUIT trailer) or a class histogram header
  indented,         // any other line starting with whitespace
  other,            // any other line
};

struct Line {
  LineKind kind = LineKind::other;
  std::string_view body;  // the part after the recognised prefix (frame text, lock text, state, ...)
};

/// Any line but a frame: the prefix tables (line_kind.cpp).
Line classify_other(std::string_view line) noexcept;

/// Frames are most lines of a dump: tested first, inline, so that a frame costs no call.
inline Line classify(std::string_view line) noexcept {
  if (line.size() > 4 && line[0] == '\t' && line[1] == 'a' && line[2] == 't' && line[3] == ' ')
    return {LineKind::frame, line.substr(4)};
  return classify_other(line);
}

}  // namespace lockwatch::parser::detail
