// SPDX-License-Identifier: Apache-2.0
// A target's recent thread dumps, bounded by count and bytes. Lines and whole thread
// blocks are interned - dumps repeat the same stacks across threads and samples - so
// 600 dumps of a 1000-thread JVM take a few MiB instead of their ~300 MB of text.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockwatch/sampling/dump_record.hpp"

namespace lockwatch::store {

/// A kept sample: the dump's record as the backend and scheduler wrote it (less its text,
/// which the ring holds interned), plus what the ring adds.
struct SampleInfo {
  std::uint64_t id = 0;          // assigned by the ring, increasing, never reused
  std::uint64_t text_bytes = 0;  // the dump's size as received
  sampling::DumpFacts dump;
};

struct RingLimits {
  std::size_t max_samples = 600;
  std::uint64_t max_bytes = std::uint64_t{32} << 20;
};

class Ring {
 public:
  /// A sample being written as its text streams in, so the text is never held whole: lines
  /// are interned as they complete (a chunk may split a line anywhere; the partial line is
  /// carried). It takes pool references as it goes and gives up - releasing them all - as
  /// soon as what it adds passes max_bytes, exactly where add() would. Committing makes it a
  /// sample; destroying it uncommitted (or abandon()) leaves the ring as before. It must not
  /// outlive its ring, and holds references only: eviction never touches what it took.
  class Writer {
   public:
    Writer(Writer&&) noexcept;
    Writer& operator=(Writer&&) noexcept;
    ~Writer();  // abandons
    /// Interns the complete lines of `chunk`; false once given up (now or before).
    bool append(std::string_view chunk);
    bool given_up() const noexcept;
    /// Text bytes appended so far, kept or not: the sample's size as received.
    std::uint64_t bytes() const noexcept;
    /// Releases what it took; the writer is then given up.
    void abandon();

   private:
    friend class Ring;
    struct State;
    explicit Writer(std::unique_ptr<State> state);
    std::unique_ptr<State> state_;
  };

  explicit Ring(RingLimits limits = {});
  ~Ring();
  Ring(Ring&&) noexcept;
  Ring& operator=(Ring&&) noexcept;

  /// Stores a dump's text (byte for byte; `text(id)` gives it back) and evicts the
  /// oldest samples while a limit is exceeded. Returns the new sample's id, or nothing when
  /// the sample alone would take more than max_bytes: it is then refused (counted in
  /// refused()) and the ring is as before - the bound holds for every input.
  std::optional<std::uint64_t> add(std::string_view text, sampling::DumpFacts facts = {});
  /// An empty sample to append() to; add() is begin(), one append() and commit().
  Writer begin();
  /// The written sample is kept like add() keeps one (evicting the oldest while a limit is
  /// exceeded); a writer that gave up is refused (counted in refused()). Either way the
  /// writer is spent. A writer of another ring, or one already spent, is a programming error
  /// (std::invalid_argument).
  std::optional<std::uint64_t> commit(Writer&& writer, sampling::DumpFacts facts = {});
  std::vector<SampleInfo> list() const;  // oldest first
  std::optional<SampleInfo> info(std::uint64_t id) const;
  std::optional<std::string> text(std::uint64_t id) const;
  /// The id of the oldest sample kept; nothing when the ring is empty.
  std::optional<std::uint64_t> first_id() const;

  void set_limits(RingLimits limits);
  std::size_t size() const noexcept;
  std::uint64_t bytes() const noexcept;      // estimated memory of samples and pools
  std::uint64_t evictions() const noexcept;  // samples dropped to stay within the limits
  std::uint64_t refused() const noexcept;    // samples too big for max_bytes on their own
  /// Thread blocks of committed samples that equalled their thread's block in the sample
  /// before and took its stored form without their lines being looked up again.
  std::uint64_t reused_blocks() const noexcept;
  /// Blocks of committed samples that differed from their thread's last one but were a block
  /// the ring holds (found by one hash of the block instead of a lookup per line).
  std::uint64_t known_blocks() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lockwatch::store
