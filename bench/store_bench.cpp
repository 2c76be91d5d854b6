// SPDX-License-Identifier: Apache-2.0
// What storing one sample in the ring costs (Ring::add: lines interned, the header's
// cpu=/elapsed= numbers cut out), per sample and per byte, next to a memchr line scan of the
// same bytes: the floor any line-based store pays; and the same through Ring::Writer in the
// chunks the daemon streams.
//
// Input: LOCKWATCH_BENCH_INPUT names a directory whose files are one dump each (in name
// order), e.g. successive jstack dumps of one JVM; unset, the real-dump corpus directory.
#include <benchmark/benchmark.h>

#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "lockwatch/store/ring.hpp"

#include "bench_samples.hpp"

namespace {

using lockwatch::bench::load_samples;

const std::vector<std::string>& samples() {
  static const std::vector<std::string> loaded = load_samples();
  return loaded;
}

std::size_t total_bytes() {
  std::size_t n = 0;
  for (const auto& s : samples()) n += s.size();
  return n;
}

void BM_Memchr_Lines(benchmark::State& state) {
  std::size_t lines = 0;
  for (auto _ : state) {
    for (const auto& s : samples())
      for (const char* p = s.data(); (p = static_cast<const char*>(std::memchr(p, '\n', s.size() - static_cast<std::size_t>(p - s.data())))) != nullptr;)
        ++p, ++lines;
    benchmark::DoNotOptimize(lines);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(total_bytes()));
  state.counters["samples"] = static_cast<double>(samples().size());
}

// A ring that keeps every sample of the input: each iteration stores the whole sequence.
void BM_RingAdd(benchmark::State& state) {
  for (auto _ : state) {
    lockwatch::store::Ring ring({samples().size() + 1, std::uint64_t{1} << 34});
    for (const auto& s : samples()) benchmark::DoNotOptimize(ring.add(s, {}));
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(total_bytes()));
  state.counters["per_sample"] = benchmark::Counter(static_cast<double>(state.iterations()) * static_cast<double>(samples().size()),
                                                    benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// The same samples written as the daemon streams them: 64 KiB chunks (the attach client's
// read size) through Ring::Writer, lines split at every chunk boundary.
void BM_RingWriter64K(benchmark::State& state) {
  constexpr std::size_t chunk = 64 * 1024;
  for (auto _ : state) {
    lockwatch::store::Ring ring({samples().size() + 1, std::uint64_t{1} << 34});
    for (const auto& s : samples()) {
      auto writer = ring.begin();
      for (std::size_t at = 0; at < s.size(); at += chunk) writer.append(std::string_view(s).substr(at, chunk));
      benchmark::DoNotOptimize(ring.commit(std::move(writer), {}));
    }
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(total_bytes()));
  state.counters["per_sample"] = benchmark::Counter(static_cast<double>(state.iterations()) * static_cast<double>(samples().size()),
                                                    benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

}  // namespace

BENCHMARK(BM_Memchr_Lines)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RingAdd)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RingWriter64K)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
