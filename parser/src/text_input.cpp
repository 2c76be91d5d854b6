// SPDX-License-Identifier: Apache-2.0
#include "text_input.hpp"

#include <algorithm>
#include <cstring>

#include "lockwatch/model/text.hpp"

namespace lockwatch::parser::detail {

using model::append_utf8;
namespace {

std::uint8_t byte_at(std::string_view s, std::size_t i) { return static_cast<std::uint8_t>(s[i]); }

}  // namespace

void Transcoder::feed(std::string_view chunk, std::string& out) {
  if (!decided_) chunk.remove_prefix(feed_head(chunk, out));
  if (!decided_ || chunk.empty()) return;
  if (encoding_ == Encoding::utf8)
    out.append(chunk);
  else
    decode_utf16(chunk, out);
}

std::size_t Transcoder::feed_head(std::string_view chunk, std::string& out) {
  if (decided_) return 0;
  const std::size_t take = std::min(chunk.size(), head_bytes - head_.size());
  head_.append(chunk.substr(0, take));
  if (head_.size() >= head_bytes) decide(out);
  return take;
}

void Transcoder::finish(std::string& out) {
  if (!decided_) decide(out);
  if (!odd_byte_.empty()) out.append("\xEF\xBF\xBD");  // a dangling half code unit
  if (high_surrogate_ != 0) out.append("\xEF\xBF\xBD");
  odd_byte_.clear();
  high_surrogate_ = 0;
}

void Transcoder::decide(std::string& out) {
  decided_ = true;
  const std::string_view h = head_;
  std::size_t skip = 0;
  if (h.size() >= 3 && h.substr(0, 3) == "\xEF\xBB\xBF") {
    skip = 3;
  } else if (h.size() >= 2 && byte_at(h, 0) == 0xFF && byte_at(h, 1) == 0xFE) {
    encoding_ = Encoding::utf16le, skip = 2;
  } else if (h.size() >= 2 && byte_at(h, 0) == 0xFE && byte_at(h, 1) == 0xFF) {
    encoding_ = Encoding::utf16be, skip = 2;
  } else if (h.size() >= 4 && h[0] != 0 && h[1] == 0 && h[2] != 0 && h[3] == 0) {
    encoding_ = Encoding::utf16le;  // no BOM, but ASCII text in UTF-16LE
  } else if (h.size() >= 4 && h[0] == 0 && h[1] != 0 && h[2] == 0 && h[3] != 0) {
    encoding_ = Encoding::utf16be;
  }
  const std::string rest = head_.substr(skip);
  head_.clear();
  feed(rest, out);
}

void Transcoder::decode_utf16(std::string_view bytes, std::string& out) {
  std::size_t i = 0;
  if (!odd_byte_.empty() && !bytes.empty()) {
    const char pair[2] = {odd_byte_[0], bytes[0]};
    odd_byte_.clear();
    i = 1;
    decode_utf16(std::string_view(pair, 2), out);
  }
  const bool le = encoding_ == Encoding::utf16le;
  for (; i + 1 < bytes.size(); i += 2) {
    const unsigned lo = byte_at(bytes, le ? i : i + 1), hi = byte_at(bytes, le ? i + 1 : i);
    emit_code_unit(static_cast<std::uint16_t>(lo | (hi << 8)), out);
  }
  if (i < bytes.size()) odd_byte_.assign(1, bytes[i]);
}

void Transcoder::emit_code_unit(std::uint16_t unit, std::string& out) {
  if (high_surrogate_ != 0) {
    const std::uint16_t high = high_surrogate_;
    high_surrogate_ = 0;
    if (unit >= 0xDC00 && unit <= 0xDFFF) {
      append_utf8(0x10000 + ((char32_t{high} - 0xD800) << 10) + (char32_t{unit} - 0xDC00), out);
      return;
    }
    out.append("\xEF\xBF\xBD");  // unpaired high surrogate
  }
  if (unit >= 0xD800 && unit <= 0xDBFF) {
    high_surrogate_ = unit;
  } else if (unit >= 0xDC00 && unit <= 0xDFFF) {
    out.append("\xEF\xBF\xBD");
  } else {
    append_utf8(unit, out);
  }
}

void LineSplitter::append_carry(std::string_view part) {
  if (!carry_cut_) {
    if (carry_.size() + part.size() <= max_line_) return void(carry_.append(part));
    // The line just passed max_line: from here on only its head and its latest bytes count.
    carry_cut_ = true;
    if (carry_.size() >= head_) {
      carry_tail_.assign(carry_, head_);
      carry_.resize(head_);
    } else {
      const std::size_t need = head_ - carry_.size();
      carry_.append(part.substr(0, need));
      part.remove_prefix(std::min(need, part.size()));
    }
  }
  if (part.size() >= tail_) carry_tail_.assign(part.substr(part.size() - tail_));
  else carry_tail_.append(part);
  // Trimmed lazily, so a line arriving in many small chunks costs linear time.
  if (carry_tail_.size() > 2 * tail_) carry_tail_.erase(0, carry_tail_.size() - tail_);
}

}  // namespace lockwatch::parser::detail
