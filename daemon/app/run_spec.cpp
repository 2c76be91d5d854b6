// SPDX-License-Identifier: Apache-2.0
// `lockwatch run`'s table, apart from the daemon: the front end shows it in `lockwatch --help`
// without linking what the daemon links.
#include "run_command.hpp"

namespace lockwatch::app {
namespace {

constexpr FlagSpec flag_table[] = {
    {"--config", "FILE", "the YAML config file (docs/configuration.md); without it, the defaults"},
    {"--pid", "PID", "a JVM to watch; the flags' pids replace the file's targets.pids", true},
    {"--match", "REGEX", "watch the JVMs whose command line matches (targets.match)"},
    {"--interval", "DURATION", "time between samples of a target (interval)"},
    {"--listen", "HOST:PORT", "the HTTP endpoint's address (listen)"},
    {"--ring-size", "N", "samples kept per target (ring.samples)"},
    {"--backend", "attach|jstack", "how dumps are taken (backend)"},
    {"--incident-dir", "DIR", "where incident evidence is written (incidents.directory)"},
    {"--log-level", "LEVEL", "trace, debug, info, warn, error or off (log.level)"},
    {"--web.config.file", "FILE", "TLS and basic auth for the HTTP endpoint, node_exporter's format"},
};

constexpr CommandSpec spec{
    "run",
    "the daemon: samples JVMs, serves /metrics and an API, keeps incident evidence",
    "",
    "  Samples the JVMs on this machine (or the given ones) and serves metrics and an API.\n"
    "  Flags override the config file; with no PID, match or config every JVM is watched.\n"
    "  SIGHUP reloads the config file and the web config file; SIGTERM or SIGINT stops.\n",
    flag_table,
};

}  // namespace

const CommandSpec& run_spec() { return spec; }

}  // namespace lockwatch::app
