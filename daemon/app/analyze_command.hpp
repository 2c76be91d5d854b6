// SPDX-License-Identifier: Apache-2.0
// `lockwatch analyze [--format text|json|html] FILE|DIR...`: saved dumps in, contention report out.
// Which files and how their dumps reach the correlator: lockwatch/report/analyze_input.hpp.
#pragma once

#include <ostream>
#include <span>
#include <string_view>

#include "flags.hpp"

namespace lockwatch::app {

/// Its flags and help.
const CommandSpec& analyze_spec();

/// Exit codes: 0 report written, 1 no thread dump in the inputs, 2 usage or unreadable input.
int run_analyze(std::span<const std::string_view> args, std::ostream& out, std::ostream& err);

}  // namespace lockwatch::app
