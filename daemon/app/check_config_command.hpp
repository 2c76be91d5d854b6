// SPDX-License-Identifier: Apache-2.0
// `lockwatch check-config FILE`: is a config file valid, and what would the daemon run with.
#pragma once

#include <ostream>
#include <span>
#include <string_view>

#include "flags.hpp"

namespace lockwatch::app {

/// Its flags and help.
const CommandSpec& check_config_spec();

/// Loads FILE like the daemon does. Exit codes: 0 valid ("FILE: ok" and the effective
/// settings on `out`), 1 invalid (every error as FILE:LINE:COL: message on `err`), 2 usage.
int run_check_config(std::span<const std::string_view> args, std::ostream& out, std::ostream& err);

}  // namespace lockwatch::app
