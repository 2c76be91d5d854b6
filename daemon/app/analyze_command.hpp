// SPDX-License-Identifier: Apache-2.0
// `lockwatch analyze [--format text|json] FILE|DIR...`: saved dumps in, contention report out.
#pragma once

#include <ostream>
#include <span>
#include <string_view>

namespace lockwatch::app {

/// Exit codes: 0 report written, 1 no thread dump in the inputs, 2 usage or unreadable input.
int run_analyze(std::span<const std::string_view> args, std::ostream& out, std::ostream& err);

}  // namespace lockwatch::app
