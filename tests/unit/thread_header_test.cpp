// SPDX-License-Identifier: Apache-2.0
// Header lines as real JDKs print them (from the public corpus and local captures).
#include <catch2/catch.hpp>

#include <bit>
#include <charconv>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "thread_header.hpp"

using lockwatch::parser::detail::HeaderFields;
using lockwatch::parser::detail::HeaderLayout;
using lockwatch::parser::detail::layout_of;
using lockwatch::parser::detail::parse_plain_header;
using lockwatch::parser::detail::refit_thread_header;
using lockwatch::parser::detail::parse_thread_header;
using lockwatch::parser::detail::parse_uint;

namespace {

// What std::from_chars reads: the definition the parser's own number readers must meet.
std::optional<std::uint64_t> from_chars_uint(std::string_view text, bool hex) {
  if (!hex && text.substr(0, 2) == "0x") text.remove_prefix(2), hex = true;
  if (text.empty()) return std::nullopt;
  std::uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value, hex ? 16 : 10);
  if (ec != std::errc{} || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<double> from_chars_decimal(std::string text) {
  for (char& c : text)
    if (c == ',') c = '.';
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string header_with(const std::string& fields) {
  return "\"w\" #1 daemon " + fields + " tid=0x7f00 nid=0x2 runnable  [0x7f00]";
}

}  // namespace

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

TEST_CASE("thread header: numbers are read exactly as std::from_chars reads them", "[parser][header]") {
  std::vector<std::string> cases{"", "0", "00", "0x", "0x0", "0x0x1", "x1", "-1", "+1", " 1", "1 ", "1a", "1A", "g",
                                 "18446744073709551615", "18446744073709551616", "99999999999999999999",
                                 "000000000000000000000018446744073709551615", "0000000000000000000000018446744073709551616",
                                 "ffffffffffffffff", "FFFFFFFFFFFFFFFF", "10000000000000000", "0000ffffffffffffffff",
                                 "fFfF", "0x00007f5abc125d70", "7f5abc125d70"};
  // Random digits, hex digits and junk of every length up to 24.
  std::mt19937 rng(42);
  const std::string alphabet = "0123456789abcdefABCDEFxg-";
  for (int i = 0; i < 20000; ++i) {
    std::string s(rng() % 25, '0');
    for (char& c : s) c = alphabet[rng() % (rng() % 4 == 0 ? alphabet.size() : 10)];
    cases.push_back(s);
  }
  for (const auto& text : cases) {
    INFO(text);
    CHECK(parse_uint(text) == from_chars_uint(text, false));
    CHECK(parse_uint(text, true) == from_chars_uint(text, true));
  }
}

TEST_CASE("thread header: cpu= and elapsed= are the doubles std::from_chars makes, to the bit", "[parser][header]") {
  std::vector<std::string> cases{"0.37", "637,81", "814.24", "0", "0.0", ".5", "5.", ".", "", "1.2.3", "1e3", "-1.5", "+1",
                                 "inf", "nan", "0.1", "0.3", "123456789012345", "1234567890123456", "12345678901234567890",
                                 "0.000000000000001", "0.0000000000000001", "99999.999999999", "000000000000000000000.1",
                                 "16155.48", "59356.14", "1576.91"};
  std::mt19937 rng(7);
  for (int i = 0; i < 20000; ++i) {
    std::string s;
    const auto digits = 1 + rng() % 18;
    const auto mark = rng() % (digits + 2);
    for (unsigned d = 0; d < digits; ++d) {
      if (d == mark) s.push_back(rng() % 3 == 0 ? ',' : '.');
      s.push_back(static_cast<char>('0' + rng() % 10));
    }
    cases.push_back(s);
  }
  for (const auto& text : cases) {
    INFO(text);
    const auto expected = from_chars_decimal(text);
    const auto h = parse_thread_header(header_with("prio=5 os_prio=0 cpu=" + text + "ms elapsed=" + text + "s"));
    // A value that is no number is no header field: the header does not parse.
    REQUIRE(h.has_value() == expected.has_value());
    if (!expected) continue;
    // Exact: the same bits (NaN included), not an approximation.
    CHECK(std::bit_cast<std::uint64_t>(*h->cpu_ms) == std::bit_cast<std::uint64_t>(*expected));
    CHECK(std::bit_cast<std::uint64_t>(*h->elapsed_s) == std::bit_cast<std::uint64_t>(*expected));
  }
}

TEST_CASE("thread header: prio and os_prio take what an int holds, and nothing else", "[parser][header]") {
  for (const auto& [text, value] : std::vector<std::pair<std::string, std::optional<int>>>{
           {"5", 5}, {"0", 0}, {"-1", -1}, {"007", 7}, {"2147483647", 2147483647}, {"-2147483648", -2147483647 - 1},
           {"2147483648", std::nullopt}, {"-2147483649", std::nullopt}, {"99999999999", std::nullopt}, {"-", std::nullopt},
           {"", std::nullopt}, {"+5", std::nullopt}, {"5x", std::nullopt}, {"--5", std::nullopt}}) {
    INFO(text);
    const auto h = parse_thread_header(header_with("prio=" + text + " os_prio=" + text));
    REQUIRE(h.has_value() == value.has_value());
    if (!value) continue;
    CHECK(h->prio == *value);
    CHECK(h->os_prio == *value);
  }
}

namespace {

std::vector<std::string> real_headers() {
  std::vector<std::string> out;
  auto files = lockwatch::test::files_below(lockwatch::test::captured_dir());
  for (auto& f : lockwatch::test::files_below(lockwatch::test::corpus_dir())) files.push_back(f);
  for (const auto& file : files) {
    const auto text = lockwatch::test::read_file(file);
    for (std::size_t at = 0; at < text.size();) {
      auto nl = text.find('\n', at);
      if (nl == std::string::npos) nl = text.size();
      std::string line = text.substr(at, nl - at);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (!line.empty() && line[0] == '"') out.push_back(std::move(line));
      at = nl + 1;
    }
  }
  return out;
}

// Every field a header gives a thread.
void check_same(const HeaderFields& a, const HeaderFields& b) {
  CHECK(a.name == b.name);
  CHECK(a.java_id == b.java_id);
  CHECK(a.os_tid == b.os_tid);
  CHECK(a.nid == b.nid);
  CHECK(a.tid == b.tid);
  CHECK(a.daemon == b.daemon);
  CHECK(a.has_stack_bracket == b.has_stack_bracket);
  CHECK(a.prio == b.prio);
  CHECK(a.os_prio == b.os_prio);
  CHECK(a.cpu_ms == b.cpu_ms);
  CHECK(a.elapsed_s == b.elapsed_s);
  CHECK(a.status == b.status);
  CHECK(a.volatile_count == b.volatile_count);
  for (std::uint8_t i = 0; i < std::min<std::uint8_t>(a.volatile_count, 4); ++i) {
    CHECK(a.volatile_values[i].kind == b.volatile_values[i].kind);
    CHECK(a.volatile_values[i].text == b.volatile_values[i].text);
  }
}

// refit against the parse: when it answers, it answers as the parse; and the layout it gives
// for the line is the one the line's own parse gives.
bool check_refit(const std::string& line, const std::string& last_line, const HeaderLayout& last) {
  HeaderLayout next;
  HeaderFields refit;
  if (!refit_thread_header(line, last_line, last, refit, next)) return false;
  const auto parsed = parse_thread_header(line);
  INFO("last: " << last_line << "\nline: " << line);
  REQUIRE(parsed);
  check_same(refit, *parsed);
  const auto own = layout_of(line, *parsed);
  REQUIRE(own.usable);
  CHECK(next.usable);
  CHECK(next.name.at == own.name.at);
  CHECK(next.status.at == own.status.at);
  CHECK(next.status.size == own.status.size);
  CHECK(next.value_count == own.value_count);
  for (std::uint8_t i = 0; i < own.value_count; ++i) CHECK(next.values[i].second.at == own.values[i].second.at);
  return true;
}

// The header with each cpu=/elapsed= value replaced by `value`.
std::string with_values(const std::string& line, const std::string& value) {
  std::string out = line;
  for (const std::string key : {"cpu=", "elapsed="}) {
    const auto at = out.rfind(" " + key);
    if (at == std::string::npos) continue;
    const auto from = at + 1 + key.size();
    auto end = from;
    while (end < out.size() && ((out[end] >= '0' && out[end] <= '9') || out[end] == '.' || out[end] == ',')) ++end;
    out.replace(from, end - from, value);
  }
  return out;
}

}  // namespace

TEST_CASE("thread header: the next header of a thread is refit as the parse reads it", "[parser][header]") {
  const auto headers = real_headers();
  REQUIRE(headers.size() > 1000);
  std::size_t refit = 0, with_times = 0;
  for (std::size_t h = 0; h < headers.size(); h += 3) {
    const auto& last_line = headers[h];
    const auto parsed = parse_thread_header(last_line);
    if (!parsed) continue;
    const auto layout = layout_of(last_line, *parsed);
    REQUIRE(layout.usable);
    CHECK(check_refit(last_line, last_line, layout));  // the same line always fits
    // New times, longer and shorter: must fit whenever the header prints them.
    const bool timed = parsed->cpu_ms || parsed->elapsed_s;
    with_times += timed;
    for (const std::string value : {"1234567.891", "0.5", "7", "3,25"}) {
      const bool fits = check_refit(with_values(last_line, value), last_line, layout);
      if (timed) CHECK(fits);
      refit += fits;
    }
    // Any byte changed anywhere: fits only where the parse agrees.
    for (std::size_t i = 0; i < last_line.size(); i += 2)
      for (const char c : {'0', '9', '.', ',', ' ', 'x', '"', '#', '='}) {
        std::string changed = last_line;
        changed[i] = c;
        refit += check_refit(changed, last_line, layout);
      }
  }
  CHECK(with_times > 500);
  CHECK(refit > 5000);
}

TEST_CASE("thread header: a name or field that looks like a time is compared, not refit", "[parser][header]") {
  const std::string last = "\"cpu=1.00ms elapsed=2.00s\" #7 daemon prio=5 os_prio=0 cpu=10.00ms elapsed=20.00s tid=0x1 nid=0x2 runnable  [0x3]";
  const auto parsed = parse_thread_header(last);
  REQUIRE(parsed);
  const auto layout = layout_of(last, *parsed);
  REQUIRE(layout.usable);
  CHECK(layout.value_count == 2);  // the name's look-alikes are part of the name
  HeaderLayout next;
  HeaderFields out;
  CHECK_FALSE(refit_thread_header("\"cpu=1.50ms elapsed=2.00s\" #7 daemon prio=5 os_prio=0 cpu=10.00ms elapsed=20.00s tid=0x1 nid=0x2 runnable  [0x3]", last, layout, out, next));
  CHECK(check_refit("\"cpu=1.00ms elapsed=2.00s\" #7 daemon prio=5 os_prio=0 cpu=99.99ms elapsed=21.5s tid=0x1 nid=0x2 runnable  [0x3]", last, layout));
  CHECK_FALSE(refit_thread_header("\"cpu=1.00ms elapsed=2.00s\" #7 daemon prio=5 os_prio=0 cpu=1e3ms elapsed=21.5s tid=0x1 nid=0x2 runnable  [0x3]", last, layout, out, next));
  CHECK_FALSE(refit_thread_header("\"cpu=1.00ms elapsed=2.00s\" #8 daemon prio=5 os_prio=0 cpu=10.00ms elapsed=20.00s tid=0x1 nid=0x2 runnable  [0x3]", last, layout, out, next));
}
