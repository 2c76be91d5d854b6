// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/analysis/pools.hpp"

#include <algorithm>

namespace lockwatch::analysis {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

}  // namespace

bool pool_into(std::string_view name, std::string& out) {
  // The member number ends the name, or only closing punctuation follows it
  // ("AtmostOneTaskExecutor[...] [#15]"); digits inside words ("UDP 33848 monitor") are not one.
  auto end = name.size();
  while (end > 0 && !is_digit(name[end - 1])) {
    if (is_alpha(name[end - 1])) return false;
    --end;
  }
  auto begin = end;
  while (begin > 0 && is_digit(name[begin - 1])) --begin;
  if (end == 0 || begin == 0) return false;
  out.assign(name.substr(0, begin)).append("N").append(name.substr(end));
  return true;
}

std::optional<std::string> pool_of(std::string_view name) {
  std::string pool;
  if (!pool_into(name, pool)) return std::nullopt;
  return pool;
}

std::vector<PoolStates> group_pools(const model::ThreadDump& dump) {
  std::map<std::string, PoolStates, std::less<>> by_name;
  std::string pool;
  auto it = by_name.end();
  for (const auto& t : dump.threads) {
    if (!t.is_java() || !pool_into(t.name, pool)) continue;
    // A dump lists a pool's members mostly one after another: try the last pool first.
    if (it == by_name.end() || it->first != pool) it = by_name.find(pool);
    if (it == by_name.end()) it = by_name.emplace(pool, PoolStates{pool, 0, {}}).first;
    ++it->second.threads;
    if (t.state != model::ThreadState::none) ++it->second.states[t.state];  // carriers print no state
  }
  std::vector<PoolStates> out;
  for (auto& [name, stats] : by_name)
    if (stats.threads >= 2) out.push_back(std::move(stats));  // one thread is not a pool
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.threads > b.threads; });
  return out;
}

}  // namespace lockwatch::analysis
