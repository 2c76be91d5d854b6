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

namespace {

// Appends `text` in pieces of `step` bytes (the last one shorter).
store::Ring::Writer written_in_pieces(store::Ring& ring, std::string_view text, std::size_t step) {
  auto writer = ring.begin();
  for (std::size_t at = 0; at < text.size(); at += step) writer.append(text.substr(at, step));
  return writer;
}

}  // namespace

TEST_CASE("ring writer: any split of a real dump keeps the same text and costs the same bytes", "[store][ring]") {
  auto files = real_dumps();
  if (files.empty()) WARN("SKIPPED: no corpus at " << test::corpus_dir());
  if (files.size() > 40) files.resize(40);  // a spread of sources; every split below runs on each
  for (const auto& f : files) {
    INFO(f);
    const auto text = test::read_file(f);
    store::Ring whole({600, std::uint64_t{1} << 40});
    const auto whole_id = whole.add(text, {});
    REQUIRE(whole_id);
    // Splits inside lines, at every byte near the start, and one piece per line's worth.
    for (const std::size_t step : {std::size_t{1}, std::size_t{7}, std::size_t{64}, std::size_t{4093}, text.size() + 1}) {
      INFO("step " << step);
      store::Ring streamed({600, std::uint64_t{1} << 40});
      auto writer = written_in_pieces(streamed, text, step);
      CHECK(writer.bytes() == text.size());
      const auto id = streamed.commit(std::move(writer), {});
      REQUIRE(id);
      CHECK(streamed.text(*id) == text);
      CHECK(streamed.bytes() == whole.bytes());
      CHECK(streamed.info(*id)->text_bytes == text.size());
    }
  }
}

TEST_CASE("ring writer: the split falls at every byte of a small dump without changing it", "[store][ring]") {
  const std::string text =
      "Full thread dump x:\n\n\"main\" #1 prio=5 cpu=1.25ms elapsed=3.50s tid=0x1 nid=0x2 runnable\n"
      "   java.lang.Thread.State: RUNNABLE\n\tat A.b(A.java:1)\n\r\n\"t\" #2 cpu=0.5ms\nno newline at the end";
  store::Ring whole;
  const auto expected = *whole.text(*whole.add(text, {}));
  for (std::size_t cut = 0; cut <= text.size(); ++cut) {
    INFO("cut " << cut);
    store::Ring ring;
    auto writer = ring.begin();
    writer.append(std::string_view(text).substr(0, cut));
    writer.append(std::string_view(text).substr(cut));
    const auto id = ring.commit(std::move(writer), {});
    REQUIRE(id);
    CHECK(ring.text(*id) == expected);
    CHECK(ring.bytes() == whole.bytes());
  }
}

TEST_CASE("ring writer: an abandoned sample leaves the ring as it was", "[store][ring]") {
  const auto a = test::read_file(test::captured_dir() / "jdk17" / "MonitorContention" / "dump-1.txt");
  const auto b = test::read_file(test::captured_dir() / "jdk25" / "ReentrantLockPool" / "dump-2.txt");
  store::Ring ring({600, std::uint64_t{1} << 40});
  const auto kept = *ring.add(a, {});
  const auto bytes_before = ring.bytes();
  SECTION("destroyed uncommitted") {
    auto writer = written_in_pieces(ring, b, 1000);
    CHECK(ring.bytes() > bytes_before);  // it holds pool entries while it is open
  }
  SECTION("abandoned explicitly, then committed: refused") {
    auto writer = written_in_pieces(ring, b, 1000);
    writer.abandon();
    CHECK(writer.given_up());
    CHECK_FALSE(writer.append("more\n"));
    CHECK_FALSE(ring.commit(std::move(writer), {}));
    CHECK(ring.refused() == 1);
  }
  SECTION("open while the ring evicts: the eviction frees the old sample only") {
    auto writer = written_in_pieces(ring, b.substr(0, b.size() / 2), 1000);
    ring.add(with_times(a, 5, 5), {});
    ring.set_limits({1, std::uint64_t{1} << 40});  // evicts the first sample, the writer's lines stay
    CHECK(ring.size() == 1);
    CHECK_FALSE(ring.text(kept));
    writer.append(b.substr(b.size() / 2));
    const auto id = ring.commit(std::move(writer), {});
    REQUIRE(id);
    CHECK(ring.text(*id) == b);
    store::Ring fresh({600, std::uint64_t{1} << 40});
    fresh.add(b, {});
    CHECK(ring.bytes() == fresh.bytes());
    return;
  }
  CHECK(ring.size() == 1);
  CHECK(ring.bytes() == bytes_before);
  CHECK(ring.text(kept) == a);
}

TEST_CASE("ring writer: gives up where add() does, and releases what it took", "[store][ring][security]") {
  const std::uint64_t limit = 256 * 1024;
  std::string huge = "Full thread dump x:\n\n";
  for (int i = 0; i < 40'000; ++i) huge += "\"t" + std::to_string(i) + "\" #" + std::to_string(i) + " prio=5\n\n";
  store::Ring ring({600, limit});
  const auto small = test::read_file(real_dumps().front());
  REQUIRE(ring.add(small, {}));
  const auto bytes_before = ring.bytes();
  auto writer = ring.begin();
  std::size_t appended = 0;
  while (appended < huge.size() && writer.append(std::string_view(huge).substr(appended, 4096))) appended += 4096;
  CHECK(writer.given_up());
  CHECK(appended < huge.size());             // it stopped before the end of the text
  CHECK(ring.bytes() == bytes_before);       // and holds nothing from the moment it gave up
  CHECK_FALSE(ring.commit(std::move(writer), {}));
  CHECK(ring.refused() == 1);
  // The same text whole is refused as well, and a line longer than the bound is not carried.
  CHECK_FALSE(ring.add(huge, {}));
  auto endless = ring.begin();
  const std::string piece(64 * 1024, 'x');
  int pieces = 0;
  while (endless.append(piece) && pieces < 100) ++pieces;
  CHECK(pieces <= static_cast<int>(limit / piece.size()));
  CHECK(ring.bytes() == bytes_before);
  CHECK(ring.text(ring.list().front().id) == small);
}

TEST_CASE("ring writer: a writer of another ring is refused", "[store][ring]") {
  store::Ring a, b;
  auto writer = a.begin();
  writer.append("Full thread dump x:\n");
  CHECK_THROWS_AS(b.commit(std::move(writer), {}), std::invalid_argument);
}

namespace {

// A dump's thread blocks (from a '"' line to its blank line), and the text around them.
std::vector<std::string> blocks_of(const std::string& text, std::string& head) {
  std::vector<std::string> blocks;
  std::size_t at = text.find("\n\"");
  head = text.substr(0, at == std::string::npos ? text.size() : at + 1);
  for (at = head.size(); at < text.size();) {
    auto end = text.find("\n\n", at);
    end = end == std::string::npos ? text.size() : end + 2;
    blocks.push_back(text.substr(at, end - at));
    at = end;
  }
  return blocks;
}

}  // namespace

// Each thread's block is compared with the one its header had in the last sample: equal
// blocks take the remembered shape, a block that differs anywhere (a frame, its length, the
// text's end inside it) is interned line by line. Whatever happens, every text comes back.
TEST_CASE("ring: blocks compared with the last sample's come back byte for byte", "[store][ring]") {
  const auto dump = test::read_file(test::captured_dir() / "jdk17" / "ReentrantLockPool" / "dump-1.txt");
  std::string head;
  auto blocks = blocks_of(dump, head);
  REQUIRE(blocks.size() > 10);
  std::vector<std::string> texts;
  texts.push_back(dump);
  texts.push_back(with_times(dump, 7, 7));  // every block the same but its numbers
  std::vector<std::size_t> with_frames;  // blocks with two frames or more
  for (std::size_t i = 0; i < blocks.size(); ++i)
    if (blocks[i].find("\tat ", blocks[i].find("\tat ") + 1) != std::string::npos) with_frames.push_back(i);
  REQUIRE(with_frames.size() >= 6);
  auto changed = blocks;
  auto& longer = changed[with_frames[0]];
  longer.insert(longer.find("\tat "), "\tat Extra.frame(Extra.java:1)\n");  // one frame more
  auto& shorter = changed[with_frames[1]];
  shorter.erase(shorter.rfind("\tat "));  // its last lines gone
  shorter += "\n";
  changed[with_frames[2]] += "\tat After.blank(After.java:1)\n";  // a line after its blank line: a junk block
  std::swap(changed[with_frames[3]], changed[with_frames[4]]);      // two threads in the other order
  changed.erase(changed.begin() + static_cast<std::ptrdiff_t>(with_frames[5]));  // a thread gone
  changed.push_back("\"new thread\" #999 prio=5 os_prio=0 cpu=1.00ms elapsed=2.00s tid=0x9 nid=0x9 runnable  [0x0]\n"
                    "   java.lang.Thread.State: RUNNABLE\n\"not a header\" but inside a block\n\n");
  std::string changed_text = head;
  for (const auto& b : changed) changed_text += b;
  texts.push_back(changed_text);
  texts.push_back(changed_text);  // the changed blocks are what it is compared with now
  texts.push_back(changed_text.substr(0, changed_text.size() - 200));  // the text ends inside a block
  texts.push_back(dump);
  for (const std::size_t step : {std::size_t{1}, std::size_t{61}, std::size_t{1} << 20}) {
    INFO("step " << step);
    store::Ring ring({600, std::uint64_t{1} << 40});
    std::vector<std::uint64_t> ids;
    for (const auto& t : texts) {
      auto writer = written_in_pieces(ring, t, step);
      ids.push_back(*ring.commit(std::move(writer), {}));
      if (ids.size() == 1) CHECK(ring.reused_blocks() == 0);
      if (ids.size() == 2) CHECK(ring.reused_blocks() >= with_frames.size());  // the repeat took the fast path
    }
    for (std::size_t i = 0; i < texts.size(); ++i) CHECK(ring.text(ids[i]) == texts[i]);
  }
}

// A thread whose stack changes and changes back (a request thread) differs from its last
// block, but the ring holds that block already: it is found whole, by one hash, and checked
// line by line before it is taken. The same block under another thread's header is not it.
TEST_CASE("ring: a block that changed back to one the ring holds is found whole", "[store][ring]") {
  const auto dump = test::read_file(test::captured_dir() / "jdk17" / "ReentrantLockPool" / "dump-1.txt");
  std::string head;
  auto blocks = blocks_of(dump, head);
  std::vector<std::size_t> with_frames;
  for (std::size_t i = 0; i < blocks.size(); ++i)
    if (blocks[i].find("\tat ", blocks[i].find("\tat ") + 1) != std::string::npos) with_frames.push_back(i);
  REQUIRE(with_frames.size() >= 4);
  auto deeper = blocks;
  for (std::size_t i = 0; i < 4; ++i) {
    auto& b = deeper[with_frames[i]];
    b.insert(b.find("\tat "), "\tat Deeper.call(Deeper.java:" + std::to_string(i) + ")\n");
  }
  std::string deeper_text = head;
  for (const auto& b : deeper) deeper_text += b;
  for (const std::size_t step : {std::size_t{1}, std::size_t{97}, std::size_t{1} << 20}) {
    INFO("step " << step);
    store::Ring ring({600, std::uint64_t{1} << 40});
    const std::vector<std::string> texts{dump, deeper_text, with_times(dump, 3, 3), with_times(deeper_text, 4, 4)};
    std::vector<std::uint64_t> ids;
    std::vector<std::uint64_t> found;
    for (const auto& t : texts) {
      ids.push_back(*ring.commit(written_in_pieces(ring, t, step), {}));
      found.push_back(ring.known_blocks());
    }
    // Blocks that are no thread's (the SMR list, the trailer) are found each time: `others`.
    const auto others = found[1] - found[0];  // the deeper stacks are new the first time
    CHECK(found[2] - found[1] == others + 4);  // back to the first stacks: found
    CHECK(found[3] - found[2] == others + 4);  // and to the deeper ones again
    for (std::size_t i = 0; i < texts.size(); ++i) CHECK(ring.text(ids[i]) == texts[i]);
    // Evicting down to the last sample leaves what that sample alone costs: the known blocks
    // go with their shapes.
    ring.set_limits({1, std::uint64_t{1} << 40});
    store::Ring fresh({1, std::uint64_t{1} << 40});
    fresh.add(texts.back(), {});
    CHECK(ring.bytes() == fresh.bytes());
  }
}

TEST_CASE("ring: two writers open at once, one committing under the other's comparison", "[store][ring]") {
  const auto a = test::read_file(test::captured_dir() / "jdk17" / "MonitorContention" / "dump-1.txt");
  const auto b = test::read_file(test::captured_dir() / "jdk25" / "ReentrantLockPool" / "dump-2.txt");
  store::Ring ring({600, std::uint64_t{1} << 40});
  ring.add(a, {});
  auto slow = ring.begin();
  slow.append(std::string_view(a).substr(0, a.size() / 2));  // comparing with a's blocks
  ring.add(b, {});  // forgets a's blocks: b's are remembered now
  ring.set_limits({1, std::uint64_t{1} << 40});  // and a's sample is evicted
  slow.append(std::string_view(a).substr(a.size() / 2));
  const auto id = ring.commit(std::move(slow), {});
  REQUIRE(id);
  CHECK(ring.text(*id) == a);
  store::Ring fresh({1, std::uint64_t{1} << 40});
  fresh.add(a, {});
  CHECK(ring.bytes() == fresh.bytes());  // nothing of b or of the remembered blocks is left over
}

TEST_CASE("ring: what is remembered for the next sample is one sample's threads, counted", "[store][ring]") {
  const auto a = test::read_file(test::captured_dir() / "jdk17" / "MonitorContention" / "dump-1.txt");
  store::Ring ring({600, std::uint64_t{1} << 40});
  ring.add(a, {});
  const auto one = ring.bytes();
  // 50 samples of a JVM whose threads all get new names each time: none is compared with
  // anything, and what is remembered does not pile up (each sample's own lines do).
  std::uint64_t last = one;
  for (int i = 0; i < 50; ++i) {
    std::string renamed = a;
    for (auto at = renamed.find("\n\""); at != std::string::npos; at = renamed.find("\n\"", at + 2))
      renamed.insert(at + 2, "r" + std::to_string(i) + "-");
    ring.add(renamed, {});
    CHECK(ring.bytes() - last < a.size());
    last = ring.bytes();
  }
  ring.set_limits({1, std::uint64_t{1} << 40});
  store::Ring fresh({1, std::uint64_t{1} << 40});
  std::string renamed = a;
  for (auto at = renamed.find("\n\""); at != std::string::npos; at = renamed.find("\n\"", at + 2)) renamed.insert(at + 2, "r49-");
  fresh.add(renamed, {});
  CHECK(ring.bytes() == fresh.bytes());
}

// A hostile dump may list one thread twice, with different stacks: what is remembered for its
// header is then the second block, and the next sample is compared with that.
TEST_CASE("ring: a thread listed twice in one sample, then again", "[store][ring][security]") {
  const auto dump = test::read_file(test::captured_dir() / "jdk17" / "MonitorContention" / "dump-1.txt");
  std::string head;
  std::vector<std::string> threads;  // the blocks that are a thread with a stack
  for (const auto& b : blocks_of(dump, head))
    if (b.starts_with('"') && b.find("\tat ") != std::string::npos) threads.push_back(b);
  REQUIRE(threads.size() > 2);
  const auto& one = threads[0];
  const auto& two = threads[1];
  auto other = one;  // the same header, another stack
  other.insert(other.find('\n') + 1, "   java.lang.Thread.State: RUNNABLE\n");
  const std::string twice = head + one + two + one;
  const std::string changed = head + one + other + two;
  const std::vector<std::string> texts{twice, changed, twice, changed, head + other};
  store::Ring ring({600, std::uint64_t{1} << 40});
  std::vector<std::uint64_t> ids;
  for (const auto& t : texts) ids.push_back(*ring.add(t, {}));
  for (std::size_t i = 0; i < texts.size(); ++i) CHECK(ring.text(ids[i]) == texts[i]);
  ring.set_limits({1, std::uint64_t{1} << 40});
  store::Ring fresh({1, std::uint64_t{1} << 40});
  fresh.add(texts.back(), {});
  CHECK(ring.bytes() == fresh.bytes());
}

// Found by the ring's fuzzer: a sample whose text ends in a thread's header line, without its
// '\n', began comparing that thread's block with its last one and never let the comparison's
// references go - the remembered body and shape outlived every sample that used them.
TEST_CASE("ring: a sample that ends in a header line without its newline holds nothing after it goes", "[store][ring]") {
  const auto dump = test::read_file(test::captured_dir() / "jdk17" / "MonitorContention" / "dump-1.txt");
  std::string head;
  std::vector<std::string> threads;
  for (const auto& b : blocks_of(dump, head))
    if (b.starts_with('"') && b.find("\tat ") != std::string::npos) threads.push_back(b);
  REQUIRE(threads.size() > 1);
  const auto header = threads[0].substr(0, threads[0].find('\n'));  // no '\n'
  const std::vector<std::string> texts{head + threads[0] + threads[1], head + header, head + threads[1]};
  for (const bool streamed : {false, true}) {
    INFO((streamed ? "streamed in 7-byte chunks" : "added whole"));
    store::Ring ring({600, std::uint64_t{1} << 40});
    std::vector<std::uint64_t> ids;
    for (const auto& t : texts) {
      if (!streamed) {
        ids.push_back(*ring.add(t, {}));
        continue;
      }
      auto writer = ring.begin();
      for (std::size_t at = 0; at < t.size(); at += 7) writer.append(std::string_view(t).substr(at, 7));
      ids.push_back(*ring.commit(std::move(writer), {}));
    }
    for (std::size_t i = 0; i < texts.size(); ++i) CHECK(ring.text(ids[i]) == texts[i]);
    ring.set_limits({1, std::uint64_t{1} << 40});
    store::Ring fresh({1, std::uint64_t{1} << 40});
    fresh.add(texts.back(), {});
    CHECK(ring.bytes() == fresh.bytes());
  }
}
