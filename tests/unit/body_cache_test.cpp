// SPDX-License-Identifier: Apache-2.0
// The parser's body cache: a dump parsed with the bodies of the dump before it must be the
// dump parsed without them, whatever changed between the two and however the bytes arrive.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "lockwatch/model/canonical.hpp"
#include "lockwatch/parser/body_cache.hpp"
#include "lockwatch/parser/dump_parser.hpp"
#include "test_support.hpp"

using namespace lockwatch;

namespace {

// Two samples of one small JVM: "worker-1" and "worker-2" share a stack, the VM threads have
// no body, the compiler thread prints a compile task, the -l section follows a blank line.
constexpr std::string_view sample =
    "2024-05-01 12:00:00\n"
    "Full thread dump OpenJDK 64-Bit Server VM (17.0.15+6-Debian-1deb12u1 mixed mode, sharing):\n"
    "\n"
    "\"worker-1\" #12 prio=5 os_prio=0 cpu=0.42ms elapsed=3.12s tid=0x00007f42e8017ed0 nid=0x2c1c waiting for monitor entry  [0x00007f42b95a7000]\n"
    "   java.lang.Thread.State: BLOCKED (on object monitor)\n"
    "\tat Inventory.reserve(Inventory.java:12)\n"
    "\t- waiting to lock <0x000000071ab1a5d8> (a Inventory)\n"
    "\tat Worker.run(Worker.java:5)\n"
    "\n"
    "\"worker-2\" #13 prio=5 os_prio=0 cpu=0.70ms elapsed=3.10s tid=0x00007f42e8121430 nid=0x2c1d waiting for monitor entry  [0x00007f42b94a6000]\n"
    "   java.lang.Thread.State: BLOCKED (on object monitor)\n"
    "\tat Inventory.reserve(Inventory.java:12)\n"
    "\t- waiting to lock <0x000000071ab1a5d8> (a Inventory)\n"
    "\tat Worker.run(Worker.java:5)\n"
    "\n"
    "\"holder\" #14 prio=5 os_prio=0 cpu=9.10ms elapsed=3.12s tid=0x00007f42e8017ee0 nid=0x2c1e waiting on condition  [0x00007f42b95a8000]\n"
    "   java.lang.Thread.State: TIMED_WAITING (sleeping)\n"
    "\tat java.lang.Thread.sleep(java.base@17.0.15/Native Method)\n"
    "\tat Inventory.recalculate(Inventory.java:20)\n"
    "\tat Inventory.reserve(Inventory.java:12)\n"
    "\t- locked <0x000000071ab1a5d8> (a Inventory)\n"
    "\n"
    "   Locked ownable synchronizers:\n"
    "\t- None\n"
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

std::string fingerprint_of(parser::DumpParser& p) {
  p.finish();
  auto dumps = p.take_dumps();
  return test::parse_fingerprint(dumps, p.stats());
}

std::string plain(std::string_view text, parser::ParserLimits limits = {}) {
  parser::DumpParser p(limits);
  p.feed(text);
  return fingerprint_of(p);
}

// `text` fed with the cache in pieces cut at `cuts` pseudo-random points (none: whole).
std::string cached(std::string_view text, const std::shared_ptr<parser::BodyCache>& cache, std::size_t cuts = 0,
                   unsigned seed = 1, parser::ParserLimits limits = {}) {
  parser::DumpParser p(limits, cache);
  std::mt19937 rng(seed);
  std::vector<std::size_t> at{0, text.size()};
  for (std::size_t i = 0; i < cuts && !text.empty(); ++i) at.push_back(rng() % (text.size() + 1));
  std::sort(at.begin(), at.end());
  for (std::size_t i = 0; i + 1 < at.size(); ++i) p.feed(text.substr(at[i], at[i + 1] - at[i]));
  return fingerprint_of(p);
}

std::vector<model::ThreadDump> cached_dumps(std::string_view text, const std::shared_ptr<parser::BodyCache>& cache) {
  parser::DumpParser p({}, cache);
  p.feed(text);
  p.finish();
  return p.take_dumps();
}

std::string replaced(std::string_view text, std::string_view from, std::string_view to) {
  std::string out(text);
  const auto at = out.find(from);
  REQUIRE(at != std::string::npos);
  return out.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("body cache: an unchanged body is taken from the cache, shared by threads of one stack", "[parser][bodies]") {
  auto cache = std::make_shared<parser::BodyCache>();
  const auto first = cached_dumps(sample, cache);
  CHECK(cache->reused() == 0);
  // worker-1 and worker-2 share one body; holder, the compiler thread: one each. The VM
  // threads print none, and holder's -l section after its blank line is parsed as before.
  CHECK(cache->size() == 3);
  const auto second = cached_dumps(sample, cache);
  CHECK(cache->reused() == 4);
  REQUIRE(first.size() == 1);
  REQUIRE(second.size() == 1);
  const auto& a = first.front().threads;
  const auto& b = second.front().threads;
  REQUIRE(a.size() == 6);
  CHECK(a[0].body_id != 0);
  CHECK(a[0].body_id == a[1].body_id);
  CHECK(a[0].body_id != a[2].body_id);
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i].body_id == b[i].body_id);
  CHECK(a[4].body_id == 0);  // VM Thread
  CHECK(model::canonical_text(second.front()) == model::canonical_text(first.front()));
  CHECK(cached(sample, cache) == plain(sample));
}

TEST_CASE("body cache: a dump keeps the bodies it took after the cache and later dumps let go", "[parser][bodies]") {
  auto cache = std::make_shared<parser::BodyCache>();
  auto kept = cached_dumps(sample, cache);
  const auto expected = model::canonical_text(kept.front());
  // The next dump changes every stack, so the cache drops the first dump's bodies.
  std::string changed(sample);
  for (auto at = changed.find("Inventory.java"); at != std::string::npos; at = changed.find("Inventory.java", at + 1))
    changed.replace(at, 9, "Warehouse");
  cached_dumps(changed, cache);
  cache.reset();
  CHECK(model::canonical_text(kept.front()) == expected);  // ASan: nothing it points to was freed
}

// The byte at which a body first differs decides where the cached path hands over to the
// plain one: at the first byte, inside a line, at a line's end, at the final blank line.
TEST_CASE("body cache: a body that differs anywhere is parsed as it came, on any split", "[parser][bodies]") {
  const std::vector<std::pair<std::string_view, std::string_view>> edits{
      {"   java.lang.Thread.State: BLOCKED", "   java.lang.Thread.State: RUNNABLE"},  // first line
      {"(Inventory.java:12)\n\t- waiting", "(Inventory.java:13)\n\t- waiting"},          // mid-line
      {"\tat Worker.run(Worker.java:5)\n\n\"worker-2\"", "\tat Worker.run(Worker.java:5)\n\tat Extra.frame(X.java:1)\n\n\"worker-2\""},
      {"\tat Worker.run(Worker.java:5)\n\n\"worker-2\"", "\tat Worker.run(Worker.java:5)\n   \n\"worker-2\""},  // blank with spaces
      {"\tat Worker.run(Worker.java:5)\n\n\"worker-2\"", "\tat Worker.run(Worker.java:5)\r\n\r\n\"worker-2\""},  // CRLF
      {"\tat Worker.run(Worker.java:5)\n\n\"worker-2\"", "\tat Worker.run(Worker.java:5)\n\"worker-2\""},  // no blank line
      {"   No compile task\n", "   Compiling: 12 4 Foo::bar (10 bytes)\n"},
      {"   java.lang.Thread.State: TIMED_WAITING (sleeping)\n", "   junk that is no body line\n"},
      {"\t- locked <0x000000071ab1a5d8> (a Inventory)\n\n", "\t- locked <0x000000071ab1a5d8> (a Inventory)\n"},
  };
  for (const auto& [from, to] : edits) {
    const std::string next = replaced(sample, from, to);
    const std::string expected = plain(next);
    for (unsigned seed = 1; seed <= 40; ++seed) {
      auto cache = std::make_shared<parser::BodyCache>();
      cached(sample, cache, seed % 5, seed);
      INFO("edit " << std::string(to) << " seed " << seed);
      REQUIRE(cached(next, cache, seed % 7, seed + 100) == expected);
      REQUIRE(cached(sample, cache, seed % 3, seed + 200) == plain(sample));  // and back
    }
  }
  // The input ends inside a body that matched so far: truncated, as without the cache.
  for (std::size_t cut = sample.find("\"holder\""); cut < sample.find("\"C2 "); ++cut) {
    auto cache = std::make_shared<parser::BodyCache>();
    cached(sample, cache);
    INFO("cut at " << cut);
    REQUIRE(cached(sample.substr(0, cut), cache, 3, static_cast<unsigned>(cut)) == plain(sample.substr(0, cut)));
  }
}

TEST_CASE("body cache: successive real dumps parse as without it, on any split", "[parser][bodies][corpus]") {
  auto files = test::files_below(test::captured_dir());
  for (auto& f : test::files_below(test::corpus_dir())) files.push_back(f);
  REQUIRE(files.size() > 20);
  // Each file, then the next one, through one cache: the same JVM's next dump for the
  // captured scenarios, an unrelated one across directories.
  auto cache = std::make_shared<parser::BodyCache>();
  for (std::size_t i = 0; i < files.size(); ++i) {
    const auto text = test::read_file(files[i]);
    const auto expected = plain(text);
    INFO(files[i].string());
    REQUIRE(cached(text, cache, i % 9, static_cast<unsigned>(i)) == expected);
    REQUIRE(cached(text, cache, 1 + i % 4, static_cast<unsigned>(i) + 7) == expected);  // every body cached
  }
  CHECK(cache->reused() > 0);
}

TEST_CASE("body cache: other parser limits parse anew", "[parser][bodies][limits]") {
  auto cache = std::make_shared<parser::BodyCache>();
  cached(sample, cache);
  parser::ParserLimits limits;
  limits.max_frames_per_thread = 1;
  CHECK(cached(sample, cache, 0, 1, limits) == plain(sample, limits));
  CHECK(cache->reused() == 0);
  CHECK(cached(sample, cache) == plain(sample));
}

// A hostile dump may list one #id twice (that opens the next dump), give threads each
// other's bodies, or repeat a body under another thread: the result is still the plain parse.
TEST_CASE("body cache: threads that trade bodies or ids parse as without it", "[parser][bodies][security]") {
  auto cache = std::make_shared<parser::BodyCache>();
  cached(sample, cache);
  const std::string swapped = replaced(replaced(sample, "#12 ", "#99 "), "#13 ", "#12 ");
  CHECK(cached(swapped, cache, 4, 3) == plain(swapped));
  const std::string twice = std::string(sample) + std::string(sample);
  CHECK(cached(twice, cache, 6, 4) == plain(twice));
  const std::string repeated = replaced(sample, "#13 ", "#12 ");  // a repeated #id: two dumps
  CHECK(cached(repeated, cache, 2, 5) == plain(repeated));
}
