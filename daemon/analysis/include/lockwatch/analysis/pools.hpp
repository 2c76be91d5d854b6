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

/// pool_into for the threads of a dump in order. A dump lists a pool's members one after
/// another, and a name with the same text around its number as the last pooled name is of
/// the same pool: that is told without making the pool's string again.
class PoolNamer {
 public:
  /// The pool of `name` (as pool_into makes it), nullptr for none; valid until the next call.
  /// `same`: it is the pool of the last name that had one.
  const std::string* pool(std::string_view name, bool& same);

 private:
  std::string pool_;
  std::string_view prefix_, suffix_;  // around the number of the last pooled name
  bool named_ = false;
};

struct PoolStates {
  std::string pool;
  std::uint32_t threads = 0;
  std::map<model::ThreadState, std::uint32_t> states;
};

/// Pools (two or more threads) of the dump's Java threads, largest first (ties by name);
/// `states` leaves out threads that print no state (carriers of a virtual thread).
std::vector<PoolStates> group_pools(const model::ThreadDump& dump);

}  // namespace lockwatch::analysis
