// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/service/target_state.hpp"

#include <algorithm>
#include <set>
#include <utility>

#include "lockwatch/parser/dump_parser.hpp"

namespace lockwatch::service {
namespace {

exporter::LockLabels labels_of(const analysis::LockKey& key) {
  return {std::string(analysis::to_string(key.kind)), key.lock_class, key.site};
}

std::uint32_t deadlocked_threads(const analysis::DumpSummary& s) {
  std::set<std::string> names;
  for (const auto& d : s.deadlocks) names.insert(d.threads.begin(), d.threads.end());
  return static_cast<std::uint32_t>(names.size());
}

// The form is read from the parsed dump, not from how it was asked for: what the JVM
// wrote is what the sample can tell.
std::string_view form_of(model::DumpFormat format) {
  switch (format) {
    case model::DumpFormat::jstack: return "print";
    case model::DumpFormat::dump_to_file_json: return "json";
    case model::DumpFormat::dump_to_file_plain: return "plain";  // never asked for; shown as other
  }
  return "other";
}

// A JDK 21-24 JSON dump prints no states: its virtual threads count as UNKNOWN, so that the
// family's sum stays the number of virtual threads listed.
std::map<std::string, std::uint32_t> virtual_by_state(const analysis::DumpSummary& s) {
  std::map<std::string, std::uint32_t> out;
  for (const auto& [state, n] : s.virtual_states)
    out[std::string(model::to_string(state == model::ThreadState::none ? model::ThreadState::unknown : state))] += n;
  return out;
}

analysis::CorrelatorOptions bounded(ProcessingSettings s) {
  s.correlator.max_samples = s.ring.max_samples;
  return s.correlator;
}

}  // namespace

bool glob_match(std::string_view p, std::string_view t) noexcept {
  if (p.empty()) return t.empty();
  if (p.front() == '*') return glob_match(p.substr(1), t) || (!t.empty() && glob_match(p, t.substr(1)));
  return !t.empty() && (p.front() == '?' || p.front() == t.front()) && glob_match(p.substr(1), t.substr(1));
}

TargetState::TargetState(std::string label, ProcessingSettings settings)
    : settings_(std::move(settings)), ring_(settings_.ring), correlator_(bounded(settings_)) {
  metrics_.target = std::move(label);
}

void TargetState::apply(ProcessingSettings settings) {
  settings_ = std::move(settings);
  ring_.set_limits(settings_.ring);
  if (auto first = ring_.first_id()) stacks_.forget_before(*first);  // smaller limits evict at once
}

// The open dump of a stream: parsed and interned as it arrives. Only the first bytes are
// kept besides, for the error text of a reply that held no dump.
struct TargetState::Stream {
  Stream(const parser::ParserLimits& limits, std::shared_ptr<parser::BodyCache> bodies, store::Ring::Writer w)
      : parser(limits, std::move(bodies)), writer(std::move(w)) {}
  void feed(std::string_view chunk) {
    if (head.size() < head_bytes) head.append(chunk.substr(0, head_bytes - head.size()));
    bytes += chunk.size();
    if (past_thread_bound()) return;  // too_large: nothing more is parsed or kept
    parser.feed(chunk);
    if (past_thread_bound()) return writer.abandon();
    if (!writer.given_up()) writer.append(chunk);
  }
  bool past_thread_bound() const { return parser.stats().stopped == parser::StopReason::max_threads; }
  static constexpr std::size_t head_bytes = 120;
  parser::DumpParser parser;
  store::Ring::Writer writer;
  std::string head;
  std::uint64_t bytes = 0;
};

TargetState::~TargetState() = default;
TargetState::TargetState(TargetState&&) noexcept = default;

void TargetState::begin_stream() {
  abandon_stream();
  stream_ = std::make_unique<Stream>(settings_.parser, bodies_, ring_.begin());
}

void TargetState::feed_stream(std::string_view chunk) {
  if (!stream_) begin_stream();
  stream_->feed(chunk);
}

void TargetState::abandon_stream() { stream_.reset(); }

bool TargetState::stream_past_thread_bound() const noexcept { return stream_ && stream_->past_thread_bound(); }

namespace {

bool starts(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

template <class Pred>
bool any_thread(const model::ThreadDump& dump, Pred pred) {
  return std::any_of(dump.threads.begin(), dump.threads.end(), pred);
}

bool any_frame(const model::ThreadInfo& t, std::string_view prefix) {
  return std::any_of(t.frames.begin(), t.frames.end(), [&](const model::Frame& f) { return starts(f.text, prefix); });
}

}  // namespace

// What the JVM publishes about itself, read from the model: the JSON dump's runtimeVersion
// or the print header's VM version; virtual threads listed or their frames; a carrier's
// "Carrying virtual thread"; the JVM's virtual-thread helpers, which exist once the
// application has used virtual threads. None of it is looked for before JDK 21, which has
// no virtual threads (a thread may be named like a helper there).
sampling::FormEvidence evidence_of(const model::ThreadDump& dump) {
  sampling::FormEvidence e;
  if (dump.format == model::DumpFormat::dump_to_file_json) {
    e.jdk_major = sampling::jdk_major_of(dump.vm_banner);
    e.mounted = any_thread(dump, [](const model::ThreadInfo& t) { return t.is_virtual || any_frame(t, "java.lang.VirtualThread.run("); });
    e.virtual_threads = e.mounted;
    return e;
  }
  const auto open = dump.vm_banner.find('(');
  e.jdk_major = open == std::string_view::npos ? 0 : sampling::jdk_major_of(dump.vm_banner.substr(open + 1));
  if (e.jdk_major > 0 && e.jdk_major < 21) return e;
  // The helpers' own stacks are in VirtualThread too (JDK 24+'s unblocker waits in
  // VirtualThread.takeVirtualThreadListToUnblock): they say virtual threads were used, not
  // that one is running, so only other threads' VirtualThread frames count as mounted.
  const auto helper = [](const model::ThreadInfo& t) {
    return t.name == "VirtualThread-unparker" || t.name == "VirtualThread-unblocker";
  };
  e.mounted = any_thread(dump, [&](const model::ThreadInfo& t) {
    return t.carrying_vthread.has_value() || (!helper(t) && any_frame(t, "java.lang.VirtualThread."));
  });
  e.virtual_threads = e.mounted || any_thread(dump, helper);
  return e;
}

std::optional<std::uint64_t> TargetState::add_dump(sampling::DumpRecord in) {
  using sampling::Outcome;
  metrics_.new_durations.push_back(sampling::seconds(in.elapsed));
  last_evidence_.reset();
  // A record that brings its text (jstack, or no sink) is fed whole here; an open stream
  // then belonged to a dump given up before.
  if (!in.text.empty() || !stream_) {
    begin_stream();
    if (in.outcome == Outcome::ok) stream_->feed(in.text);
    std::string().swap(in.text);
  }
  const auto stream = std::exchange(stream_, nullptr);
  std::vector<model::ThreadDump> dumps;
  if (in.outcome == Outcome::ok) {
    stream->parser.finish();
    dumps = stream->parser.take_dumps();
  }
  if (in.outcome == Outcome::ok && stream->past_thread_bound()) {
    // The reader dropped the connection when told, or the reply ended first: either way
    // the reply is as if the reader had counted (sampling::BoundedReply's message).
    dumps.clear();
    in.outcome = Outcome::too_large;
    const auto bound = std::min(settings_.parser.max_threads, settings_.parser.max_stream_threads);  // one value in the daemon
    in.error = sampling::too_many_threads_error(bound, "not kept (" + std::to_string(stream->bytes) + " bytes read)");
  }
  if (!dumps.empty()) last_evidence_ = evidence_of(dumps.front());
  if (in.outcome == Outcome::ok && dumps.empty())
    in.outcome = Outcome::parse_error, in.error = sampling::no_dump_error(in.source, stream->head, stream->bytes);
  std::optional<std::uint64_t> id;
  if (in.outcome == Outcome::ok) {
    const auto bytes = stream->bytes;
    id = ring_.commit(std::move(stream->writer), in);  // the record's facts, sliced from its text
    if (!id)
      in.outcome = Outcome::too_large,
      in.error = "a sample of " + std::to_string(bytes) + " bytes does not fit ring.max_bytes (" +
                 std::to_string(settings_.ring.max_bytes) + " bytes) on its own: not kept";
  }
  ++metrics_.totals.samples[std::string(sampling::to_string(in.outcome))];
  last_outcome_ = in.outcome;
  metrics_.up = in.outcome == sampling::Outcome::ok;
  last_error_ = std::move(in.error);  // "" once the target recovers
  if (!metrics_.up) return std::nullopt;
  ++metrics_.totals.samples_by_form[std::string(form_of(dumps.front().format))];
  const double started = sampling::unix_seconds(in.started);
  const auto graph = analysis::build_lock_graph(dumps.front());  // one per sample, for both
  correlator_.add(dumps.front(), graph, started);
  stacks_.add(*id, dumps.front());
  stacks_.forget_before(ring_.first_id().value_or(*id));
  metrics_.last_sample_time = started;
  count_sample();
  count_lock_time(dumps.front(), graph, started);  // after count_sample: it fills the latest sample's hold gauges
  return id;
}

// Waiters count at once; holders and their resolution once the neighbouring dumps
// that may resolve them have arrived, so every dump is counted exactly once.
void TargetState::count_sample() {
  const auto newest = correlator_.size() - 1;
  exporter::LatestSample latest;
  latest_waiters_ = {};
  const auto newest_tally = correlator_.tally(newest);
  for (const auto& [key, n] : newest_tally.waiters) {
    latest_waiters_[static_cast<std::size_t>(key.kind)] += n;
    latest.lock_waiters[labels_of(key)] = n;
    metrics_.totals.wait_observations[labels_of(key)] += n;
  }
  for (const auto& [key, n] : newest_tally.transitive) latest.lock_waiters_transitive[labels_of(key)] = n;
  const auto& summary = correlator_.summary(newest);
  for (const auto& [state, n] : summary.states) latest.threads_by_state[std::string(model::to_string(state))] = n;
  latest.deadlocked_threads = deadlocked_threads(summary);
  latest.virtual_threads_by_state = virtual_by_state(summary);
  latest.pinned_carrier_threads = summary.pinned_carrier_threads;
  event_loop_blocks_.clear();
  for (const auto& pool : summary.pools)
    for (const auto& [state, n] : pool.states) latest.pool_threads[pool.pool][std::string(model::to_string(state))] = n;
  count_event_loops(summary, latest);
  // BLOCKED virtual threads stall requests as platform ones do: both count for incidents.
  const auto b = summary.states.find(model::ThreadState::blocked);
  const auto vb = summary.virtual_states.find(model::ThreadState::blocked);
  latest_blocked_ = (b == summary.states.end() ? 0 : b->second) + (vb == summary.virtual_states.end() ? 0 : vb->second);
  metrics_.latest = std::move(latest);
  unsettled_ = std::min<std::uint64_t>(unsettled_ + 1, correlator_.size());
  while (unsettled_ > settings_.correlator.neighbour_window) settle_oldest_open();
}

// An event loop stalls every connection it serves whether it is BLOCKED or parked on a
// logging lock or a pool: both count, by state. BLOCKED threads count even without a lock
// line (class loading); waiting ones only when they wait for a lock or a resource.
void TargetState::count_event_loops(const analysis::DumpSummary& summary, exporter::LatestSample& latest) {
  for (const auto& pool : summary.pools) {
    if (std::none_of(settings_.event_loop_pools.begin(), settings_.event_loop_pools.end(),
                     [&](const auto& pattern) { return glob_match(pattern, pool.pool); }))
      continue;
    std::map<model::ThreadState, std::uint32_t> stalled;
    if (auto b = pool.states.find(model::ThreadState::blocked); b != pool.states.end()) stalled[b->first] = b->second;
    if (auto w = summary.waiting_by_pool.find(pool.pool); w != summary.waiting_by_pool.end())
      for (const auto& [state, n] : w->second)
        if (state != model::ThreadState::blocked) stalled[state] = n;
    std::uint32_t total = 0;
    for (const auto& [state, n] : stalled) {
      latest.event_loop_blocked[pool.pool][std::string(model::to_string(state))] = n;
      total += n;
    }
    if (total > 0) event_loop_blocks_.push_back({pool.pool, total});
  }
}

void TargetState::settle_oldest_open() {
  const auto tally = correlator_.tally(correlator_.size() - unsettled_);
  --unsettled_;
  for (const auto& [key, n] : tally.holders) metrics_.totals.holder_observations[labels_of(key)] += n;
  auto& r = metrics_.totals.holder_resolution;
  r["same_dump"] += tally.resolution.same_dump;
  r["correlated"] += tally.resolution.correlated;
  r["unresolved"] += tally.resolution.unresolved;
  r["inferred"] += tally.resolution.inferred;
}

void TargetState::add_perf(const sampling::JvmCounters& c, double now) {
  if (c.gc_collections) gc_epoch_ = c.gc_collections;
  auto& p = metrics_.perf;
  p.threads_live = c.threads_live;
  p.contended_enters = c.contended_lock_attempts;
  p.parks = c.parks;
  if (c.safepoint_time_ticks && c.frequency && *c.frequency > 0)
    p.safepoint_seconds = static_cast<double>(*c.safepoint_time_ticks) / static_cast<double>(*c.frequency);
  if (!c.contended_lock_attempts) return;
  if (last_contended_ && now > last_contended_->first)
    contended_rate_ = static_cast<double>(*c.contended_lock_attempts - last_contended_->second) / (now - last_contended_->first);
  last_contended_ = {now, *c.contended_lock_attempts};
}

void TargetState::set_scheduler_counts(std::uint64_t missed_ticks) { metrics_.totals.missed_ticks = missed_ticks; }

exporter::TargetMetrics TargetState::take_metrics() {
  metrics_.ring_samples = static_cast<std::uint32_t>(ring_.size());
  metrics_.ring_bytes = ring_.bytes();
  metrics_.totals.ring_evictions = ring_.evictions();
  auto out = metrics_;
  metrics_.new_durations.clear();
  return out;
}

}  // namespace lockwatch::service
