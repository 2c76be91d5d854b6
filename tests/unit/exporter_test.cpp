// SPDX-License-Identifier: Apache-2.0
// The exporter as dashboards see it: family names and types, counters that never go back,
// top K + "other", gauges of the latest sample only, target removal, HELP wording.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "lockwatch/exporter/exporter.hpp"

using namespace lockwatch::exporter;

namespace {

// The exposition's sample lines, "name{labels}" -> value.
std::map<std::string, double> samples_of(const std::string& text) {
  std::map<std::string, double> samples;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto space = line.rfind(' ');
    samples[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  return samples;
}

std::optional<double> value(const std::string& text, const std::string& series) {
  const auto samples = samples_of(text);
  const auto it = samples.find(series);
  return it == samples.end() ? std::nullopt : std::optional(it->second);
}

// The text after "# <what> <family> " ("HELP" or "TYPE"); "" if absent.
std::string comment(const std::string& text, const std::string& what, const std::string& family) {
  const std::string prefix = "# " + what + " " + family + " ";
  const auto at = text.find(prefix);
  if (at == std::string::npos) return {};
  const auto start = at + prefix.size();
  return text.substr(start, text.find('\n', start) - start);
}

std::size_t lines_with(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find(part) != std::string::npos) ++n;
  return n;
}

LockLabels monitor(const std::string& lock_class) { return {"monitor", lock_class, lock_class + ".run"}; }

TargetMetrics full(const std::string& target) {
  TargetMetrics m;
  m.target = target;
  m.up = true;
  m.last_sample_time = 1700000000.25;
  m.new_durations = {0.02, 0.3};
  m.totals.samples = {{"ok", 3}, {"timeout", 1}};
  m.totals.samples_by_form = {{"print", 2}, {"json", 1}};
  m.totals.wait_observations = {{monitor("Inventory"), 5}, {{"park", "java.util.concurrent.locks.ReentrantLock$NonfairSync", "Pool.take"}, 2}};
  m.totals.holder_observations = {{{"monitor", "Inventory", "Inventory.recalculate"}, 2}};
  m.totals.holder_resolution = {{"same_dump", 2}, {"correlated", 1}, {"unresolved", 4}, {"inferred", 6}};
  m.totals.incidents = 1;
  m.totals.incident_failures = 5;
  m.totals.missed_ticks = 2;
  m.totals.ring_evictions = 3;
  LatestSample latest;
  latest.threads_by_state = {{"BLOCKED", 3}, {"RUNNABLE", 10}, {"WAITING", 4}};
  latest.virtual_threads_by_state = {{"BLOCKED", 7}, {"WAITING", 900}};
  latest.pinned_carrier_threads = 1;
  latest.lock_waiters = {{monitor("Inventory"), 3}};
  latest.lock_waiters_transitive = {{monitor("Inventory"), 5}};
  latest.deadlocked_threads = 2;
  latest.pool_threads = {{"http-nio-8080-exec-N", {{"BLOCKED", 3}, {"RUNNABLE", 5}}}};
  latest.event_loop_blocked = {{"reactor-http-nio-N", {{"BLOCKED", 1}}}};
  m.latest = latest;
  m.perf = {40, 1234, 567, 0.75};
  m.ring_samples = 4;
  m.ring_bytes = 65536;
  return m;
}

const std::vector<std::pair<std::string, std::string>> families{
    {"lockwatch_threads", "gauge"},
    {"lockwatch_virtual_threads", "gauge"},
    {"lockwatch_pinned_carrier_threads", "gauge"},
    {"lockwatch_samples_by_form_total", "counter"},
    {"lockwatch_lock_waiters", "gauge"},
    {"lockwatch_lock_waiters_transitive", "gauge"},
    {"lockwatch_lock_wait_observations_total", "counter"},
    {"lockwatch_lock_holder_observations_total", "counter"},
    {"lockwatch_holder_resolution_total", "counter"},
    {"lockwatch_deadlocked_threads", "gauge"},
    {"lockwatch_pool_threads", "gauge"},
    {"lockwatch_event_loop_blocked_threads", "gauge"},
    {"lockwatch_samples_total", "counter"},
    {"lockwatch_sample_duration_seconds", "histogram"},
    {"lockwatch_target_up", "gauge"},
    {"lockwatch_last_sample_timestamp_seconds", "gauge"},
    {"lockwatch_jvm_monitor_contended_enters_total", "counter"},
    {"lockwatch_jvm_monitor_parks_total", "counter"},
    {"lockwatch_jvm_safepoint_seconds_total", "counter"},
    {"lockwatch_jvm_threads_live", "gauge"},
    {"lockwatch_incidents_total", "counter"},
    {"lockwatch_incident_failures_total", "counter"},
    {"lockwatch_missed_ticks_total", "counter"},
    {"lockwatch_ring_evictions_total", "counter"},
    {"lockwatch_ring_samples", "gauge"},
    {"lockwatch_ring_bytes", "gauge"},
    {"lockwatch_targets_skipped", "gauge"},
    {"lockwatch_build_info", "gauge"},
};

}  // namespace

TEST_CASE("exporter: every family, with its exact name and type", "[export]") {
  Exporter e({.version = "1.2.3"});
  e.update(full("shop-42"));
  const auto text = e.render();
  for (const auto& [name, type] : families) {
    INFO(name);
    CHECK(comment(text, "TYPE", name) == type);
    CHECK(lines_with(text, name + (type == "histogram" ? "_count{" : "{")) + lines_with(text, name + " ") >= 1);
  }
  CHECK(value(text, "lockwatch_targets_skipped") == 0);  // daemon-wide: no target label
  e.set_targets_skipped(7);
  CHECK(value(e.render(), "lockwatch_targets_skipped") == 7);
  CHECK(lines_with(text, "# TYPE ") == families.size());  // and no family besides them
  CHECK(value(text, "lockwatch_build_info{version=\"1.2.3\"}") == 1);
  CHECK(value(text, "lockwatch_threads{state=\"BLOCKED\",target=\"shop-42\"}") == 3);
  CHECK(value(text, "lockwatch_virtual_threads{state=\"WAITING\",target=\"shop-42\"}") == 900);
  CHECK(value(text, "lockwatch_pinned_carrier_threads{target=\"shop-42\"}") == 1);
  CHECK(value(text, "lockwatch_samples_by_form_total{form=\"json\",target=\"shop-42\"}") == 1);
  CHECK(value(text, "lockwatch_lock_waiters{kind=\"monitor\",lock_class=\"Inventory\",site=\"Inventory.run\",target=\"shop-42\"}") == 3);
  CHECK(value(text, "lockwatch_lock_waiters_transitive{kind=\"monitor\",lock_class=\"Inventory\",site=\"Inventory.run\",target=\"shop-42\"}") == 5);
  CHECK(value(text, "lockwatch_lock_holder_observations_total{holder_site=\"Inventory.recalculate\",kind=\"monitor\",lock_class=\"Inventory\",target=\"shop-42\"}") == 2);
  CHECK(value(text, "lockwatch_holder_resolution_total{result=\"unresolved\",target=\"shop-42\"}") == 4);
  CHECK(value(text, "lockwatch_holder_resolution_total{result=\"inferred\",target=\"shop-42\"}") == 6);
  CHECK(value(text, "lockwatch_pool_threads{pool=\"http-nio-8080-exec-N\",state=\"RUNNABLE\",target=\"shop-42\"}") == 5);
  CHECK(value(text, "lockwatch_samples_total{result=\"timeout\",target=\"shop-42\"}") == 1);
  CHECK(value(text, "lockwatch_sample_duration_seconds_bucket{target=\"shop-42\",le=\"0.025\"}") == 1);
  CHECK(value(text, "lockwatch_jvm_monitor_contended_enters_total{target=\"shop-42\"}") == 1234);
  CHECK(value(text, "lockwatch_jvm_safepoint_seconds_total{target=\"shop-42\"}") == 0.75);
  CHECK(value(text, "lockwatch_last_sample_timestamp_seconds{target=\"shop-42\"}") == 1700000000.25);
  CHECK(value(text, "lockwatch_incidents_total{target=\"shop-42\"}") == 1);
  CHECK(value(text, "lockwatch_incident_failures_total{target=\"shop-42\"}") == 5);
}

TEST_CASE("exporter: hsperfdata series exist only when the JVM publishes the value", "[export]") {
  Exporter e({});
  auto m = full("a");
  m.perf = {};
  m.latest.reset();
  m.last_sample_time.reset();
  e.update(m);
  const auto text = e.render();
  CHECK(lines_with(text, "lockwatch_jvm_") == 0);
  CHECK(lines_with(text, "lockwatch_threads{") == 0);        // no sample yet: no latest-sample gauges
  CHECK(lines_with(text, "lockwatch_deadlocked_threads{") == 0);
  CHECK(lines_with(text, "lockwatch_last_sample_timestamp_seconds{") == 0);
  CHECK(value(text, "lockwatch_target_up{target=\"a\"}") == 1);
}

TEST_CASE("exporter: counters follow the totals and never decrease", "[export]") {
  Exporter e({});
  auto m = full("a");
  e.update(m);
  const auto first = samples_of(e.render());
  m.totals.samples["ok"] = 1;                         // a total that went back (must not happen)
  m.totals.wait_observations[monitor("Inventory")] = 9;
  m.perf.parks = 10;                                  // a JVM counter read torn
  m.perf.safepoint_seconds = 1.5;
  m.new_durations = {0.001};
  e.update(m);
  const auto second = samples_of(e.render());
  for (const auto& [series, v] : first) {
    if (series.find("_total{") == std::string::npos && series.find("_duration_seconds_") == std::string::npos) continue;
    INFO(series);
    CHECK(second.at(series) >= v);
  }
  CHECK(second.at("lockwatch_samples_total{result=\"ok\",target=\"a\"}") == 3);
  CHECK(second.at("lockwatch_lock_wait_observations_total{kind=\"monitor\",lock_class=\"Inventory\",site=\"Inventory.run\",target=\"a\"}") == 9);
  CHECK(second.at("lockwatch_jvm_monitor_parks_total{target=\"a\"}") == 567);
  CHECK(second.at("lockwatch_jvm_safepoint_seconds_total{target=\"a\"}") == 1.5);
  CHECK(second.at("lockwatch_sample_duration_seconds_count{target=\"a\"}") == 3);
}

TEST_CASE("exporter: durations are observed once; NaN and negative ones are dropped", "[export]") {
  Exporter e({});
  auto m = full("a");
  m.new_durations = {0.5, std::numeric_limits<double>::quiet_NaN(), -1.0};
  e.update(m);
  m.new_durations.clear();
  e.update(m);
  const auto text = e.render();
  CHECK(value(text, "lockwatch_sample_duration_seconds_count{target=\"a\"}") == 1);
  CHECK(value(text, "lockwatch_sample_duration_seconds_sum{target=\"a\"}") == 0.5);
}

TEST_CASE("exporter: top K lock classes per target, the rest in 'other', slots kept", "[export]") {
  Exporter e({.top_k = 2});
  TargetMetrics m;
  m.target = "a";
  m.totals.wait_observations = {{monitor("A"), 4}, {monitor("B"), 3}};
  e.update(m);
  m.totals.wait_observations = {{monitor("A"), 4}, {monitor("B"), 3}, {monitor("C"), 50}, {monitor("D"), 1}, {monitor("E"), 2}};
  e.update(m);
  const auto text = e.render();
  const std::string family = "lockwatch_lock_wait_observations_total{";
  CHECK(lines_with(text, family) == 3);
  CHECK(value(text, family + "kind=\"monitor\",lock_class=\"A\",site=\"A.run\",target=\"a\"}") == 4);
  CHECK(value(text, family + "kind=\"monitor\",lock_class=\"B\",site=\"B.run\",target=\"a\"}") == 3);
  // C is the busiest now, but A and B keep their slots: moving them would lower a counter.
  CHECK(value(text, family + "kind=\"monitor\",lock_class=\"other\",site=\"other\",target=\"a\"}") == 53);
}

TEST_CASE("exporter: the K limit is per target", "[export]") {
  Exporter e({.top_k = 1});
  for (const char* target : {"a", "b"}) {
    TargetMetrics m;
    m.target = target;
    m.totals.wait_observations = {{monitor(target), 1}, {monitor("Shared"), 5}};
    e.update(m);
  }
  const auto text = e.render();
  CHECK(value(text, "lockwatch_lock_wait_observations_total{kind=\"monitor\",lock_class=\"Shared\",site=\"Shared.run\",target=\"a\"}") == 5);
  CHECK(value(text, "lockwatch_lock_wait_observations_total{kind=\"monitor\",lock_class=\"Shared\",site=\"Shared.run\",target=\"b\"}") == 5);
}

TEST_CASE("exporter: lock waiters show the latest sample only; a gone lock's series goes", "[export]") {
  Exporter e({.top_k = 2});
  auto m = full("a");
  m.latest->lock_waiters = {{monitor("A"), 3}, {monitor("B"), 1}, {monitor("C"), 1}, {monitor("D"), 2}};
  e.update(m);
  auto text = e.render();
  CHECK(value(text, "lockwatch_lock_waiters{kind=\"monitor\",lock_class=\"A\",site=\"A.run\",target=\"a\"}") == 3);
  CHECK(value(text, "lockwatch_lock_waiters{kind=\"monitor\",lock_class=\"D\",site=\"D.run\",target=\"a\"}") == 2);
  CHECK(value(text, "lockwatch_lock_waiters{kind=\"monitor\",lock_class=\"other\",site=\"other\",target=\"a\"}") == 2);
  m.latest->lock_waiters = {{monitor("B"), 4}};
  m.latest->pool_threads.clear();
  e.update(m);
  text = e.render();
  CHECK(lines_with(text, "lockwatch_lock_waiters{") == 1);
  CHECK(value(text, "lockwatch_lock_waiters{kind=\"monitor\",lock_class=\"B\",site=\"B.run\",target=\"a\"}") == 4);
  CHECK(lines_with(text, "lockwatch_pool_threads{") == 0);
}

TEST_CASE("exporter: remove() drops every series of the target and no other", "[export]") {
  Exporter e({});
  e.update(full("a"));
  e.update(full("b"));
  const auto before = e.render();
  e.remove("a");
  e.remove("never-seen");
  const auto after = e.render();
  CHECK(lines_with(after, "target=\"a\"") == 0);
  CHECK(lines_with(after, "target=\"b\"") == lines_with(before, "target=\"b\""));
  CHECK(lines_with(after, "lockwatch_build_info{") == 1);
  // Back again (a new JVM under the same label): its counters start from its own totals.
  auto again = full("a");
  again.totals.samples = {{"ok", 1}};
  e.update(again);
  CHECK(value(e.render(), "lockwatch_samples_total{result=\"ok\",target=\"a\"}") == 1);
}

TEST_CASE("exporter: Kubernetes labels on every series of a placed target, none on the others", "[export]") {
  Exporter e({});
  auto placed = full("Shop");
  placed.kubernetes = {"shop", "shop-7d9f8c6b5-x2v4q", "app"};
  e.update(placed);
  auto unplaced = full("Batch");
  unplaced.kubernetes = {"batch", "report-1", ""};  // the log tree did not name the container
  e.update(unplaced);
  e.update(full("Sidecar"));
  const auto text = e.render();
  const std::string where = "namespace=\"shop\",pod=\"shop-7d9f8c6b5-x2v4q\"";
  // Every series of the target carries all three, in the registry's (alphabetical) label order.
  CHECK(lines_with(text, "target=\"Shop\"") > 40);
  CHECK(lines_with(text, "target=\"Shop\"") == lines_with(text, "container=\"app\""));
  CHECK(lines_with(text, "target=\"Shop\"") == lines_with(text, where));
  CHECK(value(text, "lockwatch_lock_waiters{container=\"app\",kind=\"monitor\",lock_class=\"Inventory\"," + where +
                        ",site=\"Inventory.run\",target=\"Shop\"}") == 3);
  // An unknown value is no label, not an empty one; a target without any has none of them.
  CHECK(value(text, "lockwatch_target_up{namespace=\"batch\",pod=\"report-1\",target=\"Batch\"}") == 1);
  CHECK(value(text, "lockwatch_target_up{target=\"Sidecar\"}") == 1);
  CHECK(lines_with(text, "container=\"\"") == 0);
  // The daemon-wide families stay without them; the bound per target does not change.
  CHECK(lines_with(text, "lockwatch_build_info{version=") == 1);
  CHECK(lines_with(text, "target=\"Shop\"") == lines_with(text, "target=\"Sidecar\""));

  // Labels found later (the pod's log directory appeared): the old series go, new ones come with
  // the totals so far, and the counters carry on from there.
  auto later = full("Sidecar");
  later.kubernetes = {"web", "frontend-0", "app"};
  e.update(later);
  const auto relabelled = e.render();
  CHECK(lines_with(relabelled, "target=\"Sidecar\"") == lines_with(relabelled, "pod=\"frontend-0\""));
  CHECK(value(relabelled, "lockwatch_samples_total{container=\"app\",namespace=\"web\",pod=\"frontend-0\",result=\"ok\","
                          "target=\"Sidecar\"}") == 3);
  // Removing the target by its label removes its placed series too.
  e.remove("Shop");
  CHECK(lines_with(e.render(), "target=\"Shop\"") == 0);
}

TEST_CASE("exporter: hostile label values are sanitized and escaped", "[export]") {
  Exporter e({});
  TargetMetrics m;
  m.target = "t\n1";
  LatestSample latest;
  latest.lock_waiters = {{{"monitor", "a\"b\\c", std::string(300, 'x')}, 1}};
  m.latest = latest;
  e.update(m);
  const auto text = e.render();
  CHECK(lines_with(text, "lock_class=\"a\\\"b\\\\c\"") == 1);
  CHECK(lines_with(text, "target=\"t\xEF\xBF\xBD" "1\"") > 1);
  CHECK(lines_with(text, "site=\"" + std::string(197, 'x') + "\xE2\x80\xA6\"") == 1);
  e.remove("t\n1");  // the caller's name, not the sanitized one
  CHECK(lines_with(e.render(), "target=") == 0);
}

TEST_CASE("exporter: HELP says the values come from lockwatch's own sampling", "[export]") {
  Exporter e({});
  e.update(full("a"));
  const auto text = e.render();
  for (const auto& [name, type] : families) {
    INFO(name);
    const auto help = comment(text, "HELP", name);
    CHECK(help.size() > 40);
    if (name == "lockwatch_build_info") continue;
    CHECK(help.find("lockwatch's own periodic sampling") != std::string::npos);
    CHECK(help.find("scrape") != std::string::npos);
  }
  for (const char* gauge : {"lockwatch_threads", "lockwatch_lock_waiters", "lockwatch_deadlocked_threads", "lockwatch_pool_threads"}) {
    INFO(gauge);
    CHECK(comment(text, "HELP", gauge).find("(the latest sample), not taken at scrape time") != std::string::npos);
  }
  CHECK(comment(text, "HELP", "lockwatch_lock_waiters").find("lock_class=other") != std::string::npos);
}

TEST_CASE("exporter: unusable duration buckets fail at construction", "[export]") {
  CHECK_THROWS_AS(Exporter({.duration_buckets = {1, 0.5}}), std::invalid_argument);
  CHECK_THROWS_AS(Exporter({.duration_buckets = {0.1, 0.1}}), std::invalid_argument);
  CHECK_THROWS_AS(Exporter({.duration_buckets = {std::numeric_limits<double>::infinity()}}), std::invalid_argument);
  CHECK_NOTHROW(Exporter({.duration_buckets = {}}));
}

TEST_CASE("exporter: render runs while another thread updates", "[export]") {
  Exporter e({});
  std::atomic<bool> done{false};
  std::thread sampler([&] {
    auto m = full("a");
    for (std::uint64_t i = 0; i < 300; ++i) {
      m.totals.samples["ok"] = i;
      e.update(m);
      if (i % 50 == 0) e.remove("a");
    }
    done = true;
  });
  std::size_t scrapes = 0;
  while (!done) {
    const auto text = e.render();
    CHECK(text.find("lockwatch_build_info") != std::string::npos);
    ++scrapes;
  }
  sampler.join();
  CHECK(scrapes > 0);
}

namespace {

bool name_char(char c, bool first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' || (!first && c >= '0' && c <= '9');
}

// Advances past a metric or label name at `at`; false if there is none.
bool skip_name(const std::string& line, std::size_t& at) {
  const auto start = at;
  while (at < line.size() && name_char(line[at], at == start)) ++at;
  return at > start;
}

bool sample_value(const std::string& text) {
  if (text == "+Inf" || text == "-Inf" || text == "Nan") return true;
  char* end = nullptr;
  std::strtod(text.c_str(), &end);
  return !text.empty() && end == text.c_str() + text.size();
}

// `{name="value",...}` at `at` (escapes: \\ \" \n only); advances past it.
bool skip_labels(const std::string& line, std::size_t& at) {
  if (at >= line.size() || line[at] != '{') return true;
  ++at;
  while (at < line.size() && line[at] != '}') {
    if (!skip_name(line, at) || line.compare(at, 2, "=\"") != 0) return false;
    for (at += 2; at < line.size() && line[at] != '"'; ++at)
      if (line[at] == '\\' && (++at >= line.size() || std::string_view("\\\"n").find(line[at]) == std::string_view::npos)) return false;
    if (at >= line.size()) return false;
    ++at;
    if (at < line.size() && line[at] == ',') ++at;
  }
  return at++ < line.size();
}

// The first way `text` is not a text exposition (format 0.0.4) as lockwatch writes it, or "":
// each family once, HELP then TYPE before its samples, every sample of the family just typed
// (a histogram's with its suffixes), labels well quoted, values numbers, counters not negative.
std::string exposition_problem(const std::string& text) {
  if (!text.empty() && text.back() != '\n') return "no final newline";
  std::set<std::string> seen;
  std::string family, type;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# HELP ", 0) == 0) {
      std::size_t at = 7;
      if (!skip_name(line, at) || at >= line.size() || line[at] != ' ') return "bad HELP: " + line;
      family = line.substr(7, at - 7);
      type.clear();
      if (!seen.insert(family).second) return "family twice: " + family;
      continue;
    }
    if (line.rfind("# TYPE ", 0) == 0) {
      const std::string prefix = "# TYPE " + family + " ";
      if (line.rfind(prefix, 0) != 0 || !type.empty()) return "TYPE without its HELP: " + line;
      type = line.substr(prefix.size());
      if (type != "counter" && type != "gauge" && type != "histogram") return "bad TYPE: " + line;
      continue;
    }
    std::size_t at = 0;
    if (!skip_name(line, at)) return "bad sample name: " + line;
    const auto name = line.substr(0, at);
    const bool ours = name == family || (type == "histogram" && (name == family + "_bucket" || name == family + "_sum" ||
                                                                 name == family + "_count"));
    if (type.empty() || !ours) return "sample outside its family: " + line;
    if (!skip_labels(line, at) || at >= line.size() || line[at] != ' ') return "bad labels: " + line;
    const auto value = line.substr(at + 1);
    if (!sample_value(value)) return "bad value: " + line;
    if (type == "counter" && std::stod(value) < 0) return "negative counter: " + line;
  }
  return {};
}

// Series that must never go down: counters and a histogram's count, sum and buckets.
bool cumulative(const std::string& series) {
  for (const char* part : {"_total{", "_total ", "_bucket{", "_count{", "_sum{"})
    if (series.find(part) != std::string::npos) return true;
  return false;
}

// The first cumulative series of `before` that is gone or lower in `after`, or "".
std::string went_down(const std::map<std::string, double>& before, const std::map<std::string, double>& after,
                      const std::string& target) {
  for (const auto& [series, v] : before) {
    if (!cumulative(series) || series.find("target=\"" + target + "\"") == std::string::npos) continue;
    const auto it = after.find(series);
    if (it == after.end()) return "gone: " + series;
    if (it->second < v) return "down: " + series + " " + std::to_string(v) + " -> " + std::to_string(it->second);
  }
  return {};
}

}  // namespace

TEST_CASE("exporter: the validity check finds broken expositions", "[export]") {
  Exporter e({});
  e.update(full("a"));
  const auto text = e.render();
  CHECK(exposition_problem(text).empty());
  CHECK(exposition_problem(text + text) != "");                       // every family twice
  CHECK(exposition_problem(text.substr(0, text.size() - 3)) != "");   // cut in a line
  CHECK(exposition_problem("# HELP x_total h\n# TYPE x_total counter\nx_total{a=\"1} 2\n") != "");
  CHECK(exposition_problem("# HELP x_total h\n# TYPE x_total counter\ny_total 2\n") != "");
  CHECK(exposition_problem("# HELP x_total h\n# TYPE x_total counter\nx_total -1\n") != "");
  CHECK(went_down({{"a_total{target=\"t\"}", 2}}, {{"a_total{target=\"t\"}", 1}}, "t") != "");
  CHECK(went_down({{"a_total{target=\"t\"}", 2}}, {}, "t") != "");
  CHECK(went_down({{"a_total{target=\"t\"}", 2}}, {{"a_total{target=\"t\"}", 2}}, "t").empty());
}

TEST_CASE("exporter: renders during updates are whole, valid, and counters never go down", "[export]") {
  Exporter e({.top_k = 3});
  constexpr std::uint64_t updates = 2000;
  std::atomic<bool> done{false};
  std::thread sampler([&] {
    auto a = full("a");
    for (std::uint64_t i = 1; i <= updates; ++i) {
      // Totals rise, but every 7th update they fall back (a JVM restarted under the same label):
      // what is exported must not follow them down.
      const auto n = i % 7 == 0 ? i / 7 : i;
      a.totals.samples["ok"] = n;
      a.totals.wait_observations[monitor("L" + std::to_string(i % 5))] = n;  // more classes than K
      a.totals.wait_microseconds[monitor("L" + std::to_string(i % 5))] = n * 1000;
      a.new_durations = {static_cast<double>(i % 3)};
      a.ring_samples = static_cast<std::uint32_t>(i);
      a.ring_bytes = i * 1000;  // the same update sets both: a render showing them apart saw half of one
      e.update(a);
      auto b = full("b");      // a second target that comes and goes
      b.totals.samples["ok"] = i;
      e.update(b);
      if (i % 3 == 0) e.remove("b");
      if (i % 100 == 0) e.set_targets_skipped(i);
    }
    done = true;
  });
  std::size_t renders = 0;
  std::string problem;
  std::map<std::string, double> previous;
  while (problem.empty() && !done) {
    const auto text = e.render();
    ++renders;
    problem = exposition_problem(text);
    const auto now = samples_of(text);
    if (problem.empty()) problem = went_down(previous, now, "a");
    const auto ring = now.find("lockwatch_ring_samples{target=\"a\"}");
    if (problem.empty() && ring != now.end() && now.at("lockwatch_ring_bytes{target=\"a\"}") != ring->second * 1000)
      problem = "ring_samples and ring_bytes of different updates";
    previous = now;
  }
  sampler.join();
  INFO(problem);
  CHECK(problem.empty());
  CHECK(renders > 0);
  const auto last = samples_of(e.render());
  CHECK(last.at("lockwatch_samples_total{result=\"ok\",target=\"a\"}") == updates);  // the largest total seen
  CHECK(last.at("lockwatch_sample_duration_seconds_count{target=\"a\"}") == updates);
  CHECK(last.at("lockwatch_ring_samples{target=\"a\"}") == updates);
  CHECK(last.at("lockwatch_targets_skipped") == updates);
}

TEST_CASE("exporter: slots stay with their first owners over many updates; 'other' keeps its sum", "[export]") {
  Exporter e({.top_k = 2});
  TargetMetrics m;
  m.target = "a";
  const std::string family = "lockwatch_lock_wait_observations_total{";
  const auto series = [&](const std::string& c) {
    return family + "kind=\"monitor\",lock_class=\"" + c + "\",site=\"" + c + ".run\",target=\"a\"}";
  };
  const auto other = family + "kind=\"monitor\",lock_class=\"other\",site=\"other\",target=\"a\"}";
  m.totals.wait_observations = {{monitor("A"), 1}};
  e.update(m);
  m.totals.wait_observations = {{monitor("A"), 2}, {monitor("B"), 1}};
  e.update(m);
  m.totals.wait_observations = {{monitor("A"), 2}, {monitor("B"), 1}, {monitor("C"), 40}};
  e.update(m);  // C is by far the busiest, but the slots are taken
  CHECK(value(e.render(), other) == 40);
  CHECK(value(e.render(), series("B")) == 1);
  m.totals.wait_observations = {{monitor("B"), 3}, {monitor("C"), 45}, {monitor("D"), 100}};
  e.update(m);  // A no longer waited on: its counter stays, its slot is not given to D
  auto text = e.render();
  CHECK(lines_with(text, family) == 3);
  CHECK(value(text, series("A")) == 2);
  CHECK(value(text, series("B")) == 3);
  CHECK(value(text, other) == 145);
  CHECK(lines_with(text, "lock_class=\"C\"") + lines_with(text, "lock_class=\"D\"") == 0);
  m.totals.wait_observations = {{monitor("B"), 4}, {monitor("D"), 101}};
  e.update(m);  // C's total is gone from the input: "other" must not drop by it
  text = e.render();
  CHECK(value(text, other) == 145);
  CHECK(value(text, series("B")) == 4);
  m.totals.wait_observations = {{monitor("B"), 4}, {monitor("C"), 45}, {monitor("D"), 150}};
  e.update(m);
  CHECK(value(e.render(), other) == 195);
}

TEST_CASE("exporter: totals that reset leave every counter where it was until they pass it", "[export]") {
  Exporter e({.top_k = 2});
  auto m = full("a");
  m.totals.wait_microseconds = {{monitor("Inventory"), 2'500'000}};
  m.totals.pool_cpu_microseconds = {{"main", 1'000'000}};
  e.update(m);
  const auto before = samples_of(e.render());
  auto reset = full("a");  // same label, totals from zero: nothing counted yet
  reset.totals = {};
  reset.perf = {40, 0, 0, 0.0};
  reset.new_durations.clear();
  e.update(reset);
  const auto after = samples_of(e.render());
  CHECK(went_down(before, after, "a").empty());
  CHECK(after.at("lockwatch_samples_total{result=\"ok\",target=\"a\"}") == 3);
  CHECK(after.at("lockwatch_lock_wait_seconds_total{kind=\"monitor\",lock_class=\"Inventory\",site=\"Inventory.run\",target=\"a\"}") == 2.5);
  CHECK(after.at("lockwatch_jvm_monitor_parks_total{target=\"a\"}") == 567);
  CHECK(after.at("lockwatch_sample_duration_seconds_count{target=\"a\"}") == 2);
  // Past the old value, the counter follows the totals again.
  reset.totals.samples = {{"ok", 10}};
  reset.perf.parks = 600;
  e.update(reset);
  const auto later = samples_of(e.render());
  CHECK(later.at("lockwatch_samples_total{result=\"ok\",target=\"a\"}") == 10);
  CHECK(later.at("lockwatch_jvm_monitor_parks_total{target=\"a\"}") == 600);
  CHECK(went_down(after, later, "a").empty());
}

TEST_CASE("exporter: a removed target comes back with fresh slots and counters; others keep theirs", "[export]") {
  Exporter e({.top_k = 1});
  TargetMetrics a;
  a.target = "a";
  a.totals.wait_observations = {{monitor("A"), 5}};
  e.update(a);
  TargetMetrics b;
  b.target = "b";
  b.totals.wait_observations = {{monitor("A"), 7}};
  e.update(b);
  const auto b_before = samples_of(e.render());
  e.remove("a");
  auto text = e.render();
  CHECK(lines_with(text, "target=\"a\"") == 0);
  CHECK(exposition_problem(text).empty());
  // A new JVM under the same label: B is its first lock and takes the only slot, A folds.
  a.totals.wait_observations = {{monitor("B"), 1}, {monitor("A"), 0}};
  e.update(a);
  text = e.render();
  const std::string family = "lockwatch_lock_wait_observations_total{";
  CHECK(value(text, family + "kind=\"monitor\",lock_class=\"B\",site=\"B.run\",target=\"a\"}") == 1);
  CHECK(lines_with(text, "lock_class=\"A\",site=\"A.run\",target=\"a\"") == 0);
  CHECK(value(text, family + "kind=\"monitor\",lock_class=\"other\",site=\"other\",target=\"a\"}") == 0);
  CHECK(went_down(b_before, samples_of(text), "b").empty());
  CHECK(value(text, family + "kind=\"monitor\",lock_class=\"A\",site=\"A.run\",target=\"b\"}") == 7);
  // Removing the last target leaves the daemon-wide families only.
  e.remove("a");
  e.remove("b");
  text = e.render();
  CHECK(lines_with(text, "target=") == 0);
  CHECK(lines_with(text, "# TYPE ") == 2);
  CHECK(exposition_problem(text).empty());
}

TEST_CASE("exporter: an update that changes one value changes exactly its line", "[export]") {
  Exporter e({});
  auto m = full("a");
  m.new_durations.clear();  // else the histogram changes with every update
  e.update(m);
  e.update(full("b"));
  const auto before = samples_of(e.render());
  m.perf.threads_live = 41;  // an hsperfdata tick: nothing else moved
  e.update(m);
  const auto after = samples_of(e.render());
  REQUIRE(after.size() == before.size());
  std::vector<std::string> changed;
  for (const auto& [series, v] : after)
    if (before.at(series) != v) changed.push_back(series);
  CHECK(changed == std::vector<std::string>{"lockwatch_jvm_threads_live{target=\"a\"}"});
  CHECK(after.at("lockwatch_jvm_threads_live{target=\"a\"}") == 41);
  m.latest->threads_by_state["BLOCKED"] = 9;
  m.kubernetes = {"ns", "pod-1", ""};  // and now every series of the target gets new labels
  e.update(m);
  const auto text = e.render();
  CHECK(value(text, "lockwatch_threads{namespace=\"ns\",pod=\"pod-1\",state=\"BLOCKED\",target=\"a\"}") == 9);
  CHECK(lines_with(text, "target=\"a\"") == lines_with(text, "pod=\"pod-1\""));
  CHECK(exposition_problem(text).empty());
}
