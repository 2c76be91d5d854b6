// SPDX-License-Identifier: Apache-2.0
// The wait-for graph on real dumps, checked against what the dump text says.
#include <catch2/catch.hpp>

#include <algorithm>

#include "lockwatch/analysis/lock_graph.hpp"
#include "lockwatch/analysis/pools.hpp"
#include "lockwatch/analysis/sites.hpp"
#include "test_support.hpp"

using namespace lockwatch;
using analysis::LockKind;

namespace {

model::ThreadDump corpus(const char* name) {
  const auto path = test::corpus_dir() / name;
  if (!std::filesystem::exists(path)) FAIL("corpus file missing: " << path);
  return test::parse_one(test::read_file(path));
}

std::string name_of(const model::ThreadDump& d, std::uint32_t t) { return std::string(d.threads[t].name); }

}  // namespace

TEST_CASE("lock graph: 30 crawler threads blocked on one FrontierScheduler (JDK 6)", "[analysis][graph]") {
  const auto d = corpus("tda-jdk1.6-urlthread.log");
  const auto g = analysis::build_lock_graph(d);
  const auto on_scheduler = std::count_if(g.waits.begin(), g.waits.end(), [](const auto& w) {
    return w.lock_class == "org.archive.crawler.postprocessor.FrontierScheduler";
  });
  CHECK(on_scheduler == 30);
  for (const auto& w : g.waits) {
    if (w.lock_class != "org.archive.crawler.postprocessor.FrontierScheduler") continue;
    CHECK(w.kind == LockKind::monitor);
    CHECK(w.site == "org.archive.crawler.postprocessor.FrontierScheduler.innerProcess");  // the frame printing the wait
    REQUIRE(w.holder);
    CHECK(name_of(d, *w.holder).starts_with("ToeThread #18: "));
  }
  auto held = std::find_if(g.held.begin(), g.held.end(), [](const auto& h) { return h.address == 0xd5bada80; });
  REQUIRE(held != g.held.end());
  CHECK(held->site == "org.archive.crawler.postprocessor.FrontierScheduler.innerProcess");
}

TEST_CASE("lock graph: a monitor deadlock the JVM reported (JDK 8)", "[analysis][graph][deadlock]") {
  const auto d = corpus("mcnullty-jdk8u172-deadlock-l.txt");
  const auto g = analysis::build_lock_graph(d);
  REQUIRE(g.deadlocks.size() == 1);
  const auto& c = g.deadlocks[0];
  CHECK(c.found_in_graph);
  CHECK(c.reported_by_jvm);
  std::vector<std::string> names;
  for (auto t : c.threads) names.push_back(name_of(d, t));
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"Thread-0", "Thread-1"});
  CHECK(c.kinds == std::vector<LockKind>{LockKind::monitor, LockKind::monitor});
}

TEST_CASE("lock graph: a j.u.c. deadlock the JVM did not report (JDK 7, -l)", "[analysis][graph][deadlock]") {
  const auto d = corpus("dumpling-jdk7-synchronizer-deadlock.log");
  REQUIRE(d.jvm_deadlocks.empty());
  const auto g = analysis::build_lock_graph(d);
  REQUIRE(g.deadlocks.size() == 1);
  CHECK(g.deadlocks[0].found_in_graph);
  CHECK_FALSE(g.deadlocks[0].reported_by_jvm);
  CHECK(g.deadlocks[0].kinds == std::vector<LockKind>{LockKind::park, LockKind::park});
}

TEST_CASE("lock graph: JDK 25 dumps with several deadlocks, all cross-checked", "[analysis][graph][deadlock]") {
  for (const char* file : {"jthreaddump-jdk25-complex-4deadlocks.txt", "jthreaddump-jdk25-many-virtual-threads.txt"}) {
    INFO(file);
    const auto d = corpus(file);
    const auto g = analysis::build_lock_graph(d);
    CHECK(g.deadlocks.size() == d.jvm_deadlocks.size());
    for (const auto& c : g.deadlocks) {
      CHECK(c.found_in_graph);
      CHECK(c.reported_by_jvm);
    }
  }
}

TEST_CASE("lock graph: JDK 9-11 re-lock lines of WAITING threads are not contention", "[analysis][graph]") {
  for (const char* file : {"dumpling-jdk11.0.2.log", "dumpling-jdk9-ea.log", "danneville-jdk11.0.1-pubsub-l.txt"}) {
    INFO(file);
    const auto d = corpus(file);
    CHECK(analysis::build_lock_graph(d).waits.empty());
  }
}

TEST_CASE("lock graph: a BLOCKED thread showing '- locked' is the holder", "[analysis][graph]") {
  // The holder pattern of the Provider.getService incident: the owner had just acquired
  // the monitor and still printed BLOCKED. Stacks as published in the field report.
  const auto d = test::parse_one(
      "Full thread dump x:\n\n"
      "\"http-nio-8401-exec-884\" #86813 daemon prio=5 os_prio=0 tid=0x00007f2868073000 nid=0x559e waiting for monitor entry [0x00007f2800c6d000]\n"
      "   java.lang.Thread.State: BLOCKED (on object monitor)\n"
      "\tat java.security.Provider.getService(Provider.java:1035)\n"
      "\t- waiting to lock <0x000000071ab1a5d8> (a sun.security.provider.Sun)\n"
      "\tat sun.security.jca.ProviderList.getService(ProviderList.java:332)\n\n"
      "\"http-nio-8401-exec-890\" #86930 daemon prio=5 os_prio=0 tid=0x00007f28680a5800 nid=0x561d waiting for monitor entry [0x00007f2800263000]\n"
      "   java.lang.Thread.State: BLOCKED (on object monitor)\n"
      "\tat java.security.Provider.getService(Provider.java:1035)\n"
      "\t- locked <0x000000071ab1a5d8> (a sun.security.provider.Sun)\n"
      "\tat sun.security.jca.ProviderList.getService(ProviderList.java:332)\n\n");
  const auto g = analysis::build_lock_graph(d);
  REQUIRE(g.waits.size() == 1);
  CHECK(g.waits[0].site == "java.security.Provider.getService");
  REQUIRE(g.waits[0].holder);
  CHECK(name_of(d, *g.waits[0].holder) == "http-nio-8401-exec-890");
}

TEST_CASE("sites: the first frame that is not lock plumbing", "[analysis][sites]") {
  CHECK(analysis::is_lock_plumbing("java.util.concurrent.locks.LockSupport.park"));
  CHECK(analysis::is_lock_plumbing("jdk.internal.misc.Unsafe.park"));
  CHECK(analysis::is_lock_plumbing("java.util.concurrent.CountDownLatch.await"));
  CHECK(analysis::is_lock_plumbing("java.lang.Object.wait0"));
  CHECK(analysis::is_lock_plumbing("java.lang.System$1.parkVirtualThread"));  // JDK 21+ virtual threads
  CHECK_FALSE(analysis::is_lock_plumbing("java.security.Provider.getService"));
  CHECK_FALSE(analysis::is_lock_plumbing("Contention.borrow"));
  CHECK(analysis::is_idle_blocker("java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject"));
  CHECK(analysis::is_idle_blocker("java.util.concurrent.SynchronousQueue$TransferStack"));
  CHECK_FALSE(analysis::is_idle_blocker("java.util.concurrent.locks.ReentrantLock$NonfairSync"));
  CHECK_FALSE(analysis::is_idle_blocker("java.util.concurrent.CountDownLatch$Sync"));
}

TEST_CASE("sites: dump_to_file frames name the same method as jstack frames", "[analysis][sites]") {
  CHECK(model::frame_method("java.base/jdk.internal.misc.Unsafe.park(Native Method)") == "jdk.internal.misc.Unsafe.park");
  CHECK(model::frame_method("app//Main.run(Main.java:3)") == "Main.run");
  CHECK(model::frame_method("Foo$$Lambda/0x0000000800c0b2d8.run(Unknown Source)") == "Foo$$Lambda/0x0000000800c0b2d8.run");
  CHECK(model::frame_method("Foo$$Lambda$1/471910020.run(Unknown Source)") == "Foo$$Lambda$1/471910020.run");
  CHECK(model::frame_class("java.lang.Thread.sleep(java.base@17.0.15/Native Method)") == "java.lang.Thread");
}

TEST_CASE("pools: names grouped by their closing number", "[analysis][pools]") {
  CHECK(analysis::pool_of("http-nio-8401-exec-884") == "http-nio-8401-exec-N");
  CHECK(analysis::pool_of("C2 CompilerThread0") == "C2 CompilerThreadN");
  CHECK(analysis::pool_of("AtmostOneTaskExecutor[x] [#15]") == "AtmostOneTaskExecutor[x] [#N]");
  CHECK_FALSE(analysis::pool_of("main"));
  CHECK_FALSE(analysis::pool_of("1234"));
  CHECK_FALSE(analysis::pool_of("Jenkins UDP 33848 monitoring thread"));
  const auto d = corpus("jthreaddump-jdk25-many-virtual-threads.txt");
  const auto pools = analysis::group_pools(d);
  REQUIRE_FALSE(pools.empty());
  CHECK(pools[0].pool == "ForkJoinPool-1-worker-N");
  for (const auto& p : pools) CHECK(p.threads >= 2);
}

namespace {

// A holder of `locks` distinct monitors (each re-entered once further down the stack) and a
// thread BLOCKED on the first of them: the shape of a hostile dump with 200 000 lock lines.
std::string many_locks_dump(int locks, std::string_view waiter_name = "waiter") {
  std::string d = "Full thread dump OpenJDK 64-Bit Server VM (17.0.15+6 mixed mode):\n\n";
  d += "\"holder\" #10 prio=5 os_prio=0 tid=0x1 nid=0x10 runnable [0x0]\n   java.lang.Thread.State: RUNNABLE\n";
  for (int i = 0; i < locks; ++i) d += "\tat A.inner(A.java:1)\n\t- locked <0x" + std::to_string(1000 + i) + "> (a java.lang.Object)\n";
  for (int i = 0; i < locks; ++i) d += "\tat A.outer(A.java:2)\n\t- locked <0x" + std::to_string(1000 + i) + "> (a java.lang.Object)\n";
  d += "\n\"";
  d += waiter_name;
  d += "\" #11 prio=5 os_prio=0 tid=0x2 nid=0x11 waiting for monitor entry [0x0]\n"
       "   java.lang.Thread.State: BLOCKED (on object monitor)\n"
       "\tat B.run(B.java:3)\n\t- waiting to lock <0x1000> (a java.lang.Object)\n\nJNI global refs: 1, weak refs: 0\n";
  return d;
}

}  // namespace

TEST_CASE("lock graph: re-entered monitors count once, at the outermost frame", "[analysis][graph]") {
  const auto d = test::parse_one(many_locks_dump(3));
  const auto g = analysis::build_lock_graph(d);
  REQUIRE(g.held.size() == 3);
  for (const auto& h : g.held) CHECK(h.site == "A.outer");
  REQUIRE(g.waits.size() == 1);
  REQUIRE(g.waits[0].holder);
  CHECK(name_of(d, *g.waits[0].holder) == "holder");
}

TEST_CASE("lock graph: tens of thousands of lock lines in one thread are resolved, bounded", "[analysis][graph][security]") {
  // 2 x 20 000 lock lines: within the parser's per-thread bound of 4096 only the first
  // 4096 survive (counted), and the graph still names the holder of the contended one.
  const auto d = test::parse_one(many_locks_dump(20'000));
  CHECK(d.stats.locks_dropped == 40'000 - 4096);
  const auto g = analysis::build_lock_graph(d);
  CHECK(g.held.size() == 4096);
  REQUIRE(g.waits.size() == 1);
  REQUIRE(g.waits[0].holder);
  CHECK(name_of(d, *g.waits[0].holder) == "holder");
}

TEST_CASE("lock graph: a 70 KB thread name still makes a BLOCKED waiter", "[analysis][graph][security]") {
  const std::string name(70'000, 'n');
  const auto d = test::parse_one(many_locks_dump(1, name));
  REQUIRE(d.threads.size() == 2);
  CHECK(d.threads[1].state == model::ThreadState::blocked);
  CHECK(d.threads[1].name.size() < 64 * 1024);
  const auto g = analysis::build_lock_graph(d);
  REQUIRE(g.waits.size() == 1);
  CHECK(g.waits[0].thread == 1);
}
