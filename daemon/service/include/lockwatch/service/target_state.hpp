// SPDX-License-Identifier: Apache-2.0
// Everything the daemon knows of one watched JVM: its ring of dumps, the correlator over
// it, the running counts behind its metrics, its hsperfdata counters.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lockwatch/analysis/correlator.hpp"
#include "lockwatch/analysis/lock_time.hpp"
#include "lockwatch/analysis/stacks.hpp"
#include "lockwatch/exporter/target_metrics.hpp"
#include "lockwatch/parser/dump_parser.hpp"
#include "lockwatch/sampling/dump_form.hpp"
#include "lockwatch/sampling/dump_record.hpp"
#include "lockwatch/sampling/perfdata.hpp"
#include "lockwatch/store/ring.hpp"

namespace lockwatch::service {

/// How a target's samples are parsed, analysed and kept (from the config's ring, limits and
/// analysis sections; config::TargetSettings is which JVMs are watched).
struct ProcessingSettings {
  store::RingLimits ring;
  analysis::CorrelatorOptions correlator;       // max_samples follows the ring
  parser::ParserLimits parser;                  // max_line_bytes and max_threads from the config's limits
  std::vector<std::string> event_loop_pools;    // thread-name globs ("reactor-http-nio-*")
};

/// Event-loop threads seen stalled: BLOCKED, or waiting for a lock or a resource.
struct EventLoopBlock {
  std::string pool;
  std::uint32_t blocked = 0;  // stalled threads, every state
};

class TargetState {
 public:
  TargetState(std::string label, ProcessingSettings settings);
  ~TargetState();
  TargetState(TargetState&&) noexcept;
  TargetState& operator=(TargetState&&) = delete;  // would free the ring before the open stream's writer

  /// A dump's text as it streams in (sampling::DumpRequest::on_text): each chunk is parsed
  /// and written to the ring at once, so the text is never held whole. A stream still open
  /// is abandoned first (only one dump of a target is in flight: that one was given up).
  void begin_stream();
  void feed_stream(std::string_view chunk);
  /// The stream's text is dropped and whatever it took from the ring given back.
  void abandon_stream();
  bool streaming() const noexcept { return stream_ != nullptr; }
  /// The open stream holds more thread entries than the parser's max_stream_threads: its
  /// dump is too_large whenever it ends, and the reader may stop (sampling::TextChunks).
  bool stream_past_thread_bound() const noexcept;

  /// Counts the outcome; an ok dump is parsed, stored and correlated. Returns the
  /// stored sample's id, or nothing when the dump failed or held no dump - which the
  /// parser alone decides, whichever backend took it. A record with text is parsed whole
  /// (an open stream is abandoned); one without finishes the open stream, whose text it is.
  /// A failed record abandons the stream.
  std::optional<std::uint64_t> add_dump(sampling::DumpRecord dump);
  /// What the latest parsed dump says for the dump-form choice; nothing when the latest
  /// record held no dump.
  const std::optional<sampling::FormEvidence>& last_evidence() const noexcept { return last_evidence_; }
  /// The hsperfdata counters read at this tick.
  void add_perf(const sampling::JvmCounters& counters, double now);
  void set_scheduler_counts(std::uint64_t missed_ticks);
  void count_incident() { ++metrics_.totals.incidents; }
  void count_incident_failure() { ++metrics_.totals.incident_failures; }
  void apply(ProcessingSettings settings);

  /// The exporter's input; takes the sample durations gathered since the last call.
  exporter::TargetMetrics take_metrics();
  const std::string& label() const noexcept { return metrics_.target; }
  const store::Ring& ring() const noexcept { return ring_; }
  const analysis::Correlator& correlator() const noexcept { return correlator_; }
  /// Wait seconds, holds in progress, holder activity and CPU over every sample of the target.
  const analysis::LockTime& lock_time() const noexcept { return lock_time_; }
  const parser::ParserLimits& parser_limits() const noexcept { return settings_.parser; }
  /// The collapsed stacks of the samples the ring keeps (flame-graph input).
  const analysis::StackHistory& stacks() const noexcept { return stacks_; }
  std::uint32_t latest_blocked() const noexcept { return latest_blocked_; }
  /// Threads of the latest sample waiting for a lock or resource of this kind.
  std::uint32_t latest_waiters(analysis::LockKind kind) const noexcept { return latest_waiters_[static_cast<std::size_t>(kind)]; }
  /// Contended monitor enters per second between the last two hsperfdata reads.
  std::optional<double> contended_rate() const noexcept { return contended_rate_; }
  const std::vector<EventLoopBlock>& event_loop_blocks() const noexcept { return event_loop_blocks_; }
  const std::string& last_error() const noexcept { return last_error_; }
  sampling::Outcome last_outcome() const noexcept { return last_outcome_; }

 private:
  struct Stream;
  void count_sample();
  void count_event_loops(const analysis::DumpSummary& summary, exporter::LatestSample& latest);
  void settle_oldest_open();
  void count_lock_time(const model::ThreadDump& dump, const analysis::LockGraph& graph, double time_s);  // lock_time_metrics.cpp

  ProcessingSettings settings_;
  store::Ring ring_;
  analysis::Correlator correlator_;
  analysis::StackHistory stacks_;  // one entry per sample of ring_, evicted with it
  analysis::LockTime lock_time_;
  std::optional<std::int64_t> gc_epoch_;  // GC collections at the latest hsperfdata read
  exporter::TargetMetrics metrics_;
  std::uint64_t unsettled_ = 0;  // newest dumps whose holders are not counted yet
  std::uint32_t latest_blocked_ = 0;
  std::array<std::uint32_t, 3> latest_waiters_{};  // by LockKind
  std::optional<double> contended_rate_;
  std::optional<std::pair<double, std::int64_t>> last_contended_;
  std::vector<EventLoopBlock> event_loop_blocks_;
  std::string last_error_;
  sampling::Outcome last_outcome_ = sampling::Outcome::ok;
  std::optional<sampling::FormEvidence> last_evidence_;
  // The thread bodies of the latest dump, parsed: most threads' stacks repeat in the next
  // one, whose parser takes them from here instead of parsing them again.
  std::shared_ptr<parser::BodyCache> bodies_ = std::make_shared<parser::BodyCache>();
  std::unique_ptr<Stream> stream_;  // after ring_ and bodies_: its writer and parser use them
};

/// The FormChooser's evidence, read from the parsed dump: the parser is the one reader of
/// the dump grammar, and the chooser, on the I/O thread, needs no text.
sampling::FormEvidence evidence_of(const model::ThreadDump& dump);

/// Shell-style glob with '*' and '?' only, as used for thread-pool names.
bool glob_match(std::string_view pattern, std::string_view text) noexcept;

}  // namespace lockwatch::service
