// SPDX-License-Identifier: Apache-2.0
// Discovery on a fixture /proc tree and on this machine's real /proc with real JVMs.
#include <catch2/catch.hpp>

#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <thread>

#include "lockwatch/sampling/discovery.hpp"
#include "process.hpp"
#include "test_support.hpp"

using namespace lockwatch;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

// A /proc entry with what discovery reads: status, stat, cmdline, and optionally an
// hsperfdata file in the process's own /tmp.
void fake_process(const fs::path& proc, int pid, int nspid, std::uint64_t start, const std::string& cmd, bool jvm) {
  const auto dir = proc / std::to_string(pid);
  test::write_file(dir / "status", "Name:\tjava\nUid:\t1000\t1000\t1000\t1000\nGid:\t1000\t1000\t1000\t1000\nNSpid:\t" +
                                       std::to_string(pid) + "\t" + std::to_string(nspid) + "\n");
  test::write_file(dir / "stat", std::to_string(pid) + " (java) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 30 0 " +
                                     std::to_string(start) + " 0 0\n");
  std::string with_nuls = cmd;
  std::replace(with_nuls.begin(), with_nuls.end(), ' ', '\0');
  test::write_file(dir / "cmdline", with_nuls + std::string(1, '\0'));
  if (jvm) test::write_file(dir / "root" / "tmp" / "hsperfdata_app" / std::to_string(nspid), "x");
}

}  // namespace

TEST_CASE("procfs: the start time comes from the leader task's stat where the tree has one", "[discovery]") {
  const auto proc = fs::temp_directory_path() / ("lockwatch-proc-task-" + std::to_string(::getpid()));
  fs::remove_all(proc);
  fake_process(proc, 4242, 1, 5000, "java -jar shop.jar", true);
  const sampling::ProcFs fs_proc(proc.string());
  CHECK(fs_proc.start_time(4242) == 5000u);  // a copy of /proc without task directories
  test::write_file(proc / "4242" / "task" / "4242" / "stat", "4242 (java) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 30 0 5100 0 0\n");
  CHECK(fs_proc.start_time(4242) == 5100u);
  fs::remove_all(proc);
}

TEST_CASE("discovery: JVMs of a fixture /proc, namespace pids, filters", "[discovery]") {
  const auto proc = fs::temp_directory_path() / ("lockwatch-proc-" + std::to_string(::getpid()));
  fs::remove_all(proc);
  fake_process(proc, 4242, 1, 5000, "java -jar shop.jar", true);          // a sidecar's view: nspid 1
  fake_process(proc, 4300, 7, 6000, "java -cp x com.acme.Billing", true);
  fake_process(proc, 4400, 4400, 7000, "python3 app.py", false);          // no hsperfdata: not a JVM
  test::write_file(proc / "self" / "status", "ignored");
  sampling::ProcFs fs_proc(proc.string());

  auto all = sampling::discover_jvms(fs_proc);
  REQUIRE(all.size() == 2);
  CHECK(all[0].id == sampling::TargetId{4242, 5000});
  CHECK(all[0].nspid == 1);
  CHECK(all[0].cmdline == "java -jar shop.jar");
  CHECK(all[0].perfdata_path == (proc / "4242/root/tmp/hsperfdata_app/1").string());

  sampling::DiscoveryFilter billing;
  billing.cmdline = std::regex("Billing");
  auto matched = sampling::discover_jvms(fs_proc, billing);
  REQUIRE(matched.size() == 1);
  CHECK(matched[0].id.pid == 4300);

  sampling::DiscoveryFilter by_pid;
  by_pid.pids = {4400, 4242, 999};
  auto picked = sampling::discover_jvms(fs_proc, by_pid);
  REQUIRE(picked.size() == 1);
  CHECK(picked[0].id.pid == 4242);
  fs::remove_all(proc);
}

// A rescan reads only the start time of a JVM it found before: a container forking thousands
// of processes with hsperfdata files costs one small read each, not a probe each.
TEST_CASE("discovery: a rescan remembers the JVMs it found, probes the rest, and tells a reused pid", "[discovery]") {
  const auto proc = fs::temp_directory_path() / ("lockwatch-proc-scan-" + std::to_string(::getpid()));
  fs::remove_all(proc);
  fake_process(proc, 4242, 1, 5000, "java -jar shop.jar", true);
  fake_process(proc, 4400, 4400, 7000, "sh -c exec-java", false);
  sampling::ProcFs fs_proc(proc.string());
  sampling::Discovery discovery;

  auto first = discovery.scan(fs_proc);
  REQUIRE(first.size() == 1);
  CHECK(first[0].id == sampling::TargetId{4242, 5000});
  CHECK(discovery.known() == 1);

  // Remembered: the same process (pid and start time) is not probed again, so a change to
  // what a probe reads does not show. A JVM does not change these while it runs.
  test::write_file(proc / "4242" / "cmdline", std::string("changed") + '\0');
  // Probed again: the process that was no JVM now is one (exec java keeps pid and start time).
  test::write_file(proc / "4400" / "root" / "tmp" / "hsperfdata_app" / "4400", "x");
  auto second = discovery.scan(fs_proc);
  REQUIRE(second.size() == 2);
  CHECK(second[0].cmdline == "java -jar shop.jar");
  CHECK(second[1].id == sampling::TargetId{4400, 7000});

  // The filter applies to what is remembered, too.
  sampling::DiscoveryFilter shop;
  shop.cmdline = std::regex("shop");
  auto filtered = discovery.scan(fs_proc, shop);
  REQUIRE(filtered.size() == 1);
  CHECK(filtered[0].id.pid == 4242);
  CHECK(discovery.known() == 2);

  // A reused pid (another start time) is a new process: probed, and here no JVM.
  fake_process(proc, 4242, 1, 9000, "python3 app.py", false);
  fs::remove_all(proc / "4242" / "root");
  auto third = discovery.scan(fs_proc);
  REQUIRE(third.size() == 1);
  CHECK(third[0].id.pid == 4400);

  // In steps, one process at a time: the same result once the last step says so.
  discovery.begin(fs_proc);
  int steps = 1;
  while (discovery.step(fs_proc, 1)) ++steps;
  CHECK(steps == 2);  // two processes under the fixture's /proc
  auto stepped = discovery.result();
  REQUIRE(stepped.size() == 1);
  CHECK(stepped[0].id.pid == 4400);

  // A process gone is forgotten.
  fs::remove_all(proc / "4400");
  CHECK(discovery.scan(fs_proc).empty());
  CHECK(discovery.known() == 0);
  fs::remove_all(proc);
}

TEST_CASE("discovery: a real JVM is found, a restart is a new target", "[discovery][jvm]") {
  const fs::path classes = fs::path(LOCKWATCH_SCENARIO_CLASSES) / "jdk17";
  const std::string java = (fs::path(LOCKWATCH_JDK17_HOME) / "bin" / "java").string();
  sampling::ProcFs proc;
  sampling::DiscoveryFilter mine;
  mine.cmdline = std::regex("LatchWait 97");  // this test's JVMs only
  sampling::TargetId first;
  {
    test::Child jvm({java, "-Xmx32m", "-cp", classes.string(), "LatchWait", "97"});
    REQUIRE(jvm.wait_for_line("READY", 60s));
    auto found = sampling::discover_jvms(proc, mine);
    REQUIRE(found.size() == 1);
    CHECK(found[0].id.pid == jvm.pid());
    CHECK(found[0].id.start_time > 0);
    first = found[0].id;
    test::Child sleeper({"sleep", "30"});
    CHECK_FALSE(sampling::discover_pid(proc, sleeper.pid()));  // not a JVM
    ::kill(jvm.pid(), SIGTERM);                                   // a clean exit removes its hsperfdata
    for (int i = 0; i < 100 && sampling::discover_pid(proc, jvm.pid()); ++i) std::this_thread::sleep_for(50ms);
  }
  test::Child again({java, "-Xmx32m", "-cp", classes.string(), "LatchWait", "97"});
  REQUIRE(again.wait_for_line("READY", 60s));
  auto found = sampling::discover_jvms(proc, mine);
  REQUIRE(found.size() == 1);
  CHECK(found[0].id != first);
}
