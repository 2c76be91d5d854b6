// SPDX-License-Identifier: Apache-2.0
// The buffers a dump's text crosses from the io thread to the processing thread in.
//
// Why it exists: a 1.5 MB dump arrives in ~25 reads of up to 64 KiB, gathered into buffers
// of ~256 KiB for the processing thread. Fresh buffers every sample meant fresh pages:
// the kernel's page faults and the allocator's work were a large part of a sample's CPU.
// Buffers given back after their chunk was parsed are handed out again, so a steady stream
// of samples reuses the same memory. At most `keep` are kept; one a hostile reply could
// grow past the usual read size is dropped instead.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace lockwatch::service {

class ChunkPool {
 public:
  static constexpr std::size_t keep = 8;
  static constexpr std::size_t max_capacity = 1024 * 1024;

  /// An empty buffer from the pool (a new one when it is empty).
  std::string take() {
    std::string buffer;
    std::lock_guard lock(mu_);
    if (!free_.empty()) {
      buffer = std::move(free_.back());
      free_.pop_back();
    }
    buffer.clear();
    return buffer;
  }

  /// Back to the pool, unless it is full or the buffer grew past the usual chunk.
  void give(std::string&& buffer) {
    if (buffer.capacity() > max_capacity) return;
    std::lock_guard lock(mu_);
    if (free_.size() < keep) free_.push_back(std::move(buffer));
  }

 private:
  std::mutex mu_;
  std::vector<std::string> free_;
};

}  // namespace lockwatch::service
