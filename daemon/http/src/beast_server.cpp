// SPDX-License-Identifier: Apache-2.0
// The HTTP server's connections: the only file that includes Boost.Beast.
#include "lockwatch/http/server.hpp"

#include "lockwatch/sampling/asio.hpp"  // before Beast, which includes Asio itself

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <system_error>

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

class Connection;

struct Counters {
  std::atomic<std::uint64_t> accepted{0}, rejected_over_cap{0}, timed_out{0}, requests{0};
  std::atomic<std::size_t> open{0};
};

// What connections share with the server; it outlives the Server while a connection lives.
struct Shared : std::enable_shared_from_this<Shared> {
  Shared(ServerOptions o, Server::Handler h) : options(std::move(o)), handler(std::move(h)) {}

  void admit(tcp::socket socket);
  void forget(std::uint64_t id, bool served);
  void close_all();

  ServerOptions options;
  Server::Handler handler;
  Counters counters;
  std::map<std::uint64_t, std::weak_ptr<Connection>> connections;  // served and rejected
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

// One TCP connection: requests one at a time (keep-alive), each phase under a deadline.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, std::shared_ptr<Shared> shared, std::uint64_t id, bool served)
      : socket_(std::move(socket)), timer_(socket_.get_executor()), buffer_(shared->options.max_request_bytes),
        shared_(std::move(shared)), id_(id), served_(served) {}

  void start() {
    if (served_) return read_request();
    send(unavailable("too many open connections (" + std::to_string(shared_->options.max_connections) +
                     "); try again later"), false, false, 11);
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    error_code ignored;
    socket_.close(ignored);
    timer_.cancel();
    shared_->forget(id_, served_);
  }

 private:
  // A deadline for the current phase; re-arming replaces it, close() cancels it.
  void arm(std::chrono::milliseconds timeout) {
    timer_.expires_after(timeout);
    timer_.async_wait([self = shared_from_this()](error_code ec) {
      // An expiry already queued when the timer was re-armed arrives without an error.
      if (ec || self->closed_ || self->timer_.expiry() > Clock::now()) return;
      if (!self->lingering_) ++self->shared_->counters.timed_out;
      self->close();
    });
  }

  void read_request() {
    const auto limit = shared_->options.max_request_bytes;
    arm(shared_->options.request_timeout);
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(std::min<std::size_t>(limit, std::numeric_limits<std::uint32_t>::max())));
    parser_->body_limit(limit);
    bhttp::async_read_header(socket_, buffer_, *parser_, [self = shared_from_this()](error_code ec, std::size_t n) {
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
    bhttp::async_read(socket_, buffer_, *parser_, [self = shared_from_this()](error_code read_ec, std::size_t) {
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
    send(call_handler(*request), message.keep_alive(), head, message.version());
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
    bhttp::async_write(socket_, response_, [self = shared_from_this(), keep_alive](error_code ec, std::size_t) {
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
    response_.content_length(response.body.size());  // HEAD: the length GET would send
    if (!head) response_.body() = std::move(response.body);
  }

  // Half-close, then read and drop what the client still sends until it closes too.
  void linger() {
    lingering_ = true;
    error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
    arm(std::min(shared_->options.request_timeout, max_linger));
    drain();
  }

  void drain() {
    socket_.async_read_some(asio::buffer(drain_), [self = shared_from_this()](error_code ec, std::size_t) {
      if (self->closed_) return;
      ec ? self->close() : self->drain();
    });
  }

  tcp::socket socket_;
  asio::steady_timer timer_;
  boost::beast::flat_buffer buffer_;  // outlives a request: it may hold the next one
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  bhttp::response<bhttp::string_body> response_;
  std::array<char, 16 * 1024> drain_{};
  std::shared_ptr<Shared> shared_;
  std::uint64_t id_;
  bool served_;
  bool closed_ = false;
  bool lingering_ = false;
};

void Shared::admit(tcp::socket socket) {
  const bool serve = served < options.max_connections;
  ++(serve ? counters.accepted : counters.rejected_over_cap);
  if (!serve && rejecting >= options.max_connections) return;  // a flood: close without a word
  error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  const auto id = next_id++;
  auto connection = std::make_shared<Connection>(std::move(socket), shared_from_this(), id, serve);
  connections.emplace(id, connection);
  ++(serve ? served : rejecting);
  counters.open = served;
  connection->start();
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
}

ServerStats Server::stats() const {
  const auto& c = impl_->shared->counters;
  return {c.accepted, c.rejected_over_cap, c.timed_out, c.requests, c.open};
}

}  // namespace lockwatch::http
