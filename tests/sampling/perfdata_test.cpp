// SPDX-License-Identifier: Apache-2.0
// hsperfdata: real files captured from JDK 17 and Temurin 25, hostile variants of them,
// a fixture /proc tree, and live JVMs.
//
// The captured files (tests/sampling/data/hsperfdata/) come from a small program that
// makes 3 threads contend on one monitor, parks them, calls System.gc() and idles. Each
// JVM was stopped with SIGSTOP, its file copied and `jstat -J-Djstat.showUnsupported=true
// -snap <pid>` run against the stopped JVM, so jstat read the same bytes as the copy. A
// separate Python reader (struct.unpack over the copy) printed exactly the same 193
// (JDK 17) / 191 (JDK 25) names and values as jstat (its 6 sun.perfdata.* names are
// made up from the prologue). The expected numbers below come from those two readers.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "lockwatch/sampling/perfdata.hpp"
#include "process.hpp"
#include "test_support.hpp"
#include "skip.hpp"

using namespace lockwatch::sampling;
namespace fs = std::filesystem;

namespace {

std::string capture(const std::string& name) {
  return lockwatch::test::read_file(fs::path(LOCKWATCH_SAMPLING_DATA_DIR) / "hsperfdata" / (name + ".hsperfdata"));
}

PerfData parse_ok(std::string_view bytes) {
  std::string error;
  auto data = parse_perfdata(bytes, &error);
  INFO(error);
  REQUIRE(data);
  REQUIRE(data->complete);
  return *data;
}

// The 64-character sun.rt.jvmCapabilities: the attach flag, then INCLUDE_SERVICES (1).
std::string capabilities(char attach) { return std::string(1, attach) + "1" + std::string(62, '0'); }

std::set<std::string> names_of(const PerfData& data) {
  std::set<std::string> names;
  for (const auto& [name, value] : data.longs) names.insert(name);
  for (const auto& [name, value] : data.strings) names.insert(name);
  return names;
}

std::uint32_t le32(std::string_view bytes, std::size_t at) {
  std::uint32_t v = 0;
  for (std::size_t i = 4; i-- > 0;) v = (v << 8) | static_cast<std::uint8_t>(bytes[at + i]);
  return v;
}

void put32(std::string& bytes, std::size_t at, std::int32_t value, bool little = true) {
  const auto v = static_cast<std::uint32_t>(value);
  for (std::size_t i = 0; i < 4; ++i) {
    bytes[at + (little ? i : 3 - i)] = static_cast<char>((v >> (8 * i)) & 0xff);
  }
}

// Rewrites a little-endian capture field by field in big-endian order, as a big-endian
// JVM (byte_order 0) would have written it.
std::string to_big_endian(std::string bytes) {
  const auto swap = [&bytes](std::size_t at, std::size_t width) {
    const auto first = bytes.begin() + static_cast<std::ptrdiff_t>(at);
    std::reverse(first, first + static_cast<std::ptrdiff_t>(width));
  };
  std::size_t at = le32(bytes, 24);
  const auto entries = le32(bytes, 28);
  for (std::uint32_t i = 0; i < entries; ++i) {
    const auto length = le32(bytes, at), vector_length = le32(bytes, at + 8), data = le32(bytes, at + 16);
    if (bytes[at + 12] == 'J' && vector_length == 0) swap(at + data, 8);
    for (const std::size_t field : {0U, 4U, 8U, 16U}) swap(at + field, 4);
    at += length;
  }
  for (const std::size_t field : {8U, 12U, 24U, 28U}) swap(field, 4);
  swap(16, 8);
  bytes[4] = 0;
  return bytes;
}

// Builds hsperfdata files the way HotSpot lays them out (name at 20, data 8-aligned,
// entries 8-aligned), so tests can corrupt one field at a time.
class Builder {
 public:
  explicit Builder(bool little = true) : little_(little) {}

  Builder& add_long(const std::string& name, std::int64_t value) {
    std::string data(8, '\0');
    const auto v = static_cast<std::uint64_t>(value);
    for (std::size_t i = 0; i < 8; ++i) data[little_ ? i : 7 - i] = static_cast<char>((v >> (8 * i)) & 0xff);
    return add(name, 'J', 0, data);
  }
  Builder& add_string(const std::string& name, const std::string& value) {
    return add(name, 'B', static_cast<std::int32_t>(value.size() + 1), value + '\0');
  }
  Builder& add(const std::string& name, char type, std::int32_t vector_length, const std::string& data) {
    std::string entry(20, '\0');
    entry += name + '\0';
    entry.resize((entry.size() + 7) / 8 * 8, '\0');
    const auto data_offset = entry.size();
    entry += data;
    entry.resize((entry.size() + 7) / 8 * 8, '\0');
    put32(entry, 0, static_cast<std::int32_t>(entry.size()), little_);
    put32(entry, 4, 20, little_);
    put32(entry, 8, vector_length, little_);
    entry[12] = type;
    entry[14] = type == 'B' ? 5 : 1;  // units: string, none
    entry[15] = 1;                    // variability: constant
    put32(entry, 16, static_cast<std::int32_t>(data_offset), little_);
    offsets_.push_back(32 + body_.size());
    body_ += entry;
    return *this;
  }
  // Offset of entry `i` in the built file.
  std::size_t entry(std::size_t i) const { return offsets_.at(i); }

  std::string build() const {
    std::string file("\xca\xfe\xc0\xc0", 4);
    file += {little_ ? '\1' : '\0', '\2', '\0', '\1'};
    file.resize(32, '\0');
    put32(file, 8, static_cast<std::int32_t>(32 + body_.size()), little_);
    file[little_ ? 16 : 23] = 42;  // mod_time_stamp
    put32(file, 24, 32, little_);
    put32(file, 28, static_cast<std::int32_t>(offsets_.size()), little_);
    return file + body_ + std::string(64, '\0');  // zeroed space after `used`, as in real files
  }

 private:
  bool little_;
  std::string body_;
  std::vector<std::size_t> offsets_;
};

Builder three_entries(bool little = true) {
  Builder b(little);
  b.add_long("a.first", 1).add_string("a.text", "hello").add_long("a.third", -3);
  return b;
}

// What is wrong with parsing `bytes`, or "": it must give an error, or a result whose
// gaps are explained. (Plain code, not assertions: the loops run it 100k times.)
std::string insane(std::string_view bytes) {
  std::string error;
  const auto data = parse_perfdata(bytes, &error);
  if (!data || !data->complete) return error.empty() ? "failure without an error" : "";
  if (data->longs.size() + data->strings.size() > static_cast<std::size_t>(data->num_entries)) {
    return "more values than entries";
  }
  (void)counters_of(*data);
  return "";
}

// The first value of a partial parse that differs from the whole file's, or "".
std::string subset_mismatch(const PerfData& part, const PerfData& whole) {
  for (const auto& [name, value] : part.longs)
    if (whole.get_long(name) != value) return name;
  for (const auto& [name, value] : part.strings)
    if (whole.get_string(name) != value) return name;
  return "";
}

struct TempDir {
  fs::path path;
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "lockwatch-perfdata-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

}  // namespace

TEST_CASE("perfdata: JDK 17 capture gives the values jstat printed", "[perfdata]") {
  const auto data = parse_ok(capture("jdk17"));
  CHECK(data.accessible);
  CHECK(data.major_version == 2);
  CHECK(data.minor_version == 0);
  CHECK(data.num_entries == 187);
  CHECK(data.longs.size() == 154);
  CHECK(data.strings.size() == 33);
  CHECK(data.mod_time_stamp == 94092777);  // jstat: sun.perfdata.timestamp
  CHECK(data.get_long("sun.rt.jvmVersion") == 285218050);
  CHECK(data.get_string("sun.rt.javaCommand") == "PerfCapture");
  CHECK(data.get_string("sun.gc.lastCause") == "System.gc()");
  CHECK(data.get_string("java.rt.vmArgs") == "");
  CHECK(data.get_string("sun.rt.jvmCapabilities") == capabilities('1'));
  CHECK_FALSE(data.get_long("no.such.counter"));
  CHECK_FALSE(data.get_string("java.threads.live"));  // a long, not a string

  const auto c = counters_of(data);
  CHECK(c.threads_live == 9);  // main, 3 workers, 5 JVM daemon threads
  CHECK(c.threads_daemon == 5);
  CHECK(c.contended_lock_attempts == 141);
  CHECK(c.parks == 312);
  CHECK(c.safepoints == 1);
  CHECK(c.safepoint_time_ticks == 10777006);
  CHECK(c.safepoint_sync_time_ticks == 6332);
  CHECK(c.frequency == 1000000000);
  CHECK(c.attach_supported == true);
  CHECK(c.vm_version == "17.0.21.1+2-1-deb12u1-Debian");
}

static bool same_counters(const JvmCounters& a, const JvmCounters& b) {
  return std::tie(a.threads_live, a.threads_daemon, a.contended_lock_attempts, a.parks, a.safepoints,
                  a.safepoint_time_ticks, a.safepoint_sync_time_ticks, a.frequency, a.gc_collections,
                  a.attach_supported, a.vm_version) ==
         std::tie(b.threads_live, b.threads_daemon, b.contended_lock_attempts, b.parks, b.safepoints,
                  b.safepoint_time_ticks, b.safepoint_sync_time_ticks, b.frequency, b.gc_collections,
                  b.attach_supported, b.vm_version);
}

TEST_CASE("perfdata: a tick's parse keeps only the counters, and they are the whole file's", "[perfdata]") {
  for (const char* jdk : {"jdk17", "jdk25"}) {
    INFO(jdk);
    const auto bytes = capture(jdk);
    const auto all = parse_ok(bytes);
    std::string error;
    const auto few = parse_perfdata(bytes, &error, PerfDataKeep::counters);
    REQUIRE(few);
    CHECK(error.empty());
    CHECK(few->complete);
    CHECK(few->num_entries == all.num_entries);
    CHECK(few->longs.size() + few->strings.size() < 20);  // of ~185
    CHECK(few->get_long("sun.rt.safepointTime") == all.get_long("sun.rt.safepointTime"));
    CHECK_FALSE(few->get_string("sun.rt.javaCommand"));  // not a counter
    CHECK(same_counters(counters_of(*few), counters_of(all)));
  }
  // A corrupt entry that is no counter ends the walk all the same: the counter after it is lost.
  auto b = three_entries();
  b.add_long("java.threads.live", 4);
  auto bytes = b.build();
  put32(bytes, b.entry(1) + 16, -8);  // the string entry's data offset
  std::string all_error, few_error;
  const auto all = parse_perfdata(bytes, &all_error);
  const auto few = parse_perfdata(bytes, &few_error, PerfDataKeep::counters);
  REQUIRE(all);
  REQUIRE(few);
  CHECK_FALSE(few->complete);
  CHECK(few_error == all_error);
  CHECK_FALSE(few->get_long("java.threads.live"));
  CHECK(parse_perfdata(b.build(), nullptr, PerfDataKeep::counters)->get_long("java.threads.live") == 4);
}

TEST_CASE("perfdata: Temurin 25 capture has no sun.rt._sync_* counters", "[perfdata]") {
  const auto data = parse_ok(capture("jdk25"));
  CHECK(data.num_entries == 185);
  CHECK(data.longs.size() == 152);
  CHECK(data.strings.size() == 33);
  CHECK(data.mod_time_stamp == 40521257);
  CHECK(data.get_long("sun.rt.jvmVersion") == 419431177);

  const auto c = counters_of(data);
  CHECK(c.threads_live == 9);
  CHECK(c.threads_daemon == 5);
  CHECK_FALSE(c.contended_lock_attempts);
  CHECK_FALSE(c.parks);
  CHECK(c.safepoints == 1);
  CHECK(c.safepoint_time_ticks == 12687451);
  CHECK(c.safepoint_sync_time_ticks == 6192);
  CHECK(c.frequency == 1000000000);
  CHECK(c.attach_supported == true);
  CHECK(c.vm_version == "25.0.3+9-LTS");
}

TEST_CASE("perfdata: -XX:+DisableAttachMechanism clears capability 0 on JDK 17 and 25", "[perfdata]") {
  for (const std::string name : {"jdk17-attach-disabled", "jdk25-attach-disabled"}) {
    INFO(name);
    const auto data = parse_ok(capture(name));
    CHECK(data.get_string("sun.rt.jvmCapabilities") == capabilities('0'));
    CHECK(data.get_string("java.rt.vmArgs") == "-XX:+DisableAttachMechanism");
    CHECK(counters_of(data).attach_supported == false);
    CHECK(counters_of(data).threads_live == 9);
  }
}

TEST_CASE("perfdata: -Xrs changes neither the capabilities nor the counter set", "[perfdata]") {
  const auto xrs = parse_ok(capture("jdk17-xrs"));
  CHECK(xrs.get_string("java.rt.vmArgs") == "-Xrs");
  CHECK(xrs.get_string("sun.rt.jvmCapabilities") == capabilities('1'));
  CHECK(counters_of(xrs).attach_supported == true);
  CHECK(names_of(xrs) == names_of(parse_ok(capture("jdk17"))));
  CHECK(counters_of(xrs).contended_lock_attempts == 2);
  CHECK(counters_of(xrs).parks == 6);
}

TEST_CASE("perfdata: a big-endian file parses to the same counters", "[perfdata]") {
  for (const std::string name : {"jdk17", "jdk25"}) {
    INFO(name);
    const auto little = parse_ok(capture(name));
    const auto big = parse_ok(to_big_endian(capture(name)));
    CHECK(big.longs == little.longs);
    CHECK(big.strings == little.strings);
    CHECK(big.mod_time_stamp == little.mod_time_stamp);
    CHECK(big.num_entries == little.num_entries);
  }
  const auto built = parse_ok(three_entries(false).build());
  CHECK(built.get_long("a.third") == -3);
  CHECK(built.get_string("a.text") == "hello");
  CHECK(built.mod_time_stamp == 42);
}

TEST_CASE("perfdata: counters_of reads capability flags and version fallbacks", "[perfdata]") {
  const auto counters = [](Builder& b) { return counters_of(parse_ok(b.build())); };
  Builder attach, no_attach, odd, empty, none;
  attach.add_string("sun.rt.jvmCapabilities", "10").add_string("java.vm.version", "1.8.0-old");
  no_attach.add_string("sun.rt.jvmCapabilities", "01");
  odd.add_string("sun.rt.jvmCapabilities", "x1");
  empty.add("sun.rt.jvmCapabilities", 'B', 4, std::string(4, '\0'));
  none.add_long("sun.rt.jvmCapabilities", 1);  // wrong kind: not a string
  CHECK(counters(attach).attach_supported == true);
  CHECK(counters(attach).vm_version == "1.8.0-old");
  CHECK(counters(no_attach).attach_supported == false);
  CHECK_FALSE(counters(odd).attach_supported);
  CHECK_FALSE(counters(empty).attach_supported);
  CHECK_FALSE(counters(none).attach_supported);
  CHECK(counters(none).vm_version.empty());
  CHECK_FALSE(counters(none).threads_live);
}

TEST_CASE("perfdata: every truncation of a real file is an error or a correct prefix", "[perfdata]") {
  for (const std::string name : {"jdk17", "jdk25"}) {
    INFO(name);
    const std::string file = capture(name);
    const auto whole = parse_ok(file);
    // Every length up to just past `used`; beyond it the file is zeros the parser never
    // reads, so a sample of those lengths is enough (and keeps the ASan run short).
    const std::size_t dense = static_cast<std::size_t>(le32(file, 8)) + 64;
    std::size_t previous = 0;
    for (std::size_t length = 0; length <= file.size(); length += length < dense ? 1 : 509) {
      std::string error;
      const auto part = parse_perfdata(std::string_view(file).substr(0, length), &error);
      // Under 32 bytes there is no prologue; past it, the entries that fit.
      if (static_cast<bool>(part) != (length >= 32) || (part && !part->complete && error.empty())) {
        FAIL("prefix of " << length << " bytes: not an error nor a flagged partial result: " << error);
      }
      if (!part) continue;
      const auto found = part->longs.size() + part->strings.size();
      if (found < previous) FAIL("prefix of " << length << " bytes lost entries");
      if (const auto wrong = subset_mismatch(*part, whole); !wrong.empty()) {
        FAIL("prefix of " << length << " bytes: wrong value for " << wrong);
      }
      previous = found;
    }
    CHECK(previous == static_cast<std::size_t>(whole.num_entries));
  }
}

TEST_CASE("perfdata: flipped bytes anywhere never crash", "[perfdata]") {
  const std::string file = capture("jdk17");
  const auto used = static_cast<std::size_t>(le32(file, 8));
  // Rotating masks: each byte of a 4-byte field gets another (low bit, sign bit, all bits).
  constexpr std::array<unsigned, 3> masks{0x01U, 0x80U, 0xffU};
  std::string bad = file;
  for (std::size_t at = 0; at < used + 64; ++at) {
    bad[at] = static_cast<char>(static_cast<unsigned char>(file[at]) ^ masks[at % masks.size()]);
    if (const auto problem = insane(bad); !problem.empty()) FAIL_CHECK(problem << " after flipping byte " << at);
    bad[at] = file[at];
  }
}

TEST_CASE("perfdata: random damage and random files never crash", "[perfdata]") {
  std::mt19937 rng(12345);  // fixed: a failure must be reproducible
  const std::string file = capture("jdk25");
  std::uniform_int_distribution<std::size_t> position(0, 12400);
  std::uniform_int_distribution<int> byte(0, 255), count(1, 16), entries(0, 40);
  for (int round = 0; round < 3000; ++round) {
    std::string bad = file;
    for (int n = count(rng); n > 0; --n) bad[position(rng)] = static_cast<char>(byte(rng));
    if (const auto problem = insane(bad); !problem.empty()) FAIL_CHECK(problem << " in damaged round " << round);
  }
  const std::string head = Builder().build().substr(0, 32);
  for (int round = 0; round < 3000; ++round) {  // a valid prologue over noise
    std::string noise(std::uniform_int_distribution<std::size_t>(32, 600)(rng), '\0');
    for (auto& ch : noise) ch = static_cast<char>(byte(rng));
    noise.replace(0, 32, head);
    put32(noise, 8, static_cast<std::int32_t>(noise.size()));
    put32(noise, 28, entries(rng));
    if (const auto problem = insane(noise); !problem.empty()) FAIL_CHECK(problem << " in noise round " << round);
  }
}

TEST_CASE("perfdata: hostile prologues are rejected with a reason", "[perfdata]") {
  const std::string good = three_entries().build();
  const auto rejected = [](std::string bytes) {
    std::string error;
    const bool ok = parse_perfdata(bytes, &error).has_value();
    INFO(error);
    CHECK_FALSE(error.empty());
    return !ok;
  };
  CHECK(rejected(""));
  CHECK(rejected(good.substr(0, 31)));
  CHECK(rejected("\xc0\xc0\xfe\xca" + good.substr(4)));  // magic in host order
  CHECK(rejected(std::string(4096, '\0')));
  const auto with = [&good](std::size_t at, std::int32_t value) {
    std::string bad = good;
    put32(bad, at, value);
    return bad;
  };
  std::string order = good, version1 = good, version3 = good;
  order[4] = 2, version1[5] = 1, version3[5] = 3;
  CHECK(rejected(order));
  CHECK(rejected(version1));
  CHECK(rejected(version3));
  for (const std::int32_t offset : {0, 31, 33, -32, 0x7ffffff8, static_cast<std::int32_t>(good.size() + 8)}) {
    CHECK(rejected(with(24, offset)));
  }
  CHECK(rejected(with(28, -1)));
  CHECK(rejected(with(8, 16)));  // used ends inside the prologue
  CHECK(rejected(with(8, -5)));
}

TEST_CASE("perfdata: hostile entries stop the walk, keeping the entries before", "[perfdata]") {
  Builder b = three_entries();
  const std::string good = b.build();
  const auto at = b.entry(1);  // the string entry
  const auto partial = [&good, at](std::size_t field, std::int32_t value) {
    std::string bad = good;
    put32(bad, at + field, value);
    std::string error;
    const auto data = parse_perfdata(bad, &error);
    REQUIRE(data);
    CHECK_FALSE(data->complete);
    CHECK(error.find("entry 1 at offset") != std::string::npos);
    CHECK(data->get_long("a.first") == 1);
    CHECK_FALSE(data->get_long("a.third"));
  };
  for (const std::int32_t length : {0, 4, 19, -20, 0x7fffffff, 1 << 20, 33}) partial(0, length);
  for (const std::int32_t name : {0, 19, -1, 0x7fffffff, 1 << 16, 40}) partial(4, name);
  for (const std::int32_t data : {0, 12, -8, 0x7fffffff, 41}) partial(16, data);
  for (const std::int32_t vector : {-1, 0x7fffffff, 100, 13}) partial(8, vector);
  SECTION("a name without its NUL") {
    std::string bad = good;
    std::fill_n(bad.begin() + static_cast<std::ptrdiff_t>(at + 20), 12, 'x');  // up to the data
    CHECK_FALSE(parse_perfdata(bad)->complete);
  }
  SECTION("more entries announced than written: the zero after them ends the walk") {
    std::string bad = good;
    put32(bad, 28, 0x7fffffff);
    put32(bad, 8, static_cast<std::int32_t>(bad.size()));
    const auto data = parse_perfdata(bad);
    CHECK_FALSE(data->complete);
    CHECK(data->get_long("a.third") == -3);
  }
  SECTION("used ends inside an entry: the rest may be half written") {
    std::string bad = good;
    put32(bad, 8, static_cast<std::int32_t>(b.entry(2) + 8));
    CHECK(parse_perfdata(bad)->get_string("a.text") == "hello");
    CHECK_FALSE(parse_perfdata(bad)->complete);
  }
}

TEST_CASE("perfdata: unknown kinds are skipped, duplicates keep the first", "[perfdata]") {
  Builder b;
  b.add_long("x.before", 7)
      .add("x.double", 'D', 0, std::string(8, '\1'))
      .add("x.long_vector", 'J', 2, std::string(16, '\1'))
      .add_string("x.text", "first")
      .add_string("x.text", "second")
      .add("x.unterminated", 'B', 3, "abc")
      .add_long("x.after", 8);
  const auto data = parse_ok(b.build());
  CHECK(data.get_long("x.before") == 7);
  CHECK(data.get_long("x.after") == 8);
  CHECK_FALSE(data.get_long("x.double"));
  CHECK_FALSE(data.get_long("x.long_vector"));
  CHECK(data.get_string("x.text") == "first");
  CHECK(data.get_string("x.unterminated") == "abc");
}

TEST_CASE("perfdata: find_perfdata_file searches every user directory of the target's /tmp", "[perfdata]") {
  const TempDir dir;
  const fs::path proc = dir.path / "proc";
  const auto tmp_of = [&proc](int pid) { return proc / std::to_string(pid) / "root" / "tmp"; };
  const std::string file = capture("jdk17");
  lockwatch::test::write_file(tmp_of(4242) / "hsperfdata_app" / "7", file);
  lockwatch::test::write_file(tmp_of(4242) / "hsperfdata_app" / "8", "other jvm");
  lockwatch::test::write_file(tmp_of(4242) / "unrelated" / "9", "not hsperfdata");

  const auto found = find_perfdata_file(proc.string(), 4242, 7);
  REQUIRE(found);
  CHECK(*found == (tmp_of(4242) / "hsperfdata_app" / "7").string());
  std::string error;
  const auto data = read_perfdata_file(*found, &error);
  REQUIRE(data);
  CHECK(counters_of(*data).threads_live == 9);

  CHECK_FALSE(find_perfdata_file(proc.string(), 4242, 6));
  CHECK_FALSE(find_perfdata_file(proc.string(), 4242, 9));  // not in an hsperfdata_* directory
  CHECK_FALSE(find_perfdata_file(proc.string(), 4243, 7));
  CHECK_FALSE(find_perfdata_file(proc.string(), 0, 7));
  CHECK_FALSE(find_perfdata_file(proc.string(), 4242, -7));
  CHECK_FALSE(find_perfdata_file((dir.path / "missing").string(), 4242, 7));
}

TEST_CASE("perfdata: find_perfdata_file skips symlinks and prefers the newest file", "[perfdata]") {
  const TempDir dir;
  const fs::path proc = dir.path / "proc";
  const fs::path tmp = proc / "10" / "root" / "tmp";
  lockwatch::test::write_file(dir.path / "outside" / "5", "a file outside the target");
  fs::create_directories(tmp / "hsperfdata_links");
  fs::create_symlink(dir.path / "outside" / "5", tmp / "hsperfdata_links" / "5");
  fs::create_directory_symlink(dir.path / "outside", tmp / "hsperfdata_dirlink");
  fs::create_directories(tmp / "hsperfdata_dir" / "5");  // a directory, not a file
  CHECK_FALSE(find_perfdata_file(proc.string(), 10, 5));

  lockwatch::test::write_file(tmp / "hsperfdata_old" / "5", "stale");
  lockwatch::test::write_file(tmp / "hsperfdata_new" / "5", "current");
  lockwatch::test::write_file(tmp / "hsperfdata_older" / "5", "staler");
  const auto now = fs::file_time_type::clock::now();
  fs::last_write_time(tmp / "hsperfdata_old" / "5", now - std::chrono::hours(1));
  fs::last_write_time(tmp / "hsperfdata_older" / "5", now - std::chrono::hours(2));
  fs::last_write_time(tmp / "hsperfdata_new" / "5", now);
  CHECK(find_perfdata_file(proc.string(), 10, 5) == (tmp / "hsperfdata_new" / "5").string());
}

// A /tmp's listing is kept while the directory is unchanged (every process of a container
// shares one): a user directory added later, or a file added inside one, is still found.
TEST_CASE("perfdata: a kept /tmp listing never hides a user directory added later", "[perfdata]") {
  const TempDir dir;
  const fs::path proc = dir.path / "proc";
  const fs::path tmp = proc / "20" / "root" / "tmp";
  lockwatch::test::write_file(tmp / "hsperfdata_app" / "5", "first jvm");
  for (int i = 0; i < 50; ++i) fs::create_directories(tmp / ("noise-" + std::to_string(i)));
  // Only a listing made a while after the directory last changed is kept (a change within
  // the same timestamp tick could be missed otherwise): wait that long once.
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));
  CHECK(find_perfdata_file(proc.string(), 20, 5) == (tmp / "hsperfdata_app" / "5").string());
  CHECK(find_perfdata_file(proc.string(), 20, 5) == (tmp / "hsperfdata_app" / "5").string());  // from the kept listing
  CHECK_FALSE(find_perfdata_file(proc.string(), 20, 6));

  lockwatch::test::write_file(tmp / "hsperfdata_app" / "6", "second jvm, same user");
  CHECK(find_perfdata_file(proc.string(), 20, 6) == (tmp / "hsperfdata_app" / "6").string());
  lockwatch::test::write_file(tmp / "hsperfdata_other" / "7", "third jvm, a new user's directory");
  CHECK(find_perfdata_file(proc.string(), 20, 7) == (tmp / "hsperfdata_other" / "7").string());
  fs::remove_all(tmp / "hsperfdata_app");
  CHECK_FALSE(find_perfdata_file(proc.string(), 20, 5));
}

// A tick reads the file it opened at the first (the daemon keeps it open between ticks): what
// the JVM writes later is read, a directory swapped for a symlink later is not followed, and a
// file cut short is an error - the daemon's cue to open it again, through the checks again.
TEST_CASE("perfdata: a target's file held open reads what is written later, never what is planted", "[perfdata][security]") {
  const TempDir dir;
  const fs::path proc = dir.path / "proc";
  const fs::path tmp = proc / "30" / "root" / "tmp";
  const fs::path file = tmp / "hsperfdata_app" / "9";
  lockwatch::test::write_file(file, capture("jdk17"));
  std::string error;
  const auto held = TargetPerfDataFile::open(proc.string(), 30, "tmp/hsperfdata_app/9", &error);
  INFO(error);
  REQUIRE(held);
  const auto first = held->read(&error, PerfDataKeep::counters);
  REQUIRE(first);
  CHECK_THAT(counters_of(*first).vm_version, Catch::StartsWith("17"));

  lockwatch::test::write_file(file, capture("jdk25"));  // the same file (inode), new contents
  const auto second = held->read(&error, PerfDataKeep::counters);
  REQUIRE(second);
  CHECK_THAT(counters_of(*second).vm_version, Catch::StartsWith("25"));

  // The directory swapped for a link to a planted file: the held file is still the JVM's own,
  // and opening by the path again is refused.
  fs::rename(tmp / "hsperfdata_app", tmp / "moved");
  lockwatch::test::write_file(dir.path / "outside" / "9", capture("jdk17"));
  fs::create_directory_symlink(dir.path / "outside", tmp / "hsperfdata_app");
  const auto third = held->read(&error, PerfDataKeep::counters);
  REQUIRE(third);
  CHECK_THAT(counters_of(*third).vm_version, Catch::StartsWith("25"));
  error.clear();
  CHECK_FALSE(TargetPerfDataFile::open(proc.string(), 30, "tmp/hsperfdata_app/9", &error));
  CHECK_THAT(error, Catch::Contains("refused"));

  fs::resize_file(tmp / "moved" / "9", 100);  // cut short: inside the prologue's `used`
  error.clear();
  const auto cut = held->read(&error, PerfDataKeep::counters);
  CHECK_FALSE((cut && cut->complete));
  CHECK_FALSE(error.empty());
}

TEST_CASE("perfdata: read_perfdata_file names the path and the reason", "[perfdata]") {
  const TempDir dir;
  const auto error_for = [](const fs::path& path) {
    std::string error;
    CHECK_FALSE(read_perfdata_file(path.string(), &error));
    CHECK(error.find(path.string()) != std::string::npos);
    return error;
  };
  CHECK_THAT(error_for(dir.path / "missing"), Catch::Contains("No such file or directory"));
  CHECK_THAT(error_for(dir.path), Catch::Contains("not a regular file"));
  const fs::path fifo = dir.path / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THAT(error_for(fifo), Catch::Contains("not a regular file"));  // and no blocking open
  lockwatch::test::write_file(dir.path / "real", capture("jdk25"));
  fs::create_symlink(dir.path / "real", dir.path / "link");
  CHECK_THAT(error_for(dir.path / "link"), Catch::Contains("cannot open"));
  lockwatch::test::write_file(dir.path / "text", "not perf data at all, but long enough to have a prologue");
  CHECK_THAT(error_for(dir.path / "text"), Catch::Contains("bad magic"));
  lockwatch::test::write_file(dir.path / "empty", "");
  CHECK_THAT(error_for(dir.path / "empty"), Catch::Contains("too short"));
  CHECK(read_perfdata_file((dir.path / "real").string()));
}

// A file is read as far as its prologue's `used` says the JVM wrote (what the entry walk
// reads), not to its end: a JVM's reserved space past it is not copied, and a file grown past
// the size bound behind its entries (a hostile target can append) costs no more to read.
TEST_CASE("perfdata: read_perfdata_file reads what the prologue says was written", "[perfdata]") {
  const TempDir dir;
  for (const char* jdk : {"jdk17", "jdk25"}) {
    INFO(jdk);
    const auto bytes = capture(jdk);
    const auto all = parse_ok(bytes);
    const auto grown = dir.path / (std::string(jdk) + ".grown");
    lockwatch::test::write_file(grown, bytes + std::string(std::size_t{17} << 20, '\xff'));  // past the 16 MiB bound
    std::string error;
    const auto read = read_perfdata_file(grown.string(), &error);
    REQUIRE(read);
    CHECK(error.empty());
    CHECK(read->complete);
    CHECK(read->num_entries == all.num_entries);
    CHECK(read->get_long("sun.rt.safepointTime") == all.get_long("sun.rt.safepointTime"));
    CHECK(same_counters(counters_of(*read), counters_of(all)));
  }
  // A prologue that says nothing usable: read to the end, and then the bound holds.
  auto damaged = capture("jdk17");
  damaged[0] = 'X';
  lockwatch::test::write_file(dir.path / "damaged", damaged + std::string(std::size_t{17} << 20, '\xff'));
  std::string error;
  CHECK_FALSE(read_perfdata_file((dir.path / "damaged").string(), &error));
  CHECK_THAT(error, Catch::Contains("too large"));
}

TEST_CASE("perfdata: another user's unreadable file gives permission denied", "[perfdata]") {
  if (::geteuid() == 0) {
    lockwatch::test::skip("running as root: file permissions are not enforced");
    return;
  }
  const TempDir dir;
  const fs::path file = dir.path / "1234";
  lockwatch::test::write_file(file, capture("jdk17"));
  fs::permissions(file, fs::perms::none);
  std::string error;
  CHECK_FALSE(read_perfdata_file(file.string(), &error));
  CHECK_THAT(error, Catch::Contains(file.string()) && Catch::Contains("Permission denied"));
}

namespace {

// A JVM that starts `n` parked threads and prints READY.
constexpr std::string_view kLiveSource = R"(import java.util.concurrent.locks.LockSupport;
public class PerfLive {
  public static void main(String[] args) throws Exception {
    for (int i = 0; i < Integer.parseInt(args[0]); i++) {
      new Thread(() -> { for (;;) LockSupport.park(); }, "perf-live-" + i).start();
    }
    System.out.println("READY");
    System.out.flush();
    Thread.sleep(600_000);
  }
}
)";

// Compiles PerfLive once per test run; empty if no javac.
const fs::path& live_classes() {
  static const TempDir dir;
  static const bool compiled = [] {
    lockwatch::test::write_file(dir.path / "PerfLive.java", kLiveSource);
    const std::string source = (dir.path / "PerfLive.java").string();
    const auto r = lockwatch::test::run_command({"javac", "-d", dir.path.string(), source}, std::chrono::seconds(120));
    if (r.exit_code != 0) WARN("javac failed: " << r.err);
    return r.exit_code == 0;
  }();
  static const fs::path none;
  return compiled ? dir.path : none;
}

// Starts PerfLive with 4 threads and reads its hsperfdata file the way the sidecar does.
JvmCounters live_counters(const std::string& java, const std::vector<std::string>& options) {
  REQUIRE_FALSE(live_classes().empty());
  std::vector<std::string> argv{java};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.insert(argv.end(), {"-cp", live_classes().string(), "PerfLive", "4"});
  lockwatch::test::Child jvm(argv);
  REQUIRE(jvm.wait_for_line("READY", std::chrono::seconds(60)));
  const auto path = find_perfdata_file("/proc", jvm.pid(), jvm.pid());
  REQUIRE(path);
  CHECK_THAT(*path, Catch::StartsWith("/proc/" + std::to_string(jvm.pid()) + "/root/tmp/hsperfdata_"));
  std::string error;
  const auto data = read_perfdata_file(*path, &error);
  // SIGTERM lets the JVM delete its file; the Child's SIGKILL would leave it in /tmp.
  ::kill(jvm.pid(), SIGTERM);
  CHECK_FALSE(jvm.wait_for_line("never printed", std::chrono::seconds(30)));  // false at EOF
  INFO(error);
  REQUIRE(data);
  CHECK(data->complete);
  CHECK(data->accessible);
  return counters_of(*data);
}

std::string temurin25_java() {
  const char* home = std::getenv("LOCKWATCH_JDK25_HOME");
  return std::string(home != nullptr ? home : "/usr/lib/jvm/temurin-25-jdk-amd64") + "/bin/java";
}

}  // namespace

TEST_CASE("perfdata: a live JVM's file, found through /proc/<pid>/root", "[perfdata][live]") {
  const auto c = live_counters("java", {});
  CHECK(c.threads_live >= 5);  // main and 4 parked threads, plus the JVM's own
  CHECK(c.threads_daemon >= 1);
  CHECK(c.attach_supported == true);
  CHECK(c.frequency > 0);
  CHECK(c.safepoints >= 0);
  CHECK_FALSE(c.vm_version.empty());
}

TEST_CASE("perfdata: a live JVM with -XX:+DisableAttachMechanism", "[perfdata][live]") {
  const auto c = live_counters("java", {"-XX:+DisableAttachMechanism"});
  CHECK(c.threads_live >= 5);
  CHECK(c.attach_supported == false);
}

TEST_CASE("perfdata: a live Temurin 25 JVM", "[perfdata][live]") {
  if (!fs::exists(temurin25_java())) {
    lockwatch::test::skip("no JDK 25 at " + temurin25_java());
    return;
  }
  const auto enabled = live_counters(temurin25_java(), {});
  CHECK(enabled.threads_live >= 5);
  CHECK(enabled.attach_supported == true);
  CHECK_THAT(enabled.vm_version, Catch::StartsWith("25"));
  CHECK(live_counters(temurin25_java(), {"-XX:+DisableAttachMechanism"}).attach_supported == false);
}

TEST_CASE("perfdata: GC collections summed over the collectors (the GC epoch of a sample)", "[perfdata][lock_time]") {
  for (const char* jdk : {"jdk17", "jdk25"}) {
    const auto data = parse_ok(capture(jdk));
    std::int64_t sum = 0;
    for (const char* name : {"sun.gc.collector.0.invocations", "sun.gc.collector.1.invocations",
                             "sun.gc.collector.2.invocations", "sun.gc.collector.3.invocations"})
      sum += data.get_long(name).value_or(0);
    INFO(jdk);
    const auto c = counters_of(data);
    REQUIRE(c.gc_collections);
    CHECK(*c.gc_collections == sum);
    CHECK(*c.gc_collections >= 1);  // the capture ran System.gc() (sun.gc.lastCause)
  }
  CHECK_FALSE(counters_of(PerfData{}).gc_collections);  // no counters published: no epoch
}
