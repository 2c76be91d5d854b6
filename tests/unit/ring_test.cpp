// SPDX-License-Identifier: Apache-2.0
// The ring keeps dumps byte for byte while storing each repeated line and block once,
// and gives every byte back when it evicts.
#include <catch2/catch.hpp>

#include "lockwatch/store/ring.hpp"
#include "test_support.hpp"

using namespace lockwatch;
namespace fs = std::filesystem;

namespace {

std::vector<fs::path> real_dumps() {
  auto files = test::files_below(test::corpus_dir());
  for (auto& f : test::files_below(test::captured_dir())) files.push_back(f);
  return files;
}

std::string with_times(const std::string& text, int cpu, int elapsed) {
  std::string out = text;
  const std::string from = "cpu=", to = "cpu=" + std::to_string(cpu) + "." + std::to_string(10 + elapsed % 90) + "ms";  // two decimals, as the JVM prints
  for (auto at = out.find(from); at != std::string::npos; at = out.find(from, at + 1)) {
    const auto end = out.find("ms", at);
    if (end != std::string::npos && end - at < 20) out.replace(at, end + 2 - at, to);
  }
  return out;
}

}  // namespace

TEST_CASE("every real dump comes back byte for byte", "[store]") {
  const auto files = real_dumps();
  if (files.empty()) WARN("SKIPPED: no corpus at " << test::corpus_dir());
  store::Ring ring({100000, std::uint64_t{1} << 40});
  std::vector<std::pair<std::uint64_t, fs::path>> ids;
  for (const auto& f : files) ids.emplace_back(*ring.add(test::read_file(f), {}), f);
  for (const auto& [id, f] : ids) {
    INFO(f);
    const auto text = ring.text(id);
    REQUIRE(text);
    CHECK(*text == test::read_file(f));
  }
}

TEST_CASE("header numbers that change every sample cost bytes, not lines", "[store]") {
  const auto dump = test::read_file(test::captured_dir() / "jdk17" / "MonitorContention" / "dump-1.txt");
  store::Ring ring({1000, std::uint64_t{1} << 40});
  ring.add(dump, {});
  const auto after_one = ring.bytes();
  for (int i = 1; i <= 99; ++i) ring.add(with_times(dump, 1000 + i, i), {});
  const auto per_sample = (ring.bytes() - after_one) / 99;
  CHECK(per_sample * 20 < dump.size());  // each repeat costs < 5% of its text
  CHECK(*ring.text(ring.list().back().id) == with_times(dump, 1099, 99));
  CHECK(*ring.text(ring.list().front().id) == dump);
}

TEST_CASE("volatile header tokens: exotic numbers still round-trip", "[store]") {
  store::Ring ring;
  const std::string text =
      "\"cpu=1.5ms elapsed=2s\" #1 prio=5 os_prio=0 cpu=0.05ms elapsed=1234.56s allocated=39288B defined_classes=4 tid=0x1 nid=0x2 runnable\n"
      "\"odd\" #2 cpu=1. elapsed=.5s allocated=007B cpu=99999999999999999999ms tid=0x1\n"
      "\"x\x01y\" #3 cpu=1.00ms\n"
      "no newline at the end";
  const auto id = *ring.add(text, {});
  CHECK(*ring.text(id) == text);
}

TEST_CASE("limits: count and bytes evict the oldest; evicted samples are gone", "[store]") {
  const auto a = test::read_file(test::captured_dir() / "jdk17" / "MonitorContention" / "dump-1.txt");
  const auto b = test::read_file(test::captured_dir() / "jdk17" / "ReentrantLockPool" / "dump-1.txt");
  store::Ring ring({3, std::uint64_t{1} << 40});
  std::vector<std::uint64_t> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(*ring.add(i % 2 ? a : b, {}));
  CHECK(ring.size() == 3);
  CHECK(ring.evictions() == 2);
  CHECK_FALSE(ring.text(ids[0]));
  CHECK(ring.list().front().id == ids[2]);
  CHECK(ids[4] > ids[3]);

  store::Ring small({1000, 1});  // byte bound below one sample: no sample fits, none is kept
  CHECK_FALSE(small.add(a, {}));
  CHECK_FALSE(small.add(b, {}));
  CHECK(small.size() == 0);
  CHECK(small.refused() == 2);
  CHECK(small.bytes() == 0);
}

TEST_CASE("eviction returns every pooled byte: a ring holding only B costs what B alone costs", "[store]") {
  const auto a = test::read_file(test::captured_dir() / "jdk17" / "MonitorContention" / "dump-1.txt");
  const auto b = test::read_file(test::captured_dir() / "jdk25" / "ReentrantLockPool" / "dump-2.txt");
  store::Ring churned({1, std::uint64_t{1} << 40});
  for (int i = 0; i < 10; ++i) churned.add(i % 2 ? b : with_times(a, i, i), {});
  store::Ring fresh({1, std::uint64_t{1} << 40});
  fresh.add(b, {});
  CHECK(churned.bytes() == fresh.bytes());
}

TEST_CASE("ring: first_id is the oldest sample kept", "[store]") {
  store::Ring ring({2, std::uint64_t{1} << 30});
  CHECK_FALSE(ring.first_id());
  const auto a = ring.add("Full thread dump a\n", {});
  ring.add("Full thread dump b\n", {});
  CHECK(ring.first_id() == a);
  const auto c = ring.add("Full thread dump c\n", {});
  REQUIRE(c);
  CHECK(ring.first_id() == *c - 1);
}

TEST_CASE("ring: a sample that cannot fit on its own is refused, and the ring stays as it was", "[store][ring][security]") {
  store::Ring ring({600, 256 * 1024});
  const auto small = test::read_file(real_dumps().front());
  const auto kept = ring.add(small, {});
  REQUIRE(kept);
  const auto bytes_before = ring.bytes();
  // Many distinct lines: interning cannot shrink it, so it is bigger than the bound alone.
  std::string huge = "Full thread dump x:\n\n";
  for (int i = 0; i < 40'000; ++i) huge += "\"t" + std::to_string(i) + "\" #" + std::to_string(i) + " prio=5\n\n";
  REQUIRE(huge.size() > 256 * 1024);
  CHECK_FALSE(ring.add(huge, {}));
  CHECK(ring.refused() == 1);
  CHECK(ring.size() == 1);
  CHECK(ring.bytes() == bytes_before);  // everything the refused sample took was given back
  CHECK(ring.text(*kept) == small);
  CHECK(ring.add(small, {}));           // and it keeps working
  CHECK(ring.bytes() <= 256 * 1024);
}

TEST_CASE("ring: a sample keeps its dump record's facts as they were delivered", "[ring]") {
  store::Ring ring;
  sampling::DumpFacts facts;
  facts.outcome = sampling::Outcome::ok, facts.source = sampling::DumpSource::jstack, facts.form = sampling::DumpForm::json;
  facts.locks = true, facts.burst = true, facts.elapsed = std::chrono::milliseconds(42);
  facts.started = std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000));
  const std::string text = "Full thread dump x:\n\n";
  const auto id = ring.add(text, facts);
  REQUIRE(id);
  const auto info = ring.info(*id);
  REQUIRE(info);
  CHECK(info->id == *id);
  CHECK(info->text_bytes == text.size());
  CHECK(info->dump.source == sampling::DumpSource::jstack);
  CHECK(info->dump.form == sampling::DumpForm::json);
  CHECK(info->dump.locks);
  CHECK(info->dump.burst);
  CHECK(info->dump.elapsed == std::chrono::milliseconds(42));
  CHECK(sampling::unix_seconds(info->dump.started) == 1.7e9);
  CHECK(ring.list().back().dump.source == sampling::DumpSource::jstack);
}
