// SPDX-License-Identifier: Apache-2.0
// The wait-for graph on real dumps, checked against what the dump text says.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "lockwatch/analysis/lock_graph.hpp"
#include "lockwatch/analysis/pools.hpp"
#include "lockwatch/analysis/sites.hpp"
#include "lockwatch/parser/dump_parser.hpp"
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

TEST_CASE("pools: a namer tells a pool of the last one apart as pool_of does", "[analysis][pools]") {
  // Names one after another, with runs, returns to an earlier pool, names outside a pool in
  // between, and pools alike but for where their number is.
  const std::vector<std::string> names{"w-1",   "w-2",    "main", "w-3",   "x-1",    "w-4",    "w-4]", "w-5]",   "wN-1",
                                       "w-N1",  "a1",     "a12",  "aN1",   "aN",     "1",      "",     "w-1 ]", "w-2 ]",
                                       "w-2)]", "pool-1", "pool-2", "pool1", "pool12", "p-1-t-2", "p-1-t-3", "p-2-t-3"};
  analysis::PoolNamer namer;
  std::optional<std::string> last;  // pool_of of the last name with a pool
  for (const auto& name : names) {
    INFO(name);
    bool same = true;
    const std::string* pool = namer.pool(name, same);
    const auto expected = analysis::pool_of(name);
    REQUIRE(bool(pool) == bool(expected));
    if (!expected) {
      CHECK_FALSE(same);
      continue;
    }
    CHECK(*pool == *expected);
    CHECK(same == (last && *last == *expected));
    last = expected;
  }
}

TEST_CASE("pools: group_pools counts as one pool_of per thread does, on every real dump", "[analysis][pools]") {
  std::size_t dumps = 0;
  for (const auto& dir : {test::corpus_dir(), test::captured_dir()}) {
    for (const auto& file : test::files_below(dir)) {
      for (const auto& dump : lockwatch::parser::parse_dumps(test::read_file(file))) {
        INFO(file.string());
        std::map<std::string, analysis::PoolStates> expected;
        for (const auto& t : dump.threads) {
          const auto pool = t.is_java() ? analysis::pool_of(t.name) : std::nullopt;
          if (!pool) continue;
          auto& p = expected[*pool];
          p.pool = *pool;
          ++p.threads;
          if (t.state != model::ThreadState::none) ++p.states[t.state];
        }
        std::map<std::string, analysis::PoolStates> grouped;
        for (const auto& p : analysis::group_pools(dump)) grouped[p.pool] = p;
        std::erase_if(expected, [](const auto& e) { return e.second.threads < 2; });
        REQUIRE(grouped.size() == expected.size());
        for (const auto& [name, p] : expected) {
          INFO(name);
          CHECK(grouped[name].threads == p.threads);
          CHECK(grouped[name].states == p.states);
        }
        ++dumps;
      }
    }
  }
  CHECK(dumps > 50);
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

namespace {

std::string thread_block(std::string_view name, int id, std::string_view state, std::string_view body) {
  std::string t = "\"";
  t.append(name).append("\" #").append(std::to_string(id)).append(" prio=5 os_prio=0 tid=0x1 nid=0x").append(std::to_string(id));
  t.append(" waiting on condition [0x0]\n   java.lang.Thread.State: ").append(state).append("\n").append(body).append("\n");
  return t;
}

model::ThreadDump dump_of(const std::string& threads) {
  return test::parse_one("Full thread dump OpenJDK 64-Bit Server VM (17.0.15+6 mixed mode):\n\n" + threads + "JNI global refs: 1, weak refs: 0\n");
}

constexpr std::string_view pool2_borrow =
    "\tat jdk.internal.misc.Unsafe.park(Native Method)\n"
    "\t- parking to wait for  <0x00000000ffe00010> (a java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject)\n"
    "\tat java.util.concurrent.locks.LockSupport.park(LockSupport.java:341)\n"
    "\tat java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject.await(AbstractQueuedSynchronizer.java:1623)\n"
    "\tat org.apache.commons.pool2.impl.LinkedBlockingDeque.takeFirst(LinkedBlockingDeque.java:1324)\n"
    "\tat org.apache.commons.pool2.impl.GenericObjectPool.borrowObject(GenericObjectPool.java:306)\n"
    "\tat redis.clients.jedis.util.Pool.getResource(Pool.java:50)\n"
    "\tat Handler.run(Handler.java:10)\n";

constexpr std::string_view idle_worker =
    "\tat jdk.internal.misc.Unsafe.park(Native Method)\n"
    "\t- parking to wait for  <0x00000000ffe00020> (a java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject)\n"
    "\tat java.util.concurrent.locks.LockSupport.park(LockSupport.java:341)\n"
    "\tat java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject.await(AbstractQueuedSynchronizer.java:1623)\n"
    "\tat java.util.concurrent.LinkedBlockingQueue.take(LinkedBlockingQueue.java:435)\n"
    "\tat java.util.concurrent.ThreadPoolExecutor.getTask(ThreadPoolExecutor.java:1062)\n"
    "\tat java.util.concurrent.ThreadPoolExecutor.runWorker(ThreadPoolExecutor.java:1122)\n"
    "\tat java.util.concurrent.ThreadPoolExecutor$Worker.run(ThreadPoolExecutor.java:635)\n"
    "\tat java.lang.Thread.run(Thread.java:840)\n";

constexpr std::string_view queue_consumer =
    "\tat jdk.internal.misc.Unsafe.park(Native Method)\n"
    "\t- parking to wait for  <0x00000000ffe00030> (a java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject)\n"
    "\tat java.util.concurrent.locks.LockSupport.park(LockSupport.java:341)\n"
    "\tat java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject.await(AbstractQueuedSynchronizer.java:1623)\n"
    "\tat java.util.concurrent.LinkedBlockingQueue.take(LinkedBlockingQueue.java:435)\n"
    "\tat com.hazelcast.spi.impl.operationexecutor.impl.DefaultOperationQueue.take(DefaultOperationQueue.java:20)\n"
    "\tat com.hazelcast.spi.impl.operationexecutor.impl.OperationThread.run(OperationThread.java:10)\n";

}  // namespace

TEST_CASE("lock graph: a starved pool's borrowers wait for a resource, idle workers do not", "[analysis][graph][resource]") {
  std::string threads;
  for (int i = 0; i < 4; ++i) threads += thread_block("dubbo-handler-" + std::to_string(i), 10 + i, "WAITING (parking)", pool2_borrow);
  for (int i = 0; i < 3; ++i) threads += thread_block("pool-1-thread-" + std::to_string(i), 20 + i, "WAITING (parking)", idle_worker);
  threads += thread_block("hz.operation.thread-1", 30, "WAITING (parking)", queue_consumer);
  const auto d = dump_of(threads);
  const auto g = analysis::build_lock_graph(d);
  REQUIRE(g.waits.size() == 4);  // the borrowers only
  for (const auto& w : g.waits) {
    CHECK(w.kind == LockKind::resource);
    CHECK(w.lock_class == "org.apache.commons.pool2.impl.LinkedBlockingDeque");  // not "ConditionObject"
    CHECK(w.site == "org.apache.commons.pool2.impl.GenericObjectPool.borrowObject");
    CHECK_FALSE(w.holder);
    CHECK(name_of(d, w.thread).starts_with("dubbo-handler-"));
  }
}

TEST_CASE("lock graph: a request awaiting a latch or a future waits for a resource", "[analysis][graph][resource]") {
  const auto d = dump_of(thread_block("http-nio-8080-exec-1", 10, "WAITING (parking)",
                                      "\tat jdk.internal.misc.Unsafe.park(Native Method)\n"
                                      "\t- parking to wait for  <0x00000000ffe00040> (a java.util.concurrent.CountDownLatch$Sync)\n"
                                      "\tat java.util.concurrent.locks.LockSupport.park(LockSupport.java:211)\n"
                                      "\tat java.util.concurrent.CountDownLatch.await(CountDownLatch.java:230)\n"
                                      "\tat OrderDao.query(OrderDao.java:12)\n"
                                      "\tat OrderServlet.doGet(OrderServlet.java:5)\n"));
  const auto g = analysis::build_lock_graph(d);
  REQUIRE(g.waits.size() == 1);
  CHECK(g.waits[0].kind == LockKind::resource);
  CHECK(g.waits[0].lock_class == "java.util.concurrent.CountDownLatch$Sync");
  CHECK(g.waits[0].site == "OrderDao.query");
}

TEST_CASE("lock graph: JDK 8's notified waiter re-entering a monitor waits for it, and holds nothing", "[analysis][graph]") {
  // JDK <= 8 print a thread woken by notify() as BLOCKED with "- waiting on <A>"; the
  // "- locked <A>" below Object.wait is the monitor it gave up, not one it holds.
  const auto d = dump_of(
      thread_block("consumer", 10, "BLOCKED (on object monitor)",
                   "\tat java.lang.Object.wait(Native Method)\n\t- waiting on <0x00000000ffe00050> (a Mailbox)\n"
                   "\tat java.lang.Object.wait(Object.java:502)\n\tat Mailbox.take(Mailbox.java:9)\n"
                   "\t- locked <0x00000000ffe00050> (a Mailbox)\n\tat Consumer.run(Consumer.java:4)\n") +
      thread_block("producer", 11, "RUNNABLE", "\tat Mailbox.put(Mailbox.java:20)\n\t- locked <0x00000000ffe00050> (a Mailbox)\n\tat Producer.run(Producer.java:4)\n"));
  const auto g = analysis::build_lock_graph(d);
  REQUIRE(g.waits.size() == 1);
  CHECK(name_of(d, g.waits[0].thread) == "consumer");
  CHECK(g.waits[0].lock_class == "Mailbox");
  CHECK(g.waits[0].site == "Mailbox.take");
  REQUIRE(g.waits[0].holder);
  CHECK(name_of(d, *g.waits[0].holder) == "producer");
  CHECK(std::none_of(g.held.begin(), g.held.end(), [](const auto& h) { return h.thread == 0; }));
}

TEST_CASE("lock graph: BLOCKED in class loading without a wait line is a waiter of the loader", "[analysis][graph]") {
  const auto d = dump_of(
      thread_block("nioEventLoopGroup-2-1", 10, "BLOCKED (on object monitor)",
                   "\tat java.lang.ClassLoader.loadClass(ClassLoader.java:525)\n\tat Codec.decode(Codec.java:7)\n"
                   "\tat io.netty.channel.nio.NioEventLoop.run(NioEventLoop.java:500)\n") +
      thread_block("nioEventLoopGroup-2-2", 11, "RUNNABLE",
                   "\tat SlowLoader.findClass(SlowLoader.java:30)\n\tat java.lang.ClassLoader.loadClass(ClassLoader.java:592)\n"
                   "\t- locked <0x00000000ffe00060> (a SlowLoader)\n\tat java.lang.ClassLoader.loadClass(ClassLoader.java:525)\n"
                   "\tat Codec.decode(Codec.java:7)\n"));
  const auto g = analysis::build_lock_graph(d);
  REQUIRE(g.waits.size() == 1);
  CHECK(g.waits[0].lock_class == "SlowLoader");
  CHECK(g.waits[0].site == "Codec.decode");
  REQUIRE(g.waits[0].holder);
  CHECK(name_of(d, *g.waits[0].holder) == "nioEventLoopGroup-2-2");
}

TEST_CASE("lock graph: a BLOCKED thread without any wait line is still counted, holder unresolved", "[analysis][graph]") {
  const auto d = dump_of(thread_block("worker-1", 10, "BLOCKED (on object monitor)", "\tat Native.call(Native Method)\n\tat Worker.run(Worker.java:3)\n"));
  const auto g = analysis::build_lock_graph(d);
  REQUIRE(g.waits.size() == 1);
  CHECK(g.waits[0].lock_class == analysis::unnamed_lock_class);
  CHECK(g.waits[0].site == "Native.call");
  CHECK_FALSE(g.waits[0].holder);
}

TEST_CASE("lock graph: a JVM deadlock report with lead-in threads is the cycle it ends in", "[analysis][graph][deadlock]") {
  auto waiter = [](std::string_view name, int id, std::string_view wants, std::string_view has) {
    return thread_block(name, id, "BLOCKED (on object monitor)",
                        std::string("\tat Bank.transfer(Bank.java:5)\n\t- waiting to lock <") + std::string(wants) +
                            "> (a Account)\n\tat Bank.move(Bank.java:9)\n\t- locked <" + std::string(has) + "> (a Account)\n");
  };
  std::string text = waiter("a", 10, "0x00000000000000b0", "0x00000000000000a0") +
                     waiter("b", 11, "0x00000000000000a0", "0x00000000000000b0") +
                     waiter("lead-in", 12, "0x00000000000000a0", "0x00000000000000c0");
  text += "\nFound one Java-level deadlock:\n=============================\n"
          "\"lead-in\":\n  waiting to lock monitor 0x1 (object 0xa0, a Account),\n  which is held by \"a\"\n"
          "\"a\":\n  waiting to lock monitor 0x2 (object 0xb0, a Account),\n  which is held by \"b\"\n"
          "\"b\":\n  waiting to lock monitor 0x1 (object 0xa0, a Account),\n  which is held by \"a\"\n\n"
          "Java stack information for the threads listed above:\n===================================================\n"
          "\"a\":\n\tat Bank.transfer(Bank.java:5)\n\nFound 1 deadlock.\n\n";
  const auto d = dump_of(text);
  const auto g = analysis::build_lock_graph(d);
  REQUIRE(g.deadlocks.size() == 1);
  CHECK(g.deadlocks[0].threads.size() == 2);  // the cycle's threads, not the lead-in
  CHECK(g.deadlocks[0].found_in_graph);
  CHECK(g.deadlocks[0].reported_by_jvm);
}

TEST_CASE("lock graph: a JVM-reported deadlock keeps the names of threads missing from the dump", "[analysis][graph][deadlock]") {
  const std::string text = "\nFound one Java-level deadlock:\n=============================\n"
                           "\"gone-1\":\n  waiting to lock monitor 0x1 (object 0xa0, a Account),\n  which is held by \"gone-2\"\n"
                           "\"gone-2\":\n  waiting to lock monitor 0x2 (object 0xb0, a Account),\n  which is held by \"gone-1\"\n\n"
                           "Found 1 deadlock.\n\n";
  const auto d = dump_of(thread_block("other", 5, "RUNNABLE", "\tat X.y(X.java:1)\n") + text);  // the graph's names are views into it
  const auto g = analysis::build_lock_graph(d);
  REQUIRE(g.deadlocks.size() == 1);
  CHECK(g.deadlocks[0].reported_by_jvm);
  CHECK(g.deadlocks[0].threads.empty());
  CHECK(g.deadlocks[0].missing == std::vector<std::string_view>{"gone-1", "gone-2"});
}

TEST_CASE("lock graph: forks of ForkJoinPool idle like the JDK's", "[analysis][graph]") {
  for (const char* pool : {"scala.concurrent.forkjoin.ForkJoinPool", "akka.dispatch.forkjoin.ForkJoinPool", "jsr166e.ForkJoinPool"}) {
    INFO(pool);
    const std::string body = std::string("\tat sun.misc.Unsafe.park(Native Method)\n\t- parking to wait for  <0x00000000ffe00070> (a ") +
                             pool + ")\n\tat " + pool + ".scan(ForkJoinPool.java:2075)\n\tat " + pool +
                             ".runWorker(ForkJoinPool.java:1979)\n\tat " + pool + "$WorkQueue.run(ForkJoinWorkerThread.java:107)\n";
    const auto g = analysis::build_lock_graph(dump_of(thread_block("default-dispatcher-5", 10, "WAITING (parking)", body)));
    CHECK(g.waits.empty());
  }
}

TEST_CASE("lock graph: waits grouped by key - every wait once, one key per group, in order of first wait", "[analysis][graph]") {
  std::size_t grouped = 0;
  for (const auto& file : test::files_below(test::captured_dir())) {
    for (const auto& dump : parser::parse_dumps(test::read_file(file))) {
      const auto g = analysis::build_lock_graph(dump);
      const auto groups = analysis::group_waits_by_key(g);
      INFO(file.string());
      REQUIRE(groups.waits.size() == g.waits.size());
      REQUIRE(groups.begin.size() == (g.waits.empty() ? 1 : groups.size() + 1));
      std::vector<bool> seen(g.waits.size(), false);
      auto key = [&](std::uint32_t w) { return std::tuple{g.waits[w].kind, g.waits[w].lock_class, g.waits[w].site}; };
      std::size_t previous_first = 0;
      for (std::size_t k = 0; k < groups.size(); ++k) {
        const auto first = groups.waits[groups.begin[k]];
        CHECK((k == 0 || first > previous_first));  // groups in order of their first wait
        previous_first = first;
        for (auto i = groups.begin[k]; i < groups.begin[k + 1]; ++i) {
          const auto w = groups.waits[i];
          CHECK_FALSE(seen[w]);
          seen[w] = true;
          CHECK(key(w) == key(first));
          if (i > groups.begin[k]) CHECK(w > groups.waits[i - 1]);  // waits in graph order
        }
        for (std::size_t j = k + 1; j < groups.size(); ++j) CHECK(key(groups.waits[groups.begin[j]]) != key(first));
      }
      CHECK(std::all_of(seen.begin(), seen.end(), [](bool b) { return b; }));
      grouped += g.waits.size();
    }
  }
  CHECK(grouped > 100);
}
