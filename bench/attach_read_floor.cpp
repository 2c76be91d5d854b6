// SPDX-License-Identifier: Apache-2.0
// attach_read_floor: the CPU a plain reader spends taking one Thread.print reply off a JVM's
// attach socket - the floor under the daemon's io thread for the same dumps.
//
//   attach_read_floor --pid PID [--dumps N] [--interval-ms M] [--buffer-kib K]
//
// Why it exists: the daemon's io thread spends more per sample than the copy out of the
// socket costs, and that difference (session set-up, hsperfdata, the event loop, handing the
// text to the processing thread) is what a change to the io side can win. This reader does
// only the copy: connect to the JVM's socket (whose listener must be running already; it
// never signals the JVM), send the request, read to EOF with blocking reads into one buffer,
// close. Its thread's CPU time (CLOCK_THREAD_CPUTIME_ID, so the process's start-up is not
// counted) is taken around each dump; it prints the median and the reply's size. Same uid as
// the JVM (or root); the path is the JVM's own /tmp through /proc/PID/root. The request is
// the daemon's own (sampling/attach_protocol): the reply is the one the io thread reads.
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "lockwatch/sampling/attach_protocol.hpp"

namespace {

double thread_cpu_ms() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

struct Options {
  int pid = 0;
  int dumps = 20;
  int interval_ms = 200;
  std::size_t buffer_bytes = 256 * 1024;
};

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    const int value = std::atoi(argv[i + 1]);
    if (value <= 0) return false;
    if (flag == "--pid") o.pid = value;
    else if (flag == "--dumps") o.dumps = value;
    else if (flag == "--interval-ms") o.interval_ms = value;
    else if (flag == "--buffer-kib") o.buffer_bytes = static_cast<std::size_t>(value) * 1024;
    else return false;
  }
  return argc % 2 == 1 && o.pid > 0;
}

// One dump: bytes read, or -1 with errno's message printed.
long read_one(const Options& o, std::vector<char>& buffer) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const auto path = "/proc/" + std::to_string(o.pid) + "/root/tmp/.java_pid" + std::to_string(o.pid);
  if (path.size() >= sizeof address.sun_path) return std::fprintf(stderr, "path too long: %s\n", path.c_str()), -1;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::perror("socket"), -1;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    std::fprintf(stderr, "connect %s: %s (is the attach listener running?)\n", path.c_str(), std::strerror(errno));
    ::close(fd);
    return -1;
  }
  const auto request = lockwatch::sampling::encode_request(lockwatch::sampling::AttachCommand::threaddump);
  long total = ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size()) ? 0 : -1;
  while (total >= 0) {
    const auto n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n < 0) total = -1;
      break;
    }
    total += n;
  }
  if (total < 0) std::perror("attach");
  ::close(fd);
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) {
    std::fprintf(stderr, "usage: attach_read_floor --pid PID [--dumps N] [--interval-ms M] [--buffer-kib K]\n");
    return 2;
  }
  std::vector<char> buffer(o.buffer_bytes);
  std::vector<double> cpu;
  long bytes = 0;
  for (int i = 0; i < o.dumps; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(o.interval_ms));  // the daemon's pause between samples
    const double before = thread_cpu_ms();
    bytes = read_one(o, buffer);
    if (bytes < 0) return 1;
    cpu.push_back(thread_cpu_ms() - before);
  }
  std::sort(cpu.begin(), cpu.end());
  std::printf("%.3f ms of CPU per dump (median of %d), %ld bytes per reply\n", cpu[cpu.size() / 2], o.dumps, bytes);
  return 0;
}
