// SPDX-License-Identifier: Apache-2.0
// Structure of parsed dumps. Small inline texts stand for format quirks that no local
// JDK prints (older or newer JDKs, damaged files); real dumps are used elsewhere.
#include <catch2/catch.hpp>

#include <string>

#include "lockwatch/model/canonical.hpp"
#include "lockwatch/parser/dump_parser.hpp"
#include "test_support.hpp"

using namespace lockwatch;
using model::LockAction;
using model::ThreadState;

namespace {

constexpr std::string_view jdk17_dump =
    "2024-05-01 12:00:00\n"
    "Full thread dump OpenJDK 64-Bit Server VM (17.0.15+6-Debian-1deb12u1 mixed mode, sharing):\n"
    "\n"
    "Threads class SMR info:\n"
    "_java_thread_list=0x00007f42e8120ea0, length=3, elements={\n"
    "0x00007f42e8017ed0, 0x00007f42e80f6c90, 0x00007f42e8121430\n"
    "}\n"
    "\n"
    "\"holder\" #12 prio=5 os_prio=0 cpu=0.42ms elapsed=3.12s tid=0x00007f42e8017ed0 nid=0x2c1c waiting on condition  [0x00007f42b95a7000]\n"
    "   java.lang.Thread.State: TIMED_WAITING (sleeping)\n"
    "\tat java.lang.Thread.sleep(java.base@17.0.15/Native Method)\n"
    "\tat Inventory.recalculate(Inventory.java:20)\n"
    "\tat Inventory.reserve(Inventory.java:12)\n"
    "\t- locked <0x000000071ab1a5d8> (a Inventory)\n"
    "\n"
    "   Locked ownable synchronizers:\n"
    "\t- None\n"
    "\n"
    "\"waiter\" #13 prio=5 os_prio=0 cpu=0.70ms elapsed=3.10s tid=0x00007f42e8121430 nid=0x2c1d waiting for monitor entry  [0x00007f42b94a6000]\n"
    "   java.lang.Thread.State: BLOCKED (on object monitor)\n"
    "\tat Inventory.reserve(Inventory.java:12)\n"
    "\t- waiting to lock <0x000000071ab1a5d8> (a Inventory)\n"
    "\tat Worker.run(Worker.java:5)\n"
    "\n"
    "   Locked ownable synchronizers:\n"
    "\t- <0x000000069ec1e898> (a java.util.concurrent.locks.ReentrantLock$NonfairSync)\n"
    "\n"
    "\"C2 CompilerThread0\" #6 daemon prio=9 os_prio=0 cpu=10.00ms elapsed=3.20s tid=0x00007f42e80f6c90 nid=0x2c16 waiting on condition  [0x0000000000000000]\n"
    "   java.lang.Thread.State: RUNNABLE\n"
    "   No compile task\n"
    "\n"
    "\"VM Thread\" os_prio=0 cpu=5.73ms elapsed=10.92s tid=0x00007f42e80f4430 nid=0x2c10 runnable  \n"
    "\n"
    "\"GC Thread#0\" os_prio=0 cpu=0.06ms elapsed=10.96s tid=0x00007f42e8041650 nid=0x2c04 runnable  \n"
    "JNI global refs: 15, weak refs: 0\n"
    "\n";

}  // namespace

TEST_CASE("parser: a JDK 17 -l dump, field by field", "[parser][dump]") {
  auto d = test::parse_one(jdk17_dump);
  CHECK(d.timestamp == "2024-05-01 12:00:00");
  CHECK(d.vm_banner == "OpenJDK 64-Bit Server VM (17.0.15+6-Debian-1deb12u1 mixed mode, sharing)");
  CHECK(d.stats.complete);
  CHECK(d.stats.has_header);
  CHECK(d.stats.unknown_lines == 0);
  CHECK(*d.jni_global_refs == 15);
  CHECK(d.synchronizers_listed);
  REQUIRE(d.threads.size() == 5);
  const auto& holder = d.threads[0];
  CHECK(holder.state == ThreadState::timed_waiting);
  CHECK(holder.state_detail == "sleeping");
  REQUIRE(holder.frames.size() == 3);
  CHECK(model::frame_method(holder.frames[2].text) == "Inventory.reserve");
  REQUIRE(holder.locks.size() == 1);
  CHECK(holder.locks[0].frame == 2);
  CHECK(holder.synchronizers_listed);
  CHECK(holder.owned_synchronizers.empty());
  const auto& waiter = d.threads[1];
  CHECK(waiter.state == ThreadState::blocked);
  CHECK(waiter.locks[0].action == LockAction::waiting_to_lock);
  CHECK(waiter.locks[0].frame == 0);
  REQUIRE(waiter.owned_synchronizers.size() == 1);
  CHECK(std::vector<std::string_view>(d.threads[2].notes.begin(), d.threads[2].notes.end()) == std::vector<std::string_view>{"No compile task"});
  CHECK_FALSE(d.threads[3].is_java());
  CHECK(d.threads[4].name == "GC Thread#0");
}

TEST_CASE("parser: several dumps in one stream, junk around them", "[parser][dump]") {
  std::string text = "$ jcmd 4242 Thread.print\n4242:\n";
  text += std::string(jdk17_dump) + "some application log line\n" + std::string(jdk17_dump) + "$ \n";
  parser::ParseStats stats;
  auto dumps = parser::parse_dumps(text, {}, &stats);
  REQUIRE(dumps.size() == 2);
  CHECK(stats.junk_lines == 4);
  CHECK(dumps[1].threads.size() == 5);
  CHECK(dumps[1].timestamp == "2024-05-01 12:00:00");
}

TEST_CASE("parser: truncated mid-thread keeps what it read", "[parser][dump]") {
  const auto cut = std::string(jdk17_dump).find("\tat Worker.run");
  parser::ParseStats stats;
  auto dumps = parser::parse_dumps(jdk17_dump.substr(0, cut + 12), {}, &stats);
  REQUIRE(dumps.size() == 1);
  CHECK_FALSE(dumps[0].stats.complete);
  CHECK(stats.incomplete_dumps == 1);
  REQUIRE(dumps[0].threads.size() == 2);
  CHECK(dumps[0].threads[1].truncated);
  CHECK(dumps[0].threads[1].frames.size() == 2);  // the cut frame line still counts
}

TEST_CASE("parser: deadlock report names threads without repeating them", "[parser][dump][deadlock]") {
  std::string text(jdk17_dump);
  text +=
      "\nFound one Java-level deadlock:\n=============================\n"
      "\"waiter\":\n  waiting to lock monitor 0x00007f4 (object 0x000000071ab1a5d8, a Inventory),\n"
      "  which is held by \"holder\"\n\n\"holder\":\n  waiting to lock monitor 0x00007f5 (object 0x1, a Other),\n"
      "  which is held by \"waiter\"\n\n"
      "Java stack information for the threads listed above:\n===================================================\n"
      "\"waiter\":\n\tat Inventory.reserve(Inventory.java:12)\n\t- waiting to lock <0x000000071ab1a5d8> (a Inventory)\n"
      "\"holder\":\n\tat Other.run(Other.java:1)\n\n"
      "Found 1 deadlock.\n\n";
  auto d = test::parse_one(text);
  CHECK(d.threads.size() == 5);
  CHECK(d.stats.unknown_lines == 0);
  REQUIRE(d.jvm_deadlocks.size() == 1);
  CHECK(d.jvm_deadlocks[0].threads == std::vector<std::string_view>{"waiter", "holder"});
  CHECK(d.threads[0].frames.size() == 3);  // not extended by the report's repeated stacks
}

TEST_CASE("parser: names with newlines never forge threads", "[parser][dump][security]") {
  // A name may hold '\n' and a complete fake header; the structure (a Java thread's
  // header is followed by its state line) tells where the real header ends.
  const std::string text =
      "Full thread dump OpenJDK 64-Bit Server VM (17.0.15+6 mixed mode):\n\n"
      "\"x\n\"evil\" #7 prio=5 os_prio=0 tid=0x1 nid=0x1 runnable  [0x0]\n\" #45 prio=5 os_prio=0 cpu=1.00ms elapsed=1.00s tid=0x00007f1 nid=0x2 waiting for monitor entry  [0x00007f2]\n"
      "   java.lang.Thread.State: BLOCKED (on object monitor)\n"
      "\tat A.b(A.java:1)\n\t- waiting to lock <0x10> (a java.lang.Object)\n\n"
      "\"name with\nnewline\" #46 prio=5 os_prio=0 tid=0x00007f3 nid=0x3 runnable  [0x00007f4]\n"
      "   java.lang.Thread.State: RUNNABLE\n\n"
      "\"y\n   java.lang.Thread.State: BLOCKED (on object monitor)\n\tat Fake.frame(Fake.java:1)\n\" #47 prio=5 os_prio=0 tid=0x00007f5 nid=0x4 runnable  [0x00007f6]\n"
      "   java.lang.Thread.State: RUNNABLE\n\n"
      "JNI global refs: 1, weak refs: 0\n";
  for (std::size_t chunk : {std::size_t{1}, std::size_t{7}, text.size()}) {
    parser::DumpParser p;
    for (std::size_t at = 0; at < text.size(); at += chunk) p.feed(std::string_view(text).substr(at, chunk));
    p.finish();
    auto dumps = p.take_dumps();
    REQUIRE(dumps.size() == 1);
    const auto& t = dumps[0].threads;
    REQUIRE(t.size() == 3);
    CHECK(t[0].name == "x\n\"evil\" #7 prio=5 os_prio=0 tid=0x1 nid=0x1 runnable  [0x0]\n");
    CHECK(*t[0].java_id == 45);
    CHECK(t[0].state == ThreadState::blocked);
    CHECK(t[1].name == "name with\nnewline");
    CHECK(t[2].name == "y\n   java.lang.Thread.State: BLOCKED (on object monitor)\n\tat Fake.frame(Fake.java:1)\n");
    CHECK(t[2].state == ThreadState::runnable);
    CHECK(t[2].frames.empty());
  }
}

TEST_CASE("parser: VM threads listed without blank lines stay separate", "[parser][dump]") {
  // JDK 6-14 print some VM threads back to back (corpus: leogtzr, natias, danneville).
  auto d = test::parse_one(
      "Full thread dump x:\n\n"
      "\"G1 Young RemSet Sampling\" os_prio=0 cpu=2106.36ms elapsed=8203.30s tid=0x00007fd110144000 nid=0x308487 runnable  \n"
      "\"VM Periodic Task Thread\" os_prio=0 cpu=10150.25ms elapsed=8203.20s tid=0x00007fd1101fe800 nid=0x308496 waiting on condition  \n"
      "\nJNI global refs: 1, weak refs: 0\n");
  REQUIRE(d.threads.size() == 2);
  CHECK(d.threads[1].name == "VM Periodic Task Thread");
}

TEST_CASE("parser: JDK 7/8 glue an eliminated line to the next frame", "[parser][dump]") {
  auto d = test::parse_one(
      "Full thread dump x:\n\n\"t\" #1 prio=5 os_prio=0 tid=0x1 nid=0x1 runnable [0x2]\n"
      "   java.lang.Thread.State: RUNNABLE\n\tat A.a(A.java:1)\n"
      "\t- eliminated <owner is scalar replaced> (a java.lang.Object)\tat B.b(B.java:2)\n"
      "\t- locked <0x5> (a java.lang.Object)\n\nJNI global references: 3\n");
  const auto& t = d.threads.at(0);
  REQUIRE(t.frames.size() == 2);
  CHECK(t.frames[1].text == "B.b(B.java:2)");
  REQUIRE(t.locks.size() == 2);
  CHECK(t.locks[0].action == LockAction::eliminated);
  CHECK(t.locks[1].frame == 1);
  CHECK(*d.jni_global_refs == 3);
}

TEST_CASE("parser: SIGQUIT output ends with a Heap summary", "[parser][dump]") {
  std::string text(jdk17_dump);
  text += "Heap\n garbage-first heap   total 256000K, used 2048K\n  region size 1024K\n Metaspace       used 800K\n\n";
  parser::ParseStats stats;
  auto dumps = parser::parse_dumps(text, {}, &stats);
  REQUIRE(dumps.size() == 1);
  CHECK(stats.junk_lines == 0);
  CHECK(dumps[0].stats.unknown_lines == 0);
}

TEST_CASE("parser: carriers of virtual threads (JDK 21+)", "[parser][dump]") {
  auto d = test::parse_one(
      "Full thread dump x:\n\n"
      "\"ForkJoinPool-1-worker-1\" #23 [29458] daemon prio=5 os_prio=0 cpu=1576.91ms elapsed=5.95s tid=0x00007f31f40e4c80  [0x00007f31f8876000]\n"
      "   Carrying virtual thread #22\n\tat jdk.internal.vm.Continuation.run(java.base@25.0.3/Continuation.java:251)\n"
      "   Mounted virtual thread #22\n\tat VThreads.lambda$main$0(VThreads.java:30)\n\n");
  const auto& t = d.threads.at(0);
  CHECK(*t.carrying_vthread == 22);
  CHECK(t.state == ThreadState::none);
  CHECK(t.is_java());
  CHECK(*t.mounted_frames_begin == 1);
  CHECK(t.frames.size() == 2);
}

TEST_CASE("parser: hard limits stop cleanly and are counted", "[parser][limits]") {
  SECTION("threads") {
    parser::ParserLimits limits;
    limits.max_threads = 2;
    parser::ParseStats stats;
    auto dumps = parser::parse_dumps(jdk17_dump, limits, &stats);
    REQUIRE(dumps.size() == 1);
    CHECK(dumps[0].threads.size() == 2);
    CHECK(stats.stopped == parser::StopReason::max_threads);
  }
  SECTION("threads over the stream") {
    parser::ParserLimits limits;
    parser::ParseStats stats;
    const std::string two = std::string(jdk17_dump) + std::string(jdk17_dump);
    const auto whole = parser::parse_dumps(two, limits, &stats);
    REQUIRE(whole.size() == 2);
    REQUIRE(whole[1].threads.size() > 1);
    CHECK(stats.threads == whole[0].threads.size() + whole[1].threads.size());
    // One entry fewer than the two dumps hold: the second dump stops one short.
    limits.max_stream_threads = stats.threads - 1;
    parser::ParseStats cut;
    auto dumps = parser::parse_dumps(two, limits, &cut);
    REQUIRE(dumps.size() == 2);
    CHECK(dumps[0].threads.size() == whole[0].threads.size());
    CHECK(dumps[1].threads.size() == whole[1].threads.size() - 1);
    CHECK(cut.threads == limits.max_stream_threads);
    CHECK(cut.stopped == parser::StopReason::max_threads);
    limits.max_stream_threads = stats.threads;  // exactly at the bound: all kept
    parser::ParseStats at;
    dumps = parser::parse_dumps(two, limits, &at);
    CHECK(dumps[1].threads.size() == whole[1].threads.size());
    CHECK(at.stopped == parser::StopReason::none);
  }
  SECTION("bytes") {
    parser::ParserLimits limits;
    limits.max_total_bytes = 600;
    parser::ParseStats stats;
    auto dumps = parser::parse_dumps(jdk17_dump, limits, &stats);
    CHECK(stats.bytes == jdk17_dump.size());
    CHECK(stats.stopped == parser::StopReason::max_total_bytes);
    REQUIRE(dumps.size() == 1);
    CHECK_FALSE(dumps[0].stats.complete);
  }
  SECTION("frames") {
    parser::ParserLimits limits;
    limits.max_frames_per_thread = 1;
    auto d = std::move(parser::parse_dumps(jdk17_dump, limits).at(0));
    CHECK(d.stats.frames_dropped == 3);
    CHECK(d.threads[0].frames.size() == 1);
  }
  SECTION("line length") {
    parser::ParserLimits limits;
    limits.max_line_bytes = 60;
    auto dumps = parser::parse_dumps(jdk17_dump, limits);
    REQUIRE(dumps.size() == 1);
    CHECK(dumps[0].stats.long_lines == 7);  // banner, five thread headers, one synchronizer line
  }
  SECTION("lock lines") {
    parser::ParserLimits limits;
    limits.max_locks_per_thread = 1;
    auto d = std::move(parser::parse_dumps(jdk17_dump, limits).at(0));
    CHECK(d.stats.locks_dropped > 0);
    for (const auto& t : d.threads) CHECK(t.locks.size() + t.owned_synchronizers.size() <= 1);
  }
  SECTION("dumps") {
    parser::ParserLimits limits;
    limits.max_dumps = 1;
    parser::ParseStats stats;
    auto dumps = parser::parse_dumps(std::string(jdk17_dump) + std::string(jdk17_dump), limits, &stats);
    CHECK(dumps.size() == 1);
    CHECK(stats.stopped == parser::StopReason::max_dumps);
  }
}

TEST_CASE("parser: empty and binary input produce no dump and no crash", "[parser][dump]") {
  CHECK(parser::parse_dumps("").empty());
  CHECK(parser::parse_dumps(std::string("\0\0\xff\xfe\x01", 5)).empty());
  CHECK(parser::parse_dumps("\"\"\n\"\n#1 \"\n\t- locked <0x1>\n").empty());
}

TEST_CASE("parser: an unreadable thread header does not hand its state and locks to the thread above", "[parser]") {
  const auto d = test::parse_one(
      "Full thread dump OpenJDK 64-Bit Server VM (17.0.15+6 mixed mode):\n\n"
      "\"good\" #10 prio=5 os_prio=0 tid=0x1 nid=0x10 runnable [0x0]\n   java.lang.Thread.State: RUNNABLE\n\tat A.run(A.java:1)\n"
      "\"broken header without its fields\n"
      "   java.lang.Thread.State: BLOCKED (on object monitor)\n"
      "\tat B.run(B.java:2)\n\t- waiting to lock <0x00000000000000a0> (a Lock)\n\n"
      "JNI global refs: 1, weak refs: 0\n");
  REQUIRE(d.threads.size() == 1);
  CHECK(d.threads[0].name == "good");
  CHECK(d.threads[0].state == model::ThreadState::runnable);
  CHECK(d.threads[0].locks.empty());
  CHECK(d.threads[0].frames.size() == 1);
  CHECK(d.stats.unknown_lines >= 4);
}

TEST_CASE("parser: a repeated #id opens the next dump, after thousands of ids and across dumps", "[parser][dump]") {
  const auto thread = [](int id) {
    return "\"t" + std::to_string(id) + "\" #" + std::to_string(id) + " prio=5 os_prio=0 tid=0x" + std::to_string(id + 1) +
           " nid=0x1 runnable  [0x1]\n   java.lang.Thread.State: RUNNABLE\n\tat a.B.c(B.java:1)\n\n";
  };
  // 5000 distinct ids (the id set grows several times), then #7 again: a second dump without
  // its "Full thread dump" line, whose own ids start afresh.
  std::string text = "Full thread dump X:\n\n";
  for (int id = 1; id <= 5000; ++id) text += thread(id);
  for (int id : {7, 8, 5000, 1}) text += thread(id);
  text += thread(7);  // repeats within the second dump: a third one
  text += "Full thread dump X:\n\n";
  for (int id = 4990; id <= 5010; ++id) text += thread(id);  // a new dump: the same ids are no repeat
  const auto dumps = parser::parse_dumps(text);
  REQUIRE(dumps.size() == 4);
  CHECK(dumps[0].threads.size() == 5000);
  CHECK(dumps[1].threads.size() == 4);
  CHECK(dumps[2].threads.size() == 1);
  CHECK(dumps[3].threads.size() == 21);
  CHECK(dumps[1].threads.front().java_id == 7u);
  CHECK(dumps[3].threads.back().java_id == 5010u);
}

// `lockwatch dump` stops feeding the parser once dump_begun() says yes: that answer must never
// be taken back by what follows, and must be the whole parse's answer at the end.
TEST_CASE("parser: dump_begun is final once true and agrees with the whole parse", "[parser][dump]") {
  const std::string junk = "Picked up JAVA_TOOL_OPTIONS: -Xmx1g\n2024-05-01 12:00:00 INFO started\n\"quoted\" but no dump\n";
  for (const std::string& text : {std::string(jdk17_dump), junk, junk + std::string(jdk17_dump), std::string("0\n")}) {
    const bool whole = !parser::parse_dumps(text).empty();
    parser::DumpParser p;
    bool begun_at = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
      p.feed(text.substr(i, 1));
      if (begun_at) CHECK(p.dump_begun());  // never taken back
      begun_at = p.dump_begun();
      if (begun_at) CHECK(whole);  // never a yes the whole parse contradicts
    }
    p.finish();
    CHECK(p.dump_begun() == whole);
  }
  parser::DumpParser p;  // it says yes early: at the banner, not at the end of the dump
  const std::string_view dump = jdk17_dump;
  p.feed(dump.substr(0, dump.find("Threads class SMR")));
  CHECK(p.dump_begun());
  parser::DumpParser none;
  none.feed(junk);
  none.finish();
  CHECK_FALSE(none.dump_begun());
}

TEST_CASE("parser: dump_begun agrees with the whole parse on every real dump", "[parser][dump][corpus]") {
  auto files = test::files_below(test::corpus_dir());
  for (auto& f : test::files_below(test::captured_dir())) files.push_back(f);
  REQUIRE_FALSE(files.empty());
  for (const auto& file : files) {
    const auto text = test::read_file(file);
    parser::DumpParser p;
    for (std::size_t at = 0; at < text.size(); at += 4096) p.feed(std::string_view(text).substr(at, 4096));
    p.finish();
    INFO(file.string());
    CHECK(p.dump_begun() == !parser::parse_dumps(text).empty());
  }
}
