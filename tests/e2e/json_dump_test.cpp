// SPDX-License-Identifier: Apache-2.0
// The JSON thread dump end to end: the daemon's `dump_format: auto` on JDK 25 and JDK 17
// JVMs, the fallback to Thread.print when the JVM cannot write its file, `lockwatch dump
// --format json`, and a hostile JVM that swaps the file for a symlink or a FIFO.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <regex>
#include <thread>

#include "e2e_support.hpp"

using namespace lockwatch;
using namespace lockwatch::e2e;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

const fs::path classes_root = LOCKWATCH_SCENARIO_CLASSES;
bool have_jdk25() { return fs::exists(classes_root / "jdk25" / "VirtualThreads.class"); }
#define REQUIRE_JDK25()                                                            \
  if (!have_jdk25()) {                                                             \
    WARN("SKIPPED: no Temurin 25 at " LOCKWATCH_JDK25_HOME " (or its scenarios)"); \
    return;                                                                        \
  }

std::unique_ptr<test::Child> virtual_threads_jvm(std::vector<std::string> flags = {"-Xmx64m"}) {
  return start_jvm_of(LOCKWATCH_JDK25_HOME, "jdk25", "VirtualThreads", std::move(flags), {"300"});
}

fs::path daemon_config(const std::string& name, pid_t pid, const std::string& extra) {
  const auto dir = scratch("json-" + name);
  const auto file = dir / "lockwatch.yaml";
  test::write_file(file, "interval: 300ms\ntimeout: 10s\nincidents:\n  enabled: false\ntargets:\n  pids: [" +
                             std::to_string(pid) + "]\n  rescan: 1s\n" + extra);
  return file;
}

/// The text of the target's latest sample through the API; "" when there is none yet.
std::string latest_sample(const Daemon& d, const std::string& label) {
  const auto samples = d.get("/api/v1/targets/" + label + "/samples").body;
  std::string last;
  static const std::regex id(R"("id":(\d+))");
  for (std::sregex_iterator it(samples.begin(), samples.end(), id), end; it != end; ++it)
    last = (*it)[1].str();
  return last.empty() ? "" : d.get("/api/v1/targets/" + label + "/samples/" + last).body;
}

const std::string ro_tmp_shell = "mount -t tmpfs -o size=16m,mode=1777 lockwatch-test-tmp /tmp && exec \"$0\" \"$@\"";

/// lockwatch_fake_jvm in a json mode, READY; SIGTERM when it goes, so it removes its files.
struct FakeJvm {
  std::unique_ptr<test::Child> proc;
  explicit FakeJvm(std::vector<std::string> args) {
    args.insert(args.begin(), LOCKWATCH_FAKE_JVM);
    args.insert(args.end(), {"--cwd", scratch("json-fake-cwd").string()});
    proc = std::make_unique<test::Child>(args);
    if (!proc->wait_for_line("READY", 60s)) FAIL("the fake JVM did not get ready: " << proc->output());
  }
  ~FakeJvm() {
    ::kill(proc->pid(), SIGTERM);
    std::this_thread::sleep_for(300ms);
  }
};

const fs::path our_dir = fs::path("/tmp") / (".lockwatch-" + std::to_string(::geteuid()));

}  // namespace

TEST_CASE("json: auto takes JSON from a JDK 25 JVM with virtual threads, virtual waiters in the scrape",
          "[e2e][jvm][json]") {
  REQUIRE_JDK25();
  auto jvm = virtual_threads_jvm();
  const auto dir = scratch("json-auto");
  Daemon d({"--pid", std::to_string(jvm->pid()), "--interval", "300ms", "--incident-dir", dir.string()}, true);
  const auto t = target("VirtualThreads");
  // metrics-vt-2,3 are BLOCKED on the MetricsRegistry monitor while unmounted: no Thread.print
  // shows them, so waiters there come from JSON samples.
  REQUIRE(eventually([&] {
    return metric(d.metrics(), "lockwatch_lock_waiters", {t, "kind=\"monitor\"", "lock_class=\"MetricsRegistry\""}).value_or(0) >= 2;
  }, 60s));
  REQUIRE(eventually([&] {
    return metric(d.metrics(), "lockwatch_lock_waiters",
                  {t, "kind=\"park\"", "lock_class=\"java.util.concurrent.locks.ReentrantLock$NonfairSync\"",
                   "site=\"SessionStore.update\""}).value_or(0) >= 3;
  }, 30s));
  CHECK(d.proc->wait_for_text("form=json", 5s));
  const auto text = latest_sample(d, "VirtualThreads");
  CHECK(text.find("\"threadDump\"") != std::string::npos);
  CHECK(text.find("\"metrics-vt-1\"") != std::string::npos);
}

TEST_CASE("json: a JDK 17 target stays on Thread.print under auto", "[e2e][jvm][json]") {
  auto jvm = start_jvm("MonitorContention");
  const auto dir = scratch("json-jdk17");
  Daemon d({"--pid", std::to_string(jvm->pid()), "--interval", "200ms", "--incident-dir", dir.string()}, true);
  REQUIRE(eventually([&] { return metric(d.metrics(), "lockwatch_samples_total", {"result=\"ok\""}).value_or(0) >= 4; }));
  CHECK(d.proc->wait_for_text("JDK 17 has no JSON thread dump", 5s));
  d.proc->wait_for_text("\x01 never logged", 0s);  // read what was logged so far
  CHECK(d.proc->output().find("form=print") != std::string::npos);
  CHECK(d.proc->output().find("form=json") == std::string::npos);
  CHECK(metric(d.metrics(), "lockwatch_samples_total", {"result=\"dump_file_failed\""}).value_or(0) == 0);
  CHECK(latest_sample(d, "MonitorContention").find("Full thread dump") != std::string::npos);
  CHECK(metric(d.metrics(), "lockwatch_lock_waiters", {target("MonitorContention"), "lock_class=\"Inventory\""}).value_or(0) >= 5);
}

TEST_CASE("json: a read-only /tmp - dump_file_failed, logged, then Thread.print samples", "[e2e][jvm][json][readonly]") {
  REQUIRE_JDK25();
  if (::geteuid() != 0) {
    WARN("SKIPPED: a mount namespace with a read-only /tmp needs root");
    return;
  }
  std::vector<std::string> argv{"unshare", "-m", "--propagation", "private", "sh", "-c", ro_tmp_shell,
                                std::string(LOCKWATCH_JDK25_HOME) + "/bin/java", "-Xmx64m", "-XX:+StartAttachListener",
                                "-XX:-UsePerfData", "-cp", (classes_root / "jdk25").string(), "VirtualThreads", "300"};
  test::Child jvm(argv);
  REQUIRE(jvm.wait_for_line("READY", 90s));
  const auto pid = std::to_string(jvm.pid());
  for (int i = 0; i < 50 && !fs::exists("/proc/" + pid + "/root/tmp/.java_pid" + pid); ++i) std::this_thread::sleep_for(100ms);
  const auto remount = test::run_command({"nsenter", "-t", pid, "-m", "mount", "-o", "remount,ro", "/tmp"}, 30s);
  INFO(remount.err);
  REQUIRE(remount.exit_code == 0);
  Daemon d({"--config", daemon_config("readonly", jvm.pid(), "dump_format: json\n").string()}, true);
  // The failed sample is counted under its own outcome (the scrape shows it once the result
  // label lists dump_file_failed; any non-ok result until then) and logged with the JVM's error.
  REQUIRE(d.proc->wait_for_text("outcome=dump_file_failed", 60s));
  CHECK(d.proc->wait_for_text("JSON thread dump failed", 5s));
  CHECK(d.proc->output().find("Read-only file system") != std::string::npos);
  REQUIRE(eventually([&] { return metric(d.metrics(), "lockwatch_samples_total", {"result=\"ok\""}).value_or(0) >= 3; }, 60s));
  // Within the fallback time every later sample is a Thread.print: one failure in all.
  const auto m = d.metrics();
  const auto t = target("VirtualThreads");
  CHECK(metric(m, "lockwatch_samples_total", {t}).value_or(0) - metric(m, "lockwatch_samples_total", {t, "result=\"ok\""}).value_or(0) == 1);
  CHECK(latest_sample(d, "VirtualThreads").find("Full thread dump") != std::string::npos);
}

TEST_CASE("json: lockwatch dump --format json, and analyze on its output", "[e2e][jvm][json]") {
  REQUIRE_JDK25();
  auto jvm = virtual_threads_jvm();
  const auto r = test::run_command({lockwatch_binary(), "dump", "--format", "json", "--pid", std::to_string(jvm->pid())}, 60s);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.starts_with("{"));
  CHECK(r.out.find("\"metrics-vt-1\"") != std::string::npos);
  const auto file = scratch("json-dump") / "dump.json";
  test::write_file(file, r.out);
  const auto report = test::run_command({lockwatch_binary(), "analyze", file.string()}, 60s);
  INFO(report.err);
  CHECK(report.exit_code == 0);
  CHECK(report.out.find("MetricsRegistry") != std::string::npos);
  const auto usage = test::run_command({lockwatch_binary(), "dump", "--format", "yaml", "--pid", "1"}, 10s);
  CHECK(usage.exit_code == 2);
  CHECK(usage.err.find("--format takes print or json") != std::string::npos);
}

TEST_CASE("json: the dump file swapped for a symlink between write and read is refused", "[e2e][hostile][json]") {
  const auto secret = scratch("json-symlink") / "secret.txt";
  test::write_file(secret, "SECRET-MARKER-7f3a\n");
  FakeJvm fake({"--mode", "json-symlink", "--link-target", secret.string()});
  const auto r = test::run_command({LOCKWATCH_BINARY, "dump", "--format", "json", "--pid", std::to_string(fake.proc->pid())}, 30s);
  INFO(r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("untrusted") != std::string::npos);
  CHECK(r.err.find("symbolic link") != std::string::npos);
  CHECK(r.out.find("SECRET-MARKER") == std::string::npos);
  CHECK(fs::exists(secret));  // the link was removed, not what it names
  std::size_t left = 0;
  for (const auto& e : fs::directory_iterator(our_dir))
    if (fs::is_symlink(e.symlink_status())) ++left;
  CHECK(left == 0);
}

TEST_CASE("json: the dump file swapped for a FIFO is refused at once, never waited on", "[e2e][hostile][json]") {
  FakeJvm fake({"--mode", "json-fifo"});
  const auto started = std::chrono::steady_clock::now();
  const auto r = test::run_command({LOCKWATCH_BINARY, "dump", "--format", "json", "--timeout", "20s", "--pid",
                                    std::to_string(fake.proc->pid())}, 60s);
  const auto took = std::chrono::steady_clock::now() - started;
  INFO(r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("untrusted") != std::string::npos);
  CHECK(r.err.find("not a regular file") != std::string::npos);
  CHECK(took < 10s);  // far below the 20 s timeout: the open did not wait for a writer
  std::size_t fifos = 0;
  for (const auto& e : fs::directory_iterator(our_dir))
    if (fs::is_fifo(e.symlink_status())) ++fifos;
  CHECK(fifos == 0);
}

TEST_CASE("json: attach.as target - a JVM of another user dumped as JSON with its ids", "[e2e][jvm][json][act_as]") {
  REQUIRE_JDK25();
  if (::geteuid() != 0) {
    WARN("SKIPPED: attach.as target needs root with CAP_SETUID and CAP_SETGID");
    return;
  }
  const test::ReadableCopy readable(classes_root / "jdk25", "json-act-as");
  test::Child jvm({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                   std::string(LOCKWATCH_JDK25_HOME) + "/bin/java", "-Xmx64m", "-cp", readable.path().string(),
                   "VirtualThreads", "300"});
  REQUIRE(jvm.wait_for_line("READY", 90s));
  const auto dir = fs::path("/proc") / std::to_string(jvm.pid()) / "root/tmp/.lockwatch-65534";
  // Between targets lockwatch is neither root nor the JVM's user: every JSON step that touches
  // the JVM's /tmp must run with the JVM's ids.
  Daemon d({"--config", daemon_config("act-as", jvm.pid(),
                                      "dump_format: json\nattach:\n  as: target\n  idle_uid: 23456\n  idle_gid: 23456\n").string()},
           true);
  const auto t = target("VirtualThreads");
  const bool waiters = eventually([&] {
    return metric(d.metrics(), "lockwatch_lock_waiters", {t, "kind=\"monitor\"", "lock_class=\"MetricsRegistry\""}).value_or(0) >= 2;
  }, 60s);
  CHECK(d.proc->wait_for_text("form=json", 5s));
  d.proc->wait_for_text("\x01 never logged", 0s);  // read what was logged so far
  INFO(d.proc->output());
  REQUIRE(waiters);
  CHECK(d.proc->output().find("attaching as each target") != std::string::npos);
  CHECK(d.proc->output().find("outcome=") == std::string::npos);  // no sample failed
  struct stat st {};
  REQUIRE(::lstat(dir.c_str(), &st) == 0);
  CHECK(st.st_uid == 65534);
  CHECK((st.st_mode & 07777) == 0700);
  std::size_t left = 0;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".json") ++left;
  CHECK(left <= 1);  // at most the dump in flight right now
}
