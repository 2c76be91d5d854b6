// SPDX-License-Identifier: Apache-2.0
// Header lines as real JDKs print them (from the public corpus and local captures).
#include <catch2/catch.hpp>

#include "thread_header.hpp"

using lockwatch::parser::detail::parse_plain_header;
using lockwatch::parser::detail::parse_thread_header;

TEST_CASE("thread header: JDK 6 without #id, one space before the bracket", "[parser][header]") {
  auto h = parse_thread_header(R"("Attach Listener" daemon prio=10 tid=0x00002aaab74c5000 nid=0x2ea5 waiting on condition [0x0000000000000000])");
  REQUIRE(h);
  CHECK(h->name == "Attach Listener");
  CHECK_FALSE(h->java_id);
  CHECK(h->daemon);
  CHECK(h->prio == 10);
  CHECK(h->os_prio == -1);
  CHECK(*h->tid == 0x00002aaab74c5000ULL);
  CHECK(*h->nid == 0x2ea5);
  CHECK(h->status == "waiting on condition");
  CHECK(h->has_stack_bracket);
}

TEST_CASE("thread header: JDK 1.5 address range and 32-bit tid", "[parser][header]") {
  auto h = parse_thread_header(R"("TimerQueue" daemon prio=1 tid=0x08256e88 nid=0x2d55 in Object.wait() [0xa967c000..0xa967c1c0])");
  REQUIRE(h);
  CHECK(h->name == "TimerQueue");
  CHECK(*h->tid == 0x08256e88);
  CHECK(h->status == "in Object.wait()");
}

TEST_CASE("thread header: HP-UX JDK 1.5 without 0x, lwp_id, brackets in the name", "[parser][header]") {
  auto h = parse_thread_header(R"("ACJH_SOPSI_BAN_01-w13 [container1-361]" prio=10 tid=60000000044e3840 nid=1194 lwp_id=9992026 runnable [9fffffffb6f00000..9fffffffb6f00a40])");
  REQUIRE(h);
  CHECK(h->name == "ACJH_SOPSI_BAN_01-w13 [container1-361]");
  CHECK(*h->tid == 0x60000000044e3840ULL);
  CHECK(*h->nid == 1194);
  CHECK(h->status == "runnable");
}

TEST_CASE("thread header: JDK <= 9 glues sleeping to the bracket", "[parser][header]") {
  auto h = parse_thread_header(R"("DefaultQuartzScheduler_QuartzSchedulerThread" prio=10 tid=0x00002aaaf31c1800 nid=0x4400 sleeping[0x0000000048b00000])");
  REQUIRE(h);
  CHECK(h->status == "sleeping");
}

TEST_CASE("thread header: JDK 8 #id, os_prio, vendor nid with decimal suffix", "[parser][header]") {
  auto h = parse_thread_header(R"("pool-1-thread-2" #10 prio=5 os_prio=0 tid=0x00007f36a013f000 nid=0x9c7 (2503) waiting on condition [0x00007f368cb0b000])");
  REQUIRE(h);
  CHECK(h->name == "pool-1-thread-2");
  CHECK(*h->java_id == 10);
  CHECK(h->os_prio == 0);
  CHECK(*h->nid == 0x9c7);
  CHECK(h->status == "waiting on condition");
}

TEST_CASE("thread header: JDK 11+ cpu/elapsed, two spaces before the bracket", "[parser][header]") {
  auto h = parse_thread_header(R"("main" #1 prio=5 os_prio=0 cpu=814.24ms elapsed=13.76s tid=0x00007f52f4011800 nid=0x3964 waiting on condition  [0x00007f52fae51000])");
  REQUIRE(h);
  CHECK(*h->cpu_ms == Approx(814.24));
  CHECK(*h->elapsed_s == Approx(13.76));
}

TEST_CASE("thread header: locale decimal comma", "[parser][header]") {
  auto h = parse_thread_header(R"("main" #1 prio=5 os_prio=0 cpu=637,81ms elapsed=26,71s tid=0x000076d6480187a0 nid=0x671f5 waiting on condition  [0x000076d64ebfd000])");
  REQUIRE(h);
  CHECK(*h->cpu_ms == Approx(637.81));
  CHECK(*h->elapsed_s == Approx(26.71));
}

TEST_CASE("thread header: -e adds allocated and defined_classes", "[parser][header]") {
  auto h = parse_thread_header(R"("main" #1 prio=5 os_prio=0 cpu=86.47ms elapsed=10.96s allocated=844K defined_classes=93 tid=0x00007f42e8017ed0 nid=0x2c01 waiting on condition  [0x00007f42eddfe000])");
  REQUIRE(h);
  CHECK(*h->java_id == 1);
  CHECK(*h->cpu_ms == Approx(86.47));
}

TEST_CASE("thread header: JDK 21+ [os-tid] and decimal nid", "[parser][header]") {
  auto h = parse_thread_header(R"("Reference Handler" #9 [15] daemon prio=10 os_prio=0 cpu=9.07ms elapsed=287.91s tid=0x00007f0490134f70 nid=15 waiting on condition  [0x00007f0452eee000])");
  REQUIRE(h);
  CHECK(*h->java_id == 9);
  CHECK(*h->os_tid == 15);
  CHECK(*h->nid == 15);
  CHECK(h->daemon);
}

TEST_CASE("thread header: JDK 21+ carrier of a mounted virtual thread has no nid", "[parser][header]") {
  auto h = parse_thread_header(R"("ForkJoinPool-1-worker-1" #23 [29458] daemon prio=5 os_prio=0 cpu=1576.91ms elapsed=5.95s tid=0x00007f31f40e4c80  [0x00007f31f8876000])");
  REQUIRE(h);
  CHECK(h->name == "ForkJoinPool-1-worker-1");
  CHECK_FALSE(h->nid);
  CHECK(h->status.empty());
}

TEST_CASE("thread header: SMR hazard pointer is not part of the status", "[parser][header]") {
  auto h = parse_thread_header(R"("Event Loop Monitor" #54 daemon prio=6 os_prio=31 cpu=16155.48ms elapsed=59356.14s tid=0x000000014d4ab800 nid=0x27a0f waiting on condition  _threads_hazard_ptr=0x000060000b5f8420 [0x00000002c97ca000])");
  REQUIRE(h);
  CHECK(h->status == "waiting on condition");
}

TEST_CASE("thread header: VM thread has no bracket and trailing spaces", "[parser][header]") {
  auto h = parse_thread_header("\"VM Thread\" os_prio=0 cpu=5.73ms elapsed=10.92s tid=0x00007f42e80f4430 nid=0x2c10 runnable  ");
  REQUIRE(h);
  CHECK(h->name == "VM Thread");
  CHECK_FALSE(h->has_stack_bracket);
  CHECK(h->status == "runnable");
}

TEST_CASE("thread header: hostile names are parsed from the right", "[parser][header][security]") {
  SECTION("quotes inside the name") {
    auto h = parse_thread_header(R"("odd "quoted" name" #44 prio=5 os_prio=0 tid=0x00007f1 nid=0x2c3 waiting for monitor entry  [0x00007f2])");
    REQUIRE(h);
    CHECK(h->name == R"(odd "quoted" name)");
    CHECK(*h->java_id == 44);
  }
  SECTION("a name that is a whole fake header") {
    auto h = parse_thread_header(R"("fake" #99 daemon prio=5 os_prio=0 tid=0x0 nid=0x0 runnable  [0x0]" #12 prio=5 os_prio=0 cpu=1.00ms elapsed=2.00s tid=0x00007f42e8121430 nid=0x2c1d waiting for monitor entry  [0x00007f42b94a6000])");
    REQUIRE(h);
    CHECK(h->name == R"(fake" #99 daemon prio=5 os_prio=0 tid=0x0 nid=0x0 runnable  [0x0])");
    CHECK(*h->java_id == 12);
    CHECK_FALSE(h->daemon);
    CHECK(*h->tid == 0x00007f42e8121430ULL);
    CHECK(h->status == "waiting for monitor entry");
  }
  SECTION("an empty name") {
    auto h = parse_thread_header(R"("" #49 prio=5 os_prio=0 tid=0x00007f1 nid=0x2c3 runnable  [0x00007f2])");
    REQUIRE(h);
    CHECK(h->name.empty());
  }
  SECTION("a name ending in words that look like fields") {
    auto h = parse_thread_header(R"("x" daemon" prio=5 os_prio=0 tid=0x1 nid=0x2 runnable  [0x3])");
    REQUIRE(h);
    CHECK(h->name == R"(x" daemon)");
    CHECK_FALSE(h->daemon);
  }
  SECTION("a name holding a newline, joined by the parser") {
    auto h = parse_thread_header("\"name with\nnewline\" #45 prio=5 os_prio=0 tid=0x1 nid=0x2 runnable  [0x3]");
    REQUIRE(h);
    CHECK(h->name == "name with\nnewline");
  }
}

TEST_CASE("thread header: lines that are not headers", "[parser][header]") {
  CHECK_FALSE(parse_thread_header(R"("Thread-1":)"));                         // deadlock report
  CHECK_FALSE(parse_thread_header(R"("main" Id=1 RUNNABLE)"));                // JMX ThreadInfo.toString
  CHECK_FALSE(parse_thread_header(R"("name with)"));                          // first half of a split name
  CHECK_FALSE(parse_thread_header(R"(" #45 prio=5 os_prio=0 tid=0x1 nid=0x2 runnable  [0x3])"));  // no closing quote
  CHECK_FALSE(parse_thread_header("\"x\" tid=zz nid=0x1 runnable"));
}

TEST_CASE("dump_to_file plain headers: JDK 21-24 and 25", "[parser][header]") {
  auto old = parse_plain_header(R"(#25 "" virtual)");
  REQUIRE(old);
  CHECK(*old->java_id == 25);
  CHECK(old->name.empty());
  CHECK(old->is_virtual);
  auto jdk25 = parse_plain_header(R"(#31 "worker "1"" virtual WAITING 2025-06-01T10:00:00.123Z)");
  REQUIRE(jdk25);
  CHECK(jdk25->name == R"(worker "1")");
  CHECK(jdk25->status == "WAITING");
  CHECK(jdk25->is_virtual);
  auto platform = parse_plain_header(R"(#3 "main" RUNNABLE 2025-06-01T10:00:00Z)");
  REQUIRE(platform);
  CHECK_FALSE(platform->is_virtual);
  CHECK(platform->status == "RUNNABLE");
  CHECK_FALSE(parse_plain_header("#12 not a header"));
}
