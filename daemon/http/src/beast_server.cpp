// SPDX-License-Identifier: Apache-2.0
// The HTTP server's connections, plain or TLS: the only file that includes Boost.Beast.
#include "lockwatch/http/server.hpp"

#include "lockwatch/asio.hpp"  // before Beast, which includes Asio itself

#include <poll.h>

#include <boost/asio/ssl.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/stream_traits.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <system_error>
#include <type_traits>

#include "basic_auth.hpp"
#include "client_address.hpp"
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
// Pending connections (no first headers yet) hold no slot, but they cost a socket and a
// buffer each: this many per slot of max_connections at most.
constexpr std::size_t pending_per_slot = 4;

using TlsStream = boost::beast::ssl_stream<tcp::socket>;
using Address = asio::ip::address;

// Where a connection stands towards max_connections.
enum class Phase {
  pending,  // before its first request's headers: no slot, under header_timeout
  served,   // holds a slot
  refused,  // being told 503: every slot was taken
};

// What the server's registry of open connections needs from a plain or a TLS one.
class ConnectionBase {
 public:
  virtual ~ConnectionBase() = default;
  virtual void close() = 0;
};

struct Counters {
  std::atomic<std::uint64_t> accepted{0}, rejected_over_cap{0}, timed_out{0}, requests{0};
  std::atomic<std::uint64_t> rejected_per_client{0}, evicted_pending{0};
  std::atomic<std::uint64_t> checks_run{0}, checks_dropped{0}, checks_refused{0};
  std::atomic<std::size_t> open{0}, pending{0};
};

// What one remote address holds now; its entry goes when it holds nothing.
struct ClientUse {
  std::size_t connections = 0;  // open, in any phase
  std::size_t checks = 0;       // password checks queued or running
};

// Replies to deferred responses come from any thread, maybe after the Server is gone: they
// enter the io thread here, and nowhere once the Server closed this (the io_context outlives
// the Server, but not necessarily a handler's thread).
class Mailbox {
 public:
  explicit Mailbox(asio::io_context::executor_type io) : io_(std::move(io)) {}

  template <class Fn>
  void post(Fn&& fn) {
    std::lock_guard lock(mu_);
    if (open_) asio::post(io_, std::forward<Fn>(fn));
  }

  void close() {
    std::lock_guard lock(mu_);
    open_ = false;
  }

 private:
  asio::io_context::executor_type io_;
  std::mutex mu_;
  bool open_ = true;
};

// What connections share with the server; it outlives the Server while a connection lives.
// Io-thread state but for the counters and the mailbox.
struct Shared : std::enable_shared_from_this<Shared> {
  Shared(ServerOptions o, Server::Handler h, asio::io_context& io)
      : options(std::move(o)), handler(std::move(h)), mailbox(std::make_shared<Mailbox>(io.get_executor())) {
    apply(options.security);
  }

  void admit(tcp::socket socket);
  template <class Stream>
  void start(tcp::socket socket, const Address& client);
  void make_room_for_pending();
  Phase promote(std::uint64_t id);
  void forget(std::uint64_t id, Phase phase, const Address& client);
  bool reserve_check(const Address& client);
  void queue_check(const Address& client, std::function<void()> job);
  void run_next_check();
  void check_done(const Address& client);
  void release_check(const Address& client);
  void stop_checks();
  void release_if_unused(const Address& client);
  void publish();
  void close_all();
  void apply(const Security& security);

  ServerOptions options;
  Server::Handler handler;
  Counters counters;
  std::shared_ptr<Mailbox> mailbox;
  std::shared_ptr<asio::ssl::context> tls;               // null: plain HTTP
  std::shared_ptr<detail::PasswordCheck> passwords;      // null: no authentication
  // bcrypt's thread, once there are users; stop() ends it. It runs one check at a time, and
  // each hands its connection's reference back to the io thread, so it is never destroyed
  // from within.
  std::optional<asio::thread_pool> verifier;
  // Checks wait here, by client address, for their turn on the verifier.
  std::map<Address, std::deque<std::function<void()>>> queued_checks;
  std::deque<Address> check_turns;  // addresses with a queued check and none running, in turn
  std::optional<Address> checking;  // whose check runs now
  std::map<std::uint64_t, std::weak_ptr<ConnectionBase>> connections;  // every open one
  std::set<std::uint64_t> pending;        // the pending ones' ids: ids grow, so the oldest first
  std::map<Address, ClientUse> clients;   // by client_address()
  std::uint64_t next_id = 0;
  std::size_t served = 0;   // open connections that may send requests
  std::size_t refused = 0;  // open connections being told 503
  std::size_t checks = 0;   // password checks queued or running
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

// A handler's exception, from inside a catch block, as a 500 with the gist of its text.
Response handler_failed() {
  try {
    throw;
  } catch (const std::exception& e) {
    // Kept short: a client needs the gist, not a whole exception text.
    return internal_error("internal error: " + std::string(std::string_view(e.what()).substr(0, 200)));
  } catch (...) {
    return internal_error("internal error");
  }
}

// The request being answered, kept while its credentials are checked or its answer deferred.
struct Exchange {
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

  Connection(tcp::socket socket, std::shared_ptr<Shared> shared, std::uint64_t id, Address client)
      : context_(tls ? shared->tls : nullptr), stream_(make_stream(std::move(socket), context_.get())),
        timer_(stream_.get_executor()), buffer_(shared->options.max_request_bytes), shared_(std::move(shared)),
        client_(std::move(client)), id_(id) {}

  // Pending until the first request's headers are in: they, and with TLS the handshake before
  // them, must come within header_timeout; the whole first request within request_timeout.
  void start() {
    const auto& options = shared_->options;
    const auto now = Clock::now();
    first_request_deadline_ = now + options.request_timeout;
    arm_until(std::min(now + options.header_timeout, first_request_deadline_));
    if constexpr (tls) sniff();
    else read_request(false);
  }

  void close() override {
    if (closed_) return;
    closed_ = true;
    gone_ = true;  // for the verifier thread: a check still queued for this connection is dropped
    error_code ignored;
    lowest().close(ignored);
    timer_.cancel();
    shared_->forget(id_, phase_, client_);
  }

 private:
  static Stream make_stream(tcp::socket socket, [[maybe_unused]] asio::ssl::context* context) {
    if constexpr (tls) return Stream(std::move(socket), *context);
    else return socket;
  }

  tcp::socket& lowest() { return boost::beast::get_lowest_layer(stream_); }
  auto self() { return this->shared_from_this(); }

  void arm(std::chrono::milliseconds timeout) { arm_until(Clock::now() + timeout); }

  // A deadline for the current phase; re-arming replaces it, close() cancels it.
  void arm_until(Clock::time_point deadline) {
    timer_.expires_at(deadline);
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
        self->read_request(false);
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
    if (phase_ == Phase::pending && !take_slot()) return;
    const auto limit = shared_->options.max_request_bytes;
    const auto declared = parser_->content_length();
    if (header_bytes >= limit || (declared && *declared > limit - header_bytes)) return refuse(payload_too_large());
    if (parser_->is_done()) return on_request({});
    parser_->body_limit(limit - header_bytes);
    bhttp::async_read(stream_, buffer_, *parser_, [self = self()](error_code read_ec, std::size_t) {
      if (!self->closed_) self->on_request(read_ec);
    });
  }

  // The first request's headers are in: only now does the connection take a slot, and the
  // rest of that request has what is left of its request_timeout. With every slot taken it
  // is told 503, as before it was pending (and with too many 503s under way, not even that).
  bool take_slot() {
    phase_ = shared_->promote(id_);
    if (phase_ == Phase::served) {
      arm_until(first_request_deadline_);
      return true;
    }
    if (phase_ == Phase::refused)
      send(unavailable("too many open connections (" + std::to_string(shared_->options.max_connections) +
                       "); try again later"), false, false, 11);
    else
      close();
    return false;
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
    exchange_ = {std::move(*request), message.keep_alive(), head, message.version()};
    if (!shared_->passwords || exchange_.request.path == "/healthz") return respond(true);  // /healthz: for probes
    const auto authorization = message[bhttp::field::authorization];
    authorize({authorization.data(), authorization.size()});
  }

  // Credentials seen before answer at once. Others are checked with bcrypt on the verifier
  // thread, so a flood of wrong passwords never stalls the io thread. The checks' queue is
  // bounded, in all and per client address, and takes addresses in turn (see queue_check);
  // a check whose connection closed before its turn is dropped unrun.
  void authorize(std::string_view authorization) {
    auto check = shared_->passwords;
    auto credentials = detail::parse_basic(authorization);
    if (!credentials) return respond(false);
    if (check->remembered(*credentials)) return respond(true);
    if (!shared_->verifier) return respond(false);  // stopped
    if (!shared_->reserve_check(client_)) return send_busy();
    await_answer();
    shared_->queue_check(client_, [self = self(), check = std::move(check), credentials = std::move(*credentials),
                                   io = stream_.get_executor()]() mutable {
      const bool run = !self->gone_;  // on the verifier thread: closed_ is the io thread's
      const bool ok = run && check->verify(credentials);
      ++(run ? self->shared_->counters.checks_run : self->shared_->counters.checks_dropped);
      asio::post(io, [self = std::move(self), ok] { self->on_checked(ok); });
    });
  }

  void on_checked(bool ok) {
    shared_->check_done(client_);
    if (closed_) return;
    stop_watching();
    respond(ok);
  }

  // bcrypt's queue is full, or holds this address's share: try again in a second. The
  // connection stays as the request asked.
  void send_busy() {
    build(unavailable("too many password checks under way; try again shortly"), exchange_.head, exchange_.version);
    response_.set(bhttp::field::retry_after, "1");
    write(exchange_.keep_alive);
  }

  void respond(bool authorized) {
    auto response = authorized ? call_handler(exchange_.request) : unauthorized();
    if (response.deferred) return defer(std::move(response.deferred));
    answer(std::move(response));
  }

  Response call_handler(const Request& request) const {
    try {
      return shared_->handler(request);
    } catch (...) {
      return handler_failed();
    }
  }

  // The handler answers later, from any thread, through `reply`: the answer is posted back
  // here and sent if this connection still waits for it. `reply` holds no reference to the
  // connection (a handler may keep it forever), only a token that the answer, a timeout or
  // a close makes stale, so a second or late call does nothing.
  void defer(std::function<void(Response::Reply)> start) {
    const auto token = ++awaited_;
    await_answer();
    auto reply = [mailbox = shared_->mailbox, weak = this->weak_from_this(), token](Response response) {
      mailbox->post([weak, token, response = std::move(response)]() mutable {
        const auto self = weak.lock();
        if (self && !self->closed_ && self->awaited_ == token) self->on_reply(std::move(response));
      });
    };
    try {
      start(std::move(reply));
    } catch (...) {
      if (awaited_ == token) on_reply(handler_failed());
    }
  }

  void on_reply(Response response) {
    ++awaited_;
    stop_watching();
    answer(std::move(response));
  }

  // A password check or a deferred answer: a phase of its own, under request_timeout.
  void await_answer() {
    arm(shared_->options.request_timeout);
    watch_peer();
  }

  // Nothing reads the socket while the answer is awaited, so a client that hangs up would go
  // unnoticed until the deadline, and its queued password check would still run. Readable
  // with the peer's side shut (POLLRDHUP) means it is gone; readable with data (a pipelined
  // request, which stays for the next read) ends the watch.
  void watch_peer() {
    lowest().async_wait(tcp::socket::wait_read, [self = self(), watch = ++watch_](error_code ec) {
      if (ec || self->closed_ || watch != self->watch_) return;
      if (self->peer_gone()) self->close();
    });
  }

  void stop_watching() {
    ++watch_;
    error_code ignored;
    lowest().cancel(ignored);  // only the watch is outstanding while an answer is awaited
  }

  bool peer_gone() {
    pollfd fd{lowest().native_handle(), POLLRDHUP, 0};
    return ::poll(&fd, 1, 0) > 0 && (fd.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
  }

  void answer(Response response) {
    send(std::move(response), exchange_.keep_alive, exchange_.head, exchange_.version);
  }

  // For requests that cannot be served: answer, then end the connection.
  void refuse(Response response) {
    ++shared_->counters.requests;
    send(std::move(response), false, false, 11);
  }

  void send(Response response, bool keep_alive, bool head, unsigned version) {
    const bool bad_header = std::any_of(response.headers.begin(), response.headers.end(),
                                        [](const auto& h) { return !valid_header(h.first, h.second); });
    if (response.status < 100 || response.status > 599 || response.content_type.find_first_of("\r\n") != std::string::npos ||
        bad_header || response.deferred)  // a deferred reply that defers again
      response = internal_error("the handler returned an invalid response");
    build(std::move(response), head, version);
    write(keep_alive);
  }

  void build(Response response, bool head, unsigned version) {
    response_ = {};
    response_.version(version);
    response_.result(response.status);
    for (const auto& [name, value] : response.headers) response_.set(name, value);  // before ours: ours win
    response_.set(bhttp::field::content_type, response.content_type);
    response_.set(bhttp::field::cache_control, "no-store");
    response_.set("X-Content-Type-Options", "nosniff");
    if (response.status == 405) response_.set(bhttp::field::allow, "GET, HEAD");
    if (response.status == 401) response_.set(bhttp::field::www_authenticate, "Basic realm=\"lockwatch\"");
    response_.content_length(response.body.size());  // HEAD: the length GET would send
    if (!head) response_.body() = std::move(response.body);
  }

  void write(bool keep_alive) {
    response_.keep_alive(keep_alive);
    arm(shared_->options.request_timeout);
    bhttp::async_write(stream_, response_, [self = self(), keep_alive](error_code ec, std::size_t) {
      if (self->closed_) return;
      if (ec) return self->close();
      keep_alive ? self->read_request() : self->linger();
    });
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
  Exchange exchange_;
  bhttp::response<bhttp::string_body> response_;
  std::array<char, 16 * 1024> drain_{};
  std::shared_ptr<Shared> shared_;
  const Address client_;  // as client_address() counts it
  const std::uint64_t id_;
  Phase phase_ = Phase::pending;
  Clock::time_point first_request_deadline_;
  std::atomic<bool> gone_{false};  // closed_, for the verifier thread
  std::uint64_t awaited_ = 0;      // the deferred answer awaited now; bumped when it comes
  std::uint64_t watch_ = 0;        // the peer watch that counts; bumped when it ends
  bool closed_ = false;
  bool lingering_ = false;
  bool handshaken_ = false;
};

void Shared::admit(tcp::socket socket) {
  error_code ec;
  const auto remote = socket.remote_endpoint(ec);
  if (ec) return;  // reset before it was accepted
  const auto client = detail::client_address(remote.address());
  const auto use = clients.find(client);
  if (use != clients.end() && use->second.connections >= options.max_connections_per_client) {
    ++counters.rejected_per_client;
    return;  // closed unanswered as `socket` goes: a 503 would only cost more
  }
  make_room_for_pending();
  socket.set_option(tcp::no_delay(true), ec);
  tls ? start<TlsStream>(std::move(socket), client) : start<tcp::socket>(std::move(socket), client);
}

template <class Stream>
void Shared::start(tcp::socket socket, const Address& client) {
  const auto id = next_id++;
  auto connection = std::make_shared<Connection<Stream>>(std::move(socket), shared_from_this(), id, client);
  connections.emplace(id, connection);
  pending.insert(id);
  ++clients[client].connections;
  publish();
  connection->start();
}

// The oldest pending connection makes room for the newest: a client that sends its headers
// promptly gets through while slow ones from many addresses keep the pending set full.
void Shared::make_room_for_pending() {
  const auto bound = std::max<std::size_t>(1, pending_per_slot * options.max_connections);
  while (pending.size() >= bound) {
    const auto oldest = connections.find(*pending.begin());
    pending.erase(pending.begin());  // forget() would, but this loop must end whatever happens
    ++counters.evicted_pending;
    if (oldest == connections.end()) continue;
    if (auto connection = oldest->second.lock()) connection->close();
  }
}

// The connection's first headers are in: a slot, or a 503 while there are not too many of
// those under way already. Phase::pending: no room even for a 503, the caller closes.
Phase Shared::promote(std::uint64_t id) {
  const bool serve = served < options.max_connections;
  ++(serve ? counters.accepted : counters.rejected_over_cap);
  if (!serve && refused >= options.max_connections) return Phase::pending;  // a flood: close without a word
  pending.erase(id);
  ++(serve ? served : refused);
  publish();
  return serve ? Phase::served : Phase::refused;
}

void Shared::forget(std::uint64_t id, Phase phase, const Address& client) {
  connections.erase(id);
  pending.erase(id);
  if (phase == Phase::served) --served;
  if (phase == Phase::refused) --refused;
  --clients.at(client).connections;
  release_if_unused(client);
  publish();
}

bool Shared::reserve_check(const Address& client) {
  auto& use = clients.at(client);  // the asking connection is open
  if (checks >= options.max_password_checks || use.checks >= options.max_password_checks_per_client) {
    ++counters.checks_refused;
    return false;
  }
  ++checks;
  ++use.checks;
  return true;
}

// Checks run one at a time, and addresses take turns: the next check is the oldest of the
// address first in line, and an address whose check ran rejoins the line at its end. So a
// flood from one address delays another address's login by the one check running at most
// (and a flood from n addresses by n checks), however many checks the flood has queued.
void Shared::queue_check(const Address& client, std::function<void()> job) {
  auto& queue = queued_checks[client];
  if (queue.empty() && checking != client) check_turns.push_back(client);
  queue.push_back(std::move(job));
  run_next_check();
}

void Shared::run_next_check() {
  if (checking || check_turns.empty() || !verifier) return;
  const auto client = check_turns.front();
  check_turns.pop_front();
  const auto queue = queued_checks.find(client);
  auto job = std::move(queue->second.front());
  queue->second.pop_front();
  if (queue->second.empty()) queued_checks.erase(queue);
  checking = client;
  asio::post(*verifier, std::move(job));
}

void Shared::check_done(const Address& client) {
  checking.reset();
  if (queued_checks.count(client) > 0) check_turns.push_back(client);
  release_check(client);
  run_next_check();
}

// When the check has run or been dropped: a check counts until then, so the queue's bounds
// hold even for connections that closed while they waited.
void Shared::release_check(const Address& client) {
  --checks;
  --clients.at(client).checks;
  release_if_unused(client);
}

void Shared::release_if_unused(const Address& client) {
  const auto use = clients.find(client);
  if (use != clients.end() && use->second.connections == 0 && use->second.checks == 0) clients.erase(use);
}

// stop(): the queued checks' connections are closed, so they are dropped unrun, and the
// running one is waited for (one bcrypt at most), so none outlives the io_context it reports
// to. A later set_security() starts a verifier afresh.
void Shared::stop_checks() {
  const auto queued = std::move(queued_checks);
  queued_checks.clear();
  check_turns.clear();
  for (const auto& [client, jobs] : queued) {
    counters.checks_dropped += jobs.size();
    for (std::size_t i = 0; i < jobs.size(); ++i) release_check(client);
  }
  verifier.reset();
  checking.reset();
}

void Shared::publish() {
  counters.open = served;
  counters.pending = pending.size();
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
        shared(std::make_shared<Shared>(std::move(options), std::move(handler), io_context)) {}

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

// Replies to deferred responses that come later find the mailbox closed: the io_context
// they would post to may go once the Server has.
Server::~Server() {
  stop();
  impl_->shared->mailbox->close();
}

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
  impl_->shared->stop_checks();
}

void Server::set_security(const Security& security) { impl_->shared->apply(security); }

bool Server::tls() const { return impl_->shared->tls != nullptr; }

ServerStats Server::stats() const {
  const auto& c = impl_->shared->counters;
  return {.accepted = c.accepted,
          .rejected_over_cap = c.rejected_over_cap,
          .timed_out = c.timed_out,
          .requests = c.requests,
          .open_connections = c.open,
          .rejected_per_client = c.rejected_per_client,
          .evicted_pending = c.evicted_pending,
          .pending_connections = c.pending,
          .password_checks_run = c.checks_run,
          .password_checks_dropped = c.checks_dropped,
          .password_checks_refused = c.checks_refused};
}

}  // namespace lockwatch::http
