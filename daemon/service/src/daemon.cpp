// SPDX-License-Identifier: Apache-2.0
#include "daemon_impl.hpp"

#include <malloc.h>

#include <csignal>
#include <cstdio>
#include <set>
#include <stdexcept>

#include "lockwatch/sampling/act_as.hpp"
#include "lockwatch/sampling/attach_client.hpp"
#include "lockwatch/sampling/jstack_source.hpp"
#include "lockwatch/sampling/perfdata.hpp"
#include "lockwatch/service/target_name.hpp"

namespace lockwatch::service {
namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

std::string num(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

sampling::SchedulerOptions scheduler_options(const config::Config& config) {
  sampling::SchedulerOptions o;
  o.max_concurrent = config.max_concurrent_dumps;
  o.backoff_initial = 1s, o.backoff_max = 5min, o.watchdog_grace = 2s;
  o.verdict_from_processing = true;  // the parser says whether an ok reply held a dump
  return o;
}

double unix_now() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }
std::int64_t steady_ns() { return std::chrono::steady_clock::now().time_since_epoch().count(); }

http::Security security_of(const config::WebSettings& web) {
  http::Security security;
  security.basic_auth_users.insert(web.basic_auth_users.begin(), web.basic_auth_users.end());
  if (!web.tls) return security;
  const auto& tls = *web.tls;
  const bool verify = tls.client_auth == config::ClientAuth::require_and_verify;
  security.tls = http::TlsOptions{tls.cert_file, tls.key_file, verify ? tls.client_ca_file : "",
                                  tls.min_version == config::TlsVersion::tls13 ? http::TlsVersion::tls13 : http::TlsVersion::tls12};
  return security;
}

http::ServerOptions server_options(const config::Config& c) {
  http::ServerOptions o;
  const auto listen = config::parse_listen(c.listen);
  if (listen) o.host = listen->host, o.port = listen->port;
  o.max_connections = c.http.max_connections;
  o.max_connections_per_client = c.http.max_connections_per_client;
  o.request_timeout = c.http.request_timeout;
  o.header_timeout = c.http.header_timeout;
  o.security = security_of(c.web);
  return o;
}

IncidentPolicy incident_policy(const config::IncidentSettings& s) {
  return {s.enabled, s.directory, s.blocked_threshold, s.park_threshold, s.resource_threshold,
          static_cast<double>(s.contended_enters_per_second),
          s.burst_count, s.burst_interval, s.min_interval, s.max_bytes};
}

sampling::LocksPolicy locks_policy(const config::LockPolicy& p) {
  using M = config::LockPolicy::Mode;
  if (p.mode == M::every) return {sampling::LocksPolicy::Mode::every, p.every};
  return {p.mode == M::on_demand ? sampling::LocksPolicy::Mode::on_demand : sampling::LocksPolicy::Mode::never, 0};
}

std::optional<std::regex> compile(const std::string& pattern) {
  if (pattern.empty()) return std::nullopt;
  return std::regex(pattern, std::regex::ECMAScript);
}

sampling::FormMode form_mode(config::DumpFormat f) {
  if (f == config::DumpFormat::print) return sampling::FormMode::print;
  return f == config::DumpFormat::json ? sampling::FormMode::json : sampling::FormMode::automatic;
}

log::Level log_level(config::LogLevel l) { return static_cast<log::Level>(static_cast<int>(l)); }

// The last processed dump's evidence goes to the chooser before it chooses or hears of a
// later failure, so it learns in the order the dumps came.
void take_form_note(Watched& w) {
  std::optional<Watched::FormNote> note;
  {
    std::lock_guard lock(w.form_note_mu);
    note = std::exchange(w.form_note, std::nullopt);
  }
  if (note) w.form.observe(note->form, sampling::Outcome::ok, note->evidence, note->at);
}

}  // namespace

Daemon::Impl::Impl(DaemonSettings s)
    : settings(std::move(s)),
      config(settings.config),
      incidents(incident_policy(config.incidents)),
      exporter(exporter::ExporterOptions{config.analysis.top_k, {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}, settings.version}),
      scheduler(io, scheduler_options(config),
                [this](const sampling::DumpRequest& r, std::function<void(sampling::DumpRecord)> done) { backend(r, std::move(done)); },
                {[this](sampling::TargetKey k, bool dump_follows) { on_tick(k, dump_follows); }, [this](sampling::DumpEvent e) { on_dump(std::move(e)); }}),
      server(io, server_options(config), [this](const http::Request& r) { return router.handle(r); }),
      match(compile(config.targets.match)) {
  add_routes();
}

void Daemon::Impl::start() {
  // Alive from the start: /healthz may be asked before the processing thread has run the first
  // beat (it said "stalled" then); one that never answers still shows 10 s on.
  worker_beat = steady_ns();
  io_until_published.emplace(io.get_executor());
  server.start();
  if (config.attach.as == config::AttachAs::target) start_acting_as_targets();
  signals.add(SIGINT), signals.add(SIGTERM), signals.add(SIGHUP);
  wait_signal();
  log::info("lockwatch started", {{"version", settings.version}, {"config", config::summary(config)}});
  log::info("serving", {{"metrics", (server.tls() ? "https://" : "http://") + server_options(config).host + ":" + std::to_string(server.port()) + "/metrics"}});
  beat();
  discover();
}

void Daemon::Impl::wait_signal() {
  signals.async_wait([this](boost::system::error_code ec, int signo) {
    if (ec) return;
    if (signo != SIGHUP) return log::info("stopping", {{"signal", signo == SIGINT ? "SIGINT" : "SIGTERM"}}), shutdown();
    reload();
    wait_signal();
  });
}

void Daemon::Impl::shutdown() {
  if (std::exchange(stopping, true)) return;
  scheduler.stop();
  server.stop();
  boost::system::error_code ignored;
  signals.cancel(ignored);
  rescan_timer.cancel();
  beat_timer.cancel();
  // The processing thread may be publishing a sample right now, and a publication arms a timer
  // in the io thread's reactor. Had io.run() returned meanwhile (nothing else left for it), that
  // wait would never end, and worker.join() would wait for it forever (seen: a daemon hung on
  // SIGTERM). So the io thread runs until the processing thread, behind what it has queued, has
  // stopped every publication (a publication due would also hold the daemon for up to a second).
  asio::post(worker, [self = shared_from_this(), all = targets] {
    for (const auto& [key, w] : all) {
      std::lock_guard lock(w->mu);
      w->removed = true;
      if (w->publish_timer) w->publish_timer->cancel();
    }
    asio::post(self->io, [self] { self->io_until_published.reset(); });
  });
}

// From here on every thread runs as the idle ids; this one (the io thread, which samples) keeps
// CAP_SETUID and CAP_SETGID in its permitted set only, the processing and API threads - which
// parse what targets send - nothing at all (sampling/act_as.hpp).
void Daemon::Impl::start_acting_as_targets() {
  if (auto error = sampling::start_acting_as_targets({config.attach.idle_uid, config.attach.idle_gid}); !error.empty())
    throw std::runtime_error(error);
  for (auto* pool : {&worker, &api}) asio::post(*pool, [] { sampling::drop_thread_capabilities(); });
  log::info("attaching as each target", {{"idle_uid", std::to_string(config.attach.idle_uid)},
                                         {"idle_gid", std::to_string(config.attach.idle_gid)}});
}

// Liveness of the daemon itself: the processing thread answers a post within a second.
void Daemon::Impl::beat() {
  asio::post(worker, [self = shared_from_this()] { self->worker_beat = steady_ns(); });
  beat_timer.expires_after(1s);
  beat_timer.async_wait([this](boost::system::error_code ec) {
    if (!ec && !stopping) beat();
  });
}

// A rescan looks at this many processes per turn of the io thread, which also runs the
// scheduler's timers, the attach sockets and the HTTP server: a crowded node, or a container
// forking thousands of processes, never holds it for a whole /proc (2 000 processes took ~40 ms
// in one go).
constexpr std::size_t kDiscoveryStep = 128;

void Daemon::Impl::discover() {
  const sampling::ProcFs proc(settings.proc_root);
  if (config.targets.pids.empty()) {
    discovery.begin(proc);
    return discover_step(++discovery_round);
  }
  std::vector<sampling::DiscoveredJvm> found;
  for (int pid : config.targets.pids)
    if (auto jvm = sampling::discover_pid(proc, pid)) found.push_back(*jvm);
    else if (auto start = proc.start_time(pid)) found.push_back({{pid, *start}, 0, "", "", proc.cmdline(pid).value_or(""), 0, 0,
                                                                  proc.argv(pid).value_or(std::vector<std::string>{})});
  reconcile(found);
}

void Daemon::Impl::discover_step(std::uint64_t round) {
  if (stopping || round != discovery_round) return;  // a reload has started another rescan
  if (discovery.step(sampling::ProcFs(settings.proc_root), kDiscoveryStep))
    return asio::post(io, [self = shared_from_this(), round] { self->discover_step(round); });
  reconcile(discovery.result({match, {}}));
}

void Daemon::Impl::reconcile(const std::vector<sampling::DiscoveredJvm>& found) {
  std::set<sampling::TargetId> seen;
  for (const auto& jvm : found) seen.insert(jvm.id);
  for (auto it = targets.begin(); it != targets.end();) {
    const auto key = (it++)->first;
    if (!seen.count(targets[key]->jvm.id)) remove_target(key);
  }
  std::set<sampling::TargetId> known;
  for (const auto& [key, w] : targets) known.insert(w->jvm.id);
  // Known targets are never displaced: a container forking processes with hsperfdata files
  // cannot push the JVM that was there first out of the bound, only fail to add more.
  std::uint64_t skipped = 0;
  for (const auto& jvm : found) {
    if (known.count(jvm.id)) continue;
    if (targets.size() >= config.targets.max) ++skipped;
    else add_target(jvm);
  }
  relabel_pods();
  exporter.set_targets_skipped(skipped);
  std::uint64_t suppressed = 0;
  if (skipped > 0 && target_limit_log.allow(std::chrono::steady_clock::now(), suppressed))
    log::warn("target limit reached; not watching more JVMs",
              {{"max", std::to_string(config.targets.max)}, {"skipped", std::to_string(skipped)},
               {"suppressed", std::to_string(suppressed)}});
  rescan_timer.expires_after(config.targets.rescan);
  rescan_timer.async_wait([this](boost::system::error_code ec) {
    if (!ec && !stopping) discover();
  });
}

void Daemon::Impl::add_target(const sampling::DiscoveredJvm& jvm) {
  std::string label = target_label(jvm.argv);
  std::set<std::string> used;
  for (const auto& [key, w] : targets) used.insert(w->label);
  for (int n = 2; used.count(label); ++n) label = target_label(jvm.argv) + "-" + std::to_string(n);
  auto w = std::make_shared<Watched>(next_key++, jvm, label, processing_settings());
  w->form.set_mode(form_mode(config.dump_format));
  label_pod(*w);
  targets.emplace(w->key, w);
  scheduler.add(w->key, jvm.id.pid, schedule(), 0ms);
  log::info("target added", {{"target", label}, {"pid", std::to_string(jvm.id.pid)}, {"cmdline", jvm.cmdline.substr(0, 200)}});
}

void Daemon::Impl::remove_target(sampling::TargetKey key) {
  auto w = find(key);
  if (!w) return;
  scheduler.remove(key);
  targets.erase(key);
  log::info("target lost", {{"target", w->label}, {"pid", std::to_string(w->jvm.id.pid)}});
  // After any of its dumps still queued for processing.
  asio::post(worker, [self = shared_from_this(), w] {
    std::lock_guard lock(w->mu);
    w->removed = true;
    if (w->publish_timer) w->publish_timer->cancel();
    self->exporter.remove(w->label);
  });
}

// targets.kubernetes: the pod and container from the JVM's cgroup and the kubelet's log tree.
// A JVM that cannot be placed keeps its target label and says why (/api/v1/targets, a log
// line at most once a minute); a pod whose log directory is not there yet is looked up again
// at every rescan.
void Daemon::Impl::label_pod(Watched& w) {
  const auto& k = config.targets.kubernetes;
  if (k.pod_logs.empty()) return;
  auto found = sampling::lookup_pod(settings.proc_root, w.jvm.id.pid, sampling::PodLogTree(k.pod_logs, k.container_logs));
  std::lock_guard lock(w.mu);
  if (found.labels == w.pod.labels && found.error == w.pod.error) return;
  w.pod = std::move(found);
  std::uint64_t suppressed = 0;
  if (!w.pod.error.empty() && pod_label_log.allow(std::chrono::steady_clock::now(), suppressed))
    log::warn("kubernetes labels incomplete", {{"target", w.label}, {"pid", std::to_string(w.jvm.id.pid)},
                                               {"reason", w.pod.error}, {"suppressed", std::to_string(suppressed)}});
  else if (w.pod.error.empty() && w.pod.labels)
    log::info("kubernetes labels", {{"target", w.label}, {"namespace", w.pod.labels->namespace_name},
                                    {"pod", w.pod.labels->pod}, {"container", w.pod.labels->container}});
}

void Daemon::Impl::relabel_pods() {
  for (const auto& [key, w] : targets) {
    bool retry = false;
    {
      std::lock_guard lock(w->mu);
      retry = w->pod.retry;
    }
    if (retry) label_pod(*w);
  }
}

exporter::TargetMetrics Daemon::Impl::metrics_of(Watched& w) {
  auto m = w.state.take_metrics();
  if (w.pod.labels) m.kubernetes = {w.pod.labels->namespace_name, w.pod.labels->pod, w.pod.labels->container};
  return m;
}

void Daemon::Impl::backend(const sampling::DumpRequest& request, std::function<void(sampling::DumpRecord)> done) {
  if (config.backend == config::Backend::jstack) {
    const auto path = config.jstack_path.empty() ? sampling::find_jstack() : config.jstack_path;
    return sampling::async_jstack_dump(io, request, path, std::move(done));
  }
  if (auto w = find_pid(request.pid)) return attach_backend(w, request, std::move(done));
  sampling::async_attach_dump(io, request, {settings.proc_root, true, 5s}, std::move(done));
}

// The chooser sees every result of its target, on this (the io) thread; a JSON dump the JVM
// cannot write is logged here with when JSON is tried again, besides the failed sample itself.
void Daemon::Impl::attach_backend(const std::shared_ptr<Watched>& w, sampling::DumpRequest request,
                                  std::function<void(sampling::DumpRecord)> done) {
  take_form_note(*w);
  const auto now = std::chrono::steady_clock::now();
  request.form = w->form.choose(now);
  if (auto why = w->form.reason(now); why != w->form_reason) {
    w->form_reason = why;
    log::info("dump form", {{"target", w->label}, {"form", std::string(sampling::to_string(request.form))}, {"reason", why}});
  }
  request.chunks = text_chunks(w);
  // Its pidfd, /proc/PID and status, held: a session reads the status again only when the
  // JVM's ids changed (sampling::TargetProcess), not on every sample.
  if (!w->process) w->process = std::make_shared<sampling::TargetProcess>(sampling::ProcFs(settings.proc_root), request.pid);
  sampling::AttachOptions options{settings.proc_root, true, 5s};
  options.process = w->process;
  // A failure is observed here (a JSON dump the JVM cannot write sends the target to print);
  // an ok dump once it is parsed, with the evidence read from it (process()).
  auto observe = [w, done = std::move(done)](sampling::DumpRecord result) {
    if (result.outcome == sampling::Outcome::target_gone) w->process.reset();  // the next dump opens it again
    if (result.outcome != sampling::Outcome::ok) {
      take_form_note(*w);
      w->form.observe(result.form, result.outcome, sampling::FormEvidence{}, std::chrono::steady_clock::now());
    }
    if (result.outcome == sampling::Outcome::dump_file_failed)
      log::warn("JSON thread dump failed; taking Thread.print for 10m, then trying JSON again",
                {{"target", w->label}, {"error", result.error}});
    done(std::move(result));
  };
  sampling::async_attach_dump(io, request, options, std::move(observe));
}

// hsperfdata costs the JVM nothing: read on every tick, even while dumps back off, from the
// file opened at the first (sampling::TargetPerfDataFile). The counters are published at once
// only when no dump follows: otherwise they go to the processing thread with that dump
// (on_dump), whose processing publishes them with the dump's own figures - rendering every
// series of the target twice per tick was ~6% of a profile at 5 Hz, and a post of their own
// woke the idle processing thread once more per sample.
void Daemon::Impl::on_tick(sampling::TargetKey key, bool dump_follows) {
  auto w = find(key);
  if (!w || w->jvm.perfdata_beneath_root.empty()) return;
  if (!w->perf_file) {
    const sampling::ActAs as({w->jvm.uid, w->jvm.gid});  // attach.as target: the JVM's hsperfdata directory is 0700
    if (!as) return;
    w->perf_file = sampling::TargetPerfDataFile::open(settings.proc_root, w->jvm.id.pid, w->jvm.perfdata_beneath_root);
    if (!w->perf_file) return;
  }
  auto data = w->perf_file->read(nullptr, sampling::PerfDataKeep::counters);
  if (!data) return void(w->perf_file.reset());  // opened again, and checked again, next tick
  Watched::TickPerf perf{sampling::counters_of(*data), unix_now()};
  if (dump_follows) return void(w->tick_perf = std::move(perf));
  w->tick_perf.reset();  // these are newer
  asio::post(worker, [self = shared_from_this(), w, perf = std::move(perf)] {
    std::lock_guard lock(w->mu);
    w->state.add_perf(perf.counters, perf.at);
    self->publish(w);
  });
}

// Posted behind every chunk of the dump (the backend gives its last before it delivers the
// record, and the processing thread runs posts in order), so process() finds the dump's whole
// text in its stream. The scheduler has one dump of a target in flight and delivers it before
// starting another: the latest token is its.
void Daemon::Impl::on_dump(sampling::DumpEvent event) {
  auto w = find(event.target);
  if (!w) return;
  const auto missed = scheduler.stats(event.target).value_or(sampling::TargetStats{}).missed_ticks;
  asio::post(worker, [self = shared_from_this(), w, event = std::move(event), missed, token = w->last_token,
                      perf = std::exchange(w->tick_perf, std::nullopt)]() mutable {
    self->process(w, std::move(event), missed, token, perf);
  });
}

// Each post may wake the processing thread (a futex and two context switches), and each read
// of the socket is a round of the event loop: the reply is read straight into buffers of
// ChunkPool::chunk_bytes, each posted once full - the first with the second, or at the
// reply's end (TextChunks::hold_first), so a reply of up to two wakes the processing thread
// once, after the reads rather than among them. A read takes all the socket holds (the JVM's
// side buffers ~200 KiB): a 1.5 MB dump in ~10 reads and 2 posts, where reads of 64 KiB
// copied into buffers took ~25 reads and a copy of every byte. Buffers of 256 KiB (6 posts)
// woke the processing thread twice as often, and its CPU per sample was ~10% higher
// (docs/performance.md).
//
// The parser counts the reply's thread entries as it goes (limits.max_threads over the
// stream), so the io thread does not scan every byte for them: the processing thread raises
// the dump's flag once they pass the bound, and the io thread drops the connection at its
// next read.
sampling::TextChunks Daemon::Impl::text_chunks(const std::shared_ptr<Watched>& w) {
  auto take = [self = shared_from_this()] {
    auto buffer = self->chunks.take();
    if (buffer.capacity() < ChunkPool::chunk_bytes) buffer.reserve(ChunkPool::chunk_bytes);
    return buffer;
  };
  auto past = std::make_shared<std::atomic<bool>>(false);
  auto give = [self = shared_from_this(), w, past, token = ++w->last_token](std::string&& chunk, std::size_t text_bytes) {
    asio::post(self->worker, [self, w, past, token, text_bytes, chunk = std::move(chunk)]() mutable {
      if (self->stream_chunk(*w, token, std::string_view(chunk).substr(0, text_bytes)))
        past->store(true, std::memory_order_relaxed);
      self->chunks.give(std::move(chunk));
    });
  };
  auto past_thread_bound = [past] { return past->load(std::memory_order_relaxed); };
  sampling::TextChunks out{std::move(take), std::move(give), std::move(past_thread_bound)};
  out.hold_first = true;
  return out;
}

// The chunk is parsed and written to the ring at once: no dump's text is held whole. True
// once the stream holds more thread entries than limits.max_threads.
bool Daemon::Impl::stream_chunk(Watched& w, std::uint64_t token, std::string_view chunk) {
  std::lock_guard lock(w.mu);
  if (token <= w.closed_token) return false;  // its dump was delivered (or given up) already
  const auto started = std::chrono::steady_clock::now();
  if (w.stream_token != token || !w.state.streaming()) {
    w.state.begin_stream();  // abandons a stream some other dump left open
    w.stream_token = token, w.stream_cost = {};
  }
  w.state.feed_stream(chunk);
  w.stream_cost += std::chrono::steady_clock::now() - started;
  return w.state.stream_past_thread_bound();
}

void Daemon::Impl::process(const std::shared_ptr<Watched>& w, sampling::DumpEvent event, std::uint64_t missed,
                           std::uint64_t token, const std::optional<Watched::TickPerf>& perf) {
  std::lock_guard lock(w->mu);
  if (perf) w->state.add_perf(perf->counters, perf->at);  // the tick's, before its dump
  const auto started = std::chrono::steady_clock::now();
  const bool burst = event.dump.burst;
  const auto seq = event.seq;
  w->closed_token = std::max(w->closed_token, token);
  const bool ours = w->stream_token == token;
  if (!ours) w->state.abandon_stream();  // not this dump's text
  const auto streamed_cost = ours ? w->stream_cost : std::chrono::steady_clock::duration{};
  w->stream_cost = {};
  const auto form = event.dump.form;
  const bool observe = event.dump.source == sampling::DumpSource::attach;
  w->state.add_dump(std::move(event.dump));
  w->state.set_scheduler_counts(missed);
  log_outcome(*w, burst);
  follow_incident(w, burst);
  publish(w);
  trim_heap();
  // The parser's verdict counts for the target's back-off; what this sample cost the shared
  // processing thread paces its next dump. Its cost counts the chunks fed while it streamed.
  // The form chooser (io thread) learns what the parsed dump says of the JVM. Neither is a
  // post to the io thread, which woke it once more per sample: both wait for the io thread's
  // next decision (Scheduler::processed, Watched::form_note).
  if (auto evidence = observe ? w->state.last_evidence() : std::nullopt) {
    std::lock_guard note_lock(w->form_note_mu);
    w->form_note = Watched::FormNote{form, *evidence, std::chrono::steady_clock::now()};
  }
  scheduler.processed(w->key, seq, w->state.last_outcome(), streamed_cost + (std::chrono::steady_clock::now() - started));
}

// A publication serializes every family of the target that changed (~0.3 ms for a 1000-thread
// JVM, a tenth of what a sample costs), and Prometheus scrapes every 15-60 s. So a target is
// published at most once per kPublishEvery: a sample sooner than that is published when the
// second is up, together with any that follow it (the counters are totals, and durations
// accumulate until taken), and /metrics is at most that far behind the latest sample.
constexpr auto kPublishEvery = std::chrono::seconds(1);

void Daemon::Impl::publish(const std::shared_ptr<Watched>& w) {
  if (w->removed || w->publish_due) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - w->published >= kPublishEvery) {
    w->published = now;
    exporter.update(metrics_of(*w));
    return;
  }
  // The timer waits in the io thread's reactor and its handler runs here. Why: a timer of the
  // processing thread's own gives its pool a reactor, and then every post to it (6-8 per
  // sample: the reply's buffers, the record) interrupts that reactor while holding the pool's
  // lock, so the woken thread sleeps once more on the lock: two context switches per post
  // instead of one, and an epoll_ctl and a futex wake on the io thread.
  if (!w->publish_timer) w->publish_timer.emplace(io.get_executor());
  w->publish_due = true;
  w->publish_timer->expires_at(w->published + kPublishEvery);
  w->publish_timer->async_wait(asio::bind_executor(worker, [self = shared_from_this(), w](boost::system::error_code ec) {
    std::lock_guard lock(w->mu);
    w->publish_due = false;
    if (ec || w->removed) return;  // cancelled: the target went, or the daemon stops
    w->published = std::chrono::steady_clock::now();
    self->exporter.update(metrics_of(*w));
  }));
}

// Parsing a dump allocates and frees megabytes; glibc keeps freed pages unless asked, and a
// sidecar's memory limit counts them. But pages given back are faulted in again by the next
// sample (hundreds per sample of a 1000-thread JVM, a tenth of its CPU), so the heap keeps up
// to kKeptFreeHeap of free memory for the next sample and gives back the rest.
// Asking the allocator what it holds walks all its free lists (~0.1 ms), so it is asked
// every kTrimCheckEvery samples.
constexpr std::size_t kKeptFreeHeap = 4u << 20;
constexpr std::uint32_t kTrimCheckEvery = 8;

void Daemon::Impl::trim_heap() {
  if (++samples_since_trim_check < kTrimCheckEvery) return;
  samples_since_trim_check = 0;
  if (::mallinfo2().fordblks > kKeptFreeHeap) ::malloc_trim(kKeptFreeHeap);
}

// An incident renders every sample of the ring (tens of MB of text, one sample at a time)
// and leaves the top of the heap that high: trimmed as above, kKeptFreeHeap of it would stay
// resident until the heap's top moved again, a step of 1-2 MiB in RSS after an incident that
// no sample needs. So the heap is given back whole here - once per incident, at most one a
// min_interval - and the samples after it take what they use again.
void Daemon::Impl::trim_heap_after_incident() {
  samples_since_trim_check = 0;
  ::malloc_trim(0);
}

// State changes are logged once; a target that keeps failing, once a minute.
void Daemon::Impl::log_outcome(Watched& w, bool burst) {
  const auto pid = std::to_string(w.jvm.id.pid);
  if (w.state.last_outcome() == sampling::Outcome::ok) {
    if (std::exchange(w.logged_failing, false)) log::info("sampling recovered", {{"target", w.label}, {"pid", pid}});
    w.failure_log.reset();
    return;
  }
  std::uint64_t suppressed = 0;
  if (!w.failure_log.allow(std::chrono::steady_clock::now(), suppressed)) return;
  w.logged_failing = true;
  log::warn("sampling failed", {{"target", w.label}, {"pid", pid},
                                {"outcome", std::string(sampling::to_string(w.state.last_outcome()))},
                                {"error", w.state.last_error()}, {"suppressed", std::to_string(suppressed)},
                                {"burst", burst ? "true" : "false"}});
}

void Daemon::Impl::follow_incident(const std::shared_ptr<Watched>& w, bool burst) {
  if (w->incident) {
    if (burst && ++w->burst_received >= incidents.burst_count) finish_incident(*w);
    return;
  }
  const double now = unix_now();
  if (now - w->last_incident < std::chrono::duration<double>(incidents.min_interval).count()) return;
  auto trigger = check_trigger(incidents, w->state, now);
  if (!trigger) return;
  w->incident = trigger, w->burst_received = 0, w->last_incident = now;
  log::warn("incident triggered", {{"target", w->label}, {"reason", trigger->reason},
                                   {"value", num(trigger->value)}, {"threshold", num(trigger->threshold)}});
  asio::post(io, [self = shared_from_this(), w, count = incidents.burst_count, interval = incidents.burst_interval] {
    if (self->config.locks.mode == config::LockPolicy::Mode::on_demand) self->scheduler.request_locks(w->key);
    if (count > 0 && self->scheduler.burst(w->key, count, interval)) return;
    asio::post(self->worker, [self, w] {  // no burst possible: keep what the ring has
      std::lock_guard lock(w->mu);
      self->finish_incident(*w);
    });
  });
}

void Daemon::Impl::finish_incident(Watched& w) {
  if (!w.incident) return;
  const auto written = write_incident(incidents, w.state, *w.incident);
  w.incident.reset();
  trim_heap_after_incident();
  if (!written.error.empty()) {
    w.state.count_incident_failure();
    return log::error("incident not written", {{"target", w.label}, {"error", written.error}});
  }
  w.state.count_incident();
  log::warn("incident written", {{"target", w.label}, {"path", written.path.string()},
                                 {"bytes", std::to_string(written.bytes)}, {"removed_for_budget", std::to_string(written.removed.size())}});
}

void Daemon::Impl::reload() {
  std::string error;
  auto next = settings.reload ? settings.reload(error) : std::nullopt;
  if (!next) return log::error("config reload failed; keeping the running config", {{"error", error}});
  // The certificate files are read again even when the web config is unchanged: that is
  // how a rotated certificate (same path, new content) is picked up.
  try {
    server.set_security(security_of(next->web));
  } catch (const std::exception& e) {
    return log::error("config reload failed; keeping the running config", {{"error", e.what()}});
  }
  apply(*next);
  log::info("config reloaded", {{"config", config::summary(config)}});
}

void Daemon::Impl::apply(const config::Config& c) {
  if (c.listen != config.listen) log::warn("listen address changes need a restart", {{"listen", config.listen}});
  if (c.attach != config.attach) log::warn("attach changes need a restart", {{"attach.as", std::string(config::to_string(config.attach.as))}});
  if (c.max_concurrent_dumps != config.max_concurrent_dumps)
    log::warn("max_concurrent_dumps changes need a restart", {{"max_concurrent_dumps", std::to_string(config.max_concurrent_dumps)}});
  const auto keep_listen = config.listen;
  const auto keep_attach = config.attach;
  config = c;
  config.listen = keep_listen;
  config.attach = keep_attach;
  match = compile(config.targets.match);
  log::set_level(log_level(config.log.level));
  for (const auto& [key, w] : targets) scheduler.update(key, schedule()), w->form.set_mode(form_mode(config.dump_format));
  asio::post(worker, [self = shared_from_this(), policy = incident_policy(config.incidents), settings = processing_settings(),
                      targets = targets] {
    self->incidents = policy;
    for (const auto& [key, w] : targets) {
      std::lock_guard lock(w->mu);
      w->state.apply(settings);
    }
  });
  rescan_timer.cancel();  // the rescan restarts with the new filter and period
  asio::post(io, [self = shared_from_this()] {
    if (!self->stopping) self->discover();
  });
}

ProcessingSettings Daemon::Impl::processing_settings() const {
  ProcessingSettings s;
  s.ring = {config.ring.samples, config.ring.max_bytes};
  s.correlator.stuck_samples = config.analysis.stuck_samples;
  s.correlator.neighbour_window = config.analysis.neighbour_window;
  s.correlator.max_bytes = config.analysis.max_bytes;
  s.event_loop_pools = config.analysis.event_loop_pools;
  s.parser.max_line_bytes = config.limits.max_line_bytes;
  s.parser.max_threads = config.limits.max_threads;
  s.parser.max_stream_threads = config.limits.max_threads;  // the reply's bound (text_chunks)
  return s;
}

sampling::ScheduleOptions Daemon::Impl::schedule() const {
  return {config.interval, config.timeout, locks_policy(config.locks), {config.limits.max_reply_bytes, config.limits.max_threads}};
}

std::shared_ptr<Watched> Daemon::Impl::find(sampling::TargetKey key) const {
  auto it = targets.find(key);
  return it == targets.end() ? nullptr : it->second;
}

std::shared_ptr<Watched> Daemon::Impl::find_pid(int pid) const {
  for (const auto& [key, w] : targets)
    if (w->jvm.id.pid == pid) return w;
  return nullptr;
}

std::shared_ptr<Watched> Daemon::Impl::find(std::string_view label) const {
  for (const auto& [key, w] : targets)
    if (w->label == label) return w;
  return nullptr;
}

Daemon::Daemon(DaemonSettings settings) : impl_(std::make_shared<Impl>(std::move(settings))) {
  log::set_level(log_level(impl_->config.log.level));
}

Daemon::~Daemon() {
  impl_->shutdown();
  impl_->worker.join();
  impl_->api.join();
}

void Daemon::start() { impl_->start(); }

int Daemon::run() {
  impl_->io.run();
  impl_->worker.join();
  impl_->api.join();
  log::info("stopped");
  return 0;
}

void Daemon::stop() {
  asio::post(impl_->io, [impl = impl_] { impl->shutdown(); });
}

std::uint16_t Daemon::port() const { return impl_->server.port(); }

}  // namespace lockwatch::service
