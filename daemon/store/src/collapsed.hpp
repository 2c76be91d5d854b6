// SPDX-License-Identifier: Apache-2.0
// One thread block of jstack text as a collapsed stack ("root;...;leaf"), the input
// format of flame-graph tools.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lockwatch::store::detail {

struct CollapsedThread {
  std::string state;  // "BLOCKED", ... as Java spells it; "" when the block prints none
  std::string stack;  // methods, outermost first, ';'-separated
};

/// Nothing for blocks that are not a thread with frames (VM threads, the dump's prologue).
std::optional<CollapsedThread> collapse_block(const std::vector<std::string_view>& lines);

}  // namespace lockwatch::store::detail
