// SPDX-License-Identifier: Apache-2.0
#include "thread_header.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <limits>

namespace lockwatch::parser::detail {
namespace {

// For literals: the length is a constant, so the compare is a few loads, not a call. Every
// token of every header is tried against these.
template <std::size_t N>
bool starts_with(std::string_view s, const char (&p)[N]) {
  return s.size() >= N - 1 && std::memcmp(s.data(), p, N - 1) == 0;
}
template <std::size_t N>
bool ends_with(std::string_view s, const char (&p)[N]) {
  return s.size() >= N - 1 && std::memcmp(s.data() + s.size() - (N - 1), p, N - 1) == 0;
}

std::string_view rtrim(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}
std::string_view ltrim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

// Bytes of a stack bracket: hex digits, 'x' and '.'.
constexpr auto bracket_bytes = [] {
  std::array<bool, 256> t{};
  for (char c : std::string_view("0123456789abcdefABCDEFx.")) t[static_cast<unsigned char>(c)] = true;
  return t;
}();

// "[0x00007f..]", "[0x..0x..]" (JDK 1.5), "[9fffffffb6f00000..9fffffffb6f00a40]" (HP-UX).
bool is_stack_bracket(std::string_view inner) {
  if (inner.empty()) return false;
  for (char c : inner)
    if (!bracket_bytes[static_cast<unsigned char>(c)]) return false;
  return true;
}

// As std::from_chars for int in base 10 (a '-' but no '+', no junk, no overflow), written
// out: it runs several times for every header of every dump.
std::optional<int> parse_int(std::string_view text) {
  const bool negative = !text.empty() && text.front() == '-';
  if (negative) text.remove_prefix(1);
  if (text.empty()) return std::nullopt;
  const std::int64_t limit = negative ? -std::int64_t{std::numeric_limits<int>::min()} : std::numeric_limits<int>::max();
  std::int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
    if (value > limit) return std::nullopt;
  }
  return static_cast<int>(negative ? -value : value);
}

// "637.81", "0.37", ".5", "12." - digits with at most one mark and at most 15 of them - as
// std::from_chars reads them: the digits are an exact integer below 2^53 and 10^k (k <= 15)
// is an exact double, so one IEEE division rounds the decimal correctly, as from_chars does.
// Anything else (a sign, an exponent, more digits) is left to from_chars.
std::optional<double> simple_decimal(const char* at, std::size_t size) {
  static constexpr double powers[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
  std::uint64_t digits = 0;
  std::size_t count = 0, fraction = 0;
  bool mark = false;
  for (std::size_t i = 0; i < size; ++i) {
    const char c = at[i];
    if (c == '.' && !mark) {
      mark = true;
      continue;
    }
    if (c < '0' || c > '9' || ++count > 15) return std::nullopt;
    digits = digits * 10 + static_cast<std::uint64_t>(c - '0');
    fraction += mark ? 1 : 0;
  }
  if (count == 0) return std::nullopt;
  return static_cast<double>(digits) / powers[fraction];
}

// cpu=637,81ms: the JVM formats with the process locale, so ',' may be the decimal mark.
std::optional<double> parse_decimal(std::string_view text) {
  constexpr std::size_t max_size = 40;
  if (text.empty() || text.size() > max_size) return std::nullopt;
  if (auto simple = simple_decimal(text.data(), text.size())) return simple;  // no ',' to turn
  char copy[max_size];  // on the stack: a header has two of these
  for (std::size_t i = 0; i < text.size(); ++i) copy[i] = text[i] == ',' ? '.' : text[i];
  if (auto simple = simple_decimal(copy, text.size())) return simple;
  double value = 0;
  auto [ptr, ec] = std::from_chars(copy, copy + text.size(), value);
  if (ec != std::errc{} || ptr != copy + text.size()) return std::nullopt;
  return value;
}

// The last " tid=" of `s`, searched from the right by its first byte (a generic reverse
// search compares the whole needle at every position).
std::size_t rfind_tid(std::string_view s) {
  constexpr std::string_view needle = " tid=";
  if (s.size() < needle.size()) return std::string_view::npos;
  // By its '=': rarer in a header's tail than the ' ' it starts with.
  for (std::size_t i = s.size(); i-- > needle.size() - 1;)
    if (s[i] == '=' && s.substr(i - (needle.size() - 1), needle.size()) == needle) return i - (needle.size() - 1);
  return std::string_view::npos;
}

template <std::size_t K, std::size_t S = 1>
std::optional<std::string_view> field_value(std::string_view token, const char (&key)[K], const char (&suffix)[S] = "") {
  if (token.size() < K - 1 + S - 1 || !starts_with(token, key) || !ends_with(token, suffix)) return std::nullopt;
  token.remove_prefix(K - 1);
  token.remove_suffix(S - 1);
  return token;
}

bool take_int(std::optional<std::string_view> v, int& out) {
  auto p = v ? parse_int(*v) : std::nullopt;
  return p && (out = *p, true);
}

// A volatile field taken: its value is kept for refit_thread_header (past four, counted only).
bool take_volatile(HeaderFields& h, VolatileKind kind, std::string_view value) {
  if (h.volatile_count < h.volatile_values.size()) h.volatile_values[h.volatile_count] = {kind, value};
  if (h.volatile_count < 255) ++h.volatile_count;
  return true;
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
    case 'd':
      if (token == "daemon") return !h.daemon && (h.daemon = true);
      return starts_with(token, "defined_classes=") && take_volatile(h, VolatileKind::other, token.substr(16));
    case 'p': return take_int(field_value(token, "prio="), h.prio);
    case 'o': return take_int(field_value(token, "os_prio="), h.os_prio);
    case 'c': {
      auto v = field_value(token, "cpu=", "ms");
      return v && (h.cpu_ms = parse_decimal(*v)).has_value() && take_volatile(h, VolatileKind::cpu, *v);
    }
    case 'e': {
      auto v = field_value(token, "elapsed=", "s");
      return v && (h.elapsed_s = parse_decimal(*v)).has_value() && take_volatile(h, VolatileKind::elapsed, *v);
    }
    case 'a': return starts_with(token, "allocated=") && take_volatile(h, VolatileKind::other, token.substr(10));
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

namespace {

// Digit values 0-15 by byte, 0xFF for bytes that are no hex digit.
constexpr auto hex_digits = [] {
  std::array<std::uint8_t, 256> t{};
  t.fill(0xFF);
  for (std::uint8_t c = 0; c < 10; ++c) t[std::size_t{'0'} + c] = c;
  for (std::uint8_t c = 0; c < 6; ++c) t[std::size_t{'a'} + c] = t[std::size_t{'A'} + c] = static_cast<std::uint8_t>(10 + c);
  return t;
}();

// The significant digits fit in 64 bits whatever they are below this count; at it they may
// not (10^19 < 2^64 < 10^20; 16 hex digits always fit).
template <unsigned Base>
constexpr std::size_t safe_digits = Base == 16 ? 16 : 19;

template <unsigned Base>
std::optional<std::uint64_t> digits_of(std::string_view text) {
  std::size_t i = 0;
  while (i + 1 < text.size() && text[i] == '0') ++i;  // leading zeros: no value, no overflow
  const std::size_t significant = text.size() - i;
  if (significant > safe_digits<Base> + 1 || (Base == 16 && significant > safe_digits<Base>)) {
    // Too long for 64 bits: from_chars fails on it, for junk or for range alike.
    return std::nullopt;
  }
  constexpr std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t value = 0;
  for (; i < text.size(); ++i) {
    const unsigned digit = hex_digits[static_cast<unsigned char>(text[i])];
    if (digit >= Base) return std::nullopt;
    if (significant > safe_digits<Base> && value > (max - digit) / Base) return std::nullopt;
    value = value * Base + digit;
  }
  return value;
}

}  // namespace

// As std::from_chars for uint64 in base 10 or 16 (no sign, no junk, no overflow), written out:
// thread ids, nids, tids and lock addresses of every dump go through it.
std::optional<std::uint64_t> parse_uint(std::string_view text, bool hex) {
  if (!hex && starts_with(text, "0x")) text.remove_prefix(2), hex = true;
  if (text.empty()) return std::nullopt;
  return hex ? digits_of<16>(text) : digits_of<10>(text);
}

std::optional<HeaderFields> parse_thread_header(std::string_view line) {
  std::optional<HeaderFields> out;  // one object returned on every path: built in place, never copied
  if (line.empty() || line.front() != '"') return out;
  HeaderFields& h = out.emplace();
  std::string_view s = rtrim(line);
  if (!s.empty() && s.back() == ']') {
    const auto open = s.rfind('[');
    if (open != std::string_view::npos && is_stack_bracket(s.substr(open + 1, s.size() - open - 2))) {
      h.has_stack_bracket = true;
      s = rtrim(s.substr(0, open));
    }
  }
  const auto tid_at = rfind_tid(s);
  if (tid_at != std::string_view::npos) {
    parse_tail(s.substr(tid_at + 5), h);
    if (auto name = strip_fields(s.substr(0, tid_at), h); name && h.tid) {
      h.name = *name;
      return out;
    }
  }
  out.reset();
  return out;
}

namespace {

// What a volatile value may hold for refit_thread_header to take it as the parse would: a
// number for cpu= and elapsed= (parse_decimal's simple form; other spellings go to the parse),
// any printable bytes but a space and a quote for the others (the parse takes any token).
bool in_value(VolatileKind kind, char c) {
  if (kind != VolatileKind::other) return (c >= '0' && c <= '9') || c == '.' || c == ',';
  return c > ' ' && c < 0x7f && c != '"';
}

// An empty part that is no view into the line (a header without a status) lies at the line's
// end, where a view of nothing into any later line can be taken.
TextSpan span_in(std::string_view line, std::string_view part) {
  const auto at = reinterpret_cast<std::uintptr_t>(part.data()) - reinterpret_cast<std::uintptr_t>(line.data());
  if (part.data() == nullptr || at > line.size()) return {static_cast<std::uint32_t>(line.size()), 0};
  return {static_cast<std::uint32_t>(at), static_cast<std::uint32_t>(part.size())};
}

std::string_view text_at(std::string_view line, TextSpan s) { return line.substr(s.at, s.size); }

}  // namespace

HeaderLayout layout_of(std::string_view line, const HeaderFields& h) {
  HeaderLayout out;
  if (h.volatile_count > h.volatile_values.size() || line.size() > 0xFFFF'FFFFu) return out;
  out.java_id = h.java_id, out.os_tid = h.os_tid, out.nid = h.nid, out.tid = h.tid;
  out.prio = h.prio, out.os_prio = h.os_prio;
  out.daemon = h.daemon, out.has_stack_bracket = h.has_stack_bracket;
  out.name = span_in(line, h.name);
  out.status = span_in(line, h.status);
  for (std::uint8_t i = 0; i < h.volatile_count; ++i) {
    const auto& v = h.volatile_values[i];
    out.values[i] = {v.kind, span_in(line, v.text)};
    // The value must end where the next header's scan of it would stop.
    const auto end = out.values[i].second.at + out.values[i].second.size;
    if (end < line.size() && in_value(v.kind, line[end])) return out;
  }
  out.value_count = h.volatile_count;
  std::sort(out.values.begin(), out.values.begin() + out.value_count,
            [](const auto& a, const auto& b) { return a.second.at < b.second.at; });
  out.usable = true;
  return out;
}

// The text between the volatile values is compared as it is; each value is read where the
// last one stood, as far as the bytes its kind may hold go. The parse reads a header from its
// right end: only the values moved, and each is a whole token the parse takes as the same
// field, so every other field and where it lies relative to the line's start or end is as in
// the last header.
bool refit_thread_header(std::string_view line, std::string_view last_line, const HeaderLayout& last,
                         HeaderFields& out, HeaderLayout& next) {
  if (!last.usable || line.size() > 0xFFFF'FFFFu) return false;
  std::size_t from_last = 0, from_line = 0;
  std::array<std::string_view, 4> values{};
  for (std::uint8_t i = 0; i < last.value_count; ++i) {
    const auto [kind, span] = last.values[i];
    const auto same = span.at - from_last;
    if (from_line + same > line.size() || std::memcmp(line.data() + from_line, last_line.data() + from_last, same) != 0)
      return false;
    from_line += same;
    std::size_t end = from_line;
    while (end < line.size() && in_value(kind, line[end])) ++end;
    if (end == from_line) return false;
    values[i] = line.substr(from_line, end - from_line);
    from_line = end;
    from_last = span.at + span.size;
  }
  const auto rest = last_line.size() - from_last;
  if (line.size() - from_line != rest || std::memcmp(line.data() + from_line, last_line.data() + from_last, rest) != 0)
    return false;
  // Right to left, as the parse takes them: the leftmost value of a field is the one kept.
  std::optional<double> cpu, elapsed;
  for (std::uint8_t i = last.value_count; i-- > 0;) {
    const auto kind = last.values[i].first;
    if (kind == VolatileKind::other) continue;
    auto value = parse_decimal(values[i]);
    if (!value) return false;
    (kind == VolatileKind::cpu ? cpu : elapsed) = value;
  }
  out = HeaderFields{};
  out.java_id = last.java_id, out.os_tid = last.os_tid, out.nid = last.nid, out.tid = last.tid;
  out.prio = last.prio, out.os_prio = last.os_prio;
  out.daemon = last.daemon, out.has_stack_bracket = last.has_stack_bracket;
  out.cpu_ms = cpu, out.elapsed_s = elapsed;
  // The name lies where it did from the start, the status where it did from the end.
  out.name = text_at(line, last.name);
  const auto shift = static_cast<std::ptrdiff_t>(line.size()) - static_cast<std::ptrdiff_t>(last_line.size());
  out.status = line.substr(static_cast<std::size_t>(static_cast<std::ptrdiff_t>(last.status.at) + shift), last.status.size);
  // In the order the parse takes them: right to left.
  out.volatile_count = last.value_count;
  for (std::uint8_t i = 0; i < last.value_count; ++i)
    out.volatile_values[last.value_count - 1u - i] = {last.values[i].first, values[i]};
  next = last;
  next.status.at = static_cast<std::uint32_t>(out.status.data() - line.data());
  for (std::uint8_t i = 0; i < last.value_count; ++i) next.values[i].second = span_in(line, values[i]);
  return true;
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
