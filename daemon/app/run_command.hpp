// SPDX-License-Identifier: Apache-2.0
// `lockwatch run`: the daemon, configured from a file and/or flags. The daemon is its own
// executable (lockwatch-daemon, daemon_main.cpp) so that the other commands' binary does not
// load what only the daemon needs; `lockwatch run` execs it (daemon_exec.hpp).
#pragma once

#include <ostream>
#include <span>
#include <string_view>

#include "flags.hpp"

namespace lockwatch::app {

/// Its flags and help (run_spec.cpp: in both binaries).
const CommandSpec& run_spec();

/// Runs until SIGTERM/SIGINT (lockwatch-daemon only). Exit codes: 0 stopped cleanly, 1 could not start (bad
/// config, address in use), 2 usage.
int run_daemon(std::span<const std::string_view> args, std::ostream& out, std::ostream& err);

}  // namespace lockwatch::app
