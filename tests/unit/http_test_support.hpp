// SPDX-License-Identifier: Apache-2.0
// For the HTTP server's tests: a Server on its own io thread, and loopback clients, plain or
// TLS, that read raw bytes with deadlines (no code shared with the server they check).
#pragma once

#include "lockwatch/asio.hpp"  // before any other Asio header

#include <boost/asio/ssl.hpp>

#include <cctype>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>

#include "lockwatch/http/router.hpp"
#include "lockwatch/http/server.hpp"

namespace lockwatch::test {

namespace asio = boost::asio;
using namespace std::chrono_literals;

// The daemon's routes in miniature: the handler is the router, as in the daemon.
inline http::Router test_router() {
  using namespace lockwatch::http;
  Router router;
  router.add("/metrics", [](const Request&, const Params&) { return text_response("lockwatch_up 1\n"); });
  router.add("/healthz", [](const Request&, const Params&) { return text_response("ok\n"); });
  router.add("/echo/{what}", [](const Request& request, const Params& params) {
    const auto x = request.query.find("x");
    return json_response("{\"what\":\"" + params.at("what") + "\",\"x\":\"" + (x == request.query.end() ? "" : x->second) + "\"}");
  });
  router.add("/throw", [](const Request&, const Params&) -> Response { throw std::runtime_error("boom"); });
  return router;
}

// A Server on its own io thread. Calls into the Server go through the io thread, as the
// daemon's would; stats() may be read from any thread.
class TestServer {
 public:
  explicit TestServer(http::ServerOptions options = {}, http::Server::Handler handler = {})
      : server_(io_, with_port0(std::move(options)), handler ? std::move(handler) : default_handler()) {
    server_.start();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~TestServer() {
    on_io([this] { server_.stop(); });
    work_.reset();
    thread_.join();
  }
  TestServer(const TestServer&) = delete;
  TestServer& operator=(const TestServer&) = delete;

  void on_io(std::function<void()> fn) {
    std::promise<void> done;
    asio::post(io_, [&] {
      try {
        fn();
        done.set_value();
      } catch (...) {
        done.set_exception(std::current_exception());
      }
    });
    done.get_future().get();
  }
  void stop() { on_io([this] { server_.stop(); }); }
  void set_security(const http::Security& security) { on_io([&] { server_.set_security(security); }); }
  std::uint16_t port() const { return server_.port(); }
  http::ServerStats stats() const { return server_.stats(); }

 private:
  static http::ServerOptions with_port0(http::ServerOptions options) {
    options.port = 0;
    return options;
  }
  static http::Server::Handler default_handler() {
    return [router = test_router()](const http::Request& request) { return router.handle(request); };
  }

  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_ = asio::make_work_guard(io_);
  http::Server server_;
  std::thread thread_;
};

struct Reply {
  unsigned status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;

  std::string header(const std::string& name) const {
    const auto it = headers.find(name);
    return it == headers.end() ? "(absent)" : it->second;
  }
};

using TlsSocket = asio::ssl::stream<asio::ip::tcp::socket>;

// A blocking-style client over async operations, so every read has a timeout.
template <class Stream>
class BasicClient {
 public:
  static constexpr bool tls = std::is_same_v<Stream, TlsSocket>;

  // `from`: the local address to connect from. All of 127.0.0.0/8 is loopback on Linux, so
  // clients bound to 127.0.0.2, 127.0.0.3 ... are distinct clients to the server.
  explicit BasicClient(std::uint16_t port, const char* host = "127.0.0.1", const char* from = nullptr) requires(!tls)
      : stream_(io_) {
    const auto server = asio::ip::make_address(host);
    if (from) {
      stream_.open(server.is_v4() ? asio::ip::tcp::v4() : asio::ip::tcp::v6());
      stream_.bind({asio::ip::make_address(from), 0});
    }
    stream_.connect({server, port});
  }
  BasicClient(std::uint16_t port, asio::ssl::context& context) requires tls : stream_(io_, context) {
    stream_.next_layer().connect({asio::ip::make_address("127.0.0.1"), port});
  }

  boost::system::error_code handshake(std::chrono::milliseconds timeout = 5s) requires tls {
    return run([&](auto done) { stream_.async_handshake(asio::ssl::stream_base::client, [done](auto ec) { done(ec, 0); }); },
               timeout);
  }

  void send(std::string_view bytes) { asio::write(stream_, asio::buffer(bytes)); }

  // One response, framed by Content-Length (HEAD: headers only); nullopt on EOF or timeout.
  std::optional<Reply> read_reply(bool head = false, std::chrono::milliseconds timeout = 5s) {
    if (run([&](auto done) { asio::async_read_until(stream_, asio::dynamic_buffer(in_), "\r\n\r\n", done); }, timeout))
      return std::nullopt;
    const auto end = in_.find("\r\n\r\n") + 4;
    Reply reply = parse_head(in_.substr(0, end));
    in_.erase(0, end);
    const std::size_t length = head ? 0 : std::stoul(reply.header("content-length"));
    if (in_.size() < length &&
        run([&](auto done) { asio::async_read(stream_, asio::dynamic_buffer(in_), asio::transfer_exactly(length - in_.size()), done); }, timeout))
      return std::nullopt;
    reply.body = in_.substr(0, length);
    in_.erase(0, length);
    return reply;
  }

  // True when the server ends the connection (EOF, reset, or a TLS stream cut short) within
  // `timeout`; what it sends before that is kept in received().
  bool closed_within(std::chrono::milliseconds timeout) {
    for (auto deadline = std::chrono::steady_clock::now() + timeout; std::chrono::steady_clock::now() < deadline;) {
      std::array<char, 4096> chunk{};
      std::size_t n = 0;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()) + 1ms;
      const auto ec = run([&](auto done) { stream_.async_read_some(asio::buffer(chunk), [&n, done](auto e, std::size_t got) { n = got, done(e, got); }); }, left);
      in_.append(chunk.data(), n);
      if (ec == asio::error::eof || ec == asio::error::connection_reset || ec == asio::ssl::error::stream_truncated) return true;
      if (ec) return false;  // timed out
    }
    return false;
  }

  const std::string& received() const { return in_; }

 private:
  template <class Start>
  boost::system::error_code run(Start start, std::chrono::milliseconds timeout) {
    std::optional<boost::system::error_code> result;
    start([&result](boost::system::error_code ec, std::size_t) { result = ec; });
    io_.restart();
    io_.run_for(timeout);
    if (result) return *result;
    boost::system::error_code ignored;
    lowest().cancel(ignored);
    io_.restart();
    io_.run();
    return asio::error::timed_out;
  }

  asio::ip::tcp::socket& lowest() {
    if constexpr (tls) return stream_.next_layer();
    else return stream_;
  }

  static Reply parse_head(const std::string& head) {
    Reply reply;
    reply.status = static_cast<unsigned>(std::stoul(head.substr(head.find(' ') + 1, 3)));
    for (auto pos = head.find("\r\n") + 2; pos < head.size() - 2;) {
      const auto eol = head.find("\r\n", pos);
      const auto line = head.substr(pos, eol - pos);
      const auto colon = line.find(':');
      std::string name = line.substr(0, colon);
      for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      reply.headers[name] = line.substr(line.find_first_not_of(' ', colon + 1));
      pos = eol + 2;
    }
    return reply;
  }

  asio::io_context io_;
  Stream stream_;
  std::string in_;
};

using Client = BasicClient<asio::ip::tcp::socket>;
using TlsClient = BasicClient<TlsSocket>;

inline std::string get(std::string_view target, std::string_view extra = "") {
  return "GET " + std::string(target) + " HTTP/1.1\r\nHost: localhost\r\n" + std::string(extra) + "\r\n";
}

// A plain client connecting from `from` ("127.0.0.2"), to the server on 127.0.0.1.
inline std::unique_ptr<Client> client_from(const std::string& from, std::uint16_t port) {
  return std::make_unique<Client>(port, "127.0.0.1", from.c_str());
}

// "127.0.0.<n>" for n in 1..254: distinct loopback clients.
inline std::string loopback(int n) { return "127.0.0." + std::to_string(n); }

inline long long elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - since).count();
}

inline bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout = 3s) {
  for (auto deadline = std::chrono::steady_clock::now() + timeout; std::chrono::steady_clock::now() < deadline;
       std::this_thread::sleep_for(10ms))
    if (condition()) return true;
  return condition();
}

}  // namespace lockwatch::test
