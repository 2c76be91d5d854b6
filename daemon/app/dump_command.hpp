// SPDX-License-Identifier: Apache-2.0
// `lockwatch dump --pid PID [--backend attach|jstack] [--locks] [--timeout DURATION]`.
#pragma once

#include <ostream>
#include <span>
#include <string_view>

#include "flags.hpp"

namespace lockwatch::app {

/// Its flags and help.
const CommandSpec& dump_spec();

/// Prints one thread dump to `out` like jstack. Exit codes: 0 dumped, 1 the dump failed
/// (the reason on `err`, with the outcome label the daemon would count), 2 usage.
int run_dump(std::span<const std::string_view> args, std::ostream& out, std::ostream& err);

}  // namespace lockwatch::app
