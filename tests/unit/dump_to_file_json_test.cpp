// SPDX-License-Identifier: Apache-2.0
// Thread.dump_to_file JSON: the JSON reader and the mapping to the model.
//
// Inputs in data/dump_to_file/:
//   jdk25.json  captured with `jcmd PID Thread.dump_to_file -format=json` (Temurin 25.0.3) from
//               a small program run with -Djdk.virtualThreadScheduler.parallelism=2: a platform
//               thread holding a ReentrantLock and a monitor while sleeping, a platform thread
//               BLOCKED on that monitor, one in Object.wait, two virtual threads parked on the
//               ReentrantLock and one spinning (mounted) virtual thread.
//   jdk21.json  derived from jdk25.json: re-printed in the JDK 21-24 layout with only tid, name
//               and stack per thread (state, time, virtual, lock and carrier fields removed).
//   jdk27.json  derived from jdk25.json as announced for JDK 27: "formatVersion": 2, numbers for
//               processId, tid, owner, threadCount and carrier, and a parkBlocker.owner.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

#include "dump_to_file_json.hpp"
#include "json_reader.hpp"

#ifndef LOCKWATCH_TEST_DATA_DIR
#error "LOCKWATCH_TEST_DATA_DIR must name the tests/unit/data directory"
#endif

namespace {

using lockwatch::model::LockAction;
using lockwatch::model::ThreadDump;
using lockwatch::model::ThreadInfo;
using lockwatch::model::ThreadState;
using lockwatch::parser::detail::JsonDocument;
using lockwatch::parser::detail::JsonLimits;
using lockwatch::parser::detail::JsonNode;
using lockwatch::parser::detail::JsonType;
using lockwatch::parser::detail::json_uint;
using lockwatch::parser::detail::json_uint_text;
using lockwatch::parser::detail::parse_dump_to_file_json;

std::string read_data(std::string_view name) {
  const std::string path = std::string(LOCKWATCH_TEST_DATA_DIR) + "/dump_to_file/" + std::string(name);
  std::ifstream in(path, std::ios::binary);
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  INFO(path);
  REQUIRE(!text.empty());
  return text;
}

const ThreadInfo* find_thread(const ThreadDump& dump, std::string_view name) {
  const auto it = std::find_if(dump.threads.begin(), dump.threads.end(),
                               [name](const ThreadInfo& t) { return t.name == name; });
  return it == dump.threads.end() ? nullptr : &*it;
}

const ThreadInfo* find_id(const ThreadDump& dump, std::uint64_t id) {
  const auto it = std::find_if(dump.threads.begin(), dump.threads.end(),
                               [id](const ThreadInfo& t) { return t.java_id == id; });
  return it == dump.threads.end() ? nullptr : &*it;
}

std::size_t count_state(const ThreadDump& dump, ThreadState state) {
  return static_cast<std::size_t>(std::count_if(dump.threads.begin(), dump.threads.end(),
                                                [state](const ThreadInfo& t) { return t.state == state; }));
}

// Parses a copy of `text` and wipes the copy, so any view left pointing into it shows.
ThreadDump parse_and_wipe(std::string_view text, bool& ok) {
  std::string copy(text);
  ThreadDump dump;
  ok = parse_dump_to_file_json(copy, dump);
  std::fill(copy.begin(), copy.end(), '#');
  return dump;
}

// One decoded string through the reader: `literal` is the JSON text between the quotes.
std::string decode(std::string_view literal) {
  const std::string text = "[\"" + std::string(literal) + "\"]";
  const JsonDocument doc = JsonDocument::parse(text);
  REQUIRE(doc.ok());
  return std::string(doc.node(doc.root()->first_child).text);
}

std::string one_thread_doc(std::string_view thread_members) {
  return R"({"threadDump": {"threadContainers": [{"threads": [{)" + std::string(thread_members) + "}]}]}}";
}

}  // namespace

TEST_CASE("dump_to_file json: JDK 25 capture maps every thread of every container", "[parser][json]") {
  bool ok = false;
  const ThreadDump dump = parse_and_wipe(read_data("jdk25.json"), ok);
  REQUIRE(ok);
  CHECK(dump.stats.complete);
  CHECK(dump.format == lockwatch::model::DumpFormat::dump_to_file_json);
  CHECK(dump.timestamp == "2026-11-30T09:13:22.258413592Z");
  CHECK(dump.vm_banner == "25.0.3+9-LTS");
  CHECK(dump.stats.unknown_lines == 0);
  REQUIRE(dump.threads.size() == 16);  // 12 in <root>, 2 carriers, 2 in the executor
  CHECK(count_state(dump, ThreadState::blocked) == 1);
  CHECK(count_state(dump, ThreadState::waiting) == 6);
  CHECK(count_state(dump, ThreadState::timed_waiting) == 2);
  CHECK(count_state(dump, ThreadState::runnable) == 7);
  CHECK(count_state(dump, ThreadState::none) == 0);
  CHECK(std::all_of(dump.threads.begin(), dump.threads.end(), [](const ThreadInfo& t) {
    return t.java_id && !t.has_header_fields && !t.truncated;
  }));
  CHECK(dump.threads.front().name == "main");
  CHECK(dump.threads.front().java_id == 3U);
  CHECK(dump.threads.back().name == "vt-park-2");
}

TEST_CASE("dump_to_file json: JDK 25 BLOCKED thread waits for the monitor the holder owns", "[parser][json]") {
  bool ok = false;
  const ThreadDump dump = parse_and_wipe(read_data("jdk25.json"), ok);
  REQUIRE(ok);
  const ThreadInfo* blocked = find_thread(dump, "monitor-blocked");
  REQUIRE(blocked != nullptr);
  CHECK(blocked->state == ThreadState::blocked);
  CHECK_FALSE(blocked->is_virtual);
  REQUIRE(blocked->locks.size() == 1);
  CHECK(blocked->locks[0].action == LockAction::waiting_to_lock);
  CHECK(blocked->locks[0].class_name == "java.lang.Object");
  CHECK(blocked->locks[0].address == 0x3d58886dU);
  CHECK(blocked->locks[0].frame == 0);
  REQUIRE(blocked->frames.size() == 2);
  CHECK(blocked->frames[0].text == "Contention.lambda$main$1(Contention.java:21)");

  // The name holds an escaped quote and tab and a raw UTF-8 "ü".
  const ThreadInfo* holder = find_thread(dump, "holder \"q\"\t\xC3\xBC");
  REQUIRE(holder != nullptr);
  CHECK(holder->java_id == 20U);
  CHECK(holder->state == ThreadState::timed_waiting);
  REQUIRE(holder->locks.size() == 1);
  CHECK(holder->locks[0].action == LockAction::locked);
  CHECK(holder->locks[0].address == blocked->locks[0].address);
  CHECK(holder->locks[0].frame == 4);
  CHECK(holder->frames[4].text == "Contention.lambda$main$0(Contention.java:15)");
  CHECK(holder->frames[0].text == "java.base/java.lang.Thread.sleepNanos0(Native Method)");  // "\/" is "/"
}

TEST_CASE("dump_to_file json: JDK 25 Object.wait shows waiting_on before the released monitor", "[parser][json]") {
  bool ok = false;
  const ThreadDump dump = parse_and_wipe(read_data("jdk25.json"), ok);
  REQUIRE(ok);
  const ThreadInfo* waiter = find_thread(dump, "object-waiter");
  REQUIRE(waiter != nullptr);
  CHECK(waiter->state == ThreadState::waiting);
  REQUIRE(waiter->locks.size() == 2);
  CHECK(waiter->locks[0].action == LockAction::waiting_on);
  CHECK(waiter->locks[0].frame == 0);
  CHECK(waiter->locks[1].action == LockAction::locked);
  CHECK(waiter->locks[1].frame == 3);
  for (const auto& lock : waiter->locks) {
    CHECK(lock.class_name == "java.lang.Object");
    CHECK(lock.address == 0x5642b49eU);
  }
  const ThreadInfo* finalizer = find_thread(dump, "Finalizer");
  REQUIRE(finalizer != nullptr);
  REQUIRE_FALSE(finalizer->locks.empty());
  CHECK(finalizer->locks[0].class_name == "java.lang.ref.ReferenceQueue$Lock");
}

TEST_CASE("dump_to_file json: JDK 25 virtual threads park on the ReentrantLock", "[parser][json]") {
  bool ok = false;
  const ThreadDump dump = parse_and_wipe(read_data("jdk25.json"), ok);
  REQUIRE(ok);
  for (const char* name : {"vt-park-1", "vt-park-2"}) {
    INFO(name);
    const ThreadInfo* vt = find_thread(dump, name);
    REQUIRE(vt != nullptr);
    CHECK(vt->is_virtual);
    CHECK(vt->state == ThreadState::waiting);
    CHECK_FALSE(vt->carrier);
    REQUIRE(vt->locks.size() == 1);
    CHECK(vt->locks[0].action == LockAction::parking);
    CHECK(vt->locks[0].class_name == "java.util.concurrent.locks.ReentrantLock$NonfairSync");
    CHECK(vt->locks[0].address == 0x1960cb2aU);
    REQUIRE(vt->frames.size() == 12);
    CHECK(vt->frames[0].text == "java.base/java.lang.VirtualThread.park(VirtualThread.java:742)");
  }
  const ThreadInfo* spinner = find_thread(dump, "vt-spin");
  REQUIRE(spinner != nullptr);
  CHECK(spinner->is_virtual);
  CHECK(spinner->state == ThreadState::runnable);
  REQUIRE(spinner->carrier == 27U);
  const ThreadInfo* carrier = find_id(dump, *spinner->carrier);
  REQUIRE(carrier != nullptr);
  CHECK(carrier->name == "ForkJoinPool-1-worker-2");
  CHECK_FALSE(carrier->is_virtual);
  const ThreadInfo* signals = find_thread(dump, "Signal Dispatcher");
  REQUIRE(signals != nullptr);
  CHECK(signals->frames.empty());
  CHECK(std::count_if(dump.threads.begin(), dump.threads.end(), [](const ThreadInfo& t) { return t.is_virtual; }) == 3);
}

TEST_CASE("dump_to_file json: JDK 21 layout has strings only and no state or locks", "[parser][json]") {
  bool ok = false;
  const ThreadDump dump = parse_and_wipe(read_data("jdk21.json"), ok);
  REQUIRE(ok);
  CHECK(dump.stats.complete);
  REQUIRE(dump.threads.size() == 16);
  CHECK(count_state(dump, ThreadState::none) == 16);
  CHECK(std::all_of(dump.threads.begin(), dump.threads.end(),
                    [](const ThreadInfo& t) { return t.locks.empty() && !t.carrier && t.java_id; }));
  const ThreadInfo* blocked = find_thread(dump, "monitor-blocked");
  REQUIRE(blocked != nullptr);
  CHECK(blocked->java_id == 21U);
  CHECK(blocked->frames.size() == 2);
  // No "virtual" member before JDK 25: a stack ending in VirtualThread.run tells.
  CHECK(find_thread(dump, "vt-park-1")->is_virtual);
  CHECK(find_thread(dump, "vt-spin")->is_virtual);
  CHECK_FALSE(find_thread(dump, "ForkJoinPool-1-worker-2")->is_virtual);
  CHECK(find_thread(dump, "vt-park-2")->frames[0].text ==
        "java.base/java.lang.VirtualThread.park(VirtualThread.java:742)");
}

TEST_CASE("dump_to_file json: JDK 27 numbers read like JDK 25 strings", "[parser][json]") {
  bool ok25 = false;
  bool ok27 = false;
  const ThreadDump jdk25 = parse_and_wipe(read_data("jdk25.json"), ok25);
  const ThreadDump jdk27 = parse_and_wipe(read_data("jdk27.json"), ok27);
  REQUIRE(ok25);
  REQUIRE(ok27);
  REQUIRE(jdk27.threads.size() == jdk25.threads.size());
  for (std::size_t i = 0; i < jdk25.threads.size(); ++i) {
    const ThreadInfo& a = jdk25.threads[i];
    const ThreadInfo& b = jdk27.threads[i];
    INFO(a.name);
    CHECK(b.name == a.name);
    CHECK(b.java_id == a.java_id);
    CHECK(b.state == a.state);
    CHECK(b.carrier == a.carrier);
    CHECK(b.is_virtual == a.is_virtual);
    CHECK(b.frames.size() == a.frames.size());
    CHECK(b.locks.size() == a.locks.size());
  }
  const ThreadInfo* vt = find_thread(jdk27, "vt-park-1");
  REQUIRE(vt != nullptr);
  REQUIRE(vt->locks.size() == 1);  // parkBlocker.owner adds nothing
  CHECK(vt->locks[0].class_name == "java.util.concurrent.locks.ReentrantLock$NonfairSync");
  CHECK(find_thread(jdk27, "vt-spin")->carrier == 27U);
}

TEST_CASE("dump_to_file json: string escapes decode to UTF-8", "[parser][json]") {
  CHECK(decode(R"(a\/b)") == "a/b");
  CHECK(decode(R"(\"\\\b\f\n\r\t)") == "\"\\\b\f\n\r\t");
  CHECK(decode(R"(gr\u00fc\u00DF)") == "gr\xC3\xBC\xC3\x9F");
  CHECK(decode(R"(\u20ac)") == "\xE2\x82\xAC");
  CHECK(decode(R"(\ud83d\ude00!)") == "\xF0\x9F\x98\x80!");           // surrogate pair
  CHECK(decode(R"(\ud83dx)") == "\xEF\xBF\xBDx");                      // lone high surrogate
  CHECK(decode(R"(\ude00)") == "\xEF\xBF\xBD");                        // lone low surrogate
  CHECK(decode(R"(\ud83d\u0041)") == "\xEF\xBF\xBD" "A");              // high, then no low
  CHECK(decode(R"(\ud83d\ud83d\ude00)") == "\xEF\xBF\xBD\xF0\x9F\x98\x80");
  CHECK(decode(R"(nul\u0000)") == std::string("nul\0", 4));
  CHECK(decode("raw \xC3\xBC") == "raw \xC3\xBC");

  ThreadDump dump;
  REQUIRE(parse_dump_to_file_json(one_thread_doc(R"json("tid": "5", "name": "w\u00fcrker \ud83d\ude00",
      "stack": ["a\/b.C.m(C.java:1)"])json"), dump));
  REQUIRE(dump.threads.size() == 1);
  CHECK(dump.threads[0].name == "w\xC3\xBCrker \xF0\x9F\x98\x80");
  CHECK(dump.threads[0].frames[0].text == "a/b.C.m(C.java:1)");
}

TEST_CASE("dump_to_file json: bad escapes and control characters are errors", "[parser][json]") {
  for (const char* bad : {R"(["\x"])", R"(["\u12G4"])", R"(["\u12"])", "[\"tab\there\"]", R"(["\)"}) {
    INFO(bad);
    const JsonDocument doc = JsonDocument::parse(bad);
    CHECK_FALSE(doc.ok());
    CHECK(doc.error()->offset <= std::string_view(bad).size());
  }
  CHECK(JsonDocument::parse("[\"tab\there\"]").error()->offset == 5);
}

TEST_CASE("dump_to_file json: numbers are kept as text and read as unsigned", "[parser][json]") {
  const JsonDocument doc = JsonDocument::parse(R"([0, -0.5e+10, 18446744073709551615, 18446744073709551616, "42", 1.0, "x1"])");
  REQUIRE(doc.ok());
  std::vector<const JsonNode*> items;
  for (const JsonNode& item : doc.children(*doc.root())) items.push_back(&item);
  REQUIRE(items.size() == 7);
  CHECK(items[1]->text == "-0.5e+10");
  CHECK(json_uint(*items[0]) == 0U);
  CHECK_FALSE(json_uint(*items[1]));
  CHECK(json_uint(*items[2]) == 18446744073709551615U);
  CHECK_FALSE(json_uint(*items[3]));  // overflow
  CHECK(json_uint(*items[4]) == 42U);
  CHECK_FALSE(json_uint(*items[5]));
  CHECK_FALSE(json_uint(*items[6]));
  CHECK_FALSE(json_uint_text(""));
  CHECK_FALSE(json_uint_text("-1"));
  for (const char* bad : {"[01]", "[1.]", "[-]", "[+1]", "[.5]", "[1e]", "[0x10]"}) {
    INFO(bad);
    CHECK_FALSE(JsonDocument::parse(bad).ok());
  }
}

TEST_CASE("dump_to_file json: structure errors report their byte offset", "[parser][json]") {
  const auto offset = [](std::string_view text) {
    const JsonDocument doc = JsonDocument::parse(text);
    return doc.ok() ? std::string_view::npos : doc.error()->offset;
  };
  CHECK(offset(R"({"a": 1,, "b": 2})") == 8);
  CHECK(offset(R"([1, 2,])") == 6);
  CHECK(offset(R"({"a" 1})") == 5);
  CHECK(offset(R"({1: 2})") == 1);
  CHECK(offset(R"([1 2])") == 3);
  CHECK(offset(R"([tru])") == 1);
  CHECK(offset(R"([1] x)") == 4);
  CHECK(offset(R"({"a": [1, {"b": )") == 16);  // end of input
  CHECK(offset("") == 0);
  CHECK(offset("  \n") == 3);
  CHECK(offset("\xEF\xBB\xBF {} ") == std::string_view::npos);  // a BOM is tolerated
  CHECK(offset(R"( {"a": [true, false, null, {}, []], "": ""} )") == std::string_view::npos);
}

TEST_CASE("dump_to_file json: truncated input keeps the threads read so far", "[parser][json]") {
  const std::string text = read_data("jdk25.json");
  // Cut inside the second parked virtual thread: all before it is kept, it is marked truncated.
  const auto cut = text.find("AbstractQueuedSynchronizer", text.find("\"vt-park-2\""));
  REQUIRE(cut != std::string::npos);
  ThreadDump dump;
  CHECK_FALSE(parse_dump_to_file_json(std::string_view(text).substr(0, cut), dump));
  CHECK_FALSE(dump.stats.complete);
  REQUIRE(dump.threads.size() == 16);
  CHECK(dump.threads[14].name == "vt-park-1");
  CHECK_FALSE(dump.threads[14].truncated);
  CHECK(dump.threads[15].truncated);
  CHECK(dump.threads[15].frames.size() == 3);  // the frame cut in half is not kept
  CHECK(dump.threads[15].locks.size() == 1);
}

TEST_CASE("dump_to_file json: prefixes of the capture parse without harm", "[parser][json]") {
  const std::string text = read_data("jdk25.json");
  const std::size_t whole = text.rfind('}') + 1;
  // Every byte through the holder's block (escapes, a lock, nested arrays), sampled elsewhere.
  const std::size_t dense_begin = text.rfind('{', text.find("\"holder "));
  const std::size_t dense_end = text.find("\"monitor-blocked\"");
  REQUIRE(dense_end != std::string::npos);
  std::size_t previous = 0;
  for (std::size_t length = 0; length <= text.size(); length += (length >= dense_begin && length < dense_end) ? 1 : 23) {
    ThreadDump dump;
    const bool ok = parse_dump_to_file_json(std::string_view(text).substr(0, length), dump);
    if (ok != (length >= whole) || dump.threads.size() < previous || dump.threads.size() > 16) {
      FAIL("prefix of " << length << " bytes: ok=" << ok << " threads=" << dump.threads.size());
    }
    previous = dump.threads.size();
  }
  ThreadDump whole_dump;
  CHECK(parse_dump_to_file_json(text, whole_dump));
  CHECK(whole_dump.threads.size() == 16);
}

TEST_CASE("dump_to_file json: corrupted bytes never crash the reader", "[parser][json]") {
  const std::string text = read_data("jdk25.json");
  for (std::size_t at = 0; at < text.size(); at += 53) {
    for (const char byte : {'"', '\\', '{', ']', ',', '\0', '\xFF', '9'}) {
      std::string corrupted = text;
      corrupted[at] = byte;
      ThreadDump dump;
      const bool ok = parse_dump_to_file_json(corrupted, dump);
      CHECK(dump.stats.complete == ok);
      CHECK(dump.threads.size() <= 17);
    }
  }
}

TEST_CASE("dump_to_file json: a syntax error mid-document keeps earlier threads", "[parser][json]") {
  const std::string text = R"json({"threadDump": {"threadContainers": [{"threads": [
      {"tid": "1", "name": "a", "stack": []},
      {"tid": "2", "name": "b", "stack": ["x.Y.z(Y.java:1)"]},
      {"tid": "3", "name": "c",, "stack": []}]}]}})json";
  ThreadDump dump;
  CHECK_FALSE(parse_dump_to_file_json(text, dump));
  CHECK_FALSE(dump.stats.complete);
  REQUIRE(dump.threads.size() == 3);
  CHECK(dump.threads[1].frames.size() == 1);
  CHECK(dump.threads[2].name == "c");
  CHECK(dump.threads[2].truncated);
  CHECK(JsonDocument::parse(text).error()->offset == text.find(",,") + 1);
}

TEST_CASE("dump_to_file json: deep nesting stops at the limit", "[parser][json]") {
  const auto nested = [](std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  CHECK(JsonDocument::parse(nested(256)).ok());
  const JsonDocument too_deep = JsonDocument::parse(nested(257));
  REQUIRE_FALSE(too_deep.ok());
  CHECK(too_deep.error()->offset == 256);
  CHECK(too_deep.error()->message == "nesting too deep");
  CHECK(JsonDocument::parse(nested(10), JsonLimits{5, 1000}).error()->offset == 5);

  const JsonDocument huge = JsonDocument::parse(std::string(1'000'000, '['));
  CHECK_FALSE(huge.ok());
  CHECK(huge.node_count() == 256);

  ThreadDump dump;
  const std::string deep_stack = R"({"threadDump": {"threadContainers": [{"threads": [{"tid": "1", "name": "ok"},
      {"tid": "2", "name": "deep", "stack": )" + std::string(100'000, '[');
  CHECK_FALSE(parse_dump_to_file_json(deep_stack, dump));
  REQUIRE(dump.threads.size() == 2);
  CHECK(dump.threads[0].name == "ok");
  CHECK(dump.threads[1].frames.size() == 1);  // the unclosed inner array takes one slot
  CHECK(dump.threads[1].frames[0].text.empty());
}

TEST_CASE("dump_to_file json: limits on the number of values", "[parser][json]") {
  const JsonDocument doc = JsonDocument::parse("[1, 2, 3, 4]", JsonLimits{256, 3});
  REQUIRE_FALSE(doc.ok());
  CHECK(doc.error()->message == "too many values");
  CHECK(doc.error()->offset == 7);  // the fourth value, "3"
  CHECK(doc.node_count() == 3);
}

TEST_CASE("dump_to_file json: lock identities, eliminated locks and odd depths", "[parser][json]") {
  ThreadDump dump;
  REQUIRE(parse_dump_to_file_json(one_thread_doc(R"json("tid": "9", "name": "t", "state": "RUNNABLE",
      "stack": ["a.B.c(B.java:1)", "a.B.d(B.java:2)"],
      "parkBlocker": "pkg.Early@00ff",
      "monitorsOwned": [{"depth": 1, "locks": [null, "no-hash", "x.Y@zz", "a@b@1F"]},
                        {"depth": 7, "locks": ["past.Stack@1"]},
                        {"depth": -1, "locks": ["negative.Depth@1"]}])json"), dump));
  REQUIRE(dump.threads.size() == 1);
  const auto& locks = dump.threads[0].locks;
  REQUIRE(locks.size() == 5);
  CHECK(locks[0].action == LockAction::parking);
  CHECK(locks[0].class_name == "pkg.Early");
  CHECK(locks[0].address == 0xffU);
  CHECK(locks[1].action == LockAction::eliminated);
  CHECK(locks[1].frame == 1);
  CHECK_FALSE(locks[1].address);
  CHECK(locks[1].class_name.empty());
  CHECK(locks[2].class_name == "no-hash");
  CHECK_FALSE(locks[2].address);
  CHECK(locks[3].class_name == "x.Y@zz");
  CHECK(locks[4].class_name == "a@b");
  CHECK(locks[4].address == 0x1fU);
}

TEST_CASE("dump_to_file json: entries that name no thread are counted, not kept", "[parser][json]") {
  ThreadDump dump;
  const std::string text = R"({"threadDump": {"threadContainers": [
      {"threads": [42, {"foo": 1}, {"tid": 7}, {"name": "only-name", "state": "SLEEPY"}]},
      "not a container", {"threads": "not an array"}, {"threads": [{"tid": "18446744073709551616"}]}]}})";
  REQUIRE(parse_dump_to_file_json(text, dump));
  CHECK(dump.stats.unknown_lines == 3);
  REQUIRE(dump.threads.size() == 2);
  CHECK(dump.threads[0].java_id == 7U);
  CHECK(dump.threads[0].name.empty());
  CHECK(dump.threads[0].state == ThreadState::none);
  CHECK_FALSE(dump.threads[1].java_id);
  CHECK(dump.threads[1].state == ThreadState::unknown);
}

TEST_CASE("dump_to_file json: valid JSON that is no thread dump is refused", "[parser][json]") {
  for (const char* text : {R"({"a": 1})", "[]", "null", R"({"threadDump": []})", R"({"threadDump": {}})"}) {
    INFO(text);
    ThreadDump dump;
    CHECK_FALSE(parse_dump_to_file_json(text, dump));
    CHECK_FALSE(dump.stats.complete);
    CHECK(dump.threads.empty());
    CHECK(dump.format == lockwatch::model::DumpFormat::dump_to_file_json);
  }
}
