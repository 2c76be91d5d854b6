// SPDX-License-Identifier: Apache-2.0
// Holder resolution across dumps. The addresses change between dumps like they do
// after a GC; identity is (kind, class, waiting site).
#include <catch2/catch.hpp>

#include "lockwatch/analysis/correlator.hpp"
#include "test_support.hpp"

using namespace lockwatch;

namespace {

std::string header(const char* name, int id, const char* status) {
  // Built with append: GCC 12 -O3 warns (-Wrestrict, a known false positive) on the '+' chain.
  std::string h = "\"";
  h.append(name).append("\" #").append(std::to_string(id)).append(" prio=5 os_prio=0 tid=0x");
  h.append(std::to_string(id)).append(" nid=0x1 ").append(status).append("  [0x1]\n");
  return h;
}

std::string waiter(const char* name, int id, const char* address) {
  return header(name, id, "waiting for monitor entry") + "   java.lang.Thread.State: BLOCKED (on object monitor)\n" +
         "\tat Inventory.reserve(Inventory.java:12)\n\t- waiting to lock <" + address + "> (a Inventory)\n" +
         "\tat Worker.run(Worker.java:5)\n\n";
}

std::string holder(const char* name, int id, const char* address) {
  return header(name, id, "waiting on condition") + "   java.lang.Thread.State: TIMED_WAITING (sleeping)\n" +
         "\tat java.lang.Thread.sleep(Native Method)\n\tat Inventory.recalculate(Inventory.java:20)\n" +
         "\t- locked <" + address + "> (a Inventory)\n\tat Worker.run(Worker.java:5)\n\n";
}

model::ThreadDump dump(const std::string& threads) {
  return test::parse_one("Full thread dump x:\n\n" + threads + "JNI global refs: 1, weak refs: 0\n");
}

}  // namespace

TEST_CASE("correlator: same dump, neighbouring dump, unresolved", "[analysis][correlator]") {
  analysis::Correlator c;
  c.add(dump(waiter("w1", 21, "0x10") + waiter("w2", 22, "0x10") + holder("h", 30, "0x10")), 0);
  c.add(dump(waiter("w1", 21, "0x20")), 1);  // the holder let go between safepoints
  c.add(dump(waiter("w1", 21, "0x30")), 2);
  c.add(dump(waiter("w1", 21, "0x40")), 3);  // two dumps away from the last holder sighting
  const auto r = c.report();
  REQUIRE(r.locks.size() == 1);
  const auto& l = r.locks[0];
  CHECK(l.key.kind == analysis::LockKind::monitor);
  CHECK(l.key.lock_class == "Inventory");
  CHECK(l.key.site == "Inventory.reserve");
  CHECK(l.max_waiters == 2);
  CHECK(l.wait_observations == 5);
  CHECK(l.dumps_seen == 4);
  CHECK(r.resolution.same_dump == 2);
  CHECK(r.resolution.correlated == 1);
  CHECK(r.resolution.unresolved == 2);
  REQUIRE(l.holders.size() == 1);
  CHECK(l.holders[0].site == "Inventory.recalculate");  // the frame printing "- locked"
  CHECK(l.holders[0].busy_at == "Inventory.recalculate");
  CHECK(l.holders[0].thread == "h");
  CHECK(l.holders[0].observations == 2);  // seen in dump 0, and lent to dump 1
}

TEST_CASE("correlator: a wider window resolves more", "[analysis][correlator]") {
  analysis::Correlator c({3, 2});
  c.add(dump(holder("h", 30, "0x10") + waiter("w1", 21, "0x10")), 0);
  c.add(dump(waiter("w1", 21, "0x20")), 1);
  c.add(dump(waiter("w1", 21, "0x30")), 2);
  const auto r = c.report();
  CHECK(r.resolution.same_dump == 1);
  CHECK(r.resolution.correlated == 2);
  CHECK(r.resolution.unresolved == 0);
}

TEST_CASE("correlator: a holder found by address in a neighbouring dump", "[analysis][correlator]") {
  analysis::Correlator c;
  c.add(dump(holder("h", 30, "0x10")), 0);   // nobody waits yet: only the held lock is known
  c.add(dump(waiter("w1", 21, "0x10")), 1);
  const auto r = c.report();
  CHECK(r.resolution.correlated == 1);
  REQUIRE(r.locks.at(0).holders.size() == 1);
  CHECK(r.locks[0].holders[0].thread == "h");
}

// A name is reused from the dump before only when it is the same text at the same place: a
// thread renamed in place, a name back after a dump under another, and an empty name in the
// very first dump are each their own.
TEST_CASE("correlator: each dump's waiters and holders by their own names", "[analysis][correlator]") {
  analysis::Correlator c({3, 1});
  c.add(dump(waiter("", 21, "0x10") + holder("h", 30, "0x10")), 0);
  c.add(dump(waiter("w1", 21, "0x10") + holder("h", 30, "0x10")), 1);
  c.add(dump(waiter("w2", 21, "0x10") + holder("h2", 30, "0x10")), 2);
  c.add(dump(waiter("w1", 21, "0x10") + holder("h2", 30, "0x10")), 3);
  c.add(dump(waiter("w1", 21, "0x10") + holder("h", 30, "0x10")), 4);
  const auto r = c.report();
  REQUIRE(r.locks.size() == 1);
  const auto& per_dump = r.locks[0].per_dump;
  REQUIRE(per_dump.size() == 5);
  const std::vector<std::string> waiters{"", "w1", "w2", "w1", "w1"}, holders{"h", "h", "h2", "h2", "h"};
  for (std::size_t i = 0; i < per_dump.size(); ++i) {
    INFO("dump " << i);
    CHECK(per_dump[i].waiters == std::vector<std::string>{waiters[i]});
    CHECK(per_dump[i].holders == std::vector<std::string>{holders[i]});
  }
}

TEST_CASE("correlator: threads stuck on one lock over consecutive dumps", "[analysis][correlator]") {
  analysis::Correlator c({3, 1});
  c.add(dump(waiter("w1", 21, "0x10") + waiter("w2", 22, "0x10")), 0);
  c.add(dump(waiter("w1", 21, "0x10")), 1);
  c.add(dump(waiter("w1", 21, "0x10") + waiter("w2", 22, "0x10")), 2);
  const auto r = c.report();
  REQUIRE(r.stuck.size() == 1);
  CHECK(r.stuck[0].thread == "w1");
  CHECK(*r.stuck[0].java_id == 21);
  CHECK(r.stuck[0].samples == 3);
  CHECK(r.stuck[0].lock.site == "Inventory.reserve");
}

TEST_CASE("correlator: dump summaries count states and every thread entry", "[analysis][correlator]") {
  analysis::Correlator c;
  c.add(dump(waiter("w1", 21, "0x10") + holder("h", 30, "0x10") +
             "\"VM Thread\" os_prio=0 tid=0x5 nid=0x6 runnable  \n\n"),
        0);
  const auto r = c.report();
  const auto& s = r.dumps.at(0);
  CHECK(s.threads == 3);
  CHECK(s.java_threads == 2);
  CHECK(s.states.at(model::ThreadState::blocked) == 1);
  CHECK(s.states.at(model::ThreadState::timed_waiting) == 1);
  CHECK(s.contending_threads == 1);
  CHECK(s.complete);
}

namespace {

std::vector<std::string> short_holds_dumps() {
  std::vector<std::string> out;
  for (const auto& f : test::files_below(test::captured_dir() / "jdk17" / "ShortHolds"))
    if (f.filename().string().starts_with("dump-")) out.push_back(test::read_file(f));
  return out;
}

}  // namespace

TEST_CASE("correlator: per-dump tallies add up to the report's totals", "[analysis][correlator]") {
  const auto dumps = short_holds_dumps();
  REQUIRE(dumps.size() >= 5);
  analysis::Correlator c;
  for (std::size_t i = 0; i < dumps.size(); ++i) c.add(test::parse_one(dumps[i]), static_cast<double>(i));
  const auto report = c.report();
  analysis::ResolutionCounts sum;
  std::map<analysis::LockKey, std::uint64_t> waits;
  std::uint64_t holder_observations = 0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    const auto t = c.tally(i);
    sum.same_dump += t.resolution.same_dump, sum.correlated += t.resolution.correlated, sum.unresolved += t.resolution.unresolved;
    for (const auto& [key, n] : t.waiters) waits[key] += n;
    for (const auto& [key, n] : t.holders) holder_observations += n;
  }
  CHECK(sum.same_dump == report.resolution.same_dump);
  CHECK(sum.correlated == report.resolution.correlated);
  CHECK(sum.unresolved == report.resolution.unresolved);
  std::uint64_t reported_holders = 0;
  for (const auto& lock : report.locks) {
    CHECK(waits[lock.key] == lock.wait_observations);
    for (const auto& h : lock.holders) reported_holders += h.observations;
  }
  CHECK(holder_observations == reported_holders);
  CHECK(holder_observations > 0);
}

TEST_CASE("correlator: a bounded window keeps the newest dumps and drops old strings", "[analysis][correlator]") {
  const auto dumps = short_holds_dumps();
  REQUIRE(dumps.size() >= 6);
  analysis::CorrelatorOptions bounded;
  bounded.max_samples = 3;
  analysis::Correlator window(bounded), last3;
  for (std::size_t i = 0; i < dumps.size(); ++i) window.add(test::parse_one(dumps[i]), static_cast<double>(i));
  for (std::size_t i = dumps.size() - 3; i < dumps.size(); ++i) last3.add(test::parse_one(dumps[i]), static_cast<double>(i));
  CHECK(window.size() == 3);
  const auto a = window.report(), b = last3.report();
  REQUIRE(a.locks.size() == b.locks.size());
  for (std::size_t i = 0; i < a.locks.size(); ++i) {
    CHECK(a.locks[i].key == b.locks[i].key);
    CHECK(a.locks[i].wait_observations == b.locks[i].wait_observations);
    CHECK(a.locks[i].holders.size() == b.locks[i].holders.size());
  }
  CHECK(a.resolution.correlated == b.resolution.correlated);
  // Compaction ran (every max_samples adds): the pool holds no more than a fresh one needs.
  CHECK(window.pooled_strings() <= last3.pooled_strings() + 8);
}

TEST_CASE("correlator: a byte bound keeps the newest dumps, and holders still resolve", "[analysis][correlator][security]") {
  // 2 000 waiters per dump: ~0.3 MiB each in the correlator, most of it their names.
  std::string threads = holder("owner", 1, "0x1");
  std::vector<std::string> names;
  for (int i = 0; i < 2000; ++i) names.push_back("w" + std::to_string(i));
  for (int i = 0; i < 2000; ++i) threads += waiter(names[static_cast<std::size_t>(i)].c_str(), 10 + i, "0x1");
  const auto d = dump(threads);
  analysis::Correlator unbounded({3, 1, 100, 0});
  analysis::Correlator bounded({3, 1, 100, 1024 * 1024});
  for (int i = 0; i < 40; ++i) unbounded.add(d, i), bounded.add(d, i);
  CHECK(unbounded.size() == 40);
  CHECK(bounded.size() < 40);
  CHECK(bounded.size() >= 2);
  CHECK(bounded.bytes() <= 1024 * 1024);
  CHECK(bounded.evictions() == 40 - bounded.size());
  const auto last = bounded.tally(bounded.size() - 1);
  CHECK(last.resolution.same_dump == 2000);
  CHECK(last.waiters.begin()->second == 2000);
}

TEST_CASE("correlator: thousands of unresolved waiters resolve from a neighbour by key", "[analysis][correlator]") {
  // Waiters without a holder in their own dump find it in the neighbour through the
  // sample's key index (one lookup each, not a scan of the neighbour's waiters).
  std::string lone;
  for (int i = 0; i < 3000; ++i) lone += waiter(("w" + std::to_string(i)).c_str(), 10 + i, "0x2");
  analysis::Correlator c({3, 1, 0, 0});
  c.add(dump(lone), 0);
  c.add(dump(holder("owner", 1, "0x1") + waiter("x", 5, "0x1")), 1);
  const auto first = c.tally(0);
  CHECK(first.resolution.correlated == 3000);
}
