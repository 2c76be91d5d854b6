// SPDX-License-Identifier: Apache-2.0
// The scheduler's timing rules on a real io_context, with a backend whose speed and
// outcome the test sets (the dump itself is tested against real JVMs elsewhere).
#include <catch2/catch.hpp>

#include <map>
#include <thread>
#include <vector>

#include "lockwatch/sampling/scheduler.hpp"

using namespace lockwatch::sampling;
using namespace std::chrono_literals;
namespace asio = boost::asio;

namespace {

// What a backend returns: the scheduler adds when it was asked for, -l and burst.
DumpRecord record(Outcome outcome, std::chrono::milliseconds took) {
  DumpRecord r;
  r.outcome = outcome, r.elapsed = took, r.source = DumpSource::attach;
  if (outcome == Outcome::ok) r.text = "Full thread dump";
  return r;
}

struct Bench {
  asio::io_context io;
  std::chrono::milliseconds latency{2};
  Outcome outcome = Outcome::ok;
  bool answer = true;
  std::size_t in_flight = 0;
  std::size_t max_in_flight = 0;
  std::map<int, std::size_t> per_pid_in_flight;
  bool overlap_within_target = false;
  std::vector<DumpEvent> events;
  std::map<TargetKey, int> ticks;
  std::map<TargetKey, int> ticks_without_dump;  // on_tick said no dump follows

  DumpBackend backend() {
    return [this](const DumpRequest& r, std::function<void(DumpRecord)> done) {
      max_in_flight = std::max(max_in_flight, ++in_flight);
      if (++per_pid_in_flight[r.pid] > 1) overlap_within_target = true;
      if (!answer) return;  // a backend that hangs: the watchdog must free the slot
      auto timer = std::make_shared<asio::steady_timer>(io, latency);
      timer->async_wait([this, timer, pid = r.pid, done](boost::system::error_code) {
        --in_flight;
        --per_pid_in_flight[pid];
        done(record(outcome, latency));
      });
    };
  }
  SchedulerHooks hooks() {
    return {[this](TargetKey k, bool dump_follows) { ++ticks[k], ticks_without_dump[k] += !dump_follows; },
            [this](const DumpEvent& e) { events.push_back(e); }};
  }
};

ScheduleOptions every(std::chrono::milliseconds interval) {
  ScheduleOptions o;
  o.interval = interval;
  o.timeout = 1s;
  return o;
}

}  // namespace

TEST_CASE("deadlines are absolute: every dump is due exactly k intervals after the first", "[scheduler]") {
  Bench b;
  Scheduler s(b.io, {}, b.backend(), b.hooks());
  s.add(1, 101, every(20ms));
  b.io.run_for(330ms);
  REQUIRE(b.events.size() >= 5);
  const auto first = b.events.front().due;
  for (const auto& e : b.events) {
    CHECK((e.due - first) % 20ms == Clock::duration::zero());
    CHECK(e.dump.outcome == Outcome::ok);
    CHECK_FALSE(e.dump.burst);
  }
  CHECK(b.ticks[1] >= static_cast<int>(b.events.size()));
  CHECK(b.ticks_without_dump[1] == 0);  // every tick took a dump, so every tick said one follows
}

TEST_CASE("a tick that finds the previous dump still running is missed, never queued behind it", "[scheduler]") {
  Bench b;
  b.latency = 50ms;
  Scheduler s(b.io, {}, b.backend(), b.hooks());
  s.add(1, 101, every(20ms));
  b.io.run_for(400ms);
  const auto st = s.stats(1);
  REQUIRE(st);
  CHECK(st->missed_ticks >= 6);
  CHECK(st->dumps + st->missed_ticks <= st->ticks + 1);
  CHECK(st->dumps < st->ticks);
  CHECK_FALSE(b.overlap_within_target);
}

TEST_CASE("no more dumps run at once than the global cap", "[scheduler]") {
  Bench b;
  b.latency = 30ms;
  SchedulerOptions o;
  o.max_concurrent = 2;
  Scheduler s(b.io, o, b.backend(), b.hooks());
  for (TargetKey k = 1; k <= 6; ++k) s.add(k, static_cast<int>(100 + k), every(10ms));
  b.io.run_for(300ms);
  CHECK(b.max_in_flight == 2);
  CHECK_FALSE(b.overlap_within_target);
  CHECK(b.events.size() >= 6);
}

TEST_CASE("a failing target backs off exponentially instead of retrying every tick", "[scheduler]") {
  Bench b;
  b.outcome = Outcome::attach_refused;
  SchedulerOptions o;
  o.backoff_initial = 20ms;
  o.backoff_max = 80ms;
  Scheduler s(b.io, o, b.backend(), b.hooks());
  s.add(1, 101, every(5ms));
  b.io.run_for(600ms);
  const auto st = s.stats(1);
  REQUIRE(st);
  // 120 ticks; back-off 20, 40, 80, 80, ... allows about nine attempts.
  CHECK(st->dumps >= 4);
  CHECK(st->dumps <= 14);
  CHECK(st->failures_in_row == st->dumps);
  CHECK(st->backoff == 80ms);
  CHECK(b.ticks[1] > 60);  // hsperfdata is still read on every tick
  // ... and the ticks that back off say no dump follows: only they publish the counters.
  // (A tick during a 2 ms dump says one follows without starting one.)
  CHECK(b.ticks_without_dump[1] <= b.ticks[1] - static_cast<int>(st->dumps));
  CHECK(b.ticks_without_dump[1] >= b.ticks[1] / 2);
}

// Back-off of 20, 40, 80, 80, ... ms, on the verdicts processing gives.
SchedulerOptions judged_by_processing() {
  SchedulerOptions o;
  o.backoff_initial = 20ms;
  o.backoff_max = 80ms;
  o.verdict_from_processing = true;
  return o;
}

TEST_CASE("an ok dump that processing finds no dump in backs off like any failure", "[scheduler]") {
  // A process that answers the attach protocol with something else: the backend says ok,
  // the parser says parse_error. With the verdict taken from processing it backs off;
  // without, it would be dumped on every tick as a healthy target.
  Bench b;
  const auto o = judged_by_processing();
  auto hooks = b.hooks();
  Scheduler s(b.io, o, b.backend(), {hooks.on_tick, [&](const DumpEvent& e) {
                                       b.events.push_back(e);
                                       s.processed(e.target, e.seq, e.target == 1 ? Outcome::parse_error : Outcome::ok, 0ms);
                                     }});
  s.add(1, 101, every(5ms));
  s.add(2, 102, every(5ms));
  b.io.run_for(600ms);
  const auto junk = s.stats(1);
  const auto good = s.stats(2);
  REQUIRE(junk);
  REQUIRE(good);
  INFO("junk: " << junk->dumps << " dumps; good: " << good->dumps);
  CHECK(junk->dumps <= 14);  // back-off 20, 40, 80, 80, ... as for attach_refused
  CHECK(junk->failures_in_row == junk->dumps);  // each verdict adds to the row: ok never reset it
  CHECK(junk->backoff == 80ms);
  CHECK_FALSE(junk->last_ok_duration);  // never counted as having answered
  CHECK(good->failures_in_row == 0);
  CHECK(good->last_ok_duration);
  CHECK(good->dumps >= 60);
}

TEST_CASE("verdicts from another thread count before the next decision, with no post to the scheduler's thread",
          "[scheduler]") {
  // The daemon's processing thread calls processed() itself: each verdict waits in the
  // scheduler until its thread next decides (a tick, a slot, stats()). Here every verdict comes
  // from a thread of its own, some time after the dump was delivered.
  Bench b;
  const auto o = judged_by_processing();
  auto hooks = b.hooks();
  std::vector<std::thread> processing;
  Scheduler s(b.io, o, b.backend(), {hooks.on_tick, [&](const DumpEvent& e) {
                                       b.events.push_back(e);
                                       processing.emplace_back([&s, key = e.target, seq = e.seq] {
                                         std::this_thread::sleep_for(1ms);
                                         s.processed(key, seq, key == 1 ? Outcome::parse_error : Outcome::ok, key == 2 ? 30ms : 0ms);
                                       });
                                     }});
  s.add(1, 101, every(5ms));
  s.add(2, 102, every(10ms));
  b.io.run_for(600ms);
  for (auto& t : processing) t.join();
  const auto junk = s.stats(1);  // takes the verdicts still waiting
  const auto paced = s.stats(2);
  REQUIRE(junk);
  REQUIRE(paced);
  INFO("junk: " << junk->dumps << " dumps; paced: " << paced->dumps << " dumps, " << paced->paced_ticks << " of "
                << paced->ticks << " ticks paced");
  CHECK(junk->dumps <= 14);  // backed off as if the verdict had been posted
  CHECK(junk->failures_in_row == junk->dumps);  // every verdict counted, none lost
  CHECK(junk->backoff == 80ms);
  CHECK(paced->failures_in_row == 0);
  CHECK(paced->last_ok_duration);
  CHECK(paced->paced_ticks >= paced->ticks / 2);  // 30 ms of processing paces 90 ms
  CHECK(paced->dumps >= 3);
}

TEST_CASE("a verdict that comes after the next dump was delivered judges its own dump", "[scheduler]") {
  // Processing behind the io thread: dumps 0..n-1 are delivered before any verdict. Each
  // verdict must count for the dump it names - one slot for "the last dump" lost all but one.
  Bench b;
  auto o = judged_by_processing();
  o.backoff_initial = o.backoff_max = 1s;  // no dump after the verdicts: the count is exact
  Scheduler s(b.io, o, b.backend(), b.hooks());
  s.add(1, 101, every(5ms));
  b.io.run_for(60ms);
  const auto delivered = b.events.size();
  REQUIRE(delivered >= 3);
  CHECK(s.stats(1)->failures_in_row == 0);  // ok from the backend, not judged yet
  for (const auto& e : b.events) CHECK(e.seq == static_cast<std::uint64_t>(&e - b.events.data()));
  s.processed(1, 0, Outcome::parse_error, 0ms);
  s.processed(1, 0, Outcome::parse_error, 0ms);  // a repeat counts once
  for (std::uint64_t seq = 1; seq < delivered; ++seq) s.processed(1, seq, Outcome::parse_error, 0ms);
  s.processed(1, delivered + 5, Outcome::parse_error, 0ms);  // no such dump: nothing to judge
  const auto st = s.stats(1);
  CHECK(st->failures_in_row == delivered);
  CHECK_FALSE(st->last_ok_duration);
}

TEST_CASE("verdicts that never come do not pile up: a later verdict skips them", "[scheduler]") {
  Bench b;
  auto o = judged_by_processing();
  o.backoff_initial = o.backoff_max = 1s;
  Scheduler s(b.io, o, b.backend(), b.hooks());
  s.add(1, 101, every(5ms));
  b.io.run_for(200ms);
  const auto delivered = b.events.size();
  REQUIRE(delivered >= 20);  // more than are kept waiting
  s.processed(1, 2, Outcome::parse_error, 0ms);  // long forgotten: not judged
  CHECK(s.stats(1)->failures_in_row == 0);
  s.processed(1, delivered - 2, Outcome::parse_error, 0ms);  // skips the older ones
  CHECK(s.stats(1)->failures_in_row == 1);
  s.processed(1, delivered - 3, Outcome::parse_error, 0ms);  // out of order: already passed
  CHECK(s.stats(1)->failures_in_row == 1);
  s.processed(1, delivered - 1, Outcome::ok, 0ms);
  const auto st = s.stats(1);
  CHECK(st->failures_in_row == 0);
  CHECK(st->last_ok_duration);
  s.processed(1, delivered - 1, Outcome::parse_error, 0ms);  // judged already
  CHECK(s.stats(1)->failures_in_row == 0);
}

TEST_CASE("a recovered target samples every tick again", "[scheduler]") {
  Bench b;
  b.outcome = Outcome::timeout;
  SchedulerOptions o;
  o.backoff_initial = 50ms;
  Scheduler s(b.io, o, b.backend(), b.hooks());
  s.add(1, 101, every(10ms));
  b.io.run_for(40ms);
  REQUIRE(s.stats(1)->failures_in_row >= 1);
  b.outcome = Outcome::ok;
  b.io.restart();
  b.io.run_for(300ms);
  CHECK(s.stats(1)->failures_in_row == 0);
  CHECK(s.stats(1)->backoff == 0ms);
  CHECK(b.events.back().dump.outcome == Outcome::ok);
}

TEST_CASE("a burst takes N dumps at its own interval and covers the regular ticks", "[scheduler]") {
  Bench b;
  Scheduler s(b.io, {}, b.backend(), b.hooks());
  s.add(1, 101, every(10s));
  REQUIRE(s.burst(1, 5, 20ms));
  CHECK_FALSE(s.burst(1, 5, 20ms));  // one burst at a time
  b.io.run_for(200ms);
  REQUIRE(b.events.size() == 5);
  for (std::uint32_t i = 0; i < 5; ++i) {
    CHECK(b.events[i].dump.burst);
    CHECK(b.events[i].burst_index == i);
    CHECK(b.events[i].due - b.events[0].due == 20ms * i);
  }
  CHECK(s.burst(1, 1, 1ms));  // the burst is over: a new one may start
}

TEST_CASE("-l follows the policy: every Nth tick dump, or once on demand", "[scheduler]") {
  Bench b;
  Scheduler s(b.io, {}, b.backend(), b.hooks());
  auto o = every(10ms);
  o.locks = {LocksPolicy::Mode::every, 3};
  s.add(1, 101, o);
  b.io.run_for(200ms);
  REQUIRE(b.events.size() >= 6);
  for (std::size_t i = 0; i < b.events.size(); ++i) CHECK(b.events[i].dump.locks == ((i + 1) % 3 == 0));

  b.events.clear();
  o.locks = {LocksPolicy::Mode::on_demand, 0};
  s.update(1, o);
  b.io.restart();
  b.io.run_for(50ms);
  s.request_locks(1);
  b.io.run_for(100ms);
  std::size_t with_locks = 0;
  for (const auto& e : b.events) with_locks += e.dump.locks ? 1 : 0;
  CHECK(with_locks == 1);
  CHECK_FALSE(b.events.front().dump.locks);
}

TEST_CASE("a backend that never answers is timed out and frees its slot", "[scheduler]") {
  Bench b;
  b.answer = false;
  SchedulerOptions o;
  o.max_concurrent = 1;
  o.watchdog_grace = 20ms;
  Scheduler s(b.io, o, b.backend(), b.hooks());
  auto opts = every(10ms);
  opts.timeout = 30ms;
  s.add(1, 101, opts);
  s.add(2, 102, opts);
  b.io.run_for(250ms);
  REQUIRE(b.events.size() >= 2);
  CHECK(b.events[0].dump.outcome == Outcome::timeout);
  bool both = false;
  for (const auto& e : b.events) both = both || e.target == 2;
  CHECK(both);  // the second target got the slot after the first timed out
}

TEST_CASE("removed and stopped targets deliver nothing more", "[scheduler]") {
  Bench b;
  b.latency = 15ms;
  Scheduler s(b.io, {}, b.backend(), b.hooks());
  s.add(1, 101, every(10ms));
  s.add(2, 102, every(10ms));
  b.io.run_for(60ms);
  s.remove(1);
  const auto before = b.events.size();
  b.io.restart();
  b.io.run_for(100ms);
  for (std::size_t i = before; i < b.events.size(); ++i) CHECK(b.events[i].target == 2);
  CHECK_FALSE(s.stats(1));
  s.stop();
  const auto at_stop = b.events.size();
  b.io.restart();
  b.io.run_for(60ms);
  CHECK(b.events.size() == at_stop);
  CHECK_FALSE(s.stats(2));
}

TEST_CASE("stalling targets delay only themselves: a dump past slot_hold gives its slot back", "[scheduler][security]") {
  asio::io_context io;
  std::map<int, int> answered;
  // pids 1-3 stall until their timeout; pid 9 answers in 2 ms.
  DumpBackend backend = [&io, &answered](const DumpRequest& r, std::function<void(DumpRecord)> done) {
    const auto latency = r.pid == 9 ? 2ms : r.timeout;
    auto timer = std::make_shared<asio::steady_timer>(io, latency);
    timer->async_wait([timer, pid = r.pid, done, &answered, latency](boost::system::error_code) {
      ++answered[pid];
      done(record(pid == 9 ? Outcome::ok : Outcome::timeout, latency));
    });
  };
  std::map<TargetKey, int> ok;
  SchedulerHooks hooks{{}, [&ok](const DumpEvent& e) { ok[e.target] += e.dump.outcome == Outcome::ok; }};
  SchedulerOptions options;
  options.max_concurrent = 2;
  options.slot_hold = 100ms;
  options.backoff_initial = 1ms;  // the stallers come back at once: the worst case
  options.backoff_max = 1ms;
  Scheduler s(io, options, backend, hooks);
  ScheduleOptions stall = every(50ms);
  stall.timeout = 2s;
  for (int pid = 1; pid <= 3; ++pid) s.add(static_cast<TargetKey>(pid), pid, stall, 0ms);
  s.add(9, 9, every(50ms));
  io.run_for(2000ms);
  // 40 deadlines of the good target; with the stallers holding both slots for 2 s each it
  // would get none until the first timeout.
  CHECK(ok[9] >= 36);
  CHECK(s.in_flight() <= 2);
  CHECK(s.overtime() <= 3);
}

TEST_CASE("a target whose samples are costly to process is paced, the others keep every tick", "[scheduler]") {
  Bench b;
  // Each dump of target 1 "costs" 30 ms of processing: with the default pace of 3 its next
  // dump waits 90 ms, so at a 10 ms interval about one tick in ten dumps. Target 2 costs nothing.
  auto hooks = b.hooks();
  Scheduler paced(b.io, {}, b.backend(),
                  {hooks.on_tick, [&](const DumpEvent& e) {
                     b.events.push_back(e);
                     if (e.target == 1) paced.processed(1, e.seq, e.dump.outcome, 30ms);
                   }});
  paced.add(1, 101, every(10ms));
  paced.add(2, 102, every(10ms));
  b.io.run_for(600ms);
  const auto costly = paced.stats(1);
  const auto cheap = paced.stats(2);
  REQUIRE(costly);
  REQUIRE(cheap);
  INFO("costly: " << costly->dumps << " dumps, " << costly->paced_ticks << " paced of " << costly->ticks
                  << " ticks; cheap: " << cheap->dumps << " dumps of " << cheap->ticks);
  CHECK(costly->paced_ticks >= costly->ticks / 2);
  CHECK(costly->dumps * 4 <= costly->ticks);
  CHECK(costly->dumps >= 3);  // paced, never starved
  CHECK(cheap->paced_ticks == 0);
  CHECK(cheap->dumps * 10 >= cheap->ticks * 7);
}
