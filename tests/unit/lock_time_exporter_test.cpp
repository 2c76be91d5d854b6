// SPDX-License-Identifier: Apache-2.0
// The time families in the exposition: seconds from microsecond totals, a maximum that folds
// into "other" as a maximum, the closed activity set, and the K bound of each family.
#include <catch2/catch.hpp>

#include <sstream>

#include "lockwatch/exporter/exporter.hpp"

using namespace lockwatch::exporter;

namespace {

std::optional<double> value(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(line.rfind(' ') + 1));
  return std::nullopt;
}

std::size_t series_of(const std::string& text, const std::string& family) {
  std::size_t n = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(family + "{", 0) == 0) ++n;
  return n;
}

TargetMetrics base() {
  TargetMetrics m;
  m.target = "shop";
  m.up = true;
  m.latest = LatestSample{};
  return m;
}

}  // namespace

TEST_CASE("lock time export: wait seconds and pool CPU are exported in seconds", "[export][lock_time]") {
  Exporter e({.top_k = 20});
  auto m = base();
  m.totals.wait_microseconds[{"monitor", "Inventory", "Inventory.reserve"}] = 2'500'000;
  m.totals.pool_cpu_microseconds["http-nio-8080-exec-N"] = 1'250'000;
  e.update(m);
  const auto text = e.render();
  INFO(text);
  CHECK(value(text, R"(lockwatch_lock_wait_seconds_total{kind="monitor",lock_class="Inventory",site="Inventory.reserve",target="shop"})") == Approx(2.5));
  CHECK(value(text, R"(lockwatch_pool_cpu_seconds_total{pool="http-nio-8080-exec-N",target="shop"})") == Approx(1.25));
  CHECK(text.find("# TYPE lockwatch_lock_wait_seconds_total counter") != std::string::npos);
}

TEST_CASE("lock time export: hold seconds max folds into other as the largest, and follows the latest sample", "[export][lock_time]") {
  Exporter e({.top_k = 2});
  auto m = base();
  m.latest->lock_hold_seconds_max = {{{"monitor", "A", "A.run"}, 9.0}, {{"monitor", "B", "B.run"}, 5.0},
                                     {{"monitor", "C", "C.run"}, 3.0}, {{"monitor", "D", "D.run"}, 4.0}};
  e.update(m);
  auto text = e.render();
  INFO(text);
  CHECK(value(text, R"(lockwatch_lock_hold_seconds_max{holder_site="A.run",kind="monitor",lock_class="A",target="shop"})") == Approx(9));
  CHECK(value(text, R"(lockwatch_lock_hold_seconds_max{holder_site="B.run",kind="monitor",lock_class="B",target="shop"})") == Approx(5));
  // C and D fold: the largest of them, not their sum (7).
  CHECK(value(text, R"(lockwatch_lock_hold_seconds_max{holder_site="other",kind="monitor",lock_class="other",target="shop"})") == Approx(4));
  CHECK(series_of(text, "lockwatch_lock_hold_seconds_max") == 3);
  CHECK(text.find("# TYPE lockwatch_lock_hold_seconds_max gauge") != std::string::npos);
  m.latest->lock_hold_seconds_max = {{{"monitor", "C", "C.run"}, 1.0}};
  e.update(m);
  text = e.render();
  CHECK(series_of(text, "lockwatch_lock_hold_seconds_max") == 1);  // a hold that ended is no series
}

TEST_CASE("lock time export: holder activity is a closed set and bounded per target", "[export][lock_time]") {
  Exporter e({.top_k = 20});
  auto m = base();
  for (int i = 0; i < 50; ++i)
    for (const char* a : {"running", "io", "waiting", "sleeping", "unseen"})
      m.totals.holder_activity[{"monitor", "Lock" + std::to_string(i), a}] = static_cast<std::uint64_t>(i + 1);
  m.totals.holder_activity[{"monitor", "Odd", "spinning"}] = 3;  // outside the set: shown as other
  for (int i = 0; i < 50; ++i) m.totals.pool_cpu_microseconds["pool-" + std::to_string(i)] = 1000;
  e.update(m);
  const auto text = e.render();
  INFO(text);
  CHECK(series_of(text, "lockwatch_lock_holder_activity_total") <= 35);  // docs/metrics.md#cardinality
  CHECK(series_of(text, "lockwatch_pool_cpu_seconds_total") <= 21);
  CHECK(text.find("activity=\"spinning\"") == std::string::npos);
  CHECK(value(text, R"(lockwatch_lock_holder_activity_total{activity="running",kind="monitor",lock_class="Lock49",target="shop"})") == Approx(50));
}
