// SPDX-License-Identifier: Apache-2.0
// Bytes to lines: encoding detection (BOM / UTF-16), then '\n' splitting with a carry.
// The only place where chunk boundaries exist; everything after sees whole lines.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
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
  /// Before the encoding is known: takes from `chunk` only the bytes that decide it (the
  /// first 4 of the input), appends what they decode to, and returns how many it took. A
  /// caller routes the rest of a UTF-8 chunk itself, uncopied.
  std::size_t feed_head(std::string_view chunk, std::string& out);
  bool decided() const noexcept { return decided_; }
  void finish(std::string& out);
  Encoding encoding() const noexcept { return encoding_; }
  /// Decided on UTF-8 (or bytes): the input can skip the transcoder, no copy needed.
  bool passthrough() const noexcept { return decided_ && encoding_ == Encoding::utf8; }

 private:
  void decide(std::string& out);
  void decode_utf16(std::string_view bytes, std::string& out);
  void emit_code_unit(std::uint16_t unit, std::string& out);

  static constexpr std::size_t head_bytes = 4;  // enough for any BOM and the UTF-16 NUL pattern
  bool decided_ = false;
  Encoding encoding_ = Encoding::utf8;
  std::string head_;          // first bytes, kept until the encoding is known
  std::string odd_byte_;      // UTF-16: half of a code unit split across chunks
  std::uint16_t high_surrogate_ = 0;
};

/// Splits decoded bytes into lines without their "\n" / "\r\n". A line longer than
/// `max_line` keeps its first half and its last half (`max_line` bytes in all) and is
/// flagged as cut: a thread header whose name is 70 KB long still ends in the fields that
/// make it a header ("#12 ... nid=0x.. waiting ..."), so the thread is still counted, its
/// name shortened in the middle. `sink(std::string_view line, bool was_cut)` is called once
/// per line; a template so the per-line call inlines (most of a dump's bytes are short
/// frame lines).
class LineSplitter {
 public:
  explicit LineSplitter(std::size_t max_line) : max_line_(max_line), head_(max_line / 2), tail_(max_line - max_line / 2) {}

  template <class Sink>
  void feed(std::string_view text, Sink&& sink) {
    feed(text, sink, [] { return false; });
  }

  /// As feed(), but asks `stop()` after each line and returns there, with the number of
  /// bytes taken: the caller reads what follows that line itself (the parser compares a
  /// thread's body with its last one byte for byte, without splitting it). After such a
  /// return no line is carried (idle()).
  template <class Sink, class Stop>
  std::size_t feed(std::string_view text, Sink&& sink, Stop&& stop) {
    const std::size_t size = text.size();
    while (!text.empty()) {
      const void* nl = std::memchr(text.data(), '\n', text.size());
      if (nl == nullptr) {
        append_carry(text);
        return size;
      }
      const auto len = static_cast<std::size_t>(static_cast<const char*>(nl) - text.data());
      if (carry_.empty() && !carry_cut_) {
        // Fast path: the whole line is inside this chunk; no copy unless it is too long.
        if (len <= max_line_) emit(text.substr(0, len), false, sink);
        else emit_cut(text.substr(0, head_), text.substr(len - tail_, tail_), sink);
      } else {
        append_carry(text.substr(0, len));
        flush_carry(sink);
      }
      text.remove_prefix(len + 1);
      if (stop()) return size - text.size();
    }
    return size;
  }

  /// No part of a line is held: the next byte fed starts a line.
  bool idle() const noexcept { return carry_.empty() && !carry_cut_; }

  template <class Sink>
  void finish(Sink&& sink) {
    if (!carry_.empty() || carry_cut_) flush_carry(sink);
  }

 private:
  template <class Sink>
  static void emit(std::string_view line, bool was_cut, Sink& sink) {
    if (!was_cut && !line.empty() && line.back() == '\r') line.remove_suffix(1);
    sink(line, was_cut);
  }
  template <class Sink>
  void emit_cut(std::string_view head, std::string_view tail, Sink& sink) {
    joined_.assign(head).append(tail);
    if (!joined_.empty() && joined_.back() == '\r') joined_.pop_back();
    sink(std::string_view(joined_), true);
  }
  template <class Sink>
  void flush_carry(Sink& sink) {
    if (carry_cut_) emit_cut(carry_, std::string_view(carry_tail_).substr(carry_tail_.size() - std::min(tail_, carry_tail_.size())), sink);
    else emit(carry_, false, sink);
    carry_.clear();
    carry_tail_.clear();
    carry_cut_ = false;
  }
  void append_carry(std::string_view part);

  std::size_t max_line_;
  std::size_t head_;          // bytes kept from the start of a cut line
  std::size_t tail_;          // bytes kept from its end
  std::string carry_;         // the line so far; once cut, its first head_ bytes
  std::string carry_tail_;    // once cut: the latest bytes, at most 2 * tail_ (trimmed lazily)
  std::string joined_;        // a cut line as emitted
  bool carry_cut_ = false;
};

}  // namespace lockwatch::parser::detail
