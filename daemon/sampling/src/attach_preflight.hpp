// SPDX-License-Identifier: Apache-2.0
// The checks before touching a JVM's attach socket: who it is, where its socket is, and
// whether it may be signalled at all.
#pragma once

#include <optional>
#include <string>
#include <variant>

#include "lockwatch/sampling/dump_result.hpp"
#include "lockwatch/sampling/proc.hpp"

namespace lockwatch::sampling::detail {

struct Target {
  int pid = 0;
  int nspid = 0;             // the JVM names its files with its own namespace pid
  ProcStatus status;
  std::string socket_path;   // <proc>/<pid>/root/tmp/.java_pid<nspid>: the JVM's /tmp, not ours
};

struct Refusal {
  Outcome outcome = Outcome::attach_refused;
  std::string error;
};

/// Reads /proc for `pid`; a Refusal if the process is gone.
std::variant<Target, Refusal> find_target(const ProcFs& proc, int pid);

enum class SocketState { ready, missing };
/// The socket must be a socket owned by the JVM's effective uid before we connect to it.
std::variant<SocketState, Refusal> check_socket(const Target& target);

/// The socket file's inode: a listener that starts replaces a stale socket with a new file.
std::optional<std::uint64_t> socket_inode(const Target& target);

/// Whether the listener may be started with SIGQUIT; the Refusal says why not.
std::optional<Refusal> may_signal(const ProcFs& proc, const Target& target);

/// Creates the trigger file the JVM looks for on SIGQUIT (its cwd, else its /tmp);
/// returns its path, or nothing.
std::optional<std::string> create_trigger(const ProcFs& proc, const Target& target);

}  // namespace lockwatch::sampling::detail
