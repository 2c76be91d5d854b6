// SPDX-License-Identifier: Apache-2.0
// Bytes to lines: encoding detection (BOM / UTF-16), then '\n' splitting with a carry.
// The only place where chunk boundaries exist; everything after sees whole lines.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "lockwatch/parser/dump_parser.hpp"

namespace lockwatch::parser::detail {

/// Turns the input into UTF-8-ish bytes. Decides the encoding from the first 4 bytes:
/// a UTF-8 BOM is dropped, UTF-16 (BOM, or ASCII with NUL every other byte, as
/// PowerShell's `jstack > file` writes) is transcoded; anything else passes through as bytes.
class Transcoder {
 public:
  /// Appends the decoded form of `chunk` to `out` (may hold bytes back until it can decide).
  void feed(std::string_view chunk, std::string& out);
  void finish(std::string& out);
  Encoding encoding() const noexcept { return encoding_; }

 private:
  void decide(std::string& out);
  void decode_utf16(std::string_view bytes, std::string& out);
  void emit_code_unit(std::uint16_t unit, std::string& out);

  bool decided_ = false;
  Encoding encoding_ = Encoding::utf8;
  std::string head_;          // first bytes, kept until the encoding is known
  std::string odd_byte_;      // UTF-16: half of a code unit split across chunks
  std::uint16_t high_surrogate_ = 0;
};

/// Splits decoded bytes into lines without their "\n" / "\r\n". Lines longer than
/// `max_line` are cut there and the rest up to the next '\n' is skipped (counted).
class LineSplitter {
 public:
  using Sink = std::function<void(std::string_view line, bool was_cut)>;
  explicit LineSplitter(std::size_t max_line) : max_line_(max_line) {}

  void feed(std::string_view text, const Sink& sink);
  void finish(const Sink& sink);

 private:
  void emit(std::string_view line, bool was_cut, const Sink& sink);
  void append_carry(std::string_view part);

  std::size_t max_line_;
  std::string carry_;
  bool carry_cut_ = false;
};

}  // namespace lockwatch::parser::detail
