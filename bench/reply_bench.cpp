// SPDX-License-Identifier: Apache-2.0
// What bounding a reply costs the io thread per sample: sampling::BoundedReply::append of each
// sample in the pieces one read of the JVM's socket brings (~210 KB: its send buffer), the
// payload handed to a sink as in the daemon.
//
//   LOCKWATCH_BENCH_INPUT=DIR_OF_DUMPS lockwatch_reply_bench [benchmark flags]
//
// BM_ReplyCountedHere counts the thread entries itself (memchr for quotes over every byte), as
// `lockwatch dump` and the JSON file's reader do; BM_ReplySinkCounts leaves them to a sink that
// counts them (the daemon's parser, TextChunks::past_thread_bound) and bounds the bytes only.
// Each piece is copied into the read buffer just before it is appended, as recv() copies it,
// so its bytes are as warm as the io thread finds them; the copy is timed in both (pausing the
// timer per piece would cost more than the count), so their difference is the count's cost.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "bench_samples.hpp"
#include "lockwatch/sampling/bounded_reply.hpp"

namespace {

constexpr std::size_t kReadBytes = 210 * 1000;

const std::vector<std::string>& samples() {
  static const auto loaded = lockwatch::bench::load_samples();
  return loaded;
}

void bound_replies(benchmark::State& state, bool sink_counts) {
  const auto& all = samples();
  std::string buffer(kReadBytes, '\0');
  std::size_t sample = 0, bytes = 0, threads = 0;
  for (auto _ : state) {
    const std::string_view text = all[sample++ % all.size()];
    lockwatch::sampling::BoundedReply reply;
    std::size_t sunk = 0;
    reply.stream_to([&sunk](std::string_view piece) { sunk += piece.size(); },
                    sink_counts ? std::function<bool()>([] { return false; }) : nullptr);
    for (std::size_t at = 0; at < text.size(); at += kReadBytes) {
      const auto n = std::min(kReadBytes, text.size() - at);
      std::memcpy(buffer.data(), text.data() + at, n);  // recv()'s copy
      reply.append(std::string_view(buffer.data(), n));
    }
    benchmark::DoNotOptimize(sunk);
    bytes += text.size();
    threads += reply.threads();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
  state.counters["threads_counted"] = benchmark::Counter(static_cast<double>(threads), benchmark::Counter::kAvgIterations);
}

void BM_ReplyCountedHere(benchmark::State& state) { bound_replies(state, false); }
void BM_ReplySinkCounts(benchmark::State& state) { bound_replies(state, true); }

BENCHMARK(BM_ReplyCountedHere)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ReplySinkCounts)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
