// SPDX-License-Identifier: Apache-2.0
// What lockwatch does with Thread.dump_to_file JSON samples: virtual threads counted apart
// from platform threads, their waits counted as waiters, carriers they pin, correlation by
// tid across JSON samples and across JSON and Thread.print samples of one JVM, and bounded
// series with 100 000 virtual threads.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>
#include <string>

#include "analyze_command.hpp"
#include "json_reader.hpp"
#include "lockwatch/analysis/correlator.hpp"
#include "lockwatch/analysis/virtual_threads.hpp"
#include "lockwatch/exporter/exporter.hpp"
#include "lockwatch/parser/dump_parser.hpp"
#include "lockwatch/service/target_state.hpp"
#include "dump_records.hpp"
#include "test_support.hpp"

using namespace lockwatch;
using analysis::LockKind;
using model::ThreadState;

namespace {

// One entry of a JSON dump's "threads" array; `extra` is appended as members (lock fields).
struct JsonThread {
  std::uint64_t tid = 0;
  std::string name;
  bool is_virtual = false;
  std::string state;  // "" for the JDK 21-24 layout
  std::vector<std::string> stack;
  std::string extra;  // e.g. R"("blockedOn": "Cache@1a2b")"
};

std::string quoted(const std::string& s) { return '"' + s + '"'; }

std::string thread_json(const JsonThread& t) {
  std::string out = "{\"tid\": \"" + std::to_string(t.tid) + "\", \"name\": " + quoted(t.name);
  if (t.is_virtual && !t.state.empty()) out += ", \"virtual\": true";
  if (!t.state.empty()) out += ", \"state\": " + quoted(t.state);
  if (!t.extra.empty()) out += ", " + t.extra;
  out += ", \"stack\": [";
  for (std::size_t i = 0; i < t.stack.size(); ++i) out += (i ? ", " : "") + quoted(t.stack[i]);
  return out + "]}";
}

// Platform threads in <root>, virtual threads in a per-task executor, as JDK 25 prints them.
std::string json_dump(const std::vector<JsonThread>& threads) {
  std::string platform, virtual_threads;
  for (const auto& t : threads) {
    auto& into = t.is_virtual ? virtual_threads : platform;
    into += (into.empty() ? "" : ",\n") + thread_json(t);
  }
  return "{\"threadDump\": {\"processId\": \"4242\", \"time\": \"2026-12-01T10:00:00Z\", \"runtimeVersion\": \"25.0.3\",\n"
         "\"threadContainers\": [\n"
         "{\"container\": \"<root>\", \"parent\": null, \"owner\": null, \"threads\": [" + platform + "]},\n"
         "{\"container\": \"java.util.concurrent.ThreadPerTaskExecutor@5e2de80c\", \"parent\": \"<root>\", \"owner\": null, "
         "\"futureUnknown\": {\"a\": [1, 2]}, \"threads\": [" + virtual_threads + "]}]}}\n";
}

const std::string vthread_run = "java.base/java.lang.VirtualThread.run(VirtualThread.java:466)";

JsonThread cache_waiter(std::uint64_t tid, std::string name, bool is_virtual, std::string hash = "1a2b") {
  JsonThread t{tid, std::move(name), is_virtual, "BLOCKED", {"Cache.get(Cache.java:10)", "App.handle(App.java:5)"},
               "\"blockedOn\": \"Cache@" + hash + "\""};
  if (is_virtual) t.stack.push_back(vthread_run);
  return t;
}

JsonThread cache_holder(std::uint64_t tid, std::string hash = "1a2b") {
  return {tid, "cache-loader", false, "TIMED_WAITING",
          {"java.base/java.lang.Thread.sleep0(Native Method)", "java.base/java.lang.Thread.sleep(Thread.java:540)",
           "Cache.reload(Cache.java:20)", "Cache.get(Cache.java:11)"},
          "\"monitorsOwned\": [{\"depth\": 2, \"locks\": [\"Cache@" + hash + "\"]}]"};
}

model::ThreadDump parse_one(const std::string& text) {
  auto dumps = parser::parse_dumps(text);
  REQUIRE(dumps.size() == 1);
  return std::move(dumps.front());
}

const analysis::LockSummary* find_lock(const analysis::SequenceReport& r, LockKind kind, std::string_view cls) {
  auto it = std::find_if(r.locks.begin(), r.locks.end(), [&](const auto& l) { return l.key.kind == kind && l.key.lock_class == cls; });
  return it == r.locks.end() ? nullptr : &*it;
}

// A Thread.print dump of the same JVM: it lists platform threads only.
std::string text_dump(const std::string& threads) {
  return "2026-12-01 10:00:01\nFull thread dump OpenJDK 64-Bit Server VM (25.0.3+9-LTS mixed mode, sharing):\n\n" + threads +
         "JNI global refs: 10, weak refs: 0\n\n";
}

std::string text_platform_waiter(std::uint64_t id, const std::string& address) {
  return "\"cache-reader\" #" + std::to_string(id) +
         " [901] prio=5 os_prio=0 cpu=1.00ms elapsed=9.00s tid=0x00007f0000000901 nid=901 waiting for monitor entry  "
         "[0x00007f0000901000]\n   java.lang.Thread.State: BLOCKED (on object monitor)\n\tat Cache.get(Cache.java:10)\n"
         "\t- waiting to lock <" + address + "> (a Cache)\n\tat App.handle(App.java:5)\n\n";
}

std::string analyze(std::vector<std::string_view> args) {
  std::ostringstream out, err;
  REQUIRE(app::run_analyze(args, out, err) == 0);
  return out.str();
}

}  // namespace

TEST_CASE("virtual threads: counted apart from platform threads, their waits counted as waiters", "[analysis][vthreads]") {
  const auto dump = parse_one(json_dump({cache_holder(5), cache_waiter(6, "cache-reader", false), cache_waiter(100, "", true),
                                         cache_waiter(101, "", true), cache_waiter(102, "vt-102", true),
                                         {103, "", true, "WAITING", {"java.base/jdk.internal.misc.Unsafe.park(Native Method)", vthread_run}, ""}}));
  analysis::Correlator c;
  c.add(dump, 0);
  const auto& s = c.summary(0);
  CHECK(s.format == model::DumpFormat::dump_to_file_json);
  CHECK(s.lock_fields);
  CHECK(s.java_threads == 6);
  CHECK(s.states == std::map<ThreadState, std::uint32_t>{{ThreadState::blocked, 1}, {ThreadState::timed_waiting, 1}});
  CHECK(s.virtual_threads == 4);
  CHECK(s.virtual_states == std::map<ThreadState, std::uint32_t>{{ThreadState::blocked, 3}, {ThreadState::waiting, 1}});
  const auto t = c.tally(0);
  REQUIRE(t.waiters.size() == 1);
  CHECK(t.waiters.begin()->first == analysis::LockKey{LockKind::monitor, "Cache", "Cache.get"});
  CHECK(t.waiters.begin()->second == 4);  // one platform and three virtual waiters
  CHECK(t.resolution.same_dump == 4);
  CHECK(t.holders.at({LockKind::monitor, "Cache", "Cache.reload"}) == 1);
}

TEST_CASE("virtual threads: pinned carriers in Thread.print and JSON dumps", "[analysis][vthreads]") {
  SECTION("JDK 25 Thread.print: a carrier with its mounted virtual thread sleeping in a class initializer") {
    const auto dump = parse_one(test::read_file(test::captured_dir() / "jdk25" / "VirtualThreads" / "dump-1.txt"));
    const auto pinned = analysis::find_pinned_carriers(dump);
    REQUIRE(pinned.size() == 1);
    CHECK(dump.threads[pinned[0].carrier].name == "ForkJoinPool-1-worker-2");
    CHECK(pinned[0].virtual_thread == 34U);
  }
  SECTION("JDK 25 JSON of the same program: the virtual thread names its carrier") {
    const auto dump = parse_one(test::read_file(test::captured_dir() / "jdk25" / "VirtualThreads" / "threads.json"));
    analysis::Correlator c;
    c.add(dump, 0);
    const auto& s = c.summary(0);
    REQUIRE(s.pinned_carrier_threads == 1);
    REQUIRE(s.pinned_carriers.size() == 1);
    CHECK(s.pinned_carriers[0].carrier == "ForkJoinPool-1-worker-2");
    CHECK(s.pinned_carriers[0].virtual_thread == 34U);
    CHECK(s.pinned_carriers[0].site == "VirtualThreads.sleep");
  }
  SECTION("JDK 21-23 Thread.print: a BLOCKED carrier inside synchronized; a busy carrier is not pinned") {
    const std::string blocked =
        "\"ForkJoinPool-1-worker-1\" #22 [301] daemon prio=5 os_prio=0 cpu=1.00ms elapsed=1.00s tid=0x00007f0000000301 nid=301 "
        "waiting for monitor entry  [0x00007f0000301000]\n   java.lang.Thread.State: BLOCKED (on object monitor)\n"
        "   Carrying virtual thread #21\n\tat Cache.get(Cache.java:10)\n\t- waiting to lock <0x00000007000a0010> (a Cache)\n"
        "\tat java.lang.VirtualThread.run(java.base@21.0.1/VirtualThread.java:309)\n\n";
    const std::string busy =
        "\"ForkJoinPool-1-worker-2\" #23 [302] daemon prio=5 os_prio=0 cpu=1.00ms elapsed=1.00s tid=0x00007f0000000302 nid=302 "
        "runnable  [0x00007f0000302000]\n   Carrying virtual thread #24\n"
        "\tat jdk.internal.vm.Continuation.run(java.base@21.0.2/Continuation.java:248)\n"
        "\tat java.lang.VirtualThread.runContinuation(java.base@21.0.2/VirtualThread.java:221)\n\n";
    const auto dump = parse_one(text_dump(blocked + busy));
    analysis::Correlator c;
    c.add(dump, 0);
    const auto& s = c.summary(0);
    REQUIRE(s.pinned_carrier_threads == 1);
    CHECK(s.pinned_carriers[0].carrier == "ForkJoinPool-1-worker-1");
    CHECK(s.pinned_carriers[0].virtual_thread == 21U);
    CHECK(s.pinned_carriers[0].site == "Cache.get");
    CHECK(s.virtual_threads == 0);  // Thread.print lists no virtual thread of its own
  }
  SECTION("JDK 21-24 JSON: no states, no carriers, nothing to find") {
    const auto dump = parse_one(json_dump({{5, "main", false, "", {"App.main(App.java:1)"}, ""},
                                           {100, "", true, "", {"Cache.get(Cache.java:10)", vthread_run}, ""}}));
    analysis::Correlator c;
    c.add(dump, 0);
    const auto& s = c.summary(0);
    CHECK_FALSE(s.lock_fields);
    CHECK(s.pinned_carrier_threads == 0);
    CHECK(s.virtual_threads == 1);
    CHECK(s.virtual_states == std::map<ThreadState, std::uint32_t>{{ThreadState::none, 1}});
    CHECK(s.states.empty());
  }
}

TEST_CASE("virtual threads: JSON identity hashes correlate across JSON samples, never with text addresses", "[analysis][vthreads]") {
  // The waiter's holder is not in its own sample; the next one shows it holding the object.
  const auto waiting = parse_one(json_dump({cache_waiter(100, "", true)}));
  const auto holding = parse_one(json_dump({cache_holder(5)}));
  SECTION("JSON then JSON: the identity hash names the same object") {
    analysis::Correlator c;
    c.add(waiting, 0);
    c.add(holding, 1);
    CHECK(c.tally(0).resolution.correlated == 1);
  }
  SECTION("text then JSON: an address equal to a hash is a coincidence, not the same object") {
    analysis::Correlator c;
    c.add(parse_one(text_dump(text_platform_waiter(6, "0x0000000000001a2b"))), 0);
    c.add(holding, 1);
    const auto t = c.tally(0);
    CHECK(t.resolution.correlated == 0);
    CHECK(t.resolution.unresolved == 1);
  }
}

TEST_CASE("virtual threads: a text sample between JSON samples neither extends nor breaks a run", "[analysis][vthreads]") {
  const auto json = json_dump({cache_holder(5), cache_waiter(100, "", true), cache_waiter(6, "cache-reader", false)});
  const auto text = text_dump(text_platform_waiter(6, "0x00000007000a0010"));
  analysis::Correlator c({.stuck_samples = 3});
  for (int i = 0; i < 5; ++i) c.add(parse_one(i % 2 == 0 ? json : text), i);
  const auto r = c.report();
  // Thread #6 (platform) waits in all five samples, #100 (virtual) in the three JSON ones:
  // one identity per tid across both forms, one lock key.
  std::map<std::uint64_t, std::uint32_t> runs;
  for (const auto& s : r.stuck) runs[s.java_id.value_or(0)] = s.samples;
  CHECK(runs == std::map<std::uint64_t, std::uint32_t>{{6, 5}, {100, 3}});
  const auto* cache = find_lock(r, LockKind::monitor, "Cache");
  REQUIRE(cache);
  CHECK(r.locks.size() == 1);
  CHECK(cache->dumps_seen == 5);
  CHECK(cache->wait_observations == 3 * 2 + 2);
  // The text samples' waiter finds the holder through the neighbouring JSON sample's lock key.
  CHECK(cache->resolution.correlated == 2);
}

TEST_CASE("dump_to_file json: a JDK 26 parkBlocker owner makes the lock's holder known", "[parser][json][vthreads]") {
  const auto dump = parse_one(test::read_file(test::source_dir() / "tests" / "unit" / "data" / "dump_to_file" / "jdk27.json"));
  CHECK(dump.synchronizers_listed);
  const auto owner = std::find_if(dump.threads.begin(), dump.threads.end(), [](const auto& t) { return t.java_id == 20U; });
  REQUIRE(owner != dump.threads.end());
  REQUIRE(owner->owned_synchronizers.size() == 1);  // two waiters name it: listed once
  CHECK(owner->owned_synchronizers[0].class_name == "java.util.concurrent.locks.ReentrantLock$NonfairSync");
  const auto g = analysis::build_lock_graph(dump);
  const auto parked = std::count_if(g.waits.begin(), g.waits.end(), [&](const auto& w) {
    return w.kind == LockKind::park && w.holder && dump.threads[*w.holder].java_id == 20U;
  });
  CHECK(parked == 2);
}

TEST_CASE("target state: virtual threads, pinned carriers and the form of each sample", "[service][vthreads]") {
  service::TargetState t("Shop", {});
  const auto json = json_dump({cache_holder(5), cache_waiter(6, "cache-reader", false), cache_waiter(100, "", true),
                               cache_waiter(101, "", true)});
  t.add_dump(test::ok_dump(json, 1, 0.05));
  auto m = t.take_metrics();
  REQUIRE(m.latest);
  CHECK(m.latest->threads_by_state == std::map<std::string, std::uint32_t>{{"BLOCKED", 1}, {"TIMED_WAITING", 1}});
  CHECK(m.latest->virtual_threads_by_state == std::map<std::string, std::uint32_t>{{"BLOCKED", 2}});
  CHECK(m.latest->lock_waiters.at({"monitor", "Cache", "Cache.get"}) == 3);
  CHECK(m.totals.samples_by_form == std::map<std::string, std::uint64_t>{{"json", 1}});
  CHECK(t.latest_blocked() == 3);
  t.add_dump(test::ok_dump(test::read_file(test::captured_dir() / "jdk25" / "VirtualThreads" / "dump-1.txt"), 2, 0.05));
  m = t.take_metrics();
  CHECK(m.latest->virtual_threads_by_state.empty());  // Thread.print lists none: no series
  CHECK(m.latest->pinned_carrier_threads == 1);
  CHECK(m.totals.samples_by_form == std::map<std::string, std::uint64_t>{{"json", 1}, {"print", 1}});
  CHECK(m.totals.samples.at("ok") == 2);
}

TEST_CASE("target state: 100 000 virtual threads give a bounded number of series", "[service][export][vthreads]") {
  // A third unnamed (the default for virtual threads), a third uniquely named, a third in one
  // numbered pool; a quarter of them BLOCKED on one of 1000 lock classes.
  constexpr int n = 100'000;
  const char* states[] = {"BLOCKED", "WAITING", "RUNNABLE", "TIMED_WAITING"};
  std::vector<JsonThread> threads;
  threads.reserve(n);
  for (int i = 0; i < n; ++i) {
    char unique[48];
    std::snprintf(unique, sizeof unique, "request-%08x-handler", static_cast<unsigned>(i) * 2654435761u);
    const std::string name = i % 3 == 0 ? "" : i % 3 == 1 ? unique : "vt-" + std::to_string(i);
    const std::string lock = "Lock" + std::to_string(i % 1000);
    JsonThread t{static_cast<std::uint64_t>(1000 + i), name, true, states[i % 4], {lock + ".get(" + lock + ".java:1)", vthread_run}, ""};
    if (i % 4 == 0) t.extra = "\"blockedOn\": \"" + lock + "@" + std::to_string(100 + i % 1000) + "\"";
    threads.push_back(std::move(t));
  }
  service::ProcessingSettings settings;
  settings.ring.max_bytes = std::uint64_t{512} << 20;  // the point here is the series, not the ring's bound
  service::TargetState t("Big", settings);
  t.add_dump(test::ok_dump(json_dump(threads), 1, 0.5));
  const auto m = t.take_metrics();
  REQUIRE(m.latest);
  std::uint64_t listed = 0;
  for (const auto& [state, count] : m.latest->virtual_threads_by_state) listed += count;
  CHECK(listed == n);
  CHECK(m.latest->pool_threads.size() == 1);  // "vt-N"; unnamed and unique names make no pool
  CHECK(m.latest->pool_threads.begin()->first == "vt-N");
  exporter::Exporter e({.top_k = 20, .version = "0"});
  e.update(m);
  const auto text = e.render();
  std::istringstream lines(text);
  std::map<std::string, std::size_t> per_family;
  std::size_t series = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#' || line.find("target=\"Big\"") == std::string::npos) continue;
    ++series, ++per_family[line.substr(0, line.find('{'))];
  }
  CHECK(per_family["lockwatch_virtual_threads"] == 4);
  CHECK(per_family["lockwatch_lock_waiters"] == 21);  // top 20 and one "other"
  CHECK(per_family["lockwatch_pool_threads"] == 4);
  CHECK(series <= 200);  // docs/metrics.md#cardinality: the per-target bound, whatever the JVM runs
}

TEST_CASE("analyze: virtual threads, pinned carriers and the lock fields in text, JSON and HTML", "[report][vthreads]") {
  const auto json25 = (test::captured_dir() / "jdk25" / "VirtualThreads" / "threads.json").string();
  const auto json21 = (test::source_dir() / "tests" / "unit" / "data" / "dump_to_file" / "jdk21.json").string();
  SECTION("text") {
    const auto out = analyze({json25, json21});
    CHECK_THAT(out, Catch::Contains("RUNNABLE 5, BLOCKED 1, WAITING 2, TIMED_WAITING 4; 9 virtual: BLOCKED 2, WAITING 3, TIMED_WAITING 4"));
    CHECK_THAT(out, Catch::Contains("monitor MetricsRegistry"));  // virtual waiters make a hot lock
    CHECK_THAT(out, Catch::Contains("Note: dump(s) 2 are Thread.dump_to_file output without thread states or lock fields"));
  }
  SECTION("JSON") {
    const auto out = analyze({"--format", "json", json25, json21});
    const auto doc = parser::detail::JsonDocument::parse(out);
    REQUIRE(doc.ok());
    const auto* dumps = doc.member(*doc.root(), "dumps", parser::detail::JsonType::array);
    REQUIRE(dumps);
    std::vector<const parser::detail::JsonNode*> list;
    for (const auto& d : doc.children(*dumps)) list.push_back(&d);
    REQUIRE(list.size() == 2);
    const auto& d25 = *list[0];
    CHECK(doc.member(d25, "form")->text == "json");
    CHECK(doc.member(d25, "lock_fields")->boolean);
    CHECK(parser::detail::json_uint(*doc.member(d25, "virtual_threads")) == 9U);
    CHECK(parser::detail::json_uint(*doc.member(d25, "pinned_carrier_threads")) == 1U);
    const auto* pinned = doc.member(d25, "pinned_carriers", parser::detail::JsonType::array);
    REQUIRE(pinned);
    REQUIRE(pinned->size == 1);
    CHECK(doc.member(*doc.children(*pinned).begin(), "carrier")->text == "ForkJoinPool-1-worker-2");
    CHECK_FALSE(doc.member(*list[1], "lock_fields")->boolean);
    CHECK(parser::detail::json_uint(*doc.member(*doc.member(*list[1], "virtual_states"), "none")) >= 1U);
  }
  SECTION("HTML") {
    const auto out = analyze({"--format", "html", json25});
    CHECK_THAT(out, Catch::Contains("virtual threads <b>9</b>"));
    CHECK_THAT(out, Catch::Contains("carriers pinned by a virtual thread <b>1</b>"));
    CHECK_THAT(out, Catch::Contains("ForkJoinPool-1-worker-2"));
  }
}
