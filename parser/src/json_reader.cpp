// SPDX-License-Identifier: Apache-2.0
#include "json_reader.hpp"

#include "lockwatch/model/text.hpp"

#include <algorithm>

namespace lockwatch::parser::detail {
namespace {

constexpr std::string_view end_of_input = "unexpected end of input";
constexpr std::uint32_t replacement_char = 0xFFFD;

bool is_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

int hex_digit(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool is_high_surrogate(std::uint32_t unit) noexcept { return unit >= 0xD800 && unit <= 0xDBFF; }
bool is_low_surrogate(std::uint32_t unit) noexcept { return unit >= 0xDC00 && unit <= 0xDFFF; }

}  // namespace

/// Builds a JsonDocument with an explicit stack of open containers instead of recursion.
class JsonParser {
 public:
  JsonParser(std::string_view text, JsonLimits limits, JsonDocument& doc) noexcept
      : in_(text), limits_(limits), doc_(doc) {}
  void run();

 private:
  struct Open {
    std::uint32_t node;
    std::uint32_t last = JsonNode::npos;  // last child so far, to link the next one
    bool empty = true;
  };

  bool fail(std::string_view message, std::size_t offset);
  bool at_end() const noexcept { return pos_ >= in_.size(); }
  bool need_more() { return at_end() ? fail(end_of_input, in_.size()) : true; }
  void skip_space() noexcept;
  bool value(std::string_view key);
  bool step();
  bool close_top();
  bool open(JsonType type, std::string_view key);
  std::optional<std::uint32_t> add(JsonType type, std::string_view key, std::size_t offset);
  void link(std::uint32_t index);
  bool literal(std::string_view word, JsonType type, bool truth, std::string_view key);
  bool number(std::string_view key);
  bool fraction_and_exponent();
  bool digits();
  bool string_value(std::string_view key);
  bool member_key(std::string_view& key);
  bool read_string(std::string_view& out);
  bool read_escaped(std::size_t start, std::string_view& out);
  std::size_t plain_run_end(std::size_t at) const noexcept;
  bool escape(std::string& out);
  bool unicode_escape(std::string& out);
  std::optional<std::uint32_t> hex4_at(std::size_t at) const noexcept;

  std::string_view in_;
  JsonLimits limits_;
  JsonDocument& doc_;
  std::size_t pos_ = 0;
  std::vector<Open> stack_;
  std::string scratch_;                   // the string being decoded; keeps its capacity
};

void JsonParser::run() {
  if (in_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;  // tolerate a UTF-8 byte order mark
  skip_space();
  if (!value({})) return;
  while (!stack_.empty())
    if (!step()) return;
  skip_space();
  if (!at_end()) fail("unexpected text after the document", pos_);
}

bool JsonParser::fail(std::string_view message, std::size_t offset) {
  if (!doc_.error_) doc_.error_ = JsonError{offset, message};
  return false;
}

void JsonParser::skip_space() noexcept {
  while (!at_end() && is_space(in_[pos_])) ++pos_;
}

// Reads one value; an array or object is only opened here and finished by step().
bool JsonParser::value(std::string_view key) {
  if (!need_more()) return false;
  switch (in_[pos_]) {
    case '{': return open(JsonType::object, key);
    case '[': return open(JsonType::array, key);
    case '"': return string_value(key);
    case 't': return literal("true", JsonType::boolean, true, key);
    case 'f': return literal("false", JsonType::boolean, false, key);
    case 'n': return literal("null", JsonType::null, false, key);
    default: break;
  }
  if (in_[pos_] == '-' || is_digit(in_[pos_])) return number(key);
  return fail("unexpected character", pos_);
}

// Consumes what follows a value inside the innermost open container.
bool JsonParser::step() {
  skip_space();
  if (!need_more()) return false;
  Open& top = stack_.back();
  const bool in_object = doc_.nodes_[top.node].type == JsonType::object;
  if (in_[pos_] == (in_object ? '}' : ']')) return close_top();
  if (!top.empty) {
    if (in_[pos_] != ',') return fail(in_object ? "expected ',' or '}'" : "expected ',' or ']'", pos_);
    ++pos_;
    skip_space();
  }
  top.empty = false;  // `top` may dangle once value() opens a container
  std::string_view key;
  if (in_object && !member_key(key)) return false;
  return value(key);
}

bool JsonParser::close_top() {
  doc_.nodes_[stack_.back().node].closed = true;
  stack_.pop_back();
  ++pos_;
  return true;
}

bool JsonParser::open(JsonType type, std::string_view key) {
  if (stack_.size() >= limits_.max_depth) return fail("nesting too deep", pos_);
  const auto index = add(type, key, pos_);
  if (!index) return false;
  doc_.nodes_[*index].closed = false;
  stack_.push_back(Open{*index});
  ++pos_;
  return true;
}

// `offset` is where the value starts, for the error message.
std::optional<std::uint32_t> JsonParser::add(JsonType type, std::string_view key, std::size_t offset) {
  if (doc_.nodes_.size() >= limits_.max_nodes || doc_.nodes_.size() >= JsonNode::npos) {
    fail("too many values", offset);
    return std::nullopt;
  }
  const auto index = static_cast<std::uint32_t>(doc_.nodes_.size());
  doc_.nodes_.push_back(JsonNode{});
  doc_.nodes_.back().type = type;
  doc_.nodes_.back().key = key;
  if (!stack_.empty()) link(index);
  return index;
}

// Appends node `index` to the children of the innermost open container.
void JsonParser::link(std::uint32_t index) {
  Open& top = stack_.back();
  JsonNode& parent = doc_.nodes_[top.node];
  if (top.last == JsonNode::npos)
    parent.first_child = index;
  else
    doc_.nodes_[top.last].next_sibling = index;
  top.last = index;
  ++parent.size;
}

bool JsonParser::literal(std::string_view word, JsonType type, bool truth, std::string_view key) {
  if (in_.substr(pos_, word.size()) != word) {
    if (word.substr(0, in_.size() - pos_) == in_.substr(pos_)) return fail(end_of_input, in_.size());
    return fail("invalid literal", pos_);
  }
  const auto index = add(type, key, pos_);
  if (!index) return false;
  doc_.nodes_[*index].boolean = truth;
  pos_ += word.size();
  return true;
}

// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, kept as text.
bool JsonParser::number(std::string_view key) {
  const std::size_t start = pos_;
  if (in_[pos_] == '-') ++pos_;
  const bool zero = !at_end() && in_[pos_] == '0';
  if (zero) ++pos_;
  if ((!zero && !digits()) || !fraction_and_exponent()) return false;
  const auto index = add(JsonType::number, key, start);
  if (index) doc_.nodes_[*index].text = in_.substr(start, pos_ - start);
  return index.has_value();
}

bool JsonParser::fraction_and_exponent() {
  if (!at_end() && in_[pos_] == '.') {
    ++pos_;
    if (!digits()) return false;
  }
  if (at_end() || (in_[pos_] != 'e' && in_[pos_] != 'E')) return true;
  ++pos_;
  if (!at_end() && (in_[pos_] == '+' || in_[pos_] == '-')) ++pos_;
  return digits();
}

// One or more decimal digits.
bool JsonParser::digits() {
  if (!need_more()) return false;
  if (!is_digit(in_[pos_])) return fail("invalid number", pos_);
  while (!at_end() && is_digit(in_[pos_])) ++pos_;
  return true;
}

bool JsonParser::string_value(std::string_view key) {
  const std::size_t start = pos_;
  std::string_view text;
  if (!read_string(text)) return false;
  const auto index = add(JsonType::string, key, start);
  if (index) doc_.nodes_[*index].text = text;
  return index.has_value();
}

// `"name" :` with the space around the colon.
bool JsonParser::member_key(std::string_view& key) {
  if (!need_more()) return false;
  if (in_[pos_] != '"') return fail("expected a member name", pos_);
  if (!read_string(key)) return false;
  skip_space();
  if (!need_more()) return false;
  if (in_[pos_] != ':') return fail("expected ':'", pos_);
  ++pos_;
  skip_space();
  return true;
}

// At the opening quote. Strings without escapes stay views into the input.
bool JsonParser::read_string(std::string_view& out) {
  const std::size_t start = ++pos_;
  pos_ = plain_run_end(pos_);
  if (at_end()) return fail(end_of_input, in_.size());
  if (in_[pos_] == '\\') return read_escaped(start, out);
  if (in_[pos_] != '"') return fail("control character in string", pos_);
  out = in_.substr(start, pos_++ - start);
  return true;
}

// Continues read_string() at the first backslash, decoding into document-owned storage.
bool JsonParser::read_escaped(std::size_t start, std::string_view& out) {
  scratch_.assign(in_.substr(start, pos_ - start));
  while (!at_end()) {
    const char c = in_[pos_++];
    if (c == '"') {
      out = doc_.keep(scratch_);
      return true;
    }
    if (c != '\\') return fail("control character in string", pos_ - 1);
    if (!escape(scratch_)) return false;
    const std::size_t run = plain_run_end(pos_);
    scratch_.append(in_.substr(pos_, run - pos_));
    pos_ = run;
  }
  return fail(end_of_input, in_.size());
}

// Where the run of bytes that need no decoding ends: at '"', '\\', a control character or the end.
std::size_t JsonParser::plain_run_end(std::size_t at) const noexcept {
  while (at < in_.size()) {
    const auto c = static_cast<unsigned char>(in_[at]);
    if (c == '"' || c == '\\' || c < 0x20) break;
    ++at;
  }
  return at;
}

// Just after a backslash.
bool JsonParser::escape(std::string& out) {
  if (!need_more()) return false;
  const char c = in_[pos_++];
  switch (c) {
    case '"': case '\\': case '/': out.push_back(c); return true;
    case 'b': out.push_back('\b'); return true;
    case 'f': out.push_back('\f'); return true;
    case 'n': out.push_back('\n'); return true;
    case 'r': out.push_back('\r'); return true;
    case 't': out.push_back('\t'); return true;
    case 'u': return unicode_escape(out);
    default: return fail("invalid escape", pos_ - 1);
  }
}

// Just after "\u". A high surrogate pairs with a directly following "\uDC00".."\uDFFF".
bool JsonParser::unicode_escape(std::string& out) {
  const auto unit = hex4_at(pos_);
  if (!unit) return in_.size() - pos_ < 4 ? fail(end_of_input, in_.size()) : fail("invalid \\u escape", pos_);
  pos_ += 4;
  if (!is_high_surrogate(*unit)) {
    model::append_utf8(*unit, out);  // a lone low surrogate becomes U+FFFD there
    return true;
  }
  const auto low = in_.substr(pos_, 2) == "\\u" ? hex4_at(pos_ + 2) : std::nullopt;
  if (!low || !is_low_surrogate(*low)) {
    model::append_utf8(replacement_char, out);
    return true;
  }
  pos_ += 6;
  model::append_utf8(0x10000 + ((*unit - 0xD800) << 10) + (*low - 0xDC00), out);
  return true;
}

std::optional<std::uint32_t> JsonParser::hex4_at(std::size_t at) const noexcept {
  if (at > in_.size() || in_.size() - at < 4) return std::nullopt;
  std::uint32_t unit = 0;
  for (std::size_t i = at; i < at + 4; ++i) {
    const int digit = hex_digit(in_[i]);
    if (digit < 0) return std::nullopt;
    unit = unit << 4 | static_cast<std::uint32_t>(digit);
  }
  return unit;
}

std::string_view JsonDocument::keep(std::string_view text) {
  constexpr std::size_t block_size = 16 * 1024;
  if (text.size() > block_left_) {
    const std::size_t size = std::max(block_size, text.size());
    blocks_.push_back(std::make_unique_for_overwrite<char[]>(size));
    block_next_ = blocks_.back().get();
    block_left_ = size;
  }
  const std::string_view kept(block_next_, text.size());
  block_next_ = std::copy(text.begin(), text.end(), block_next_);
  block_left_ -= text.size();
  return kept;
}

JsonDocument JsonDocument::parse(std::string_view text, JsonLimits limits) {
  JsonDocument doc;
  JsonParser(text, limits, doc).run();
  return doc;
}

const JsonNode* JsonDocument::member(const JsonNode& object, std::string_view key) const noexcept {
  if (!object.is(JsonType::object)) return nullptr;
  for (const JsonNode& child : children(object))
    if (child.key == key) return &child;
  return nullptr;
}

const JsonNode* JsonDocument::member(const JsonNode& object, std::string_view key,
                                     JsonType type) const noexcept {
  const JsonNode* found = member(object, key);
  return found && found->is(type) ? found : nullptr;
}

const JsonNode& JsonChildren::iterator::operator*() const noexcept { return doc_->node(index_); }

JsonChildren::iterator& JsonChildren::iterator::operator++() noexcept {
  index_ = doc_->node(index_).next_sibling;
  return *this;
}

std::optional<std::uint64_t> json_uint_text(std::string_view digits) noexcept {
  if (digits.empty()) return std::nullopt;
  std::uint64_t value = 0;
  for (const char c : digits) {
    if (!is_digit(c)) return std::nullopt;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

std::optional<std::uint64_t> json_uint(const JsonNode& node) noexcept {
  if (!node.is(JsonType::number) && !node.is(JsonType::string)) return std::nullopt;
  return json_uint_text(node.text);
}


}  // namespace lockwatch::parser::detail
