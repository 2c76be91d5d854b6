// SPDX-License-Identifier: Apache-2.0
// Wait seconds, holds in progress, holder activity and CPU deltas: synthetic sequences with
// known answers, and the real captured dumps of the scenario programs.
#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>

#include "analyze_command.hpp"
#include "lockwatch/analysis/lock_time.hpp"
#include "lockwatch/service/target_state.hpp"
#include "dump_records.hpp"
#include "test_support.hpp"

using namespace lockwatch;

namespace {

std::string header(const char* name, int id, double cpu_ms, const char* status) {
  std::string h = "\"";
  h.append(name).append("\" #").append(std::to_string(id)).append(" prio=5 os_prio=0 cpu=");
  h.append(std::to_string(cpu_ms)).append("ms elapsed=100.00s tid=0x").append(std::to_string(id));
  h.append(" nid=0x1 ").append(status).append("  [0x1]\n");
  return h;
}

std::string waiter(const char* name, int id, const char* address) {
  return header(name, id, 1.0, "waiting for monitor entry") + "   java.lang.Thread.State: BLOCKED (on object monitor)\n" +
         "\tat Inventory.reserve(Inventory.java:12)\n\t- waiting to lock <" + address + "> (a Inventory)\n" +
         "\tat Worker.run(Worker.java:5)\n\n";
}

// A holder whose top frames are given: the lock is taken by Inventory.reserve below them.
std::string holder(const char* name, int id, double cpu_ms, const char* address, const char* state,
                   const std::string& top) {
  return header(name, id, cpu_ms, "runnable") + "   java.lang.Thread.State: " + state + "\n" + top +
         "\tat Inventory.reserve(Inventory.java:12)\n\t- locked <" + address + "> (a Inventory)\n" +
         "\tat Worker.run(Worker.java:5)\n\n";
}

const std::string sleeping_top = "\tat java.lang.Thread.sleep(java.base@17/Native Method)\n\tat Inventory.recalculate(Inventory.java:20)\n";
const std::string spinning_top = "\tat Inventory.recalculate(Inventory.java:21)\n";
const std::string socket_top =
    "\tat sun.nio.ch.SocketDispatcher.read0(java.base@17/Native Method)\n\tat sun.nio.ch.NioSocketImpl.read(java.base@17/NioSocketImpl.java:1)\n"
    "\tat java.net.Socket$SocketInputStream.read(java.base@17/Socket.java:1)\n\tat Inventory.fetch(Inventory.java:30)\n";

model::ThreadDump dump(const std::string& threads) {
  return test::parse_one("Full thread dump x:\n\n" + threads + "JNI global refs: 1, weak refs: 0\n");
}

analysis::LockTimeSample add(analysis::LockTime& lt, const model::ThreadDump& d, double t, std::optional<std::int64_t> epoch) {
  return lt.add(d, analysis::build_lock_graph(d), t, epoch);
}

double wait_total(const analysis::LockTimeSample& s) {
  double sum = 0;
  for (const auto& [key, seconds] : s.wait_seconds) sum += seconds;
  return sum;
}

std::uint32_t activity_of(const analysis::LockTimeSample& s, analysis::HolderActivity a) {
  std::uint32_t n = 0;
  for (const auto& [key, count] : s.activity)
    if (key.activity == a) n += count;
  return n;
}

}  // namespace

TEST_CASE("lock time: each wait observation stands for the bounded gap to the previous sample", "[analysis][lock_time]") {
  analysis::LockTime lt;
  const auto d = dump(waiter("w1", 1, "0x10") + waiter("w2", 2, "0x10") + holder("h", 3, 5, "0x10", "RUNNABLE", spinning_top));
  CHECK(add(lt, d, 100, 1).weight_s == 0);  // the first sample has no gap: it stands for nothing
  for (double t : {101.0, 102.0, 103.0}) {
    const auto s = add(lt, d, t, 1);
    CHECK(s.weight_s == Approx(1.0));
    CHECK(wait_total(s) == Approx(2.0));  // two waiters x one second
  }
  // The sampler stalled for 27 s: the gap is capped at twice the median gap.
  const auto stalled = add(lt, d, 130, 1);
  CHECK(stalled.weight_s == Approx(2.0));
  CHECK(wait_total(stalled) == Approx(4.0));
  // Time going back (a clock step) adds nothing.
  CHECK(add(lt, d, 129, 1).weight_s == 0);
  const auto r = lt.report();
  REQUIRE(r.locks.size() == 1);
  CHECK(r.locks[0].wait_seconds == Approx(2.0 * (3 + 2)));
  CHECK(r.weighted_seconds == Approx(5.0));
}

TEST_CASE("lock time: a hold lasts while the same thread holds the same object at the same site", "[analysis][lock_time]") {
  analysis::LockTime lt;
  const auto at = [](const char* address, const char* holder_name, int id) {
    return dump(waiter("w1", 1, address) + holder(holder_name, id, 5, address, "TIMED_WAITING (sleeping)", sleeping_top));
  };
  CHECK(add(lt, at("0x10", "h", 3), 0, 7).holds.at(0).seconds == 0);
  auto s = add(lt, at("0x10", "h", 3), 2, 7);
  REQUIRE(s.holds.size() == 1);
  CHECK(s.holds[0].seconds == Approx(2));
  CHECK(s.holds[0].samples == 2);
  CHECK_FALSE(s.holds[0].by_key);
  CHECK(s.holds[0].key.site == "Inventory.reserve");
  // A GC ran (epoch 7 -> 8) and moved the object: followed by lock key, and said so.
  s = add(lt, at("0x20", "h", 3), 4, 8);
  CHECK(s.holds[0].seconds == Approx(4));
  CHECK(s.holds[0].by_key);
  // No GC, yet another address: another object, a new hold.
  s = add(lt, at("0x30", "h", 3), 6, 8);
  CHECK(s.holds[0].seconds == 0);
  // Another thread takes it: a new hold.
  s = add(lt, at("0x30", "other", 4), 8, 8);
  CHECK(s.holds[0].seconds == 0);
  const auto r = lt.report();
  REQUIRE_FALSE(r.longest_holds.empty());
  CHECK(r.longest_holds[0].seconds == Approx(4));
  CHECK(r.gc_breaks == 1);
}

TEST_CASE("lock time: without GC counters a hold is followed by lock key", "[analysis][lock_time]") {
  analysis::LockTime lt;
  const auto d1 = dump(waiter("w1", 1, "0x10") + holder("h", 3, 5, "0x10", "RUNNABLE", spinning_top));
  const auto d2 = dump(waiter("w1", 1, "0x99") + holder("h", 3, 900, "0x99", "RUNNABLE", spinning_top));
  add(lt, d1, 0, std::nullopt);
  const auto s = add(lt, d2, 1, std::nullopt);
  CHECK(s.holds.at(0).seconds == Approx(1));
  CHECK(s.holds.at(0).by_key);
  CHECK(lt.report().unknown_epochs == 1);
}

TEST_CASE("lock time: what the holder is doing", "[analysis][lock_time]") {
  using enum analysis::HolderActivity;
  const auto activity = [](const std::string& state, const std::string& top, double cpu_before, double cpu_after) {
    analysis::LockTime lt;
    add(lt, dump(waiter("w1", 1, "0x10") + holder("h", 3, cpu_before, "0x10", state.c_str(), top)), 0, 1);
    const auto s = add(lt, dump(waiter("w1", 1, "0x10") + holder("h", 3, cpu_after, "0x10", state.c_str(), top)), 1, 1);
    for (auto a : analysis::holder_activities)
      if (activity_of(s, a) > 0) return a;
    return unseen;
  };
  CHECK(activity("RUNNABLE", spinning_top, 10, 990) == running);
  CHECK(activity("TIMED_WAITING (sleeping)", sleeping_top, 10, 10) == sleeping);
  CHECK(activity("RUNNABLE", socket_top, 10, 11) == io);
  CHECK(activity("RUNNABLE", socket_top, 10, 900) == io);  // I/O frames on top decide, even with CPU
  // A holder BLOCKED on another lock waits.
  const std::string blocked_top = "\tat Ledger.post(Ledger.java:3)\n\t- waiting to lock <0x77> (a Ledger)\n";
  CHECK(activity("BLOCKED (on object monitor)", blocked_top, 10, 10) == waiting);
  // Printed BLOCKED yet holding the lock its waiters wait for, with no wait line: it has just
  // taken it (docs/analysis.md), so it runs.
  CHECK(activity("BLOCKED (on object monitor)", spinning_top, 10, 500) == running);

  // Waiters whose holder is not in the dump: unseen, once per lock.
  analysis::LockTime lt;
  const auto s = add(lt, dump(waiter("w1", 1, "0x10") + waiter("w2", 2, "0x10")), 0, 1);
  CHECK(activity_of(s, unseen) == 1);
  CHECK(activity_of(s, running) == 0);
}

TEST_CASE("lock time: I/O frames per JDK", "[analysis][lock_time]") {
  CHECK(analysis::is_io_frame("java.net.SocketInputStream.socketRead0"));   // JDK 8-12
  CHECK(analysis::is_io_frame("sun.nio.ch.NioSocketImpl.read"));            // JDK 13+
  CHECK(analysis::is_io_frame("java.io.FileOutputStream.writeBytes"));
  CHECK(analysis::is_io_frame("sun.nio.ch.UnixFileDispatcherImpl.write0")); // JDK 21+
  CHECK_FALSE(analysis::is_io_frame("java.lang.Thread.sleep"));
  CHECK_FALSE(analysis::is_io_frame("java.util.HashMap.get"));
}

TEST_CASE("lock time: CPU per pool from cpu= deltas", "[analysis][lock_time]") {
  analysis::LockTime lt;
  const auto at = [](double a, double b, double m) {
    return dump(header("pool-1-thread-1", 1, a, "runnable") + "   java.lang.Thread.State: RUNNABLE\n\tat Busy.spin(Busy.java:1)\n\n" +
                header("pool-1-thread-2", 2, b, "runnable") + "   java.lang.Thread.State: RUNNABLE\n\tat Busy.spin(Busy.java:1)\n\n" +
                header("main", 3, m, "waiting on condition") + "   java.lang.Thread.State: TIMED_WAITING (sleeping)\n\tat java.lang.Thread.sleep(Native Method)\n\n");
  };
  const auto first = add(lt, at(100, 200, 50), 0, 1);
  CHECK(first.cpu_printed);
  CHECK(first.pool_cpu_seconds.empty());  // nothing to compare with yet
  const auto second = add(lt, at(1100, 1700, 50), 1, 1);
  CHECK(second.pool_cpu_seconds.at("pool-1-thread-N") == Approx(2.5));
  CHECK(second.pool_cpu_seconds.at("main") == Approx(0));
  // A thread whose cpu= went back (a torn read) adds nothing.
  const auto third = add(lt, at(1000, 1800, 50), 2, 1);
  CHECK(third.pool_cpu_seconds.at("pool-1-thread-N") == Approx(0.1));

  const auto top = analysis::top_cpu_threads(at(100, 200, 50), at(1100, 1700, 50), 1.0, 2);
  REQUIRE(top.size() == 2);
  CHECK(top[0].thread == "pool-1-thread-2");
  CHECK(top[0].cpu_seconds == Approx(1.5));
  CHECK(top[0].pool == "pool-1-thread-N");
  CHECK(top[0].top_frames.at(0).starts_with("Busy.spin"));
  CHECK(top[1].cpu_seconds == Approx(1.0));
}

TEST_CASE("lock time: CPU deltas follow thread_identity(): #id, else the name", "[analysis][lock_time]") {
  // A VM thread prints no #id: it is known by its name. A thread named "#5" without an #id
  // has the identity "#5", the same as the thread with #id 5. Of two threads of one
  // identity the one listed last counts, as a map keyed by identity would keep it.
  const auto vm = [](const char* name, double cpu_ms) {
    return std::string("\"") + name + "\" os_prio=0 cpu=" + std::to_string(cpu_ms) + "ms elapsed=100.00s tid=0x9 nid=0x9 runnable  \n\n";
  };
  const auto named_like_id = [](double cpu_ms) {
    return "\"#5\" prio=5 os_prio=0 cpu=" + std::to_string(cpu_ms) + "ms elapsed=100.00s tid=0x8 nid=0x8 runnable  [0x1]\n" +
           "   java.lang.Thread.State: RUNNABLE\n\tat Busy.spin(Busy.java:1)\n\n";
  };
  const auto worker = header("worker", 5, 100, "runnable") + "   java.lang.Thread.State: RUNNABLE\n\tat Busy.spin(Busy.java:1)\n\n";
  analysis::LockTime lt;
  add(lt, dump(worker + vm("VM Thread", 10) + vm("dup", 10) + vm("dup", 20)), 0, 1);
  const auto second = add(lt, dump(named_like_id(400) + vm("VM Thread", 25) + vm("dup", 50)), 1, 1);
  CHECK(second.pool_cpu_seconds.at("#N") == Approx(0.3));  // "#5" is #5: 400 - 100 ms
  CHECK(second.pool_cpu_seconds.at("VM Thread") == Approx(0.015));
  CHECK(second.pool_cpu_seconds.at("dup") == Approx(0.030));  // against the later "dup" (20 ms)
  // Thread identities the other way round: #5 after a thread named "#5".
  const auto third = add(lt, dump(worker + vm("VM Thread", 25)), 2, 1);
  CHECK(third.pool_cpu_seconds.count("worker") == 0);  // 100 ms is less than the 400 ms before: a torn read, not counted
  CHECK(third.pool_cpu_seconds.at("VM Thread") == Approx(0));
}

TEST_CASE("lock time: dump timestamps", "[analysis][lock_time]") {
  CHECK(analysis::parse_dump_timestamp("1970-01-02 00:00:01") == Approx(86401));
  CHECK(*analysis::parse_dump_timestamp("2026-11-30 09:30:45") - *analysis::parse_dump_timestamp("2026-11-30 09:30:44") == Approx(1));
  CHECK_FALSE(analysis::parse_dump_timestamp("Full thread dump"));
  CHECK_FALSE(analysis::parse_dump_timestamp("2026-13-30 09:30:45"));
}

TEST_CASE("lock time: captured MonitorContention dumps", "[analysis][lock_time]") {
  analysis::LockTime lt;
  std::uint32_t observations = 0;
  double estimated = 0;
  std::uint32_t sleeping = 0;
  for (const char* name : {"dump-1.txt", "dump-2.txt", "dump-3.txt"}) {
    const auto d = test::parse_one(test::read_file(test::captured_dir() / "jdk17" / "MonitorContention" / name));
    const auto t = analysis::parse_dump_timestamp(d.timestamp);
    REQUIRE(t);
    const auto g = analysis::build_lock_graph(d);
    const auto s = lt.add(d, g, *t, 3);
    observations += static_cast<std::uint32_t>(g.waits.size());
    estimated += wait_total(s);
    sleeping += activity_of(s, analysis::HolderActivity::sleeping);
    // The holder sleeps 200 ms at a time and the lock changes hands: no hold spans two samples.
    REQUIRE(s.holds.size() == 1);
    CHECK(s.holds[0].seconds < 1.0);
  }
  CHECK(observations == 21);
  CHECK(estimated == Approx(14.0));  // the 14 observations of dumps 2 and 3, one second each
  CHECK(sleeping == 3);              // the holder is in Thread.sleep inside the lock each time
  const auto r = lt.report();
  REQUIRE_FALSE(r.locks.empty());
  CHECK(r.locks[0].key.lock_class == "Inventory");
  CHECK(r.locks[0].held == r.locks[0].samples);  // held in every sample: occupancy 1
}

TEST_CASE("lock time: captured ShortHolds dumps", "[analysis][lock_time]") {
  analysis::LockTime lt;
  for (int i = 1; i <= 10; ++i) {
    const auto d = test::parse_one(
        test::read_file(test::captured_dir() / "jdk17" / "ShortHolds" / ("dump-" + std::to_string(i) + ".txt")));
    lt.add(d, analysis::build_lock_graph(d), *analysis::parse_dump_timestamp(d.timestamp), 1);
  }
  const auto r = lt.report();
  REQUIRE_FALSE(r.locks.empty());
  for (const auto& l : r.locks) {
    CHECK(l.held <= l.samples);
    CHECK(l.samples <= 10);
  }
  CHECK(r.samples == 10);
  CHECK(r.weighted_seconds > 0);
  CHECK(r.weighted_seconds <= 21.0 + 1e-9);  // dump 1 to 10 span 21 s; weights never exceed the gaps
}

TEST_CASE("lock time: analyze prints wait seconds, occupancy, holds and activity", "[analysis][lock_time][report]") {
  const auto dir = (test::captured_dir() / "jdk17" / "MonitorContention").string();
  const std::string d1 = dir + "/dump-1.txt", d2 = dir + "/dump-2.txt", d3 = dir + "/dump-3.txt";
  for (const char* format : {"text", "json"}) {
    std::vector<std::string_view> args{"--format", format, d1, d2, d3};
    std::ostringstream out, err;
    REQUIRE(app::run_analyze(args, out, err) == 0);
    const auto text = out.str();
    INFO(text);
    if (std::string_view(format) == "text") {
      CHECK(text.find("Time lost waiting") != std::string::npos);
      CHECK(text.find("14.0 s  monitor Inventory at Inventory.reserve  held in 100% of 3 dumps") != std::string::npos);
      CHECK(text.find("monitor Inventory: sleeping 3") != std::string::npos);
    } else {
      CHECK(text.find("\"lock_time\":{\"samples\":3,\"weighted_seconds\":2") != std::string::npos);
      CHECK(text.find("\"wait_seconds\":14") != std::string::npos);
      CHECK(text.find("\"occupancy\":1") != std::string::npos);
      CHECK(text.find("\"sleeping\":3") != std::string::npos);
      CHECK(text.find("\"unknown_gc_epochs\":2") != std::string::npos);  // files carry no GC counters
    }
  }
}

TEST_CASE("lock time: a target's samples become wait seconds, hold gauges, activity and CPU totals", "[service][lock_time]") {
  service::TargetState t("Shop", {});
  const auto text = [](const char* address, double cpu_ms) {
    return "2026-11-30 09:30:44\nFull thread dump x:\n\n" + waiter("w1", 1, address) + waiter("w2", 2, address) +
           holder("pool-1-thread-1", 3, cpu_ms, address, "RUNNABLE", spinning_top) + "JNI global refs: 1, weak refs: 0\n";
  };
  sampling::JvmCounters gc;
  gc.gc_collections = 4;
  t.add_perf(gc, 99);
  t.add_dump(test::ok_dump(text("0x10", 100), 100, 0.01));
  t.add_dump(test::ok_dump(text("0x10", 600), 101, 0.01));
  gc.gc_collections = 5;  // a GC: the object moved, the hold is followed by key
  t.add_perf(gc, 101.5);
  t.add_dump(test::ok_dump(text("0x20", 1100), 102, 0.01));
  const auto m = t.take_metrics();
  const exporter::LockLabels waited{"monitor", "Inventory", "Inventory.reserve"};
  CHECK(m.totals.wait_microseconds.at(waited) == 4'000'000);  // 2 waiters x 1 s, twice
  CHECK(m.totals.holder_activity.at({"monitor", "Inventory", "running"}) == 3);
  CHECK(m.totals.pool_cpu_microseconds.at("pool-1-thread-N") == 1'000'000);
  REQUIRE(m.latest);
  CHECK(m.latest->lock_hold_seconds_max.at({"monitor", "Inventory", "Inventory.reserve"}) == Approx(2.0));
  const auto r = t.lock_time().report();
  CHECK(r.gc_breaks == 1);
  REQUIRE_FALSE(r.longest_holds.empty());
  CHECK(r.longest_holds[0].by_key);
}
