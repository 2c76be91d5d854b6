// SPDX-License-Identifier: Apache-2.0
// `lockwatch dump --pid PID [--backend attach|jstack] [--locks] [--timeout DURATION]`.
#pragma once

#include <chrono>
#include <optional>
#include <ostream>
#include <span>
#include <string_view>

namespace lockwatch::app {

/// Prints one thread dump to `out` like jstack. Exit codes: 0 dumped, 1 the dump failed
/// (the reason on `err`, with the outcome label the daemon would count), 2 usage.
int run_dump(std::span<const std::string_view> args, std::ostream& out, std::ostream& err);

/// "250ms", "10s", "1m", "1h"; a bare number is seconds. Nothing for anything else.
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);

}  // namespace lockwatch::app
