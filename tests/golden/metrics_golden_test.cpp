// SPDX-License-Identifier: Apache-2.0
// Golden expositions: the exporter's render() for fixed inputs, compared byte for byte with
// reviewed files under tests/golden/expected/metrics (LOCKWATCH_UPDATE_GOLDEN=1 rewrites
// them), and every one of them accepted by `promtool check metrics`.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <set>
#include <sstream>

#include "lockwatch/exporter/exporter.hpp"
#include "process.hpp"
#include "test_support.hpp"

using namespace lockwatch;
using namespace lockwatch::exporter;
namespace fs = std::filesystem;

namespace {

fs::path metrics_dir() { return test::source_dir() / "tests" / "golden" / "expected" / "metrics"; }

// A fixed version: the files must not change with every release.
ExporterOptions options(std::size_t top_k = 20) { return {.top_k = top_k, .version = "0.0.0-golden"}; }

LockLabels lock(const std::string& kind, const std::string& lock_class, const std::string& site) {
  return {kind, lock_class, site};
}

TargetMetrics shop() {
  TargetMetrics m;
  m.target = "shop-4242";
  m.up = true;
  m.last_sample_time = 1700000000.5;  // fixed input: nothing in the output comes from a clock
  m.new_durations = {0.004, 0.018, 0.021, 0.3, 12.0};
  m.totals.samples = {{"ok", 120}, {"timeout", 2}, {"attach_refused", 1}};
  m.totals.samples_by_form = {{"print", 100}, {"json", 20}};
  m.totals.wait_observations = {{lock("monitor", "Inventory", "Inventory.reserve"), 340},
                                {lock("park", "java.util.concurrent.locks.ReentrantLock$NonfairSync", "Ledger.post"), 57}};
  m.totals.holder_observations = {{lock("monitor", "Inventory", "Inventory.recalculate"), 95},
                                  {lock("park", "java.util.concurrent.locks.ReentrantLock$NonfairSync", "Ledger.flush"), 12}};
  m.totals.holder_resolution = {{"same_dump", 250}, {"correlated", 90}, {"unresolved", 57}, {"inferred", 21}};
  m.totals.wait_microseconds = {{lock("monitor", "Inventory", "Inventory.reserve"), 68'250'000},
                                {lock("park", "java.util.concurrent.locks.ReentrantLock$NonfairSync", "Ledger.post"), 2'400'000}};
  m.totals.holder_activity = {{lock("monitor", "Inventory", "sleeping"), 80}, {lock("monitor", "Inventory", "running"), 15},
                              {lock("park", "java.util.concurrent.locks.ReentrantLock$NonfairSync", "unseen"), 12}};
  m.totals.pool_cpu_microseconds = {{"http-nio-8080-exec-N", 12'500'000}, {"main", 310'000}};
  m.totals.incidents = 1;
  m.totals.incident_failures = 2;
  m.totals.missed_ticks = 3;
  m.totals.ring_evictions = 40;
  LatestSample latest;
  latest.threads_by_state = {{"BLOCKED", 7}, {"RUNNABLE", 22}, {"TIMED_WAITING", 9}, {"WAITING", 31}};
  latest.virtual_threads_by_state = {{"BLOCKED", 199}, {"RUNNABLE", 1}, {"WAITING", 4800}};
  latest.pinned_carrier_threads = 1;
  latest.lock_waiters = {{lock("monitor", "Inventory", "Inventory.reserve"), 6},
                         {lock("park", "java.util.concurrent.locks.ReentrantLock$NonfairSync", "Ledger.post"), 1}};
  latest.pool_threads = {{"http-nio-8080-exec-N", {{"BLOCKED", 6}, {"RUNNABLE", 4}, {"WAITING", 190}}},
                         {"ForkJoinPool.commonPool-worker-N", {{"WAITING", 3}}}};
  latest.event_loop_blocked = {{"reactor-http-nio-N", {{"BLOCKED", 2}, {"WAITING", 1}}}};
  // The holder of the Ledger lock is one of Inventory's 6 waiters: Ledger's waiter counts for Inventory too.
  latest.lock_waiters_transitive = {{lock("monitor", "Inventory", "Inventory.reserve"), 7},
                                    {lock("park", "java.util.concurrent.locks.ReentrantLock$NonfairSync", "Ledger.post"), 1}};
  latest.lock_hold_seconds_max = {{lock("monitor", "Inventory", "Inventory.recalculate"), 3.8}};
  m.latest = latest;
  m.perf = {81, 15034, 48211, 2.375};
  m.ring_samples = 60;
  m.ring_bytes = 1843200;
  return m;
}

// A JVM that never answered: no latest sample, no hsperfdata counters.
TargetMetrics batch() {
  TargetMetrics m;
  m.target = "batch-77";
  m.up = false;
  m.new_durations = {10.0, 10.0};
  m.totals.samples = {{"timeout", 2}};
  return m;
}

std::string two_targets() {
  Exporter e(options());
  e.update(shop());
  e.update(batch());
  return e.render();
}

std::string hostile_labels() {
  Exporter e(options());
  TargetMetrics m;
  m.target = "odd\"target\\1\n";
  m.up = true;
  m.totals.samples = {{"ok", 1}, {"no such outcome", 4}};
  m.totals.samples_by_form = {{"json", 1}, {"xml", 2}};  // a form outside the closed set is "other"
  m.totals.wait_observations = {{lock("monitor", "Quote\"Back\\slash", "Line\nBreak.run"), 2},
                                {lock("monitor", "other", "other"), 1},  // a class really named "other"
                                {lock("spin", "Bad\xFF\xFEUtf8", "Ctl\x01\x7F.run"), 1}};
  LatestSample latest;
  latest.threads_by_state = {{"BLOCKED", 1}, {"BL\nOCKED", 1}};
  latest.virtual_threads_by_state = {{"PINNED", 3}};
  latest.lock_waiters = {{lock("monitor", std::string(400, 'C'), "Caf\xC3\xA9.\xE6\x97\xA5\xE6\x9C\xAC"), 2}};
  latest.pool_threads = {{"pool-\xC0\xAF-N", {{"RUNNABLE", 2}}}};
  m.latest = latest;
  e.update(m);
  return e.render();
}

// K=2: five lock classes arrive over two samples; the first two keep their slots.
std::string top_k_overflow() {
  Exporter e(options(2));
  TargetMetrics m;
  m.target = "busy-1";
  m.up = true;
  m.totals.wait_observations = {{lock("monitor", "A", "A.run"), 10}, {lock("monitor", "B", "B.run"), 5}};
  e.update(m);
  m.totals.wait_observations = {{lock("monitor", "A", "A.run"), 11}, {lock("monitor", "B", "B.run"), 5},
                                {lock("monitor", "C", "C.run"), 90}, {lock("park", "D", "D.run"), 4},
                                {lock("monitor", "E", "E.run"), 1}};
  LatestSample latest;
  latest.lock_waiters = {{lock("monitor", "A", "A.run"), 1}, {lock("monitor", "C", "C.run"), 9},
                         {lock("park", "D", "D.run"), 2}, {lock("monitor", "E", "E.run"), 1}};
  latest.pool_threads = {{"p1-N", {{"BLOCKED", 5}}}, {"p2-N", {{"RUNNABLE", 4}}}, {"p3-N", {{"RUNNABLE", 3}}},
                         {"p4-N", {{"WAITING", 2}}}, {"p5-N", {{"WAITING", 1}}}};
  m.latest = latest;
  e.update(m);
  return e.render();
}

// A target that went away leaves nothing behind.
std::string after_remove() {
  Exporter e(options());
  e.update(shop());
  e.update(batch());
  e.remove("shop-4242");
  return e.render();
}

const std::vector<std::pair<std::string, std::function<std::string()>>> cases{
    {"two-targets", two_targets},
    {"hostile-labels", hostile_labels},
    {"top-k-overflow", top_k_overflow},
    {"after-remove", after_remove},
};

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && ::access((fs::path(dir) / program).c_str(), X_OK) == 0) return true;
  return false;
}

bool promtool_present() {
  if (on_path("promtool")) return true;
  if (std::getenv("CI") != nullptr) FAIL("promtool is missing (Debian package prometheus)");
  WARN("skipping the promtool check: promtool is not on PATH");
  return false;
}

struct TempFile {
  fs::path path = fs::temp_directory_path() / ("lockwatch-metrics-" + std::to_string(::getpid()) + ".prom");
  ~TempFile() {
    std::error_code ec;
    fs::remove(path, ec);
  }
};

}  // namespace

TEST_CASE("golden: metrics expositions", "[golden][export]") {
  std::vector<std::string> failures;
  for (const auto& [name, render] : cases) {
    auto problem = test::check_golden(metrics_dir() / (name + ".prom"), render());
    if (!problem.empty()) failures.push_back(problem);
  }
  for (const auto& f : failures) FAIL_CHECK(f);
  CHECK(failures.empty());
}

TEST_CASE("golden: promtool accepts every exposition", "[golden][export]") {
  if (!promtool_present()) return;
  const TempFile file;
  for (const auto& [name, render] : cases) {
    test::write_file(file.path, render());
    const auto r = test::run_command({"promtool", "check", "metrics"}, std::chrono::seconds(60), file.path.string());
    INFO(name << ":\n" << r.out << r.err);
    CHECK(r.exit_code == 0);
  }
}

TEST_CASE("golden: no metrics file without its case", "[golden][export]") {
  std::set<std::string> names;
  for (const auto& c : cases) names.insert(c.first + ".prom");
  for (const auto& f : test::files_below(metrics_dir())) {
    INFO("golden file without a case (delete it): " << f);
    CHECK(names.contains(f.filename().string()));
  }
}
