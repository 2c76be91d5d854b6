// SPDX-License-Identifier: Apache-2.0
// Attaching to JVMs of many users without being root: `attach.as: target`.
//
// A HotSpot JVM accepts an attach peer only with its own effective uid and gid (or root), and
// the kernel shows another user's /proc/PID/root only to a caller whose filesystem uid and gid
// are the target's real, effective and saved ids (or who has CAP_SYS_PTRACE). So instead of
// running as root with CAP_SYS_PTRACE, CAP_DAC_OVERRIDE and CAP_KILL, the sampling thread takes
// the target's effective uid and gid for the few system calls that touch the target (opening
// below its root, the connect, the trigger file, SIGQUIT) and gives them back at once:
//
//   at start (start_acting_as_targets): every thread becomes the idle ids (65534:65534 by
//   default, or the non-root ids lockwatch was started with), supplementary groups are dropped,
//   no_new_privs is set; the calling thread keeps CAP_SETUID and CAP_SETGID in its permitted
//   set only, every other capability and every other thread's are gone;
//   around a target (ActAs): raise the two into the effective set, setresgid/setresuid the
//   effective ids only (real and saved stay idle), lower them again. The thread then holds the
//   JVM's ids and no capability at all - exactly what a sidecar running as that user has. Giving
//   the ids back needs no capability (they are the thread's real ids).
//
// The switches are raw per-thread system calls: glibc's setresuid() changes every thread of the
// process, which would hand the JVM's ids to the HTTP and processing threads too. uid 0 and gid
// 0 are never taken.
#pragma once

#include <cstdint>
#include <string>

namespace lockwatch::sampling {

struct Ids {
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
};

/// Turns acting-as-targets on for the process, from the calling thread (the one that will
/// sample). Returns "" or why it could not (no CAP_SETUID/CAP_SETGID, a failed call): the caller
/// must then not start. `idle` is used when lockwatch runs as root; a non-root start keeps its
/// own real ids.
std::string start_acting_as_targets(Ids idle);

/// Whether start_acting_as_targets succeeded: ActAs switches only then.
bool acting_as_targets();

/// The idle ids (valid once acting).
Ids idle_ids();

/// Clears every capability of the calling thread (permitted, effective, inheritable): for the
/// threads that never sample.
void drop_thread_capabilities();

/// The calling thread's effective ids: what a connect() presents as SO_PEERCRED.
Ids thread_effective_ids();

/// RAII: the calling thread holds `target`'s ids until the scope ends; a no-op when not acting.
/// Nested scopes with the same ids are fine; another's inside, uid 0 or gid 0 is refused.
class ActAs {
 public:
  explicit ActAs(Ids target);
  ~ActAs();
  ActAs(const ActAs&) = delete;
  ActAs& operator=(const ActAs&) = delete;

  /// False when the switch was refused or failed; error() says why.
  explicit operator bool() const noexcept { return error_.empty(); }
  const std::string& error() const noexcept { return error_; }

 private:
  bool engaged_ = false;
  std::string error_;
};

}  // namespace lockwatch::sampling
