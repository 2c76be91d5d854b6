// SPDX-License-Identifier: Apache-2.0
// Collapsed stacks ("root;...;leaf count", the input format of flame-graph tools) built from
// the parsed model, so they come out the same for Thread.print text and Thread.dump_to_file
// JSON: the dump's grammar is known in the parser alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "lockwatch/model/thread_dump.hpp"

namespace lockwatch::analysis {

/// One distinct stack of a dump and how many of its threads in one state run it.
struct CollapsedStack {
  std::string stack;  // frames' methods, outermost first, ';'-separated (';' and ' ' in a method become '_')
  model::ThreadState state = model::ThreadState::none;
  std::uint32_t threads = 0;
};

/// Every thread with frames, grouped by (stack, state), in stack order.
std::vector<CollapsedStack> collapse(const model::ThreadDump& dump);

/// The collapsed stacks of a target's recent samples, kept next to its ring: each distinct
/// stack is stored once with a count of the samples using it, and freed with the last.
class StackHistory {
 public:
  void add(std::uint64_t sample_id, const model::ThreadDump& dump);
  /// Drops the samples with an id below `first_kept` (the ring evicted them).
  void forget_before(std::uint64_t first_kept);
  /// "root;...;leaf count" lines, sorted by stack, of the threads in `state` ("" for all;
  /// Java's spelling, "BLOCKED") over the newest `last` samples (0: all kept).
  std::string collapsed(std::string_view state, std::size_t last = 0) const;
  std::size_t samples() const noexcept { return samples_.size(); }
  std::size_t distinct_stacks() const noexcept { return stacks_.size(); }
  /// Bodies (ThreadInfo::body_id) whose stack is remembered: those of the newest sample.
  std::size_t remembered_bodies() const noexcept { return last_bodies_.size(); }

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  // stack -> samples using it. Hashed: its order is never shown (collapsed() sorts), and a
  // sample's stacks share long prefixes that make ordered compares slow. Nodes never move.
  using Stacks = std::unordered_map<std::string, std::uint32_t, Hash, std::equal_to<>>;
  using Stack = Stacks::value_type;
  struct Entry {
    Stack* stack;
    model::ThreadState state;
    std::uint32_t threads;
  };
  struct Sample {
    std::uint64_t id;
    std::vector<Entry> entries;
  };

  Stack* stack_for(const model::ThreadInfo& t);

  Stacks stacks_;
  std::deque<Sample> samples_;  // oldest first
  // body_id -> its stack, for the bodies of the newest sample: most bodies come back in the
  // next sample, whose threads then need no stack built or hashed. Only the newest sample's
  // bodies are kept (a dump's worth), and its entries keep their stacks alive.
  std::unordered_map<std::uint64_t, Stack*> last_bodies_;
};

}  // namespace lockwatch::analysis
