// SPDX-License-Identifier: Apache-2.0
// The file a JVM writes its JSON thread dump to, and lockwatch's directory for it in the JVM's
// /tmp. Like every path below the target's root (target_fs.hpp), the target may swap any of it
// for a symlink, a FIFO or another user's file at any moment: each is opened below the /tmp
// descriptor without following symlinks, never blocking, and checked on the descriptor.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <variant>

#include "attach_preflight.hpp"
#include "lockwatch/sampling/dump_file_name.hpp"

namespace lockwatch::sampling::detail {

struct DumpDir {
  std::shared_ptr<Fd> fd;  // ".lockwatch-UID" below the JVM's /tmp, opened O_RDONLY | O_DIRECTORY
  std::string shown;       // "<proc>/<pid>/root/tmp/.lockwatch-UID", for messages only
};

/// Opens (creating it if missing) the JVM uid's directory in the JVM's /tmp: a directory, not
/// a symlink, owned by the JVM's effective uid, mode 0700; then removes the leftovers in it
/// (names DumpFileName::is_ours, of any type, last changed more than `leftover_age` ago).
/// Must run with the JVM's ids where attach.as is target (act_as.hpp).
/// Refusals: dump_file_failed when it cannot be created (read-only or full /tmp), untrusted
/// when something else sits under its name.
std::variant<DumpDir, Refusal> open_dump_dir(const AttachTarget& target, std::chrono::seconds leftover_age);

/// Opens the file the JVM reports written: a regular file (never a symlink - ELOOP - and never
/// a FIFO, which O_NONBLOCK opens without waiting for a writer) owned by the JVM's effective
/// uid, at most `max_bytes` long. Refusals: untrusted, too_large, dump_file_failed (missing).
std::variant<Fd, Refusal> open_dump_file(const DumpDir& dir, const DumpFileName& name, const AttachTarget& target,
                                         std::size_t max_bytes);

/// Removes `name` whatever it is now (unlinkat never follows a symlink); a missing file is fine.
void remove_dump_file(const DumpDir& dir, const DumpFileName& name);

/// Removes the leftovers as open_dump_dir does; the count removed, for tests and logs.
std::size_t remove_leftovers(const DumpDir& dir, std::chrono::seconds leftover_age);

}  // namespace lockwatch::sampling::detail
