// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/model/arena.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace lockwatch::model {

std::string_view Arena::store_slow(std::string_view text) {
  if (text.empty()) return {};
  if (text.size() > left_) {
    // Oversized strings get a block of their own so the current block keeps its tail.
    const std::size_t size = std::max(block_size, text.size());
    blocks_.push_back(std::make_unique_for_overwrite<char[]>(size));  // filled by the copy below
    if (text.size() >= block_size) {
      std::memcpy(blocks_.back().get(), text.data(), text.size());
      used_ += text.size();
      return {blocks_.back().get(), text.size()};
    }
    cursor_ = blocks_.back().get();
    left_ = size;
  }
  std::memcpy(cursor_, text.data(), text.size());
  std::string_view stored{cursor_, text.size()};
  cursor_ += text.size();
  left_ -= text.size();
  used_ += text.size();
  return stored;
}

void* Arena::reserve(std::size_t bytes, std::size_t align) {
  const auto pad = (align - reinterpret_cast<std::uintptr_t>(cursor_) % align) % align;
  if (cursor_ == nullptr || pad + bytes > left_) {
    // A new block is aligned for any type (operator new[]); big arrays get one of their own.
    const std::size_t size = std::max(block_size, bytes);
    blocks_.push_back(std::make_unique_for_overwrite<char[]>(size));
    if (bytes >= block_size) {
      used_ += bytes;
      return blocks_.back().get();
    }
    cursor_ = blocks_.back().get();
    left_ = size;
    return reserve(bytes, align);
  }
  void* at = cursor_ + pad;
  cursor_ += pad + bytes;
  left_ -= pad + bytes;
  used_ += bytes;
  return at;
}

}  // namespace lockwatch::model
