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
  explicit Ring(RingLimits limits = {});
  ~Ring();
  Ring(Ring&&) noexcept;
  Ring& operator=(Ring&&) noexcept;

  /// Stores a dump's text (byte for byte; `text(id)` gives it back) and evicts the
  /// oldest samples while a limit is exceeded. Returns the new sample's id, or nothing when
  /// the sample alone would take more than max_bytes: it is then refused (counted in
  /// refused()) and the ring is as before - the bound holds for every input.
  std::optional<std::uint64_t> add(std::string_view text, sampling::DumpFacts facts = {});
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

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lockwatch::store
