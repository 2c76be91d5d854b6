// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/analysis/stacks.hpp"

#include <algorithm>
#include <tuple>

namespace lockwatch::analysis {
namespace {

// ';' separates frames in the format and ' ' the count, so neither may appear inside one.
void append_method(std::string& out, std::string_view frame) {
  for (char c : model::frame_method(frame)) out.push_back(c == ';' || c == ' ' ? '_' : c);
}

std::string stack_of(const model::ThreadInfo& t) {
  std::string out;
  for (auto it = t.frames.rbegin(); it != t.frames.rend(); ++it) {
    if (!out.empty()) out.push_back(';');
    append_method(out, it->text);
  }
  return out;
}

}  // namespace

std::vector<CollapsedStack> collapse(const model::ThreadDump& dump) {
  std::vector<CollapsedStack> out;
  for (const auto& t : dump.threads)
    if (!t.frames.empty()) out.push_back({stack_of(t), t.state, 1});
  std::sort(out.begin(), out.end(), [](const CollapsedStack& a, const CollapsedStack& b) {
    return std::tie(a.stack, a.state) < std::tie(b.stack, b.state);
  });
  std::vector<CollapsedStack> merged;
  for (auto& s : out) {
    if (!merged.empty() && merged.back().stack == s.stack && merged.back().state == s.state) ++merged.back().threads;
    else merged.push_back(std::move(s));
  }
  return merged;
}

void StackHistory::add(std::uint64_t sample_id, const model::ThreadDump& dump) {
  Sample sample{sample_id, {}};
  for (auto& s : collapse(dump)) {
    auto [it, fresh] = stacks_.try_emplace(std::move(s.stack), 0);
    ++it->second;
    sample.entries.push_back({&it->first, s.state, s.threads});  // map nodes never move
  }
  samples_.push_back(std::move(sample));
}

void StackHistory::forget_before(std::uint64_t first_kept) {
  while (!samples_.empty() && samples_.front().id < first_kept) {
    for (const auto& e : samples_.front().entries) {
      auto it = stacks_.find(*e.stack);
      if (--it->second == 0) stacks_.erase(it);
    }
    samples_.pop_front();
  }
}

std::string StackHistory::collapsed(std::string_view state, std::size_t last) const {
  const std::size_t first = last == 0 || last >= samples_.size() ? 0 : samples_.size() - last;
  std::map<std::string_view, std::uint64_t> counts;
  for (std::size_t i = first; i < samples_.size(); ++i)
    for (const auto& e : samples_[i].entries)
      if (state.empty() || model::to_string(e.state) == state) counts[*e.stack] += e.threads;
  std::string out;
  for (const auto& [stack, n] : counts) out.append(stack).append(" ").append(std::to_string(n)).append("\n");
  return out;
}

}  // namespace lockwatch::analysis
