// SPDX-License-Identifier: Apache-2.0
// The YAML reading both grammars share (yaml_reader.hpp): positions, value readers, the guards
// around yaml-cpp's parser.
#include "yaml_reader.hpp"

#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace lockwatch::config::detail {
namespace {

std::optional<bool> parse_bool(std::string_view text) {
  for (std::string_view yes : {"true", "True", "TRUE", "yes", "Yes", "on", "On"})
    if (text == yes) return true;
  for (std::string_view no : {"false", "False", "FALSE", "no", "No", "off", "Off"})
    if (text == no) return false;
  return std::nullopt;
}

std::string unit_message(const UnitParse& parsed, std::string_view text, std::string_view noun, std::string_view units) {
  const std::string quoted = "'" + std::string(text) + "'";
  switch (parsed.failure) {
    case UnitFailure::negative: return "a " + std::string(noun) + " cannot be negative, got " + quoted;
    case UnitFailure::fraction: return "fractions are not supported, use a smaller unit; got " + quoted;
    case UnitFailure::unknown_unit:
      return "unknown unit '" + std::string(parsed.unit) + "' in " + quoted + " (use " + std::string(units) + ")";
    case UnitFailure::too_large: return quoted + " is too large";
    default: return "expected a " + std::string(noun) + " like " + std::string(units) + ", got " + quoted;
  }
}

// yaml-cpp 0.7's LoadAll loops forever, adding a null document per turn until memory runs
// out, when a document begins with a token no node can begin with (a stray ',': upstream
// issue #1040, fixed after 0.8.0). Such a document consumes nothing, so the next one begins
// at the same mark: this pass over the parser's events finds it before LoadAll runs.
class StuckDocumentFinder final : public YAML::EventHandler {
 public:
  std::optional<YAML::Mark> stuck_at;

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (last_start_ && last_start_->pos == mark.pos) stuck_at = mark;
    last_start_ = mark;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

 private:
  std::optional<YAML::Mark> last_start_;
};

}  // namespace

Position position_of(const YAML::Mark& mark) {
  if (mark.is_null()) return {};
  return {mark.line + 1, mark.column + 1};
}

std::string got(const YAML::Node& node) {
  if (node.IsNull()) return "got nothing";
  if (node.IsSequence()) return "got a list";
  if (node.IsMap()) return "got a mapping";
  return "got '" + node.Scalar() + "'";
}

std::string join(const std::vector<std::string_view>& names) {
  std::string out;
  for (auto name : names) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

std::string_view last_part(std::string_view path) {
  const auto dot = path.rfind('.');
  return dot == std::string_view::npos ? path : path.substr(dot + 1);
}

void Reader::error(Position at, std::string message) {
  errors_.push_back({file_, at.line, at.column, std::move(message)});
}

const std::string* Reader::scalar(const Item& item, std::string_view expected) {
  if (item.value.IsScalar()) return &item.value.Scalar();
  error(item, "expected " + std::string(expected) + ", " + got(item.value));
  return nullptr;
}

void Reader::text(const Item& item, std::string& out) {
  if (item.value.IsNull()) return out.clear();
  if (auto s = scalar(item, "a string")) out = *s;
}

void Reader::flag(const Item& item, bool& out) {
  const auto* s = scalar(item, "true or false");
  if (!s) return;
  if (auto b = parse_bool(*s))
    out = *b;
  else
    error(item, "expected true or false, got '" + *s + "'");
}

void Reader::duration(const Item& item, std::chrono::milliseconds& out) {
  constexpr std::string_view units = "200ms, 1s, 1m, 1h";
  const auto* s = scalar(item, "a duration like " + std::string(units));
  if (!s) return;
  const auto parsed = parse_duration_ms(*s);
  if (parsed.failure != UnitFailure::none) return error(item, unit_message(parsed, *s, "duration", units));
  out = std::chrono::milliseconds(static_cast<std::chrono::milliseconds::rep>(parsed.value));
}

void Reader::size(const Item& item, std::uint64_t& out) {
  constexpr std::string_view units = "512KiB, 32MiB, 1GiB or plain bytes";
  const auto* s = scalar(item, "a size like " + std::string(units));
  if (!s) return;
  const auto parsed = parse_size_bytes(*s);
  if (parsed.failure != UnitFailure::none) return error(item, unit_message(parsed, *s, "size", units));
  out = parsed.value;
}

const YAML::Node* Reader::single_mapping(const std::vector<YAML::Node>& documents, std::string_view what) {
  for (std::size_t i = 1; i < documents.size(); ++i)
    if (!documents[i].IsNull())
      error(position_of(documents[i].Mark()), "a " + std::string(what) + " holds one YAML document; remove the '---' before this one");
  if (documents.empty() || documents[0].IsNull()) return nullptr;
  if (!documents[0].IsMap()) {
    const auto at = position_of(documents[0].Mark());
    error(at.line > 0 ? at : Position{1, 1}, "expected settings as 'key: value' lines, " + got(documents[0]));
    return nullptr;
  }
  return &documents[0];
}

std::vector<ConfigError> Reader::sorted_errors(std::vector<Problem> problems) {
  for (auto& problem : problems) {
    Position at;
    for (const auto& key : problem.keys)
      if (auto it = positions.find(key); it != positions.end() && at.line == 0) at = it->second;
    error(at, problem.keys.front() + ": " + problem.message);
  }
  std::stable_sort(errors_.begin(), errors_.end(), [](const ConfigError& a, const ConfigError& b) {
    return std::pair(a.line, a.column) < std::pair(b.line, b.column);
  });
  return std::move(errors_);
}

std::optional<YAML::Mark> stuck_document(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  StuckDocumentFinder finder;
  while (!finder.stuck_at && parser.HandleNextDocument(finder)) {
  }
  return finder.stuck_at;
}

namespace {

// The bytes at `line_begin` that are no column: a UTF-8 byte order mark before the first line.
std::size_t not_columns(std::string_view text, std::size_t line_begin) {
  return line_begin == 0 && text.starts_with("\xef\xbb\xbf") ? 3 : 0;
}

}  // namespace

// yaml-cpp may read past the end of the text before it gives up (an escape such as "\x" or
// "\U" cut short by the end of the file) and report a column beyond the last character.
// Brought back to just past the end of its line, so FILE:LINE:COL always points into the
// file; only for text yaml-cpp reads as UTF-8 byte by byte (a 0xFE/0xFF first byte may make
// it UTF-16, whose columns are not bytes; a NUL byte never gets this far).
Position inside_text(Position at, std::string_view text) {
  const bool utf8 = text.empty() || (text.front() != '\xfe' && text.front() != '\xff');
  if (!utf8 || at.line < 1) return at;
  std::size_t begin = 0;
  for (int line = 1; line < at.line; ++line) {
    begin = text.find('\n', begin);
    if (begin == std::string_view::npos) return at;
    ++begin;
  }
  const auto end = std::min(text.find('\n', begin), text.size());
  at.column = std::min(at.column, static_cast<int>(end - begin - not_columns(text, begin)) + 1);
  return at;
}

// YAML's printable set (1.2, c-printable) leaves out the C0 controls but tab, line feed and
// carriage return, and DEL. yaml-cpp 0.7 does not check: it keeps most of them in a scalar
// as they are, and takes a NUL byte in a plain scalar for the start of an escape ('\0' is its
// "no escape character"), so "key\0U" reads eight hex digits past the end of the text.
std::optional<std::pair<Position, std::string>> forbidden_character(std::string_view text) {
  const auto bad = std::find_if(text.begin(), text.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return (byte < 0x20 && byte != '\t' && byte != '\n' && byte != '\r') || byte == 0x7f;
  });
  if (bad == text.end()) return std::nullopt;
  const auto offset = static_cast<std::size_t>(bad - text.begin());
  const auto newline = text.rfind('\n', offset);  // text[offset] is not one
  const std::size_t begin = newline == std::string_view::npos ? 0 : newline + 1;
  const auto line = 1 + std::count(text.begin(), bad, '\n');
  const auto column = offset - begin - not_columns(text, begin) + 1;
  const auto byte = static_cast<unsigned char>(*bad);
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02x", byte);
  std::string message = byte == 0 ? "invalid YAML: a NUL byte; a config is UTF-8 text (is this file UTF-16 or UTF-32?)"
                                  : "invalid YAML: control character " + std::string(hex) + " is not allowed in YAML text";
  return std::pair(Position{static_cast<int>(line), static_cast<int>(column)}, std::move(message));
}

}  // namespace lockwatch::config::detail
