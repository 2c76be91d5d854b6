// SPDX-License-Identifier: Apache-2.0
// Owns the bytes a parsed dump keeps; everything in the model is a view into it.
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

namespace lockwatch::model {

/// Append-only byte store. Views it hands out stay valid for the arena's lifetime
/// (blocks never move). Not thread-safe; owned by one ThreadDump.
class Arena {
 public:
  Arena() = default;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  /// Copies `text` in and returns a view of the copy. Inline for the common case (room in
  /// the current block): every frame of every dump is stored.
  std::string_view store(std::string_view text) {
    if (text.empty() || text.size() > left_) return store_slow(text);
    std::memcpy(cursor_, text.data(), text.size());
    const std::string_view stored{cursor_, text.size()};
    cursor_ += text.size();
    left_ -= text.size();
    used_ += text.size();
    return stored;
  }
  /// Copies `items` in (trivially copyable, such as the views of a thread's frames) and
  /// returns a view of the copy: a thread's lists are arrays here, not vectors of their own.
  template <class T>
  std::span<const T> copy(std::span<const T> items) {
    static_assert(std::is_trivially_copyable_v<T> && alignof(T) <= alignof(std::max_align_t));
    if (items.empty()) return {};
    void* at = reserve(items.size_bytes(), alignof(T));
    std::memcpy(at, items.data(), items.size_bytes());
    return {static_cast<const T*>(at), items.size()};
  }
  /// Bytes handed out so far (not the capacity reserved).
  std::size_t bytes_used() const noexcept { return used_; }

 private:
  std::string_view store_slow(std::string_view text);  // empty, or a new block is needed
  void* reserve(std::size_t bytes, std::size_t align);  // `bytes` at an address aligned to `align`

  static constexpr std::size_t block_size = 64 * 1024;
  std::vector<std::unique_ptr<char[]>> blocks_;
  char* cursor_ = nullptr;
  std::size_t left_ = 0;
  std::size_t used_ = 0;
};

}  // namespace lockwatch::model
