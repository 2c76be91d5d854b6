// SPDX-License-Identifier: Apache-2.0
// The YAML config: defaults, every key, each kind of error at its line and column.
// `lockwatch check-config` itself: check_config_command_test.cpp.
#include <catch2/catch.hpp>

#include <filesystem>

#include "lockwatch/config/load.hpp"
#include "lockwatch/config/units.hpp"
#include "test_support.hpp"

using namespace lockwatch;
using namespace std::chrono_literals;
using config::Config;
using config::ConfigError;

namespace {

config::LoadResult load(std::string_view yaml) { return config::load_config_text(yaml, "test.yaml"); }

// The errors of a text that must not load, one "LINE:COL: message" string each.
std::vector<std::string> errors_of(std::string_view yaml) {
  const auto result = load(yaml);
  REQUIRE_FALSE(result.ok());
  std::vector<std::string> out;
  for (const auto& e : result.errors) {
    CHECK(e.file == "test.yaml");
    out.push_back(std::to_string(e.line) + ":" + std::to_string(e.column) + ": " + e.message);
  }
  return out;
}

// The one error of a text with exactly one problem.
std::string error_of(std::string_view yaml) {
  const auto errors = errors_of(yaml);
  REQUIRE(errors.size() == 1);
  return errors.front();
}

Config loaded(std::string_view yaml) {
  const auto result = load(yaml);
  for (const auto& e : result.errors) FAIL_CHECK(config::to_string(e));
  REQUIRE(result.ok());
  return *result.config;
}

std::string temp_file(const std::string& name, std::string_view text) {
  const auto path = std::filesystem::temp_directory_path() / ("lockwatch-config-test-" + name);
  test::write_file(path, text);
  return path.string();
}

}  // namespace

TEST_CASE("config: defaults suit a sidecar and pass their own checks", "[config]") {
  const Config c;
  CHECK(c.listen == "127.0.0.1:9465");
  CHECK(c.interval == 1s);
  CHECK(c.timeout == 10s);
  CHECK(c.backend == config::Backend::attach);
  CHECK(c.jstack_path.empty());
  CHECK(c.max_concurrent_dumps == 2);
  CHECK(c.locks.mode == config::LockPolicy::Mode::never);
  CHECK(c.targets.pids.empty());
  CHECK(c.targets.match.empty());
  CHECK(c.targets.rescan == 5s);
  CHECK(c.ring.samples == 600);
  CHECK(c.ring.max_bytes == 32 * config::MiB);
  CHECK(c.analysis.top_k == 20);
  CHECK(c.analysis.stuck_samples == 3);
  CHECK(c.analysis.neighbour_window == 1);
  CHECK(c.analysis.event_loop_pools ==
        std::vector<std::string>{"reactor-http-nio-*", "reactor-http-epoll-*", "nioEventLoopGroup-*", "epollEventLoopGroup-*", "multiThreadIoEventLoopGroup-*", "vert.x-eventloop-thread-*", "XNIO-* I/O-*"});
  CHECK(c.incidents.enabled);
  CHECK(c.incidents.directory == "/var/lib/lockwatch/incidents");
  CHECK(c.incidents.blocked_threshold == 20);
  CHECK(c.incidents.contended_enters_per_second == 0);
  CHECK(c.incidents.burst_count == 10);
  CHECK(c.incidents.burst_interval == 100ms);
  CHECK(c.incidents.min_interval == 10min);
  CHECK(c.incidents.max_bytes == 256 * config::MiB);
  CHECK(c.http.max_connections == 64);
  CHECK(c.http.request_timeout == 5s);
  CHECK(c.log.level == config::LogLevel::info);
  CHECK(config::validate(c).empty());
}

TEST_CASE("config: an empty file, comments only or an empty document give the defaults", "[config]") {
  CHECK(loaded("") == Config{});
  CHECK(loaded("# nothing set yet\n\n") == Config{});
  CHECK(loaded("---\n") == Config{});
  CHECK(loaded("ring:\ntargets:\n") == Config{});  // empty sections: their defaults
}

TEST_CASE("config: every key is read", "[config]") {
  const auto c = loaded(R"(
listen: "[::1]:9000"
interval: 250ms
timeout: 3s
backend: jstack
jstack_path: /opt/jdk/bin/jstack
max_concurrent_dumps: 4
locks: {every: 10}
attach:
  as: self
  idle_uid: 4000
  idle_gid: 4001
limits:
  max_reply_bytes: 8MiB
  max_threads: 9000
  max_line_bytes: 4KiB
targets:
  pids: [101, 202]
  match: "-jar shop\\.jar"
  rescan: 1m
  max: 7
  kubernetes:
    pod_logs: /var/log/pods
    container_logs: /var/log/containers
ring:
  samples: 120
  max_bytes: 512KiB
analysis:
  top_k: 50
  stuck_samples: 5
  neighbour_window: 0
  event_loop_pools: ["worker-*"]
  max_bytes: 2MiB
incidents:
  enabled: false
  directory: /tmp/incidents
  blocked_threshold: 0
  park_threshold: 7
  resource_threshold: 0
  contended_enters_per_second: 5000
  burst_count: 3
  burst_interval: 2s
  min_interval: 1h
  max_bytes: 1GiB
http:
  max_connections: 8
  max_connections_per_client: 3
  request_timeout: 30s
  header_timeout: 1500ms
log:
  level: debug
)");
  CHECK(c.limits.max_reply_bytes == 8 * config::MiB);
  CHECK(c.limits.max_threads == 9000);
  CHECK(c.limits.max_line_bytes == 4 * config::KiB);
  CHECK(c.targets.max == 7);
  CHECK(c.targets.kubernetes.pod_logs == "/var/log/pods");
  CHECK(c.targets.kubernetes.container_logs == "/var/log/containers");
  CHECK(c.attach.idle_uid == 4000);
  CHECK(c.attach.idle_gid == 4001);
  CHECK(c.analysis.max_bytes == 2 * config::MiB);
  CHECK(c.http.max_connections_per_client == 3);
  CHECK(c.http.header_timeout == 1500ms);
  CHECK(c.listen == "[::1]:9000");
  CHECK(c.interval == 250ms);
  CHECK(c.timeout == 3s);
  CHECK(c.backend == config::Backend::jstack);
  CHECK(c.jstack_path == "/opt/jdk/bin/jstack");
  CHECK(c.max_concurrent_dumps == 4);
  CHECK(c.locks == config::LockPolicy{config::LockPolicy::Mode::every, 10});
  CHECK(c.targets.pids == std::vector<int>{101, 202});
  CHECK(c.targets.match == "-jar shop\\.jar");
  CHECK(c.targets.rescan == 1min);
  CHECK(c.ring.samples == 120);
  CHECK(c.ring.max_bytes == 512 * config::KiB);
  CHECK(c.analysis.top_k == 50);
  CHECK(c.analysis.stuck_samples == 5);
  CHECK(c.analysis.neighbour_window == 0);
  CHECK(c.analysis.event_loop_pools == std::vector<std::string>{"worker-*"});
  CHECK_FALSE(c.incidents.enabled);
  CHECK(c.incidents.directory == "/tmp/incidents");
  CHECK(c.incidents.blocked_threshold == 0);
  CHECK(c.incidents.park_threshold == 7);
  CHECK(c.incidents.resource_threshold == 0);
  CHECK(c.incidents.contended_enters_per_second == 5000);
  CHECK(c.incidents.burst_count == 3);
  CHECK(c.incidents.burst_interval == 2s);
  CHECK(c.incidents.min_interval == 1h);
  CHECK(c.incidents.max_bytes == 1024 * config::MiB);
  CHECK(c.http.max_connections == 8);
  CHECK(c.http.request_timeout == 30s);
  CHECK(c.log.level == config::LogLevel::debug);
}

TEST_CASE("config: attach.as target and the node agent's Kubernetes keys, with their checks", "[config]") {
  CHECK(loaded("attach: {as: target}\n").attach.as == config::AttachAs::target);
  CHECK(loaded("attach: {as: self}\n").attach.as == config::AttachAs::self);
  CHECK(error_of("attach:\n  as: root\n") == "2:7: attach.as: expected one of self, target, got 'root'");
  CHECK(error_of("attach:\n  idle_uid: 0\n") == "2:13: attach.idle_uid: must be between 1 and 4294967294, got 0");
  // The jstack tool runs as lockwatch: it cannot take each JVM's ids.
  CHECK(error_of("backend: jstack\nattach:\n  as: target\n") ==
        "3:7: attach.as: target needs backend attach: the jstack tool would run with lockwatch's own ids");
  CHECK(error_of("targets:\n  kubernetes:\n    pod_logs: var/log/pods\n") ==
        "3:15: targets.kubernetes.pod_logs: must be an absolute path (the kubelet's /var/log/pods, mounted read-only)");
  CHECK(error_of("targets:\n  kubernetes:\n    container_logs: /var/log/containers\n") ==
        "3:21: targets.kubernetes.container_logs: names containers of the pods that targets.kubernetes.pod_logs names: "
        "set pod_logs too");
  const auto summary = config::summary(loaded("attach: {as: target}\ntargets:\n  kubernetes: {pod_logs: /var/log/pods}\n"));
  CHECK(summary.find("attach as each target (idle uid 65534 gid 65534)") != std::string::npos);
  CHECK(summary.find("Kubernetes labels from /var/log/pods") != std::string::npos);
  CHECK(config::summary(Config{}).find("attach as") == std::string::npos);  // the sidecar's summary is unchanged
}

TEST_CASE("config: lock policy spellings, booleans and empty lists", "[config]") {
  CHECK(loaded("locks: on_demand\n").locks.mode == config::LockPolicy::Mode::on_demand);
  CHECK(loaded("locks:\n  every: 1\n").locks == config::LockPolicy{config::LockPolicy::Mode::every, 1});
  CHECK_FALSE(loaded("incidents: {enabled: no}\n").incidents.enabled);
  CHECK(loaded("incidents: {enabled: yes}\n").incidents.enabled);
  CHECK(loaded("analysis:\n  event_loop_pools: []\n").analysis.event_loop_pools.empty());
  CHECK(loaded("analysis:\n  event_loop_pools:\n").analysis.event_loop_pools.empty());
  CHECK(loaded("targets:\n  pids:\n    - 7\n").targets.pids == std::vector<int>{7});
  CHECK(loaded("interval: 30\n").interval == 30s);  // a bare number is seconds
}

TEST_CASE("durations: units, bare seconds, and what is refused", "[config][units]") {
  using config::parse_duration;
  CHECK(parse_duration("250ms") == 250ms);
  CHECK(parse_duration("10s") == 10s);
  CHECK(parse_duration("1m") == 1min);
  CHECK(parse_duration("1h") == 1h);
  CHECK(parse_duration("45") == 45s);
  CHECK(parse_duration("0") == 0ms);  // parses; the config requires > 0 separately
  CHECK(parse_duration("0ms") == 0ms);
  CHECK(parse_duration("9223372036854775807ms") == std::chrono::milliseconds::max());
  CHECK(parse_duration("2562047788015h") == std::chrono::hours(2562047788015));
  CHECK_FALSE(parse_duration("2562047788016h"));           // overflows milliseconds
  CHECK_FALSE(parse_duration("9223372036854775808ms"));
  CHECK_FALSE(parse_duration("99999999999999999999999s"));  // overflows the number itself
  CHECK_FALSE(parse_duration("-1s"));
  CHECK_FALSE(parse_duration("1d"));
  CHECK_FALSE(parse_duration("1S"));
  CHECK_FALSE(parse_duration("1.5s"));
  CHECK_FALSE(parse_duration("1 s"));
  CHECK_FALSE(parse_duration("+1s"));
  CHECK_FALSE(parse_duration("ms"));
  CHECK_FALSE(parse_duration(""));
}

TEST_CASE("sizes: binary units, plain bytes, and what is refused", "[config][units]") {
  using config::parse_size;
  CHECK(parse_size("512KiB") == 512u * 1024);
  CHECK(parse_size("32MiB") == 32u * 1024 * 1024);
  CHECK(parse_size("1GiB") == 1ULL << 30);
  CHECK(parse_size("2TiB") == 2ULL << 40);
  CHECK(parse_size("100B") == 100u);
  CHECK(parse_size("1048576") == 1048576u);
  CHECK(parse_size("0") == 0u);
  CHECK(parse_size("18446744073709551615") == 18446744073709551615ULL);
  CHECK(parse_size("16777215TiB") == 16777215ULL << 40);
  CHECK_FALSE(parse_size("16777216TiB"));  // 2^64
  CHECK_FALSE(parse_size("18446744073709551616"));
  CHECK_FALSE(parse_size("-1"));
  CHECK_FALSE(parse_size("32MB"));  // decimal or binary? refused rather than guessed
  CHECK_FALSE(parse_size("32M"));
  CHECK_FALSE(parse_size("1.5GiB"));
  CHECK_FALSE(parse_size("KiB"));
  CHECK_FALSE(parse_size(""));
}

TEST_CASE("durations and sizes print in the largest exact unit", "[config][units]") {
  CHECK(config::format_duration(1500ms) == "1500ms");
  CHECK(config::format_duration(2min) == "2m");
  CHECK(config::format_duration(2h) == "2h");
  CHECK(config::format_duration(0ms) == "0s");
  CHECK(config::format_size(32 * config::MiB) == "32MiB");
  CHECK(config::format_size(1000) == "1000B");
  CHECK(config::format_size(0) == "0B");
  for (std::string_view d : {"250ms", "10s", "3m", "5h"}) CHECK(config::format_duration(*config::parse_duration(d)) == d);
}

TEST_CASE("listen addresses: IPv4, bracketed IPv6, host names", "[config]") {
  const auto v4 = config::parse_listen("0.0.0.0:9465");
  REQUIRE(v4);
  CHECK(v4->host == "0.0.0.0");
  CHECK(v4->port == 9465);
  const auto v6 = config::parse_listen("[::1]:80");
  REQUIRE(v6);
  CHECK(v6->host == "::1");
  CHECK(v6->port == 80);
  for (std::string_view ok : {"localhost:1", "127.0.0.1:0", "metrics.example.org:65535", "[2001:db8::7:1]:443",
                              "[::ffff:10.0.0.1]:80", "[1:2:3:4:5:6:7:8]:80", "[::]:80"})
    CHECK(config::parse_listen(ok));
  for (std::string_view bad : {":9465", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "1.2.3.256:80",
                               "1.2.3:80", "::1:9465", "[::1]9465", "[::1:80", "[1:2:3:4:5:6:7:8:9]:80",
                               "[1::2::3]:80", "[fe80::1%eth0]:80", "bad_host:80", "-host:80", "host:http"})
    CHECK_FALSE(config::parse_listen(bad));
}

TEST_CASE("enum names read back", "[config]") {
  CHECK(config::parse_backend("jstack") == config::Backend::jstack);
  CHECK_FALSE(config::parse_backend("JSTACK"));
  for (auto level : {config::LogLevel::trace, config::LogLevel::warn, config::LogLevel::off})
    CHECK(config::parse_log_level(config::to_string(level)) == level);
  CHECK(config::to_string(config::LockPolicy{config::LockPolicy::Mode::every, 5}) == "every 5 samples");
}

TEST_CASE("config errors: YAML syntax, at yaml-cpp's position", "[config]") {
  CHECK(error_of("interval: 1s\ntimeout: 2s: 3s\n") == "2:12: invalid YAML: illegal map value");
  CHECK(error_of("targets:\n  pids: [1, 2\n") == "3:1: invalid YAML: end of sequence flow not found");
}

TEST_CASE("config errors: a control character YAML does not allow, at its place", "[config]") {
  using namespace std::string_view_literals;
  // yaml-cpp took the NUL in a plain scalar for an escape and read "\\U"'s eight hex digits
  // past the end of the text (the config fuzzer's find).
  CHECK(error_of("resc\x11\0U;"sv) == "1:5: invalid YAML: control character 0x11 is not allowed in YAML text");
  CHECK(error_of("interval: 1s\nresc\0U;"sv) ==
        "2:5: invalid YAML: a NUL byte; a config is UTF-8 text (is this file UTF-16 or UTF-32?)");
  CHECK(error_of("\xff\xfei\0n\0"sv) ==
        "1:4: invalid YAML: a NUL byte; a config is UTF-8 text (is this file UTF-16 or UTF-32?)");
  CHECK(error_of("\xef\xbb\xbfinterval: 1s\x7f\n"sv) == "1:13: invalid YAML: control character 0x7f is not allowed in YAML text");
  // Tab, line feed and carriage return are YAML's own.
  const auto config = loaded("interval: 2s\r\ntimeout: 1s\t# a comment\r\n");
  CHECK(config.interval == std::chrono::seconds(2));
  CHECK(config.timeout == std::chrono::seconds(1));
}

TEST_CASE("config errors: wrong types point at the value", "[config]") {
  CHECK(error_of("interval: abc\n") == "1:11: interval: expected a duration like 200ms, 1s, 1m, 1h, got 'abc'");
  CHECK(error_of("ring:\n  samples: lots\n") == "2:12: ring.samples: expected a whole number, got 'lots'");
  CHECK(error_of("ring:\n  samples: 1.5\n") == "2:12: ring.samples: expected a whole number, got '1.5'");
  CHECK(error_of("incidents:\n  enabled: maybe\n") == "2:12: incidents.enabled: expected true or false, got 'maybe'");
  CHECK(error_of("timeout: [1s]\n") == "1:10: timeout: expected a duration like 200ms, 1s, 1m, 1h, got a list");
  CHECK(error_of("listen: {host: x}\n") == "1:9: listen: expected a string, got a mapping");
  CHECK(error_of("targets:\n  pids: 1234\n") ==
        "2:9: targets.pids: expected a list of process ids like [1234, 5678], got '1234'");
  CHECK(error_of("targets:\n  pids: [1, x]\n") == "2:13: targets.pids[1]: expected a whole number, got 'x'");
  CHECK(error_of("ring: 600\n") == "1:7: ring: expected a mapping with keys samples, max_bytes, got '600'");
  CHECK(error_of("- listen\n") == "1:1: expected settings as 'key: value' lines, got a list");
}

TEST_CASE("config errors: a key without a value points at the key", "[config]") {
  CHECK(errors_of("interval:\ntimeout: 1s\n") ==
        std::vector<std::string>{"1:1: interval: expected a duration like 200ms, 1s, 1m, 1h, got nothing"});
}

TEST_CASE("config errors: durations and sizes say what is wrong", "[config]") {
  CHECK(error_of("timeout: -5s\n") == "1:10: timeout: a duration cannot be negative, got '-5s'");
  CHECK(error_of("timeout: 1d\n") == "1:10: timeout: unknown unit 'd' in '1d' (use 200ms, 1s, 1m, 1h)");
  CHECK(error_of("timeout: 1.5s\n") == "1:10: timeout: fractions are not supported, use a smaller unit; got '1.5s'");
  CHECK(error_of("timeout: 9999999999999h\n") == "1:10: timeout: '9999999999999h' is too large");
  CHECK(error_of("timeout: 0s\n") == "1:10: timeout: must be greater than 0, got 0s");
  CHECK(error_of("ring:\n  max_bytes: 32MB\n") ==
        "2:14: ring.max_bytes: unknown unit 'MB' in '32MB' (use 512KiB, 32MiB, 1GiB or plain bytes)");
  CHECK(error_of("ring:\n  max_bytes: 1KiB\n") == "2:14: ring.max_bytes: must be at least 64KiB, got 1KiB");
  CHECK(error_of("incidents:\n  max_bytes: 99999999999999999999\n") ==
        "2:14: incidents.max_bytes: '99999999999999999999' is too large");
}

TEST_CASE("config errors: out-of-range numbers name the range", "[config]") {
  CHECK(error_of("ring:\n  samples: 0\n") == "2:12: ring.samples: must be between 1 and 100000, got 0");
  CHECK(error_of("ring:\n  samples: 100001\n") == "2:12: ring.samples: must be between 1 and 100000, got 100001");
  CHECK(error_of("ring:\n  samples: -1\n") == "2:12: ring.samples: must be between 1 and 100000, got -1");
  CHECK(error_of("analysis:\n  top_k: 99999999999999999999999\n") ==
        "2:10: analysis.top_k: must be between 1 and 1000, got 99999999999999999999999");
  CHECK(error_of("locks: {every: 0}\n") == "1:16: locks.every: must be between 1 and 1000000, got 0");
  CHECK(error_of("targets:\n  pids: [12, -3]\n") ==
        "2:14: targets.pids[1]: must be between 1 and 2147483647, got -3");
  CHECK(error_of("targets:\n  pids: [12, 13, 12]\n") == "2:18: targets.pids[2]: 12 is listed twice");
  CHECK(error_of("http:\n  max_connections: 0\n") == "2:20: http.max_connections: must be between 1 and 10000, got 0");
}

TEST_CASE("config errors: enums list the allowed values", "[config]") {
  CHECK(error_of("backend: jstak\n") == "1:10: backend: expected one of attach, jstack, got 'jstak'");
  CHECK(error_of("log:\n  level: verbose\n") ==
        "2:10: log.level: expected one of trace, debug, info, warn, error, off, got 'verbose'");
  CHECK(error_of("locks: always\n") == "1:8: locks: expected never, on_demand or {every: N}, got 'always'");
  CHECK(error_of("locks: {each: 2}\n") == "1:8: locks: expected never, on_demand or {every: N}, got a mapping");
}

TEST_CASE("config errors: regex, listen address, paths, cross-setting rules", "[config]") {
  CHECK(error_of("targets:\n  match: \"java(\"\n").starts_with(
      "2:10: targets.match: not a valid regular expression (ECMAScript): "));
  CHECK(error_of("listen: 127.0.0.1:99999\n") ==
        "1:9: listen: the port must be a number from 0 to 65535 (0: any free port), got '99999'");
  CHECK(error_of("listen: \"::1:9465\"\n") == "1:9: listen: an IPv6 address goes in brackets: [::1]:9465");
  CHECK(error_of("listen: 9465\n") == "1:9: listen: expected HOST:PORT like 127.0.0.1:9465 or [::1]:9465, got '9465'");
  CHECK(error_of("listen: 300.1.1.1:80\n") == "1:9: listen: '300.1.1.1' is not an IPv4 address");
  CHECK(error_of("jstack_path: bin/jstack\n") ==
        "1:14: jstack_path: must be an absolute path, or empty to use $JAVA_HOME/bin/jstack or PATH");
  CHECK(error_of("analysis:\n  event_loop_pools: [\"a-*\", \"\"]\n") ==
        "2:29: analysis.event_loop_pools[1]: an empty glob matches no thread");
  CHECK(error_of("incidents:\n  directory: \"\"\n") ==
        "2:14: incidents.directory: must be set while incidents are enabled");
  CHECK(loaded("incidents:\n  enabled: false\n  directory: \"\"\n").incidents.directory.empty());
  // Only ring.samples is in the file: the error points there, and names both settings.
  CHECK(error_of("ring:\n  samples: 2\n") ==
        "2:12: analysis.stuck_samples: 3 is more than ring.samples (2): no thread could ever be reported stuck");
}

TEST_CASE("config errors: unknown keys, with a suggestion when one is close", "[config]") {
  CHECK(error_of("intervall: 1s\n") == "1:1: unknown key 'intervall' (did you mean 'interval'?)");
  CHECK(error_of("Timeout: 1s\n") == "1:1: unknown key 'Timeout' (did you mean 'timeout'?)");
  CHECK(error_of("ring:\n  max-bytes: 1MiB\n") == "2:3: unknown key 'ring.max-bytes' (did you mean 'ring.max_bytes'?)");
  CHECK(error_of("ring:\n  smaples: 5\n") == "2:3: unknown key 'ring.smaples' (did you mean 'ring.samples'?)");
  CHECK(error_of("samples: 5\n") == "1:1: unknown key 'samples' (did you mean 'ring.samples'?)");
  CHECK(error_of("max_bytes: 5\n") ==
        "1:1: unknown key 'max_bytes' (did you mean 'ring.max_bytes' or 'analysis.max_bytes' or 'incidents.max_bytes'?)");
  CHECK(error_of("ring.samples: 5\n") ==
        "1:1: unknown key 'ring.samples' (write 'ring:' with 'samples:' indented below it)");
  CHECK(error_of("http:\n  port: 80\n") ==
        "2:3: unknown key 'http.port'; known keys here: max_connections, max_connections_per_client, request_timeout, "
        "header_timeout");
}

TEST_CASE("config errors: duplicate keys and a second document", "[config]") {
  CHECK(error_of("interval: 1s\ninterval: 2s\n") == "2:1: duplicate key 'interval' (first set on line 1)");
  CHECK(error_of("interval: 1s\n---\ninterval: 2s\n") ==
        "3:1: a config file holds one YAML document; remove the '---' before this one");
}

TEST_CASE("config errors: all of them at once, in file order", "[config]") {
  const auto errors = errors_of(R"(interval: 0s
bogus: 1
ring:
  samples: 0
  max_bytes: lots
backend: jstak
targets:
  match: "("
)");
  REQUIRE(errors.size() == 6);
  CHECK(errors[0].starts_with("1:11: interval: must be greater than 0"));
  CHECK(errors[1].starts_with("2:1: unknown key 'bogus'"));
  CHECK(errors[2].starts_with("4:12: ring.samples: must be between 1 and 100000"));
  CHECK(errors[3].starts_with("5:14: ring.max_bytes: expected a size"));
  CHECK(errors[4].starts_with("6:10: backend: expected one of attach, jstack"));
  CHECK(errors[5].starts_with("8:10: targets.match: not a valid regular expression"));
}

TEST_CASE("config: validate() checks a Config changed after loading, without positions", "[config]") {
  Config c;
  c.interval = 0ms;
  c.listen = "localhost";
  c.targets.pids = {5, 5};
  c.targets.match = "[";
  const auto errors = config::validate(c);
  REQUIRE(errors.size() == 4);
  for (const auto& e : errors) {
    CHECK(e.file.empty());
    CHECK(e.line == 0);
    CHECK(e.column == 0);
  }
  CHECK(errors[0].message == "listen: expected HOST:PORT like 127.0.0.1:9465 or [::1]:9465, got 'localhost'");
  CHECK(errors[1].message == "interval: must be greater than 0, got 0s");
  CHECK(errors[2].message == "targets.pids[1]: 5 is listed twice");
  CHECK(errors[3].message.starts_with("targets.match: not a valid regular expression"));
  CHECK(config::to_string(errors[1]) == "interval: must be greater than 0, got 0s");
}

TEST_CASE("config errors format as FILE:LINE:COL: message", "[config]") {
  CHECK(config::to_string(ConfigError{"a.yaml", 3, 7, "boom"}) == "a.yaml:3:7: boom");
  CHECK(config::to_string(ConfigError{"a.yaml", 0, 0, "cannot open"}) == "a.yaml: cannot open");
  CHECK(config::to_string(ConfigError{"", 0, 0, "bare"}) == "bare");
}

TEST_CASE("config files: read from disk, or an error naming the file and the reason", "[config]") {
  const auto good = temp_file("good.yaml", "interval: 2s\n");
  const auto ok = config::load_config_file(good);
  REQUIRE(ok.ok());
  CHECK(ok.config->interval == 2s);

  const auto bad = temp_file("bad.yaml", "\ninterval: x\n");
  const auto failed = config::load_config_file(bad);
  REQUIRE(failed.errors.size() == 1);
  CHECK(config::to_string(failed.errors[0]).starts_with(bad + ":2:11: interval: expected a duration"));

  const auto missing = config::load_config_file("/nonexistent/lockwatch.yaml");
  REQUIRE(missing.errors.size() == 1);
  CHECK(config::to_string(missing.errors[0]) == "/nonexistent/lockwatch.yaml: cannot open: No such file or directory");

  const auto dir = config::load_config_file(std::filesystem::temp_directory_path().string());
  REQUIRE(dir.errors.size() == 1);
  CHECK(dir.errors[0].message == "cannot read: Is a directory");
}

TEST_CASE("deploy/lockwatch.yaml loads and documents the defaults", "[config]") {
  const auto result = config::load_config_file((test::source_dir() / "deploy" / "lockwatch.yaml").string());
  for (const auto& e : result.errors) FAIL_CHECK(config::to_string(e));
  REQUIRE(result.ok());
  CHECK(*result.config == Config{});  // the example states every default; keep them in step
}
