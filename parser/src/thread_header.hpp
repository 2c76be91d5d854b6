// SPDX-License-Identifier: Apache-2.0
// Thread header lines: jstack's `"name" #1 daemon prio=5 ... tid=0x.. nid=.. state  [0x..]`
// and dump_to_file's `#1 "name" virtual STATE instant`.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace lockwatch::parser::detail {

struct HeaderFields {
  std::string_view name;                 // view into the parsed line
  std::optional<std::uint64_t> java_id;
  std::optional<std::uint64_t> os_tid;
  std::optional<std::uint64_t> nid;
  std::optional<std::uint64_t> tid;
  bool daemon = false;
  bool is_virtual = false;
  bool has_stack_bracket = false;        // ends in "[0x..]": a Java thread (VM threads have none)
  int prio = -1;
  int os_prio = -1;
  std::optional<double> cpu_ms;
  std::optional<double> elapsed_s;
  std::string_view status;               // "waiting for monitor entry"; JDK 25 plain: the state word
  std::string_view instant;              // dump_to_file plain (JDK 25)
};

/// Parses a jstack thread header from the right, so that names holding quotes, '#',
/// "tid=" or a whole fake header do not fool it. `line` may span several physical lines
/// (a name with '\n'). Returns nothing if the text is not a complete header.
std::optional<HeaderFields> parse_thread_header(std::string_view line);

/// Parses a Thread.dump_to_file plain header: `#12 "name"` (JDK 21-24) or
/// `#12 "name" virtual WAITING 2025-01-01T00:00:00Z` (JDK 25).
std::optional<HeaderFields> parse_plain_header(std::string_view line);

/// Reads digits in base 10, or base 16 after "0x" (or with `hex`); no sign, no junk.
std::optional<std::uint64_t> parse_uint(std::string_view text, bool hex = false);

}  // namespace lockwatch::parser::detail
