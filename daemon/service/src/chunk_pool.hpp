// SPDX-License-Identifier: Apache-2.0
// The buffers a dump's text crosses from the io thread to the processing thread in.
//
// Why it exists: a dump is read into buffers of chunk_bytes that cross to the processing
// thread. Fresh buffers every sample meant fresh pages: the kernel's page faults
// and the allocator's work were a large part of a sample's CPU. Buffers given back after
// their chunk was parsed are handed out again, so a steady stream of samples reuses the same
// memory. At most `keep` are kept; one larger than any chunk should be is dropped instead.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace lockwatch::service {

class ChunkPool {
 public:
  /// The size of a chunk: what the daemon lends for a reply to be read into. Each full chunk
  /// is a post that may wake the processing thread: a 1000-thread JVM's 1.3 MB reply is 2
  /// posts at 1 MiB, 6 at 256 KiB, and the processing thread's CPU per sample followed the
  /// wakes (~10% less at 1 MiB, two builds sampling one JVM, docs/performance.md). The first
  /// goes with the second (sampling::TextChunks::hold_first): one wake for such a reply.
  static constexpr std::size_t chunk_bytes = 1024 * 1024;
  /// Three: a reply of two chunks and the first of the next, ~what 8 of 256 KiB kept.
  static constexpr std::size_t keep = 3;

  /// A buffer from the pool (a new, empty one when it is empty). Its contents do not matter
  /// to whoever takes it; they are left as they were, so making it as large as its capacity
  /// again (sampling::ChunkedText) writes nothing.
  std::string take() {
    std::string buffer;
    std::lock_guard lock(mu_);
    if (!free_.empty()) {
      buffer = std::move(free_.back());
      free_.pop_back();
    }
    return buffer;
  }

  /// Back to the pool, unless it is full or the buffer is larger than a chunk.
  void give(std::string&& buffer) {
    if (buffer.capacity() > chunk_bytes) return;
    std::lock_guard lock(mu_);
    if (free_.size() < keep) free_.push_back(std::move(buffer));
  }

 private:
  std::mutex mu_;
  std::vector<std::string> free_;
};

}  // namespace lockwatch::service
