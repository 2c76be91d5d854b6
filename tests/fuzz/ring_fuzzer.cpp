// SPDX-License-Identifier: Apache-2.0
// Fuzz target for the ring: successive samples (the input's pieces between form feeds, up to
// eight) stored whole in one ring and streamed in input-chosen chunks into another. Each
// thread's block is compared with that thread's block in the sample before, so the pieces are
// best seeded as variations of one dump. Whatever they are:
//   - every sample's text comes back byte for byte, from both rings;
//   - both rings cost the same bytes (the chunks change nothing stored);
//   - cut down to its newest sample, a ring costs what a fresh ring holding only that sample
//     costs: nothing leaks from the samples, the pools or what is kept for the next sample.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "lockwatch/store/ring.hpp"

namespace {

using lockwatch::store::Ring;
using lockwatch::store::RingLimits;

constexpr RingLimits unbounded{600, std::uint64_t{1} << 40};

[[noreturn]] void fail(const char* what, std::size_t sample) {
  std::fprintf(stderr, "ring_fuzzer: %s (sample %zu)\n", what, sample);
  __builtin_trap();
}

std::vector<std::string_view> samples_of(std::string_view in) {
  std::vector<std::string_view> out;
  while (out.size() < 7) {
    const auto ff = in.find('\f');
    if (ff == std::string_view::npos) break;
    out.push_back(in.substr(0, ff));
    in.remove_prefix(ff + 1);
  }
  out.push_back(in);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  // The chunk size comes from the last byte, so the fuzzer steers it without moving the text.
  const std::size_t step = 1 + data[size - 1] % 61;
  const auto samples = samples_of({reinterpret_cast<const char*>(data), size - 1});
  Ring whole(unbounded), streamed(unbounded);
  std::vector<std::uint64_t> whole_ids, streamed_ids;
  for (const auto text : samples) {
    const auto id = whole.add(text, {});
    auto writer = streamed.begin();
    for (std::size_t at = 0; at < text.size(); at += step) writer.append(text.substr(at, step));
    const auto sid = streamed.commit(std::move(writer), {});
    if (!id || !sid) fail("a sample within unbounded limits was refused", whole_ids.size());
    whole_ids.push_back(*id);
    streamed_ids.push_back(*sid);
  }
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (whole.text(whole_ids[i]) != samples[i]) fail("stored whole, the text came back changed", i);
    if (streamed.text(streamed_ids[i]) != samples[i]) fail("streamed, the text came back changed", i);
  }
  if (whole.bytes() != streamed.bytes()) fail("the chunks changed what the ring costs", samples.size());
  whole.set_limits({1, unbounded.max_bytes});
  Ring fresh(unbounded);
  fresh.add(samples.back(), {});
  if (whole.bytes() != fresh.bytes()) fail("cut to its newest sample, the ring costs more than that sample alone", 0);
  if (whole.text(whole_ids.back()) != samples.back()) fail("the newest sample changed when the others went", 0);
  return 0;
}
