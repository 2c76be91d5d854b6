// SPDX-License-Identifier: Apache-2.0
// The one door to prometheus-cpp: snapshots of series in, exposition text out. Standard
// library only here, so nothing else in lockwatch compiles against prometheus-cpp.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "metric_catalog.hpp"
#include "target_snapshot.hpp"

namespace lockwatch::exporter {

/// One part of the exposition (a target's series, or the daemon-wide ones) as published: the
/// snapshot and its text, serialized once on the publishing side. prometheus-cpp collects the
/// snapshot (a Collectable over it) and its text serializer writes each family's sample
/// lines, so that a scrape only concatenates finished text and never formats a number.
class RenderedPart {
 public:
  /// Families whose series equal those of `previous` (the same part's last publication) keep
  /// its text: an update that changes a few families serializes only those.
  explicit RenderedPart(TargetSnapshot snapshot, const RenderedPart* previous = nullptr);

  const TargetSnapshot& snapshot() const noexcept { return snapshot_; }
  /// The sample lines of `f` in label order, without HELP and TYPE; empty when the part has
  /// no series of it.
  const std::string& lines(Family f) const { return lines_[static_cast<std::size_t>(f)]; }

 private:
  TargetSnapshot snapshot_;
  std::array<std::string, family_count> lines_;
};

/// Text exposition format 0.0.4: families by name, each one's HELP and TYPE once, then the
/// lines of every part in the order given (the exporter passes the daemon-wide part, then the
/// targets by label); a family that no part has is left out. Equal parts print equal bytes.
std::string render_exposition(const std::vector<const RenderedPart*>& parts);

}  // namespace lockwatch::exporter
