// SPDX-License-Identifier: Apache-2.0
// The checks before and after touching a JVM's attach socket: who it is, where its socket
// is, whether it may be signalled at all, and whether the peer we reached is that JVM.
//
// Every file of the target is opened below its root without following symlinks
// (target_fs.hpp) and never blocks: the target controls these paths and may have planted
// FIFOs, symlinks or swapped sockets there.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "lockwatch/sampling/dump_record.hpp"
#include "lockwatch/sampling/proc.hpp"
#include "lockwatch/sampling/target_fs.hpp"

namespace lockwatch::sampling::detail {

// A JVM as the attach client reaches it: its pids, its status and its own /tmp.
struct AttachTarget {
  int pid = 0;
  int nspid = 0;             // the JVM names its files with its own namespace pid
  ProcStatus status;
  std::string tmp_shown;     // "<proc>/<pid>/root/tmp", for messages only
  std::shared_ptr<Fd> tmp;   // the JVM's /tmp (not ours), opened O_PATH below its root
  std::string socket_name() const { return ".java_pid" + std::to_string(nspid); }
  std::string socket_path() const { return tmp_shown + "/" + socket_name(); }
};

struct Refusal {
  Outcome outcome = Outcome::attach_refused;
  std::string error;
};

/// Opens the /tmp of `pid`, whose /proc status the caller has just read; a Refusal if the
/// process is gone, its root cannot be read, or its /tmp is not a directory below its root
/// (a planted symlink). The status is passed in rather than read again: for a JVM of a
/// thousand threads one read of /proc/PID/status costs the kernel ~0.1 ms.
std::variant<AttachTarget, Refusal> find_target(const ProcFs& proc, int pid, const ProcStatus& status);

/// The socket file, opened O_PATH: connecting through /proc/self/fd/N reaches exactly the
/// inode that was checked, whatever the target renames meanwhile.
struct SocketFile {
  std::shared_ptr<Fd> fd;
  std::uint64_t inode = 0;
  std::string connect_path() const { return "/proc/self/fd/" + std::to_string(fd->get()); }
};

enum class SocketState { missing };
/// The socket must be a socket (not a symlink) owned by the JVM's effective uid.
std::variant<SocketFile, SocketState, Refusal> check_socket(const AttachTarget& target);

/// After connecting: the listening end must be the target process itself with its uid
/// and gid (SO_PEERCRED; the pid as seen from our PID namespace). A socket of another
/// process renamed or linked into place is refused.
std::optional<Refusal> check_peer(int socket_fd, const AttachTarget& target);

/// Whether the listener may be started with SIGQUIT; the Refusal says why not.
std::optional<Refusal> may_signal(const ProcFs& proc, const AttachTarget& target);

/// The trigger file the JVM looks for on SIGQUIT, in its /tmp. `ours`: lockwatch created
/// it and removes it; a regular file left by someone else with an owner the JVM accepts is
/// used as it is and left alone.
struct Trigger {
  std::string name;
  bool ours = false;
};
/// Creates it with O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK (never opening, following
/// or waiting on anything planted under that name).
std::variant<Trigger, Refusal> create_trigger(const AttachTarget& target);
void remove_trigger(const AttachTarget& target, const Trigger& trigger);

}  // namespace lockwatch::sampling::detail
