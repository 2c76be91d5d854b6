// SPDX-License-Identifier: Apache-2.0
// The daemon's pure parts: target names, log lines, a target's running counts over real
// captured dumps, incident triggers and the incident directory.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "lockwatch/sampling/dump_form.hpp"
#include "lockwatch/service/incident.hpp"
#include "lockwatch/service/log.hpp"
#include "lockwatch/service/target_name.hpp"
#include "lockwatch/service/target_state.hpp"
#include "dump_records.hpp"
#include "test_support.hpp"

using namespace lockwatch;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> scenario_dumps(const std::string& jdk, const std::string& scenario) {
  std::vector<std::string> out;
  for (const auto& f : test::files_below(test::captured_dir() / jdk / scenario))
    if (f.filename().string().starts_with("dump-")) out.push_back(test::read_file(f));
  return out;
}

service::TargetState fed(const std::vector<std::string>& dumps, service::ProcessingSettings settings = {}) {
  service::TargetState t("Shop", std::move(settings));
  double time = 1'700'000'000;
  for (const auto& d : dumps) t.add_dump(test::ok_dump(d, time += 1, 0.05));
  return t;
}

fs::path fresh_dir(const std::string& name) {
  const auto dir = fs::temp_directory_path() / ("lockwatch-test-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir;
}

}  // namespace

TEST_CASE("target label: the application's name, never its pid", "[service]") {
  // Each case is an argument vector, written with one space between arguments.
  const auto label = [](std::string_view line) {
    std::vector<std::string> argv;
    for (std::size_t at = 0; at <= line.size();) {
      const auto end = std::min(line.find(' ', at), line.size());
      argv.emplace_back(line.substr(at, end - at));
      at = end + 1;
    }
    return service::target_label(argv);
  };
  CHECK(label("/usr/bin/java -Xmx1g -cp app.jar:lib/* com.shop.Main 8080") == "Main");
  CHECK(label("java -Dx=y -jar /opt/shop/shop-1.2.jar --port 1") == "shop-1.2");
  CHECK(label("java --module-path mods -m shop.app/com.shop.App") == "App");
  CHECK(label("java -classpath /x ContendedShop 600") == "ContendedShop");
  CHECK(label("java -version") == "jvm");
  CHECK(label("/opt/shop/bin/shop-server --port 1") == "shop-server");
  CHECK(label("sleep 120") == "sleep");
  CHECK(label("java -cp x \"evil\\\"{}.Name\"") == "Name");
  CHECK(label("java -cp x com.a.\xff\xfe") == "jvm");
  CHECK(service::target_label({}) == "jvm");
}

TEST_CASE("target label: arguments are /proc's NUL-separated ones, spaces inside them kept", "[service]") {
  using service::target_label;
  // Split at spaces, "-Dx=a b.c" would leave "b.c", named "c".
  CHECK(target_label({"java", "-Dx=a b.c", "-cp", "D", "Main"}) == "Main");
  CHECK(target_label({"java", "-cp", "/opt/my app/lib/*", "com.shop.Main"}) == "Main");
  CHECK(target_label({"java", "", "-jar", "/opt/shop 2/shop.jar"}) == "shop");
  CHECK(target_label({"/opt/My Server/bin/run", "x"}) == "run");
}

TEST_CASE("log lines: key=value, quoted and escaped so a value cannot forge a line", "[service]") {
  const auto line = log::format_line("target added", {{"target", "Shop"}, {"cmdline", "java -jar x\nmsg=fake"}, {"empty", ""}});
  CHECK(line == "msg=\"target added\" target=Shop cmdline=\"java -jar x\\nmsg=fake\" empty=\"\"");
  CHECK(log::format_line("x", {{"k", "a\"b\\c\x01"}}) == "msg=x k=\"a\\\"b\\\\c\\x01\"");
}

TEST_CASE("rate limit: one line per period, counting the ones held back", "[service]") {
  using namespace std::chrono_literals;
  log::RateLimit limit(60s);
  const auto t0 = std::chrono::steady_clock::time_point{} + 1h;
  std::uint64_t suppressed = 99;
  CHECK(limit.allow(t0, suppressed));
  CHECK(suppressed == 0);
  CHECK_FALSE(limit.allow(t0 + 1s, suppressed));
  CHECK_FALSE(limit.allow(t0 + 59s, suppressed));
  CHECK(limit.allow(t0 + 61s, suppressed));
  CHECK(suppressed == 2);
}

TEST_CASE("glob: event-loop pool patterns", "[service]") {
  CHECK(service::glob_match("reactor-http-nio-*", "reactor-http-nio-N"));
  CHECK(service::glob_match("nioEventLoopGroup-?-*", "nioEventLoopGroup-2-N"));
  CHECK_FALSE(service::glob_match("reactor-http-nio-*", "http-nio-8080-exec-N"));
  CHECK(service::glob_match("*", ""));
}

TEST_CASE("target state: counters from real dumps; holders counted once their neighbour arrived", "[service]") {
  const auto dumps = scenario_dumps("jdk17", "MonitorContention");
  REQUIRE(dumps.size() == 3);
  auto t = fed({dumps[0]});
  auto m = t.take_metrics();
  REQUIRE(m.latest);
  CHECK(m.up);
  CHECK(m.totals.samples["ok"] == 1);
  CHECK(m.latest->threads_by_state["BLOCKED"] >= 1);
  CHECK(m.totals.holder_resolution.empty());  // the first dump waits for its neighbour
  std::uint64_t waits = 0;
  for (const auto& [key, n] : m.totals.wait_observations) waits += n;
  CHECK(waits >= 1);
  CHECK(m.new_durations.size() == 1);
  CHECK(t.take_metrics().new_durations.empty());

  t.add_dump(test::ok_dump(dumps[1], 2e9, 0.05));
  m = t.take_metrics();
  std::uint64_t resolved = 0;
  for (const auto& [result, n] : m.totals.holder_resolution) resolved += n;
  CHECK(resolved == waits);
  CHECK(!m.totals.holder_observations.empty());
  for (const auto& [labels, n] : m.totals.holder_observations) CHECK(labels.kind == "monitor");
  CHECK(m.ring_samples == 2);
}

TEST_CASE("target state: failures are counted by outcome and keep the last sample", "[service]") {
  auto t = fed(scenario_dumps("jdk17", "LatchWait"));
  t.add_dump(test::dump_record(sampling::Outcome::timeout, {}, 3e9, 10, "no reply within 10 s"));
  t.add_dump(test::ok_dump("this is not a thread dump", 3e9, 0.01));
  auto m = t.take_metrics();
  CHECK_FALSE(m.up);
  CHECK(m.totals.samples["timeout"] == 1);
  CHECK(m.totals.samples["parse_error"] == 1);
  CHECK(m.totals.samples["ok"] == 3);
  CHECK(m.latest);
  CHECK(t.last_outcome() == sampling::Outcome::parse_error);
  CHECK(t.last_error() == "attach answered 25 bytes without a thread dump: 'this is not a thread dump'");
  CHECK(m.ring_samples == 3);
  t.add_dump(test::ok_dump(scenario_dumps("jdk17", "LatchWait").front(), 4e9, 0.01));
  CHECK(t.last_error().empty());  // recovered: the API shows no stale error
}

TEST_CASE("target state: hsperfdata counters and the contended-enter rate", "[service]") {
  service::TargetState t("Shop", {});
  sampling::JvmCounters c;
  c.threads_live = 42, c.contended_lock_attempts = 1000, c.safepoint_time_ticks = 3'000'000'000, c.frequency = 1'000'000'000;
  t.add_perf(c, 100.0);
  CHECK_FALSE(t.contended_rate());
  c.contended_lock_attempts = 6000;
  t.add_perf(c, 102.0);
  REQUIRE(t.contended_rate());
  CHECK(*t.contended_rate() == Approx(2500.0));
  const auto m = t.take_metrics();
  CHECK(*m.perf.threads_live == 42);
  CHECK(*m.perf.safepoint_seconds == Approx(3.0));
  CHECK_FALSE(m.perf.parks);
}

TEST_CASE("incident trigger: BLOCKED threshold or contended-enter rate, off when zero", "[service][incident]") {
  const auto t = fed(scenario_dumps("jdk17", "MonitorContention"));
  REQUIRE(t.latest_blocked() >= 2);
  service::IncidentPolicy p;
  p.blocked_threshold = t.latest_blocked();
  auto trigger = service::check_trigger(p, t, 5.0);
  REQUIRE(trigger);
  CHECK(trigger->reason == "blocked_threads");
  CHECK(trigger->value == t.latest_blocked());
  p.blocked_threshold = t.latest_blocked() + 1;
  CHECK_FALSE(service::check_trigger(p, t, 5.0));
  p.blocked_threshold = 0;
  CHECK_FALSE(service::check_trigger(p, t, 5.0));
  p.enabled = false, p.blocked_threshold = 1;
  CHECK_FALSE(service::check_trigger(p, t, 5.0));
}

TEST_CASE("incident directory: every ring sample byte for byte, a summary, analyze-ready", "[service][incident]") {
  const auto dumps = scenario_dumps("jdk17", "ShortHolds");
  const auto t = fed(dumps);
  service::IncidentPolicy p;
  p.directory = fresh_dir("incident");
  const auto written = service::write_incident(p, t, {"blocked_threads", 25, 20, 1'700'000'100});
  REQUIRE(written.error.empty());
  CHECK(written.path.filename().string() == "20231114T221500Z-Shop");
  for (std::size_t i = 0; i < dumps.size(); ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "dump-%04zu.txt", i + 1);
    CHECK(test::read_file(written.path / name) == dumps[i]);
  }
  const auto summary = test::read_file(written.path / "summary.json");
  CHECK(summary.find("\"reason\":\"blocked_threads\"") != std::string::npos);
  CHECK(summary.find("\"analysis\":{") != std::string::npos);
  CHECK(summary.find("\"holders\"") != std::string::npos);
  CHECK(written.bytes > 0);
  fs::remove_all(p.directory);
}

TEST_CASE("incident budget: the oldest incidents go first, never the new one", "[service][incident]") {
  const auto dir = fresh_dir("budget");
  for (const auto* name : {"20240101T000000Z-A", "20240102T000000Z-A", "20240103T000000Z-A"}) {
    fs::create_directories(dir / name);
    test::write_file(dir / name / "dump-0001.txt", std::string(1000, 'x'));
  }
  const auto removed = service::enforce_budget(dir, 2500, dir / "20240101T000000Z-A");
  REQUIRE(removed.size() == 1);
  CHECK(removed[0].filename() == "20240102T000000Z-A");
  CHECK(fs::exists(dir / "20240101T000000Z-A"));
  CHECK(fs::exists(dir / "20240103T000000Z-A"));
  fs::remove_all(dir);
}

TEST_CASE("incident: one incident never exceeds the disk budget; the newest dumps are kept", "[service][incident]") {
  const auto dumps = scenario_dumps("jdk17", "ShortHolds");
  REQUIRE(dumps.size() >= 4);
  const auto t = fed(dumps);
  service::IncidentPolicy p;
  p.directory = fresh_dir("small-budget");
  p.max_bytes = (dumps[dumps.size() - 1].size() + dumps[dumps.size() - 2].size()) * 10 / 9 + 10;
  const auto written = service::write_incident(p, t, {"blocked_threads", 25, 20, 1'700'000'100});
  REQUIRE(written.error.empty());
  CHECK(test::read_file(written.path / "dump-0001.txt") == dumps[dumps.size() - 2]);
  CHECK(test::read_file(written.path / "dump-0002.txt") == dumps.back());
  CHECK_FALSE(fs::exists(written.path / "dump-0003.txt"));
  fs::remove_all(p.directory);
}

namespace {

// Real dumps of both forms: the captured scenarios (text and JSON) and the JSON files of
// each JDK's dump_to_file.
std::vector<fs::path> real_dump_files() {
  std::vector<fs::path> out;
  for (const auto& f : test::files_below(test::captured_dir()))
    if (f.filename().string().starts_with("dump-") || f.extension() == ".json") out.push_back(f);
  for (const auto& f : test::files_below(test::source_dir() / "tests" / "unit" / "data" / "dump_to_file")) out.push_back(f);
  return out;
}

// The record the attach backend delivers when its text went to the sink: the text fed in
// pieces of `step` bytes, then the record without it.
std::optional<std::uint64_t> add_streamed(service::TargetState& t, std::string_view text, std::size_t step, double time) {
  t.begin_stream();
  for (std::size_t at = 0; at < text.size(); at += step) t.feed_stream(text.substr(at, step));
  return t.add_dump(test::ok_dump({}, time, 0.05));
}

}  // namespace

TEST_CASE("target state: a streamed sample is the sample its whole text makes", "[service][stream]") {
  for (const std::size_t step : {std::size_t{13}, std::size_t{64 * 1024}}) {
    std::map<fs::path, std::vector<std::string>> by_dir;
    for (const auto& f : real_dump_files()) by_dir[f.parent_path()].push_back(test::read_file(f));
    REQUIRE(by_dir.size() > 10);
    for (const auto& [dir, dumps] : by_dir) {
      INFO(dir << " step " << step);
      service::TargetState whole("Shop", {}), streamed("Shop", {});
      double time = 1'700'000'000;
      for (const auto& d : dumps) {
        time += 1;
        const auto a = whole.add_dump(test::ok_dump(d, time, 0.05));
        const auto b = add_streamed(streamed, d, step, time);
        CHECK(streamed.last_outcome() == whole.last_outcome());
        CHECK(streamed.last_error() == whole.last_error());
        REQUIRE(a.has_value() == b.has_value());
        CHECK_FALSE(streamed.streaming());
        if (a) CHECK(streamed.ring().text(*b) == whole.ring().text(*a));
        REQUIRE(whole.last_evidence().has_value() == streamed.last_evidence().has_value());
        if (whole.last_evidence()) {
          CHECK(streamed.last_evidence()->jdk_major == whole.last_evidence()->jdk_major);
          CHECK(streamed.last_evidence()->virtual_threads == whole.last_evidence()->virtual_threads);
        }
      }
      CHECK(streamed.ring().bytes() == whole.ring().bytes());
      const auto ms = streamed.take_metrics(), mw = whole.take_metrics();
      CHECK(ms.totals.samples == mw.totals.samples);
      CHECK(ms.totals.samples_by_form == mw.totals.samples_by_form);
      CHECK(ms.totals.wait_observations == mw.totals.wait_observations);
      CHECK(ms.totals.holder_observations == mw.totals.holder_observations);
      CHECK(ms.totals.holder_resolution == mw.totals.holder_resolution);
      CHECK(ms.totals.wait_microseconds == mw.totals.wait_microseconds);
      REQUIRE(ms.latest.has_value() == mw.latest.has_value());
      if (mw.latest) {
        CHECK(ms.latest->threads_by_state == mw.latest->threads_by_state);
        CHECK(ms.latest->virtual_threads_by_state == mw.latest->virtual_threads_by_state);
        CHECK(ms.latest->lock_waiters == mw.latest->lock_waiters);
        CHECK(ms.latest->pool_threads == mw.latest->pool_threads);
      }
      CHECK(streamed.stacks().samples() == whole.stacks().samples());
      CHECK(streamed.stacks().distinct_stacks() == whole.stacks().distinct_stacks());
    }
  }
}

TEST_CASE("target state: a reply that fails mid-stream leaves no partial sample and frees the stream", "[service][stream]") {
  const auto dumps = scenario_dumps("jdk17", "MonitorContention");
  REQUIRE(dumps.size() == 3);
  auto t = fed({dumps[0]});
  const auto bytes_before = t.ring().bytes();
  const auto half = std::string_view(dumps[1]).substr(0, dumps[1].size() / 2);

  SECTION("timeout after half the text") {
    t.begin_stream();
    t.feed_stream(half);
    CHECK(t.ring().bytes() > bytes_before);  // the open stream holds what it interned
    t.add_dump(test::dump_record(sampling::Outcome::timeout, {}, 3e9, 10, "no reply within 10 s"));
    CHECK(t.last_outcome() == sampling::Outcome::timeout);
  }
  SECTION("too_large: the backend gave up on the reply's bounds") {
    t.begin_stream();
    t.feed_stream(half);
    t.add_dump(test::dump_record(sampling::Outcome::too_large, {}, 3e9, 1, "the reply passed limits.max_reply_bytes"));
    CHECK(t.last_outcome() == sampling::Outcome::too_large);
  }
  SECTION("a new dump's stream abandons one left open") {
    t.begin_stream();
    t.feed_stream(half);
    t.begin_stream();
    CHECK(t.ring().bytes() == bytes_before);
    t.abandon_stream();
  }
  SECTION("a record with its own text replaces an open stream") {
    t.begin_stream();
    t.feed_stream("garbage that is not the record's text\n");
    const auto id = t.add_dump(test::ok_dump(dumps[1], 3e9, 0.05));
    REQUIRE(id);
    CHECK(t.ring().text(*id) == dumps[1]);
    CHECK(t.ring().size() == 2);
    return;
  }
  CHECK_FALSE(t.streaming());
  CHECK(t.ring().size() == 1);
  CHECK(t.ring().bytes() == bytes_before);
}

TEST_CASE("target state: a streamed sample past ring.max_bytes is refused as too_large", "[service][stream]") {
  service::ProcessingSettings settings;
  settings.ring.max_bytes = 64 * 1024;
  const auto small = scenario_dumps("jdk17", "LatchWait").front();
  auto t = fed({small}, settings);
  const auto bytes_before = t.ring().bytes();
  std::string huge = "Full thread dump OpenJDK 64-Bit Server VM (17.0.15+6 mixed mode, sharing):\n\n";
  for (int i = 0; i < 20'000; ++i)
    huge += "\"t" + std::to_string(i) + "\" #" + std::to_string(i + 20) + " prio=5 os_prio=0 tid=0x1 nid=0x2 runnable\n"
            "   java.lang.Thread.State: RUNNABLE\n\tat A.m" + std::to_string(i) + "(A.java:1)\n\n";
  REQUIRE(huge.size() > 4 * settings.ring.max_bytes);
  CHECK_FALSE(add_streamed(t, huge, 64 * 1024, 3e9));
  CHECK(t.last_outcome() == sampling::Outcome::too_large);
  CHECK(t.last_error() == "a sample of " + std::to_string(huge.size()) + " bytes does not fit ring.max_bytes (65536 bytes) on its own: not kept");
  CHECK(t.ring().size() == 1);
  CHECK(t.ring().bytes() == bytes_before);
  CHECK_FALSE(t.streaming());
}

// The daemon's parser, not the io thread, counts a streamed reply's thread entries
// (sampling::TextChunks::past_thread_bound): past limits.max_threads the sample is too_large
// whether the reader stopped when told or the reply ended first.
TEST_CASE("target state: a streamed sample past limits.max_threads is refused as too_large", "[service][stream][limits]") {
  service::ProcessingSettings settings;
  settings.parser.max_threads = settings.parser.max_stream_threads = 1000;
  const auto small = scenario_dumps("jdk17", "LatchWait").front();
  auto t = fed({small}, settings);
  const auto bytes_before = t.ring().bytes();
  const auto many = [](int threads) {
    std::string text = "Full thread dump OpenJDK 64-Bit Server VM (17.0.15+6 mixed mode, sharing):\n\n";
    for (int i = 0; i < threads; ++i)
      text += "\"t" + std::to_string(i) + "\" #" + std::to_string(i + 20) + " prio=5 os_prio=0 tid=0x1 nid=0x2 runnable\n"
              "   java.lang.Thread.State: RUNNABLE\n\tat A.m(A.java:1)\n\n";
    return text;
  };
  SECTION("one entry past it") {
    const auto over = many(1001);
    t.begin_stream();
    t.feed_stream(over.substr(0, over.size() / 2));
    CHECK_FALSE(t.stream_past_thread_bound());  // ~500 entries so far
    t.feed_stream(over.substr(over.size() / 2));
    CHECK(t.stream_past_thread_bound());
    CHECK_FALSE(t.add_dump(test::ok_dump({}, 3e9, 0.05)));
    CHECK(t.last_outcome() == sampling::Outcome::too_large);
    CHECK(t.last_error() == "the reply held more than limits.max_threads (1000) thread entries: not kept (" +
                                std::to_string(over.size()) + " bytes read)");
    CHECK(t.ring().size() == 1);
    CHECK(t.ring().bytes() == bytes_before);
    CHECK_FALSE(t.streaming());
  }
  SECTION("over two dumps in one reply") {
    CHECK_FALSE(add_streamed(t, many(600) + many(600), 64 * 1024, 3e9));
    CHECK(t.last_outcome() == sampling::Outcome::too_large);
  }
  SECTION("exactly at it") {
    CHECK(add_streamed(t, many(1000), 64 * 1024, 3e9));
    CHECK(t.last_outcome() == sampling::Outcome::ok);
    CHECK(t.ring().size() == 2);
  }
  SECTION("the bound of one dump alone") {
    service::ProcessingSettings per_dump;
    per_dump.parser.max_threads = 1000;  // max_stream_threads left unbounded
    service::TargetState u("Shop", per_dump);
    CHECK_FALSE(add_streamed(u, many(1001), 64 * 1024, 3e9));
    CHECK(u.last_outcome() == sampling::Outcome::too_large);
    CHECK(u.last_error().starts_with("the reply held more than limits.max_threads (1000) thread entries"));
  }
}

namespace {

// Small dumps in the JVM's own layout, lines taken from the captured dumps and the corpus.
const std::string print_25 =
    "2026-11-30 09:32:39\nFull thread dump OpenJDK 64-Bit Server VM (25.0.3+9-LTS mixed mode, sharing):\n\n"
    "\"main\" #3 [3931] prio=5 os_prio=0 cpu=112.74ms elapsed=1.23s tid=0x00007f4d2c02a8d0 nid=3931 waiting on condition  [0x00007f4d3271e000]\n"
    "   java.lang.Thread.State: TIMED_WAITING (sleeping)\n"
    "\tat java.lang.Thread.sleepNanos0(java.base@25.0.3/Native Method)\n"
    "\tat java.lang.Thread.sleep(java.base@25.0.3/Thread.java:540)\n"
    "\tat VirtualThreads.main(VirtualThreads.java:46)\n\n";
const std::string print_25_carrier = print_25 +
    "\"ForkJoinPool-1-worker-2\" #29 [3957] daemon prio=5 os_prio=0 cpu=1.64ms elapsed=1.00s tid=0x00007f4d2c0f1100  [0x00007f4d3050b000]\n"
    "   Carrying virtual thread #34\n"
    "\tat jdk.internal.vm.Continuation.run(java.base@25.0.3/Continuation.java:251)\n"
    "\tat java.lang.VirtualThread.runContinuation(java.base@25.0.3/VirtualThread.java:297)\n"
    "\tat java.util.concurrent.ForkJoinWorkerThread.run(java.base@25.0.3/ForkJoinWorkerThread.java:187)\n\n";
const std::string print_21_unparker =
    "2024-04-17 14:16:17\nFull thread dump OpenJDK 64-Bit Server VM (21.0.2+13-LTS mixed mode, sharing):\n\n"
    "\"VirtualThread-unparker\" #83 [100] daemon prio=5 os_prio=0 cpu=5.98ms elapsed=257.04s tid=0x00007f0348015df0 nid=100 waiting on condition  [0x00007f04523aa000]\n"
    "   java.lang.Thread.State: TIMED_WAITING (parking)\n"
    "\tat jdk.internal.misc.Unsafe.park(java.base@21.0.2/Native Method)\n"
    "\t- parking to wait for  <0x00000000a6076ab0> (a java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject)\n"
    "\tat java.util.concurrent.locks.LockSupport.parkNanos(java.base@21.0.2/LockSupport.java:269)\n"
    "\tat java.util.concurrent.ScheduledThreadPoolExecutor$DelayedWorkQueue.take(java.base@21.0.2/ScheduledThreadPoolExecutor.java:1182)\n"
    "\tat java.lang.Thread.run(java.base@21.0.2/Thread.java:1583)\n\n";
// JDK 24+'s helper, whose own frames are in VirtualThread (captured/jdk25/VirtualThreads).
const std::string print_25_unblocker =
    "2026-11-30 10:00:00\nFull thread dump OpenJDK 64-Bit Server VM (25.0.3+9-LTS mixed mode, sharing):\n\n"
    "\"VirtualThread-unblocker\" #30 [12345] daemon prio=5 os_prio=0 cpu=0.21ms elapsed=4.80s tid=0x00007f1c2c1a2b30 nid=12345 waiting on condition  [0x00007f1c1d5fe000]\n"
    "   java.lang.Thread.State: RUNNABLE\n"
    "\tat java.lang.VirtualThread.takeVirtualThreadListToUnblock(java.base@25.0.3/Native Method)\n"
    "\tat java.lang.VirtualThread.unblockVirtualThreads(java.base@25.0.3/VirtualThread.java:1516)\n"
    "\tat java.lang.Thread.runWith(java.base@25.0.3/Thread.java:1487)\n"
    "\tat java.lang.Thread.run(java.base@25.0.3/Thread.java:1474)\n\n";
// An application thread named like the JVM's JDK 21+ helper, on JDK 17.
const std::string print_17_like_unblocker =
    "2026-11-30 09:31:16\nFull thread dump OpenJDK 64-Bit Server VM (17.0.21.1+2-1-deb12u1-Debian mixed mode, sharing):\n\n"
    "\"VirtualThread-unblocker\" #21 daemon prio=5 os_prio=0 cpu=0.65ms elapsed=5.30s tid=0x00007f4d2c0ea730 nid=0x1b2a runnable  [0x00007f4d3090c000]\n"
    "   java.lang.Thread.State: RUNNABLE\n"
    "\tat com.shop.Unblocker.run(Unblocker.java:12)\n"
    "\tat java.lang.Thread.run(java.base@17.0.21.1/Thread.java:840)\n\n";

std::string json_dump(std::string_view version, std::string_view threads) {
  return "{\n  \"threadDump\": {\n    \"processId\": \"3927\",\n    \"time\": \"2026-11-30T09:32:42.450342103Z\",\n"
         "    \"runtimeVersion\": \"" + std::string(version) + "\",\n    \"threadContainers\": [\n      {\n"
         "        \"container\": \"<root>\",\n        \"parent\": null,\n        \"owner\": null,\n        \"threads\": [\n" +
         std::string(threads) + "\n        ],\n        \"threadCount\": \"2\"\n      }\n    ]\n  }\n}\n";
}
const std::string json_main =
    "          {\n            \"tid\": \"3\",\n            \"name\": \"main\",\n            \"state\": \"TIMED_WAITING\",\n"
    "            \"stack\": [\n              \"java.base\\/java.lang.Thread.sleep(Thread.java:540)\",\n"
    "              \"VirtualThreads.main(VirtualThreads.java:46)\"\n            ]\n          }";
const std::string json_25_virtual = json_dump("25.0.3+9-LTS", json_main +
    ",\n          {\n            \"tid\": \"32\",\n            \"virtual\": true,\n            \"name\": \"metrics-vt-2\",\n"
    "            \"state\": \"BLOCKED\",\n            \"blockedOn\": \"MetricsRegistry@2627c501\",\n            \"stack\": [\n"
    "              \"MetricsRegistry.record(VirtualThreads.java:111)\",\n"
    "              \"java.base\\/java.lang.VirtualThread.run(VirtualThread.java:460)\"\n            ]\n          }");
const std::string json_25_platform = json_dump("25.0.3+9-LTS", json_main);
// JDK 21-24 JSON marks no thread virtual: its stack, ending in VirtualThread.run, tells.
const std::string json_21_virtual = json_dump("21.0.5+11-LTS",
    "          {\n            \"tid\": \"3\",\n            \"name\": \"main\",\n            \"stack\": [\n"
    "              \"java.base\\/java.lang.Thread.sleep(Thread.java:509)\"\n            ]\n          },\n"
    "          {\n            \"tid\": \"32\",\n            \"name\": \"\",\n            \"stack\": [\n"
    "              \"MetricsRegistry.record(VirtualThreads.java:111)\",\n"
    "              \"java.base\\/java.lang.VirtualThread.run(VirtualThread.java:309)\"\n            ]\n          }");

sampling::FormEvidence evidence_in(std::string_view text, model::DumpFormat format) {
  auto dumps = parser::parse_dumps(text);
  REQUIRE(dumps.size() == 1);
  REQUIRE(dumps.front().format == format);
  REQUIRE(dumps.front().threads.size() >= 1);
  return service::evidence_of(dumps.front());
}

}  // namespace

TEST_CASE("form evidence: what each form of dump shows of virtual threads", "[service][dump_form]") {
  using model::DumpFormat;
  struct Case {
    const char* what;
    const std::string& text;
    DumpFormat format;
    int jdk;
    bool virtual_threads, mounted;
  };
  const Case cases[] = {
      {"JDK 25, platform threads only", print_25, DumpFormat::jstack, 25, false, false},
      {"a carrier of a virtual thread", print_25_carrier, DumpFormat::jstack, 25, true, true},
      // The JVM's helpers outlive the application's virtual threads: used, not running.
      {"JDK 21's unparker", print_21_unparker, DumpFormat::jstack, 21, true, false},
      // Its own VirtualThread frames are not a mounted virtual thread.
      {"JDK 25's unblocker", print_25_unblocker, DumpFormat::jstack, 25, true, false},
      // No virtual threads before JDK 21, whatever a thread is named.
      {"JDK 17, a thread named like a helper", print_17_like_unblocker, DumpFormat::jstack, 17, false, false},
      {"JSON, JDK 25, a virtual thread", json_25_virtual, DumpFormat::dump_to_file_json, 25, true, true},
      {"JSON, JDK 25, platform threads only", json_25_platform, DumpFormat::dump_to_file_json, 25, false, false},
      {"JSON, JDK 21, known by its stack", json_21_virtual, DumpFormat::dump_to_file_json, 21, true, true},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    const auto e = evidence_in(c.text, c.format);
    CHECK(e.jdk_major == c.jdk);
    CHECK(e.virtual_threads == c.virtual_threads);
    CHECK(e.mounted == c.mounted);
  }

  // A dump without a VM banner states no JDK.
  auto headless = parser::parse_dumps(print_25_carrier.substr(print_25_carrier.find("\"main\"")));
  REQUIRE(headless.size() == 1);
  CHECK(service::evidence_of(headless.front()).jdk_major == 0);
}

TEST_CASE("form evidence of the real dumps: their JDK, and virtual threads where they ran", "[service][dump_form]") {
  // Each was dumped by the JDK its directory names; the dump_to_file inputs all come from one
  // Temurin 25.0.3 capture (tests/unit/dump_to_file_json_test.cpp). Virtual threads ran in the
  // VirtualThreads scenario and in the dump_to_file program, nowhere else.
  const auto captured = test::captured_dir(), data = test::source_dir() / "tests" / "unit" / "data" / "dump_to_file";
  std::set<fs::path> with_virtual = {data / "jdk21.json", data / "jdk25.json", data / "jdk27.json"};
  for (const auto* name : {"dump-1.txt", "dump-2.txt", "dump-3.txt", "threads.json"})
    with_virtual.insert(captured / "jdk25" / "VirtualThreads" / name);
  const auto files = real_dump_files();
  REQUIRE(files.size() > 10);
  for (const auto& f : with_virtual) CHECK(std::find(files.begin(), files.end(), f) != files.end());
  std::map<int, int> by_jdk;
  for (const auto& f : files) {
    INFO(f);
    auto dumps = parser::parse_dumps(test::read_file(f));
    REQUIRE_FALSE(dumps.empty());
    const auto e = service::evidence_of(dumps.front());
    const auto top = f.parent_path() == data ? std::string("jdk25") : f.lexically_relative(captured).begin()->string();
    const int jdk = top == "jdk17" ? 17 : top == "jdk25" ? 25 : -1;
    REQUIRE(jdk > 0);  // a new JDK's captures: name it here
    CHECK(e.jdk_major == jdk);
    CHECK(e.virtual_threads == with_virtual.contains(f));
    // Each of these shows a virtual thread itself: carriers in Thread.print, listed in JSON.
    CHECK(e.mounted == with_virtual.contains(f));
    ++by_jdk[jdk];
  }
  CHECK(by_jdk[17] > 10);  // the JDK 17 captures are among them: no virtual thread there
  CHECK(by_jdk[25] > 10);
}
