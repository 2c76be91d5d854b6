// SPDX-License-Identifier: Apache-2.0
#include "thread_header.hpp"

#include <charconv>
#include <string>

namespace lockwatch::parser::detail {
namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

std::string_view rtrim(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}
std::string_view ltrim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

bool is_hex_digit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// "[0x00007f..]", "[0x..0x..]" (JDK 1.5), "[9fffffffb6f00000..9fffffffb6f00a40]" (HP-UX).
bool is_stack_bracket(std::string_view inner) {
  if (inner.empty()) return false;
  for (char c : inner)
    if (!is_hex_digit(c) && c != 'x' && c != '.') return false;
  return true;
}

std::optional<int> parse_int(std::string_view text) {
  int value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc{} || ptr != end) return std::nullopt;
  return value;
}

// cpu=637,81ms: the JVM formats with the process locale, so ',' may be the decimal mark.
std::optional<double> parse_decimal(std::string_view text) {
  if (text.empty() || text.size() > 40) return std::nullopt;
  std::string copy(text);
  for (char& c : copy)
    if (c == ',') c = '.';
  double value = 0;
  auto [ptr, ec] = std::from_chars(copy.data(), copy.data() + copy.size(), value);
  if (ec != std::errc{} || ptr != copy.data() + copy.size()) return std::nullopt;
  return value;
}

std::optional<std::string_view> field_value(std::string_view token, std::string_view key,
                                            std::string_view suffix = {}) {
  if (!starts_with(token, key) || !ends_with(token, suffix)) return std::nullopt;
  token.remove_prefix(key.size());
  token.remove_suffix(suffix.size());
  return token;
}

bool take_int(std::optional<std::string_view> v, int& out) {
  auto p = v ? parse_int(*v) : std::nullopt;
  return p && (out = *p, true);
}

// Consumes one "key=value" style field of the header's left part; false if `token` is
// not a header field (then it belongs to the name). Dispatch on the first byte: this
// runs for every token of every header.
bool take_field(std::string_view token, HeaderFields& h) {
  if (token.empty()) return false;
  switch (token.front()) {
    case '#': return token.size() > 1 && (h.java_id = parse_uint(token.substr(1))).has_value();
    case '[':
      return token.size() > 2 && token.back() == ']' &&
             (h.os_tid = parse_uint(token.substr(1, token.size() - 2))).has_value();
    case 'd': return token == "daemon" ? !h.daemon && (h.daemon = true) : starts_with(token, "defined_classes=");
    case 'p': return take_int(field_value(token, "prio="), h.prio);
    case 'o': return take_int(field_value(token, "os_prio="), h.os_prio);
    case 'c': {
      auto v = field_value(token, "cpu=", "ms");
      return v && (h.cpu_ms = parse_decimal(*v)).has_value();
    }
    case 'e': {
      auto v = field_value(token, "elapsed=", "s");
      return v && (h.elapsed_s = parse_decimal(*v)).has_value();
    }
    case 'a': return starts_with(token, "allocated=");
    default: return false;
  }
}

// Strips fields off the right end of `head` until the closing quote of the name.
std::optional<std::string_view> strip_fields(std::string_view head, HeaderFields& h) {
  head = rtrim(head);
  while (!head.empty() && head.back() != '"') {
    const auto space = head.rfind(' ');
    if (space == std::string_view::npos || !take_field(head.substr(space + 1), h)) return std::nullopt;
    head = rtrim(head.substr(0, space));
  }
  if (head.size() < 2 || head.front() != '"' || head.back() != '"') return std::nullopt;
  return head.substr(1, head.size() - 2);
}

// "tid=0x.. nid=0x2c10 (2503) lwp_id=9 waiting on condition _threads_hazard_ptr=0x.."
void parse_tail(std::string_view tail, HeaderFields& h) {
  const auto space = tail.find(' ');
  const auto tid = tail.substr(0, space);
  h.tid = parse_uint(starts_with(tid, "0x") ? tid.substr(2) : tid, true);
  std::string_view rest = space == std::string_view::npos ? std::string_view{} : tail.substr(space + 1);
  if (auto v = field_value(rest.substr(0, rest.find(' ')), "nid=")) {
    h.nid = parse_uint(*v);
    rest = ltrim(rest.substr(std::min(rest.size(), 4 + v->size())));
    if (starts_with(rest, "(")) rest = ltrim(rest.substr(std::min(rest.size(), rest.find(')') + 1)));
    if (starts_with(rest, "lwp_id=")) rest = ltrim(rest.substr(std::min(rest.size(), rest.find(' '))));
  }
  const auto hazard = rest.find("_threads_hazard_ptr=");
  h.status = rtrim(rest.substr(0, hazard));
}

}  // namespace

std::optional<std::uint64_t> parse_uint(std::string_view text, bool hex) {
  if (!hex && starts_with(text, "0x")) text.remove_prefix(2), hex = true;
  if (text.empty()) return std::nullopt;
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value, hex ? 16 : 10);
  if (ec != std::errc{} || ptr != end) return std::nullopt;
  return value;
}

std::optional<HeaderFields> parse_thread_header(std::string_view line) {
  if (line.empty() || line.front() != '"') return std::nullopt;
  HeaderFields h;
  std::string_view s = rtrim(line);
  if (!s.empty() && s.back() == ']') {
    const auto open = s.rfind('[');
    if (open != std::string_view::npos && is_stack_bracket(s.substr(open + 1, s.size() - open - 2))) {
      h.has_stack_bracket = true;
      s = rtrim(s.substr(0, open));
    }
  }
  const auto tid_at = s.rfind(" tid=");
  if (tid_at == std::string_view::npos) return std::nullopt;
  parse_tail(s.substr(tid_at + 5), h);
  auto name = strip_fields(s.substr(0, tid_at), h);
  if (!name || !h.tid) return std::nullopt;
  h.name = *name;
  return h;
}

std::optional<HeaderFields> parse_plain_header(std::string_view line) {
  if (line.size() < 4 || line[0] != '#') return std::nullopt;
  const auto space = line.find(' ');
  if (space == std::string_view::npos || line.substr(space + 1, 1) != "\"") return std::nullopt;
  HeaderFields h;
  h.java_id = parse_uint(line.substr(1, space - 1));
  if (!h.java_id) return std::nullopt;
  std::string_view rest = rtrim(line.substr(space + 1));
  // Right to left: [instant] [STATE] [virtual], then the quoted name.
  auto last_token = [&rest] { return rest.substr(rest.rfind(' ') + 1); };
  auto drop_last = [&rest] { rest = rtrim(rest.substr(0, rest.rfind(' '))); };
  if (rest.back() != '"' && last_token().find('T') != std::string_view::npos && last_token().back() == 'Z')
    h.instant = last_token(), drop_last();
  if (rest.back() != '"' && last_token().find('"') == std::string_view::npos && last_token() != "virtual")
    h.status = last_token(), drop_last();
  if (rest.back() != '"' && last_token() == "virtual") h.is_virtual = true, drop_last();
  if (rest.size() < 2 || rest.front() != '"' || rest.back() != '"') return std::nullopt;
  h.name = rest.substr(1, rest.size() - 2);
  return h;
}

}  // namespace lockwatch::parser::detail
