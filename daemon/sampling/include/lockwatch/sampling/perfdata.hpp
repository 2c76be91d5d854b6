// SPDX-License-Identifier: Apache-2.0
// HotSpot's hsperfdata counters file (/tmp/hsperfdata_<user>/<pid>): find it from a
// sidecar, read it, parse it. Reading it costs the JVM nothing (no safepoint, no
// attach), so lockwatch reads it every tick.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "lockwatch/sampling/target_fs.hpp"

namespace lockwatch::sampling {

/// Every counter of one hsperfdata snapshot.
struct PerfData {
  std::map<std::string, std::int64_t, std::less<>> longs;   // 'J' scalars
  std::map<std::string, std::string, std::less<>> strings;  // 'B' vectors, up to the first NUL
  std::int64_t mod_time_stamp = 0;  // hrt ticks when the last entry was added
  bool accessible = false;          // false while the JVM is still setting the file up
  int major_version = 0;
  int minor_version = 0;
  std::int32_t num_entries = 0;     // entries the JVM had published
  // False when an entry was torn or corrupt: the maps then hold the entries before it.
  bool complete = false;

  std::optional<std::int64_t> get_long(std::string_view name) const;
  std::optional<std::string_view> get_string(std::string_view name) const;
};

/// What a parse keeps: every entry, or only those counters_of reads (every tick reads the
/// file; keeping its ~300 entries in maps to look up a dozen was most of what a tick cost).
/// Every entry is checked either way, so a corrupt one ends the walk alike.
enum class PerfDataKeep : std::uint8_t { all, counters };

/// Parses a copy of the file. nullopt (and `*error`) when the prologue is unusable;
/// a partial result (`complete == false`, `*error` set) when an entry is corrupt.
/// Never trusts an offset or a length: garbage in gives an error, not UB.
std::optional<PerfData> parse_perfdata(std::string_view bytes, std::string* error = nullptr,
                                       PerfDataKeep keep = PerfDataKeep::all);

/// The counters lockwatch uses; nullopt where the JVM does not publish one.
struct JvmCounters {
  std::optional<std::int64_t> threads_live;               // java.threads.live
  std::optional<std::int64_t> threads_daemon;             // java.threads.daemon
  std::optional<std::int64_t> contended_lock_attempts;    // sun.rt._sync_ContendedLockAttempts
  std::optional<std::int64_t> parks;                      // sun.rt._sync_Parks
  std::optional<std::int64_t> safepoints;                 // sun.rt.safepoints
  std::optional<std::int64_t> safepoint_time_ticks;       // sun.rt.safepointTime
  std::optional<std::int64_t> safepoint_sync_time_ticks;  // sun.rt.safepointSyncTime
  std::optional<std::int64_t> frequency;                  // sun.os.hrt.frequency (ticks per second)
  /// GC collections so far: sun.gc.collector.N.invocations summed over the collectors the JVM
  /// publishes (young, old, G1's concurrent cycles). A change between two samples means objects may
  /// have moved, so their printed addresses no longer match.
  std::optional<std::int64_t> gc_collections;
  std::optional<bool> attach_supported;                   // sun.rt.jvmCapabilities[0]
  std::string vm_version;  // java.property.java.vm.version, else java.vm.version; "" if neither
};
JvmCounters counters_of(const PerfData& data);

/// A target's hsperfdata file: shown as `path`, opened as `beneath_root` below the
/// target's /proc/PID/root, never by `path` (see target_fs.hpp).
struct PerfDataFile {
  std::string path;          // "/proc/42/root/tmp/hsperfdata_app/7", for people
  std::string beneath_root;  // "tmp/hsperfdata_app/7"
};

/// The JVM's file as seen from a sidecar: `<proc_root>/<pid>/root/tmp/hsperfdata_*/<nspid>`.
/// `pid` is the target in our PID namespace, `nspid` in its own (the file name). Every user
/// directory is searched, because the user name comes from the target's /etc/passwd, not
/// ours; symlinks anywhere below the root are skipped; with several matches the newest file
/// wins. `proc_root` is "/proc" in production.
std::optional<PerfDataFile> locate_perfdata(const std::string& proc_root, int pid, int nspid);
/// locate_perfdata's `path`.
std::optional<std::string> find_perfdata_file(const std::string& proc_root, int pid, int nspid);

/// Reads and parses the target's file at `beneath_root` below `<proc_root>/<pid>/root`,
/// following no symlink below the root and never blocking (a FIFO is refused): a directory
/// swapped for a symlink after discovery is refused, not followed. Errors name the path.
std::optional<PerfData> read_target_perfdata(const std::string& proc_root, int pid, const std::string& beneath_root,
                                             std::string* error = nullptr, PerfDataKeep keep = PerfDataKeep::all);

/// A target's hsperfdata file held open from one tick to the next. A JVM writes one file
/// from start to exit, so a tick reads it with a pread from the start, where opening it again
/// walked /proc/PID/root and the directories below it and switched ids (attach.as target) -
/// half of a tick's cost. Opened as read_target_perfdata opens it, and checked a regular file
/// then; a read that fails is the caller's cue to drop it and open it again, through the checks.
class TargetPerfDataFile {
 public:
  /// The file at `beneath_root` below `<proc_root>/<pid>/root`, or nothing and the reason.
  static std::optional<TargetPerfDataFile> open(const std::string& proc_root, int pid, const std::string& beneath_root,
                                                std::string* error = nullptr);
  /// What the JVM has written by now, parsed: a private copy, read from the start each time.
  std::optional<PerfData> read(std::string* error = nullptr, PerfDataKeep keep = PerfDataKeep::all) const;

 private:
  TargetPerfDataFile(std::string shown, Fd file) : shown_(std::move(shown)), file_(std::move(file)) {}
  std::string shown_;  // "/proc/42/root/tmp/hsperfdata_app/7", for errors
  Fd file_;
};

/// Reads the whole file (a private copy: the JVM keeps writing the original) and parses it.
/// Refuses symlinks and non-regular files; errors name the path and the system's reason.
/// For files named by lockwatch itself; a target's file goes through read_target_perfdata.
std::optional<PerfData> read_perfdata_file(const std::string& path, std::string* error = nullptr);

}  // namespace lockwatch::sampling
