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
  /// Open connections served at once; one more is answered 503 and closed at once.
  std::size_t max_connections = 64;
  /// Time to receive one whole request (idle keep-alive time included) and, again, to
  /// send one response; a connection that misses it is closed.
  std::chrono::milliseconds request_timeout{5000};
  /// Request line + headers + body; a larger request gets 413 and the connection closes.
  std::size_t max_request_bytes = 16 * 1024;
  Security security;
};

struct ServerStats {
  std::uint64_t accepted = 0;           // connections served
  std::uint64_t rejected_over_cap = 0;  // connections answered 503 because max_connections were open
  std::uint64_t timed_out = 0;          // connections closed at request_timeout
  std::uint64_t requests = 0;           // responses sent, 400 and 413 included, 503 rejections not
  std::size_t open_connections = 0;     // served connections open now
};

/// Runs on the caller's io_context; the io_context must outlive the Server. Every member
/// but stats() and port() is called on the io_context's thread (or before it runs).
/// The handler runs on that thread too, so it must be fast: it answers from published
/// snapshots and never waits for a dump. For HEAD it is called as for GET and the body is
/// dropped, Content-Length kept. Responses carry Content-Length, Content-Type,
/// Cache-Control: no-store and X-Content-Type-Options: nosniff.
///
/// With TLS, every limit above holds for the encrypted connection: the handshake and the
/// first request share one request_timeout. A client speaking plain HTTP to the TLS port
/// gets a plain 400 and the connection is closed. With basic auth, passwords are checked
/// with bcrypt on a thread of the Server's own, never on the io_context's.
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
