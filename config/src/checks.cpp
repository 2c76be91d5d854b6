// SPDX-License-Identifier: Apache-2.0
// Range, format and cross-setting rules over a typed Config.
#include "checks.hpp"

#include <algorithm>
#include <regex>
#include <utility>

#include "lockwatch/config/units.hpp"

namespace lockwatch::config::detail {
namespace {

class Checker {
 public:
  std::vector<Problem> problems;

  void fail(std::vector<std::string> keys, std::string message) {
    problems.push_back({std::move(keys), std::move(message)});
  }

  template <class T>
  void in_range(const std::string& key, T value, Range range) {
    if (std::cmp_less(value, range.min) || std::cmp_greater(value, range.max))
      fail({key}, range_message(std::to_string(value), range));
  }

  void positive(const std::string& key, std::chrono::milliseconds value) {
    if (value.count() <= 0) fail({key}, "must be greater than 0, got " + format_duration(value));
  }

  void at_least(const std::string& key, std::uint64_t bytes, std::uint64_t min) {
    if (bytes < min) fail({key}, "must be at least " + format_size(min) + ", got " + format_size(bytes));
  }
};

void check_top_level(Checker& c, const Config& config) {
  if (auto problem = listen_problem(config.listen); !problem.empty()) c.fail({"listen"}, problem);
  c.positive("interval", config.interval);
  c.positive("timeout", config.timeout);
  // A relative path would depend on the daemon's working directory; empty already means "search".
  if (!config.jstack_path.empty() && config.jstack_path.front() != '/')
    c.fail({"jstack_path"}, "must be an absolute path, or empty to use $JAVA_HOME/bin/jstack or PATH");
  c.in_range("max_concurrent_dumps", config.max_concurrent_dumps, limits::max_concurrent_dumps);
  if (config.locks.mode == LockPolicy::Mode::every) c.in_range("locks.every", config.locks.every, limits::lock_every);
}

void check_regex(Checker& c, const std::string& key, const std::string& pattern) {
  try {
    std::regex compiled(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    c.fail({key}, "not a valid regular expression (ECMAScript): " + std::string(e.what()));
  }
}

void check_targets(Checker& c, const TargetSettings& targets) {
  for (std::size_t i = 0; i < targets.pids.size(); ++i) {
    const auto key = "targets.pids[" + std::to_string(i) + "]";
    c.in_range(key, targets.pids[i], limits::pid);
    const auto first = std::find(targets.pids.begin(), targets.pids.end(), targets.pids[i]);
    if (first != targets.pids.begin() + static_cast<std::ptrdiff_t>(i))
      c.fail({key}, std::to_string(targets.pids[i]) + " is listed twice");
  }
  if (!targets.match.empty()) check_regex(c, "targets.match", targets.match);
  c.positive("targets.rescan", targets.rescan);
  c.in_range("targets.max", targets.max, limits::max_targets);
  const auto& k = targets.kubernetes;
  if (!k.pod_logs.empty() && k.pod_logs.front() != '/')
    c.fail({"targets.kubernetes.pod_logs"}, "must be an absolute path (the kubelet's /var/log/pods, mounted read-only)");
  if (!k.container_logs.empty() && k.container_logs.front() != '/')
    c.fail({"targets.kubernetes.container_logs"}, "must be an absolute path (the kubelet's /var/log/containers)");
  if (!k.container_logs.empty() && k.pod_logs.empty())
    c.fail({"targets.kubernetes.container_logs", "targets.kubernetes.pod_logs"},
           "names containers of the pods that targets.kubernetes.pod_logs names: set pod_logs too");
}

void check_attach(Checker& c, const Config& config) {
  c.in_range("attach.idle_uid", config.attach.idle_uid, limits::idle_id);
  c.in_range("attach.idle_gid", config.attach.idle_gid, limits::idle_id);
  if (config.attach.as == AttachAs::target && config.backend == Backend::jstack)
    c.fail({"attach.as", "backend"}, "target needs backend attach: the jstack tool would run with lockwatch's own ids");
}

void check_limits(Checker& c, const ReplyLimits& l) {
  c.at_least("limits.max_reply_bytes", l.max_reply_bytes, limits::min_reply_bytes);
  c.in_range("limits.max_threads", l.max_threads, limits::max_threads);
  c.at_least("limits.max_line_bytes", l.max_line_bytes, limits::min_line_bytes);
  if (l.max_line_bytes > limits::max_line_bytes)
    c.fail({"limits.max_line_bytes"}, "must be at most " + format_size(limits::max_line_bytes) + ", got " + format_size(l.max_line_bytes));
}

void check_ring_and_analysis(Checker& c, const RingSettings& ring, const AnalysisSettings& analysis) {
  c.in_range("ring.samples", ring.samples, limits::ring_samples);
  c.at_least("ring.max_bytes", ring.max_bytes, limits::min_ring_bytes);
  c.in_range("analysis.top_k", analysis.top_k, limits::top_k);
  c.in_range("analysis.stuck_samples", analysis.stuck_samples, limits::stuck_samples);
  c.in_range("analysis.neighbour_window", analysis.neighbour_window, limits::neighbour_window);
  c.at_least("analysis.max_bytes", analysis.max_bytes, limits::min_correlator_bytes);
  if (analysis.stuck_samples > ring.samples)
    c.fail({"analysis.stuck_samples", "ring.samples"},
           std::to_string(analysis.stuck_samples) + " is more than ring.samples (" + std::to_string(ring.samples) +
               "): no thread could ever be reported stuck");
  for (std::size_t i = 0; i < analysis.event_loop_pools.size(); ++i)
    if (analysis.event_loop_pools[i].empty())
      c.fail({"analysis.event_loop_pools[" + std::to_string(i) + "]"}, "an empty glob matches no thread");
}

void check_incidents(Checker& c, const IncidentSettings& incidents) {
  if (incidents.enabled && incidents.directory.empty())
    c.fail({"incidents.directory", "incidents.enabled"}, "must be set while incidents are enabled");
  c.in_range("incidents.blocked_threshold", incidents.blocked_threshold, limits::blocked_threshold);
  c.in_range("incidents.park_threshold", incidents.park_threshold, limits::blocked_threshold);
  c.in_range("incidents.resource_threshold", incidents.resource_threshold, limits::blocked_threshold);
  c.in_range("incidents.contended_enters_per_second", incidents.contended_enters_per_second,
             limits::contended_enters_per_second);
  c.in_range("incidents.burst_count", incidents.burst_count, limits::burst_count);
  c.positive("incidents.burst_interval", incidents.burst_interval);
  c.positive("incidents.min_interval", incidents.min_interval);
  c.at_least("incidents.max_bytes", incidents.max_bytes, limits::min_incident_bytes);
}

void check_tls(Checker& c, const TlsServerSettings& tls) {
  const std::string at = "tls_server_config.";
  if (tls.cert_file.empty()) c.fail({at + "cert_file", "tls_server_config"}, "must be set to serve TLS (with key_file)");
  if (tls.key_file.empty()) c.fail({at + "key_file", "tls_server_config"}, "must be set to serve TLS (with cert_file)");
  const bool verify = tls.client_auth == ClientAuth::require_and_verify;
  if (verify && tls.client_ca_file.empty())
    c.fail({at + "client_ca_file", at + "client_auth_type"}, "must be set with client_auth_type RequireAndVerifyClientCert: "
                                                             "the CA that client certificates must be signed by");
  // As node_exporter: a CA without a policy would silently accept clients without certificates.
  if (!verify && !tls.client_ca_file.empty())
    c.fail({at + "client_auth_type", at + "client_ca_file"}, "must be RequireAndVerifyClientCert when client_ca_file is set");
}

bool bcrypt_char(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' || ch == '/';
}

}  // namespace

bool is_bcrypt_hash(std::string_view hash) {
  if (hash.size() != 60 || !(hash.starts_with("$2a$") || hash.starts_with("$2b$") || hash.starts_with("$2y$"))) return false;
  if (hash[4] < '0' || hash[4] > '3' || hash[5] < '0' || hash[5] > '9' || hash[6] != '$') return false;
  const int cost = (hash[4] - '0') * 10 + (hash[5] - '0');
  return cost >= 4 && cost <= 31 && std::all_of(hash.begin() + 7, hash.end(), bcrypt_char);
}

std::vector<Problem> check_web(const WebSettings& web) {
  Checker c;
  if (web.tls) check_tls(c, *web.tls);
  for (const auto& [user, hash] : web.basic_auth_users) {
    const auto key = "basic_auth_users." + user;
    // Basic auth sends "user:password": a ':' in the name cannot be told from the password's.
    if (user.empty() || user.find(':') != std::string::npos) c.fail({key}, "a user name must be non-empty and hold no ':'");
    if (!is_bcrypt_hash(hash))
      c.fail({key}, "expected a bcrypt hash like $2y$10$ followed by 53 characters (htpasswd -nBC 10 USER)");
  }
  return std::move(c.problems);
}

std::string range_message(std::string_view value, Range range) {
  return "must be between " + std::to_string(range.min) + " and " + std::to_string(range.max) + ", got " +
         std::string(value);
}

std::vector<Problem> check_config(const Config& config) {
  Checker c;
  check_top_level(c, config);
  check_targets(c, config.targets);
  check_attach(c, config);
  check_limits(c, config.limits);
  check_ring_and_analysis(c, config.ring, config.analysis);
  check_incidents(c, config.incidents);
  c.in_range("http.max_connections", config.http.max_connections, limits::max_connections);
  c.in_range("http.max_connections_per_client", config.http.max_connections_per_client, limits::max_connections);
  c.positive("http.request_timeout", config.http.request_timeout);
  c.positive("http.header_timeout", config.http.header_timeout);
  return std::move(c.problems);
}

}  // namespace lockwatch::config::detail
