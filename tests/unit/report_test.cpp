// SPDX-License-Identifier: Apache-2.0
// `lockwatch analyze`: its JSON is valid whatever the dump holds, its errors are clear.
#include <catch2/catch.hpp>

#include <iostream>
#include <sstream>

#include "analyze_command.hpp"
#include "json_reader.hpp"
#include "lockwatch/report/json_writer.hpp"
#include "test_support.hpp"

using namespace lockwatch;
using parser::detail::JsonDocument;
using parser::detail::JsonType;

namespace {

struct Run {
  int code = 0;
  std::string out, err;
};

Run analyze(std::vector<std::string_view> args) {
  std::ostringstream out, err;
  Run r;
  r.code = app::run_analyze(args, out, err);
  r.out = out.str(), r.err = err.str();
  return r;
}

std::string temp_file(const std::string& name, std::string_view text) {
  const auto path = std::filesystem::temp_directory_path() / ("lockwatch-test-" + name);
  test::write_file(path, text);
  return path.string();
}

}  // namespace

TEST_CASE("json: untrusted bytes come out as valid escaped UTF-8", "[report][json]") {
  CHECK(report::json_quote("plain") == "\"plain\"");
  CHECK(report::json_quote("a\"b\\c\nd\te") == R"("a\"b\\c\nd\te")");
  CHECK(report::json_quote(std::string("\x01", 1)) == R"("\u0001")");
  CHECK(report::json_quote("caf\xE9") == "\"caf\xC3\xA9\"");          // Latin-1 byte
  CHECK(report::json_quote("\xE7\xBA\xBF") == "\"\xE7\xBA\xBF\"");     // valid UTF-8 kept
  CHECK(report::json_quote("\xED\xA0\x80") == "\"\xC3\xAD\xC2\xA0\xC2\x80\"");  // encoded surrogate: not UTF-8
}

TEST_CASE("analyze --format json: the documented shape, parseable", "[report][cli]") {
  const auto file = test::corpus_dir() / "mcnullty-jdk8u172-deadlock-l.txt";
  const auto r = analyze({"--format", "json", file.string()});
  REQUIRE(r.code == 0);
  auto doc = JsonDocument::parse(r.out);
  REQUIRE(doc.ok());
  const auto& root = *doc.root();
  const auto* dumps = doc.member(root, "dumps");
  REQUIRE(dumps);
  REQUIRE(dumps->size == 1);
  const auto& d0 = *doc.children(*dumps).begin();
  CHECK(doc.member(d0, "threads")->text == "17");
  CHECK(doc.member(*doc.member(d0, "states"), "BLOCKED")->text == "2");
  const auto* deadlocks = doc.member(d0, "deadlocks");
  REQUIRE(deadlocks->size == 1);
  CHECK(doc.member(*doc.children(*deadlocks).begin(), "threads")->size == 2);
  const auto* locks = doc.member(root, "locks");
  REQUIRE(locks);
  CHECK(locks->size == 1);  // both threads wait at the same site for a java.lang.Object: one lock key
  const auto& lock = *doc.children(*locks).begin();
  CHECK(doc.member(lock, "kind")->text == "monitor");
  CHECK(doc.member(lock, "lock_class")->text == "java.lang.Object");
  CHECK(doc.member(lock, "site")->text == "com.mladen.cikara.deadlock.DeadlockProgram$DeadlockRunnable.run");
  CHECK(doc.member(lock, "max_waiters")->text == "2");
  CHECK(doc.member(lock, "holders")->size == 2);
  const auto* resolution = doc.member(root, "holder_resolution");
  REQUIRE(resolution);
  CHECK(doc.member(*resolution, "same_dump")->text == "2");
}

TEST_CASE("analyze --format json: hostile thread names stay inside their strings", "[report][cli][security]") {
  const std::string name = "evil\"},\"locks\":[],\"x\":\"\n\x01\xff";
  const auto file = temp_file("hostile.txt",
      "Full thread dump x:\n\n\"" + name + "\" #1 prio=5 os_prio=0 tid=0x1 nid=0x1 waiting for monitor entry  [0x1]\n"
      "   java.lang.Thread.State: BLOCKED (on object monitor)\n\tat A.b(A.java:1)\n\t- waiting to lock <0x5> (a L)\n\n"
      "\"h\" #2 prio=5 os_prio=0 tid=0x2 nid=0x2 runnable  [0x1]\n   java.lang.Thread.State: RUNNABLE\n\tat A.c(A.java:2)\n"
      "\t- locked <0x5> (a L)\n\nJNI global refs: 1, weak refs: 0\n");
  const auto r = analyze({"--format=json", file});
  REQUIRE(r.code == 0);
  auto doc = JsonDocument::parse(r.out);
  REQUIRE(doc.ok());
  CHECK(doc.member(*doc.root(), "locks")->size == 1);
  const auto* dumps = doc.member(*doc.root(), "dumps");
  CHECK(doc.member(*doc.children(*dumps).begin(), "threads")->text == "2");
}

TEST_CASE("analyze: clear errors and exit codes", "[report][cli]") {
  SECTION("missing file") {
    const auto r = analyze({"/nonexistent/dump.txt"});
    CHECK(r.code == 2);
    CHECK(r.err.find("cannot read '/nonexistent/dump.txt'") != std::string::npos);
  }
  SECTION("no dump inside") {
    const auto r = analyze({temp_file("empty.txt", "hello\nworld\n")});
    CHECK(r.code == 1);
    CHECK(r.err.find("no thread dump") != std::string::npos);
  }
  SECTION("bad option") {
    CHECK(analyze({"-x", "file"}).code == 2);
    CHECK(analyze({"--format", "xml", "x"}).code == 2);
    CHECK(analyze({"--window", "0", "x"}).code == 2);
    CHECK(analyze({}).code == 2);
  }
  SECTION("a damaged dump is parsed as far as it goes") {
    const auto text = test::read_file(test::corpus_dir() / "tda-jdk1.6-urlthread.log");
    const auto r = analyze({temp_file("cut.txt", text.substr(0, text.size() / 2))});
    CHECK(r.code == 0);
    CHECK(r.out.find("1 incomplete") != std::string::npos);
    CHECK(r.out.find("org.archive.crawler.postprocessor.FrontierScheduler") != std::string::npos);
  }
}

TEST_CASE("analyze: '-' reads standard input", "[report][cli]") {
  const auto text = test::read_file(test::corpus_dir() / "mcnullty-jdk8u172-deadlock-l.txt");
  std::istringstream in(text);
  std::streambuf* saved = std::cin.rdbuf(in.rdbuf());
  const auto r = analyze({"--format", "json", "-"});
  std::cin.rdbuf(saved);
  REQUIRE(r.code == 0);
  auto doc = JsonDocument::parse(r.out);
  REQUIRE(doc.ok());
  CHECK(doc.member(*doc.root(), "dumps")->size == 1);
  CHECK(r.out.find("\"file\":\"-\"") != std::string::npos);
}
