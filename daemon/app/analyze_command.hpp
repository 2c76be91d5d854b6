// SPDX-License-Identifier: Apache-2.0
// `lockwatch analyze [--format text|json|html] FILE|DIR...`: saved dumps in, contention report out.
#pragma once

#include <istream>
#include <ostream>
#include <span>
#include <string>
#include <string_view>

#include "lockwatch/analysis/correlator.hpp"
#include "lockwatch/analysis/lock_time.hpp"
#include "lockwatch/page/view.hpp"
#include "lockwatch/report/analyze_report.hpp"

namespace lockwatch::app {

/// Streams one input through the parser into `correlator`, recording it in `result`
/// under `label`, and each dump into `stacks` when given (the HTML report's flame and wait-for
/// graphs), and into `lock_time` when given (wait seconds, holds). False on a read error (the message goes to `err`).
bool analyze_stream(std::istream& in, const std::string& label, report::AnalyzeResult& result,
                    analysis::Correlator& correlator, std::ostream& err, view::StackViews* stacks = nullptr,
                    analysis::LockTime* lock_time = nullptr);

/// File-name order a person expects: "dump-2" before "dump-10".
bool natural_less(std::string_view a, std::string_view b);

/// Exit codes: 0 report written, 1 no thread dump in the inputs, 2 usage or unreadable input.
int run_analyze(std::span<const std::string_view> args, std::ostream& out, std::ostream& err);

}  // namespace lockwatch::app
