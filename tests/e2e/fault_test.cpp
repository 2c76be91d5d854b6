// SPDX-License-Identifier: Apache-2.0
// Faults around a running daemon, each on real processes: the daemon stays up, reports
// the fault as a labelled metric, never harms the JVM, and recovers.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <regex>
#include <thread>

#include "e2e_support.hpp"
#include "skip.hpp"

using namespace lockwatch;
using namespace lockwatch::e2e;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

bool alive(pid_t pid) { return ::kill(pid, 0) == 0; }

double ok_samples(const Daemon& d, const std::string& name) {
  return metric(d.metrics(), "lockwatch_samples_total", {target(name), "result=\"ok\""}).value_or(0);
}

/// MonitorContention sampled by `d`, whose incidents cannot be written: sampling goes on, the
/// failure is counted and logged, nothing counts as written, the daemon stays healthy.
void check_incident_not_written(const Daemon& d) {
  const auto counted = [&](const std::string& name) {
    return metric(d.metrics(), name, {target("MonitorContention")}).value_or(0);
  };
  REQUIRE(eventually([&] { return ok_samples(d, "MonitorContention") >= 8; }));
  CHECK(eventually([&] { return counted("lockwatch_incident_failures_total") >= 1; }));
  CHECK(counted("lockwatch_incidents_total") == 0);
  CHECK(d.proc->wait_for_text("msg=\"incident not written\" target=MonitorContention", 30s));
  CHECK(d.get("/healthz").status == 200);
}

fs::path quiet_config(const std::string& name, const std::string& extra = "") {
  const auto file = scratch(name) / "lockwatch.yaml";
  test::write_file(file, "interval: 200ms\ntimeout: 1s\ntargets:\n  rescan: 300ms\nincidents:\n  enabled: false\n" + extra);
  return file;
}

}  // namespace

TEST_CASE("fault: the app restarts under a new pid - discovery follows, the label stays", "[e2e][fault][jvm]") {
  // A marker in the command line keeps other JVMs on the machine out of the match.
  const std::string marker = "-Dlockwatch.e2e.restart=" + std::to_string(::getpid());
  auto first = start_jvm("LatchWait", {marker});
  Daemon d({"--config", quiet_config("restart").string(), "--match", marker});
  REQUIRE(eventually([&] { return ok_samples(d, "LatchWait") >= 2; }));
  const auto old_pid = std::to_string(first->pid());
  REQUIRE(d.get("/api/v1/targets").body.find("\"pid\":" + old_pid) != std::string::npos);
  first.reset();
  auto second = start_jvm("LatchWait", {marker});
  const auto new_pid = std::to_string(second->pid());
  REQUIRE(eventually([&] {
    const auto targets = d.get("/api/v1/targets").body;
    return targets.find("\"pid\":" + new_pid) != std::string::npos && targets.find("\"pid\":" + old_pid) == std::string::npos;
  }));
  CHECK(eventually([&] { return metric(d.metrics(), "lockwatch_target_up", {target("LatchWait")}) == 1.0; }));
}

TEST_CASE("fault: a JVM stopped longer than the timeout - no hang, timeouts counted, then recovery", "[e2e][fault][jvm]") {
  auto jvm = start_jvm("MonitorContention");
  Daemon d({"--config", quiet_config("stopped").string(), "--pid", std::to_string(jvm->pid())});
  REQUIRE(eventually([&] { return ok_samples(d, "MonitorContention") >= 2; }));
  REQUIRE(test::stop_process(jvm->pid()));
  CHECK(eventually([&] {
    return metric(d.metrics(), "lockwatch_samples_total", {target("MonitorContention"), "result=\"timeout\""}).value_or(0) >= 1;
  }));
  CHECK(d.get("/healthz").status == 200);
  CHECK(metric(d.metrics(), "lockwatch_target_up", {target("MonitorContention")}) == 0.0);
  ::kill(jvm->pid(), SIGCONT);
  const auto before = ok_samples(d, "MonitorContention");
  CHECK(eventually([&] { return ok_samples(d, "MonitorContention") > before; }));
}

// -Xrs takes SIGQUIT away from the JVM (a SIGQUIT would kill it) and makes it start its attach
// listener at startup instead: it is dumped without any signal. A non-JVM is refused unsignalled.
TEST_CASE("fault: -Xrs JVM and a non-JVM process are never signalled", "[e2e][fault][jvm][safety]") {
  auto xrs = start_jvm("MonitorContention", {"-Xrs"});
  test::Child sleeper({"sleep", "120"});
  Daemon d({"--config", quiet_config("nosignal").string(), "--pid", std::to_string(xrs->pid()), "--pid",
            std::to_string(sleeper.pid())});
  REQUIRE(eventually([&] {
    const auto m = d.metrics();
    return metric(m, "lockwatch_samples_total", {target("MonitorContention"), "result=\"ok\""}).value_or(0) >= 3 &&
           metric(m, "lockwatch_samples_total", {target("sleep"), "result=\"attach_refused\""}).value_or(0) >= 1;
  }));
  std::this_thread::sleep_for(1s);
  CHECK(alive(xrs->pid()));
  CHECK(alive(sleeper.pid()));
  CHECK(xrs->output().find("Full thread dump") == std::string::npos);
}

TEST_CASE("fault: the jstack backend without a JDK tool is tool_failed, not a crash", "[e2e][fault][jvm]") {
  auto jvm = start_jvm("LatchWait");
  Daemon d({"--config", quiet_config("nojstack", "jstack_path: /nonexistent/bin/jstack\n").string(), "--backend",
            "jstack", "--pid", std::to_string(jvm->pid())});
  CHECK(eventually([&] {
    return metric(d.metrics(), "lockwatch_samples_total", {target("LatchWait"), "result=\"tool_failed\""}).value_or(0) >= 1;
  }));
  CHECK(d.get("/healthz").status == 200);
}

TEST_CASE("fault: the attach socket deleted while sampling - the listener comes back, nothing spills", "[e2e][fault][jvm]") {
  auto jvm = start_jvm("LatchWait");
  Daemon d({"--config", quiet_config("socket").string(), "--pid", std::to_string(jvm->pid())});
  REQUIRE(eventually([&] { return ok_samples(d, "LatchWait") >= 2; }));
  const auto socket = fs::path("/proc") / std::to_string(jvm->pid()) / "root/tmp" / (".java_pid" + std::to_string(jvm->pid()));
  REQUIRE(fs::exists(socket));
  fs::remove(socket);
  const auto before = ok_samples(d, "LatchWait");
  CHECK(eventually([&] { return ok_samples(d, "LatchWait") >= before + 3; }));
  CHECK(jvm->output().find("Full thread dump") == std::string::npos);  // the re-trigger is not a dump request
}

TEST_CASE("fault: an incident directory that cannot be written - logged, counted as a failure, sampling goes on", "[e2e][fault][jvm]") {
  auto jvm = start_jvm("MonitorContention");
  const auto file = scratch("unwritable") / "lockwatch.yaml";
  test::write_file(file, "interval: 200ms\nincidents:\n  directory: /dev/null/incidents\n  blocked_threshold: 2\n  burst_count: 2\n");
  Daemon d({"--config", file.string(), "--pid", std::to_string(jvm->pid())}, true);
  check_incident_not_written(d);
}

TEST_CASE("fault: a full incident filesystem - the write fails cleanly and sampling goes on", "[e2e][fault][jvm]") {
  if (::geteuid() != 0) {
    test::skip("mounting a tiny tmpfs needs root");
    return;
  }
  const auto dir = scratch("full") / "incidents";
  fs::create_directories(dir);
  REQUIRE(::mount("lockwatch-full", dir.c_str(), "tmpfs", 0, "size=16k") == 0);
  struct Unmount {
    fs::path path;
    ~Unmount() { ::umount2(path.c_str(), MNT_DETACH); }
  } unmount{dir};
  auto jvm = start_jvm("MonitorContention");
  const auto file = dir.parent_path() / "lockwatch.yaml";
  test::write_file(file, "interval: 200ms\nincidents:\n  directory: " + dir.string() + "\n  blocked_threshold: 2\n  burst_count: 2\n");
  Daemon d({"--config", file.string(), "--pid", std::to_string(jvm->pid())}, true);
  check_incident_not_written(d);
  const auto before = ok_samples(d, "MonitorContention");
  CHECK(eventually([&] { return ok_samples(d, "MonitorContention") > before; }));
}
