// SPDX-License-Identifier: Apache-2.0
// `lockwatch run` end to end: the real binary sampling real JVMs, checked through its
// HTTP endpoints, its exit codes and the files it writes.
#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <regex>
#include <thread>

#include "e2e_support.hpp"
#include "skip.hpp"

using namespace lockwatch;
using namespace lockwatch::e2e;
using namespace std::chrono_literals;
namespace fs = std::filesystem;


TEST_CASE("run: monitor contention - lock, waiting site and holder in the scrape and the API", "[e2e][jvm]") {
  auto jvm = start_jvm("MonitorContention");
  const auto dir = scratch("contention");
  Daemon d({"--pid", std::to_string(jvm->pid()), "--interval", "200ms", "--incident-dir", dir.string()});
  REQUIRE(eventually([&] { return metric(d.metrics(), "lockwatch_samples_total", {"result=\"ok\""}).value_or(0) >= 3; }));
  const auto m = d.metrics();
  INFO(m);
  const auto t = target("MonitorContention");
  CHECK(metric(m, "lockwatch_threads", {t, "state=\"BLOCKED\""}).value_or(0) >= 5);
  CHECK(metric(m, "lockwatch_lock_waiters", {t, "kind=\"monitor\"", "lock_class=\"Inventory\"", "site=\"Inventory.reserve\""}).value_or(0) >= 5);
  CHECK(metric(m, "lockwatch_lock_wait_observations_total", {t, "lock_class=\"Inventory\""}).value_or(0) >= 10);
  CHECK(metric(m, "lockwatch_lock_holder_observations_total", {t, "lock_class=\"Inventory\"", "holder_site=\"Inventory.reserve\""}).value_or(0) >= 1);
  CHECK(metric(m, "lockwatch_holder_resolution_total", {t, "result=\"same_dump\""}).value_or(0) >= 1);
  CHECK(metric(m, "lockwatch_pool_threads", {t, "pool=\"http-nio-8080-exec-N\"", "state=\"BLOCKED\""}).value_or(0) >= 5);
  CHECK(metric(m, "lockwatch_target_up", {t}) == 1);
  CHECK(metric(m, "lockwatch_jvm_threads_live", {t}).value_or(0) >= 10);  // from hsperfdata
  CHECK(metric(m, "lockwatch_sample_duration_seconds_count", {t}).value_or(0) >= 3);
  // Never a pid as a label: no label named so, and no identity label holding the pid as a
  // number of its own. (Not the pid anywhere in the text: a timestamp may hold its digits.)
  const std::regex pid_number("(^|[^0-9])" + std::to_string(jvm->pid()) + "([^0-9]|$)");
  const auto labels = labels_of(m);
  CHECK(labels.size() > 10);
  for (const auto& [name, value] : labels) {
    INFO(name << "=\"" << value << "\"");
    CHECK(name != "pid");
    if (name == "target" || name == "namespace" || name == "pod" || name == "container") CHECK_FALSE(std::regex_search(value, pid_number));
  }
  check_promtool(m);

  const auto targets = d.get("/api/v1/targets");
  CHECK(targets.status == 200);
  CHECK(targets.body.find("\"target\":\"MonitorContention\"") != std::string::npos);
  const auto samples = d.get("/api/v1/targets/MonitorContention/samples");
  std::smatch id;
  REQUIRE(std::regex_search(samples.body, id, std::regex(R"("id":(\d+))")));
  const auto text = d.get("/api/v1/targets/MonitorContention/samples/" + id[1].str());
  CHECK(text.status == 200);
  CHECK(text.body.find("Full thread dump") != std::string::npos);
  CHECK(d.get("/api/v1/targets/MonitorContention/contention").body.find("\"site\":\"Inventory.reserve\"") != std::string::npos);
  CHECK(d.get("/api/v1/targets/MonitorContention/collapsed?state=BLOCKED").body.find("Inventory.reserve") != std::string::npos);
  CHECK(d.get("/healthz").status == 200);
  CHECK(d.get("/api/v1/targets/nope/samples").status == 404);
  CHECK(d.get("/api/v1/targets/MonitorContention/samples/999999").status == 404);
}

TEST_CASE("run: very short holds - holders found across neighbouring samples", "[e2e][jvm]") {
  auto jvm = start_jvm("ShortHolds");
  Daemon d({"--pid", std::to_string(jvm->pid()), "--interval", "100ms", "--incident-dir", scratch("short").string()});
  const auto t = target("ShortHolds");
  REQUIRE(eventually([&] {
    return metric(d.metrics(), "lockwatch_lock_holder_observations_total", {t, "lock_class=\"TokenSigner\"", "holder_site=\"TokenSigner.sign\""}).value_or(0) >= 1;
  }, 60s));
  const auto m = d.metrics();
  INFO(m);
  CHECK(metric(m, "lockwatch_lock_wait_observations_total", {t, "lock_class=\"TokenSigner\"", "site=\"TokenSigner.sign\""}).value_or(0) >= 1);
  const auto resolved = metric(m, "lockwatch_holder_resolution_total", {t}).value_or(0);
  const auto waits = metric(m, "lockwatch_lock_wait_observations_total", {t}).value_or(0);
  CHECK(resolved >= 1);
  CHECK(resolved <= waits);  // each wait resolved once, the newest not yet
}

TEST_CASE("run: a ReentrantLock pool - owners with the -l policy from the config file", "[e2e][jvm]") {
  auto jvm = start_jvm("ReentrantLockPool");
  const auto dir = scratch("pool");
  test::write_file(dir / "lockwatch.yaml", "interval: 300ms\nlocks:\n  every: 1\nincidents:\n  enabled: false\n");
  Daemon d({"--config", (dir / "lockwatch.yaml").string(), "--pid", std::to_string(jvm->pid())});
  const auto t = target("ReentrantLockPool");
  const std::string cls = "lock_class=\"java.util.concurrent.locks.ReentrantLock$NonfairSync\"";
  REQUIRE(eventually([&] {
    // Where the owner took the lock: the waiters' site, which is in its stack (it is busy below, in createConnection).
    return metric(d.metrics(), "lockwatch_lock_holder_observations_total", {t, cls, "holder_site=\"ConnectionPool.borrow\""}).value_or(0) >= 1;
  }));
  CHECK(metric(d.metrics(), "lockwatch_lock_waiters", {t, "kind=\"park\"", cls, "site=\"ConnectionPool.borrow\""}).value_or(0) >= 4);
}

TEST_CASE("run: a monitor deadlock is a gauge", "[e2e][jvm]") {
  auto jvm = start_jvm("MonitorDeadlock");
  Daemon d({"--pid", std::to_string(jvm->pid()), "--interval", "200ms", "--incident-dir", scratch("deadlock").string()});
  REQUIRE(eventually([&] { return metric(d.metrics(), "lockwatch_deadlocked_threads", {target("MonitorDeadlock")}).value_or(0) >= 2; }));
}

TEST_CASE("run: a spike writes an incident that analyze reads", "[e2e][jvm][incident]") {
  auto jvm = start_jvm("MonitorContention");
  const auto dir = scratch("incident");
  test::write_file(dir / "lockwatch.yaml",
                   "interval: 300ms\nincidents:\n  directory: " + (dir / "incidents").string() +
                       "\n  blocked_threshold: 3\n  burst_count: 4\n  burst_interval: 100ms\n");
  Daemon d({"--config", (dir / "lockwatch.yaml").string(), "--pid", std::to_string(jvm->pid())});
  REQUIRE(eventually([&] { return metric(d.metrics(), "lockwatch_incidents_total", {target("MonitorContention")}).value_or(0) >= 1; }));
  const auto incidents = test::files_below(dir / "incidents");
  std::size_t dumps = 0;
  fs::path summary;
  for (const auto& f : incidents) {
    if (f.filename() == "summary.json") summary = f;
    dumps += f.filename().string().starts_with("dump-") ? 1u : 0u;
  }
  REQUIRE(!summary.empty());
  CHECK(dumps >= 5);  // the sample that triggered it and the burst
  const auto json = test::read_file(summary);
  CHECK(json.find("\"reason\":\"blocked_threads\"") != std::string::npos);
  CHECK(json.find("\"burst\":true") != std::string::npos);
  const auto analyzed = test::run_command({LOCKWATCH_BINARY, "analyze", summary.parent_path().string()}, 60s);
  INFO(analyzed.err);
  CHECK(analyzed.exit_code == 0);
  CHECK(analyzed.out.find("Inventory.reserve") != std::string::npos);
  std::this_thread::sleep_for(1s);  // rate limit: still one incident
  CHECK(metric(d.metrics(), "lockwatch_incidents_total", {target("MonitorContention")}) == 1);
}

TEST_CASE("run: SIGHUP reloads the config; a broken file is refused and the daemon keeps going", "[e2e][jvm]") {
  auto jvm = start_jvm("MonitorContention");
  const auto dir = scratch("reload");
  const auto config = dir / "lockwatch.yaml";
  const std::string base = "interval: 200ms\nincidents:\n  directory: " + (dir / "incidents").string() + "\n  burst_count: 2\n";
  test::write_file(config, base + "  blocked_threshold: 0\n");
  Daemon d({"--config", config.string(), "--pid", std::to_string(jvm->pid())});
  REQUIRE(eventually([&] { return metric(d.metrics(), "lockwatch_samples_total", {"result=\"ok\""}).value_or(0) >= 3; }));
  CHECK(metric(d.metrics(), "lockwatch_incidents_total").value_or(0) == 0);
  test::write_file(config, "interval: [broken\n");
  ::kill(d.proc->pid(), SIGHUP);
  std::this_thread::sleep_for(1s);
  CHECK(d.get("/healthz").status == 200);
  test::write_file(config, base + "  blocked_threshold: 3\n");
  ::kill(d.proc->pid(), SIGHUP);
  CHECK(eventually([&] { return metric(d.metrics(), "lockwatch_incidents_total").value_or(0) >= 1; }));
}

// `lockwatch run` execs lockwatch-daemon from lockwatch's directory: one process, the command
// line as typed (ps, /proc/PID/cmdline, a target label derived from it), stopped by SIGTERM.
TEST_CASE("run: lockwatch becomes lockwatch-daemon - same pid, same command line", "[e2e]") {
  Daemon d({"--interval", "1s", "--pid", "999999"});
  const auto pid = std::to_string(d.proc->pid());
  CHECK(fs::read_symlink("/proc/" + pid + "/exe").filename() == "lockwatch-daemon");
  const auto cmdline = test::read_file("/proc/" + pid + "/cmdline");
  CHECK(cmdline.rfind(lockwatch_binary() + std::string("\0run\0", 5), 0) == 0);
  CHECK(d.get("/healthz").status == 200);
  ::kill(d.proc->pid(), SIGTERM);  // it exits (a zombie until the test reaps it): the signal reached the daemon
  CHECK(eventually([&] { return test::read_file("/proc/" + pid + "/stat").find(") Z ") != std::string::npos; }));
}

// SIGTERM while the processing thread publishes a sample: a publication arms a timer on the io
// thread, and a daemon whose io thread had already run out of work waited for that timer
// forever. The window is the processing of a sample, so a busy daemon is stopped many times at
// moments spread over its sampling interval; each time it must exit 0, promptly.
TEST_CASE("run: SIGTERM at any moment of a busy daemon's sampling stops it", "[e2e][jvm]") {
  auto jvm = start_jvm_of(LOCKWATCH_JDK17_HOME, "jdk17", "ThreadCrowd", {"-Xss512k"}, {"300", "1000"});
  for (int round = 0; round < 12; ++round) {
    INFO("round " << round);
    Daemon d({"--interval", "50ms", "--pid", std::to_string(jvm->pid())});
    REQUIRE(eventually([&] { return metric(d.metrics(), "lockwatch_samples_total", {"result=\"ok\""}).value_or(0) >= 2; }));
    std::this_thread::sleep_for(std::chrono::milliseconds(400 + 37 * round));  // past the first publication, spread over the interval
    ::kill(d.proc->pid(), SIGTERM);
    const auto exited = d.proc->wait_exit(10s);
    REQUIRE(exited);
    CHECK(*exited == 0);
  }
}

// A target is published at most once a second: a sample sooner waits for a timer, a second
// after the last publication. The JVM is stopped at moments spread over the interval, so that
// the last sample before it is sometimes one that waits: it must reach /metrics long before the
// dump left hanging gives up (`timeout`, 30 s here), with no sample after it to carry it.
TEST_CASE("run: the last sample before a target stops answering is on /metrics within a second", "[e2e][jvm]") {
  auto jvm = start_jvm("MonitorContention");
  const auto dir = scratch("published");
  test::write_file(dir / "lockwatch.yaml", "interval: 300ms\ntimeout: 30s\nincidents:\n  enabled: false\n");
  Daemon d({"--config", (dir / "lockwatch.yaml").string(), "--pid", std::to_string(jvm->pid())});
  const auto ring_now = [&] {  // the target's state itself, read under its lock, not the exporter's
    static const std::regex samples(R"re("samples":([0-9]+))re");
    std::smatch m;
    const auto body = d.get("/api/v1/targets").body;
    return std::regex_search(body, m, samples) ? std::stod(m[1]) : -1.0;
  };
  const auto published = [&] { return metric(d.metrics(), "lockwatch_ring_samples", {}).value_or(-1); };
  for (int round = 0; round < 4; ++round) {
    INFO("round " << round);
    const double before = ring_now();
    REQUIRE(eventually([&] { return ring_now() >= before + 4; }));  // sampling
    std::this_thread::sleep_for(std::chrono::milliseconds(70 * round));
    REQUIRE(::kill(jvm->pid(), SIGSTOP) == 0);
    const auto stopped = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(500ms);  // a reply already read is processed
    const double last = ring_now();
    while (published() != last && std::chrono::steady_clock::now() - stopped < 20s) std::this_thread::sleep_for(50ms);
    const auto waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped).count();
    CHECK(published() == last);
    CHECK(ring_now() == last);  // no sample came after it: the timer published it
    CHECK(waited < 3.0);        // a second, and a busy machine's slack
    REQUIRE(::kill(jvm->pid(), SIGCONT) == 0);
  }
}

TEST_CASE("run: lockwatch without lockwatch-daemon beside it says so and exits 1", "[e2e]") {
  const auto dir = scratch("lonely");
  fs::copy_file(lockwatch_binary(), dir / "lockwatch");
  const auto r = test::run_command({(dir / "lockwatch").string(), "run", "--pid", "1"}, 30s);
  CHECK(r.exit_code == 1);
  CHECK(r.err == "lockwatch run: cannot start the daemon " + (dir / "lockwatch-daemon").string() +
                     ": No such file or directory (lockwatch-daemon is installed next to lockwatch)\n");
  CHECK(test::run_command({(dir / "lockwatch").string(), "version"}, 30s).exit_code == 0);  // the rest works alone
}

TEST_CASE("run: a bad config names file, line and column and the daemon does not start", "[e2e]") {
  const auto dir = scratch("badconfig");
  test::write_file(dir / "bad.yaml", "interval: 1s\nring:\n  samples: lots\n");
  const auto r = test::run_command({LOCKWATCH_BINARY, "run", "--config", (dir / "bad.yaml").string()}, 30s);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("bad.yaml:3:12:") != std::string::npos);
  const auto usage = test::run_command({LOCKWATCH_BINARY, "run", "--interval", "soon"}, 30s);
  CHECK(usage.exit_code == 2);
  CHECK(usage.err.find("--interval") != std::string::npos);
}

TEST_CASE("run: a JVM that refuses attach is a labelled failure; a JVM that exits is dropped", "[e2e][jvm]") {
  auto refusing = start_jvm("MonitorContention", {"-XX:+DisableAttachMechanism"});
  auto leaving = start_jvm("LatchWait");
  const auto dir = scratch("failing");
  test::write_file(dir / "lockwatch.yaml", "interval: 200ms\ntargets:\n  rescan: 500ms\nincidents:\n  enabled: false\n");
  Daemon d({"--config", (dir / "lockwatch.yaml").string(), "--pid", std::to_string(refusing->pid()), "--pid",
            std::to_string(leaving->pid())});
  REQUIRE(eventually([&] {
    const auto m = d.metrics();
    return metric(m, "lockwatch_samples_total", {target("MonitorContention"), "result=\"attach_refused\""}).value_or(0) >= 1 &&
           metric(m, "lockwatch_samples_total", {target("LatchWait"), "result=\"ok\""}).value_or(0) >= 1;
  }));
  CHECK(metric(d.metrics(), "lockwatch_target_up", {target("MonitorContention")}) == 0);
  CHECK(refusing->output().find("Full thread dump") == std::string::npos);  // never signalled into a dump
  leaving.reset();  // killed and reaped
  REQUIRE(eventually([&] { return d.metrics().find(target("LatchWait")) == std::string::npos; }));
  CHECK(d.get("/api/v1/targets").body.find("LatchWait") == std::string::npos);
  CHECK(d.get("/healthz").status == 200);
}

TEST_CASE("run: an event-loop thread BLOCKED is its own gauge", "[e2e][jvm]") {
  auto jvm = start_jvm("EventLoopBlocked");
  Daemon d({"--pid", std::to_string(jvm->pid()), "--interval", "200ms", "--incident-dir", scratch("eventloop").string()});
  REQUIRE(eventually([&] {
    return metric(d.metrics(), "lockwatch_event_loop_blocked_threads", {target("EventLoopBlocked"), "pool=\"reactor-http-nio-N\""})
               .value_or(0) >= 1;
  }));
  CHECK_FALSE(metric(d.metrics(), "lockwatch_event_loop_blocked_threads", {"pool=\"http-nio"}));
}

namespace {

// bcrypt (cost 4) of "secret", as `htpasswd -nbBC 4 USER secret` writes it.
constexpr const char* secret_hash = "$2y$04$ORtftCAIc4UaHHaJd/qcnOv/IPmsgRVezpq.RxLdbGHp/VHD35iN2";

bool have(const std::string& tool) {
  if (test::run_command({"sh", "-c", "command -v " + tool}, 10s).exit_code == 0) return true;
  if (std::getenv("CI")) FAIL(tool + " is missing (see scripts/deps.sh)");
  test::skip(tool + " not installed");
  return false;
}

struct Curl {
  int status = 0;  // 0: no HTTP answer
  std::string body;
};

// curl trusting the test certificate; `args` add credentials, and the URL comes last.
Curl curl(const fs::path& ca, std::vector<std::string> args) {
  std::vector<std::string> argv{"curl", "--silent", "--max-time", "10", "--cacert", ca.string(), "--write-out", "\n%{http_code}"};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto r = test::run_command(argv, 30s);
  const auto nl = r.out.rfind('\n');
  if (nl == std::string::npos) return {};
  return {std::atoi(r.out.c_str() + nl + 1), r.out.substr(0, nl)};
}

void write_web_config(const fs::path& file, const std::string& user) {
  // Relative paths: the certificate sits next to the file, as in a mounted Secret.
  test::write_file(file, "tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\n  min_version: TLS12\n"
                         "basic_auth_users:\n  " + user + ": " + secret_hash + "\n");
}

}  // namespace

TEST_CASE("run: --web.config.file serves /metrics over TLS to an authenticated client, and reloads it", "[e2e][web]") {
  if (!have("openssl") || !have("curl")) return;
  const auto dir = scratch("web");
  const auto made = test::run_command({"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
                                       "-addext", "subjectAltName=IP:127.0.0.1", "-days", "1", "-keyout", (dir / "tls.key").string(),
                                       "-out", (dir / "tls.crt").string()}, 120s);
  INFO(made.err);
  REQUIRE(made.exit_code == 0);
  write_web_config(dir / "web.yaml", "prometheus");
  Daemon d({"--web.config.file", (dir / "web.yaml").string(), "--match", "^no-such-jvm$", "--incident-dir", (dir / "incidents").string()});
  CHECK(d.proc->output().find("https://127.0.0.1:") != std::string::npos);
  const auto url = "https://127.0.0.1:" + std::to_string(d.port);
  const auto ca = dir / "tls.crt";

  const auto metrics = curl(ca, {"--user", "prometheus:secret", url + "/metrics"});
  CHECK(metrics.status == 200);
  CHECK(metrics.body.find("lockwatch_") != std::string::npos);
  CHECK(curl(ca, {url + "/metrics"}).status == 401);
  CHECK(curl(ca, {"--user", "prometheus:wrong", url + "/api/v1/targets"}).status == 401);
  CHECK(curl(ca, {url + "/healthz"}).status == 200);
  CHECK(curl(ca, {"http://127.0.0.1:" + std::to_string(d.port) + "/metrics"}).status == 400);  // plain HTTP

  // A broken web config on SIGHUP is refused and the running one kept.
  test::write_file(dir / "web.yaml", "tls_server_config:\n  cert_file: tls.crt\n");
  ::kill(d.proc->pid(), SIGHUP);
  std::this_thread::sleep_for(1s);
  CHECK(curl(ca, {"--user", "prometheus:secret", url + "/metrics"}).status == 200);
  // A good one replaces the users (and re-reads the certificate files).
  write_web_config(dir / "web.yaml", "grafana");
  ::kill(d.proc->pid(), SIGHUP);
  CHECK(eventually([&] { return curl(ca, {"--user", "grafana:secret", url + "/metrics"}).status == 200; }, 10s));
  CHECK(curl(ca, {"--user", "prometheus:secret", url + "/metrics"}).status == 401);
}

TEST_CASE("run: a bad web config names file, line and column and the daemon does not start", "[e2e][web]") {
  const auto dir = scratch("badweb");
  test::write_file(dir / "web.yaml", "tls_server_config:\n  cert_file: a.crt\n  key_file: a.key\n  min_version: TLS10\n");
  const auto r = test::run_command({LOCKWATCH_BINARY, "run", "--web.config.file", (dir / "web.yaml").string()}, 30s);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("web.yaml:4:16: tls_server_config.min_version: expected one of TLS12, TLS13, got 'TLS10'") != std::string::npos);
  test::write_file(dir / "web.yaml", "tls_server_config:\n  cert_file: missing.crt\n  key_file: missing.key\n");
  const auto missing = test::run_command({LOCKWATCH_BINARY, "run", "--listen", "127.0.0.1:0", "--web.config.file", (dir / "web.yaml").string()}, 30s);
  CHECK(missing.exit_code == 1);
  CHECK(missing.err.find("TLS: cannot load the certificate " + (dir / "missing.crt").string()) != std::string::npos);
}

TEST_CASE("dump: the library scenarios start on JDK 17 and 25 and lockwatch dump reads each", "[e2e][jvm][libraries]") {
  // A line of each one's raw dump that only the established state prints (not an analysis).
  const std::vector<std::pair<std::string, std::string>> scenarios{
      {"LogbackSyncAppender", "at ch.qos.logback.core.OutputStreamAppender.writeBytes("},
      {"Log4j2SyncAppender", "- waiting to lock <"},
      {"Pool2Exhausted", "at org.apache.commons.pool2.impl.LinkedBlockingDeque.takeFirst("},
      {"NettyEventLoops", " (a CodecPluginClassLoader)"},
      {"TomcatSyncCache", " (a ProductCache)"},
  };
  for (const std::string jdk : {"jdk17", "jdk25"}) {
    for (const auto& [main_class, line] : scenarios) {
      INFO(main_class << " on " << jdk);
      auto jvm = start_library_jvm(jdk, main_class, {"60"});
      if (!jvm) continue;  // skipped, with a warning
      const auto r = test::run_command({lockwatch_binary(), "dump", "--pid", std::to_string(jvm->pid()), "--locks"}, 60s);
      INFO(r.err);
      CHECK(r.exit_code == 0);
      CHECK(r.out.find(line) != std::string::npos);
    }
  }
}
