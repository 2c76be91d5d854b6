// SPDX-License-Identifier: Apache-2.0
// HTTP/1.1 server on the daemon's io_context, bounded in connections, bytes and time.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "lockwatch/http/message.hpp"

namespace boost::asio {
class io_context;
}

namespace lockwatch::http {

enum class TlsVersion { tls12, tls13 };

/// TLS on every connection; PEM files, read when the options are applied.
struct TlsOptions {
  std::string cert_file;       // the server's certificate first, then any intermediates
  std::string key_file;        // its private key, unencrypted
  std::string client_ca_file;  // non-empty: a client must present a certificate this CA signed
  TlsVersion min_version = TlsVersion::tls12;
};

/// Who may talk to the server, and how. The default is plain HTTP without authentication.
struct Security {
  std::optional<TlsOptions> tls;
  /// Basic auth users: name -> bcrypt hash ("$2y$10$..."). When there are any, every path
  /// but /healthz (a kubelet probe carries no credentials) answers 401 without valid ones.
  std::map<std::string, std::string, std::less<>> basic_auth_users;
};

struct ServerOptions {
  std::string host = "127.0.0.1";  // an address ("::1", "0.0.0.0", "[::1]") or a name resolved once at start()
  std::uint16_t port = 9465;       // 0: an ephemeral port, see Server::port()
  /// Connections served at once. A connection takes a slot when its first request's headers
  /// are in; with none free it is answered 503 and closed. Before that it is pending and holds
  /// no slot, so slow or silent clients cannot crowd out others: up to 4 x max_connections
  /// may be pending, and one more closes the oldest pending connection to make room.
  std::size_t max_connections = 64;
  /// Open connections, in any phase, from one remote address (an IPv4-mapped IPv6 address
  /// counts as its IPv4 address); one more is closed at once, unanswered.
  std::size_t max_connections_per_client = 8;
  /// A new connection must finish its TLS handshake and send its first request's headers
  /// within this time (and within request_timeout), or it is closed.
  std::chrono::milliseconds header_timeout{2000};
  /// Time to receive one whole request (idle keep-alive time included; the first request
  /// counts from the connection's start), again to wait for its answer when that waits (a
  /// password check, a deferred response), and again to send one response; a connection
  /// that misses it is closed.
  std::chrono::milliseconds request_timeout{5000};
  /// Request line + headers + body; a larger request gets 413 and the connection closes.
  std::size_t max_request_bytes = 16 * 1024;
  /// Password checks (bcrypt) queued or running, in all and per remote address. A request
  /// over either bound is answered 503 with Retry-After: 1 and no check; remembered
  /// credentials are not checked again, so they never meet these bounds. Checks run one at
  /// a time, addresses in turn: a flood from one address delays another's login by one check.
  std::size_t max_password_checks = 16;
  std::size_t max_password_checks_per_client = 2;
  Security security;
};

struct ServerStats {
  std::uint64_t accepted = 0;                 // connections that took a slot of max_connections
  std::uint64_t rejected_over_cap = 0;        // connections told 503 (or closed) because max_connections were open
  std::uint64_t timed_out = 0;                // connections closed at header_timeout or request_timeout
  std::uint64_t requests = 0;                 // responses sent, 400, 413 and busy 503 included, max_connections' 503 not
  std::size_t open_connections = 0;           // connections holding a slot now
  std::uint64_t rejected_per_client = 0;      // connections closed at once: max_connections_per_client were open
  std::uint64_t evicted_pending = 0;          // pending connections closed to make room for a newer one
  std::size_t pending_connections = 0;        // connections open now that have not sent their first headers
  std::uint64_t password_checks_run = 0;      // bcrypt runs
  std::uint64_t password_checks_dropped = 0;  // queued checks skipped: their connection had closed
  std::uint64_t password_checks_refused = 0;  // requests told 503 + Retry-After: the checks' bounds were full
};

/// Runs on the caller's io_context; the io_context must outlive the Server. Every member
/// but stats() and port() is called on the io_context's thread (or before it runs).
/// The handler runs on that thread too, so it must be fast: it answers from published
/// snapshots and never waits for a dump, or defers its answer to another thread (see
/// Response::deferred). For HEAD it is called as for GET and the body is dropped,
/// Content-Length kept. Responses carry Content-Length, Content-Type,
/// Cache-Control: no-store and X-Content-Type-Options: nosniff, and the Response's own
/// `headers` (see Response::headers).
///
/// With TLS, every limit above holds for the encrypted connection: the handshake and the
/// first request's headers share one header_timeout, the handshake and the whole first
/// request one request_timeout. A client speaking plain HTTP to the TLS port gets a plain
/// 400 and the connection is closed. With basic auth, passwords are checked with bcrypt on a
/// thread of the Server's own, never on the io_context's; a check whose connection closed
/// before its turn is dropped unrun.
class Server {
 public:
  using Handler = std::function<Response(const Request&)>;

  /// Throws std::runtime_error naming the file when options.security.tls names a
  /// certificate, key or CA that cannot be loaded.
  Server(boost::asio::io_context& io, ServerOptions options, Handler handler);
  ~Server();  // stop()s
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// Binds, listens and starts accepting. Throws std::system_error naming host:port when
  /// the address cannot be resolved or bound (e.g. the port is in use).
  void start();

  /// The bound port (the ephemeral one for port 0); 0 before start().
  std::uint16_t port() const;

  /// Closes the listening socket and every open connection; idempotent.
  void stop();

  ServerStats stats() const;

  /// New TLS files for the connections accepted from now on (open ones keep theirs), and
  /// new users from the next request on. Throws std::runtime_error naming the file when a
  /// certificate, key or CA cannot be loaded, and then changes nothing.
  void set_security(const Security& security);

  /// Whether connections accepted now speak TLS.
  bool tls() const;

 private:
  struct Impl;  // shared with pending operations, so none outlives what it uses
  std::shared_ptr<Impl> impl_;
};

}  // namespace lockwatch::http
