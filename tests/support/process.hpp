// SPDX-License-Identifier: Apache-2.0
// Child processes for tests that need a real JVM: spawn without a shell, read with
// deadlines, and never leave a child behind.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace lockwatch::test {

struct CommandResult {
  int exit_code = -1;       // -1 when killed at the deadline
  std::string out;
  std::string err;
};

/// Runs argv[0] (searched in PATH) with no shell; kills it at the deadline. Its standard
/// input is the file `stdin_path` when one is given, else ours.
CommandResult run_command(const std::vector<std::string>& argv, std::chrono::seconds timeout,
                          const std::string& stdin_path = {});

/// Sends SIGSTOP and waits until /proc shows the process stopped ('T'): kill() returns
/// before every thread has stopped, and a loaded machine makes that gap visible.
bool stop_process(pid_t pid, std::chrono::seconds timeout = std::chrono::seconds(5));

/// A long-running child (a scenario JVM). Killed (SIGKILL) and reaped on destruction.
class Child {
 public:
  /// `merge_stderr`: the child's stderr goes into the same pipe as its stdout (a daemon's log,
  /// for a test that checks it); otherwise it goes to the test's own stderr.
  explicit Child(const std::vector<std::string>& argv, bool merge_stderr = false);
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const noexcept { return pid_; }
  /// Reads stdout until a line equal to `line` arrives; false at EOF or the deadline.
  bool wait_for_line(const std::string& line, std::chrono::seconds timeout);
  /// Reads stdout until `text` appears anywhere in it; false at EOF or the deadline.
  bool wait_for_text(const std::string& text, std::chrono::seconds timeout);
  /// Waits for the child to exit and reaps it: its exit code (128 + the signal that killed it),
  /// or nothing when it still runs at the deadline.
  std::optional<int> wait_exit(std::chrono::milliseconds timeout);
  /// Everything read from stdout so far.
  const std::string& output() const noexcept { return out_; }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int stdout_fd_ = -1;
  std::string out_;
};

}  // namespace lockwatch::test
