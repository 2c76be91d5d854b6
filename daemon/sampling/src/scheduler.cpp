// SPDX-License-Identifier: Apache-2.0
// Per-target deadline timers feeding one FIFO of dumps, drained under a global cap.
#include "lockwatch/sampling/scheduler.hpp"

#include <algorithm>
#include <atomic>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace lockwatch::sampling {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using std::chrono::milliseconds;

// A target's ok dumps waiting for processing's verdict: one or two in practice (pacing holds
// the next dump back by a multiple of processing's cost), many only if verdicts stop coming.
constexpr std::size_t kMaxAwaitingVerdicts = 16;

// One target as the scheduler keeps it: its deadlines, back-off, bursts and counts.
struct Scheduled {
  Scheduled(asio::io_context& io, TargetKey k, int p, ScheduleOptions o) : key(k), pid(p), options(o), timer(io), burst_timer(io) {}
  TargetKey key;
  int pid;
  ScheduleOptions options;
  asio::steady_timer timer;
  asio::steady_timer burst_timer;
  Clock::time_point next_due;
  Clock::time_point backoff_until;
  Clock::time_point paced_until;  // see SchedulerOptions::processing_pace
  TargetStats stats;
  bool busy = false;             // queued or in flight
  bool removed = false;
  bool locks_requested = false;
  // The ok dumps delivered and not judged yet (seq, duration), oldest first: processing may
  // still hold one when the next is delivered. Bounded: a verdict that never comes (a caller
  // that judges only some dumps) must not grow it.
  std::deque<std::pair<std::uint64_t, milliseconds>> awaiting_verdict;
  std::uint64_t tick_dumps = 0;  // for LocksPolicy::every
  bool bursting = false;         // from burst() until its last dump finished
  bool burst_waiting = false;    // burst() found a dump running; the burst follows it
  std::uint32_t burst_left = 0;  // burst dumps not yet queued
  std::uint32_t burst_next = 0;
  milliseconds burst_interval{0};
};

struct Job {
  std::shared_ptr<Scheduled> target;
  bool burst = false;
  std::uint32_t burst_index = 0;
  Clock::time_point due;
};

}  // namespace

struct Scheduler::Impl : std::enable_shared_from_this<Scheduler::Impl> {
  Impl(asio::io_context& i, SchedulerOptions o, DumpBackend b, SchedulerHooks h)
      : io(i), options(o), backend(std::move(b)), hooks(std::move(h)) {}

  asio::io_context& io;
  SchedulerOptions options;
  DumpBackend backend;
  SchedulerHooks hooks;
  std::map<TargetKey, std::shared_ptr<Scheduled>> targets;
  std::deque<Job> queue;
  std::size_t in_flight = 0;   // holding a slot
  std::size_t overtime = 0;    // running past slot_hold, slot given back
  std::size_t in_flight_failing = 0;  // of in_flight: dumps of targets that were failing when they started
  bool stopped = false;

  // processed() comes from the processing thread. A post of its own woke the io thread once
  // more per dump (an epoll_ctl on its reactor, and one of its ~7 waits a sample), and that
  // wake-up preempted the processing thread ~2 times a sample (docs/performance.md). So the
  // verdicts wait here and are taken before the scheduler next decides anything - each tick,
  // slot hand-out, burst step, delivery and stats() - with the time they came, so pacing and
  // back-off run from then as before.
  struct Verdict {
    TargetKey key;
    std::uint64_t seq;
    Outcome outcome;
    Clock::duration cost;
    Clock::time_point at;
  };
  std::mutex inbox_mu;
  std::vector<Verdict> inbox, taking;  // taking: the drained batch, its buffer kept
  std::atomic<bool> inbox_filled{false};

  void drain() {
    if (!inbox_filled.load(std::memory_order_acquire)) return;
    {
      std::lock_guard lock(inbox_mu);
      inbox.swap(taking);
      inbox_filled.store(false, std::memory_order_relaxed);
    }
    for (const auto& v : taking) apply(v);
    taking.clear();
  }

  void apply(const Verdict& v) {
    auto it = targets.find(v.key);
    if (it == targets.end()) return;
    auto& t = *it->second;
    t.paced_until = v.at + v.cost * options.processing_pace;
    auto& waiting = t.awaiting_verdict;
    while (!waiting.empty() && waiting.front().first < v.seq) waiting.pop_front();  // never judged
    if (waiting.empty() || waiting.front().first != v.seq) return;  // judged already (not ok, or a repeat)
    account(t, v.outcome, waiting.front().second, v.at);
    waiting.pop_front();
  }

  void arm(const std::shared_ptr<Scheduled>& t) {
    t->timer.expires_at(t->next_due);
    t->timer.async_wait([self = shared_from_this(), t](error_code ec) {
      if (!ec && !t->removed && !self->stopped) self->tick(t);
    });
  }

  // A late wake-up (a busy loop, a suspended machine) skips the deadlines it slept
  // through and counts them, instead of firing them all at once.
  void tick(const std::shared_ptr<Scheduled>& t) {
    drain();
    const auto now = Clock::now();
    const auto due = t->next_due;
    const auto late = (now - due) / t->options.interval;
    t->stats.ticks += 1;
    t->stats.missed_ticks += static_cast<std::uint64_t>(late);
    t->next_due = due + t->options.interval * (late + 1);
    arm(t);
    const bool backing_off = now < t->backoff_until, paced = now < t->paced_until;
    if (hooks.on_tick) hooks.on_tick(t->key, t->bursting || t->busy || (!backing_off && !paced));
    if (t->bursting || backing_off) return;  // covered by the burst / backing off
    if (t->busy) return void(t->stats.missed_ticks += 1);
    if (paced) return void((t->stats.missed_ticks += 1, t->stats.paced_ticks += 1));
    enqueue({t, false, 0, due});
  }

  void enqueue(Job job) {
    job.target->busy = true;
    queue.push_back(std::move(job));
    pump();
  }

  // Healthy targets first: a target that keeps failing (stalling, refusing) waits until no
  // healthy one does, so a crowd of failing targets cannot queue a healthy JVM behind them.
  // Among healthy ones a target that has answered before goes first: a container forking
  // processes with hsperfdata files makes new targets all the time, and each holds a slot
  // until its first dump fails. Failing targets also share at most max_concurrent - 1 slots, so
  // one is always left for a healthy JVM (with a cap of 1 there is nothing to share).
  void pump() {
    drain();
    if (!queue.empty()) release_overdue();
    while (!stopped && in_flight < options.max_concurrent && !queue.empty()) {
      auto pick = std::find_if(queue.begin(), queue.end(), [](const Job& j) {
        return j.target->stats.failures_in_row == 0 && j.target->stats.last_ok_duration.has_value();
      });
      if (pick == queue.end())
        pick = std::find_if(queue.begin(), queue.end(), [](const Job& j) { return j.target->stats.failures_in_row == 0; });
      const std::size_t failing_cap = options.max_concurrent > 1 ? options.max_concurrent - 1 : 1;
      if (pick == queue.end() && in_flight_failing >= failing_cap) return;
      if (pick == queue.end()) pick = queue.begin();
      Job job = std::move(*pick);
      queue.erase(pick);
      if (job.target->removed) continue;
      start(std::move(job));
    }
    if (!stopped && !queue.empty()) wait_for_slot();
  }

  milliseconds slot_hold_for(const Scheduled& t) const {
    if (!t.stats.last_ok_duration) return std::min(options.slot_hold_new, options.slot_hold);
    return std::clamp(*t.stats.last_ok_duration * 3, options.slot_hold_min, options.slot_hold);
  }

  bool wants_locks(Scheduled& t, bool burst) {
    const bool requested = std::exchange(t.locks_requested, false);
    if (burst) return requested;
    t.tick_dumps += 1;
    const auto& p = t.options.locks;
    return requested || (p.mode == LocksPolicy::Mode::every && p.every > 0 && t.tick_dumps % p.every == 0);
  }

  // One running dump's slot: held from start until the dump ends or, once its hold has
  // passed, a queued dump needs it.
  struct Slot {
    Slot(Clock::time_point until, bool f) : hold_until(until), failing(f) {}
    Clock::time_point hold_until;
    bool held = true;
    bool failing;  // the target was failing when the dump started
  };
  std::vector<std::shared_ptr<Slot>> held;  // the slots in use, in the order their dumps started
  // Why one timer, armed only while a dump waits for a slot: a timer per dump, cancelled when
  // the dump ends first (as nearly all do), still woke the io thread at its expiry - the
  // reactor re-arms its timerfd only for a new earliest timer - once per sample of every target.
  asio::steady_timer hold_timer{io};
  bool hold_armed = false;

  void release(Slot& slot) {
    if (!std::exchange(slot.held, false)) return;
    --in_flight;
    if (slot.failing) --in_flight_failing;
    std::erase_if(held, [&slot](const std::shared_ptr<Slot>& s) { return s.get() == &slot; });
  }

  // The slots whose dumps run past their hold are given back: those dumps finish on their own.
  void release_overdue() {
    const auto now = Clock::now();
    for (const auto& slot : std::vector<std::shared_ptr<Slot>>(held))
      if (slot->hold_until <= now) release(*slot), ++overtime;
  }

  // A dump waits for a slot: pump() again when the first held one's hold passes.
  void wait_for_slot() {
    if (held.empty()) return;
    const auto first = std::min_element(held.begin(), held.end(), [](const auto& a, const auto& b) {
                         return a->hold_until < b->hold_until;
                       })->get()->hold_until;
    if (hold_armed && hold_timer.expiry() <= first) return;
    hold_armed = true;
    hold_timer.expires_at(first);  // a later wait ends with operation_aborted
    hold_timer.async_wait([self = shared_from_this()](error_code ec) {
      if (ec) return;
      self->hold_armed = false;
      if (!self->stopped) self->pump();
    });
  }

  void start(Job job) {
    ++in_flight;
    job.target->stats.in_flight = true;
    const auto& o = job.target->options;
    const DumpRequest request{job.target->pid, wants_locks(*job.target, job.burst), o.timeout, o.bounds};
    auto event = std::make_shared<DumpEvent>(DumpEvent{job.target->key, job.burst_index, job.due, {}});
    const auto asked = std::chrono::system_clock::now();
    auto watchdog = std::make_shared<asio::steady_timer>(io, request.timeout + options.watchdog_grace);
    auto slot = std::make_shared<Slot>(Clock::now() + slot_hold_for(*job.target), job.target->stats.failures_in_row > 0);
    held.push_back(slot);
    if (slot->failing) ++in_flight_failing;
    auto finish = [self = shared_from_this(), job, event, watchdog, slot, asked, locks = request.locks,
                   done = false](DumpRecord r) mutable {
      if (std::exchange(done, true)) return;
      watchdog->cancel();
      r.started = asked, r.locks = locks, r.burst = job.burst;
      event->dump = std::move(r);
      const bool holding = slot->held;
      self->release(*slot);
      self->finished(job, std::move(*event), holding);
    };
    auto shared_finish = std::make_shared<decltype(finish)>(std::move(finish));
    watchdog->async_wait([shared_finish, timeout = request.timeout](error_code ec) {
      if (ec) return;
      DumpRecord gave_up;
      gave_up.outcome = Outcome::timeout, gave_up.error = "the dump backend did not answer within the timeout";
      gave_up.elapsed = timeout;
      (*shared_finish)(std::move(gave_up));
    });
    backend(request, [shared_finish](DumpRecord r) { (*shared_finish)(std::move(r)); });
  }

  void finished(const Job& job, DumpEvent event, bool held_slot) {
    drain();  // a verdict still waiting is the last dump's, not this one's
    if (!held_slot) --overtime;
    auto& t = *job.target;
    t.busy = false;
    t.stats.in_flight = false;
    event.seq = t.stats.dumps;
    t.stats.dumps += 1;
    const auto took = std::chrono::duration_cast<milliseconds>(event.dump.elapsed);
    if (!t.removed && !stopped) {
      if (event.dump.outcome == Outcome::ok && options.verdict_from_processing) {
        if (t.awaiting_verdict.size() == kMaxAwaitingVerdicts) t.awaiting_verdict.pop_front();
        t.awaiting_verdict.emplace_back(event.seq, took);
      } else
        account(t, event.dump.outcome, took, Clock::now());
      if (job.burst && t.burst_left == 0) t.bursting = false;
      if (hooks.on_dump) hooks.on_dump(std::move(event));
      if (job.burst || std::exchange(t.burst_waiting, false)) next_burst(job.target);
    }
    pump();
  }

  // Exponential back-off keeps a failing target (no listener, wrong uid) from being
  // retried - and possibly signalled - on every tick.
  void account(Scheduled& t, Outcome outcome, milliseconds took, Clock::time_point now) {
    if (outcome == Outcome::ok) {
      t.stats.last_ok_duration = took;
      t.stats.failures_in_row = 0;
      t.stats.backoff = milliseconds{0};
      t.backoff_until = {};
      return;
    }
    t.stats.failures_in_row += 1;
    const auto shift = std::min<std::uint32_t>(t.stats.failures_in_row - 1, 20);
    t.stats.backoff = std::min(options.backoff_max, options.backoff_initial * (std::int64_t{1} << shift));
    t.backoff_until = now + t.stats.backoff;
  }

  void next_burst(const std::shared_ptr<Scheduled>& t) {
    if (t->burst_left == 0) return;
    t->burst_timer.expires_at(std::max(Clock::now(), t->burst_timer.expiry()));
    t->burst_timer.async_wait([self = shared_from_this(), t](error_code ec) {
      if (ec || t->removed || self->stopped) return;
      const auto due = t->burst_timer.expiry();
      t->burst_left -= 1;
      const auto index = t->burst_next++;
      if (t->burst_left > 0) t->burst_timer.expires_at(due + t->burst_interval);
      self->enqueue({t, true, index, due});
    });
  }
};

Scheduler::Scheduler(asio::io_context& io, SchedulerOptions options, DumpBackend backend, SchedulerHooks hooks)
    : impl_(std::make_shared<Impl>(io, options, std::move(backend), std::move(hooks))) {}

Scheduler::~Scheduler() { stop(); }

void Scheduler::add(TargetKey key, int pid, ScheduleOptions options, std::optional<milliseconds> first_after) {
  remove(key);
  auto t = std::make_shared<Scheduled>(impl_->io, key, pid, options);
  t->next_due = Clock::now() + first_after.value_or(options.interval);
  impl_->targets.emplace(key, t);
  impl_->arm(t);
}

void Scheduler::remove(TargetKey key) {
  auto it = impl_->targets.find(key);
  if (it == impl_->targets.end()) return;
  it->second->removed = true;
  it->second->timer.cancel();
  it->second->burst_timer.cancel();
  impl_->targets.erase(it);
}

void Scheduler::update(TargetKey key, ScheduleOptions options) {
  auto it = impl_->targets.find(key);
  if (it == impl_->targets.end()) return;
  it->second->options = options;
  it->second->next_due = Clock::now() + options.interval;
  impl_->arm(it->second);
}

bool Scheduler::burst(TargetKey key, std::uint32_t count, milliseconds interval) {
  auto it = impl_->targets.find(key);
  if (it == impl_->targets.end() || it->second->bursting || count == 0) return false;
  auto& t = it->second;
  t->bursting = true;
  t->burst_left = count;
  t->burst_next = 0;
  t->burst_interval = interval;
  t->burst_timer.expires_at(Clock::now());
  if (t->busy) t->burst_waiting = true;  // never two dumps of one JVM at once
  else impl_->next_burst(t);
  return true;
}

void Scheduler::processed(TargetKey key, std::uint64_t seq, Outcome verdict, Clock::duration cost) {
  const auto now = Clock::now();
  std::lock_guard lock(impl_->inbox_mu);
  impl_->inbox.push_back({key, seq, verdict, cost, now});
  impl_->inbox_filled.store(true, std::memory_order_release);
}

void Scheduler::request_locks(TargetKey key) {
  if (auto it = impl_->targets.find(key); it != impl_->targets.end()) it->second->locks_requested = true;
}

std::optional<TargetStats> Scheduler::stats(TargetKey key) const {
  impl_->drain();
  auto it = impl_->targets.find(key);
  if (it == impl_->targets.end()) return std::nullopt;
  return it->second->stats;
}

std::size_t Scheduler::in_flight() const { return impl_->in_flight; }
std::size_t Scheduler::overtime() const { return impl_->overtime; }

void Scheduler::stop() {
  if (!impl_ || impl_->stopped) return;
  impl_->stopped = true;
  for (auto& [key, t] : impl_->targets) {
    t->removed = true;
    t->timer.cancel();
    t->burst_timer.cancel();
  }
  impl_->targets.clear();
  impl_->queue.clear();
  impl_->hold_timer.cancel();
}

}  // namespace lockwatch::sampling
