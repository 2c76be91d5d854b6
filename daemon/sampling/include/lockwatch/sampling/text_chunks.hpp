// SPDX-License-Identifier: Apache-2.0
// A dump's text in buffers its consumer lends: the reply is read straight into them.
//
// Why it exists: the daemon hands a dump's text to its processing thread in buffers of its
// own (service::ChunkPool). Read into the attach session's own 64 KiB buffer first, every
// byte was copied once more on the io thread, and a 1.5 MB reply took ~25 reads, each with a
// round of the event loop. Read into the lent buffer itself, up to its capacity, the copy
// is gone and so are three quarters of the reads.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <string_view>

namespace lockwatch::sampling {

/// The consumer's side. `take` lends a buffer (its contents do not matter) whose capacity is
/// how far to fill it; `give` gets each one back, in order, with the text in its first
/// `text_bytes` bytes. A buffer comes back as large as it was filled to - its capacity, for
/// the last one of a text too - so lending it again writes nothing. Why: made as large as its
/// capacity again, a buffer given back short (every text's last) was zero-filled on the io
/// thread, memory the processing thread last had in its cache: ~4% of the io thread's time
/// per sample of a 1000-thread JVM.
struct TextChunks {
  std::function<std::string()> take;
  std::function<void(std::string&& buffer, std::size_t text_bytes)> give;
  /// Set by a consumer that counts the text's thread entries itself, against the reply's
  /// max_threads (the daemon's parser does, as it parses): true once it has seen more. The
  /// reader then does not scan every byte for them - on the io thread, which the HTTP server
  /// and every target share, ~4% of a 1000-thread JVM's sample - and gives the reply up when
  /// this says so, at its next read (a chunk or more late: the bytes stay bounded meanwhile).
  /// Called on the reader's thread while the consumer works on its own: it must be cheap
  /// and thread-safe (an atomic flag).
  std::function<bool()> past_thread_bound;
  /// The text's first full buffer waits for the second to fill, or for the text to end, and
  /// is given just before it; the buffers after it are given as they fill. Why: a consumer
  /// woken for each buffer (the daemon's processing thread) then wakes once for a text of up
  /// to two buffers - a 1000-thread JVM's 1.3 MB reply in the daemon's 1 MiB - and works
  /// after the reader instead of beside it. On a machine of two CPUs the reader, the JVM's
  /// writer and the consumer had taken turns: the reader waited ~5 times a sample instead of
  /// ~3, the consumer ~2.3 times instead of ~1.6 (docs/performance.md). The reader then holds
  /// up to two buffers instead of one (the daemon's pool keeps three anyway). A reply past the
  /// thread bound is given up a buffer later; its bytes stay bounded by the reply's own bound
  /// meanwhile.
  bool hold_first = false;
  explicit operator bool() const noexcept { return take && give; }
};

/// The producer's side: where reads land, and what of them is text.
class ChunkedText {
 public:
  /// A lent buffer smaller than this is grown to kMinCapacity: reads of a few bytes each
  /// would make the copy saved a system call spent.
  static constexpr std::size_t kSmallest = 4096;
  static constexpr std::size_t kMinCapacity = 64 * 1024;

  explicit ChunkedText(TextChunks chunks) : chunks_(std::move(chunks)) {}

  /// Where the next read may land: the free end of the buffer being filled (one is taken when
  /// there is none). Valid until the next call of any member.
  std::span<char> space();
  /// `text` is the next text. When it begins where space() began it is already in place and
  /// only counted; otherwise it is copied in, over as many buffers as it needs. A buffer is
  /// given once it is full (the first one later with TextChunks::hold_first).
  void add(std::string_view text);
  /// Gives the buffer being filled, if it holds any text (after a first one still kept).
  void flush();

  std::size_t bytes() const noexcept { return bytes_; }  // text added so far

 private:
  void ensure_buffer();
  void give_if_full();
  void keep_first();
  std::string take_lent();

  TextChunks chunks_;
  std::string first_;   // the text's first full buffer while hold_first keeps it (never empty then)
  bool past_first_ = false;
  std::string buffer_;  // while lent, its size is its capacity; the first fill_ bytes are text
  std::size_t fill_ = 0;
  bool lent_ = false;
  std::size_t bytes_ = 0;
};

}  // namespace lockwatch::sampling
