// SPDX-License-Identifier: Apache-2.0
// The daemon's pure parts: target names, log lines, a target's running counts over real
// captured dumps, incident triggers and the incident directory.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>

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

TEST_CASE("form evidence from the parsed dump is what the text search finds", "[service][dump_form]") {
  const auto files = real_dump_files();
  REQUIRE(files.size() > 10);
  bool saw_virtual = false, saw_json = false;
  for (const auto& f : files) {
    INFO(f);
    const auto text = test::read_file(f);
    auto dumps = parser::parse_dumps(text);
    REQUIRE_FALSE(dumps.empty());
    const bool json = dumps.front().format == model::DumpFormat::dump_to_file_json;
    const auto searched = sampling::evidence_of(json ? sampling::DumpForm::json : sampling::DumpForm::print, text);
    const auto parsed = service::evidence_of(dumps.front());
    CHECK(parsed.jdk_major == searched.jdk_major);
    CHECK(parsed.virtual_threads == searched.virtual_threads);
    CHECK(parsed.mounted == searched.mounted);
    saw_virtual = saw_virtual || searched.virtual_threads;
    saw_json = saw_json || json;
  }
  CHECK(saw_virtual);
  CHECK(saw_json);
}
