// SPDX-License-Identifier: Apache-2.0
// The "- ..." lines under a frame, and the entries of "Locked ownable synchronizers:".
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "lockwatch/model/thread_dump.hpp"

namespace lockwatch::parser::detail {

struct LockLine {
  model::LockAction action = model::LockAction::locked;
  std::optional<std::uint64_t> address;
  std::string_view class_name;
};

/// `text` is the line after its "- " (leading whitespace and dash removed), e.g.
/// "parking to wait for  <0x000000071ab1a5d8> (a java.util.concurrent.locks.ReentrantLock$NonfairSync)".
std::optional<LockLine> parse_lock_line(std::string_view text);

struct OwnedLine {
  bool none = false;                     // "- None"
  std::uint64_t address = 0;
  std::string_view class_name;
};

/// An entry of "Locked ownable synchronizers:": "<0x..> (a C)" or "None".
std::optional<OwnedLine> parse_owned_line(std::string_view text);

}  // namespace lockwatch::parser::detail
