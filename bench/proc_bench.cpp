// SPDX-License-Identifier: Apache-2.0
// What the /proc reads of a sample and of a rescan cost for a process with many threads: the
// bench process itself, with --threads idle threads (default 1000, like the bench JVM).
//
//   lockwatch_proc_bench [--threads N] [benchmark flags]
//
// BM_StatOfProcess reads /proc/PID/stat, where the kernel sums the times of every thread; the
// start time of a target is read from its leader task's stat instead (ProcFs::start_time).
//
// BM_Exists* ask whether a process still runs, as the end of every dump does: through its
// status file (ProcFs::exists) or a pidfd (ProcessWatch). The *Spaced ones wait 200 ms
// (untimed) before each call, as the daemon does between samples at 5 Hz: run them with
// --pid of a JVM being sampled (scripts/bench-daemon.sh's), and the caches are as cold as the
// daemon finds them.
//
//   lockwatch_proc_bench [--pid PID] ...   # BM_Exists* look at that process instead
//
// BM_TickPerfData* read the hsperfdata counters of --pid (a JVM: without one they are skipped)
// as a tick does: opening the file through /proc/PID/root each time (Opened), or reading the
// file the daemon keeps open (Held); the *Spaced ones 200 ms apart, as at 5 Hz.
//
// BM_SessionStatus* are what a dump's session learns of --pid (or this process) before it
// connects: a pidfd opened and /proc/PID/status read each time (Opened), or the status of the
// TargetProcess the daemon holds per target, read again only when the ids change (Held).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "lockwatch/sampling/perfdata.hpp"
#include "lockwatch/sampling/proc.hpp"

namespace {

void pause_between_samples(benchmark::State& state) {
  state.PauseTiming();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  state.ResumeTiming();
}

const int self = static_cast<int>(::getpid());
int watched = self;  // --pid

void exists_by_status(benchmark::State& state, bool spaced) {
  const lockwatch::sampling::ProcFs proc;
  for (auto _ : state) {
    if (spaced) pause_between_samples(state);
    benchmark::DoNotOptimize(proc.exists(watched));
  }
}

void exists_by_pidfd(benchmark::State& state, bool spaced) {
  const lockwatch::sampling::ProcessWatch watch(lockwatch::sampling::ProcFs{}, watched);
  if (!watch.by_pidfd()) return state.SkipWithError("no pidfd for this process");
  for (auto _ : state) {
    if (spaced) pause_between_samples(state);
    benchmark::DoNotOptimize(watch.exists());
  }
}

void BM_ExistsByStatus(benchmark::State& state) { exists_by_status(state, false); }
void BM_ExistsByPidfd(benchmark::State& state) { exists_by_pidfd(state, false); }
void BM_ExistsByStatusSpaced(benchmark::State& state) { exists_by_status(state, true); }
void BM_ExistsByPidfdSpaced(benchmark::State& state) { exists_by_pidfd(state, true); }
BENCHMARK(BM_ExistsByStatus);
BENCHMARK(BM_ExistsByPidfd);
BENCHMARK(BM_ExistsByStatusSpaced)->Iterations(40);
BENCHMARK(BM_ExistsByPidfdSpaced)->Iterations(40);

// A tick's read of the watched JVM's counters; `held` as the daemon does since it keeps the file.
void tick_perfdata(benchmark::State& state, bool held, bool spaced) {
  using namespace lockwatch::sampling;
  const auto file = locate_perfdata("/proc", watched, watched);
  if (!file) return state.SkipWithError("no hsperfdata file: run with --pid of a JVM on this host");
  const auto open = TargetPerfDataFile::open("/proc", watched, file->beneath_root);
  if (!open) return state.SkipWithError("cannot open the hsperfdata file");
  for (auto _ : state) {
    if (spaced) pause_between_samples(state);
    auto data = held ? open->read(nullptr, PerfDataKeep::counters)
                     : read_target_perfdata("/proc", watched, file->beneath_root, nullptr, PerfDataKeep::counters);
    if (!data) return state.SkipWithError("the read failed");
    benchmark::DoNotOptimize(counters_of(*data));
  }
}

void BM_TickPerfDataOpened(benchmark::State& state) { tick_perfdata(state, false, false); }
void BM_TickPerfDataHeld(benchmark::State& state) { tick_perfdata(state, true, false); }
void BM_TickPerfDataOpenedSpaced(benchmark::State& state) { tick_perfdata(state, false, true); }
void BM_TickPerfDataHeldSpaced(benchmark::State& state) { tick_perfdata(state, true, true); }
BENCHMARK(BM_TickPerfDataOpened);
BENCHMARK(BM_TickPerfDataHeld);
BENCHMARK(BM_TickPerfDataOpenedSpaced)->Iterations(40);
BENCHMARK(BM_TickPerfDataHeldSpaced)->Iterations(40);

// What a session learns of its target at its start: a pidfd opened and the status read, as
// every session did (Opened), or asked of the TargetProcess the daemon holds (Held).
void session_status(benchmark::State& state, bool held, bool spaced) {
  using namespace lockwatch::sampling;
  TargetProcess kept(ProcFs{}, watched);
  if (!kept.watch().by_pidfd()) return state.SkipWithError("no pidfd for this process");
  for (auto _ : state) {
    if (spaced) pause_between_samples(state);
    if (held) {
      benchmark::DoNotOptimize(kept.status());
    } else {
      const ProcessWatch watch(ProcFs{}, watched);
      benchmark::DoNotOptimize(ProcFs{}.status(watched));
    }
  }
  if (held) state.counters["status_reads"] = static_cast<double>(kept.status_reads());
}

void BM_SessionStatusOpened(benchmark::State& state) { session_status(state, false, false); }
void BM_SessionStatusHeld(benchmark::State& state) { session_status(state, true, false); }
void BM_SessionStatusOpenedSpaced(benchmark::State& state) { session_status(state, false, true); }
void BM_SessionStatusHeldSpaced(benchmark::State& state) { session_status(state, true, true); }
BENCHMARK(BM_SessionStatusOpened);
BENCHMARK(BM_SessionStatusHeld);
BENCHMARK(BM_SessionStatusOpenedSpaced)->Iterations(40);
BENCHMARK(BM_SessionStatusHeldSpaced)->Iterations(40);

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
    else if (std::strcmp(argv[i], "--pid") == 0 && i + 1 < argc) watched = std::atoi(argv[++i]);
    else rest.push_back(argv[i]);
  }
  int n = static_cast<int>(rest.size());
  benchmark::Initialize(&n, rest.data());
  const Idle idle(threads);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
