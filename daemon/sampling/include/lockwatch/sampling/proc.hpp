// SPDX-License-Identifier: Apache-2.0
// What lockwatch reads of a process in /proc: identity, namespace pid, credentials, signals.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockwatch/sampling/target_fs.hpp"

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

/// One process, asked again and again during a dump whether it still runs, and signalled.
///
/// Why it exists: every reply's end asks whether the JVM died mid-dump, and a cold read of a
/// 1000-thread JVM's /proc/PID/status costs ~0.1 ms (once every 200 ms, the caches are cold);
/// a pidfd asked with poll(2) costs a few microseconds. A pidfd also names the process, not its
/// number: a pid reused after the JVM exited reads as gone, and is never signalled. Opened only
/// for the /proc of lockwatch's own PID namespace (a pidfd takes a pid of that namespace); a
/// fixture tree, a kernel before 5.3 or a seccomp filter without pidfd_open fall back to the
/// status file and kill(2).
class ProcessWatch {
 public:
  ProcessWatch() = default;
  ProcessWatch(ProcFs proc, int pid);

  /// The process runs (or is stopped); false once it has exited (a zombie counts as exited).
  bool exists() const;
  /// 0, or errno's value (ESRCH once it has exited).
  int signal(int signo) const;
  /// True when asked through a pidfd (for tests).
  bool by_pidfd() const noexcept { return static_cast<bool>(pidfd_); }

 private:
  ProcFs proc_;
  int pid_ = 0;
  Fd pidfd_;
};

/// A target process held from one dump to the next: its pidfd (ProcessWatch), its /proc/PID
/// directory and the status read through it, read again only when the process's ids change.
///
/// Why it exists: a session needs the JVM's status (its ids to act as and to check the
/// socket's owner with, its namespace pid to name the socket), and a cold read of a
/// 1000-thread JVM's /proc/PID/status cost ~105 us of the ~1.2 ms the io thread spends on a
/// sample at 5 Hz, against ~16 us for an fstat of the held directory, whose owner the kernel
/// fills from the process's effective ids at each call. The fstat comes first and the pidfd is
/// asked after it: a process alive after the fstat was alive during it, so the ids it gave
/// were the live process's and not those a directory of an exited one keeps. Only through a
/// pidfd is a status kept (a reused pid could otherwise pass for the process); without one
/// (a fixture tree, an old kernel) every call reads the status, as a session always did.
class TargetProcess {
 public:
  TargetProcess(ProcFs proc, int pid);

  /// The process's status now; nothing once it has exited or the status cannot be read.
  /// `fresh` reads it whatever the ids say (the signal dispositions a SIGQUIT depends on
  /// change without them).
  const ProcStatus* status(bool fresh = false);
  const ProcessWatch& watch() const noexcept { return watch_; }
  int pid() const noexcept { return pid_; }
  /// How many times status() read the file (for tests and benchmarks).
  std::uint64_t status_reads() const noexcept { return reads_; }

 private:
  ProcFs proc_;
  int pid_ = 0;
  ProcessWatch watch_;  // first: a pid reused after this reads as gone
  Fd dir_;              // /proc/PID, O_PATH; only with a pidfd
  std::optional<ProcStatus> status_;
  std::uint64_t reads_ = 0;
};

/// The whole file, or nothing (small files only: /proc entries, hsperfdata).
std::optional<std::string> read_small_file(const std::string& path, std::size_t max_bytes = 1 << 20);

}  // namespace lockwatch::sampling
