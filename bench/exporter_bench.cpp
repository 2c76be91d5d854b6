// SPDX-License-Identifier: Apache-2.0
// What a scrape costs the exporter (Exporter::render) with 50 targets of about 300 series
// each, alone and while another thread updates, and what one target's update costs: the
// work an update does for the scrapes to come is paid on the sampler's side.
#include <benchmark/benchmark.h>

#include <atomic>
#include <string>
#include <thread>

#include "lockwatch/exporter/exporter.hpp"

namespace {

using namespace lockwatch::exporter;

constexpr int targets = 50;
constexpr int locks = 24;  // more than top_k: every bounded family has an "other" series too

LockLabels lock(int i, const std::string& site) {
  return {i % 2 == 0 ? "monitor" : "park", "com.example.Lock" + std::to_string(i), "com.example.Service" + std::to_string(i) + "." + site};
}

// One busy target after `round` samples: totals grow with the round, gauges change.
TargetMetrics busy_target(int target, std::uint64_t round) {
  TargetMetrics m;
  m.target = "app-" + std::to_string(target);
  m.up = true;
  m.last_sample_time = 1700000000.0 + static_cast<double>(round);
  m.new_durations = {0.004, 0.03};
  m.totals.samples = {{"ok", 10 * round}, {"timeout", round / 7}, {"attach_refused", 1}};
  m.totals.samples_by_form = {{"print", 9 * round}, {"json", round}};
  for (int i = 0; i < locks; ++i) {
    const auto n = round * static_cast<std::uint64_t>(i + 1);
    m.totals.wait_observations[lock(i, "take")] = n;
    m.totals.holder_observations[lock(i, "put")] = n / 2;
    m.totals.wait_microseconds[lock(i, "take")] = n * 12'345;
    m.totals.holder_activity[{i % 2 == 0 ? "monitor" : "park", "com.example.Lock" + std::to_string(i), "running"}] = n / 3;
    m.totals.pool_cpu_microseconds["pool-" + std::to_string(i) + "-thread-N"] = n * 1'000;
  }
  m.totals.holder_resolution = {{"same_dump", 4 * round}, {"correlated", round}, {"unresolved", 2}, {"inferred", round / 2}};
  m.totals.incidents = round / 100;
  m.totals.missed_ticks = round / 50;
  m.totals.ring_evictions = round;
  LatestSample latest;
  latest.threads_by_state = {{"BLOCKED", 7}, {"RUNNABLE", 22}, {"TIMED_WAITING", 9}, {"WAITING", 31}, {"NEW", 1}};
  for (int i = 0; i < locks; ++i) {
    const auto n = static_cast<std::uint32_t>((round + static_cast<std::uint64_t>(i)) % 9 + 1);
    latest.lock_waiters[lock(i, "take")] = n;
    latest.lock_waiters_transitive[lock(i, "take")] = n + 1;
    latest.lock_hold_seconds_max[lock(i, "put")] = 0.25 * n;
  }
  for (int p = 0; p < 12; ++p)
    latest.pool_threads["pool-" + std::to_string(p) + "-thread-N"] = {{"BLOCKED", 1}, {"RUNNABLE", 3}, {"WAITING", 20}};
  latest.event_loop_blocked = {{"reactor-http-nio-N", {{"BLOCKED", 2}}}};
  m.latest = latest;
  m.perf = {81, static_cast<std::int64_t>(100 * round), static_cast<std::int64_t>(300 * round), 0.001 * static_cast<double>(round)};
  m.ring_samples = 600;
  m.ring_bytes = 4 << 20;
  return m;
}

void fill(Exporter& e, std::uint64_t round) {
  for (int t = 0; t < targets; ++t) e.update(busy_target(t, round));
}

void BM_Render(benchmark::State& state) {
  Exporter e({.version = "bench"});
  fill(e, 1);
  fill(e, 2);
  std::size_t bytes = 0;
  for (auto _ : state) {
    auto text = e.render();
    bytes = text.size();
    benchmark::DoNotOptimize(text);
  }
  state.counters["bytes"] = static_cast<double>(bytes);
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes));
}
BENCHMARK(BM_Render)->Unit(benchmark::kMicrosecond);

// One target's update among 50 (its input built outside the timing).
void BM_Update(benchmark::State& state) {
  Exporter e({.version = "bench"});
  fill(e, 1);
  std::uint64_t round = 2;
  for (auto _ : state) {
    state.PauseTiming();
    const auto m = busy_target(static_cast<int>(round % targets), round);
    state.ResumeTiming();
    e.update(m);
    ++round;
  }
}
BENCHMARK(BM_Update)->Unit(benchmark::kMicrosecond);

// An update with new hsperfdata values only (the daemon makes one on every tick, between
// dumps): the families that did not change need no new text.
void BM_UpdatePerfOnly(benchmark::State& state) {
  Exporter e({.version = "bench"});
  fill(e, 1);
  auto m = busy_target(7, 2);
  m.new_durations.clear();
  e.update(m);
  for (auto _ : state) {
    ++*m.perf.parks;
    e.update(m);
  }
}
BENCHMARK(BM_UpdatePerfOnly)->Unit(benchmark::kMicrosecond);

// Renders while another thread updates as fast as it can: how long a scrape takes when it
// can meet an update in progress.
void BM_RenderDuringUpdates(benchmark::State& state) {
  Exporter e({.version = "bench"});
  fill(e, 1);
  std::vector<TargetMetrics> inputs;
  for (int t = 0; t < targets; ++t) inputs.push_back(busy_target(t, 2));
  std::atomic<bool> stop{false};
  std::thread sampler([&] {
    for (std::size_t i = 0; !stop; ++i) e.update(inputs[i % inputs.size()]);
  });
  for (auto _ : state) benchmark::DoNotOptimize(e.render());
  stop = true;
  sampler.join();
}
BENCHMARK(BM_RenderDuringUpdates)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
