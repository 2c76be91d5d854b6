// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/analysis/pools.hpp"

#include <algorithm>

namespace lockwatch::analysis {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

std::optional<std::string> pool_of(std::string_view name) {
  auto end = name.size();
  while (end > 0 && !is_digit(name[end - 1])) --end;
  if (end == 0) return std::nullopt;
  auto begin = end;
  while (begin > 0 && is_digit(name[begin - 1])) --begin;
  if (begin == 0) return std::nullopt;
  std::string pool(name.substr(0, begin));
  pool.append("N").append(name.substr(end));
  return pool;
}

std::vector<PoolStates> group_pools(const model::ThreadDump& dump) {
  std::map<std::string, PoolStates> by_name;
  for (const auto& t : dump.threads) {
    if (!t.is_java()) continue;
    auto pool = pool_of(t.name);
    if (!pool) continue;
    auto& entry = by_name[*pool];
    entry.pool = *pool;
    ++entry.threads;
    ++entry.states[t.state];
  }
  std::vector<PoolStates> out;
  for (auto& [name, stats] : by_name) out.push_back(std::move(stats));
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.threads > b.threads; });
  return out;
}

}  // namespace lockwatch::analysis
