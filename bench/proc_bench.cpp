// SPDX-License-Identifier: Apache-2.0
// What the /proc reads of a sample and of a rescan cost for a process with many threads: the
// bench process itself, with --threads idle threads (default 1000, like the bench JVM).
//
//   lockwatch_proc_bench [--threads N] [benchmark flags]
//
// BM_StatOfProcess reads /proc/PID/stat, where the kernel sums the times of every thread; the
// start time of a target is read from its leader task's stat instead (ProcFs::start_time).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "lockwatch/sampling/proc.hpp"

namespace {

const int self = static_cast<int>(::getpid());

void BM_StartTime(benchmark::State& state) {
  const lockwatch::sampling::ProcFs proc;
  for (auto _ : state) benchmark::DoNotOptimize(proc.start_time(self));
}
BENCHMARK(BM_StartTime);

void BM_StatOfProcess(benchmark::State& state) {
  const std::string path = "/proc/" + std::to_string(self) + "/stat";
  for (auto _ : state) benchmark::DoNotOptimize(lockwatch::sampling::read_small_file(path));
}
BENCHMARK(BM_StatOfProcess);

void BM_Status(benchmark::State& state) {
  const lockwatch::sampling::ProcFs proc;
  for (auto _ : state) benchmark::DoNotOptimize(proc.status(self));
}
BENCHMARK(BM_Status);

// Idle threads for as long as the benchmarks run.
class Idle {
 public:
  explicit Idle(int n) {
    for (int i = 0; i < n; ++i)
      threads_.emplace_back([this] {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [this] { return done_; });
      });
  }
  ~Idle() {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace

int main(int argc, char** argv) {
  int threads = 1000;
  std::vector<char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) threads = std::atoi(argv[++i]);
    else rest.push_back(argv[i]);
  }
  int n = static_cast<int>(rest.size());
  benchmark::Initialize(&n, rest.data());
  const Idle idle(threads);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
