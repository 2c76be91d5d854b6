// SPDX-License-Identifier: Apache-2.0
// A canonical, diff-friendly text form of a parsed dump: one fact per line, stable order.
#pragma once

#include <string>

#include "lockwatch/model/thread_dump.hpp"

namespace lockwatch::model {

/// Every field the parser extracted, escaped to printable UTF-8. Two dumps print the
/// same iff the parser saw the same facts; golden files and the fuzzer compare these.
std::string canonical_text(const ThreadDump& dump);

/// Escapes bytes for display: valid UTF-8 passes, control characters become \n, \t,
/// \xNN, invalid UTF-8 bytes are read as Latin-1 (old HP-UX / Windows dumps).
std::string printable(std::string_view raw);

}  // namespace lockwatch::model
