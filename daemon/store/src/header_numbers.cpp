// SPDX-License-Identifier: Apache-2.0
#include "header_numbers.hpp"

#include <array>

namespace lockwatch::store::detail {
namespace {

// JDK 11+ print cpu= and elapsed=, JDK 21+ also allocated= and defined_classes=.
constexpr std::array<std::string_view, 4> volatile_keys{"cpu=", "elapsed=", "allocated=", "defined_classes="};

std::string render_number(std::uint64_t value, int fraction) {
  std::string digits = std::to_string(value);
  const auto width = static_cast<std::size_t>(fraction) + 1;
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  if (fraction > 0) digits.insert(digits.size() - static_cast<std::size_t>(fraction), 1, '.');
  return digits;
}

// "305.89" -> 30589 with 2 fraction digits, when it renders back identically: digits with at
// most one dot and digits on both sides of it, no leading zero (render_number would drop it),
// at most 18 digits. Read in place: this runs on every number of every thread header.
bool split_number(std::string_view text, std::uint64_t& value, int& fraction) {
  const auto dot = text.find('.');
  const auto whole = text.substr(0, dot);
  const auto part = dot == std::string_view::npos ? std::string_view{} : text.substr(dot + 1);
  if (whole.empty() || (dot != std::string_view::npos && part.empty()) || part.find('.') != std::string_view::npos)
    return false;
  if ((whole.size() > 1 && whole.front() == '0') || whole.size() + part.size() > 18 || part.size() > 9) return false;
  value = 0;
  for (const char c : whole) value = value * 10 + static_cast<std::uint64_t>(c - '0');
  for (const char c : part) value = value * 10 + static_cast<std::uint64_t>(c - '0');
  fraction = static_cast<int>(part.size());
  return true;
}

std::size_t number_end(std::string_view line, std::size_t from) {
  while (from < line.size() && ((line[from] >= '0' && line[from] <= '9') || line[from] == '.')) ++from;
  return from;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// number_end and split_number in one pass, for numbers_fit: where the number at `at` ends, or
// npos when split_number would refuse it.
std::size_t read_number(std::string_view line, std::size_t at, std::uint64_t& value, int& fraction) {
  std::size_t i = at;
  value = 0;
  while (i < line.size() && is_digit(line[i])) value = value * 10 + static_cast<std::uint64_t>(line[i++] - '0');
  const auto whole = i - at;
  if (whole == 0 || whole > 18 || (whole > 1 && line[at] == '0')) return std::string_view::npos;
  fraction = 0;
  if (i == line.size() || line[i] != '.') return i;
  const auto part_at = ++i;
  while (i < line.size() && is_digit(line[i])) value = value * 10 + static_cast<std::uint64_t>(line[i++] - '0');
  const auto part = i - part_at;
  if (part == 0 || part > 9 || whole + part > 18 || (i < line.size() && line[i] == '.')) return std::string_view::npos;
  fraction = static_cast<int>(part);
  return i;
}

// Where the value of a volatile key starting at `i` begins, or npos. Keys start a word
// (after a space); this runs once per word of every thread header, so the first letter is
// tested before any key is compared.
std::size_t value_after_key(std::string_view line, std::size_t i) {
  if (i == 0 || line[i - 1] != ' ' || std::string_view("cead").find(line[i]) == std::string_view::npos)
    return std::string_view::npos;
  for (auto key : volatile_keys)
    if (line.compare(i, key.size(), key) == 0) return i + key.size();
  return std::string_view::npos;
}

// The start of the word after the one at `i` (just past the next space), or the line's end.
std::size_t next_word(std::string_view line, std::size_t i) {
  const auto space = line.find(' ', i);
  return space == std::string_view::npos ? line.size() : space + 1;
}

}  // namespace

void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

bool get_varint(std::string_view in, std::size_t& pos, std::uint64_t& v) {
  v = 0;
  for (int shift = 0; pos < in.size() && shift < 64; shift += 7) {
    const auto byte = static_cast<unsigned char>(in[pos++]);
    v |= std::uint64_t{byte & 0x7fu} << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

namespace {

// The one walk over a header: `out.text(part)` for what the template keeps as it is,
// `out.number(fraction)` where a number is cut; false from either stops the walk.
template <class Out>
bool walk_header(std::string_view line, std::string& numbers, Out& out) {
  // Only after the name's closing quote: a name may contain "cpu=" too.
  const auto quote = line.rfind('"');
  if (line.empty() || line[0] != '"' || quote == 0 || line.find(number_mark) != std::string_view::npos) return false;
  if (!out.text(line.substr(0, quote))) return false;
  bool cut = false;
  for (std::size_t i = quote; i < line.size();) {
    const auto value_at = value_after_key(line, i);
    std::uint64_t value = 0;
    int fraction = 0;
    const auto end = value_at == std::string_view::npos ? value_at : number_end(line, value_at);
    if (value_at == std::string_view::npos || !split_number(line.substr(value_at, end - value_at), value, fraction)) {
      // A key only starts a word: the rest of this word goes over as it is, in one piece.
      const auto next = next_word(line, i);
      if (!out.text(line.substr(i, next - i))) return false;
      i = next;
      continue;
    }
    if (!out.text(line.substr(i, value_at - i)) || !out.number(fraction)) return false;
    put_varint(numbers, value);
    cut = true;
    i = end;
  }
  return cut;
}

struct WriteTemplate {
  std::string& tmpl;
  bool text(std::string_view part) { return tmpl.append(part), true; }
  bool number(int fraction) { return tmpl.append({number_mark, static_cast<char>('0' + fraction)}), true; }
};

}  // namespace

bool cut_numbers(std::string_view line, std::string& tmpl, std::string& numbers) {
  tmpl.clear();
  WriteTemplate out{tmpl};
  return walk_header(line, numbers, out);
}

// The template is the line with each number replaced by a mark: so the line fits when the
// text between the marks is the same and a number that cut_numbers would cut (the same
// fraction digits) stands at each mark. A mark is never followed by a digit or a dot (the
// number ended there), so the number read here ends where cut_numbers' would. Compared in
// pieces: no word of the line is looked at twice.
bool numbers_fit(std::string_view line, std::string_view tmpl, std::string& numbers) {
  const auto before = numbers.size();
  const auto fail = [&] { return numbers.resize(before), false; };
  std::size_t at = 0;  // in line
  std::size_t t = 0;   // in tmpl
  for (;;) {
    const auto mark = tmpl.find(number_mark, t);
    const auto text = tmpl.substr(t, mark == std::string_view::npos ? std::string_view::npos : mark - t);
    if (line.compare(at, text.size(), text) != 0) return fail();
    at += text.size();
    if (mark == std::string_view::npos) break;
    if (mark + 1 >= tmpl.size()) return fail();
    std::uint64_t value = 0;
    int fraction = 0;
    const auto end = read_number(line, at, value, fraction);
    if (end == std::string_view::npos || tmpl[mark + 1] != static_cast<char>('0' + fraction)) return fail();
    put_varint(numbers, value);
    at = end;
    t = mark + 2;
  }
  // The line is the template's text and numbers: it holds no mark of its own, and its last
  // quote (where cut_numbers starts looking for keys) is the template's.
  if (at != line.size() || numbers.size() == before) return fail();
  return true;
}

bool paste_numbers(std::string_view tmpl, std::string_view numbers, std::size_t& pos, std::string& out) {
  for (std::size_t i = 0; i < tmpl.size(); ++i) {
    if (tmpl[i] != number_mark || i + 1 >= tmpl.size()) {
      out.push_back(tmpl[i]);
      continue;
    }
    std::uint64_t value = 0;
    if (!get_varint(numbers, pos, value)) return false;
    out.append(render_number(value, tmpl[++i] - '0'));
  }
  return true;
}

}  // namespace lockwatch::store::detail
