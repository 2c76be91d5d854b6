// SPDX-License-Identifier: Apache-2.0
// The HTTP routes: metrics and health from stored state on the io thread; the API from
// each target's state under its mutex, taken on the API thread and never on the io thread
// (processing may hold it for a whole sample, and a scrape must never wait for that).
#include <charconv>

#include "daemon_impl.hpp"
#include "lockwatch/config/units.hpp"
#include "lockwatch/report/analyze_report.hpp"
#include "lockwatch/report/json_writer.hpp"
#include "pages.hpp"

namespace lockwatch::service {
namespace {

using http::Params;
using http::Request;
using http::Response;

// targets.kubernetes: "kubernetes": {"namespace", "pod", "container", "error"}, only what is
// known; absent without the switch.
void write_pod(report::JsonWriter& w, const sampling::PodLookup& pod) {
  if (!pod.labels && pod.error.empty()) return;
  w.key("kubernetes").begin_object();
  if (pod.labels) {
    w.key("namespace").value(pod.labels->namespace_name).key("pod").value(pod.labels->pod);
    if (!pod.labels->container.empty()) w.key("container").value(pod.labels->container);
  }
  if (!pod.error.empty()) w.key("error").value(pod.error);
  w.end_object();
}

void write_target(report::JsonWriter& w, const Watched& t) {
  w.begin_object().key("target").value(t.label).key("pid").value(static_cast<std::uint64_t>(t.jvm.id.pid));
  w.key("start_time").value(t.jvm.id.start_time).key("cmdline").value(t.jvm.cmdline);
  w.key("hsperfdata").value(t.jvm.perfdata_path);
  const bool up = t.state.last_outcome() == sampling::Outcome::ok && t.state.ring().size() > 0;
  w.key("up").value(up).key("last_outcome").value(sampling::to_string(t.state.last_outcome()));
  w.key("last_error").value(t.state.last_error()).key("samples").value(static_cast<std::uint64_t>(t.state.ring().size()));
  w.key("ring_bytes").value(t.state.ring().bytes());
  write_pod(w, t.pod);
  w.end_object();
}

void write_sample(report::JsonWriter& w, const store::SampleInfo& s) {
  const auto& d = s.dump;
  w.begin_object().key("id").value(s.id).key("time").value(sampling::unix_seconds(d.started));
  w.key("duration_seconds").value(sampling::seconds(d.elapsed)).key("source").value(sampling::to_string(d.source));
  w.key("form").value(sampling::to_string(d.form)).key("locks").value(d.locks).key("burst").value(d.burst);
  w.key("bytes").value(s.text_bytes).end_object();
}

std::optional<std::uint64_t> number(std::string_view text) {
  std::uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  return ec == std::errc{} && ptr == text.data() + text.size() ? std::optional(v) : std::nullopt;
}

std::string contention_json(const TargetState& state) {
  report::AnalyzeResult result;
  result.inputs.push_back({state.label(), state.correlator().size(), {}});
  result.dump_input.assign(state.correlator().size(), 0);
  result.report = state.correlator().report();
  result.lock_time = state.lock_time().report();
  return report::render_json(result);
}

}  // namespace

// The top -H of an incident: threads by CPU between the oldest and the newest sample of the
// ring. The two texts are copied under the target's mutex and parsed after it is released.
Response Daemon::Impl::threads_by_cpu(const Request& r, const Params& p) {
  const auto sort = r.query.find("sort");
  if (sort == r.query.end() || sort->second != "cpu") return http::bad_request("sort takes cpu");
  const auto limit_arg = r.query.find("limit");
  const auto limit = limit_arg == r.query.end() ? std::optional<std::uint64_t>(20) : number(limit_arg->second);
  if (!limit || *limit == 0 || *limit > 500) return http::bad_request("limit takes a number from 1 to 500");
  auto t = find(std::string_view(p.at("target")));
  if (!t) return http::error_response(404, "no such target");
  return on_api_thread([t, n = static_cast<std::size_t>(*limit)] {
    std::optional<std::string> first, last;
    double t0 = 0, t1 = 0;
    parser::ParserLimits limits;
    {
      std::lock_guard lock(t->mu);
      const auto list = t->state.ring().list();
      if (list.size() >= 2) {
        first = t->state.ring().text(list.front().id), last = t->state.ring().text(list.back().id);
        t0 = sampling::unix_seconds(list.front().dump.started), t1 = sampling::unix_seconds(list.back().dump.started);
      }
      limits = t->state.parser_limits();
    }
    report::JsonWriter w;
    w.begin_object().key("sort").value("cpu").key("window_seconds").value(t1 - t0);
    std::vector<analysis::ThreadCpu> top;
    if (first && last) {
      const auto a = parser::parse_dumps(*first, limits), b = parser::parse_dumps(*last, limits);
      if (!a.empty() && !b.empty()) top = analysis::top_cpu_threads(a.front(), b.front(), t1 - t0, n);
    }
    w.key("cpu_printed").value(!top.empty()).key("threads").begin_array();
    for (const auto& c : top) {
      w.begin_object().key("thread").value(c.thread);
      if (c.java_id) w.key("java_id").value(*c.java_id);
      w.key("pool").value(c.pool).key("cpu_seconds").value(c.cpu_seconds).key("state").value(c.state);
      w.key("top_frames").begin_array();
      for (const auto& f : c.top_frames) w.value(f);
      w.end_array().end_object();
    }
    return http::json_response(w.end_array().end_object().str());
  });
}

// A bounded queue: a client polling the API faster than it is answered gets 503 instead of
// piling up work (and memory) behind the target's mutex.
Response Daemon::Impl::on_api_thread(std::function<Response()> work) {
  if (api_pending.load() >= max_api_pending)
    return http::error_response(503, "too many API requests in progress (" + std::to_string(max_api_pending) + "); retry");
  ++api_pending;
  Response deferred;
  deferred.deferred = [self = shared_from_this(), work = std::move(work)](Response::Reply reply) mutable {
    boost::asio::post(self->api, [self, work = std::move(work), reply = std::move(reply)] {
      Response out;
      try {
        out = work();
      } catch (const std::exception& e) {
        out = http::error_response(500, "internal error: " + std::string(std::string_view(e.what()).substr(0, 200)));
      }
      --self->api_pending;
      reply(std::move(out));
    });
  };
  return deferred;
}

void Daemon::Impl::add_routes() {
  router.add("/metrics", [this](const Request&, const Params&) {
    return Response{200, "text/plain; version=0.0.4; charset=utf-8", exporter.render()};
  });
  router.add("/healthz", [this](const Request&, const Params&) {
    const auto age = std::chrono::steady_clock::now().time_since_epoch() - std::chrono::nanoseconds(worker_beat.load());
    if (age > std::chrono::seconds(10)) return http::error_response(503, "processing thread stalled");
    return http::text_response("ok\n");
  });
  router.add("/api/v1/targets", [this](const Request&, const Params&) {
    std::vector<std::shared_ptr<Watched>> watched;  // the map is the io thread's: copy it here
    for (const auto& [key, t] : targets) watched.push_back(t);
    return on_api_thread([watched = std::move(watched)] {
      report::JsonWriter w;
      w.begin_array();
      for (const auto& t : watched) {
        std::lock_guard lock(t->mu);
        write_target(w, *t);
      }
      return http::json_response(w.end_array().str());
    });
  });
  auto with_target = [this](auto handler) {
    return [this, handler](const Request& r, const Params& p) -> Response {
      auto t = find(std::string_view(p.at("target")));
      if (!t) return http::error_response(404, "no such target");
      return on_api_thread([t, handler, r, p] {
        std::lock_guard lock(t->mu);
        return handler(r, p, t->state);
      });
    };
  };
  router.add("/api/v1/targets/{target}/samples", with_target([](const Request&, const Params&, const TargetState& s) {
    report::JsonWriter w;
    w.begin_array();
    for (const auto& info : s.ring().list()) write_sample(w, info);
    return http::json_response(w.end_array().str());
  }));
  router.add("/api/v1/targets/{target}/samples/{id}", with_target([](const Request&, const Params& p, const TargetState& s) {
    const auto id = number(p.at("id"));
    auto text = id ? s.ring().text(*id) : std::nullopt;
    return text ? http::text_response(std::move(*text)) : http::error_response(404, "no such sample (evicted, or never taken)");
  }));
  router.add("/api/v1/targets/{target}/contention", with_target([](const Request&, const Params&, const TargetState& s) {
    return http::json_response(contention_json(s));
  }));
  router.add("/api/v1/targets/{target}/threads", [this](const Request& r, const Params& p) { return threads_by_cpu(r, p); });
  router.add("/api/v1/targets/{target}/collapsed", with_target([](const Request& r, const Params&, const TargetState& s) {
    const auto state = r.query.find("state");
    const auto samples = r.query.find("samples");
    const auto last = samples == r.query.end() ? std::optional<std::uint64_t>(0) : number(samples->second);
    if (!last) return http::bad_request("samples takes a number");
    return http::text_response(s.stacks().collapsed(state == r.query.end() ? "" : state->second, *last));
  }));
  add_page_routes();
}

// The pages for people (pages.cpp builds them): the live view, its two assets, the incidents.
void Daemon::Impl::add_page_routes() {
  router.add("/", [this](const Request& r, const Params&) {
    std::vector<std::shared_ptr<Watched>> watched;
    for (const auto& [key, t] : targets) watched.push_back(t);
    pages::LiveSettings live{config.incidents.directory, config::format_duration(config.interval), settings.version};
    return on_api_thread([watched = std::move(watched), r, live = std::move(live)] { return pages::live_page(watched, r, live); });
  });
  router.add("/assets/lockwatch.css", [](const Request&, const Params&) {
    return Response{200, "text/css; charset=utf-8", std::string(page::stylesheet())};
  });
  router.add("/assets/lockwatch.js", [](const Request&, const Params&) {
    return Response{200, "text/javascript; charset=utf-8", std::string(page::script())};
  });
  auto incident = [this](const Params& p, std::string file) {
    return on_api_thread([dir = std::filesystem::path(config.incidents.directory), name = p.at("incident"), file = std::move(file),
                          options = processing_settings().correlator, version = settings.version] {
      return pages::incident_response(dir, name, file, options, version);
    });
  };
  router.add("/incidents/{incident}/", [incident](const Request&, const Params& p) { return incident(p, ""); });
  router.add("/incidents/{incident}/{file}", [incident](const Request&, const Params& p) { return incident(p, p.at("file")); });
}

}  // namespace lockwatch::service
