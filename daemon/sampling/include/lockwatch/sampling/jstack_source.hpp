// SPDX-License-Identifier: Apache-2.0
// The jstack backend: runs the JDK's own `jstack [-l] PID` for users who trust only the JDK's
// tool, reads its output in memory and turns the result into a labelled DumpRecord.
#pragma once

#include <functional>
#include <string>

#include "lockwatch/asio.hpp"
#include "lockwatch/sampling/dump_record.hpp"

namespace lockwatch::sampling {

/// Runs `jstack_path [-l] PID` (an argument vector, never a shell) on `io`. stdout is read
/// at full speed (a slow reader would keep the target JVM stopped), stderr is kept for the
/// error text (at most 64 KiB), and at `request.timeout` the child is killed (SIGKILL).
/// `done` is called exactly once, on `io`, after the child has been reaped; it is never
/// called from inside this function. Safe when several threads run `io`.
void async_jstack_dump(boost::asio::io_context& io, const DumpRequest& request, std::string jstack_path,
                       std::function<void(DumpRecord)> done);

/// Blocking form for the `lockwatch dump` command: runs its own io_context.
DumpRecord jstack_dump(const DumpRequest& request, const std::string& jstack_path);

/// `$JAVA_HOME/bin/jstack` if it is an executable file, else the first `jstack` on PATH
/// (an absolute path); empty when there is none.
std::string find_jstack();

}  // namespace lockwatch::sampling
