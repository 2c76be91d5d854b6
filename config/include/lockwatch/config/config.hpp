// SPDX-License-Identifier: Apache-2.0
// The daemon's settings as typed values, with defaults for a sidecar next to one JVM.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lockwatch::config {

inline constexpr std::uint64_t KiB = 1ULL << 10;
inline constexpr std::uint64_t MiB = 1ULL << 20;

enum class Backend { attach, jstack };
/// Which thread dump the attach backend takes (docs/sampling.md): `auto` Thread.print until a
/// JDK 21+ JVM shows virtual threads, then the JSON dump; `print` and `json` force one.
enum class DumpFormat { automatic, print, json };
enum class LogLevel { trace, debug, info, warn, error, off };

/// When a dump asks for java.util.concurrent lock owners (jstack -l), which walks the heap
/// while the JVM is stopped: never, only for incident captures and API requests, or every
/// Nth sample.
struct LockPolicy {
  enum class Mode { never, on_demand, every };
  Mode mode = Mode::never;
  std::uint32_t every = 1;  // with Mode::every: every Nth sample of a target, N >= 1
  bool operator==(const LockPolicy&) const = default;
};

/// The node agent: Kubernetes labels for each JVM from what the node has, never the API.
struct KubernetesSettings {
  std::string pod_logs;        // the kubelet's /var/log/pods (empty: no Kubernetes labels)
  std::string container_logs;  // its /var/log/containers (optional): container ids to names
  bool operator==(const KubernetesSettings&) const = default;
};

struct TargetSettings {
  std::vector<int> pids;    // only these processes (empty: no pid filter)
  std::string match;        // ECMAScript regex searched in the command line (empty: no filter)
  std::chrono::milliseconds rescan = std::chrono::seconds(5);
  // Watched at once. Known targets are never displaced: a container that forks processes
  // with hsperfdata files cannot push the real JVM out, only fail to add more.
  std::uint32_t max = 64;
  KubernetesSettings kubernetes;
  bool operator==(const TargetSettings&) const = default;
};

/// Whose ids lockwatch attaches with. `self`: its own (a sidecar as the JVM's user). `target`:
/// each JVM's own effective uid and gid, taken by the sampling thread around the calls that
/// touch that JVM (a node agent watching every user's JVMs; needs uid 0 with CAP_SETUID and
/// CAP_SETGID only, and runs as idle_uid:idle_gid in between).
enum class AttachAs { self, target };

struct AttachSettings {
  AttachAs as = AttachAs::self;
  std::uint32_t idle_uid = 65534;  // nobody
  std::uint32_t idle_gid = 65534;  // nogroup
  bool operator==(const AttachSettings&) const = default;
};

struct RingSettings {
  std::uint32_t samples = 600;        // per target: 10 minutes at the default interval
  std::uint64_t max_bytes = 32 * MiB;  // per target, whichever bound is reached first
  bool operator==(const RingSettings&) const = default;
};

struct AnalysisSettings {
  std::uint32_t top_k = 20;  // label sets per metric family and target before "other"
  std::uint32_t stuck_samples = 3;
  std::uint32_t neighbour_window = 1;
  // Reactor Netty, Netty NIO / epoll / 4.2, Vert.x, Undertow's XNIO I/O threads.
  std::vector<std::string> event_loop_pools{"reactor-http-nio-*",   "reactor-http-epoll-*",          "nioEventLoopGroup-*",
                                            "epollEventLoopGroup-*", "multiThreadIoEventLoopGroup-*", "vert.x-eventloop-thread-*",
                                            "XNIO-* I/O-*"};
  std::uint64_t max_bytes = 32 * MiB;  // per target: the correlator's memory, oldest samples go first
  bool operator==(const AnalysisSettings&) const = default;
};

struct IncidentSettings {
  bool enabled = true;
  std::string directory = "/var/lib/lockwatch/incidents";
  std::uint32_t blocked_threshold = 20;            // 0: no trigger on BLOCKED threads
  std::uint32_t park_threshold = 20;               // 0: no trigger on threads parked on j.u.c. locks
  std::uint32_t resource_threshold = 20;           // 0: no trigger on threads waiting for a resource
  std::uint64_t contended_enters_per_second = 0;   // 0: no trigger on hsperfdata counters
  std::uint32_t burst_count = 10;
  std::chrono::milliseconds burst_interval{100};
  std::chrono::milliseconds min_interval = std::chrono::minutes(10);  // per target
  std::uint64_t max_bytes = 256 * MiB;              // whole directory; oldest incidents go first
  bool operator==(const IncidentSettings&) const = default;
};

struct HttpSettings {
  std::uint32_t max_connections = 64;
  std::uint32_t max_connections_per_client = 8;  // open connections from one remote address
  std::chrono::milliseconds request_timeout = std::chrono::seconds(5);
  // A new connection must deliver its first request's headers (after TLS) within this; until
  // then it holds no slot of max_connections.
  std::chrono::milliseconds header_timeout = std::chrono::seconds(2);
  bool operator==(const HttpSettings&) const = default;
};

/// Bounds on what one target may hand lockwatch in one sample: everything in a reply comes
/// from the target and is hostile until parsed.
struct ReplyLimits {
  std::uint64_t max_reply_bytes = 32 * MiB;  // a larger reply is dropped as too_large
  std::uint32_t max_threads = 50'000;        // thread headers in one reply; more is too_large
  std::uint64_t max_line_bytes = 64 * KiB;   // a longer line keeps its first and last halves
  bool operator==(const ReplyLimits&) const = default;
};

struct LogSettings {
  LogLevel level = LogLevel::info;
  bool operator==(const LogSettings&) const = default;
};

enum class TlsVersion { tls12, tls13 };
enum class ClientAuth { none, require_and_verify };

/// `tls_server_config` of the web config file: the HTTP endpoint speaks only TLS.
struct TlsServerSettings {
  std::string cert_file;       // PEM chain; loaded paths are absolute (relative ones are the web file's)
  std::string key_file;        // PEM private key of the certificate
  TlsVersion min_version = TlsVersion::tls12;
  std::string client_ca_file;  // with ClientAuth::require_and_verify: the CA client certificates must chain to
  ClientAuth client_auth = ClientAuth::none;
  bool operator==(const TlsServerSettings&) const = default;
};

/// The web config file (node_exporter's `--web.config.file` format, a subset): who may
/// reach the HTTP endpoint and how. Empty: plain HTTP, no authentication.
struct WebSettings {
  std::optional<TlsServerSettings> tls;
  std::map<std::string, std::string> basic_auth_users;  // user -> bcrypt hash ("$2y$10$...")
  bool operator==(const WebSettings&) const = default;
};

struct Config {
  std::string listen = "127.0.0.1:9465";  // HOST:PORT, "[::1]:9465" for IPv6; see parse_listen
  std::chrono::milliseconds interval = std::chrono::seconds(1);
  std::chrono::milliseconds timeout = std::chrono::seconds(10);
  Backend backend = Backend::attach;
  std::string jstack_path;  // empty: $JAVA_HOME/bin/jstack, else PATH
  DumpFormat dump_format = DumpFormat::automatic;  // every target; the jstack backend always prints
  std::uint32_t max_concurrent_dumps = 2;
  LockPolicy locks;
  AttachSettings attach;
  ReplyLimits limits;
  TargetSettings targets;
  RingSettings ring;
  AnalysisSettings analysis;
  IncidentSettings incidents;
  HttpSettings http;
  LogSettings log;
  std::string web_config_file;  // empty: plain HTTP without authentication
  WebSettings web;              // read from web_config_file by load_web_config_file(), never from this file
  // Comparable, so that a reload can tell whether anything changed.
  bool operator==(const Config&) const = default;
};

struct ListenAddress {
  std::string host;  // IPv4 literal, IPv6 literal without brackets, or a host name
  std::uint16_t port = 0;
};

/// "127.0.0.1:9465", "[::1]:9465", "localhost:9465"; nothing when the host or port is not valid.
std::optional<ListenAddress> parse_listen(std::string_view text);

std::string_view to_string(Backend backend);
std::string_view to_string(LogLevel level);
/// "never", "on_demand", "every 5 samples".
std::string to_string(const LockPolicy& policy);
std::optional<Backend> parse_backend(std::string_view text);
std::string_view to_string(DumpFormat format);  // "auto", "print", "json"
std::optional<DumpFormat> parse_dump_format(std::string_view text);
std::optional<LogLevel> parse_log_level(std::string_view text);
std::string_view to_string(AttachAs as);  // "self", "target"
std::optional<AttachAs> parse_attach_as(std::string_view text);
std::string_view to_string(TlsVersion version);  // "TLS12", "TLS13"
std::optional<TlsVersion> parse_tls_version(std::string_view text);
std::string_view to_string(ClientAuth auth);  // "NoClientCert", "RequireAndVerifyClientCert"
std::optional<ClientAuth> parse_client_auth(std::string_view text);  // "" is NoClientCert

/// The effective settings on one line, for `check-config` and the daemon's startup log.
std::string summary(const Config& config);

}  // namespace lockwatch::config
