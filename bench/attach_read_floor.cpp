// SPDX-License-Identifier: Apache-2.0
// attach_read_floor: the CPU a plain reader spends taking one Thread.print reply off a JVM's
// attach socket - the floor under the daemon's io thread for the same dumps.
//
//   attach_read_floor --pid PID [--dumps N] [--interval-ms M] [--buffer-kib K] [--hand-over C]
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
//
// --hand-over C: the reads go into C buffers of --buffer-kib in turn, as the daemon's reads go
// into its lent chunks, and each buffer, once full (and the last one at the reply's end), is
// handed to a second thread that reads every cache line of it - as the processing thread's
// parser does - and gives it back. Only the reader's CPU is counted: the floor of a reader
// that parses while the reply streams on another thread, with no session, event loop or
// hsperfdata besides.
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
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
  int hand_over = 0;  // buffers handed to a reading thread in turn; 0: one buffer, kept
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
    else if (flag == "--hand-over") o.hand_over = value;
    else return false;
  }
  return argc % 2 == 1 && o.pid > 0;
}

// Where the reads go: one buffer, or (--hand-over) buffers filled in turn and handed, once
// full, to a thread that reads them through as a parser would and gives them back.
class Buffers {
 public:
  explicit Buffers(const Options& o) : handing_(o.hand_over > 0) {
    for (int i = 0; i < std::max(o.hand_over, 1); ++i) free_.push_back(&buffers_.emplace_back(o.buffer_bytes));
    if (handing_) std::thread([this] { consume(); }).detach();  // lives as long as the process
  }

  // Room to read into: the rest of the buffer being filled.
  std::pair<char*, std::size_t> space() {
    if (!filling_) filling_ = take(), used_ = 0;
    return {filling_->data() + used_, filling_->size() - used_};
  }

  // A plain reader reads each time into the whole of its one buffer, as it always did.
  void filled(std::size_t n) {
    if (!handing_) return;
    used_ += n;
    if (used_ == filling_->size()) end();
  }

  // The reply ended: a buffer partly filled is handed over too.
  void end() {
    if (!filling_) return;
    if (!handing_) return void(filling_ = nullptr);
    {
      const std::lock_guard lock(mu_);
      handed_.emplace_back(filling_, used_);
    }
    ready_.notify_one();
    filling_ = nullptr;
  }

 private:
  std::vector<char>* take() {
    if (!handing_) return free_.front();
    std::unique_lock lock(mu_);
    given_back_.wait(lock, [this] { return !free_.empty(); });
    auto* b = free_.front();
    free_.pop_front();
    return b;
  }

  void consume() {
    for (;;) {
      std::unique_lock lock(mu_);
      ready_.wait(lock, [this] { return !handed_.empty(); });
      const auto [buffer, n] = handed_.front();
      handed_.pop_front();
      lock.unlock();
      unsigned sum = 0;
      for (std::size_t i = 0; i < n; i += 64) sum += static_cast<unsigned char>((*buffer)[i]);
      seen_.fetch_add(sum, std::memory_order_relaxed);
      lock.lock();
      free_.push_back(buffer);
      lock.unlock();
      given_back_.notify_one();
    }
  }

  const bool handing_;
  std::deque<std::vector<char>> buffers_;  // a deque: pointers to them stay valid
  std::vector<char>* filling_ = nullptr;
  std::size_t used_ = 0;
  std::mutex mu_;
  std::condition_variable ready_, given_back_;
  std::deque<std::pair<std::vector<char>*, std::size_t>> handed_;
  std::deque<std::vector<char>*> free_;  // not lent, nor handed: oldest given back first
  std::atomic<unsigned> seen_{0};  // what the reading thread summed: kept, so its reads are done
};

// One dump: bytes read, or -1 with errno's message printed.
long read_one(const Options& o, Buffers& buffers) {
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
    const auto [at, room] = buffers.space();
    const auto n = ::read(fd, at, room);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n < 0) total = -1;
      break;
    }
    buffers.filled(static_cast<std::size_t>(n));
    total += n;
  }
  buffers.end();
  if (total < 0) std::perror("attach");
  ::close(fd);
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) {
    std::fprintf(stderr, "usage: attach_read_floor --pid PID [--dumps N] [--interval-ms M] [--buffer-kib K] [--hand-over C]\n");
    return 2;
  }
  Buffers buffers(o);
  std::vector<double> cpu;
  long bytes = 0;
  for (int i = 0; i < o.dumps; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(o.interval_ms));  // the daemon's pause between samples
    const double before = thread_cpu_ms();
    bytes = read_one(o, buffers);
    if (bytes < 0) return 1;
    cpu.push_back(thread_cpu_ms() - before);
  }
  std::sort(cpu.begin(), cpu.end());
  std::printf("%.3f ms of CPU per dump (median of %d), %ld bytes per reply\n", cpu[cpu.size() / 2], o.dumps, bytes);
  std::fflush(stdout);
  std::_Exit(0);  // the reading thread waits on this process's locks: no static destruction under it
}
