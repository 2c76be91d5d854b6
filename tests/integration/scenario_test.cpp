// SPDX-License-Identifier: Apache-2.0
// Live JVMs: each scenario program runs on a real JDK, its own jstack -l dumps it, and the
// analysis must name the lock, the waiting site and the holder the program creates.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <thread>

#include "lockwatch/analysis/correlator.hpp"
#include "lockwatch/parser/dump_parser.hpp"
#include "process.hpp"
#include "test_support.hpp"

using namespace lockwatch;
using namespace std::chrono_literals;
using analysis::LockKind;
namespace fs = std::filesystem;

namespace {

struct Jdk {
  std::string name;
  fs::path home;
  fs::path classes;
};

std::vector<Jdk> jdks(bool needs_21 = false) {
  std::vector<Jdk> out;
  const fs::path classes = LOCKWATCH_SCENARIO_CLASSES;
  if (!needs_21) out.push_back({"jdk17", LOCKWATCH_JDK17_HOME, classes / "jdk17"});
  if (fs::exists(classes / "jdk25"))
    out.push_back({"jdk25", LOCKWATCH_JDK25_HOME, classes / "jdk25"});
  else
    WARN("SKIPPED on JDK 25: no Temurin 25 at " LOCKWATCH_JDK25_HOME);
  return out;
}

struct Scenario {
  Jdk jdk;
  std::unique_ptr<test::Child> jvm;

  Scenario(const Jdk& j, const std::string& main_class) : jdk(j) {
    jvm = std::make_unique<test::Child>(
        std::vector<std::string>{(j.home / "bin" / "java").string(), "-Xmx64m", "-cp", j.classes.string(), main_class, "120"});
    INFO(j.name << " " << main_class << " output: " << jvm->output());
    REQUIRE(jvm->wait_for_line("READY", 60s));
  }

  std::string jstack(bool locks = true) const {
    std::vector<std::string> argv{(jdk.home / "bin" / "jstack").string()};
    if (locks) argv.push_back("-l");
    argv.push_back(std::to_string(jvm->pid()));
    auto r = test::run_command(argv, 60s);
    INFO("jstack stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    return r.out;
  }

  // `count` dumps about `gap` apart, correlated as one sequence.
  analysis::SequenceReport sample(int count, std::chrono::milliseconds gap = 200ms) const {
    analysis::Correlator c;
    for (int i = 0; i < count; ++i) {
      for (auto& d : parser::parse_dumps(jstack())) c.add(d, i);
      if (i + 1 < count) std::this_thread::sleep_for(gap);
    }
    return c.report();
  }
};

const analysis::LockSummary* find_lock(const analysis::SequenceReport& r, LockKind kind, std::string_view cls) {
  auto it = std::find_if(r.locks.begin(), r.locks.end(),
                         [&](const auto& l) { return l.key.kind == kind && l.key.lock_class == cls; });
  return it == r.locks.end() ? nullptr : &*it;
}

bool has_holder(const analysis::LockSummary& l, std::string_view site, std::string_view busy_at) {
  return std::any_of(l.holders.begin(), l.holders.end(),
                     [&](const auto& h) { return h.site == site && h.busy_at == busy_at; });
}

}  // namespace

TEST_CASE("live: monitor contention (Inventory.reserve held in recalculate)", "[integration][jvm]") {
  for (const auto& jdk : jdks()) {
    Scenario s(jdk, "MonitorContention");
    const auto r = s.sample(3);
    INFO(jdk.name);
    const auto* lock = find_lock(r, LockKind::monitor, "Inventory");
    REQUIRE(lock);
    CHECK(lock->key.site == "Inventory.reserve");
    CHECK(lock->max_waiters >= 5);
    CHECK(has_holder(*lock, "Inventory.reserve", "Inventory.recalculate"));
    CHECK(r.resolution.same_dump >= lock->wait_observations / 2);
    CHECK(r.dumps.back().states.at(model::ThreadState::blocked) >= 5);
    CHECK(r.dumps.back().pools.at(0).pool == "http-nio-8080-exec-N");
  }
}

TEST_CASE("live: very short holds are caught across repeated dumps", "[integration][jvm]") {
  // The holder is seldom in the same dump; ten dumps are the incident workflow.
  for (const auto& jdk : jdks()) {
    Scenario s(jdk, "ShortHolds");
    const auto r = s.sample(12, 100ms);
    INFO(jdk.name);
    const auto* lock = find_lock(r, LockKind::monitor, "TokenSigner");
    REQUIRE(lock);
    CHECK(lock->key.site == "TokenSigner.sign");
    for (const auto& h : lock->holders) CHECK(h.site == "TokenSigner.sign");
    CHECK(lock->resolution.same_dump + lock->resolution.correlated + lock->resolution.unresolved == lock->wait_observations);
  }
}

TEST_CASE("live: a ReentrantLock pool, owner visible only with -l", "[integration][jvm]") {
  for (const auto& jdk : jdks()) {
    Scenario s(jdk, "ReentrantLockPool");
    const auto r = s.sample(3);
    INFO(jdk.name);
    const auto* lock = find_lock(r, LockKind::park, "java.util.concurrent.locks.ReentrantLock$NonfairSync");
    REQUIRE(lock);
    CHECK(lock->key.site == "ConnectionPool.borrow");
    CHECK(lock->max_waiters >= 4);
    // Where it took the lock (the waiters' site, in its stack), and where it is busy.
    CHECK(has_holder(*lock, "ConnectionPool.borrow", "ConnectionPool.createConnection"));
    // Without -l the same JVM shows the waiters but never the owner.
    analysis::Correlator plain;
    for (auto& d : parser::parse_dumps(s.jstack(false))) plain.add(d, 0);
    const auto pr = plain.report();
    REQUIRE(find_lock(pr, LockKind::park, "java.util.concurrent.locks.ReentrantLock$NonfairSync"));
    CHECK(pr.resolution.same_dump == 0);
    CHECK_FALSE(pr.dumps.at(0).synchronizers_listed);
  }
}

TEST_CASE("live: threads waiting on a latch", "[integration][jvm]") {
  for (const auto& jdk : jdks()) {
    Scenario s(jdk, "LatchWait");
    const auto r = s.sample(2);
    INFO(jdk.name);
    // Waiting for a resource (the database the latch stands for), not contending for a lock.
    const auto* lock = find_lock(r, LockKind::resource, "java.util.concurrent.CountDownLatch$Sync");
    REQUIRE(lock);
    CHECK(lock->key.site == "Startup.awaitDatabase");
    CHECK(lock->max_waiters == 5);
    CHECK(lock->holders.empty());  // a latch has no owner
    CHECK(lock->resolution.unresolved == 0);  // and nothing to resolve
  }
}

TEST_CASE("live: monitor, j.u.c. and mixed deadlocks, JVM report and graph agree", "[integration][jvm][deadlock]") {
  for (const auto& jdk : jdks()) {
    INFO(jdk.name);
    {
      Scenario s(jdk, "MonitorDeadlock");
      const auto d = s.sample(1).dumps.at(0);
      REQUIRE(d.deadlocks.size() == 1);
      auto names = d.deadlocks[0].threads;
      std::sort(names.begin(), names.end());
      CHECK(names == std::vector<std::string>{"transfer-a", "transfer-b"});
      CHECK(d.deadlocks[0].found_in_graph);
      CHECK(d.deadlocks[0].reported_by_jvm);
    }
    Scenario s(jdk, "JucDeadlock");
    const auto d = s.sample(1).dumps.at(0);
    REQUIRE(d.deadlocks.size() == 2);
    for (const auto& c : d.deadlocks) {
      CHECK(c.found_in_graph);
      CHECK(c.reported_by_jvm);
    }
    auto mixed = std::find_if(d.deadlocks.begin(), d.deadlocks.end(), [](const auto& c) {
      return std::count(c.kinds.begin(), c.kinds.end(), LockKind::park) == 1;
    });
    CHECK(mixed != d.deadlocks.end());
  }
}

TEST_CASE("live: hostile thread names neither forge nor hide threads", "[integration][jvm][security]") {
  for (const auto& jdk : jdks()) {
    Scenario s(jdk, "OddNames");
    const auto text = s.jstack();
    const auto dumps = parser::parse_dumps(text);
    REQUIRE(dumps.size() == 1);
    INFO(jdk.name);
    const auto& d = dumps[0];
    CHECK(d.stats.unknown_lines == 0);
    CHECK(std::none_of(d.threads.begin(), d.threads.end(), [](const auto& t) { return t.name == "injected-header"; }));
    CHECK(std::count_if(d.threads.begin(), d.threads.end(), [](const auto& t) { return t.name == "dup-worker"; }) == 2);
    analysis::Correlator c;
    c.add(d, 0);
    const auto r = c.report();
    CHECK(r.dumps[0].states.at(model::ThreadState::blocked) == 6);
    const auto* lock = find_lock(r, LockKind::monitor, "Registry");
    REQUIRE(lock);
    CHECK(lock->max_waiters == 6);
    REQUIRE(lock->holders.size() == 1);
    CHECK(lock->holders[0].thread == "\xE7\xBA\xBF\xE7\xA8\x8B-\xC3\xBC");  // 线程-ü
  }
}

TEST_CASE("live: event-loop threads blocked in a class loader", "[integration][jvm]") {
  for (const auto& jdk : jdks()) {
    Scenario s(jdk, "EventLoopBlocked");
    const auto r = s.sample(2);
    INFO(jdk.name);
    const auto* lock = find_lock(r, LockKind::monitor, "PluginLoader");
    REQUIRE(lock);
    CHECK(lock->key.site == "PluginLoader.loadClass");
    const auto& pools = r.dumps.back().pools;
    auto loop = std::find_if(pools.begin(), pools.end(), [](const auto& p) { return p.pool == "reactor-http-nio-N"; });
    REQUIRE(loop != pools.end());
    CHECK(loop->states.at(model::ThreadState::blocked) == 3);
  }
}

TEST_CASE("live: virtual threads (JDK 21+), jstack and Thread.dump_to_file", "[integration][jvm][vthreads]") {
  for (const auto& jdk : jdks(true)) {
    Scenario s(jdk, "VirtualThreads");
    // jstack lists platform threads only: the waiter shows, its virtual owner does not.
    const auto r = s.sample(1);
    const auto* audit = find_lock(r, LockKind::monitor, "AuditLog");
    REQUIRE(audit);
    CHECK(audit->key.site == "AuditLog.append");
    CHECK(audit->resolution.unresolved == 1);
    // The JSON dump has every virtual thread, with states and owned monitors.
    const auto file = fs::temp_directory_path() / ("lockwatch-vthreads-" + std::to_string(s.jvm->pid()) + ".json");
    auto jcmd = test::run_command({(jdk.home / "bin" / "jcmd").string(), std::to_string(s.jvm->pid()),
                                   "Thread.dump_to_file", "-overwrite", "-format=json", file.string()},
                                  60s);
    REQUIRE(jcmd.exit_code == 0);
    auto dumps = parser::parse_dumps(test::read_file(file));
    fs::remove(file);
    REQUIRE(dumps.size() == 1);
    CHECK(dumps[0].format == model::DumpFormat::dump_to_file_json);
    analysis::Correlator c;
    c.add(dumps[0], 0);
    const auto jr = c.report();
    const auto* session = find_lock(jr, LockKind::park, "java.util.concurrent.locks.ReentrantLock$NonfairSync");
    REQUIRE(session);
    CHECK(session->key.site == "SessionStore.update");
    CHECK(session->max_waiters == 3);
    const auto* metrics = find_lock(jr, LockKind::monitor, "MetricsRegistry");
    REQUIRE(metrics);
    CHECK(metrics->max_waiters == 2);
    // monitorsOwned depth 6 is the synchronized record(); the owner sleeps via the scenario's helper.
    CHECK(has_holder(*metrics, "MetricsRegistry.record", "VirtualThreads.sleep"));
    // A platform thread BLOCKED on a monitor that a virtual thread holds while unmounted
    // (sleeping in AuditLog.rotate): jstack names no owner, the JSON dump lists the holder.
    const auto* audit_json = find_lock(jr, LockKind::monitor, "AuditLog");
    REQUIRE(audit_json);
    CHECK(audit_json->key.site == "AuditLog.append");
    CHECK(audit_json->max_waiters == 1);
    CHECK(audit_json->resolution.same_dump == 1);
    CHECK(audit_json->resolution.unresolved == 0);
  }
}

TEST_CASE("live: Thread.print and JSON samples of one JVM alternate, correlated by thread id", "[integration][jvm][vthreads]") {
  for (const auto& jdk : jdks(true)) {
    Scenario s(jdk, "VirtualThreads");
    const auto jcmd = (jdk.home / "bin" / "jcmd").string();
    const auto pid = std::to_string(s.jvm->pid());
    const auto file = fs::temp_directory_path() / ("lockwatch-alternate-" + pid + ".json");
    analysis::Correlator c;
    for (int i = 0; i < 4; ++i) {
      std::string text;
      if (i % 2 == 0) {
        auto r = test::run_command({jcmd, pid, "Thread.print"}, 60s);
        REQUIRE(r.exit_code == 0);
        text = r.out;
      } else {
        auto r = test::run_command({jcmd, pid, "Thread.dump_to_file", "-overwrite", "-format=json", file.string()}, 60s);
        REQUIRE(r.exit_code == 0);
        text = test::read_file(file);
        fs::remove(file);
      }
      for (auto& d : parser::parse_dumps(text)) c.add(d, i);
      std::this_thread::sleep_for(200ms);
    }
    const auto r = c.report();
    REQUIRE(r.dumps.size() == 4);
    for (std::size_t i = 0; i < 4; ++i) {
      INFO("dump " << i);
      const auto& d = r.dumps[i];
      CHECK(d.format == (i % 2 == 0 ? model::DumpFormat::jstack : model::DumpFormat::dump_to_file_json));
      // Platform states agree across forms: the virtual threads are counted apart.
      CHECK(d.states.at(model::ThreadState::blocked) == 1);  // platform-monitor-waiter
      CHECK((i % 2 == 0 ? d.virtual_threads == 0 : d.virtual_threads >= 9));
      CHECK(d.pinned_carrier_threads == 1);                   // tls-init-vt in its class initializer
    }
    // One lock key in both forms; its text-sample waiters find the virtual holder in the JSON
    // neighbours, and the waiter is one thread (its #id is the JSON tid) stuck for all 4 samples.
    const auto* audit = find_lock(r, LockKind::monitor, "AuditLog");
    REQUIRE(audit);
    CHECK(audit->dumps_seen == 4);
    CHECK(audit->resolution.same_dump == 2);
    CHECK(audit->resolution.correlated == 2);
    REQUIRE_FALSE(audit->holders.empty());
    CHECK(audit->holders[0].thread == "audit-vt");
    auto stuck = std::find_if(r.stuck.begin(), r.stuck.end(), [](const auto& t) { return t.thread == "platform-monitor-waiter"; });
    REQUIRE(stuck != r.stuck.end());
    CHECK(stuck->samples == 4);
  }
}
