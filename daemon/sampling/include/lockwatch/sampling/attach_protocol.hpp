// SPDX-License-Identifier: Apache-2.0
// The HotSpot attach protocol's bytes (v1, understood by JDK 6 to 25), without sockets.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "lockwatch/sampling/dump_file_name.hpp"

namespace lockwatch::sampling {

/// Everything lockwatch may ever ask a JVM. The attach socket can also load agents
/// ("load", "JVMTI.agent_load") and change flags: there is deliberately no way to
/// encode anything but these read-only thread dumps.
enum class AttachCommand : std::uint8_t {
  threaddump,         // like `jstack PID` (JDK 6+)
  threaddump_locks,   // like `jstack -l PID`: adds "Locked ownable synchronizers" (a heap walk)
  dump_to_file_json,  // like `jcmd PID Thread.dump_to_file -format=json PATH` (JDK 21+): every
                      // thread, virtual ones too, written by the JVM to a file lockwatch named
};

/// The request as the JDK's own tools send it: "1\0threaddump\0-l\0\0\0" - version "1",
/// the command and exactly three arguments, each NUL-terminated. dump_to_file_json is the
/// `jcmd` command with its whole command line as the first argument:
/// "1\0jcmd\0Thread.dump_to_file -format=json /tmp/.lockwatch-UID/HEX.json\0\0\0"; `file` is
/// its only variable part and must not be empty (std::invalid_argument: a programming error).
/// The thread dumps take no file.
std::string encode_request(AttachCommand command, const DumpFileName& file = {});

/// Whether the reply text of a dump_to_file_json request says the JVM wrote `file`:
/// "Created /tmp/.lockwatch-UID/HEX.json" on its first line (JDK 21-26). A JVM that could not
/// write says "Failed: java.nio.file...Exception: ..." or "... exists", with status 0.
bool reports_created(std::string_view reply_text, const DumpFileName& file);

/// Reads a reply: "<status>\n" then the payload until EOF (the only end marker; JDK 25
/// streams the payload while the dump is produced). Incremental: any split of the bytes.
class ReplyDecoder {
 public:
  /// Consumes `bytes`; returns the part of them that is payload (after the status line).
  std::string_view feed(std::string_view bytes);
  /// The status once its line is complete: 0 ok, -1 operation failed, 101 bad version.
  std::optional<int> status() const noexcept { return status_; }
  /// The status line was not a number (or too long): not a HotSpot attach reply.
  bool malformed() const noexcept { return malformed_; }

 private:
  std::string line_;
  std::optional<int> status_;
  bool malformed_ = false;
};

}  // namespace lockwatch::sampling
