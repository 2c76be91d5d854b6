// SPDX-License-Identifier: Apache-2.0
// The processing thread's whole work for one sample of a target, as the daemon does it: the
// reply streamed in 64 KiB chunks into the target's parser and ring (TargetState::feed_stream),
// the record that commits it (TargetState::add_dump: correlator, stack history, lock time,
// counts) and the exporter's update of that target (Daemon::Impl::process). Only the io
// thread's side (socket reads, hsperfdata), logging and incidents are left out. Each file of
// the input is one reply; the target is kept across iterations as a running daemon keeps it.
//
// BM_ProcessSampleIdle does the same work with the daemon's pause before each sample: the
// thread sleeps 200 ms (5 Hz) untimed, so each sample starts as the daemon's does, after the
// machine ran other work, and not with everything it touches still in cache from the last.
//
// Input: LOCKWATCH_BENCH_INPUT names a directory whose files are one dump each (in name
// order), e.g. successive dumps of one JVM; unset, the real-dump corpus directory.
#include <benchmark/benchmark.h>

#include <chrono>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "lockwatch/exporter/exporter.hpp"
#include "lockwatch/service/target_state.hpp"

#include "bench_samples.hpp"

namespace {

using namespace lockwatch;

constexpr std::size_t chunk_bytes = 64 * 1024;

using lockwatch::bench::load_samples;

// The configuration's defaults (config.hpp): a ring of 600 samples in 32 MiB, the
// correlator within 32 MiB, top 20 label sets per family.
service::ProcessingSettings daemon_settings() {
  service::ProcessingSettings s;
  s.ring = {600, std::uint64_t{32} << 20};
  s.correlator.neighbour_window = 1;
  s.correlator.max_bytes = 32u << 20;
  return s;
}

exporter::ExporterOptions exporter_options() {
  exporter::ExporterOptions o;
  o.top_k = 20;
  o.version = "bench";
  return o;
}

void process_samples(benchmark::State& state, std::chrono::milliseconds idle) {
  static const auto samples = load_samples();
  if (samples.empty()) return state.SkipWithError("no input: set LOCKWATCH_BENCH_INPUT to a directory of dumps");
  service::TargetState target("bench", daemon_settings());
  exporter::Exporter exporter(exporter_options());
  const auto process = [&](std::string_view reply) {
    target.begin_stream();
    for (std::size_t at = 0; at < reply.size(); at += chunk_bytes) target.feed_stream(reply.substr(at, chunk_bytes));
    sampling::DumpRecord record;
    record.outcome = sampling::Outcome::ok;
    record.source = sampling::DumpSource::attach;
    record.started = std::chrono::system_clock::now();
    record.elapsed = std::chrono::milliseconds(20);
    benchmark::DoNotOptimize(target.add_dump(std::move(record)));
    exporter.update(target.take_metrics());
  };
  // The first pass fills the ring and the caches of parsed bodies, as a daemon's first samples do.
  if (idle.count() > 0)
    for (const auto& reply : samples) process(reply);
  std::size_t bytes = 0;
  for (auto _ : state) {
    for (const auto& reply : samples) {
      if (idle.count() > 0) {
        state.PauseTiming();
        std::this_thread::sleep_for(idle);
        state.ResumeTiming();
      }
      process(reply);
      bytes += reply.size();
    }
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
  state.counters["per_sample"] = benchmark::Counter(static_cast<double>(state.iterations()) * static_cast<double>(samples.size()),
                                                    benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_ProcessSample(benchmark::State& state) { process_samples(state, {}); }
BENCHMARK(BM_ProcessSample)->Unit(benchmark::kMillisecond);

// Three passes over 10 dumps sleep ~6 s.
void BM_ProcessSampleIdle(benchmark::State& state) { process_samples(state, std::chrono::milliseconds(200)); }
BENCHMARK(BM_ProcessSampleIdle)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
