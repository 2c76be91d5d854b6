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

#include "lockwatch/analysis/correlator.hpp"
#include "lockwatch/analysis/holder_inference.hpp"
#include "lockwatch/analysis/lock_graph.hpp"
#include "lockwatch/analysis/lock_time.hpp"
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

std::string text(const analysis::LockKey& k) {
  return std::string(analysis::to_string(k.kind)) + "|" + k.lock_class + "|" + k.site;
}

std::string text(const analysis::ResolutionCounts& r) {
  return std::to_string(r.same_dump) + "/" + std::to_string(r.correlated) + "/" + std::to_string(r.unresolved) + "/" +
         std::to_string(r.inferred);
}

template <class Map>
std::string states(const Map& m) {
  std::string out;
  for (const auto& [state, n] : m) out += std::string(model::to_string(state)) + "=" + std::to_string(n) + " ";
  return out;
}

std::string describe(const analysis::DumpSummary& d) {
  std::ostringstream out;
  out << d.time << ' ' << d.timestamp << ' ' << d.lock_fields << ' ' << d.threads << ' ' << d.java_threads << ' ' << states(d.states)
      << d.virtual_threads << ' ' << states(d.virtual_states) << d.pinned_carrier_threads << ' ' << d.contending_threads << ' '
      << d.complete << d.synchronizers_listed << ' ' << d.unknown_lines << '\n';
  for (const auto& p : d.pinned_carriers) out << "pinned " << p.carrier << ' ' << opt(p.virtual_thread) << ' ' << p.site << '\n';
  for (const auto& c : d.chains) {
    out << "chain " << c.waiters << ' ' << c.deadlock;
    for (const auto& k : c.locks) out << ' ' << text(k);
    out << '\n';
  }
  for (const auto& dl : d.deadlocks) {
    out << "deadlock " << dl.found_in_graph << dl.reported_by_jvm;
    for (const auto& t : dl.threads) out << ' ' << t;
    out << '\n';
  }
  for (const auto& p : d.pools) out << "pool " << p.pool << ' ' << p.threads << ' ' << states(p.states) << '\n';
  for (const auto& [pool, by_state] : d.waiting_by_pool) out << "waiting " << pool << ' ' << states(by_state) << '\n';
  return out.str();
}

std::string describe(const analysis::SequenceReport& r) {
  std::ostringstream out;
  for (const auto& d : r.dumps) out << describe(d);
  for (const auto& l : r.locks) {
    out << "lock " << text(l.key) << ' ' << l.max_waiters << ' ' << l.wait_observations << ' ' << l.dumps_seen << ' '
        << text(l.resolution) << '\n';
    for (const auto& h : l.holders) out << "  holder " << h.site << ' ' << h.thread << ' ' << h.observations << ' ' << h.busy_at << '\n';
    for (const auto& p : l.per_dump) {
      out << "  dump " << p.dump << ' ' << p.more_waiters;
      for (const auto& w : p.waiters) out << " w:" << w;
      for (const auto& h : p.holders) out << " h:" << h;
      out << '\n';
    }
  }
  out << text(r.resolution) << '\n';
  for (const auto& s : r.stuck) out << "stuck " << s.thread << ' ' << opt(s.java_id) << ' ' << text(s.lock) << ' ' << s.samples << '\n';
  return out.str();
}

std::string describe(const analysis::SampleTally& t) {
  std::ostringstream out;
  for (const auto& [k, n] : t.waiters) out << "waiters " << text(k) << ' ' << n << '\n';
  for (const auto& [k, n] : t.holders) out << "holders " << text(k) << ' ' << n << '\n';
  for (const auto& [k, n] : t.transitive) out << "transitive " << text(k) << ' ' << n << '\n';
  return out.str() + text(t.resolution) + "\n";
}

std::string describe(const analysis::HoldInProgress& h) {
  std::ostringstream out;
  out << text(h.key) << ' ' << h.thread << ' ' << h.seconds << ' ' << h.samples << ' ' << h.by_key;
  return out.str();
}

std::string describe(const std::map<analysis::ActivityKey, auto>& activity) {
  std::ostringstream out;
  for (const auto& [k, n] : activity)
    out << "activity " << analysis::to_string(k.kind) << ' ' << k.lock_class << ' ' << analysis::to_string(k.activity) << ' ' << n << '\n';
  return out.str();
}

std::string describe(const analysis::LockTimeSample& s) {
  std::ostringstream out;
  out << s.weight_s << ' ' << s.cpu_printed << '\n';
  for (const auto& [k, v] : s.wait_seconds) out << "wait " << text(k) << ' ' << v << '\n';
  for (const auto& h : s.holds) out << "hold " << describe(h) << '\n';
  out << describe(s.activity);
  for (const auto& [pool, v] : s.pool_cpu_seconds) out << "cpu " << pool << ' ' << v << '\n';
  return out.str();
}

std::string describe(const analysis::LockTimeReport& r) {
  std::ostringstream out;
  for (const auto& l : r.locks)
    out << "lock " << text(l.key) << ' ' << l.samples << ' ' << l.held << ' ' << l.wait_seconds << ' ' << l.longest_hold_s << ' '
        << l.longest_by_key << '\n';
  for (const auto& h : r.longest_holds) out << "longest " << describe(h) << '\n';
  out << describe(r.activity) << r.weighted_seconds << ' ' << r.samples << ' ' << r.gc_breaks << ' ' << r.unknown_epochs << '\n';
  return out.str();
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

TEST_CASE("body memo: a correlator fed bodies reports and tallies as one fed per-thread dumps", "[analysis][body][correlator]") {
  const auto s = samples();
  // A small window: the tables are rebuilt every few samples, and the names remembered per
  // thread must go with them.
  for (const std::size_t window : {std::size_t{0}, std::size_t{3}}) {
    INFO("window " << window);
    analysis::Correlator cached({.max_samples = window}), plain({.max_samples = window});
    std::size_t waiters = 0;
    for (std::size_t i = 0; i < s.cached.size(); ++i) {
      INFO("sample " << i);
      const auto time = static_cast<double>(i);
      cached.add(s.cached[i], analysis::build_lock_graph(s.cached[i]), time);
      plain.add(s.plain[i], time);
      REQUIRE(cached.size() == plain.size());
      for (std::size_t k = 0; k < cached.size(); ++k) {
        CHECK(describe(cached.tally(k)) == describe(plain.tally(k)));
        CHECK(describe(cached.summary(k)) == describe(plain.summary(k)));
      }
      CHECK(cached.pooled_strings() == plain.pooled_strings());
      waiters += cached.tally(cached.size() - 1).waiters.size();
    }
    CHECK(describe(cached.report()) == describe(plain.report()));
    CHECK(waiters > 20);
  }
}

TEST_CASE("body memo: lock time fed bodies gives the per-thread figures", "[analysis][body][lock_time]") {
  const auto s = samples();
  analysis::LockTime cached, plain;
  std::size_t holds = 0;
  for (std::size_t i = 0; i < s.cached.size(); ++i) {
    INFO("sample " << i);
    const auto time = static_cast<double>(i);
    const auto epoch = std::optional<std::int64_t>(static_cast<std::int64_t>(i / 4));  // a GC every few samples
    const auto a = cached.add(s.cached[i], analysis::build_lock_graph(s.cached[i]), time, epoch);
    const auto b = plain.add(s.plain[i], analysis::build_lock_graph(s.plain[i]), time, epoch);
    CHECK(describe(a) == describe(b));
    holds += a.holds.size();
  }
  CHECK(describe(cached.report()) == describe(plain.report()));
  CHECK(holds > 0);
}

TEST_CASE("body memo: a waiter is named by its own dump, whatever thread had its place before", "[analysis][body][correlator]") {
  // The correlator remembers the name of the thread at each place of the dump before: the
  // samples of one scenario after another put other threads at those places.
  const auto s = samples();
  analysis::Correlator correlator;
  std::size_t named = 0;
  for (std::size_t i = 0; i < s.cached.size(); ++i) {
    INFO("sample " << i);
    const auto& dump = s.cached[i];
    const auto graph = analysis::build_lock_graph(dump);
    correlator.add(dump, graph, static_cast<double>(i));
    std::map<std::string, std::vector<std::string>> expected;  // lock key -> its first waiters' names, in graph order
    for (const auto& w : graph.waits) {
      auto& names = expected[text({w.kind, std::string(w.lock_class), std::string(w.site)})];
      if (names.size() < 8) names.emplace_back(dump.threads[w.thread].name);
    }
    std::map<std::string, std::vector<std::string>> reported;
    for (const auto& lock : correlator.report().locks)
      for (const auto& in_dump : lock.per_dump)
        if (in_dump.dump == i) reported[text(lock.key)] = in_dump.waiters;
    CHECK(reported == expected);
    named += expected.size();
  }
  CHECK(named > 20);
}
