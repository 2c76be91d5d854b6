// SPDX-License-Identifier: Apache-2.0
// `jcmd PID Thread.dump_to_file -format=json` documents (JDK 21-24, JDK 25, JDK 27) to the model.
#pragma once

#include <string_view>

#include "lockwatch/model/thread_dump.hpp"

namespace lockwatch::parser::detail {

/// Fills `dump` from one whole JSON thread dump: one ThreadInfo per thread of every
/// container, frames, state (JDK 25+) and lock lines (parkBlocker, blockedOn, waitingOn,
/// monitorsOwned). Long values may be strings or numbers. Every retained string is copied
/// into dump.arena. Returns false, keeping the threads read so far, when the JSON is
/// malformed or truncated or is not a thread dump; dump.stats.complete says it was whole.
bool parse_dump_to_file_json(std::string_view text, model::ThreadDump& dump);

}  // namespace lockwatch::parser::detail
