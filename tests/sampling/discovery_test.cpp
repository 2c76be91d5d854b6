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
