// SPDX-License-Identifier: Apache-2.0
#include "line_kind.hpp"

#include <array>
#include <utility>

namespace lockwatch::parser::detail {
namespace {

// The first byte before the rest: most prefixes tried on a line fail there, without a call
// to memcmp.
bool starts_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && (p.empty() || s.front() == p.front()) && s.substr(0, p.size()) == p;
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool digits_at(std::string_view s, std::size_t from, std::size_t count) {
  if (s.size() < from + count) return false;
  for (std::size_t i = from; i < from + count; ++i)
    if (!is_digit(s[i])) return false;
  return true;
}

// "2024-05-01 12:00:00" or "2024-05-01T12:00:00..." at the start of the line.
bool is_timestamp(std::string_view s) {
  return s.size() >= 19 && digits_at(s, 0, 4) && s[4] == '-' && digits_at(s, 5, 2) && s[7] == '-' &&
         digits_at(s, 8, 2) && (s[10] == ' ' || s[10] == 'T') && digits_at(s, 11, 2) && s[13] == ':';
}

constexpr std::array<std::pair<std::string_view, LineKind>, 7> indented_prefixes{{
    {"java.lang.Thread.State: ", LineKind::thread_state},
    {"Carrying virtual thread #", LineKind::carrying},
    {"Mounted virtual thread #", LineKind::mounted},
    {"No compile task", LineKind::compile_task},
    {"Compiling:", LineKind::compile_task},
    {"Locked ownable synchronizers:", LineKind::owned_header},
    {"num ", LineKind::heap},  // " num     #instances         #bytes  class name"
}};

constexpr std::array<std::pair<std::string_view, LineKind>, 9> top_prefixes{{
    {"Full thread dump", LineKind::dump_header},
    {"JNI global ref", LineKind::jni},
    {"Threads class SMR info:", LineKind::smr_header},
    {"Found one Java-level deadlock:", LineKind::deadlock_found},
    {"Java stack information for the threads listed above:", LineKind::deadlock_stacks},
    {"=====", LineKind::separator},
    {"Heap", LineKind::heap},
    {"num ", LineKind::heap},  // class histogram after a JDK 1.5 dump
    {"Found ", LineKind::deadlock_footer},  // checked further below
}};

Line classify_indented(std::string_view body) {
  if (starts_with(body, "at ")) return {LineKind::frame, body.substr(3)};
  if (starts_with(body, "- ")) return {LineKind::lock, body.substr(2)};
  for (const auto& [prefix, kind] : indented_prefixes)
    if (starts_with(body, prefix))
      return {kind, kind == LineKind::compile_task ? body : body.substr(prefix.size())};
  return {LineKind::indented, body};
}

Line classify_top(std::string_view line) {
  if (line[0] == '"') return {LineKind::quoted, line};
  if (line[0] == '#' && line.size() > 1 && is_digit(line[1])) return {LineKind::plain_header, line};
  if (is_timestamp(line)) return {LineKind::timestamp, line};
  for (const auto& [prefix, kind] : top_prefixes) {
    if (!starts_with(line, prefix)) continue;
    if (kind == LineKind::deadlock_footer && (line.find(" deadlock") == std::string_view::npos)) break;
    return {kind, line.substr(prefix.size())};
  }
  return {LineKind::other, line};
}

}  // namespace

Line classify_other(std::string_view line) noexcept {
  std::size_t indent = 0;
  while (indent < line.size() && (line[indent] == ' ' || line[indent] == '\t')) ++indent;
  if (indent == line.size()) return {LineKind::blank, {}};
  if (indent > 0) return classify_indented(line.substr(indent));
  return classify_top(line);
}

}  // namespace lockwatch::parser::detail
