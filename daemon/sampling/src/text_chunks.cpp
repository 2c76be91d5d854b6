// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/sampling/text_chunks.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace lockwatch::sampling {

void ChunkedText::ensure_buffer() {
  if (lent_) return;
  buffer_ = chunks_.take();
  if (buffer_.capacity() < kSmallest) buffer_.reserve(kMinCapacity);
  // Only what lies past the buffer's old size is written here: a buffer given back as it was
  // filled (give() never shrinks it) and lent again costs nothing.
  buffer_.resize(buffer_.capacity());
  fill_ = 0;
  lent_ = true;
}

std::span<char> ChunkedText::space() {
  ensure_buffer();
  return {buffer_.data() + fill_, buffer_.size() - fill_};
}

void ChunkedText::add(std::string_view text) {
  bytes_ += text.size();
  if (lent_ && text.data() == buffer_.data() + fill_ && text.size() <= buffer_.size() - fill_) {
    fill_ += text.size();
    return give_if_full();
  }
  while (!text.empty()) {
    ensure_buffer();
    const auto n = std::min(text.size(), buffer_.size() - fill_);
    std::memcpy(buffer_.data() + fill_, text.data(), n);
    fill_ += n;
    text.remove_prefix(n);
    give_if_full();
  }
}

void ChunkedText::give_if_full() {
  if (!lent_ || fill_ != buffer_.size()) return;
  if (chunks_.hold_first && !past_first_) return keep_first();
  flush();
}

// The text's first full buffer waits (TextChunks::hold_first); the next one is lent meanwhile.
void ChunkedText::keep_first() {
  past_first_ = true;
  first_ = take_lent();
}

void ChunkedText::flush() {
  if (!first_.empty()) {
    const auto size = first_.size();  // full: all of it is text
    chunks_.give(std::exchange(first_, std::string()), size);
  }
  if (!lent_ || fill_ == 0) return;
  const auto text_bytes = fill_;
  chunks_.give(take_lent(), text_bytes);
}

// The lent buffer, no longer this one's to fill.
std::string ChunkedText::take_lent() {
  lent_ = false;
  fill_ = 0;
  return std::exchange(buffer_, std::string());
}

}  // namespace lockwatch::sampling
