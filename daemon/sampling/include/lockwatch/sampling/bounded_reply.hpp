// SPDX-License-Identifier: Apache-2.0
// A dump reply collected within bounds, as it streams in.
//
// Everything in a reply is the target's to choose: a compromised JVM can stream forever,
// send one line of gigabytes or a million thread entries. The bounds are checked on every
// chunk, before the chunk is kept, so lockwatch's memory for one reply never passes
// max_bytes, and a reply that passes a bound is given up at once (the caller drops the
// connection - which also frees a JDK 25 JVM that streams its dump from inside the
// safepoint: its write fails and the operation ends).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace lockwatch::sampling {

struct ReplyBounds {
  /// Payload bytes. 32 MiB holds 10 000 threads of ~3 KiB (40-frame stacks); the largest
  /// real dumps at hand are ~0.6 KiB per thread.
  std::size_t max_bytes = std::size_t{32} << 20;
  /// Thread entries (lines that start with '"'). Bounds the parse and analysis work of one
  /// sample independently of how short the entries are.
  std::size_t max_threads = 50'000;
};

class BoundedReply {
 public:
  enum class Over : std::uint8_t { none, bytes, threads };

  explicit BoundedReply(ReplyBounds bounds = {}) : bounds_(bounds) {}

  using Sink = std::function<void(std::string_view)>;

  /// Keeps `payload` (or hands it to the sink, see stream_to) unless a bound is passed; then
  /// drops everything kept (its memory is freed) and returns false, now and for every later
  /// call. Any split of the bytes gives the same result.
  bool append(std::string_view payload);
  /// From now on the payload goes to `sink` as it arrives instead of being kept, so a reply
  /// is never held whole: what was kept so far goes first (and is freed). The bounds count
  /// every byte and thread entry as before; past one, nothing more reaches the sink. With
  /// `sink_past_thread_bound` the sink counts thread entries itself (TextChunks::
  /// past_thread_bound): they are not counted here, and the reply is given up (Over::threads)
  /// at the first append after it says the sink has seen more than max_threads.
  void stream_to(Sink sink, std::function<bool()> sink_past_thread_bound = {});
  bool streaming() const noexcept { return static_cast<bool>(sink_); }

  Over over() const noexcept { return over_; }
  std::size_t bytes() const noexcept { return bytes_; }      // payload bytes seen, kept or not
  std::size_t threads() const noexcept { return threads_; }  // thread entries seen (while counted here)
  const ReplyBounds& bounds() const noexcept { return bounds_; }
  std::string& text() noexcept { return text_; }
  const std::string& text() const noexcept { return text_; }  // "" while streaming
  /// "the reply passed limits.max_reply_bytes (32 MiB)..." for logs; "" while within bounds.
  std::string describe() const;

 private:
  void give_up(Over why);
  void pass(std::string_view payload);

  ReplyBounds bounds_;
  std::string text_;
  Sink sink_;
  std::size_t bytes_ = 0;
  std::size_t threads_ = 0;
  bool line_start_ = true;
  std::function<bool()> sink_past_thread_bound_;  // set: the sink counts thread entries
  Over over_ = Over::none;
};

}  // namespace lockwatch::sampling
