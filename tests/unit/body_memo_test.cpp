// SPDX-License-Identifier: Apache-2.0
// The analysis works out what a thread's body alone decides once per parsed body
// (ThreadInfo::body_id), and remembers some of it from one sample to the next. A target's
// samples parsed with a BodyCache must give exactly what the same samples parsed without one
// give (every body_id 0: everything worked out per thread), sample after sample.
#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "lockwatch/analysis/holder_inference.hpp"
#include "lockwatch/analysis/lock_graph.hpp"
#include "lockwatch/analysis/stacks.hpp"
#include "lockwatch/parser/body_cache.hpp"
#include "lockwatch/parser/dump_parser.hpp"
#include "test_support.hpp"

using namespace lockwatch;

namespace {

// One target's successive samples: every captured JDK 17 dump, scenario after scenario
// (dump-1, dump-2, dump-3, then the other form). Within a scenario most bodies come back;
// from one scenario to the next most change.
std::vector<std::string> sample_texts() {
  std::vector<std::string> texts;
  for (const auto& file : test::files_below(test::captured_dir() / "jdk17")) texts.push_back(test::read_file(file));
  return texts;
}

model::ThreadDump parse_sample(std::string_view text, std::shared_ptr<parser::BodyCache> bodies) {
  parser::DumpParser p({}, std::move(bodies));
  p.feed(text);
  p.finish();
  auto dumps = p.take_dumps();
  REQUIRE(dumps.size() == 1);
  return std::move(dumps.front());
}

// The same samples parsed twice: with the bodies of the sample before, and without.
struct Samples {
  std::vector<model::ThreadDump> cached;
  std::vector<model::ThreadDump> plain;
};

Samples samples() {
  Samples s;
  auto bodies = std::make_shared<parser::BodyCache>();
  for (const auto& text : sample_texts()) {
    s.cached.push_back(parse_sample(text, bodies));
    s.plain.push_back(parse_sample(text, nullptr));
  }
  return s;
}

std::string opt(const std::optional<std::uint64_t>& v) { return v ? std::to_string(*v) : "-"; }
std::string opt(const std::optional<std::uint32_t>& v) { return v ? std::to_string(*v) : "-"; }

// Everything a lock graph says, as text: two graphs that print the same are the same.
std::string describe(const analysis::LockGraph& g) {
  std::ostringstream out;
  for (const auto& w : g.waits)
    out << "wait " << w.thread << ' ' << analysis::to_string(w.kind) << ' ' << opt(w.address) << ' ' << w.lock_class << ' '
        << w.site << ' ' << opt(w.holder) << ' ' << opt(w.held) << '\n';
  for (const auto& h : g.held)
    out << "held " << h.thread << ' ' << analysis::to_string(h.kind) << ' ' << h.address << ' ' << h.lock_class << ' ' << h.site
        << ' ' << h.busy_at << '\n';
  for (const auto& c : g.deadlocks) {
    out << "cycle " << c.found_in_graph << c.reported_by_jvm;
    for (auto t : c.threads) out << ' ' << t;
    for (auto m : c.missing) out << " missing " << m;
    for (auto k : c.kinds) out << ' ' << analysis::to_string(k);
    out << '\n';
  }
  return out.str();
}

std::string describe(const std::vector<analysis::InferredHolder>& inferred) {
  std::ostringstream out;
  for (const auto& h : inferred) out << h.wait << ' ' << h.thread << ' ' << h.site << ' ' << h.busy_at << '\n';
  return out.str();
}

// What a StackHistory shows: every state, the newest sample alone, and the table's size.
std::string describe(const analysis::StackHistory& h) {
  std::string out = h.collapsed("") + "--\n" + h.collapsed("", 1) + "--\n" + h.collapsed("BLOCKED") + "--\n" +
                    h.collapsed("WAITING", 2);
  return out + "samples " + std::to_string(h.samples()) + " stacks " + std::to_string(h.distinct_stacks()) + "\n";
}

}  // namespace

TEST_CASE("body memo: the samples share bodies within a dump, keep some and change others", "[analysis][body]") {
  const auto s = samples();
  REQUIRE(s.cached.size() >= 20);
  std::size_t shared_in_dump = 0, kept = 0, changed = 0;
  for (std::size_t i = 0; i < s.cached.size(); ++i) {
    std::map<std::uint64_t, std::size_t> threads_of_body;
    for (const auto& t : s.cached[i].threads) {
      CHECK(s.plain[i].threads.size() == s.cached[i].threads.size());
      if (t.body_id != 0) ++threads_of_body[t.body_id];
    }
    for (const auto& [body, n] : threads_of_body) shared_in_dump += n > 1 ? 1 : 0;
    for (const auto& t : s.plain[i].threads) CHECK(t.body_id == 0);
    if (i == 0) continue;
    std::map<std::uint64_t, std::uint64_t> before;  // java id -> body id in the sample before
    for (const auto& t : s.cached[i - 1].threads)
      if (t.java_id) before[*t.java_id] = t.body_id;
    for (const auto& t : s.cached[i].threads) {
      auto it = t.java_id ? before.find(*t.java_id) : before.end();
      if (it == before.end() || it->second == 0 || t.body_id == 0) continue;
      (it->second == t.body_id ? kept : changed) += 1;
    }
  }
  // The tests below cover every path only if all three happen.
  CHECK(shared_in_dump > 10);
  CHECK(kept > 100);
  CHECK(changed > 10);
}

TEST_CASE("body memo: lock graphs and inferred holders of shared bodies are the per-thread ones", "[analysis][body][graph]") {
  const auto s = samples();
  std::size_t waits = 0, held = 0, inferred = 0;
  for (std::size_t i = 0; i < s.cached.size(); ++i) {
    INFO("sample " << i);
    const auto cached = analysis::build_lock_graph(s.cached[i]);
    const auto plain = analysis::build_lock_graph(s.plain[i]);
    CHECK(describe(cached) == describe(plain));
    const auto cached_inferred = analysis::infer_juc_holders(s.cached[i], cached);
    CHECK(describe(cached_inferred) == describe(analysis::infer_juc_holders(s.plain[i], plain)));
    waits += cached.waits.size(), held += cached.held.size(), inferred += cached_inferred.size();
  }
  CHECK(waits > 50);
  CHECK(held > 20);
  CHECK(inferred > 0);
}

TEST_CASE("body memo: collapse groups by body as it does by text", "[analysis][body][stacks]") {
  const auto s = samples();
  for (std::size_t i = 0; i < s.cached.size(); ++i) {
    INFO("sample " << i);
    const auto cached = analysis::collapse(s.cached[i]);
    const auto plain = analysis::collapse(s.plain[i]);
    REQUIRE(cached.size() == plain.size());
    for (std::size_t k = 0; k < cached.size(); ++k) {
      CHECK(cached[k].stack == plain[k].stack);
      CHECK(cached[k].state == plain[k].state);
      CHECK(cached[k].threads == plain[k].threads);
    }
  }
}

TEST_CASE("body memo: a stack history fed bodies gives the per-thread history, sample after sample", "[analysis][body][stacks]") {
  const auto s = samples();
  analysis::StackHistory cached, plain;
  for (std::size_t i = 0; i < s.cached.size(); ++i) {
    INFO("sample " << i);
    cached.add(i, s.cached[i]);
    plain.add(i, s.plain[i]);
    // A window of three samples, as the ring evicts: stacks and remembered bodies go with them.
    cached.forget_before(i >= 2 ? i - 2 : 0);
    plain.forget_before(i >= 2 ? i - 2 : 0);
    CHECK(describe(cached) == describe(plain));
    CHECK(plain.remembered_bodies() == 0);
    // Only the newest sample's bodies are remembered.
    std::set<std::uint64_t> bodies;
    for (const auto& t : s.cached[i].threads)
      if (t.body_id != 0 && !t.frames.empty()) bodies.insert(t.body_id);
    CHECK(cached.remembered_bodies() == bodies.size());
  }
  CHECK(cached.remembered_bodies() > 0);
  cached.forget_before(s.cached.size());
  CHECK(cached.remembered_bodies() == 0);
  CHECK(cached.distinct_stacks() == 0);
  // Emptied, it starts again from nothing: the same as a fresh history.
  analysis::StackHistory fresh;
  cached.add(100, s.cached.back());
  fresh.add(100, s.plain.back());
  CHECK(describe(cached) == describe(fresh));
}

TEST_CASE("body memo: a body that comes back after a sample without it is worked out again", "[analysis][body][stacks]") {
  // A, B, A with one cache: A's bodies are no longer remembered when it returns (B's are), yet
  // the parser may still hand out A's ids for threads whose bytes match; either way the
  // history must match the per-thread one.
  const auto texts = sample_texts();
  REQUIRE(texts.size() >= 8);
  auto bodies = std::make_shared<parser::BodyCache>();
  analysis::StackHistory cached, plain;
  std::uint64_t id = 0;
  for (const std::size_t k : {std::size_t{0}, std::size_t{4}, std::size_t{0}, std::size_t{1}, std::size_t{1}, std::size_t{5}, std::size_t{0}}) {
    INFO("file " << k);
    const auto with = parse_sample(texts[k], bodies);
    const auto without = parse_sample(texts[k], nullptr);
    cached.add(id, with);
    plain.add(id, without);
    ++id;
    CHECK(describe(cached) == describe(plain));
  }
}
