// SPDX-License-Identifier: Apache-2.0
// Which JVMs run on this machine (or in this pod): like jps, but from a sidecar.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "lockwatch/sampling/proc.hpp"

namespace lockwatch::sampling {

/// A target is a process, not a pid: a restarted app (new pid) or a reused pid (new start
/// time) is a new target, so its series and its state never mix with the old one's.
struct TargetId {
  int pid = 0;
  std::uint64_t start_time = 0;  // clock ticks since boot, /proc/PID/stat field 22
  auto operator<=>(const TargetId&) const = default;
};

struct DiscoveredJvm {
  TargetId id;
  int nspid = 0;
  std::string perfdata_path;  // its hsperfdata file, seen through /proc/PID/root (for people)
  std::string perfdata_beneath_root;  // the same below the target's root: what is opened
  std::string cmdline;        // NULs as spaces
  std::uint32_t uid = 0;      // its effective uid and gid when found: whose ids attach.as target takes
  std::uint32_t gid = 0;
  std::vector<std::string> argv;  // the real argument vector: what the target's label is made of
};

struct DiscoveryFilter {
  std::optional<std::regex> cmdline;  // keep JVMs whose command line matches (search, not full match)
  std::vector<int> pids;              // or exactly these pids (empty: every JVM)
};

/// Every process under `proc_root` that has an hsperfdata file - a HotSpot JVM with
/// PerfData on - and passes the filter, in pid order. With attach.as target each process's
/// /tmp is looked at under its own ids (act_as.hpp); a root process is then never looked into. Processes that vanish or cannot be
/// read while scanning are skipped. Never signals or connects to anything.
std::vector<DiscoveredJvm> discover_jvms(const ProcFs& proc, const DiscoveryFilter& filter = {});

/// discover_jvms that remembers what it found: a rescan reads only /proc/PID/stat of a JVM
/// found before, to learn that it is still the same process (pid and start time), instead of
/// probing it again (its status, root, /tmp, hsperfdata file, command line: a dozen system
/// calls). A container that forks thousands of processes with hsperfdata files then costs the
/// sampling thread one small read per process per rescan. A JVM does not change its ids,
/// command line or hsperfdata file while it runs. A process that was no JVM is probed again
/// at every rescan: it may exec java under the same pid and start time.
///
/// A rescan can go in steps (begin, step until false, result), so that the thread it runs on -
/// which also serves sockets and timers - is never held for a whole /proc of a crowded node.
class Discovery {
 public:
  /// Starts a rescan of these pids, or of every process under `proc` when empty.
  void begin(const ProcFs& proc, std::vector<int> pids = {});
  /// Looks at up to `n` more processes; false once the rescan has looked at every one.
  bool step(const ProcFs& proc, std::size_t n);
  /// The JVMs of the finished rescan that pass the filter's command line, in pid order.
  std::vector<DiscoveredJvm> result(const DiscoveryFilter& filter = {}) const;
  /// All three at once.
  std::vector<DiscoveredJvm> scan(const ProcFs& proc, const DiscoveryFilter& filter = {});

  /// JVMs remembered from the last finished rescan.
  std::size_t known() const noexcept { return known_.size(); }

 private:
  std::map<int, DiscoveredJvm> known_;  // by pid: those of the last finished rescan only
  std::map<int, DiscoveredJvm> found_;  // of the rescan in progress
  std::vector<int> pending_;            // its pids still to look at, in reverse order
};

/// The one JVM with this pid, if it is one.
std::optional<DiscoveredJvm> discover_pid(const ProcFs& proc, int pid);

}  // namespace lockwatch::sampling
