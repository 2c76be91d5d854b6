// SPDX-License-Identifier: Apache-2.0
// What the two YAML grammars of config/ (the main file, yaml_loader.cpp; the web config file,
// web_config_loader.cpp) share: positions for FILE:LINE:COL, readers of one value that report a
// bad value where it stands, mappings walked with their duplicate keys reported, and the guarded
// parse of the text. Private to src/: yaml-cpp's types never reach a public header.
#pragma once

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "checks.hpp"
#include "lockwatch/config/load.hpp"
#include "units_detail.hpp"

namespace lockwatch::config::detail {

struct Position {
  int line = 0;
  int column = 0;
};

/// yaml-cpp's 0-based mark as the 1-based line and column of the errors; {0, 0} for no mark.
Position position_of(const YAML::Mark& mark);

/// One `key: value` of a mapping, with the dotted path of the key ("ring.samples").
struct Item {
  YAML::Node key;
  YAML::Node value;
  std::string path;

  // An empty value has the mark of whatever follows it: point at its key instead.
  Position where() const { return position_of(value.IsNull() ? key.Mark() : value.Mark()); }
};

/// "got 'abc'", "got a list": what a message says the file holds instead.
std::string got(const YAML::Node& node);

/// "a, b, c": the known names a message lists.
std::string join(const std::vector<std::string_view>& names);

/// "samples" of "ring.samples".
std::string_view last_part(std::string_view path);

/// Errors with positions, readers of one value, and mappings walked with their duplicate keys
/// reported: the base of each grammar's loader.
class Reader {
 public:
  explicit Reader(std::string_view file) : file_(file) {}

  void error(Position at, std::string message);
  void error(const Item& item, const std::string& message) { error(item.where(), item.path + ": " + message); }

  // --- readers of one value; on a bad value they report it and leave the default ---

  const std::string* scalar(const Item& item, std::string_view expected);
  void text(const Item& item, std::string& out);
  void flag(const Item& item, bool& out);
  void duration(const Item& item, std::chrono::milliseconds& out);
  void size(const Item& item, std::uint64_t& out);

  template <class T>
  void count(const Item& item, Range range, T& out) {
    const auto* s = scalar(item, "a whole number");
    if (!s) return;
    std::int64_t value = 0;
    auto [ptr, ec] = std::from_chars(s->data(), s->data() + s->size(), value);
    if (ptr != s->data() + s->size() || ec == std::errc::invalid_argument)
      return error(item, "expected a whole number, got '" + *s + "'");
    if (ec != std::errc{} || value < range.min || value > range.max) return error(item, range_message(*s, range));
    out = static_cast<T>(value);
  }

  template <class E>
  void choice(const Item& item, E& out, std::optional<E> (*parse)(std::string_view), std::string_view allowed) {
    const auto* s = scalar(item, "one of " + std::string(allowed));
    if (!s) return;
    if (auto v = parse(*s))
      out = *v;
    else
      error(item, "expected one of " + std::string(allowed) + ", got '" + *s + "'");
  }

  /// Calls `each` for every `key: value` of `node` (a mapping at `section_path`), after
  /// reporting keys that are not names and keys given twice.
  template <class Each>
  void entries(const YAML::Node& node, const std::string& section_path, Each each) {
    std::map<std::string, int> seen;  // key -> line, for duplicates
    for (const auto& entry : node) {
      const auto at = position_of(entry.first.Mark());
      if (!entry.first.IsScalar()) {
        error(at, "expected a key name, " + got(entry.first));
        continue;
      }
      const auto& name = entry.first.Scalar();
      Item item{entry.first, entry.second, section_path.empty() ? name : section_path + "." + name};
      if (auto [first, fresh] = seen.emplace(name, at.line); !fresh) {
        error(at, "duplicate key '" + item.path + "' (first set on line " + std::to_string(first->second) + ")");
        continue;
      }
      positions[item.path] = item.where();
      each(item);
    }
  }

  /// A file's documents: the first if it is a mapping, else nothing (and an error).
  const YAML::Node* single_mapping(const std::vector<YAML::Node>& documents, std::string_view what);

  /// The cross-setting problems, at the first of their keys the file sets; then every error
  /// in file order.
  std::vector<ConfigError> sorted_errors(std::vector<Problem> problems);

  std::map<std::string, Position> positions;  // where the file sets each key path

 private:
  std::string file_;
  std::vector<ConfigError> errors_;
};

/// Where yaml-cpp's LoadAll would never return from (see yaml_reader.cpp); throws what LoadAll
/// would throw on a syntax error.
std::optional<YAML::Mark> stuck_document(const std::string& text);

/// A syntax error's position brought inside `text` (yaml-cpp may point past the end of a line).
Position inside_text(Position at, std::string_view text);

/// The first character YAML does not allow in its text (a C0 control other than tab, line feed
/// and carriage return, or DEL), with what to say of it; checked before yaml-cpp reads the text.
std::optional<std::pair<Position, std::string>> forbidden_character(std::string_view text);

/// Parses `text` and hands its documents to `grammar` (`document(documents)`, then `finish()`
/// for the result). yaml-cpp stops at its first syntax error: nothing after it can be checked,
/// so that error is the only one.
template <class Result, class Grammar>
Result load_yaml(Grammar grammar, std::string_view text, std::string_view name) {
  if (const auto bad = forbidden_character(text))
    return {std::nullopt, {{std::string(name), bad->first.line, bad->first.column, bad->second}}};
  const std::string yaml(text);
  try {
    if (const auto stuck = stuck_document(yaml)) {
      const auto at = position_of(*stuck);
      return {std::nullopt,
              {{std::string(name), at.line, at.column, "invalid YAML: no value can start here (a ',' outside [] or {}?)"}}};
    }
    grammar.document(YAML::LoadAll(yaml));
  } catch (const YAML::Exception& e) {
    const auto at = inside_text(position_of(e.mark), text);
    return {std::nullopt, {{std::string(name), at.line, at.column, "invalid YAML: " + e.msg}}};
  }
  return grammar.finish();
}

}  // namespace lockwatch::config::detail
