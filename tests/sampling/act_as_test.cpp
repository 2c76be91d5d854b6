// SPDX-License-Identifier: Apache-2.0
// attach.as target, from inside a real process (tests/sampling/act_as_probe.cpp) among real
// processes of two uids and of root: what the privileges it keeps reach, and what they do not.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <map>
#include <sstream>

#include "process.hpp"
#include "test_support.hpp"
#include "skip.hpp"

using namespace lockwatch;
using namespace std::chrono_literals;

namespace {

std::map<std::string, std::string> probe(int a, int b, int root) {
  // Under ASan no leak check: LeakSanitizer stops the world with ptrace, which the kernel
  // refuses once the probe has made itself non-dumpable (as attach.as target does).
  const auto r = test::run_command({"env", "ASAN_OPTIONS=detect_leaks=0", LOCKWATCH_ACT_AS_PROBE, std::to_string(a),
                                    std::to_string(b), std::to_string(root)}, 30s);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  std::map<std::string, std::string> out;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);)
    if (const auto eq = line.find('='); eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
  return out;
}

// A process of `uid`:`uid` with no capabilities, as a JVM container's would be.
std::unique_ptr<test::Child> as_user(unsigned uid) {
  return std::make_unique<test::Child>(std::vector<std::string>{
      "setpriv", "--reuid=" + std::to_string(uid), "--regid=" + std::to_string(uid), "--clear-groups",
      "--inh-caps=-all", "--bounding-set=-all", "sh", "-c", "echo READY; exec sleep 120"});
}

}  // namespace

TEST_CASE("attach.as target: each target's ids on one thread for one scope, nothing else reachable", "[act_as]") {
  if (::geteuid() != 0) {
    lockwatch::test::skip("attach.as target starts as root (the probe drops to 65534 and keeps CAP_SETUID/CAP_SETGID)");
    return;
  }
  auto a = as_user(10001), b = as_user(10002);
  auto root = std::make_unique<test::Child>(std::vector<std::string>{"sh", "-c", "echo READY; exec sleep 120"});
  REQUIRE(a->wait_for_line("READY", 10s));
  REQUIRE(b->wait_for_line("READY", 10s));
  REQUIRE(root->wait_for_line("READY", 10s));
  auto p = probe(a->pid(), b->pid(), root->pid());
  for (const auto& [k, v] : p) UNSCOPED_INFO(k << "=" << v);

  CHECK(p["start"] == "ok");
  // At rest: the idle ids everywhere, no supplementary group, no capability in effect, and only
  // CAP_SETUID + CAP_SETGID (bits 6 and 7) permitted.
  CHECK(p["idle_uid"] == "65534 65534 65534 65534");
  CHECK(p["idle_gid"] == "65534 65534 65534 65534");
  CHECK(p["idle_groups"].empty());
  CHECK(p["idle_cap_eff"] == "0000000000000000");
  CHECK(p["idle_cap_prm"] == "00000000000000c0");
  CHECK(p["no_new_privs"] == "1");
  CHECK(p["idle_root_a"] == "Permission denied");
  CHECK(p["idle_shadow"] == "Permission denied");
  CHECK(p["idle_kill_a"] == "Operation not permitted");
  // Acting as a's ids: a's /proc/PID/root and signals, and nothing of b's, root's or the host's.
  CHECK(p["act_a"] == "ok");
  CHECK(p["act_a_uid"] == "65534 10001 65534 10001");  // real, effective, saved, filesystem
  CHECK(p["act_a_cap_eff"] == "0000000000000000");
  CHECK(p["act_a_root_a"] == "ok");
  CHECK(p["act_a_root_b"] == "Permission denied");
  CHECK(p["act_a_root_root"] == "Permission denied");
  CHECK(p["act_a_environ_b"] == "Permission denied");
  CHECK(p["act_a_shadow"] == "Permission denied");
  CHECK(p["act_a_kill_a"] == "ok");
  CHECK(p["act_a_kill_b"] == "Operation not permitted");
  CHECK(p["act_a_kill_root"] == "Operation not permitted");
  CHECK(p["act_b_inside_a"] == "already acting as uid 10001 gid 10001, not as uid 10002 gid 10002");
  // Per thread: the other threads never hold a target's ids, and had their capabilities taken.
  CHECK(p["other_thread_during"] == "65534 65534 65534 65534 | 0000000000000000");
  CHECK(p["other_thread_after"] == "65534 65534 65534 65534 | 0000000000000000");
  // Given back at the end of the scope; root is never taken; b's scope reaches b.
  CHECK(p["after_uid"] == "65534 65534 65534 65534");
  CHECK(p["after_root_a"] == "Permission denied");
  CHECK(p["act_root"] == "the process runs as uid 0 gid 0: lockwatch never takes uid 0 or gid 0 (attach.as target)");
  CHECK(p["act_b_root_b"] == "ok");
}
