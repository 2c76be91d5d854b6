// SPDX-License-Identifier: Apache-2.0
// http_load: GETs at a fixed rate on keep-alive connections, then latency percentiles.
//
//   http_load --url http://127.0.0.1:9465/metrics --rate 50 --seconds 20 [--connections 2] [--timeout-ms 5000]
//
// Open loop: request i is due at start + i/rate whatever happened to the ones before, and
// its latency counts from that deadline, so a stalled server shows up as latency instead of
// as a lower send rate. A request finding every connection busy waits for one (a "late
// send"); connections open on first use and reopen after an error. Responses must carry
// Content-Length, which the lockwatch server always sends.
// Exit status: 0 when every request got a 2xx, 1 when any failed, 2 on bad arguments.
#include "lockwatch/asio.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string host, port, path;
  double rate = 0;
  double seconds = 0;
  std::size_t connections = 2;
  std::chrono::milliseconds timeout{5000};
};

// "host:port", with an IPv6 host in brackets: for the Host header and the report.
std::string host_port(const Options& options) {
  const bool v6 = options.host.find(':') != std::string::npos;
  return (v6 ? "[" + options.host + "]" : options.host) + ":" + options.port;
}

struct Results {
  std::vector<double> latency_ms;  // successful requests only
  std::uint64_t bad_status = 0, io_errors = 0, timeouts = 0, late_sends = 0;
  std::uint64_t errors() const { return bad_status + io_errors + timeouts; }
};

// "http://host:port/path" with host possibly "[::1]"; the port defaults to 80.
bool parse_url(std::string_view url, Options& options) {
  constexpr std::string_view scheme = "http://";
  if (!url.starts_with(scheme)) return false;
  url.remove_prefix(scheme.size());
  const auto slash = url.find('/');
  const auto authority = url.substr(0, slash);
  options.path = slash == std::string_view::npos ? "/" : std::string(url.substr(slash));
  const auto bracket = authority.rfind(']');
  const auto colon = authority.rfind(':');
  const bool has_port = colon != std::string_view::npos && (bracket == std::string_view::npos || colon > bracket);
  auto host = authority.substr(0, has_port ? colon : authority.size());
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  options.host = std::string(host);
  options.port = has_port ? std::string(authority.substr(colon + 1)) : "80";
  return !options.host.empty() && !options.port.empty();
}

template <class T>
bool parse_number(std::string_view text, T& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size();
}

bool parse_flag(std::string_view flag, std::string_view value, Options& options, bool& have_url) {
  if (flag == "--url") return have_url = parse_url(value, options);
  if (flag == "--rate") return parse_number(value, options.rate) && options.rate > 0;
  if (flag == "--seconds") return parse_number(value, options.seconds) && options.seconds > 0;
  if (flag == "--connections") return parse_number(value, options.connections) && options.connections > 0;
  long long ms = 0;
  if (flag != "--timeout-ms" || !parse_number(value, ms) || ms <= 0) return false;
  options.timeout = std::chrono::milliseconds(ms);
  return true;
}

std::optional<Options> parse_args(int argc, char** argv) {
  Options options;
  bool have_url = false;
  if (argc % 2 == 0) return std::nullopt;
  for (int i = 1; i + 1 < argc; i += 2)
    if (!parse_flag(argv[i], argv[i + 1], options, have_url)) return std::nullopt;
  if (!have_url || options.rate <= 0 || options.seconds <= 0) return std::nullopt;
  return options;
}

class Load;

// One keep-alive connection running one request at a time.
class Connection {
 public:
  Connection(asio::io_context& io, Load& load) : socket_(io), timer_(io), load_(load) {}
  void run(Clock::time_point due);

 private:
  void connect();
  void failed_before_response();
  void send();
  void read_head();
  void read_body(std::size_t length);
  enum class Outcome { ok, bad_status, io_error };
  void done(Outcome outcome);

  tcp::socket socket_;
  asio::steady_timer timer_;
  Load& load_;
  std::string in_;
  Clock::time_point due_;
  unsigned status_ = 0;
  std::uint64_t generation_ = 0;  // the request a timer belongs to
  bool close_after_ = false;
  bool reused_ = false;  // kept alive from an earlier request
  bool timed_out_ = false;
};

class Load {
 public:
  Load(asio::io_context& io, const Options& options)
      : options_(options), ticker_(io), total_(static_cast<std::uint64_t>(std::llround(options.rate * options.seconds))),
        endpoints_(tcp::resolver(io).resolve(options.host, options.port)),
        request_("GET " + options.path + " HTTP/1.1\r\nHost: " + host_port(options) + "\r\n\r\n") {
    for (std::size_t i = 0; i < options.connections; ++i) connections_.push_back(std::make_unique<Connection>(io, *this));
    for (auto& connection : connections_) idle_.push_back(connection.get());
  }

  void start() {
    start_ = Clock::now();
    tick(0);
  }

  // A connection finished its request: it takes the oldest waiting one, or goes idle.
  void finished(Connection* connection) {
    if (queue_.empty()) return idle_.push_back(connection);
    const auto due = queue_.front();
    queue_.pop_front();
    connection->run(due);
  }

  const Options& options() const { return options_; }
  const tcp::resolver::results_type& endpoints() const { return endpoints_; }
  const std::string& request() const { return request_; }
  Results& results() { return results_; }
  std::uint64_t total() const { return total_; }
  Clock::duration elapsed() const { return Clock::now() - start_; }

 private:
  // Deadlines are absolute (start + i/rate), so timer latency never accumulates into drift.
  void tick(std::uint64_t i) {
    if (i == total_) return;
    const std::chrono::duration<double> offset(static_cast<double>(i) / options_.rate);
    const auto due = start_ + std::chrono::duration_cast<Clock::duration>(offset);
    ticker_.expires_at(due);
    ticker_.async_wait([this, i, due](error_code) {
      dispatch(due);
      tick(i + 1);
    });
  }

  void dispatch(Clock::time_point due) {
    if (idle_.empty()) return ++results_.late_sends, queue_.push_back(due);
    auto* connection = idle_.back();
    idle_.pop_back();
    connection->run(due);
  }

  Options options_;
  asio::steady_timer ticker_;
  std::uint64_t total_;
  tcp::resolver::results_type endpoints_;
  std::string request_;
  std::vector<std::unique_ptr<Connection>> connections_;
  std::vector<Connection*> idle_;
  std::deque<Clock::time_point> queue_;
  Clock::time_point start_;
  Results results_;
};

void Connection::run(Clock::time_point due) {
  due_ = due;
  timed_out_ = false;
  timer_.expires_after(load_.options().timeout);
  timer_.async_wait([this, generation = ++generation_](error_code ec) {
    if (ec || generation != generation_) return;  // cancelled, or an expiry queued too late
    timed_out_ = true;
    error_code ignored;
    socket_.close(ignored);  // the pending operation fails and done() counts a timeout
  });
  reused_ = socket_.is_open();
  reused_ ? send() : connect();
}

void Connection::connect() {
  asio::async_connect(socket_, load_.endpoints(), [this](error_code ec, const tcp::endpoint&) {
    if (ec) return done(Outcome::io_error);
    socket_.set_option(tcp::no_delay(true), ec);
    send();
  });
}

// The server may have closed a kept-alive connection while it sat idle (its keep-alive
// timeout): that is no error of the request, which gets one fresh connection.
void Connection::failed_before_response() {
  if (!reused_ || timed_out_) return done(Outcome::io_error);
  reused_ = false;
  error_code ignored;
  socket_.close(ignored);
  in_.clear();
  connect();
}

void Connection::send() {
  asio::async_write(socket_, asio::buffer(load_.request()), [this](error_code ec, std::size_t) {
    if (ec) return failed_before_response();
    read_head();
  });
}

// Status line and headers; only Content-Length framing (what the lockwatch server sends).
void Connection::read_head() {
  asio::async_read_until(socket_, asio::dynamic_buffer(in_), "\r\n\r\n", [this](error_code ec, std::size_t size) {
    if (ec) return in_.empty() ? failed_before_response() : done(Outcome::io_error);
    std::string head = in_.substr(0, size);
    in_.erase(0, size);
    for (auto& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const auto field = head.find("\r\ncontent-length:");
    std::size_t length = 0;
    if (!head.starts_with("http/1.") || head.size() < 12 || field == std::string::npos ||
        !parse_number(std::string_view(head).substr(9, 3), status_))
      return done(Outcome::io_error);
    const auto digits = head.find_first_not_of(' ', field + 17);
    std::from_chars(head.data() + digits, head.data() + head.size(), length);
    close_after_ = head.find("\r\nconnection: close") != std::string::npos;
    read_body(length);
  });
}

void Connection::read_body(std::size_t length) {
  const auto missing = length > in_.size() ? length - in_.size() : 0;
  asio::async_read(socket_, asio::dynamic_buffer(in_), asio::transfer_exactly(missing), [this, length](error_code ec, std::size_t) {
    if (ec) return done(Outcome::io_error);
    in_.erase(0, length);
    done(status_ >= 200 && status_ < 300 ? Outcome::ok : Outcome::bad_status);
  });
}

// Records one request's outcome; a failed or closing connection reconnects for the next.
void Connection::done(Outcome outcome) {
  ++generation_;
  timer_.cancel();
  auto& results = load_.results();
  if (outcome == Outcome::ok) results.latency_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - due_).count());
  else if (timed_out_) ++results.timeouts;
  else if (outcome == Outcome::bad_status) ++results.bad_status;
  else ++results.io_errors;
  if (outcome == Outcome::io_error || close_after_) {
    error_code ignored;
    socket_.close(ignored);
    in_.clear();
  }
  load_.finished(this);
}

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

void print(const Options& options, Results& results, std::uint64_t total, double seconds) {
  auto& latency = results.latency_ms;
  std::sort(latency.begin(), latency.end());
  std::printf("http_load: GET http://%s%s at %g/s for %g s on %zu connection(s)\n", host_port(options).c_str(),
              options.path.c_str(), options.rate, options.seconds, options.connections);
  std::printf("requests %llu  ok %zu  errors %llu (status %llu, io %llu, timeout %llu)  late sends %llu  in %.2f s\n",
              static_cast<unsigned long long>(total), latency.size(), static_cast<unsigned long long>(results.errors()),
              static_cast<unsigned long long>(results.bad_status), static_cast<unsigned long long>(results.io_errors),
              static_cast<unsigned long long>(results.timeouts), static_cast<unsigned long long>(results.late_sends), seconds);
  std::printf("latency ms  p50 %.3f  p90 %.3f  p99 %.3f  max %.3f\n", percentile(latency, 0.50), percentile(latency, 0.90),
              percentile(latency, 0.99), latency.empty() ? 0.0 : latency.back());
}

}  // namespace

int main(int argc, char** argv) {
  const auto options = parse_args(argc, argv);
  if (!options) {
    std::fprintf(stderr, "usage: http_load --url http://HOST:PORT/PATH --rate PER_SECOND --seconds S"
                         " [--connections N] [--timeout-ms MS]\n");
    return 2;
  }
  try {
    asio::io_context io;
    Load load(io, *options);
    load.start();
    io.run();  // returns once the last request has finished or timed out
    const double seconds = std::chrono::duration<double>(load.elapsed()).count();
    print(*options, load.results(), load.total(), seconds);
    return load.results().errors() == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "http_load: %s\n", e.what());
    return 1;
  }
}
