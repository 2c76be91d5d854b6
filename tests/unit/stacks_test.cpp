// SPDX-License-Identifier: Apache-2.0
// Collapsed stacks from the parsed model: the same for Thread.print text and JSON dumps.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "lockwatch/analysis/stacks.hpp"
#include "lockwatch/parser/dump_parser.hpp"
#include "test_support.hpp"

using namespace lockwatch;

namespace {

/// Sums the counts of "stack count" lines; every line must start with `root`.
std::uint64_t total_of(const std::string& out, const std::string& root, std::size_t& lines) {
  std::uint64_t total = 0;
  lines = 0;
  for (std::size_t at = 0; at < out.size(); at = out.find('\n', at) + 1, ++lines) {
    const auto line = out.substr(at, out.find('\n', at) - at);
    CHECK(line.starts_with(root));
    total += std::stoull(line.substr(line.rfind(' ') + 1));
  }
  return total;
}

std::size_t threads_in(const model::ThreadDump& dump, model::ThreadState state) {
  std::size_t n = 0;
  for (const auto& t : dump.threads) n += t.state == state && !t.frames.empty() ? 1u : 0u;
  return n;
}

// collapse() as first written: a string per thread, sorted, equal neighbours merged. The
// grouped version must give exactly this.
std::vector<analysis::CollapsedStack> collapse_per_thread(const model::ThreadDump& dump) {
  std::vector<analysis::CollapsedStack> all;
  for (const auto& t : dump.threads) {
    if (t.frames.empty()) continue;
    std::string stack;
    for (auto it = t.frames.rbegin(); it != t.frames.rend(); ++it) {
      if (!stack.empty()) stack.push_back(';');
      for (char c : model::frame_method(it->text)) stack.push_back(c == ';' || c == ' ' ? '_' : c);
    }
    all.push_back({stack, t.state, 1});
  }
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return std::tie(a.stack, a.state) < std::tie(b.stack, b.state); });
  std::vector<analysis::CollapsedStack> merged;
  for (auto& s : all) {
    if (!merged.empty() && merged.back().stack == s.stack && merged.back().state == s.state) ++merged.back().threads;
    else merged.push_back(std::move(s));
  }
  return merged;
}

bool same_lines(const std::vector<analysis::CollapsedStack>& a, const std::vector<analysis::CollapsedStack>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
    return x.stack == y.stack && x.state == y.state && x.threads == y.threads;
  });
}

}  // namespace

TEST_CASE("stacks: BLOCKED threads of a jstack dump, root first, counted over samples", "[analysis][stacks]") {
  const auto dump = test::parse_one(test::read_file(test::captured_dir() / "jdk17" / "MonitorContention" / "dump-1.txt"));
  const auto blocked = threads_in(dump, model::ThreadState::blocked);
  REQUIRE(blocked > 0);
  analysis::StackHistory h;
  h.add(1, dump);
  h.add(2, dump);
  std::size_t lines = 0;
  CHECK(total_of(h.collapsed("BLOCKED"), "java.lang.Thread.run;", lines) == 2 * blocked);
  CHECK(lines >= 1);
  CHECK(total_of(h.collapsed("BLOCKED", 1), "java.lang.Thread.run;", lines) == blocked);
  CHECK(h.collapsed("NO_SUCH_STATE").empty());
  // Every thread with frames, whatever its state, when no state is asked for.
  std::size_t with_frames = 0;
  for (const auto& t : dump.threads) with_frames += t.frames.empty() ? 0u : 1u;
  CHECK(total_of(h.collapsed(""), "", lines) == 2 * with_frames);
}

TEST_CASE("stacks: a Thread.dump_to_file JSON dump gives its virtual threads' stacks too", "[analysis][stacks]") {
  const auto dump = test::parse_one(test::read_file(test::captured_dir() / "jdk25" / "VirtualThreads" / "threads.json"));
  REQUIRE(dump.format == model::DumpFormat::dump_to_file_json);
  std::size_t virtual_with_frames = 0;
  for (const auto& t : dump.threads) virtual_with_frames += t.is_virtual && !t.frames.empty() ? 1u : 0u;
  REQUIRE(virtual_with_frames > 0);
  analysis::StackHistory h;
  h.add(7, dump);
  const auto out = h.collapsed("");
  CHECK(out.find("java.lang.VirtualThread.run;") != std::string::npos);
  std::size_t lines = 0;
  std::size_t with_frames = 0;
  for (const auto& t : dump.threads) with_frames += t.frames.empty() ? 0u : 1u;
  CHECK(total_of(out, "", lines) == with_frames);
}

TEST_CASE("stacks: a stack is stored once and freed with the last sample using it", "[analysis][stacks]") {
  const auto a = test::parse_one(test::read_file(test::captured_dir() / "jdk17" / "MonitorContention" / "dump-1.txt"));
  const auto b = test::parse_one(test::read_file(test::captured_dir() / "jdk17" / "LatchWait" / "dump-1.txt"));
  analysis::StackHistory h;
  h.add(1, a);
  const auto alone = h.distinct_stacks();
  h.add(2, a);
  CHECK(h.distinct_stacks() == alone);  // the same stacks again: nothing new stored
  h.add(3, b);
  CHECK(h.distinct_stacks() > alone);
  h.forget_before(3);
  CHECK(h.samples() == 1);
  CHECK(h.collapsed("").find("MonitorContention") == std::string::npos);
  h.forget_before(4);
  CHECK(h.samples() == 0);
  CHECK(h.distinct_stacks() == 0);
  CHECK(h.collapsed("").empty());
}

TEST_CASE("stacks: semicolons and spaces inside a frame cannot break the format", "[analysis][stacks][security]") {
  const auto dump = test::parse_one("Full thread dump X:\n\n\"t\" #1 prio=5 os_prio=0 tid=0x1 nid=0x2 runnable\n"
                                    "   java.lang.Thread.State: RUNNABLE\n\tat a.b;c d.e(F.java:1)\n\tat x.Y.run(Y.java:2)\n\n");
  analysis::StackHistory h;
  h.add(1, dump);
  CHECK(h.collapsed("RUNNABLE") == "x.Y.run;a.b_c_d.e 1\n");
}

TEST_CASE("stacks: grouped collapse gives the per-thread result on every real dump", "[analysis][stacks]") {
  std::size_t dumps = 0;
  for (const auto& dir : {test::corpus_dir(), test::captured_dir()}) {
    for (const auto& file : test::files_below(dir)) {
      for (const auto& dump : lockwatch::parser::parse_dumps(test::read_file(file))) {
        INFO(file.string());
        CHECK(same_lines(analysis::collapse(dump), collapse_per_thread(dump)));
        ++dumps;
      }
    }
  }
  CHECK(dumps > 50);
}

TEST_CASE("stacks: threads apart only in line numbers, or in ';' against '_', make one line", "[analysis][stacks]") {
  const auto thread = [](int id, const char* state, const char* top) {
    return "\"t" + std::to_string(id) + "\" #" + std::to_string(id) + " prio=5 os_prio=0 tid=0x" + std::to_string(id) +
           " nid=0x2 runnable  [0x1]\n   java.lang.Thread.State: " + state + "\n\tat " + top + "\n\tat x.Y.run(Y.java:2)\n\n";
  };
  const auto dump = test::parse_one("Full thread dump X:\n\n" + thread(1, "RUNNABLE", "a.B.c(B.java:10)") +
                                    thread(2, "RUNNABLE", "a.B.c(B.java:11)") + thread(3, "BLOCKED", "a.B.c(B.java:10)") +
                                    thread(4, "RUNNABLE", "a.B;c(B.java:12)") + thread(5, "RUNNABLE", "a.B_c(B.java:13)") +
                                    thread(6, "RUNNABLE", "a.B.c(B.java:10)"));
  const auto lines = analysis::collapse(dump);
  CHECK(same_lines(lines, collapse_per_thread(dump)));
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].stack == "x.Y.run;a.B.c");
  CHECK(lines[0].state == model::ThreadState::runnable);
  CHECK(lines[0].threads == 3);  // lines 10, 11 and 10 again
  CHECK(lines[1].state == model::ThreadState::blocked);
  CHECK(lines[2].stack == "x.Y.run;a.B_c");
  CHECK(lines[2].threads == 2);  // "a.B;c" is written "a.B_c": the same line as the real "a.B_c"
}
