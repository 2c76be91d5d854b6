// SPDX-License-Identifier: Apache-2.0
// Incident capture: when a target's contention spikes, keep the evidence - the ring plus
// a burst of dumps - in a directory that `lockwatch analyze` reads, within a disk budget.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "lockwatch/service/target_state.hpp"

namespace lockwatch::service {

struct IncidentPolicy {
  bool enabled = true;
  std::filesystem::path directory = "/var/lib/lockwatch/incidents";
  std::uint32_t blocked_threshold = 20;         // 0 = off
  std::uint32_t park_threshold = 20;            // threads parked on j.u.c. locks; 0 = off
  std::uint32_t resource_threshold = 20;        // threads waiting for a resource (pool, latch, future); 0 = off
  double contended_enters_per_second = 0;       // 0 = off
  std::uint32_t burst_count = 10;
  std::chrono::milliseconds burst_interval{100};
  std::chrono::milliseconds min_interval = std::chrono::minutes(10);
  std::uint64_t max_bytes = std::uint64_t{256} << 20;
};

struct Trigger {
  std::string reason;      // "blocked_threads", "park_waiters", "resource_waiters", "contended_enters_per_second"
  double value = 0;
  double threshold = 0;
  double time = 0;         // unix seconds
};

/// The trigger the target's latest state fires, if any (rate limit aside).
std::optional<Trigger> check_trigger(const IncidentPolicy& policy, const TargetState& target, double now);

/// Writes `<directory>/<UTC time>-<label>/`: the ring's samples as dump-NNNN.txt (oldest
/// first, the burst's last; only the newest that fit 90% of the disk budget) and summary.json (the trigger, the samples,
/// the correlator's report). Then removes the oldest incidents beyond the disk budget.
/// Returns the directory, or an error text.
struct IncidentWritten {
  std::filesystem::path path;
  std::string error;
  std::uint64_t bytes = 0;
  std::vector<std::filesystem::path> removed;  // older incidents dropped for the budget
};
IncidentWritten write_incident(const IncidentPolicy& policy, const TargetState& target, const Trigger& trigger);

/// Removes the oldest incident directories below `directory` until they fit `max_bytes`
/// (never the one at `keep`).
std::vector<std::filesystem::path> enforce_budget(const std::filesystem::path& directory, std::uint64_t max_bytes,
                                                  const std::filesystem::path& keep);

}  // namespace lockwatch::service
