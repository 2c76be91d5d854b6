// SPDX-License-Identifier: Apache-2.0
// What lockwatch reads of a process in /proc: identity, namespace pid, credentials, signals.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lockwatch::sampling {

struct ProcStatus {
  std::string name;                        // "java" (comm, at most 15 bytes)
  char state = '?';                        // R, S, D, T (stopped), Z, ...
  int nspid = 0;                           // pid inside the process's own PID namespace (last NSpid field)
  std::array<std::uint32_t, 4> uid{};      // real, effective, saved, filesystem
  std::array<std::uint32_t, 4> gid{};
  std::uint64_t signals_caught = 0;        // SigCgt
  std::uint64_t signals_ignored = 0;       // SigIgn

  std::uint32_t euid() const noexcept { return uid[1]; }
  std::uint32_t egid() const noexcept { return gid[1]; }
  /// True if a handler is installed for `signo` and it is not ignored.
  bool handles(int signo) const noexcept;
};

/// Parses /proc/<pid>/status. Nothing if a required field (Name, Uid, Gid) is missing.
std::optional<ProcStatus> parse_proc_status(std::string_view text);

/// Field 22 of /proc/<pid>/stat: start time in clock ticks since boot. With the pid it
/// identifies a process: a reused pid has another start time. The command name (field 2)
/// may hold spaces and ')' - fields are counted after the last ')'.
std::optional<std::uint64_t> parse_start_time(std::string_view stat_text);

/// Reads /proc through a root path, so tests can use fixture trees.
class ProcFs {
 public:
  explicit ProcFs(std::string root = "/proc") : root_(std::move(root)) {}

  std::string path(int pid, std::string_view relative) const;
  const std::string& root() const noexcept { return root_; }
  std::optional<ProcStatus> status(int pid) const;
  std::optional<std::uint64_t> start_time(int pid) const;
  /// The process's command line with NULs turned into spaces; nothing if unreadable.
  std::optional<std::string> cmdline(int pid) const;
  /// Its argument vector: /proc/PID/cmdline split at the NULs that end each argument (an
  /// argument may hold spaces: `java "-Dx=a b.c" Main`); nothing if unreadable.
  std::optional<std::vector<std::string>> argv(int pid) const;
  /// The process runs (or is stopped); false when it is gone or a zombie.
  bool exists(int pid) const;

 private:
  std::string root_;
};

/// The whole file, or nothing (small files only: /proc entries, hsperfdata).
std::optional<std::string> read_small_file(const std::string& path, std::size_t max_bytes = 1 << 20);

}  // namespace lockwatch::sampling
