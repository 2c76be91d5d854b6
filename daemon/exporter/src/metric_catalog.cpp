// SPDX-License-Identifier: Apache-2.0
// The exported families. HELP says where each value comes from: everything but build_info
// is written by lockwatch's own sampling, so a scrape never triggers a thread dump and a
// value can be as old as the sampling interval.
#include "metric_catalog.hpp"

#include <stdexcept>

#include "lockwatch/model/thread_dump.hpp"

namespace lockwatch::exporter {
namespace {

std::vector<std::string> java_states() {
  std::vector<std::string> states;
  for (auto s : {model::ThreadState::new_, model::ThreadState::runnable, model::ThreadState::blocked,
                 model::ThreadState::waiting, model::ThreadState::timed_waiting, model::ThreadState::terminated,
                 model::ThreadState::unknown})
    states.emplace_back(model::to_string(s));
  return states;
}

LabelSpec varying(std::string name) { return {std::move(name), {}}; }
LabelSpec kind() { return {"kind", {"monitor", "park", "resource"}}; }
LabelSpec state() { return {"state", java_states()}; }

std::array<FamilySpec, family_count> make_catalog() {
  using enum Family;
  using enum MetricType;
  return {{
      {build_info, "lockwatch_build_info", gauge, {varying("version")},
       "Always 1; the version label names the lockwatch build that exports these metrics."},
      {threads, "lockwatch_threads", gauge, {state()},
       "Platform Java threads per state (BLOCKED, WAITING, ... as Java spells it) in the thread dump of "
       "lockwatch's own periodic sampling (the latest sample), not taken at scrape time; virtual threads are "
       "in lockwatch_virtual_threads."},
      {virtual_threads, "lockwatch_virtual_threads", gauge, {state()},
       "Virtual threads per state in the thread dump of lockwatch's own periodic sampling (the latest sample), "
       "not taken at scrape time; only a Thread.dump_to_file JSON sample lists them, so a target whose latest "
       "sample is a Thread.print dump (or lists none) has no series. UNKNOWN: printed without a state (JDK 21-24)."},
      {lock_waiters, "lockwatch_lock_waiters", gauge, {kind(), varying("lock_class"), varying("site")},
       "Threads waiting to acquire a lock (kind monitor or park, lock class, waiting site) in the thread dump of "
       "lockwatch's own periodic sampling (the latest sample), not taken at scrape time. Locks past the top K "
       "of the target are summed into lock_class=other, site=other."},
      {lock_waiters_transitive, "lockwatch_lock_waiters_transitive", gauge, {kind(), varying("lock_class"), varying("site")},
       "Threads waiting for a lock directly or behind holders that themselves wait for it (the holder of A "
       "waits for B: A's waiters count for B too), in the thread dump of lockwatch's own periodic sampling (the "
       "latest sample), not taken at scrape time; the root of a chain has the most. Locks past the top K of the "
       "target are summed into lock_class=other, site=other."},
      {lock_wait_observations, "lockwatch_lock_wait_observations_total", counter,
       {kind(), varying("lock_class"), varying("site")},
       "Waiting threads seen on a lock, one per waiting thread per sample, summed over the thread dumps of "
       "lockwatch's own periodic sampling since the target was found; not counted at scrape time. Locks first "
       "seen after the target's K slots were taken are counted in lock_class=other, site=other."},
      {lock_holder_observations, "lockwatch_lock_holder_observations_total", counter,
       {kind(), varying("lock_class"), varying("holder_site")},
       "Times a thread was seen holding a contended lock, by the site where it took the lock, summed over the "
       "thread dumps of lockwatch's own periodic sampling since the target was found; not counted at scrape "
       "time. Label sets first seen after the target's K slots were taken are counted in lock_class=other, "
       "holder_site=other."},
      {lock_wait_seconds, "lockwatch_lock_wait_seconds_total", counter, {kind(), varying("lock_class"), varying("site")},
       "Estimated thread-seconds spent waiting for a lock: each waiting thread of a sample of lockwatch's own "
       "periodic sampling stands for the gap to the previous sample (at most twice the recent median gap and "
       "60 s); summed since the target was found, not counted at scrape time. Locks first seen after the "
       "target's K slots were taken are counted in lock_class=other, site=other."},
      {lock_hold_seconds_max, "lockwatch_lock_hold_seconds_max", gauge,
       {kind(), varying("lock_class"), varying("holder_site")},
       "Lower bound, in seconds, of the longest hold in progress of a contended lock: the same thread holding "
       "the same lock at the same site in consecutive samples of lockwatch's own periodic sampling (the "
       "latest sample), not measured at scrape time; 0 for a hold first seen now. Past the top K the longest "
       "is shown in lock_class=other, holder_site=other."},
      {lock_holder_activity, "lockwatch_lock_holder_activity_total", counter,
       {kind(), varying("lock_class"), {"activity", {"running", "io", "waiting", "sleeping", "unseen"}}},
       "What the holder of a contended lock was doing, once per held lock per sample of lockwatch's own "
       "periodic sampling: running (on CPU), io (socket, file or JDBC frames on top), waiting (for another lock "
       "or resource), sleeping (Thread.sleep, Object.wait, parked) or unseen (not in the dump); not counted at "
       "scrape time. Lock classes first seen after the target's K slots were taken are counted in lock_class=other."},
      {pool_cpu_seconds, "lockwatch_pool_cpu_seconds_total", counter, {varying("pool")},
       "CPU seconds of a thread pool (or of a thread outside one) from the cpu= advance of its threads between "
       "samples of lockwatch's own periodic sampling (JDK 11+ Thread.print); not counted at scrape time. Pools "
       "first seen after the target's K slots were taken are counted in pool=other."},
      {holder_resolution, "lockwatch_holder_resolution_total", counter,
       {{"result", {"same_dump", "correlated", "unresolved", "inferred"}}},
       "Waiting threads by where lockwatch found the holder of their lock: same_dump, correlated (a "
       "neighbouring sample), inferred (a likely j.u.c. owner from the stacks of a dump without -l) or "
       "unresolved; counted by lockwatch's own periodic sampling, not at scrape time."},
      {deadlocked_threads, "lockwatch_deadlocked_threads", gauge, {},
       "Threads in a deadlock in the thread dump of lockwatch's own periodic sampling (the latest sample), "
       "not taken at scrape time."},
      {pinned_carrier_threads, "lockwatch_pinned_carrier_threads", gauge, {},
       "Carrier threads waiting (BLOCKED, parked, sleeping) with a virtual thread mounted, which pins them, in "
       "the thread dump of lockwatch's own periodic sampling (the latest sample), not taken at scrape time."},
      {pool_threads, "lockwatch_pool_threads", gauge, {varying("pool"), state()},
       "Threads of a pool (thread names with their closing number replaced by N) per state in the thread dump "
       "of lockwatch's own periodic sampling (the latest sample), not taken at scrape time. Pools past the top "
       "K of the target are summed into pool=other."},
      {event_loop_blocked, "lockwatch_event_loop_blocked_threads", gauge, {varying("pool"), state()},
       "Stalled threads of an event-loop pool (analysis.event_loop_pools; such a thread must never wait): "
       "BLOCKED, or WAITING/TIMED_WAITING for a lock or a resource rather than in its selector, by state, in "
       "the thread dump of lockwatch's own periodic sampling (the latest sample), not taken at scrape time; "
       "absent when none is stalled."},
      {samples, "lockwatch_samples_total", counter,
       {{"result", {"ok", "timeout", "attach_refused", "target_gone", "io_error", "parse_error", "tool_failed", "too_large", "untrusted",
                    "dump_file_failed"}}},
       "Thread dumps attempted by lockwatch's own periodic sampling, by outcome; not counted at scrape time."},
      {samples_by_form, "lockwatch_samples_by_form_total", counter, {{"form", {"print", "json"}}},
       "Successful thread dumps of lockwatch's own periodic sampling by the form the JVM wrote: print "
       "(Thread.print, platform threads only) or json (Thread.dump_to_file -format=json, virtual threads too); "
       "not counted at scrape time."},
      {sample_duration, "lockwatch_sample_duration_seconds", histogram, {},
       "Seconds each thread dump of lockwatch's own periodic sampling took; observed when the sample ends, "
       "not at scrape time."},
      {target_up, "lockwatch_target_up", gauge, {},
       "1 if the latest attempt of lockwatch's own periodic sampling (the latest sample) got a thread dump, "
       "else 0; not probed at scrape time."},
      {last_sample_timestamp, "lockwatch_last_sample_timestamp_seconds", gauge, {},
       "Unix time in seconds of the last successful thread dump of lockwatch's own periodic sampling (the "
       "latest sample); a scrape takes no sample."},
      {jvm_contended_enters, "lockwatch_jvm_monitor_contended_enters_total", counter, {},
       "Contended monitor enters counted by the JVM (hsperfdata sun.rt._sync_ContendedLockAttempts), as read "
       "by lockwatch's own periodic sampling (the latest sample), not at scrape time."},
      {jvm_parks, "lockwatch_jvm_monitor_parks_total", counter, {},
       "Thread parks counted by the JVM (hsperfdata sun.rt._sync_Parks), as read by lockwatch's own periodic "
       "sampling (the latest sample), not at scrape time."},
      {jvm_safepoint_seconds, "lockwatch_jvm_safepoint_seconds_total", counter, {},
       "Seconds the JVM spent at safepoints (hsperfdata sun.rt.safepointTime over sun.os.hrt.frequency), as "
       "read by lockwatch's own periodic sampling (the latest sample), not at scrape time."},
      {jvm_threads_live, "lockwatch_jvm_threads_live", gauge, {},
       "Live Java threads as the JVM counts them (hsperfdata java.threads.live), as read by lockwatch's own "
       "periodic sampling (the latest sample), not at scrape time."},
      {incidents, "lockwatch_incidents_total", counter, {},
       "Incidents lockwatch recorded for the target, counted by lockwatch's own periodic sampling, not at "
       "scrape time."},
      {incident_failures, "lockwatch_incident_failures_total", counter, {},
       "Incidents of the target that lockwatch could not write (directory missing, read-only or full); the "
       "error is in lockwatch's log. Counted by lockwatch's own periodic sampling, not at scrape time."},
      {missed_ticks, "lockwatch_missed_ticks_total", counter, {},
       "Sampling deadlines of lockwatch's own periodic sampling that passed while the previous thread dump "
       "still ran; not counted at scrape time."},
      {ring_evictions, "lockwatch_ring_evictions_total", counter, {},
       "Samples dropped from lockwatch's in-memory ring to stay within its bounds; counted by lockwatch's own "
       "periodic sampling, not at scrape time."},
      {ring_samples, "lockwatch_ring_samples", gauge, {},
       "Samples of the target held in lockwatch's in-memory ring, as of lockwatch's own periodic sampling "
       "(the latest sample), not at scrape time."},
      {ring_bytes, "lockwatch_ring_bytes", gauge, {},
       "Estimated bytes of memory the target's samples take in lockwatch's ring, as of lockwatch's own "
       "periodic sampling (the latest sample), not at scrape time."},
      {targets_skipped, "lockwatch_targets_skipped", gauge, {},
       "JVMs lockwatch found at its latest rescan but does not watch, because targets.max targets are "
       "watched already (known targets are never displaced); 0 when every JVM found is watched. Set by "
       "lockwatch's own periodic sampling (its rescans), not at scrape time."},
  }};
}

// spec() indexes by the enum: a table out of order would mislabel series, so it stops here.
std::array<FamilySpec, family_count> checked(std::array<FamilySpec, family_count> families) {
  for (std::size_t i = 0; i < families.size(); ++i)
    if (static_cast<std::size_t>(families[i].family) != i) throw std::logic_error("metric catalog out of enum order");
  return families;
}

}  // namespace

const std::array<FamilySpec, family_count>& catalog() {
  static const auto families = checked(make_catalog());
  return families;
}

bool daemon_wide(Family f) { return f == Family::build_info || f == Family::targets_skipped; }

const FamilySpec& spec(Family f) { return catalog()[static_cast<std::size_t>(f)]; }

FoldRule fold_rule(Family f) {
  std::vector<std::vector<std::string>> closed;
  for (const auto& label : spec(f).labels) closed.push_back(label.closed);
  return FoldRule(std::move(closed));
}

SeriesLabels series_labels(Family f, const std::string& target, const LabelValues& values, const KubernetesLabels& where) {
  SeriesLabels labels;
  if (!daemon_wide(f)) {
    labels.emplace("target", target);
    for (const auto& [name, value] : {std::pair<const char*, const std::string*>{"namespace", &where.namespace_name},
                                      {"pod", &where.pod}, {"container", &where.container}})
      if (!value->empty()) labels.emplace(name, *value);
  }
  const auto& names = spec(f).labels;
  for (std::size_t i = 0; i < names.size() && i < values.size(); ++i) labels.emplace(names[i].name, values[i]);
  return labels;
}

}  // namespace lockwatch::exporter
