// SPDX-License-Identifier: Apache-2.0
// Parser throughput on real dumps. BM_Memchr_Lines counts lines over the same buffer: the
// floor any line-based reader pays, so the parser's MB/s reads as a fraction of it.
// BM_DaemonSample is the daemon's work per sample: the input as one reply, parsed whole and
// correlated with the samples before it (scripts/bench-vthreads.sh, one dump per file).
//
// Input: LOCKWATCH_BENCH_INPUT names a file, or a directory whose files (recursively, in
// name order) are concatenated in memory; unset, the real-dump corpus directory.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "lockwatch/analysis/correlator.hpp"
#include "lockwatch/parser/dump_parser.hpp"

namespace {

namespace fs = std::filesystem;
namespace parser = lockwatch::parser;

constexpr std::size_t chunk_bytes = 64 * 1024;

std::vector<fs::path> input_files(const fs::path& root) {
  if (!fs::is_directory(root)) return {root};
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(root))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string load_input() {
  const char* env = std::getenv("LOCKWATCH_BENCH_INPUT");
  const fs::path root = env != nullptr && *env != '\0' ? env : LOCKWATCH_BENCH_DEFAULT_INPUT;
  std::string data;
  for (const auto& file : input_files(root)) {
    std::ifstream in(file, std::ios::binary);
    data.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (!data.empty() && data.back() != '\n') data.push_back('\n');  // files must not merge lines
  }
  return data;
}

// Loaded once, outside any timing.
const std::string& input() {
  static const std::string data = load_input();
  return data;
}

bool check_input(benchmark::State& state) {
  if (!input().empty()) return true;
  state.SkipWithError("no input: set LOCKWATCH_BENCH_INPUT to a dump file or directory");
  return false;
}

void finish_counters(benchmark::State& state, std::uint64_t dumps) {
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(input().size()));
  const double mb = static_cast<double>(input().size()) / 1e6;
  state.counters["MB"] = mb;
  // bytes_per_second prints in binary units; this one matches the decimal MB/s of scripts.
  state.counters["MB/s"] = benchmark::Counter(mb * static_cast<double>(state.iterations()),
                                              benchmark::Counter::kIsRate);
  if (dumps > 0) state.counters["dumps"] = static_cast<double>(dumps);
}

std::uint64_t count_lines(std::string_view data) {
  std::uint64_t lines = 0;
  const char* at = data.data();
  const char* const end = at + data.size();
  while (const void* nl = std::memchr(at, '\n', static_cast<std::size_t>(end - at))) {
    ++lines;
    at = static_cast<const char*>(nl) + 1;
  }
  return lines;
}

// Feeds the input in fixed chunks, as `lockwatch analyze` reads a file, and hands every
// completed dump to `sink` right away so memory stays flat.
template <typename Sink>
std::uint64_t parse_chunked(std::string_view data, Sink&& sink) {
  parser::DumpParser dump_parser;
  std::uint64_t dumps = 0;
  auto drain = [&] {
    for (auto& dump : dump_parser.take_dumps()) {
      sink(dump);
      ++dumps;
    }
  };
  for (std::size_t at = 0; at < data.size(); at += chunk_bytes) {
    dump_parser.feed(data.substr(at, chunk_bytes));
    drain();
  }
  dump_parser.finish();
  drain();
  return dumps;
}

void BM_Memchr_Lines(benchmark::State& state) {
  if (!check_input(state)) return;
  for ([[maybe_unused]] auto _ : state) {
    auto lines = count_lines(input());
    benchmark::DoNotOptimize(lines);
  }
  finish_counters(state, 0);
}

void BM_Parse(benchmark::State& state) {
  if (!check_input(state)) return;
  std::uint64_t dumps = 0;
  for ([[maybe_unused]] auto _ : state) {
    dumps = parse_chunked(input(), [](const lockwatch::model::ThreadDump& d) {
      auto threads = d.threads.size();
      benchmark::DoNotOptimize(threads);
    });
  }
  finish_counters(state, dumps);
}

void BM_ParseAnalyze(benchmark::State& state) {
  if (!check_input(state)) return;
  std::uint64_t dumps = 0;
  for ([[maybe_unused]] auto _ : state) {
    lockwatch::analysis::Correlator correlator;
    dumps = parse_chunked(input(), [&](const lockwatch::model::ThreadDump& d) {
      correlator.add(d, static_cast<double>(correlator.size()));
    });
    auto locks = correlator.report().locks.size();
    benchmark::DoNotOptimize(locks);
  }
  finish_counters(state, dumps);
}

// What the daemon does with each sample it takes: the reply is whole in memory, parsed in one
// piece and added to the target's correlator (its ring and exporter are not counted here).
void BM_DaemonSample(benchmark::State& state) {
  if (!check_input(state)) return;
  std::uint64_t dumps = 0;
  lockwatch::analysis::Correlator correlator({.max_samples = 60});
  for ([[maybe_unused]] auto _ : state) {
    auto parsed = parser::parse_dumps(input());
    for (const auto& d : parsed) correlator.add(d, static_cast<double>(dumps++));
    auto latest = correlator.tally(correlator.size() - 1).waiters.size();
    benchmark::DoNotOptimize(latest);
  }
  finish_counters(state, state.iterations() > 0 ? dumps / static_cast<std::uint64_t>(state.iterations()) : 0);
}

// Milliseconds: one iteration over 100 MB takes seconds, over the corpus a few ms.
BENCHMARK(BM_Memchr_Lines)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Parse)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ParseAnalyze)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DaemonSample)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
