// SPDX-License-Identifier: Apache-2.0
// The HTTP server's connections, plain or TLS: the only file that includes Boost.Beast.
#include "lockwatch/http/server.hpp"

#include "lockwatch/sampling/asio.hpp"  // before Beast, which includes Asio itself

#include <boost/asio/ssl.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/stream_traits.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <type_traits>

#include "basic_auth.hpp"
#include "tls_context.hpp"

namespace lockwatch::http {
namespace {

namespace asio = boost::asio;
namespace bhttp = boost::beast::http;
using asio::ip::tcp;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// After a response that ends the connection, unread request bytes are drained this long
// at most: closing with unread input sends a reset, which can destroy the response.
constexpr std::chrono::milliseconds max_linger = 1s;
// Accept errors such as EMFILE repeat at once: wait before the next try instead of spinning.
constexpr std::chrono::milliseconds accept_backoff = 100ms;
// Enough of a first read to tell a TLS ClientHello from plain text.
constexpr std::size_t sniff_bytes = 4096;

using TlsStream = boost::beast::ssl_stream<tcp::socket>;

// What the server's registry of open connections needs from a plain or a TLS one.
class ConnectionBase {
 public:
  virtual ~ConnectionBase() = default;
  virtual void close() = 0;
};

struct Counters {
  std::atomic<std::uint64_t> accepted{0}, rejected_over_cap{0}, timed_out{0}, requests{0};
  std::atomic<std::size_t> open{0};
};

// What connections share with the server; it outlives the Server while a connection lives.
struct Shared : std::enable_shared_from_this<Shared> {
  Shared(ServerOptions o, Server::Handler h) : options(std::move(o)), handler(std::move(h)) { apply(options.security); }

  void admit(tcp::socket socket);
  template <class Stream>
  void start(tcp::socket socket, bool serve);
  void forget(std::uint64_t id, bool served);
  void close_all();
  void apply(const Security& security);

  ServerOptions options;
  Server::Handler handler;
  Counters counters;
  std::shared_ptr<asio::ssl::context> tls;               // null: plain HTTP
  std::shared_ptr<detail::PasswordCheck> passwords;      // null: no authentication
  // bcrypt's thread, once there are users; stop() ends it. Only connections post to it, and
  // each hands its own reference back to the io thread, so it is never destroyed from within.
  std::optional<asio::thread_pool> verifier;
  std::map<std::uint64_t, std::weak_ptr<ConnectionBase>> connections;  // served and rejected
  std::uint64_t next_id = 0;
  std::size_t served = 0;     // open connections that may send requests
  std::size_t rejecting = 0;  // open connections being told 503
};

bool is_parse_error(const error_code& ec) {
  return ec.category() == bhttp::make_error_code(bhttp::error::bad_method).category() &&
         ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message;
}

bool is_too_large(const error_code& ec) {
  return ec == bhttp::error::header_limit || ec == bhttp::error::body_limit || ec == bhttp::error::buffer_overflow;
}

// What a plain-HTTP client on the TLS port reads before the connection closes.
const std::string& plain_on_tls_port() {
  static const std::string body = "this port speaks TLS only: use https://\n";
  static const std::string reply = "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " +
                                   std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
  return reply;
}

// A request read and decoded, kept while its credentials are checked.
struct Pending {
  Request request;
  bool keep_alive = false;
  bool head = false;
  unsigned version = 11;
};

// One TCP connection, plain or TLS: requests one at a time (keep-alive), each phase under a
// deadline. The plain instantiation has no TLS code at all.
template <class Stream>
class Connection final : public ConnectionBase, public std::enable_shared_from_this<Connection<Stream>> {
 public:
  static constexpr bool tls = std::is_same_v<Stream, TlsStream>;

  Connection(tcp::socket socket, std::shared_ptr<Shared> shared, std::uint64_t id, bool served)
      : context_(tls ? shared->tls : nullptr), stream_(make_stream(std::move(socket), context_.get())),
        timer_(stream_.get_executor()), buffer_(shared->options.max_request_bytes), shared_(std::move(shared)),
        id_(id), served_(served) {}

  // With TLS the handshake comes first, and it and the first request share one deadline.
  void start() {
    arm(shared_->options.request_timeout);
    if constexpr (tls) sniff();
    else serve();
  }

  void close() override {
    if (closed_) return;
    closed_ = true;
    error_code ignored;
    lowest().close(ignored);
    timer_.cancel();
    shared_->forget(id_, served_);
  }

 private:
  static Stream make_stream(tcp::socket socket, [[maybe_unused]] asio::ssl::context* context) {
    if constexpr (tls) return Stream(std::move(socket), *context);
    else return socket;
  }

  tcp::socket& lowest() { return boost::beast::get_lowest_layer(stream_); }
  auto self() { return this->shared_from_this(); }

  void serve() {
    if (served_) return read_request(false);
    send(unavailable("too many open connections (" + std::to_string(shared_->options.max_connections) +
                     "); try again later"), false, false, 11);
  }

  // A deadline for the current phase; re-arming replaces it, close() cancels it.
  void arm(std::chrono::milliseconds timeout) {
    timer_.expires_after(timeout);
    timer_.async_wait([self = self()](error_code ec) {
      // An expiry already queued when the timer was re-armed arrives without an error.
      if (ec || self->closed_ || self->timer_.expiry() > Clock::now()) return;
      if (!self->lingering_) ++self->shared_->counters.timed_out;
      self->close();
    });
  }

  // A TLS connection starts with a handshake record (content type 22); anything else is
  // most likely plain HTTP, which gets a readable answer instead of a failed handshake.
  void sniff() {
    const auto room = buffer_.prepare(std::min(sniff_bytes, buffer_.max_size()));
    lowest().async_read_some(room, [self = self()](error_code ec, std::size_t n) {
      if (self->closed_) return;
      if (ec) return self->close();
      self->buffer_.commit(n);
      if (*static_cast<const unsigned char*>(self->buffer_.data().data()) != 22) return self->refuse_plain();
      self->handshake();
    });
  }

  void handshake() {
    if constexpr (tls) {
      stream_.async_handshake(asio::ssl::stream_base::server, buffer_.data(), [self = self()](error_code ec, std::size_t) {
        if (self->closed_) return;
        if (ec) return self->close();  // a failed handshake: there is no channel to explain it on
        self->buffer_.consume(self->buffer_.size());  // the ClientHello, now inside the TLS engine
        self->handshaken_ = true;
        self->serve();
      });
    }
  }

  void refuse_plain() {
    ++shared_->counters.requests;
    asio::async_write(lowest(), asio::buffer(plain_on_tls_port()), [self = self()](error_code ec, std::size_t) {
      if (self->closed_) return;
      ec ? self->close() : self->linger();
    });
  }

  void read_request(bool rearm = true) {
    const auto limit = shared_->options.max_request_bytes;
    if (rearm) arm(shared_->options.request_timeout);
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(std::min<std::size_t>(limit, std::numeric_limits<std::uint32_t>::max())));
    parser_->body_limit(limit);
    bhttp::async_read_header(stream_, buffer_, *parser_, [self = self()](error_code ec, std::size_t n) {
      if (!self->closed_) self->on_header(ec, n);
    });
  }

  // The body may use what the header left of max_request_bytes; a declared length that
  // does not fit is refused before a byte of it is read.
  void on_header(const error_code& ec, std::size_t header_bytes) {
    if (ec) return on_read_error(ec);
    const auto limit = shared_->options.max_request_bytes;
    const auto declared = parser_->content_length();
    if (header_bytes >= limit || (declared && *declared > limit - header_bytes)) return refuse(payload_too_large());
    if (parser_->is_done()) return on_request({});
    parser_->body_limit(limit - header_bytes);
    bhttp::async_read(stream_, buffer_, *parser_, [self = self()](error_code read_ec, std::size_t) {
      if (!self->closed_) self->on_request(read_ec);
    });
  }

  void on_read_error(const error_code& ec) {
    if (is_too_large(ec)) return refuse(payload_too_large());
    if (is_parse_error(ec)) return refuse(bad_request("malformed HTTP request: " + ec.message()));
    close();  // the client went away, or closed mid-request
  }

  void on_request(const error_code& ec) {
    if (ec) return on_read_error(ec);
    const auto& message = parser_->get();
    const bool head = message.method() == bhttp::verb::head;
    const auto target = message.target();
    auto request = make_request(head ? "GET" : std::string(message.method_string()), {target.data(), target.size()});
    if (!request) return refuse(bad_request("malformed request target"));
    ++shared_->counters.requests;
    pending_ = {std::move(*request), message.keep_alive(), head, message.version()};
    if (!shared_->passwords || pending_.request.path == "/healthz") return respond(true);  // /healthz: for probes
    const auto authorization = message[bhttp::field::authorization];
    authorize({authorization.data(), authorization.size()});
  }

  // Credentials seen before answer at once; others are checked with bcrypt on the
  // verifier thread, so a flood of wrong passwords never stalls the io thread.
  void authorize(std::string_view authorization) {
    auto check = shared_->passwords;
    auto credentials = detail::parse_basic(authorization);
    if (!credentials) return respond(false);
    if (check->remembered(*credentials)) return respond(true);
    if (!shared_->verifier) return respond(false);  // stopped
    asio::post(*shared_->verifier, [self = self(), check = std::move(check), credentials = std::move(*credentials),
                                    io = stream_.get_executor()]() mutable {
      const bool ok = check->verify(credentials);
      asio::post(io, [self = std::move(self), ok] {
        if (!self->closed_) self->respond(ok);
      });
    });
  }

  void respond(bool authorized) {
    auto response = authorized ? call_handler(pending_.request) : unauthorized();
    send(std::move(response), pending_.keep_alive, pending_.head, pending_.version);
  }

  Response call_handler(const Request& request) const {
    try {
      return shared_->handler(request);
    } catch (const std::exception& e) {
      return internal_error("internal error: " + std::string(std::string_view(e.what()).substr(0, 200)));
    } catch (...) {
      return internal_error("internal error");
    }
  }

  // For requests that cannot be served: answer, then end the connection.
  void refuse(Response response) {
    ++shared_->counters.requests;
    send(std::move(response), false, false, 11);
  }

  void send(Response response, bool keep_alive, bool head, unsigned version) {
    if (response.status < 100 || response.status > 599 || response.content_type.find_first_of("\r\n") != std::string::npos)
      response = internal_error("the handler returned an invalid response");
    build(std::move(response), head, version);
    response_.keep_alive(keep_alive);
    arm(shared_->options.request_timeout);
    bhttp::async_write(stream_, response_, [self = self(), keep_alive](error_code ec, std::size_t) {
      if (self->closed_) return;
      if (ec) return self->close();
      keep_alive ? self->read_request() : self->linger();
    });
  }

  void build(Response response, bool head, unsigned version) {
    response_ = {};
    response_.version(version);
    response_.result(response.status);
    response_.set(bhttp::field::content_type, response.content_type);
    response_.set(bhttp::field::cache_control, "no-store");
    response_.set("X-Content-Type-Options", "nosniff");
    if (response.status == 405) response_.set(bhttp::field::allow, "GET, HEAD");
    if (response.status == 401) response_.set(bhttp::field::www_authenticate, "Basic realm=\"lockwatch\"");
    response_.content_length(response.body.size());  // HEAD: the length GET would send
    if (!head) response_.body() = std::move(response.body);
  }

  // TLS says goodbye with close_notify first. Then half-close, and read and drop what the
  // client still sends until it closes too.
  void linger() {
    lingering_ = true;
    arm(std::min(shared_->options.request_timeout, max_linger));
    if constexpr (tls) {
      if (handshaken_)
        return stream_.async_shutdown([self = self()](error_code) {
          if (!self->closed_) self->half_close();
        });
    }
    half_close();
  }

  void half_close() {
    error_code ignored;
    lowest().shutdown(tcp::socket::shutdown_send, ignored);
    drain();
  }

  void drain() {
    lowest().async_read_some(asio::buffer(drain_), [self = self()](error_code ec, std::size_t) {
      if (self->closed_) return;
      ec ? self->close() : self->drain();
    });
  }

  std::shared_ptr<asio::ssl::context> context_;  // TLS: the settings this connection was accepted with
  Stream stream_;
  asio::steady_timer timer_;
  boost::beast::flat_buffer buffer_;  // outlives a request: it may hold the next one
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  Pending pending_;
  bhttp::response<bhttp::string_body> response_;
  std::array<char, 16 * 1024> drain_{};
  std::shared_ptr<Shared> shared_;
  std::uint64_t id_;
  bool served_;
  bool closed_ = false;
  bool lingering_ = false;
  bool handshaken_ = false;
};

void Shared::admit(tcp::socket socket) {
  const bool serve = served < options.max_connections;
  ++(serve ? counters.accepted : counters.rejected_over_cap);
  if (!serve && rejecting >= options.max_connections) return;  // a flood: close without a word
  error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  tls ? start<TlsStream>(std::move(socket), serve) : start<tcp::socket>(std::move(socket), serve);
}

template <class Stream>
void Shared::start(tcp::socket socket, bool serve) {
  const auto id = next_id++;
  auto connection = std::make_shared<Connection<Stream>>(std::move(socket), shared_from_this(), id, serve);
  connections.emplace(id, connection);
  ++(serve ? served : rejecting);
  counters.open = served;
  connection->start();
}

// Everything that can fail is built before anything changes.
void Shared::apply(const Security& security) {
  auto context = security.tls ? detail::make_tls_context(*security.tls) : nullptr;
  auto check = security.basic_auth_users.empty() ? nullptr : std::make_shared<detail::PasswordCheck>(security.basic_auth_users);
  if (check && !verifier) verifier.emplace(1);
  tls = std::move(context);
  passwords = std::move(check);
  options.security = security;
}

void Shared::forget(std::uint64_t id, bool was_served) {
  connections.erase(id);
  --(was_served ? served : rejecting);
  counters.open = served;
}

void Shared::close_all() {
  auto open = connections;  // close() erases from the map
  for (auto& [id, weak] : open)
    if (auto connection = weak.lock()) connection->close();
}

std::string host_port(const ServerOptions& options) {
  const bool v6 = options.host.find(':') != std::string::npos && !options.host.starts_with('[');
  return (v6 ? "[" + options.host + "]" : options.host) + ":" + std::to_string(options.port);
}

[[noreturn]] void fail(const ServerOptions& options, const char* what, const error_code& ec) {
  throw std::system_error(static_cast<std::error_code>(ec), std::string("HTTP server: cannot ") + what + " " + host_port(options));
}

tcp::endpoint endpoint_for(asio::io_context& io, const ServerOptions& options) {
  std::string host = options.host;
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  error_code ec;
  const auto address = asio::ip::make_address(host, ec);
  if (!ec) return {address, options.port};
  tcp::resolver resolver(io);
  const auto results = resolver.resolve(host, std::to_string(options.port),
                                        tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec || results.empty()) fail(options, "resolve the host of", ec ? ec : asio::error::host_not_found);
  return results.begin()->endpoint();
}

}  // namespace

struct Server::Impl : std::enable_shared_from_this<Impl> {
  Impl(asio::io_context& io_context, ServerOptions options, Handler handler)
      : io(io_context), acceptor(io_context), backoff(io_context),
        shared(std::make_shared<Shared>(std::move(options), std::move(handler))) {}

  void listen();
  void accept();
  void on_accept(const error_code& ec, tcp::socket socket);

  asio::io_context& io;
  tcp::acceptor acceptor;
  asio::steady_timer backoff;
  std::shared_ptr<Shared> shared;
  std::atomic<std::uint16_t> port{0};
};

void Server::Impl::listen() {
  const auto& options = shared->options;
  const auto endpoint = endpoint_for(io, options);
  error_code ec;
  acceptor.open(endpoint.protocol(), ec);
  if (ec) fail(options, "open a socket for", ec);
  acceptor.set_option(tcp::acceptor::reuse_address(true), ec);  // restarts while old sockets sit in TIME_WAIT
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    error_code ignored;
    acceptor.close(ignored);
    fail(options, "listen on", ec);
  }
  port = acceptor.local_endpoint().port();
}

void Server::Impl::accept() {
  acceptor.async_accept([self = shared_from_this()](error_code ec, tcp::socket socket) {
    self->on_accept(ec, std::move(socket));
  });
}

void Server::Impl::on_accept(const error_code& ec, tcp::socket socket) {
  if (!acceptor.is_open()) return;  // stopped
  if (!ec) shared->admit(std::move(socket));
  if (!ec || ec == asio::error::connection_aborted) return accept();
  backoff.expires_after(accept_backoff);
  backoff.async_wait([self = shared_from_this()](error_code wait_ec) {
    if (!wait_ec && self->acceptor.is_open()) self->accept();
  });
}

Server::Server(asio::io_context& io, ServerOptions options, Handler handler)
    : impl_(std::make_shared<Impl>(io, std::move(options), std::move(handler))) {}

Server::~Server() { stop(); }

void Server::start() {
  if (impl_->acceptor.is_open()) throw std::logic_error("HTTP server: start() called twice");
  impl_->listen();
  impl_->accept();
}

std::uint16_t Server::port() const { return impl_->port; }

void Server::stop() {
  error_code ignored;
  impl_->acceptor.close(ignored);
  impl_->backoff.cancel();
  impl_->shared->close_all();
  // Queued password checks are dropped and the running one is waited for (one bcrypt at
  // most), so none outlives the io_context it reports to.
  impl_->shared->verifier.reset();
}

void Server::set_security(const Security& security) { impl_->shared->apply(security); }

bool Server::tls() const { return impl_->shared->tls != nullptr; }

ServerStats Server::stats() const {
  const auto& c = impl_->shared->counters;
  return {c.accepted, c.rejected_over_cap, c.timed_out, c.requests, c.open};
}

}  // namespace lockwatch::http
