// SPDX-License-Identifier: Apache-2.0
// A small JSON reader (RFC 8259) for Thread.dump_to_file documents: builds a flat,
// read-only tree. Iterative, depth-limited, never throws on bad input, and keeps the
// part of the tree it built before an error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lockwatch::parser::detail {

enum class JsonType : std::uint8_t { null, boolean, number, string, array, object };

struct JsonLimits {
  std::size_t max_depth = 256;             // open arrays/objects at once
  std::size_t max_nodes = std::size_t{1} << 27;  // values in the whole document
};

/// One value. Children are linked by index, so the tree has no recursion to destroy.
struct JsonNode {
  static constexpr std::uint32_t npos = std::numeric_limits<std::uint32_t>::max();

  JsonType type = JsonType::null;
  bool boolean = false;
  bool closed = true;                      // false for an array/object the input ended inside
  std::string_view text;                   // string: decoded bytes; number: its literal text
  std::string_view key;                    // member name when the parent is an object
  std::uint32_t first_child = npos;
  std::uint32_t next_sibling = npos;
  std::uint32_t size = 0;                  // number of children

  bool is(JsonType t) const noexcept { return type == t; }
};

struct JsonError {
  std::size_t offset = 0;                  // byte offset into the input
  std::string_view message;                // static text
};

class JsonDocument;

/// Forward range over the children of an array or object.
class JsonChildren {
 public:
  class iterator {
   public:
    iterator(const JsonDocument* doc, std::uint32_t index) noexcept : doc_(doc), index_(index) {}
    const JsonNode& operator*() const noexcept;
    iterator& operator++() noexcept;
    bool operator==(const iterator& other) const noexcept { return index_ == other.index_; }

   private:
    const JsonDocument* doc_;
    std::uint32_t index_;
  };

  JsonChildren(const JsonDocument* doc, std::uint32_t first) noexcept : doc_(doc), first_(first) {}
  iterator begin() const noexcept { return {doc_, first_}; }
  iterator end() const noexcept { return {doc_, JsonNode::npos}; }

 private:
  const JsonDocument* doc_;
  std::uint32_t first_;
};

/// The parsed tree. Undecoded strings and numbers are views into the input text, which
/// must outlive the document; decoded strings live in the document itself.
class JsonDocument {
 public:
  JsonDocument() = default;
  // Move-only: a copy's views would still point into the original's decoded strings.
  JsonDocument(const JsonDocument&) = delete;
  JsonDocument& operator=(const JsonDocument&) = delete;
  JsonDocument(JsonDocument&&) = default;
  JsonDocument& operator=(JsonDocument&&) = default;

  /// Never throws on bad input (only std::bad_alloc can escape).
  static JsonDocument parse(std::string_view text, JsonLimits limits = {});

  bool ok() const noexcept { return !error_; }
  const std::optional<JsonError>& error() const noexcept { return error_; }
  /// The top-level value; nullptr if not even its first byte could be read.
  const JsonNode* root() const noexcept { return nodes_.empty() ? nullptr : &nodes_.front(); }
  const JsonNode& node(std::uint32_t index) const noexcept { return nodes_[index]; }
  std::size_t node_count() const noexcept { return nodes_.size(); }

  /// Children of an array or object (empty for scalars).
  JsonChildren children(const JsonNode& parent) const noexcept { return {this, parent.first_child}; }
  /// The first member named `key` of an object; nullptr if absent or not an object.
  const JsonNode* member(const JsonNode& object, std::string_view key) const noexcept;
  /// member() narrowed to one type; nullptr when the member has another type.
  const JsonNode* member(const JsonNode& object, std::string_view key, JsonType type) const noexcept;

 private:
  friend class JsonParser;
  /// Copies a decoded string into blocks that never move, so views survive moving the document.
  std::string_view keep(std::string_view text);

  std::vector<JsonNode> nodes_;
  std::vector<std::unique_ptr<char[]>> blocks_;
  char* block_next_ = nullptr;
  std::size_t block_left_ = 0;
  std::optional<JsonError> error_;
};

/// Reads a non-negative decimal integer without sign, fraction or exponent.
std::optional<std::uint64_t> json_uint_text(std::string_view digits) noexcept;
/// The unsigned integer in a number node or in a string node holding only digits
/// (dump_to_file writes Java longs as strings before JDK 27 and as numbers after).
std::optional<std::uint64_t> json_uint(const JsonNode& node) noexcept;

}  // namespace lockwatch::parser::detail
