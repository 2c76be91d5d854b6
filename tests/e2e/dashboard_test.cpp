// SPDX-License-Identifier: Apache-2.0
// The shipped dashboard and alert rules against a real Prometheus scraping the real lockwatch
// daemon on contended JVMs: every panel query returns data, the hot-lock alert goes off, and the
// BLOCKED-spike alert goes off for a target that jumps from calm, not for one that stays busy.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <signal.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <functional>
#include <map>
#include <regex>
#include <thread>

#include "http_get.hpp"
#include "json_reader.hpp"
#include "process.hpp"
#include "test_support.hpp"
#include "skip.hpp"

using namespace lockwatch;
using namespace std::chrono_literals;
using parser::detail::JsonDocument;
using parser::detail::JsonNode;
using parser::detail::JsonType;
namespace fs = std::filesystem;

namespace {

std::string url_encode(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || ch == '-' || ch == '_' || ch == '.' || ch == '~') {
      out.push_back(ch);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

/// A loopback port nobody listens on right now (the kernel's pick for port 0).
std::uint16_t free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  ::close(fd);
  return ok ? ntohs(addr.sin_port) : 0;
}

bool eventually(const std::function<bool()>& ok, std::chrono::seconds timeout) {
  for (const auto deadline = std::chrono::steady_clock::now() + timeout; std::chrono::steady_clock::now() < deadline;) {
    if (ok()) return true;
    std::this_thread::sleep_for(250ms);
  }
  return ok();
}

std::string str(const JsonNode* n) { return n != nullptr && n->is(JsonType::string) ? std::string(n->text) : ""; }

struct PanelQuery {
  std::string panel;
  std::string ref;
  std::string expr;
};

/// Every query of every panel, rows' nested panels included.
void collect_queries(const JsonDocument& doc, const JsonNode& panels, std::vector<PanelQuery>& out) {
  for (const auto& panel : doc.children(panels)) {
    if (const auto* nested = doc.member(panel, "panels", JsonType::array)) collect_queries(doc, *nested, out);
    const auto* targets = doc.member(panel, "targets", JsonType::array);
    if (targets == nullptr) continue;
    for (const auto& t : doc.children(*targets))
      out.push_back({str(doc.member(panel, "title")), str(doc.member(t, "refId")), str(doc.member(t, "expr"))});
  }
}

/// Replaces Grafana's $name and ${name} by `values`; an unknown variable fails the test.
std::string substitute(const std::string& expr, const std::map<std::string, std::string>& values) {
  static const std::regex var(R"(\$\{(\w+)\}|\$(\w+))");
  std::string out;
  auto last = expr.cbegin();
  for (std::sregex_iterator it(expr.begin(), expr.end(), var), end; it != end; ++it) {
    const std::string name = (*it)[1].matched ? (*it)[1].str() : (*it)[2].str();
    const auto found = values.find(name);
    INFO("variable $" << name << " in " << expr);
    REQUIRE(found != values.end());
    out.append(last, (*it)[0].first);
    out += found->second;
    last = (*it)[0].second;
  }
  out.append(last, expr.cend());
  return out;
}

/// The result array of a successful /api/v1/query answer, as its element count (-1: an error).
int result_count(const std::string& body) {
  const auto doc = JsonDocument::parse(body);
  if (!doc.ok() || doc.root() == nullptr || str(doc.member(*doc.root(), "status")) != "success") return -1;
  const auto* data = doc.member(*doc.root(), "data", JsonType::object);
  const auto* result = data != nullptr ? doc.member(*data, "result") : nullptr;
  if (result == nullptr) return -1;
  if (result->is(JsonType::array)) return static_cast<int>(result->size);
  return 1;  // a scalar or string result
}

struct Alert {
  std::string name, state;
  std::map<std::string, std::string> labels, annotations;
};

std::vector<Alert> alerts(std::uint16_t port) {
  const auto body = test::http_get(port, "/api/v1/alerts").body;
  const auto doc = JsonDocument::parse(body);
  std::vector<Alert> out;
  if (!doc.ok() || doc.root() == nullptr) return out;
  const auto* data = doc.member(*doc.root(), "data", JsonType::object);
  const auto* list = data != nullptr ? doc.member(*data, "alerts", JsonType::array) : nullptr;
  if (list == nullptr) return out;
  for (const auto& a : doc.children(*list)) {
    Alert alert;
    alert.state = str(doc.member(a, "state"));
    for (const char* field : {"labels", "annotations"}) {
      const auto* obj = doc.member(a, field, JsonType::object);
      if (obj == nullptr) continue;
      for (const auto& kv : doc.children(*obj))
        (std::string(field) == "labels" ? alert.labels : alert.annotations)[std::string(kv.key)] = str(&kv);
    }
    alert.name = alert.labels["alertname"];
    out.push_back(std::move(alert));
  }
  return out;
}

/// `text` with every match of `pattern` replaced; `count` says how many there were, so a test
/// notices when the shipped rules no longer have what it shortens.
std::string replace_all(const std::string& text, const std::regex& pattern, const std::string& with, int& count) {
  count = static_cast<int>(std::distance(std::sregex_iterator(text.begin(), text.end(), pattern), std::sregex_iterator()));
  return std::regex_replace(text, pattern, with);
}

bool has_alert(const std::vector<Alert>& seen, const std::string& name, const std::string& target) {
  return std::any_of(seen.begin(), seen.end(), [&](const Alert& a) {
    return a.name == name && (a.state == "pending" || a.state == "firing") && a.labels.count("target") != 0 &&
           a.labels.at("target") == target;
  });
}

/// Deletes a directory tree when the test ends, passed or not.
struct Scratch {
  fs::path dir;
  explicit Scratch(const std::string& name)
      : dir(fs::temp_directory_path() / ("lockwatch-dashboard-" + name + "-" + std::to_string(::getpid()))) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

}  // namespace

TEST_CASE("dashboard and alerts: every panel query has data, the hot-lock and BLOCKED-spike alerts fire on a real Prometheus",
          "[e2e][jvm][deploy][dashboard]") {
  if (test::run_command({"sh", "-c", "command -v " LOCKWATCH_PROMETHEUS}, 10s).exit_code != 0) {
    if (std::getenv("CI")) FAIL("prometheus is missing (Debian package prometheus)");
    test::skip("no prometheus at " LOCKWATCH_PROMETHEUS);
    return;
  }
  const Scratch work("e2e");
  const fs::path deploy = test::source_dir() / "deploy";

  // The contended JVM (8 request threads on one synchronized Inventory) and lockwatch on it,
  // with incidents at a low threshold.
  auto jvm = std::make_unique<test::Child>(std::vector<std::string>{
      fs::path(LOCKWATCH_JDK17_HOME) / "bin" / "java", "-Xmx64m", "-cp",
      (fs::path(LOCKWATCH_SCENARIO_CLASSES) / "jdk17").string(), "MonitorContention", "300"});
  REQUIRE(jvm->wait_for_line("READY", 60s));
  // A second JVM, calm until the test creates `spike`, then with 15 threads BLOCKED on one lock.
  const fs::path spike_trigger = work.dir / "spike";
  auto spiking_jvm = std::make_unique<test::Child>(std::vector<std::string>{
      fs::path(LOCKWATCH_JDK17_HOME) / "bin" / "java", "-Xmx64m", "-cp",
      (fs::path(LOCKWATCH_SCENARIO_CLASSES) / "jdk17").string(), "BlockedSpike", "300", spike_trigger.string()});
  REQUIRE(spiking_jvm->wait_for_line("READY", 60s));
  test::write_file(work.dir / "lockwatch.yaml", "incidents:\n  directory: " + (work.dir / "incidents").string() +
                                                    "\n  blocked_threshold: 3\n  burst_count: 3\n");
  auto daemon = std::make_unique<test::Child>(std::vector<std::string>{
      LOCKWATCH_BINARY, "run", "--config", (work.dir / "lockwatch.yaml").string(), "--pid", std::to_string(jvm->pid()),
      "--pid", std::to_string(spiking_jvm->pid()), "--listen", "127.0.0.1:0", "--interval", "200ms"});
  REQUIRE(daemon->wait_for_line("/metrics", 30s));
  std::smatch m;
  const std::string said = daemon->output();
  REQUIRE(std::regex_search(said, m, std::regex(R"(http://127\.0\.0\.1:(\d+)/metrics)")));
  const std::string lockwatch_address = "127.0.0.1:" + m[1].str();

  // Prometheus scraping it every second, with the shipped rules (only `for:` and the spike's
  // baseline window shortened).
  // Every `for:` becomes 1s, so that a test of seconds sees alerts go off; the spike alert's
  // half-hour baseline ending 5 minutes back becomes 20 s ending 2 s back, so a target can have
  // a calm history and a jump after it within the test.
  int rewritten = 0, baselines = 0;
  const auto shipped = test::read_file(deploy / "prometheus" / "lockwatch.rules.yml");
  const auto rules = replace_all(shipped, std::regex(R"((\n\s+for:\s*)\d+[smh])"), "$011s", rewritten);
  test::write_file(work.dir / "lockwatch.rules.yml",
                   replace_all(rules, std::regex(R"(\[30m\] offset 5m)"), "[20s] offset 2s", baselines));
  REQUIRE(rewritten >= 5);  // the rule file still has its `for:` clauses
  REQUIRE(baselines == 1);  // and the spike alert its baseline
  test::write_file(work.dir / "prometheus.yml",
                   "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n"
                   "rule_files:\n  - " + (work.dir / "lockwatch.rules.yml").string() +
                   "\nscrape_configs:\n  - job_name: lockwatch\n    static_configs:\n      - targets: ['" +
                   lockwatch_address + "']\n");
  const std::uint16_t port = free_port();
  REQUIRE(port != 0);
  auto prometheus = std::make_unique<test::Child>(std::vector<std::string>{
      LOCKWATCH_PROMETHEUS, "--config.file=" + (work.dir / "prometheus.yml").string(),
      "--storage.tsdb.path=" + (work.dir / "tsdb").string(), "--web.listen-address=127.0.0.1:" + std::to_string(port),
      "--log.level=warn"});
  // Generous deadlines: on a loaded 2-core machine Prometheus can take tens of seconds to start.
  const bool ready = eventually([&] { return test::http_get(port, "/-/ready").status == 200; }, 90s);
  INFO("prometheus " << (::kill(prometheus->pid(), 0) == 0 ? "is running" : "has exited") << "; its log is above");
  REQUIRE(ready);

  const auto query = [&](const std::string& promql) {
    return test::http_get(port, "/api/v1/query?query=" + url_encode(promql)).body;
  };
  REQUIRE(eventually([&] { return query("lockwatch_target_up == 1").find("MonitorContention") != std::string::npos; }, 60s));

  // Every query of every panel, with the dashboard's variables set as Grafana would.
  const auto dashboard_text = test::read_file(deploy / "grafana" / "lockwatch-dashboard.json");
  const auto dashboard = JsonDocument::parse(dashboard_text);
  REQUIRE(dashboard.ok());
  const auto* panels = dashboard.member(*dashboard.root(), "panels", JsonType::array);
  REQUIRE(panels != nullptr);
  std::vector<PanelQuery> queries;
  collect_queries(dashboard, *panels, queries);
  REQUIRE(queries.size() >= 15);
  const std::map<std::string, std::string> vars{{"namespace", ".*"}, {"pod", ".*"},  // "All": a sidecar has neither label
                                                {"target", "MonitorContention"}, {"instance", lockwatch_address},
                                                {"__rate_interval", "5s"}, {"__interval", "1s"}, {"__range", "1m"}};
  for (const auto& q : queries) {
    const auto promql = substitute(q.expr, vars);
    std::string body;
    if (!eventually([&] { return result_count(body = query(promql)) > 0; }, 20s))
      FAIL_CHECK("panel '" << q.panel << "' query " << q.ref << " has no data: " << promql << "\n" << body);
  }
  // The recording rule behind the BLOCKED-spike alert has the scenario's BLOCKED threads.
  CHECK(eventually([&] { return result_count(query("target:lockwatch_threads_blocked:sum >= 3")) > 0; }, 20s));

  // The hot lock goes off, named by its class and waiting site, pointing at the API.
  std::vector<Alert> seen;
  const bool hot = eventually([&] {
    seen = alerts(port);
    for (const auto& a : seen)
      if (a.name == "LockwatchHotLock" && (a.state == "pending" || a.state == "firing") &&
          a.labels.at("lock_class") == "Inventory" && a.labels.at("site") == "Inventory.reserve")
        return true;
    return false;
  }, 30s);
  for (const auto& a : seen) UNSCOPED_INFO(a.name << " " << a.state);
  REQUIRE(hot);
  for (const auto& a : seen) {
    if (a.name != "LockwatchHotLock") continue;
    CHECK(a.labels.at("target") == "MonitorContention");
    CHECK(a.annotations.at("description").find("/api/v1/targets/MonitorContention/contention") != std::string::npos);
  }

  // The spike: a calm history of zeros first (the baseline needs samples), no spike alert yet;
  // then the jump, and the alert goes off for that target only.
  const std::string calm = R"(count_over_time(target:lockwatch_threads_blocked:sum{target="BlockedSpike"}[1m]) >= 15)";
  REQUIRE(eventually([&] { return result_count(query(calm)) > 0; }, 60s));
  CHECK(result_count(query(R"(target:lockwatch_threads_blocked:sum{target="BlockedSpike"} == 0)")) > 0);
  CHECK_FALSE(has_alert(alerts(port), "LockwatchBlockedThreadsSpike", "BlockedSpike"));
  test::write_file(spike_trigger, "");
  const bool spiked = eventually([&] {
    seen = alerts(port);
    return has_alert(seen, "LockwatchBlockedThreadsSpike", "BlockedSpike");
  }, 60s);
  for (const auto& a : seen) UNSCOPED_INFO(a.name << " " << a.state << " " << (a.labels.count("target") ? a.labels.at("target") : ""));
  REQUIRE(spiked);
  for (const auto& a : seen) {
    if (a.name != "LockwatchBlockedThreadsSpike") continue;
    CHECK(a.labels.at("target") == "BlockedSpike");  // MonitorContention is busy, but steadily
    CHECK(a.labels.at("severity") == "warning");
    CHECK(std::regex_search(a.annotations.at("summary"), std::regex(R"(^BlockedSpike: 1\d BLOCKED threads, over 3x)")));
    CHECK(a.annotations.at("description").find("/api/v1/targets/BlockedSpike/contention") != std::string::npos);
  }
  // No deadlock, and the target is up: those alerts stay quiet.
  for (const auto& a : seen) {
    CHECK(a.name != "LockwatchDeadlock");
    CHECK(a.name != "LockwatchTargetDown");
  }
  // Processes are killed and reaped in reverse order by the Child destructors.
  prometheus.reset();
  daemon.reset();
  spiking_jvm.reset();
  jvm.reset();
}
