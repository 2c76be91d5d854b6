// SPDX-License-Identifier: Apache-2.0
// The daemon on applications that take their locks inside the real libraries behind the
// field reports (Debian's jars: logback, log4j2, commons-pool2, Netty, embedded Tomcat), on
// JDK 17 and Temurin 25: the live /metrics names the lock or resource, the waiting site, the
// holder site, the pool and the event-loop gauge, and the incident it captures says the same
// through `lockwatch analyze`.
#include <catch2/catch.hpp>

#include <filesystem>

#include "e2e_support.hpp"

using namespace lockwatch;
using namespace lockwatch::e2e;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

struct Expect {
  std::string main_class;
  std::string kind;
  std::string lock_class;
  std::string site;
  double min_waiters;
  std::string holder_site;  // "" for a resource: nobody holds it
  std::string pool;         // the waiters' pool
  std::string trigger;      // the incident's reason
};

const std::vector<Expect>& scenarios() {
  static const std::vector<Expect> all{
      {"LogbackSyncAppender", "park", "java.util.concurrent.locks.ReentrantLock$NonfairSync",
       "ch.qos.logback.core.OutputStreamAppender.writeBytes", 10, "ch.qos.logback.core.OutputStreamAppender.writeBytes",
       "http-nio-8080-exec-N", "park_waiters"},
      {"Log4j2SyncAppender", "monitor", "org.apache.logging.log4j.core.appender.FileManager",
       "org.apache.logging.log4j.core.appender.OutputStreamManager.writeBytes", 5,
       "org.apache.logging.log4j.core.appender.OutputStreamManager.flush", "http-nio-8080-exec-N", "blocked_threads"},
      {"Pool2Exhausted", "resource", "org.apache.commons.pool2.impl.LinkedBlockingDeque",
       "org.apache.commons.pool2.impl.GenericObjectPool.borrowObject", 40, "", "DubboServerHandler-127.0.0.1:20880-thread-N",
       "resource_waiters"},
      {"TomcatSyncCache", "monitor", "ProductCache", "ProductCache.get", 5, "ProductCache.get",
       "http-nio-127.0.0.1-auto-1-exec-N", "blocked_threads"},
  };
  return all;
}

std::vector<std::string> lock_labels(const Expect& e) {
  return {"kind=\"" + e.kind + "\"", "lock_class=\"" + e.lock_class + "\"", "site=\"" + e.site + "\""};
}

// lockwatch run on one JVM: 300 ms samples, the first dump of an incident burst with -l (logback's
// ReentrantLock has no holder without it), incidents at low thresholds with a short burst.
std::unique_ptr<Daemon> watch(const test::Child& jvm, const fs::path& work) {
  test::write_file(work / "lockwatch.yaml",
                   "interval: 300ms\ntimeout: 5s\nlocks: on_demand\ntargets:\n  rescan: 1s\n"
                   "incidents:\n  directory: " + (work / "incidents").string() +
                       "\n  blocked_threshold: 5\n  park_threshold: 8\n  resource_threshold: 20\n"
                       "  burst_count: 3\n  burst_interval: 200ms\n  min_interval: 1h\n");
  return std::make_unique<Daemon>(std::vector<std::string>{"--config", (work / "lockwatch.yaml").string(), "--pid",
                                                           std::to_string(jvm.pid())});
}

std::optional<fs::path> incident_dir(const fs::path& work) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(work / "incidents", ec))
    if (fs::exists(e.path() / "summary.json")) return e.path();
  return std::nullopt;
}

void check_scenario(const std::string& jdk, const Expect& e) {
  INFO(e.main_class << " on " << jdk);
  auto jvm = start_library_jvm(jdk, e.main_class);
  if (!jvm) return;  // skipped, with a warning
  const auto work = scratch("libraries-" + jdk + "-" + e.main_class);
  const auto d = watch(*jvm, work);
  const auto t = target(e.main_class);
  auto labels = lock_labels(e);
  labels.push_back(t);
  CHECK(eventually([&] { return metric(d->metrics(), "lockwatch_lock_waiters", labels).value_or(0) >= e.min_waiters; }, 60s));
  if (!e.holder_site.empty()) {
    CHECK(eventually([&] {
      return metric(d->metrics(), "lockwatch_lock_holder_observations_total",
                    {t, "lock_class=\"" + e.lock_class + "\"", "holder_site=\"" + e.holder_site + "\""})
                 .value_or(0) >= 1;
    }, 60s));
  } else {  // a resource: no holder is ever counted, and no resolution either
    CHECK_FALSE(metric(d->metrics(), "lockwatch_lock_holder_observations_total", {t, "kind=\"resource\""}));
  }
  CHECK(metric(d->metrics(), "lockwatch_pool_threads", {t, "pool=\"" + e.pool + "\""}).value_or(0) >= e.min_waiters);
  // The incident's evidence says the same, read back as a user would.
  REQUIRE(eventually([&] { return incident_dir(work).has_value(); }, 60s));
  const auto dir = *incident_dir(work);
  CHECK(test::read_file(dir / "summary.json").find("\"reason\":\"" + e.trigger + "\"") != std::string::npos);
  const auto report = test::run_command({lockwatch_binary(), "analyze", dir.string()}, 60s);
  CHECK(report.exit_code == 0);
  CHECK(report.out.find(e.kind + " " + e.lock_class) != std::string::npos);
  CHECK(report.out.find("waiting at   " + e.site) != std::string::npos);
  if (!e.holder_site.empty())
    CHECK((report.out.find("held at      " + e.holder_site) != std::string::npos ||
           report.out.find("holder at    " + e.holder_site) != std::string::npos));
}

}  // namespace

TEST_CASE("libraries: logback, log4j2, commons-pool2 and Tomcat name the lock or resource, its sites and pool",
          "[e2e][jvm][libraries]") {
  for (const std::string jdk : {"jdk17", "jdk25"})
    for (const auto& e : scenarios()) check_scenario(jdk, e);
}

TEST_CASE("libraries: a starved pool is told from idle executor workers next to it", "[e2e][jvm][libraries]") {
  for (const std::string jdk : {"jdk17", "jdk25"}) {
    INFO(jdk);
    auto jvm = start_library_jvm(jdk, "Pool2Exhausted");
    if (!jvm) continue;
    const auto work = scratch("libraries-idle-" + jdk);
    const auto d = watch(*jvm, work);
    const auto t = target("Pool2Exhausted");
    REQUIRE(eventually([&] { return metric(d->metrics(), "lockwatch_lock_waiters", {t, "kind=\"resource\""}).value_or(0) >= 40; }, 60s));
    const auto text = d->metrics();
    // 8 idle pool-1-thread-N workers parked in ThreadPoolExecutor.getTask: WAITING, but no waiters.
    CHECK(metric(text, "lockwatch_pool_threads", {t, "pool=\"pool-1-thread-N\"", "state=\"WAITING\""}).value_or(0) >= 8);
    CHECK(text.find("ThreadPoolExecutor") == std::string::npos);
    // The latch and the future the requests await are resources too (field report 002).
    CHECK(metric(text, "lockwatch_lock_waiters", {t, "kind=\"resource\"", "lock_class=\"java.util.concurrent.CountDownLatch$Sync\""}).value_or(0) >= 1);
  }
}

TEST_CASE("libraries: Netty event loops BLOCKED in class loading and parked on logback's lock are both stalled",
          "[e2e][jvm][libraries]") {
  for (const std::string jdk : {"jdk17", "jdk25"}) {
    INFO(jdk);
    auto jvm = start_library_jvm(jdk, "NettyEventLoops");
    if (!jvm) continue;
    const auto work = scratch("libraries-netty-" + jdk);
    const auto d = watch(*jvm, work);
    const auto t = target("NettyEventLoops");
    const auto gauge = [&](const std::string& pool, const std::string& state) {
      return metric(d->metrics(), "lockwatch_event_loop_blocked_threads", {t, "pool=\"" + pool + "\"", "state=\"" + state + "\""}).value_or(0);
    };
    // Class loading through a loader that is not parallel capable: BLOCKED, some without a
    // wait line, every one counted as a waiter of the loader's monitor.
    CHECK(eventually([&] { return gauge("nioEventLoopGroup-2-N", "BLOCKED") >= 2; }, 60s));
    CHECK(eventually([&] {
      return metric(d->metrics(), "lockwatch_lock_waiters", {t, "kind=\"monitor\"", "lock_class=\"CodecPluginClassLoader\""}).value_or(0) >= 2;
    }, 60s));
    CHECK(metric(d->metrics(), "lockwatch_lock_waiters", {t, "lock_class=\"(not printed)\""}).value_or(0) == 0);
    // Parked on logback's appender lock: WAITING, and stalled all the same.
    CHECK(eventually([&] { return gauge("nioEventLoopGroup-3-N", "WAITING") >= 2; }, 60s));
    // The boss loop idle in its selector is not stalled.
    CHECK_FALSE(metric(d->metrics(), "lockwatch_event_loop_blocked_threads", {t, "pool=\"nioEventLoopGroup-4-N\""}));
  }
}
