// SPDX-License-Identifier: Apache-2.0
#include "process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>

extern char** environ;

namespace lockwatch::test {
namespace {

using Clock = std::chrono::steady_clock;

// A JVM killed with SIGKILL cannot remove its attach socket (/tmp/.java_pidPID) or its
// hsperfdata file, and a later JVM of another user may get the same pid: lockwatch then
// rightly refuses that socket ("belongs to uid 0, not to the JVM's uid 65534": untrusted),
// and a test that starts a JVM as another user fails at random. What the dead child left
// under its own pid in our /tmp goes with it.
void remove_jvm_leftovers(pid_t pid) {
  namespace fs = std::filesystem;
  const auto p = std::to_string(pid);
  std::error_code ec;
  fs::remove("/tmp/.java_pid" + p, ec);
  for (const auto& dir : fs::directory_iterator("/tmp", ec))
    if (dir.path().filename().string().starts_with("hsperfdata_")) fs::remove(dir.path() / p, ec);
}

struct Pipe {
  int read = -1, write = -1;
  Pipe() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
    read = fds[0], write = fds[1];
  }
};

pid_t spawn(const std::vector<std::string>& argv, int out_fd, int err_fd, const std::string& stdin_path = {}) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!stdin_path.empty()) posix_spawn_file_actions_addopen(&actions, 0, stdin_path.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0]);
  return pid;
}

int remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left < 0 ? 0 : static_cast<int>(left);
}

// Reads both pipes until both close or the deadline passes; false at the deadline.
bool drain(std::array<pollfd, 2> fds, std::string& out, std::string& err, Clock::time_point deadline) {
  std::array<char, 65536> buf{};
  int open = 2;
  while (open > 0) {
    if (poll(fds.data(), fds.size(), remaining_ms(deadline)) <= 0) return false;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const auto n = ::read(fds[i].fd, buf.data(), buf.size());
      if (n > 0) {
        (i == 0 ? out : err).append(buf.data(), static_cast<std::size_t>(n));
      } else {
        ::close(fds[i].fd), fds[i].fd = -1, --open;
      }
    }
  }
  return true;
}

}  // namespace

CommandResult run_command(const std::vector<std::string>& argv, std::chrono::seconds timeout,
                          const std::string& stdin_path) {
  Pipe out, err;
  const pid_t pid = spawn(argv, out.write, err.write, stdin_path);
  ::close(out.write), ::close(err.write);
  CommandResult r;
  const bool finished = drain({pollfd{out.read, POLLIN, 0}, pollfd{err.read, POLLIN, 0}}, r.out, r.err,
                              Clock::now() + timeout);
  if (!finished) ::kill(pid, SIGKILL), ::close(out.read), ::close(err.read);
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.exit_code = finished && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

bool stop_process(pid_t pid, std::chrono::seconds timeout) {
  if (::kill(pid, SIGSTOP) != 0) return false;
  const auto deadline = Clock::now() + timeout;
  const std::string stat = "/proc/" + std::to_string(pid) + "/stat";
  while (Clock::now() < deadline) {
    std::ifstream in(stat);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto paren = text.rfind(')');
    if (paren != std::string::npos && text.size() > paren + 2 && text[paren + 2] == 'T') return true;
    ::usleep(5000);
  }
  return false;
}

Child::Child(const std::vector<std::string>& argv, bool merge_stderr) {
  Pipe out;
  pid_ = spawn(argv, out.write, merge_stderr ? out.write : 2);
  ::close(out.write);
  stdout_fd_ = out.read;
}

Child::~Child() {
  if (pid_ > 0) {
    if (!reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    remove_jvm_leftovers(pid_);
  }
  if (stdout_fd_ >= 0) ::close(stdout_fd_);
}

std::optional<int> Child::wait_exit(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    if (r < 0 || std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

bool Child::wait_for_line(const std::string& line, std::chrono::seconds timeout) {
  return wait_for_text(line + "\n", timeout);
}

bool Child::wait_for_text(const std::string& text, std::chrono::seconds timeout) {
  const auto deadline = Clock::now() + timeout;
  std::array<char, 4096> buf{};
  while (out_.find(text) == std::string::npos) {
    pollfd p{stdout_fd_, POLLIN, 0};
    if (poll(&p, 1, remaining_ms(deadline)) <= 0) return false;
    const auto n = ::read(stdout_fd_, buf.data(), buf.size());
    if (n <= 0) return false;
    out_.append(buf.data(), static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace lockwatch::test
