// SPDX-License-Identifier: Apache-2.0
// Thread header lines: jstack's `"name" #1 daemon prio=5 ... tid=0x.. nid=.. state  [0x..]`
// and dump_to_file's `#1 "name" virtual STATE instant`.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace lockwatch::parser::detail {

/// A field whose value changes from one dump to the next for the same thread.
enum class VolatileKind : std::uint8_t { cpu, elapsed, other };  // other: allocated=, defined_classes=

struct VolatileValue {
  VolatileKind kind = VolatileKind::other;
  std::string_view text;  // the value, a view into the parsed line
};

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
  // The volatile fields taken, right to left as the header is read; more than fit are counted.
  std::array<VolatileValue, 4> volatile_values{};
  std::uint8_t volatile_count = 0;
};

/// Bytes [at, at + size) of a line.
struct TextSpan {
  std::uint32_t at = 0, size = 0;
};

/// Where a parsed jstack header's text lies in its line, as offsets, with the fields that
/// stay the same from one header of the thread to the next: what the next header of the same
/// thread is compared with (refit_thread_header), kept without the line's own copy.
struct HeaderLayout {
  std::optional<std::uint64_t> java_id, os_tid, nid, tid;
  int prio = -1, os_prio = -1;
  bool daemon = false, has_stack_bracket = false;
  bool usable = false;  // false: a later header cannot be compared with it (layout_of)
  TextSpan name, status;
  std::array<std::pair<VolatileKind, TextSpan>, 4> values{};  // by offset
  std::uint8_t value_count = 0;
};

/// The layout of `line`, whose parse gave `h`; not `usable` when a later header could not
/// be compared with it piece by piece (more volatile values than kept, a line over 4 GiB).
HeaderLayout layout_of(std::string_view line, const HeaderFields& h);

/// `line` read as the next header of the thread whose header was `last_line` (laid out as
/// `last`): when the two differ only in the values of the volatile fields, and each new value
/// is one the header's grammar takes, `out` gets exactly the fields parse_thread_header(line)
/// returns, with views into `line`, `next` gets line's layout, and it returns true. False
/// otherwise (the caller parses the line). A thread's header repeats sample after sample but
/// for its CPU time and age: this reads two numbers where the parse reads every field.
bool refit_thread_header(std::string_view line, std::string_view last_line, const HeaderLayout& last,
                         HeaderFields& out, HeaderLayout& next);

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
