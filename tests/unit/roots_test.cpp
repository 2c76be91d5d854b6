// SPDX-License-Identifier: Apache-2.0
// Chains of waits and their root: the holder of A waits for B, so A's waiters wait behind B.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <vector>

#include "lockwatch/analysis/correlator.hpp"
#include "lockwatch/analysis/roots.hpp"
#include "test_support.hpp"

using namespace lockwatch;

namespace {

std::string thread(const char* name, int id, const char* state, const char* frames) {
  std::string t = "\"";
  t.append(name).append("\" #").append(std::to_string(id)).append(" prio=5 os_prio=0 tid=0x1 nid=0x1 waiting  [0x1]\n");
  t.append("   java.lang.Thread.State: ").append(state).append("\n").append(frames).append("\n");
  return t;
}

// w1 and w2 wait for Inventory; its holder h1 waits for Ledger; Ledger's holder h2 sleeps.
std::string chain_dump() {
  const char* inventory_waiter =
      "\tat Inventory.reserve(Inventory.java:12)\n\t- waiting to lock <0x000000000000000a> (a Inventory)\n\tat Worker.run(Worker.java:5)\n";
  return "Full thread dump x:\n\n" + thread("w1", 1, "BLOCKED (on object monitor)", inventory_waiter) +
         thread("w2", 2, "BLOCKED (on object monitor)", inventory_waiter) +
         thread("h1", 3, "BLOCKED (on object monitor)",
                "\tat Ledger.post(Ledger.java:3)\n\t- waiting to lock <0x000000000000000b> (a Ledger)\n"
                "\tat Inventory.reserve(Inventory.java:14)\n\t- locked <0x000000000000000a> (a Inventory)\n\tat Worker.run(Worker.java:5)\n") +
         thread("h2", 4, "TIMED_WAITING (sleeping)",
                "\tat java.lang.Thread.sleep(Native Method)\n\tat Ledger.post(Ledger.java:4)\n"
                "\t- locked <0x000000000000000b> (a Ledger)\n\tat Worker.run(Worker.java:5)\n") +
         "JNI global refs: 1, weak refs: 0\n";
}

}  // namespace

TEST_CASE("roots: a chain of two locks ends at the lock whose holder runs", "[analysis][roots]") {
  // Waits 0 and 1 are for lock 10, held by the thread of wait 2, which waits for lock 20.
  const auto r = analysis::find_roots({2u, 2u, std::nullopt}, {10, 10, 20});
  CHECK(r.transitive == std::map<std::uint32_t, std::uint32_t>{{10, 2}, {20, 3}});
  REQUIRE(r.chains.size() == 1);
  CHECK(r.chains[0].locks == std::vector<std::uint32_t>{10, 20});
  CHECK(r.chains[0].waiters == 3);
  CHECK_FALSE(r.chains[0].deadlock);
}

TEST_CASE("roots: a cycle has no root and counts each thread once", "[analysis][roots]") {
  const auto r = analysis::find_roots({1u, 0u, 0u}, {1, 2, 2});
  CHECK(r.transitive == std::map<std::uint32_t, std::uint32_t>{{1, 3}, {2, 3}});
  REQUIRE_FALSE(r.chains.empty());
  CHECK(r.chains[0].deadlock);
}

TEST_CASE("roots: waits without waiting holders make no chain", "[analysis][roots]") {
  const auto r = analysis::find_roots({std::nullopt, std::nullopt, std::nullopt}, {7, 7, 8});
  CHECK(r.transitive == std::map<std::uint32_t, std::uint32_t>{{7, 2}, {8, 1}});
  CHECK(r.chains.empty());
}

TEST_CASE("roots: the correlator names the chain and counts transitive waiters", "[analysis][roots][correlator]") {
  analysis::Correlator c;
  c.add(test::parse_one(chain_dump()), 0);
  const auto t = c.tally(0);
  const analysis::LockKey inventory{analysis::LockKind::monitor, "Inventory", "Inventory.reserve"};
  const analysis::LockKey ledger{analysis::LockKind::monitor, "Ledger", "Ledger.post"};
  CHECK(t.waiters.at(inventory) == 2);
  CHECK(t.waiters.at(ledger) == 1);
  CHECK(t.transitive.at(inventory) == 2);
  CHECK(t.transitive.at(ledger) == 3);  // h1 directly, w1 and w2 behind h1
  const auto& chains = c.summary(0).chains;
  REQUIRE(chains.size() == 1);
  CHECK(chains[0].locks == std::vector<analysis::LockKey>{inventory, ledger});
  CHECK(chains[0].waiters == 3);
  CHECK_FALSE(chains[0].deadlock);
}

TEST_CASE("roots: captured deadlocks are chains without a root", "[analysis][roots]") {
  for (const char* jdk : {"jdk17", "jdk25"})
    for (const char* scenario : {"MonitorDeadlock", "JucDeadlock"}) {
      INFO(jdk << " " << scenario);
      analysis::Correlator c;
      c.add(test::parse_one(test::read_file(test::captured_dir() / jdk / scenario / "dump-1.txt")), 0);
      const auto& chains = c.summary(0).chains;
      REQUIRE_FALSE(chains.empty());
      CHECK(chains[0].deadlock);
      CHECK(chains[0].locks.size() >= 2);
    }
}

TEST_CASE("roots: a captured pool without chains counts direct waiters only", "[analysis][roots]") {
  analysis::Correlator c;
  c.add(test::parse_one(test::read_file(test::captured_dir() / "jdk17" / "ReentrantLockPool" / "dump-1.txt")), 0);
  const auto t = c.tally(0);
  CHECK(c.summary(0).chains.empty());
  CHECK(t.transitive == t.waiters);
}

TEST_CASE("roots: each thread counts once per lock of its chain, on random graphs", "[analysis][roots]") {
  // Against a count of the distinct (lock, wait) pairs of every walk: long chains, cycles,
  // chains past the hop limit and locks met twice in one chain.
  std::mt19937 random(7);
  for (std::uint32_t round = 0; round < 300; ++round) {
    const std::uint32_t waits = 1 + static_cast<std::uint32_t>(random() % 200);
    const std::uint32_t locks = 1 + static_cast<std::uint32_t>(random() % (round % 3 == 0 ? 3 : 40));
    std::vector<std::optional<std::uint32_t>> next(waits);
    std::vector<std::uint32_t> lock(waits);
    for (std::uint32_t w = 0; w < waits; ++w) {
      lock[w] = static_cast<std::uint32_t>(random() % locks);
      // In half the rounds a chain to the next wait, so some chains pass the 64 hops.
      if (random() % 8 != 0) next[w] = round % 2 == 0 ? (w + 1) % waits : static_cast<std::uint32_t>(random() % waits);
    }
    std::set<std::pair<std::uint32_t, std::uint32_t>> behind;
    for (std::uint32_t w = 0; w < waits; ++w) {
      std::vector<std::uint32_t> seen;
      for (std::optional<std::uint32_t> at = w; at && seen.size() < 64; at = next[*at]) {
        if (std::find(seen.begin(), seen.end(), *at) != seen.end()) break;
        seen.push_back(*at);
        behind.emplace(lock[*at], w);
      }
    }
    std::map<std::uint32_t, std::uint32_t> expected;
    for (const auto& [l, w] : behind) ++expected[l];
    INFO("round " << round);
    CHECK(analysis::find_roots(next, lock).transitive == expected);
  }
}
