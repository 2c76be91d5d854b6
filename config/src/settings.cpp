// SPDX-License-Identifier: Apache-2.0
// Names of the enumerated settings, and the one-line summary of a Config.
#include <array>
#include <utility>

#include "lockwatch/config/config.hpp"
#include "lockwatch/config/units.hpp"

namespace lockwatch::config {
namespace {

constexpr std::array<std::pair<Backend, std::string_view>, 2> backend_names{
    {{Backend::attach, "attach"}, {Backend::jstack, "jstack"}}};
constexpr std::array<std::pair<DumpFormat, std::string_view>, 3> dump_format_names{
    {{DumpFormat::automatic, "auto"}, {DumpFormat::print, "print"}, {DumpFormat::json, "json"}}};
constexpr std::array<std::pair<LogLevel, std::string_view>, 6> level_names{{{LogLevel::trace, "trace"},
                                                                            {LogLevel::debug, "debug"},
                                                                            {LogLevel::info, "info"},
                                                                            {LogLevel::warn, "warn"},
                                                                            {LogLevel::error, "error"},
                                                                            {LogLevel::off, "off"}}};

constexpr std::array<std::pair<AttachAs, std::string_view>, 2> attach_as_names{
    {{AttachAs::self, "self"}, {AttachAs::target, "target"}}};

constexpr std::array<std::pair<TlsVersion, std::string_view>, 2> tls_version_names{
    {{TlsVersion::tls12, "TLS12"}, {TlsVersion::tls13, "TLS13"}}};
constexpr std::array<std::pair<ClientAuth, std::string_view>, 2> client_auth_names{
    {{ClientAuth::none, "NoClientCert"}, {ClientAuth::require_and_verify, "RequireAndVerifyClientCert"}}};

template <class E, std::size_t N>
std::string_view name_of(E value, const std::array<std::pair<E, std::string_view>, N>& names) {
  for (const auto& [v, name] : names)
    if (v == value) return name;
  return "?";
}

template <class E, std::size_t N>
std::optional<E> value_of(std::string_view text, const std::array<std::pair<E, std::string_view>, N>& names) {
  for (const auto& [v, name] : names)
    if (name == text) return v;
  return std::nullopt;
}

std::string describe_targets(const TargetSettings& targets) {
  std::string out;
  for (int pid : targets.pids) out += (out.empty() ? "pids " : ",") + std::to_string(pid);
  if (!targets.match.empty()) out += (out.empty() ? "" : " and ") + std::string("match '") + targets.match + "'";
  if (out.empty()) out = "every JVM";
  out += " (rescan " + format_duration(targets.rescan) + ")";
  if (!targets.kubernetes.pod_logs.empty()) out += ", Kubernetes labels from " + targets.kubernetes.pod_logs;
  return out;
}

std::string describe_incidents(const IncidentSettings& incidents) {
  if (!incidents.enabled) return "off";
  return "on in " + incidents.directory + " (up to " + format_size(incidents.max_bytes) + ")";
}

// "web /etc/lockwatch/web.yaml (TLS13+, client certificates, basic auth for 2 users)".
std::string describe_web(const std::string& file, const WebSettings& web) {
  std::string out;
  if (web.tls) out = std::string(to_string(web.tls->min_version)) + "+";
  if (web.tls && web.tls->client_auth == ClientAuth::require_and_verify) out += ", client certificates";
  const auto users = web.basic_auth_users.size();
  if (users) out += (out.empty() ? "" : ", ") + std::string("basic auth for ") + std::to_string(users) + (users == 1 ? " user" : " users");
  return file + " (" + (out.empty() ? "plain HTTP" : out) + ")";
}

}  // namespace

std::string_view to_string(Backend backend) { return name_of(backend, backend_names); }
std::string_view to_string(LogLevel level) { return name_of(level, level_names); }
std::optional<Backend> parse_backend(std::string_view text) { return value_of(text, backend_names); }
std::string_view to_string(DumpFormat format) { return name_of(format, dump_format_names); }
std::optional<DumpFormat> parse_dump_format(std::string_view text) { return value_of(text, dump_format_names); }
std::optional<LogLevel> parse_log_level(std::string_view text) { return value_of(text, level_names); }
std::string_view to_string(AttachAs as) { return name_of(as, attach_as_names); }
std::optional<AttachAs> parse_attach_as(std::string_view text) { return value_of(text, attach_as_names); }
std::string_view to_string(TlsVersion version) { return name_of(version, tls_version_names); }
std::optional<TlsVersion> parse_tls_version(std::string_view text) { return value_of(text, tls_version_names); }
std::string_view to_string(ClientAuth auth) { return name_of(auth, client_auth_names); }
std::optional<ClientAuth> parse_client_auth(std::string_view text) {
  return text.empty() ? ClientAuth::none : value_of(text, client_auth_names);
}

std::string to_string(const LockPolicy& policy) {
  switch (policy.mode) {
    case LockPolicy::Mode::never: return "never";
    case LockPolicy::Mode::on_demand: return "on_demand";
    case LockPolicy::Mode::every:
      return policy.every == 1 ? "every sample" : "every " + std::to_string(policy.every) + " samples";
  }
  return "?";
}

std::string summary(const Config& c) {
  return "listen " + c.listen + ", interval " + format_duration(c.interval) + ", timeout " +
         format_duration(c.timeout) + ", backend " + std::string(to_string(c.backend)) +
         (c.dump_format == DumpFormat::automatic ? "" : ", dump format " + std::string(to_string(c.dump_format))) + ", locks " +
         to_string(c.locks) +
         (c.attach.as == AttachAs::target ? ", attach as each target (idle uid " + std::to_string(c.attach.idle_uid) +
                                                 " gid " + std::to_string(c.attach.idle_gid) + ")"
                                           : "") +
         ", targets " + describe_targets(c.targets) + ", ring " +
         std::to_string(c.ring.samples) + " samples/" + format_size(c.ring.max_bytes) + ", incidents " +
         describe_incidents(c.incidents) + ", log " + std::string(to_string(c.log.level)) +
         (c.web_config_file.empty() ? "" : ", web " + describe_web(c.web_config_file, c.web));
}

}  // namespace lockwatch::config
