// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/sampling/proc.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <utility>

namespace lockwatch::sampling {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

template <class T>
std::optional<T> number(std::string_view s, int base = 10) {
  T value{};
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value, base);
  if (ec != std::errc{} || ptr != s.data() + s.size()) return std::nullopt;
  return value;
}

// "Uid:\t0\t0\t0\t0" -> the four ids.
std::optional<std::array<std::uint32_t, 4>> four_ids(std::string_view value) {
  std::array<std::uint32_t, 4> ids{};
  for (auto& id : ids) {
    value = trim(value);
    const auto end = value.find_first_of(" \t");
    auto n = number<std::uint32_t>(value.substr(0, end));
    if (!n) return std::nullopt;
    id = *n;
    value = end == std::string_view::npos ? std::string_view{} : value.substr(end);
  }
  return ids;
}

// "NSpid:\t31591\t7": the last field is the pid in the innermost namespace.
std::optional<int> last_pid(std::string_view value) {
  value = trim(value);
  const auto sep = value.find_last_of(" \t");
  return number<int>(sep == std::string_view::npos ? value : value.substr(sep + 1));
}

struct Seen {
  bool name = false, uid = false, gid = false;
};

bool take_ids(std::string_view value, std::array<std::uint32_t, 4>& out) {
  auto ids = four_ids(value);
  if (ids) out = *ids;
  return ids.has_value();
}

void apply_field(std::string_view key, std::string_view value, ProcStatus& s, Seen& seen) {
  if (key == "Name") s.name = value, seen.name = true;
  else if (key == "State") s.state = value.empty() ? '?' : value.front();
  else if (key == "Uid") seen.uid = take_ids(value, s.uid);
  else if (key == "Gid") seen.gid = take_ids(value, s.gid);
  else if (key == "NSpid") s.nspid = last_pid(value).value_or(s.nspid);
  else if (key == "SigCgt") s.signals_caught = number<std::uint64_t>(value, 16).value_or(0);
  else if (key == "SigIgn") s.signals_ignored = number<std::uint64_t>(value, 16).value_or(0);
}

// An open file to its end (up to about max_bytes).
std::string read_all(int fd, std::size_t max_bytes) {
  std::string out;
  char buf[8192];
  for (;;) {
    const auto n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || out.size() >= max_bytes) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

}  // namespace

bool ProcStatus::handles(int signo) const noexcept {
  if (signo < 1 || signo > 64) return false;
  const std::uint64_t bit = std::uint64_t{1} << (signo - 1);
  return (signals_caught & bit) != 0 && (signals_ignored & bit) == 0;
}

std::optional<ProcStatus> parse_proc_status(std::string_view text) {
  ProcStatus s;
  Seen seen;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const auto line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    const auto colon = line.find(':');
    if (colon != std::string_view::npos) apply_field(line.substr(0, colon), trim(line.substr(colon + 1)), s, seen);
  }
  if (!seen.name || !seen.uid || !seen.gid) return std::nullopt;
  return s;
}

std::optional<std::uint64_t> parse_start_time(std::string_view stat_text) {
  const auto paren = stat_text.rfind(')');
  if (paren == std::string_view::npos) return std::nullopt;
  std::string_view rest = stat_text.substr(paren + 1);
  // After "(comm)" come fields 3.. : state is field 3, starttime field 22 -> the 20th token.
  for (int field = 3; field < 22; ++field) {
    rest = trim(rest);
    const auto space = rest.find(' ');
    if (space == std::string_view::npos) return std::nullopt;
    rest = rest.substr(space);
  }
  rest = trim(rest);
  return number<std::uint64_t>(rest.substr(0, rest.find(' ')));
}

std::optional<std::string> read_small_file(const std::string& path, std::size_t max_bytes) {
  const Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return std::nullopt;
  return read_all(fd.get(), max_bytes);
}

std::string ProcFs::path(int pid, std::string_view relative) const {
  return root_ + "/" + std::to_string(pid) + "/" + std::string(relative);
}

std::optional<ProcStatus> ProcFs::status(int pid) const {
  auto text = read_small_file(path(pid, "status"));
  return text ? parse_proc_status(*text) : std::nullopt;
}

// The start time is the thread group leader's, so its own task's stat says it as well as the
// process's. Why not /proc/PID/stat: for the process the kernel sums the times of every thread,
// ~450 us cold for a 1000-thread JVM against ~70 us for one task - and a rescan reads it for
// every JVM it knows, each time. A tree without task directories (a copy of /proc) has the
// process's file only.
std::optional<std::uint64_t> ProcFs::start_time(int pid) const {
  auto text = read_small_file(path(pid, "task/" + std::to_string(pid) + "/stat"));
  if (!text) text = read_small_file(path(pid, "stat"));
  return text ? parse_start_time(*text) : std::nullopt;
}

std::optional<std::string> ProcFs::cmdline(int pid) const {
  auto text = read_small_file(path(pid, "cmdline"));
  if (!text) return std::nullopt;
  while (!text->empty() && text->back() == '\0') text->pop_back();
  for (char& c : *text)
    if (c == '\0') c = ' ';
  return text;
}

std::optional<std::vector<std::string>> ProcFs::argv(int pid) const {
  auto text = read_small_file(path(pid, "cmdline"));
  if (!text) return std::nullopt;
  std::vector<std::string> args;
  for (std::size_t at = 0; at < text->size();) {
    const auto end = std::min(text->find('\0', at), text->size());
    args.emplace_back(*text, at, end - at);
    at = end + 1;
  }
  return args;
}

bool ProcFs::exists(int pid) const {
  // An exited process its parent has not reaped yet (a zombie) still has a /proc entry,
  // but there is nothing left to dump.
  const auto s = status(pid);
  return s && s->state != 'Z' && s->state != 'X';
}

ProcessWatch::ProcessWatch(ProcFs proc, int pid) : proc_(std::move(proc)), pid_(pid) {
  if (pid > 0 && proc_.root() == "/proc") pidfd_ = Fd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
}

// A pidfd turns readable once the whole thread group has exited; a zombie's included.
bool ProcessWatch::exists() const {
  if (!pidfd_) return pid_ > 0 && proc_.exists(pid_);
  pollfd p{pidfd_.get(), POLLIN, 0};
  int n = 0;
  do n = ::poll(&p, 1, 0);
  while (n < 0 && errno == EINTR);
  return n == 0;
}

int ProcessWatch::signal(int signo) const {
  const long r = pidfd_ ? ::syscall(SYS_pidfd_send_signal, pidfd_.get(), signo, nullptr, 0) : ::kill(pid_, signo);
  return r == 0 ? 0 : errno;
}

TargetProcess::TargetProcess(ProcFs proc, int pid) : proc_(std::move(proc)), pid_(pid), watch_(proc_, pid) {
  if (watch_.by_pidfd()) dir_ = Fd(::open(proc_.path(pid, "").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
}

const ProcStatus* TargetProcess::status(bool fresh) {
  if (status_ && dir_ && !fresh) {
    struct stat st {};
    const bool same_ids = ::fstat(dir_.get(), &st) == 0 && st.st_uid == status_->euid() && st.st_gid == status_->egid();
    if (!watch_.exists()) return status_.reset(), nullptr;
    if (same_ids) return &*status_;
  }
  ++reads_;
  std::optional<std::string> text;
  if (dir_) {
    // Through the held directory: a pid reused since names another directory, and this
    // one's files then fail to open.
    if (Fd fd(::openat(dir_.get(), "status", O_RDONLY | O_CLOEXEC)); fd) text = read_all(fd.get(), 1 << 20);
  } else {
    text = read_small_file(proc_.path(pid_, "status"));
  }
  status_ = text ? parse_proc_status(*text) : std::nullopt;
  return status_ ? &*status_ : nullptr;
}

}  // namespace lockwatch::sampling
