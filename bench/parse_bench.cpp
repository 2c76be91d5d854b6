// SPDX-License-Identifier: Apache-2.0
// Parser throughput on real dumps. BM_Memchr_Lines counts lines over the same buffer: the
// floor any line-based reader pays, so the parser's MB/s reads as a fraction of it.
// BM_ParseAnalyze is `lockwatch analyze`'s work: the input fed in 64 KiB chunks, every dump
// added to a correlator and to the lock-time figures, the report made at the end.
// BM_DaemonSample is the daemon's work per sample (TargetState::add_dump): each input file
// is one reply, parsed whole with the bodies of the reply before (parser::BodyCache), added
// to the correlator (its newest and its settling dump tallied), to the stack history and to
// the lock-time figures. Only the ring (see store_bench.cpp) and the exporter's label maps
// are left out. BM_ParseSamples is its parse alone, BM_DaemonAnalysis the rest.
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
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockwatch/analysis/correlator.hpp"
#include "lockwatch/analysis/lock_graph.hpp"
#include "lockwatch/analysis/lock_time.hpp"
#include "lockwatch/analysis/stacks.hpp"
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

// The input's bytes, and where each of its files ends (one reply each for the daemon's figure).
struct Input {
  std::string data;
  std::vector<std::size_t> file_ends;
};

Input load_input() {
  const char* env = std::getenv("LOCKWATCH_BENCH_INPUT");
  const fs::path root = env != nullptr && *env != '\0' ? env : LOCKWATCH_BENCH_DEFAULT_INPUT;
  Input in;
  for (const auto& file : input_files(root)) {
    std::ifstream f(file, std::ios::binary);
    in.data.append(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    if (!in.data.empty() && in.data.back() != '\n') in.data.push_back('\n');  // files must not merge lines
    if (in.file_ends.empty() || in.file_ends.back() != in.data.size()) in.file_ends.push_back(in.data.size());
  }
  return in;
}

// Loaded once, outside any timing.
const Input& loaded() {
  static const Input in = load_input();
  return in;
}
const std::string& input() { return loaded().data; }

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

// As `lockwatch analyze` does (daemon/app/analyze_command.cpp): files carry no GC counters
// and these dumps one second apart.
void BM_ParseAnalyze(benchmark::State& state) {
  if (!check_input(state)) return;
  std::uint64_t dumps = 0;
  for ([[maybe_unused]] auto _ : state) {
    lockwatch::analysis::Correlator correlator;
    lockwatch::analysis::LockTime lock_time;
    dumps = parse_chunked(input(), [&](const lockwatch::model::ThreadDump& d) {
      const auto t = static_cast<double>(correlator.size());
      const auto graph = lockwatch::analysis::build_lock_graph(d);  // one per dump, as analyze does
      correlator.add(d, graph, t);
      lock_time.add(d, graph, t, std::nullopt);
    });
    auto locks = correlator.report().locks.size() + lock_time.report().locks.size();
    benchmark::DoNotOptimize(locks);
  }
  finish_counters(state, dumps);
}

// One target of the daemon at its defaults (ring and correlator 600 samples, correlator
// 32 MiB, neighbour window 1), kept across iterations as a running daemon keeps it.
struct DaemonTarget {
  static constexpr std::size_t ring_samples = 600;
  lockwatch::analysis::Correlator correlator{{.neighbour_window = 1, .max_samples = ring_samples, .max_bytes = 32u << 20}};
  lockwatch::analysis::StackHistory stacks;
  lockwatch::analysis::LockTime lock_time;
  std::shared_ptr<parser::BodyCache> bodies = std::make_shared<parser::BodyCache>();
  std::uint64_t next_id = 0;
  std::size_t unsettled = 0;

  // TargetState::add_dump, count_sample and count_lock_time, minus the ring and the exporter.
  std::size_t add(std::string_view reply) {
    parser::DumpParser dump_parser({}, bodies);  // the bodies of the sample before, as the daemon keeps them
    dump_parser.feed(reply);
    dump_parser.finish();
    const auto parsed = dump_parser.take_dumps();
    if (parsed.empty()) return 0;
    return analyze(parsed.front());
  }

  // The analysis of one parsed sample.
  std::size_t analyze(const lockwatch::model::ThreadDump& dump) {
    const auto id = next_id++;
    const auto time = static_cast<double>(id);
    const auto graph = lockwatch::analysis::build_lock_graph(dump);  // one per sample, as the daemon does
    correlator.add(dump, graph, time);
    stacks.add(id, dump);
    stacks.forget_before(id + 1 > ring_samples ? id + 1 - ring_samples : 0);
    std::size_t seen = correlator.tally(correlator.size() - 1).waiters.size();
    seen += correlator.summary(correlator.size() - 1).pools.size();
    unsettled = std::min(unsettled + 1, correlator.size());
    while (unsettled > 1) seen += correlator.tally(correlator.size() - unsettled--).holders.size();
    seen += lock_time.add(dump, graph, time, std::int64_t{0}).holds.size();
    return seen;
  }
};

// Each file one reply, parsed as the daemon parses a target's successive samples: with the
// bodies of the sample before (parser::BodyCache). Against BM_Parse, what the cache saves.
void BM_ParseSamples(benchmark::State& state) {
  if (!check_input(state)) return;
  const auto& in = loaded();
  auto bodies = std::make_shared<parser::BodyCache>();
  for ([[maybe_unused]] auto _ : state) {
    std::size_t begin = 0;
    for (const auto end : in.file_ends) {
      parser::DumpParser dump_parser({}, bodies);
      const auto reply = std::string_view(in.data).substr(begin, end - begin);
      for (std::size_t at = 0; at < reply.size(); at += chunk_bytes) dump_parser.feed(reply.substr(at, chunk_bytes));
      dump_parser.finish();
      auto dumps = dump_parser.take_dumps();
      benchmark::DoNotOptimize(dumps);
      begin = end;
    }
  }
  finish_counters(state, in.file_ends.size());
}

void BM_DaemonSample(benchmark::State& state) {
  if (!check_input(state)) return;
  const auto& in = loaded();
  DaemonTarget target;
  for ([[maybe_unused]] auto _ : state) {
    std::size_t begin = 0;
    for (const auto end : in.file_ends) {
      auto seen = target.add(std::string_view(in.data).substr(begin, end - begin));
      benchmark::DoNotOptimize(seen);
      begin = end;
    }
  }
  finish_counters(state, in.file_ends.size());
}

// BM_DaemonSample without the parse: the samples are parsed once, each with the bodies of the
// one before, and analysed over and over. The analysis's own figure, where DaemonSample minus
// ParseSamples is the difference of two noisy ones.
void BM_DaemonAnalysis(benchmark::State& state) {
  if (!check_input(state)) return;
  const auto& in = loaded();
  auto bodies = std::make_shared<parser::BodyCache>();
  std::vector<lockwatch::model::ThreadDump> dumps;
  std::size_t begin = 0;
  for (const auto end : in.file_ends) {
    parser::DumpParser dump_parser({}, bodies);
    dump_parser.feed(std::string_view(in.data).substr(begin, end - begin));
    dump_parser.finish();
    for (auto& d : dump_parser.take_dumps()) dumps.push_back(std::move(d));
    begin = end;
  }
  DaemonTarget target;
  for ([[maybe_unused]] auto _ : state) {
    for (const auto& dump : dumps) {
      auto seen = target.analyze(dump);
      benchmark::DoNotOptimize(seen);
    }
  }
  finish_counters(state, dumps.size());
}

// Milliseconds: one iteration over 100 MB takes seconds, over the corpus a few ms.
BENCHMARK(BM_Memchr_Lines)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Parse)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ParseSamples)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ParseAnalyze)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DaemonSample)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DaemonAnalysis)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
