// SPDX-License-Identifier: Apache-2.0
// The daemon's parts and which thread owns what: the io thread owns the target map,
// the scheduler and the HTTP server; the processing thread owns each target's state
// (under the target's mutex); API requests take that mutex on an API thread of their own,
// so nothing on the io thread ever waits for a sample being processed.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <string>

#include "lockwatch/exporter/exporter.hpp"
#include "lockwatch/http/router.hpp"
#include "lockwatch/http/server.hpp"
#include "lockwatch/asio.hpp"
#include "lockwatch/sampling/discovery.hpp"
#include "lockwatch/sampling/dump_form.hpp"
#include "lockwatch/sampling/perfdata.hpp"
#include "lockwatch/sampling/pod_identity.hpp"
#include "lockwatch/sampling/proc.hpp"
#include "lockwatch/sampling/scheduler.hpp"
#include "lockwatch/service/daemon.hpp"
#include "lockwatch/service/incident.hpp"
#include "lockwatch/service/log.hpp"
#include "lockwatch/service/target_state.hpp"

#include "chunk_pool.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>

namespace lockwatch::service {

struct Watched {
  Watched(sampling::TargetKey k, sampling::DiscoveredJvm j, const std::string& label_, ProcessingSettings settings)
      : key(k), jvm(std::move(j)), label(label_), state(label_, std::move(settings)) {}
  const sampling::TargetKey key;
  const sampling::DiscoveredJvm jvm;
  const std::string label;   // read by the io thread without the mutex
  sampling::FormChooser form;  // io thread only: which dump form its next sample takes
  std::string form_reason;      // io thread only: why, as last logged
  // An ok dump's evidence for `form`, left by the processing thread for the io thread to take
  // (take_form_note in daemon.cpp). Its own mutex: `mu` is held through a whole sample.
  struct FormNote {
    sampling::DumpForm form{};
    sampling::FormEvidence evidence;
    std::chrono::steady_clock::time_point at;
  };
  std::mutex form_note_mu;
  std::optional<FormNote> form_note;
  struct TickPerf {
    sampling::JvmCounters counters;
    double at = 0;  // unix seconds
  };
  std::optional<TickPerf> tick_perf;  // io thread only: read at a tick a dump follows, sent with it
  std::optional<sampling::TargetPerfDataFile> perf_file;  // io thread only: open while reads succeed
  std::shared_ptr<sampling::TargetProcess> process;  // io thread only: held from one dump to the next, until one finds it gone
  std::mutex mu;             // guards everything below
  TargetState state;
  std::optional<Trigger> incident;  // a burst is running for it
  std::uint32_t burst_received = 0;
  double last_incident = -1e18;
  log::RateLimit failure_log{std::chrono::minutes(1)};
  bool logged_failing = false;
  sampling::PodLookup pod;   // targets.kubernetes: its namespace, pod and container, or why not
  // A dump's text streams from the io thread to the processing thread (DumpRequest::chunks),
  // each dump under a token of its own, so chunks of a dump given up (the scheduler's
  // watchdog) that arrive late never reach the next dump's stream.
  std::uint64_t last_token = 0;      // io thread only: the latest dump handed a sink
  std::uint64_t stream_token = 0;    // the dump whose text state's stream holds
  std::uint64_t closed_token = 0;    // dumps up to this one were delivered: their chunks are dropped
  std::chrono::steady_clock::duration stream_cost{};  // processing time spent on the stream's chunks
  // Its publications to the exporter (Daemon::Impl::publish), on the processing thread.
  std::chrono::steady_clock::time_point published{};
  std::optional<boost::asio::steady_timer> publish_timer;  // made on first use; waits on the io thread, fires on the processing thread
  bool publish_due = false;  // the timer runs: the latest sample is published when it fires
  bool removed = false;      // its series are gone from the exporter, or the daemon stops: nothing publishes it again
};

struct Daemon::Impl : std::enable_shared_from_this<Daemon::Impl> {
  explicit Impl(DaemonSettings s);

  // daemon.cpp
  void start();
  void shutdown();
  void wait_signal();
  void discover();
  void discover_step(std::uint64_t round);
  void reconcile(const std::vector<sampling::DiscoveredJvm>& found);  // targets added and lost, the rescan re-armed
  void add_target(const sampling::DiscoveredJvm& jvm);
  void remove_target(sampling::TargetKey key);
  void label_pod(Watched& w);
  void relabel_pods();
  void start_acting_as_targets();
  /// The exporter's input for `w` (its mutex held): the state's metrics with its pod's labels.
  static exporter::TargetMetrics metrics_of(Watched& w);
  void on_tick(sampling::TargetKey key, bool dump_follows);
  void on_dump(sampling::DumpEvent event);
  /// `perf`: the counters of the tick the dump followed, applied first.
  void process(const std::shared_ptr<Watched>& w, sampling::DumpEvent event, std::uint64_t missed, std::uint64_t token,
               const std::optional<Watched::TickPerf>& perf);
  /// Where a dump's text goes: read into buffers of `chunks` (ChunkPool::chunk_bytes each) and each one,
  /// filled, posted to the processing thread under the dump's token.
  sampling::TextChunks text_chunks(const std::shared_ptr<Watched>& w);
  bool stream_chunk(Watched& w, std::uint64_t token, std::string_view chunk);
  /// The target's latest state to the exporter, at most once per kPublishEvery (w->mu held,
  /// processing thread).
  void publish(const std::shared_ptr<Watched>& w);
  void log_outcome(Watched& w, bool burst);
  void trim_heap();
  void trim_heap_after_incident();
  void follow_incident(const std::shared_ptr<Watched>& w, bool burst);
  void finish_incident(Watched& w);
  void reload();
  void apply(const config::Config& c);
  void beat();
  ProcessingSettings processing_settings() const;
  sampling::ScheduleOptions schedule() const;
  void backend(const sampling::DumpRequest& request, std::function<void(sampling::DumpRecord)> done);
  /// The attach backend's dump in the form the target's FormChooser picks; the result goes back to it.
  void attach_backend(const std::shared_ptr<Watched>& w, sampling::DumpRequest request,
                      std::function<void(sampling::DumpRecord)> done);
  std::shared_ptr<Watched> find_pid(int pid) const;
  std::shared_ptr<Watched> find(sampling::TargetKey key) const;
  std::shared_ptr<Watched> find(std::string_view label) const;

  // api.cpp
  void add_routes();
  void add_page_routes();  // `/`, its assets, /incidents/...
  /// A deferred response computed on the API thread; 503 when max_api_pending wait already.
  http::Response on_api_thread(std::function<http::Response()> work);
  http::Response threads_by_cpu(const http::Request& request, const http::Params& params);  // api.cpp

  DaemonSettings settings;
  config::Config config;        // io thread
  IncidentPolicy incidents;     // processing thread (set through it)
  boost::asio::io_context io;
  boost::asio::thread_pool worker{1};
  // Keeps io.run() going from start() until shutdown() has stopped every publication (shutdown()).
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> io_until_published;
  boost::asio::thread_pool api{1};           // API requests: they take targets' mutexes
  static constexpr int max_api_pending = 16;
  std::atomic<int> api_pending{0};
  log::RateLimit target_limit_log{std::chrono::minutes(1)};
  log::RateLimit pod_label_log{std::chrono::minutes(1)};  // targets without Kubernetes labels
  exporter::Exporter exporter;
  ChunkPool chunks;  // the dump text's buffers, io thread to processing thread and back
  std::uint32_t samples_since_trim_check = 0;  // processing thread (trim_heap)
  sampling::Scheduler scheduler;
  http::Router router;
  http::Server server;
  boost::asio::signal_set signals{io};
  boost::asio::steady_timer rescan_timer{io};
  sampling::Discovery discovery;  // io thread: what the rescans found, kept between them
  std::uint64_t discovery_round = 0;  // the rescan in progress; a reload starts a new one
  boost::asio::steady_timer beat_timer{io};
  std::optional<std::regex> match;
  std::map<sampling::TargetKey, std::shared_ptr<Watched>> targets;   // io thread
  sampling::TargetKey next_key = 1;
  std::atomic<std::int64_t> worker_beat{0};  // steady-clock ns of the processing thread's last heartbeat
  bool stopping = false;
};

}  // namespace lockwatch::service
