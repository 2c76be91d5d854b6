// SPDX-License-Identifier: Apache-2.0
#include "attach_preflight.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
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
Refusal untrusted(std::string why) { return {Outcome::untrusted, std::move(why)}; }

const char* type_of(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISREG(mode)) return "a regular file";
  return "a device or other special file";
}

std::string needs_ids(const AttachTarget& t) {
  return "reading another process's /proc/PID/root needs its " + ids(t.status.euid(), t.status.egid()) +
         ", or root with CAP_SYS_PTRACE";
}

}  // namespace

std::variant<AttachTarget, Refusal> find_target(const ProcFs& proc, int pid, const ProcStatus& status) {
  AttachTarget t{pid, status.nspid > 0 ? status.nspid : pid, status, proc.path(pid, "root/tmp"), nullptr};
  OpenError why;
  Fd root = open_root(proc.path(pid, "root"), &why);
  if (!root && why.err == ENOENT) return Refusal{Outcome::target_gone, "no process with pid " + std::to_string(pid)};
  if (!root) return refuse("cannot open " + proc.path(pid, "root") + ": " + std::strerror(why.err) + " (" + needs_ids(t) + ")");
  Fd tmp = open_beneath(root.get(), "tmp", O_PATH | O_DIRECTORY, &why);
  if (!tmp && why.planted())
    return untrusted(t.tmp_shown + " is not a directory below the JVM's root (a symbolic link?): not following it");
  if (!tmp) return refuse("cannot open " + t.tmp_shown + ": " + std::strerror(why.err) + " (" + needs_ids(t) + ")");
  t.tmp = std::make_shared<Fd>(std::move(tmp));
  return t;
}

std::variant<SocketFile, SocketState, Refusal> check_socket(const AttachTarget& t) {
  OpenError why;
  Fd fd = open_beneath(t.tmp->get(), t.socket_name(), O_PATH, &why);
  if (!fd && why.err == ENOENT) return SocketState::missing;
  if (!fd) return refuse("cannot look at " + t.socket_path() + ": " + std::strerror(why.err) + " (" + needs_ids(t) + ")");
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return refuse("cannot look at " + t.socket_path() + ": " + std::strerror(errno));
  if (!S_ISSOCK(st.st_mode))
    return untrusted(t.socket_path() + " is " + type_of(st.st_mode) + ", not a socket: not connecting");
  if (st.st_uid != t.status.euid())
    return untrusted(t.socket_path() + " belongs to uid " + std::to_string(st.st_uid) + ", not to the JVM's uid " +
                     std::to_string(t.status.euid()) + ": not connecting");
  return SocketFile{std::make_shared<Fd>(std::move(fd)), static_cast<std::uint64_t>(st.st_ino)};
}

std::optional<Refusal> check_peer(int socket_fd, const AttachTarget& t) {
  ucred peer{};
  socklen_t size = sizeof peer;
  if (::getsockopt(socket_fd, SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0)
    return untrusted("cannot read the peer credentials of " + t.socket_path() + ": " + std::strerror(errno));
  // The JVM's attach listener thread called listen(): its pid is the JVM's (the thread
  // group), as seen from our PID namespace; 0 when the listener is outside it. That is the
  // no-shared-PID sidecar's very shape (docs/deployment.md): the target is lockwatch itself,
  // pid 1 of its own namespace, whose /tmp is the volume shared with the JVM's container - the
  // JVM's pid can never be seen there, and only its ids can be checked. Anywhere else a
  // listener outside our namespace is refused.
  const bool unseen_jvm = peer.pid == 0 && t.pid == static_cast<int>(::getpid());
  if ((peer.pid != t.pid && !unseen_jvm) || peer.uid != t.status.euid() || peer.gid != t.status.egid())
    return untrusted(t.socket_path() + " is served by pid " + std::to_string(peer.pid) + " " + ids(peer.uid, peer.gid) +
                     ", not by the JVM (pid " + std::to_string(t.pid) + " " + ids(t.status.euid(), t.status.egid()) +
                     "): not reading its reply");
  return std::nullopt;
}

std::optional<Refusal> may_signal(const ProcFs& proc, const AttachTarget& t) {
  const std::string who = "pid " + std::to_string(t.pid);
  auto file = locate_perfdata(proc.root(), t.pid, t.nspid);
  if (!file)
    return refuse(who + " has no attach socket and no hsperfdata file: it is not known to be a HotSpot JVM "
                        "(or runs with -XX:-UsePerfData); not signalling it");
  std::string error;
  auto perf = read_target_perfdata(proc.root(), t.pid, file->beneath_root, &error);
  auto supported = perf ? counters_of(*perf).attach_supported : std::nullopt;
  if (!supported) return refuse(who + ": cannot tell from " + file->path + " whether attach is enabled " + error);
  if (!*supported)
    return refuse(who + " has attach disabled (-XX:+DisableAttachMechanism): it cannot be dumped without "
                        "writing into its stdout, so it is not signalled");
  if (!t.status.handles(SIGQUIT))
    return refuse(who + " does not handle SIGQUIT (a -Xrs JVM?): signalling it would terminate it");
  return std::nullopt;
}

std::variant<Trigger, Refusal> create_trigger(const AttachTarget& t) {
  // HotSpot looks for .attach_pid<nspid> in its cwd, then in its /tmp, and starts the
  // listener only if the file belongs to its euid or to root. Only /tmp is used: the cwd
  // is wherever the target chose to chdir, /tmp is below its root like the socket.
  const std::string name = ".attach_pid" + std::to_string(t.nspid);
  const std::string shown = t.tmp_shown + "/" + name;
  OpenError why;
  Fd fd = open_beneath(t.tmp->get(), name, O_WRONLY | O_CREAT | O_EXCL, &why, 0660);
  if (!fd && why.err == EEXIST) {
    struct stat st {};
    if (::fstatat(t.tmp->get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
      return refuse("cannot look at " + shown + ": " + std::strerror(errno));
    if (!S_ISREG(st.st_mode))
      return untrusted(shown + " already exists as " + type_of(st.st_mode) + ": not touching it, not signalling the JVM");
    if (st.st_uid != t.status.euid() && st.st_uid != 0)
      return refuse(shown + " already exists and belongs to uid " + std::to_string(st.st_uid) +
                    ", which the JVM would ignore: not signalling it");
    return Trigger{name, false};
  }
  if (!fd)
    return refuse("cannot create the attach trigger file " + shown + ": " + std::strerror(why.err) + ": run as " +
                  ids(t.status.euid(), t.status.egid()) + " (or root)");
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || (st.st_uid != t.status.euid() && st.st_uid != 0)) {
    ::unlinkat(t.tmp->get(), name.c_str(), 0);  // a remapped owner (NFS, FUSE): the JVM would ignore it
    return refuse("the attach trigger file " + shown + " does not belong to the JVM's uid " +
                  std::to_string(t.status.euid()) + " or root once created: run as " + ids(t.status.euid(), t.status.egid()));
  }
  return Trigger{name, true};
}

void remove_trigger(const AttachTarget& t, const Trigger& trigger) {
  if (trigger.ours) ::unlinkat(t.tmp->get(), trigger.name.c_str(), 0);
}

}  // namespace lockwatch::sampling::detail
