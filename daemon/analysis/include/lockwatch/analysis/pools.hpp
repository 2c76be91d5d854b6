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

/// The pool a thread name belongs to: its closing number replaced by "N". Nothing for
/// names that do not end in a number (closing brackets aside) or are only a number.
std::optional<std::string> pool_of(std::string_view thread_name);
/// The same, written into `pool` (its storage reused: no allocation per thread for callers
/// that look at every thread of every sample); false, `pool` unspecified, for no pool.
bool pool_into(std::string_view thread_name, std::string& pool);

struct PoolStates {
  std::string pool;
  std::uint32_t threads = 0;
  std::map<model::ThreadState, std::uint32_t> states;
};

/// Pools (two or more threads) of the dump's Java threads, largest first (ties by name);
/// `states` leaves out threads that print no state (carriers of a virtual thread).
std::vector<PoolStates> group_pools(const model::ThreadDump& dump);

}  // namespace lockwatch::analysis
