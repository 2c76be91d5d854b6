// SPDX-License-Identifier: Apache-2.0
// Thread pools by name pattern: "http-nio-8401-exec-884" -> "http-nio-8401-exec-N".
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockwatch/model/thread_dump.hpp"

namespace lockwatch::analysis {

/// The pool a thread name belongs to: its last run of digits replaced by "N".
/// Nothing for names without digits, or made only of digits (not a pool member).
std::optional<std::string> pool_of(std::string_view thread_name);

struct PoolStates {
  std::string pool;
  std::uint32_t threads = 0;
  std::map<model::ThreadState, std::uint32_t> states;
};

/// Pools of the dump's Java threads, largest first (ties by name).
std::vector<PoolStates> group_pools(const model::ThreadDump& dump);

}  // namespace lockwatch::analysis
