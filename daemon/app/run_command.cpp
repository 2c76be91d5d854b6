// SPDX-License-Identifier: Apache-2.0
#include "run_command.hpp"

#include <charconv>
#include <functional>
#include <map>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "lockwatch/config/load.hpp"
#include "lockwatch/config/units.hpp"
#include "lockwatch/service/daemon.hpp"
#include "lockwatch/service/log.hpp"

namespace lockwatch::app {
namespace {

struct Flags {
  std::string config_file;
  std::vector<std::function<std::string(config::Config&)>> overrides;  // applied in order, after the file
};

template <class T>
bool parse_number(std::string_view text, T& out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && ptr == text.data() + text.size() && out > 0;
}

using Setter = std::function<std::string(config::Config&, const std::string&)>;

const std::map<std::string_view, Setter>& setters() {
  static const std::map<std::string_view, Setter> table{
      {"--pid", [](config::Config& c, const std::string& v) -> std::string {
         int pid = 0;
         if (!parse_number(v, pid)) return "--pid takes a process id";
         return c.targets.pids.push_back(pid), "";
       }},
      {"--match", [](config::Config& c, const std::string& v) { return c.targets.match = v, std::string(); }},
      {"--interval", [](config::Config& c, const std::string& v) -> std::string {
         const auto d = config::parse_duration(v);
         if (!d || d->count() <= 0) return "--interval takes a duration like 200ms, 1s, 1m";
         return c.interval = *d, "";
       }},
      {"--listen", [](config::Config& c, const std::string& v) { return c.listen = v, std::string(); }},
      {"--ring-size", [](config::Config& c, const std::string& v) -> std::string {
         return parse_number(v, c.ring.samples) ? "" : "--ring-size takes a number of samples";
       }},
      {"--backend", [](config::Config& c, const std::string& v) -> std::string {
         const auto b = config::parse_backend(v);
         return b ? (c.backend = *b, "") : "--backend takes attach or jstack";
       }},
      {"--incident-dir", [](config::Config& c, const std::string& v) { return c.incidents.directory = v, std::string(); }},
      {"--web.config.file", [](config::Config& c, const std::string& v) { return c.web_config_file = v, std::string(); }},
      {"--log-level", [](config::Config& c, const std::string& v) -> std::string {
         const auto l = config::parse_log_level(v);
         return l ? (c.log.level = *l, "") : "--log-level takes trace, debug, info, warn, error or off";
       }},
  };
  return table;
}

// The flags as overrides of the file, in command-line order; a bad value is a usage error.
std::string read_flags(const ParsedArgs& args, Flags& flags) {
  bool pids_given = false;
  for (const auto& [flag, given] : args.flags) {
    const std::string value(given);
    if (flag->name == "--config") {
      flags.config_file = value;
      continue;
    }
    const auto& set = setters().at(flag->name);  // every flag of the table but --config has one
    if (flag->name == "--pid" && !std::exchange(pids_given, true))  // the flags' pids replace the file's
      flags.overrides.push_back([](config::Config& c) { return c.targets.pids.clear(), std::string(); });
    config::Config scratch;  // a bad value is a usage error now, not a failed start later
    if (auto e = set(scratch, value); !e.empty()) return e;
    flags.overrides.push_back([set, value](config::Config& c) { return set(c, value); });
  }
  return "";
}

// The web config file the settings name, read on start and on every SIGHUP like the config.
bool read_web_config(config::Config& c, std::string& error) {
  if (c.web_config_file.empty()) return true;
  auto web = config::load_web_config_file(c.web_config_file);
  for (const auto& e : web.errors) error += config::to_string(e) + "\n";
  if (!web.ok()) return false;
  c.web = std::move(*web.web);
  return true;
}

// The file (or the defaults), then the flags, then the checks: the same on start and on SIGHUP.
std::optional<config::Config> effective(const Flags& flags, std::string& error) {
  config::Config c;
  if (!flags.config_file.empty()) {
    auto loaded = config::load_config_file(flags.config_file);
    for (const auto& e : loaded.errors) error += config::to_string(e) + "\n";
    if (!loaded.ok()) return std::nullopt;
    c = *loaded.config;
  }
  for (const auto& o : flags.overrides)
    if (auto e = o(c); !e.empty()) return error = e + "\n", std::nullopt;
  for (const auto& e : config::validate(c)) error += config::to_string(e) + "\n";
  return error.empty() && read_web_config(c, error) ? std::optional(c) : std::nullopt;
}

std::string metrics_url(const config::Config& c, std::uint16_t port) {
  const auto address = config::parse_listen(c.listen);
  std::string host = address ? address->host : "127.0.0.1";
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  if (host == "0.0.0.0" || host == "[::]") host = "127.0.0.1";  // all interfaces: loopback works here
  return (c.web.tls ? "https://" : "http://") + host + ":" + std::to_string(port) + "/metrics";
}

}  // namespace

int run_daemon(std::span<const std::string_view> args, std::ostream& out, std::ostream& err) {
  ParsedArgs parsed;
  const auto& spec = run_spec();
  if (auto code = read_args(spec, args, parsed, out, err)) return *code;
  Flags flags;
  if (auto e = read_flags(parsed, flags); !e.empty()) return usage_error(spec, err, e);
  std::string error;
  auto config = effective(flags, error);
  if (!config) return err << error, 1;
  log::setup(static_cast<log::Level>(static_cast<int>(config->log.level)));
  service::DaemonSettings settings{*config, [flags](std::string& e) { return effective(flags, e); }, LOCKWATCH_VERSION};
  try {
    service::Daemon daemon(std::move(settings));
    daemon.start();
    out << "lockwatch: metrics at " << metrics_url(*config, daemon.port()) << std::endl;
    return daemon.run();
  } catch (const std::exception& e) {
    err << "lockwatch run: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace lockwatch::app
