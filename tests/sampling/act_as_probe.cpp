// SPDX-License-Identifier: Apache-2.0
// What a process that turned on attach.as target can reach, asked from inside it: run as root
// by tests/sampling/act_as_test.cpp with the pids of processes of two uids and of root, it
// starts acting as targets (irreversibly, which is why it is a process of its own) and prints
// one `name=value` line per probe for the test to check.
//   lockwatch_act_as_probe PID_UID_A PID_UID_B PID_ROOT
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>

#include "lockwatch/sampling/act_as.hpp"
#include "lockwatch/sampling/proc.hpp"

using namespace lockwatch::sampling;

namespace {

std::string open_result(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return std::strerror(errno);
  ::close(fd);
  return "ok";
}

std::string kill_result(int pid) { return ::kill(pid, 0) == 0 ? "ok" : std::strerror(errno); }

// "Uid:" and "CapEff:"-style lines of this thread's status (not the process's: ids and
// capabilities are per thread).
std::string thread_field(const std::string& field) {
  std::ifstream in("/proc/thread-self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(field + ":", 0) == 0) {
      auto value = line.substr(field.size() + 1);
      for (char& c : value)
        if (c == '\t') c = ' ';
      const auto start = value.find_first_not_of(' ');
      return start == std::string::npos ? "" : value.substr(start);
    }
  return "?";
}

void print(const std::string& name, const std::string& value) { std::cout << name << "=" << value << "\n"; }

// A thread that answers with its own Uid and CapPrm lines when asked.
class Asker {
 public:
  Asker() : thread_([this] { serve(); }) {}
  ~Asker() {
    {
      const std::lock_guard lock(mu_);
      quit_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  std::string ask() {
    std::unique_lock lock(mu_);
    ++asked_;
    cv_.notify_all();
    cv_.wait(lock, [this] { return answered_ == asked_; });
    return answer_;
  }

 private:
  void serve() {
    std::unique_lock lock(mu_);
    for (;;) {
      cv_.wait(lock, [this] { return asked_ > answered_ || quit_; });
      if (quit_) return;
      answer_ = thread_field("Uid") + " | " + thread_field("CapPrm");
      ++answered_;
      cv_.notify_all();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  int asked_ = 0, answered_ = 0;
  bool quit_ = false;
  std::string answer_;
  std::thread thread_;
};

Ids ids_of(int pid) {
  const auto s = ProcFs().status(pid);
  return s ? Ids{s->euid(), s->egid()} : Ids{};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) return std::cerr << "usage: lockwatch_act_as_probe PID_UID_A PID_UID_B PID_ROOT\n", 2;
  const int a = std::stoi(argv[1]), b = std::stoi(argv[2]), root = std::stoi(argv[3]);
  const std::string root_a = "/proc/" + std::to_string(a) + "/root", root_b = "/proc/" + std::to_string(b) + "/root";
  const std::string root_root = "/proc/" + std::to_string(root) + "/root";

  // A thread that exists before the switch, like the daemon's processing thread.
  Asker other;

  const auto error = start_acting_as_targets({65534, 65534});
  print("start", error.empty() ? "ok" : error);
  if (!error.empty()) return 1;
  print("idle_uid", thread_field("Uid"));
  print("idle_gid", thread_field("Gid"));
  print("idle_cap_eff", thread_field("CapEff"));
  print("idle_cap_prm", thread_field("CapPrm"));
  print("idle_groups", thread_field("Groups"));
  print("no_new_privs", thread_field("NoNewPrivs"));
  print("idle_root_a", open_result(root_a, O_PATH | O_DIRECTORY));
  print("idle_shadow", open_result("/etc/shadow", O_RDONLY));
  print("idle_kill_a", kill_result(a));

  {
    const ActAs as(ids_of(a));
    print("act_a", as ? "ok" : as.error());
    print("act_a_uid", thread_field("Uid"));
    print("act_a_cap_eff", thread_field("CapEff"));
    print("act_a_root_a", open_result(root_a, O_PATH | O_DIRECTORY));
    print("act_a_root_b", open_result(root_b, O_PATH | O_DIRECTORY));
    print("act_a_root_root", open_result(root_root, O_PATH | O_DIRECTORY));
    print("act_a_environ_b", open_result("/proc/" + std::to_string(b) + "/environ", O_RDONLY));
    print("act_a_shadow", open_result("/etc/shadow", O_RDONLY));
    print("act_a_kill_a", kill_result(a));
    print("act_a_kill_b", kill_result(b));
    print("act_a_kill_root", kill_result(root));
    {
      const ActAs nested(ids_of(b));
      print("act_b_inside_a", nested ? "ok" : nested.error());
    }
    // The other thread, asked while this one holds a's ids. (A thread started now would
    // inherit them: the daemon starts none while acting.)
    print("other_thread_during", other.ask());
  }
  print("after_uid", thread_field("Uid"));
  print("after_root_a", open_result(root_a, O_PATH | O_DIRECTORY));
  {
    const ActAs as(ids_of(root));
    print("act_root", as ? "ok" : as.error());
  }
  {
    const ActAs as(ids_of(b));
    print("act_b_root_b", open_result(root_b, O_PATH | O_DIRECTORY));
  }

  print("other_thread_after", other.ask());
  return 0;
}
