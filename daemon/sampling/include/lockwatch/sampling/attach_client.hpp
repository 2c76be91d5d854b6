// SPDX-License-Identifier: Apache-2.0
// Takes a thread dump over the HotSpot attach socket, the way jstack does, without a JVM of
// our own: ~100x cheaper than running jstack, and safe for the target.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "lockwatch/asio.hpp"
#include "lockwatch/sampling/dump_record.hpp"

namespace lockwatch::sampling {

class TargetProcess;  // proc.hpp

struct AttachOptions {
  std::string proc_root = "/proc";
  /// Start a JVM's attach listener (trigger file + SIGQUIT) when its socket is missing.
  /// Only done when the process is a HotSpot JVM whose hsperfdata says attach is
  /// supported and whose /proc status shows SIGQUIT handled: SIGQUIT kills a -Xrs JVM or a
  /// non-JVM, and prints a dump into the application's stdout where attach is disabled.
  bool may_start_listener = true;
  std::chrono::milliseconds listener_wait{5'000};
  /// The target as the last dump of it left it (the daemon keeps one per target, on the io
  /// thread); empty: this dump opens its own. One for another pid is not used.
  std::shared_ptr<TargetProcess> process{};
};

/// Asynchronous on the caller's io_context; `done` runs exactly once. The reply is read
/// as fast as it comes (JDK 25 keeps the JVM at a safepoint until the reader has it all)
/// and the socket is closed at the request's deadline.
void async_attach_dump(boost::asio::io_context& io, const DumpRequest& request, const AttachOptions& options,
                       std::function<void(DumpRecord)> done);

/// Blocking form for the command line.
DumpRecord attach_dump(const DumpRequest& request, const AttachOptions& options = {});

}  // namespace lockwatch::sampling
