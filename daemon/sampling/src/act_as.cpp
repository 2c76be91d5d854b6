// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/sampling/act_as.hpp"

#include <grp.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace lockwatch::sampling {
namespace {

std::atomic<bool> acting{false};
Ids idle;

thread_local int depth = 0;  // nested ActAs scopes on this thread
thread_local Ids taken;      // the ids they hold

constexpr std::uint32_t bit(int cap) { return std::uint32_t{1} << cap; }
constexpr std::uint32_t switching = bit(CAP_SETUID) | bit(CAP_SETGID);  // both below 32: word 0

// The calling thread's capability sets, through the raw calls (pid 0: this thread only).
struct Caps {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  bool get() { return ::syscall(SYS_capget, &header, data) == 0; }
  bool set() { return ::syscall(SYS_capset, &header, data) == 0; }
};

bool set_effective(std::uint32_t word0) {
  Caps c;
  if (!c.get()) return false;
  c.data[0].effective = word0;
  c.data[1].effective = 0;
  return c.set();
}

std::string why(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

std::string ids_text(Ids ids) { return "uid " + std::to_string(ids.uid) + " gid " + std::to_string(ids.gid); }

// Every thread becomes `to` (glibc's set*id calls reach them all); this one keeps its
// capabilities through it (PR_SET_KEEPCAPS), every other thread loses all of them.
std::string become_idle_everywhere(Ids to) {
  if (::prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0) return why("prctl(PR_SET_KEEPCAPS)");
  if (::setgroups(0, nullptr) != 0) return why("setgroups");
  if (::setresgid(to.gid, to.gid, to.gid) != 0) return why("setresgid");
  if (::setresuid(to.uid, to.uid, to.uid) != 0) return why("setresuid");
  ::prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0);
  return "";
}

// This thread: CAP_SETUID and CAP_SETGID permitted, none effective, nothing else anywhere.
std::string keep_only_switching() {
  Caps c;
  if (!c.get()) return why("capget");
  c.data[0] = {0, switching, 0};
  c.data[1] = {0, 0, 0};
  if (!c.set()) return why("capset");
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  return "";
}

std::string verify_idle() {
  uid_t r = 0, e = 0, s = 0;
  gid_t rg = 0, eg = 0, sg = 0;
  if (::getresuid(&r, &e, &s) != 0 || ::getresgid(&rg, &eg, &sg) != 0) return why("getresuid");
  if (r != idle.uid || e != idle.uid || s != idle.uid || rg != idle.gid || eg != idle.gid || sg != idle.gid)
    return "the ids did not change to " + ids_text(idle);
  Caps c;
  if (!c.get() || c.data[0].effective != 0 || c.data[0].permitted != switching || c.data[1].permitted != 0)
    return "the capabilities did not shrink to CAP_SETUID and CAP_SETGID (permitted only)";
  return "";
}

// Setting the effective ids back to the thread's real ones needs no capability, and cannot
// fail but for a kernel bug; going on under a target's ids would be worse than stopping.
void give_back() {
  if (::syscall(SYS_setresuid, -1, idle.uid, -1) != 0 || ::syscall(SYS_setresgid, -1, idle.gid, -1) != 0) std::abort();
  const auto now = thread_effective_ids();
  if (now.uid != idle.uid || now.gid != idle.gid) std::abort();
}

}  // namespace

std::string start_acting_as_targets(Ids wanted) {
  if (acting) return "";
  uid_t r = 0, e = 0, s = 0;
  if (::getresuid(&r, &e, &s) != 0) return why("getresuid");
  if (r != 0 || e != 0 || s != 0)
    return "attach.as target needs lockwatch started as uid 0 with CAP_SETUID and CAP_SETGID (it then runs as "
           "attach.idle_uid/idle_gid); it runs as uid " + std::to_string(r);
  if (wanted.uid == 0 || wanted.gid == 0) return "attach.idle_uid and attach.idle_gid must not be 0";
  Caps c;
  if (!c.get()) return why("capget");
  if ((c.data[0].effective & switching) != switching)
    return "attach.as target needs CAP_SETUID and CAP_SETGID (add exactly these two; drop every other)";
  idle = wanted;
  if (auto e1 = become_idle_everywhere(wanted); !e1.empty()) return e1;
  if (auto e2 = keep_only_switching(); !e2.empty()) return e2;
  // Non-dumpable: no process of the idle uid (or of a target's) may ptrace or read this one.
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return why("prctl(PR_SET_NO_NEW_PRIVS)");
  if (auto e3 = verify_idle(); !e3.empty()) return e3;
  acting = true;
  return "";
}

bool acting_as_targets() { return acting; }

Ids idle_ids() { return idle; }

void drop_thread_capabilities() {
  Caps c;
  if (c.get()) {
    c.data[0] = {0, 0, 0};
    c.data[1] = {0, 0, 0};
    c.set();
  }
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}

Ids thread_effective_ids() {
  uid_t r = 0, e = 0, s = 0;
  gid_t rg = 0, eg = 0, sg = 0;
  ::getresuid(&r, &e, &s);
  ::getresgid(&rg, &eg, &sg);
  return {e, eg};
}

ActAs::ActAs(Ids target) {
  if (!acting) return;
  if (depth > 0) {
    if (taken.uid == target.uid && taken.gid == target.gid) ++depth, engaged_ = true;
    else error_ = "already acting as " + ids_text(taken) + ", not as " + ids_text(target);
    return;
  }
  if (target.uid == 0 || target.gid == 0) {
    error_ = "the process runs as " + ids_text(target) + ": lockwatch never takes uid 0 or gid 0 (attach.as target)";
    return;
  }
  if (!set_effective(switching)) {
    error_ = why("raising CAP_SETUID and CAP_SETGID");
    return;
  }
  // The group first: once the uid is the target's, setting the gid would need the capability
  // from a thread whose ids are no longer lockwatch's own.
  if (::syscall(SYS_setresgid, -1, target.gid, -1) != 0) {
    error_ = why("setresgid");
  } else if (::syscall(SYS_setresuid, -1, target.uid, -1) != 0) {
    error_ = why("setresuid");
    ::syscall(SYS_setresgid, -1, idle.gid, -1);
  }
  // Under the target's ids the thread holds no capability at all.
  if (!set_effective(0)) std::abort();
  if (!error_.empty()) return;
  depth = 1, taken = target, engaged_ = true;
}

ActAs::~ActAs() {
  if (!engaged_ || --depth > 0) return;
  give_back();
}

}  // namespace lockwatch::sampling
