// SPDX-License-Identifier: Apache-2.0
// `lockwatch run` in the front end. The daemon links prometheus-cpp, spdlog, fmt and OpenSSL,
// and mapping and relocating them is most of a short command's start-up (`lockwatch dump` took
// 3x jattach's CPU, most of it before the request went out). So the daemon is its own
// executable, lockwatch-daemon, installed next to lockwatch, and `lockwatch run` becomes it.
#pragma once

#include <filesystem>
#include <ostream>
#include <span>
#include <string_view>

namespace lockwatch::app {

/// lockwatch-daemon in the directory of the running executable (/proc/self/exe): never one
/// found on PATH, which could be another version.
std::filesystem::path daemon_path();

/// Replaces this process with lockwatch-daemon: the same pid, so a service manager, a
/// container runtime or a test sees one process, and the same argument vector (`argv0` "run"
/// `args`...), so ps, /proc/PID/cmdline and a target label derived from it read as typed.
/// Returns only when that fails: 1, with what failed on `err`.
int exec_daemon(std::string_view argv0, std::span<const std::string_view> args, std::ostream& err);

}  // namespace lockwatch::app
