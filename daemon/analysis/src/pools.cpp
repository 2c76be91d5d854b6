// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/analysis/pools.hpp"

#include <algorithm>
#include <array>

namespace lockwatch::analysis {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Where a pool member's number is: name[begin, end).
struct NumberAt {
  std::size_t begin = 0, end = 0;
};

// The member number ends the name, or only closing punctuation follows it
// ("AtmostOneTaskExecutor[...] [#15]"); digits inside words ("UDP 33848 monitor") are not one.
std::optional<NumberAt> member_number(std::string_view name) {
  auto end = name.size();
  while (end > 0 && !is_digit(name[end - 1])) {
    if (is_alpha(name[end - 1])) return std::nullopt;
    --end;
  }
  auto begin = end;
  while (begin > 0 && is_digit(name[begin - 1])) --begin;
  if (end == 0 || begin == 0) return std::nullopt;
  return NumberAt{begin, end};
}

}  // namespace

bool pool_into(std::string_view name, std::string& out) {
  const auto number = member_number(name);
  if (!number) return false;
  out.assign(name.substr(0, number->begin)).append("N").append(name.substr(number->end));
  return true;
}

// The text after the number has no 'N' (no letter at all), so two pools are the same string
// exactly when the texts before and after their numbers are.
const std::string* PoolNamer::pool(std::string_view name, bool& same) {
  const auto number = member_number(name);
  same = false;
  if (!number) return nullptr;
  const auto prefix = name.substr(0, number->begin), suffix = name.substr(number->end);
  same = named_ && prefix == prefix_ && suffix == suffix_;
  if (!same) pool_.assign(prefix).append("N").append(suffix);
  prefix_ = prefix, suffix_ = suffix, named_ = true;
  return &pool_;
}

std::optional<std::string> pool_of(std::string_view name) {
  std::string pool;
  if (!pool_into(name, pool)) return std::nullopt;
  return pool;
}

std::vector<PoolStates> group_pools(const model::ThreadDump& dump) {
  std::map<std::string, PoolStates, std::less<>> by_name;
  PoolNamer namer;
  auto it = by_name.end();
  // A dump lists a pool's members mostly one after another: the run's states are counted
  // here and added to its pool's map when the run ends.
  std::array<std::uint32_t, 8> run_states{};
  static_assert(static_cast<std::size_t>(model::ThreadState::unknown) < run_states.size());
  auto end_run = [&] {
    for (std::size_t s = 0; s < run_states.size(); ++s)
      if (run_states[s] != 0) it->second.states[static_cast<model::ThreadState>(s)] += run_states[s], run_states[s] = 0;
  };
  for (const auto& t : dump.threads) {
    if (!t.is_java()) continue;
    bool same = false;
    const std::string* pool = namer.pool(t.name, same);
    if (pool == nullptr) continue;
    if (it == by_name.end() || !same) {
      if (it != by_name.end()) end_run();
      it = by_name.find(*pool);
      if (it == by_name.end()) it = by_name.emplace(*pool, PoolStates{*pool, 0, {}}).first;
    }
    ++it->second.threads;
    if (t.state != model::ThreadState::none) ++run_states[static_cast<std::size_t>(t.state)];  // carriers print no state
  }
  if (it != by_name.end()) end_run();
  std::vector<PoolStates> out;
  for (auto& [name, stats] : by_name)
    if (stats.threads >= 2) out.push_back(std::move(stats));  // one thread is not a pool
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.threads > b.threads; });
  return out;
}

}  // namespace lockwatch::analysis
