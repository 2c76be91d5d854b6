// SPDX-License-Identifier: Apache-2.0
#include "attach_preflight.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "lockwatch/sampling/perfdata.hpp"

namespace lockwatch::sampling::detail {
namespace {

std::string ids(std::uint32_t uid, std::uint32_t gid) {
  return "uid " + std::to_string(uid) + " gid " + std::to_string(gid);
}

Refusal refuse(std::string why) { return {Outcome::attach_refused, std::move(why)}; }

}  // namespace

std::variant<Target, Refusal> find_target(const ProcFs& proc, int pid) {
  auto status = proc.status(pid);
  if (!status) return Refusal{Outcome::target_gone, "no process with pid " + std::to_string(pid)};
  Target t{pid, status->nspid > 0 ? status->nspid : pid, *status, {}};
  t.socket_path = proc.path(pid, "root/tmp/.java_pid" + std::to_string(t.nspid));
  return t;
}

std::variant<SocketState, Refusal> check_socket(const Target& t) {
  struct stat st {};
  if (::lstat(t.socket_path.c_str(), &st) != 0) {
    if (errno == ENOENT) return SocketState::missing;
    return refuse("cannot look at " + t.socket_path + ": " + std::strerror(errno) +
                  " (reading another process's /proc/PID/root needs its " + ids(t.status.euid(), t.status.egid()) +
                  ", or root with CAP_SYS_PTRACE)");
  }
  if (!S_ISSOCK(st.st_mode)) return refuse(t.socket_path + " is not a socket: not connecting");
  if (st.st_uid != t.status.euid())
    return refuse(t.socket_path + " belongs to uid " + std::to_string(st.st_uid) + ", not to the JVM's uid " +
                  std::to_string(t.status.euid()) + ": not connecting");
  return SocketState::ready;
}

std::optional<std::uint64_t> socket_inode(const Target& t) {
  struct stat st {};
  if (::lstat(t.socket_path.c_str(), &st) != 0) return std::nullopt;
  return static_cast<std::uint64_t>(st.st_ino);
}

std::optional<Refusal> may_signal(const ProcFs& proc, const Target& t) {
  const std::string who = "pid " + std::to_string(t.pid);
  auto file = find_perfdata_file(proc.root(), t.pid, t.nspid);
  if (!file)
    return refuse(who + " has no attach socket and no hsperfdata file: it is not known to be a HotSpot JVM "
                        "(or runs with -XX:-UsePerfData); not signalling it");
  std::string error;
  auto perf = read_perfdata_file(*file, &error);
  auto supported = perf ? counters_of(*perf).attach_supported : std::nullopt;
  if (!supported) return refuse(who + ": cannot tell from " + *file + " whether attach is enabled " + error);
  if (!*supported)
    return refuse(who + " has attach disabled (-XX:+DisableAttachMechanism): it cannot be dumped without "
                        "writing into its stdout, so it is not signalled");
  if (!t.status.handles(SIGQUIT))
    return refuse(who + " does not handle SIGQUIT (a -Xrs JVM?): signalling it would terminate it");
  return std::nullopt;
}

std::optional<std::string> create_trigger(const ProcFs& proc, const Target& t) {
  // The JVM looks for .attach_pid<nspid> in its cwd, then in its /tmp, and starts the
  // listener only if the file belongs to its euid or to root.
  for (const char* dir : {"cwd", "root/tmp"}) {
    const std::string path = proc.path(t.pid, std::string(dir) + "/.attach_pid" + std::to_string(t.nspid));
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0660);
    if (fd < 0) continue;
    struct stat st {};
    const bool accepted = ::fstat(fd, &st) == 0 && (st.st_uid == t.status.euid() || st.st_uid == 0);
    ::close(fd);
    if (accepted) return path;
    ::unlink(path.c_str());  // a remapped owner (NFS, FUSE): the JVM would ignore it
  }
  return std::nullopt;
}

}  // namespace lockwatch::sampling::detail
