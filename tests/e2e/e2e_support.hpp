// SPDX-License-Identifier: Apache-2.0
// What the end-to-end suites share: a scenario JVM, the lockwatch daemon as a child
// process with its URL, reading a scrape, waiting for a condition.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "http_get.hpp"
#include "process.hpp"
#include "test_support.hpp"

namespace lockwatch::e2e {

/// A scenario JVM (JDK 17) started and READY; killed and reaped when it goes.
std::unique_ptr<test::Child> start_jvm(const std::string& main_class, std::vector<std::string> flags = {});

/// The same on another JDK: `java_home`/bin/java with the classes of `classes` (a directory
/// under the compiled scenarios: "jdk17", "jdk25"), `args` after the main class.
std::unique_ptr<test::Child> start_jvm_of(const std::string& java_home, const std::string& classes,
                                          const std::string& main_class, std::vector<std::string> flags,
                                          std::vector<std::string> args);

/// A library scenario of tests/java/libraries/ (LogbackSyncAppender, Pool2Exhausted, ...) on
/// JDK 17 (`jdk` "jdk17") or JDK 25 ("jdk25"), started READY with its classes (`<jdk>-lib`
/// under the compiled scenarios) and the Debian jars compile_libraries.sh recorded for it in
/// `<jdk>-lib/<main_class>.classpath`. Nothing, with a WARN saying why, when that JDK is not
/// installed or the scenario was not compiled (its jars are missing): the caller returns.
std::unique_ptr<test::Child> start_library_jvm(const std::string& jdk, const std::string& main_class,
                                               std::vector<std::string> args = {"300"},
                                               std::vector<std::string> flags = {});

/// The lockwatch binary the daemon runs: $LOCKWATCH_E2E_BINARY when set (e.g. a saved build
/// to compare with), else the one built with the tests.
std::string lockwatch_binary();

/// An empty directory of this test process, under the system's temporary directory; removed
/// when the process exits unless LOCKWATCH_E2E_KEEP=1.
std::filesystem::path scratch(const std::string& name);

/// `lockwatch run --listen 127.0.0.1:0 ARGS...`, its port read from the URL it prints.
struct Daemon {
  std::unique_ptr<test::Child> proc;
  std::uint16_t port = 0;

  /// `capture_log`: the daemon's log (stderr) is read with its stdout, for proc->wait_for_text.
  explicit Daemon(std::vector<std::string> args, bool capture_log = false);
  test::HttpReply get(const std::string& path) const { return test::http_get(port, path); }
  std::string metrics() const { return get("/metrics").body; }
};

/// The sum of every series of `name` whose labels include all of `labels` (nothing when none).
std::optional<double> metric(const std::string& text, const std::string& name, std::vector<std::string> labels = {});

/// Every label of every series in a scrape, as (name, value) with the value as printed
/// (escapes kept), in the order they appear.
std::vector<std::pair<std::string, std::string>> labels_of(const std::string& scrape);

/// A GET that gives up after `limit` (a daemon that stops answering costs the test no more),
/// with the time it took: `reply.status` is 0 when there was no complete reply in time.
struct TimedReply {
  test::HttpReply reply;
  double seconds = 0;
};
TimedReply timed_get(std::uint16_t port, const std::string& path, std::chrono::milliseconds limit);

/// A process's peak resident set (VmHWM) in KiB, from /proc/PID/status; nothing once it is gone.
std::optional<std::uint64_t> peak_rss_kib(pid_t pid);

/// Polls `ok` every 200 ms until it holds or the time is up.
bool eventually(const std::function<bool()>& ok, std::chrono::seconds timeout = std::chrono::seconds(30));

inline std::string target(const std::string& name) { return "target=\"" + name + "\""; }

/// `promtool check metrics` on a scrape; required when CI is set, skipped with a warning otherwise.
void check_promtool(const std::string& scrape);

}  // namespace lockwatch::e2e
