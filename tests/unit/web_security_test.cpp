// SPDX-License-Identifier: Apache-2.0
// The HTTP server with a web config: basic auth, TLS with certificates made at test time,
// plain clients on the TLS port, minimum versions, client certificates, and the limits.
#include <catch2/catch.hpp>

#include "http_test_support.hpp"  // Asio first

#include <crypt.h>
#include <openssl/ssl.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "basic_auth.hpp"
#include "process.hpp"

using namespace lockwatch;
using namespace lockwatch::test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;
namespace ssl = boost::asio::ssl;

namespace {

// A bcrypt hash made here with libxcrypt, as htpasswd -B would; cost 4 keeps tests fast.
std::string bcrypt(const std::string& password, unsigned long cost = 4) {
  char setting[CRYPT_GENSALT_OUTPUT_SIZE];
  REQUIRE(crypt_gensalt_rn("$2y$", cost, nullptr, 0, setting, sizeof setting) != nullptr);
  crypt_data data{};
  const char* hash = crypt_rn(password.c_str(), setting, &data, sizeof data);
  REQUIRE(hash != nullptr);
  return hash;
}

std::string base64(std::string_view in) {
  static constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (std::size_t i = 0; i < in.size(); i += 3) {
    const std::size_t n = std::min<std::size_t>(3, in.size() - i);
    std::uint32_t bits = 0;
    for (std::size_t k = 0; k < 3; ++k) bits = bits << 8 | (k < n ? static_cast<unsigned char>(in[i + k]) : 0u);
    for (std::size_t k = 0; k < 4; ++k) out += k <= n ? alphabet[(bits >> (18 - 6 * k)) & 63] : '=';
  }
  return out;
}

std::string basic(std::string_view user_password) { return "Authorization: Basic " + base64(user_password) + "\r\n"; }

// Certificates made once per run with the openssl tool: a self-signed server certificate
// for 127.0.0.1, and a CA with one client certificate.
struct Certificates {
  fs::path dir, cert, key, ca, client_cert, client_key, other_key;
};

void openssl(const std::vector<std::string>& args) {
  std::vector<std::string> argv{"openssl"};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto r = run_command(argv, std::chrono::seconds(120));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
}

const Certificates& certificates() {
  static const Certificates made = [] {
    Certificates c;
    c.dir = fs::temp_directory_path() / ("lockwatch-tls-test-" + std::to_string(::getpid()));
    fs::create_directories(c.dir);
    c.cert = c.dir / "tls.crt", c.key = c.dir / "tls.key", c.ca = c.dir / "ca.crt";
    c.client_cert = c.dir / "client.crt", c.client_key = c.dir / "client.key", c.other_key = c.dir / "other.key";
    openssl({"req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
             "-days", "1", "-keyout", c.key, "-out", c.cert});
    openssl({"req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=lockwatch test CA", "-days", "1",
             "-keyout", (c.dir / "ca.key").string(), "-out", c.ca});
    openssl({"req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=prometheus", "-keyout", c.client_key,
             "-out", (c.dir / "client.csr").string()});
    openssl({"x509", "-req", "-in", (c.dir / "client.csr").string(), "-CA", c.ca, "-CAkey", (c.dir / "ca.key").string(),
             "-CAcreateserial", "-days", "1", "-out", c.client_cert});
    openssl({"genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", c.other_key});
    return c;
  }();
  // Removed when the test process exits (each CTest case is a process of its own: they were
  // left in /tmp, keys included); destroyed before `made`, which was constructed first.
  static const struct Removal {
    const fs::path& dir;
    ~Removal() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } removal{made.dir};
  return made;
}

http::ServerOptions tls_options(http::TlsVersion min_version = http::TlsVersion::tls12) {
  const auto& c = certificates();
  http::ServerOptions options;
  options.security.tls = http::TlsOptions{c.cert, c.key, "", min_version};
  return options;
}

// A client that trusts the test certificate and checks that it names 127.0.0.1.
std::unique_ptr<ssl::context> client_context(std::optional<int> max_version = std::nullopt) {
  auto context = std::make_unique<ssl::context>(ssl::context::tls_client);
  context->load_verify_file(certificates().cert);
  context->set_verify_mode(ssl::verify_peer);
  context->set_verify_callback(ssl::host_name_verification("127.0.0.1"));
  if (max_version) SSL_CTX_set_max_proto_version(context->native_handle(), *max_version);
  return context;
}

// True when the server turns the client away: at the handshake (TLS 1.2), or right after
// it (TLS 1.3 checks the client's certificate once the client thinks it is done).
bool turned_away(TlsClient& client) {
  if (client.handshake()) return true;
  try {
    client.send(get("/metrics"));
  } catch (const boost::system::system_error&) {
    return true;
  }
  return !client.read_reply();
}

// One bcrypt check with this hash on this machine now: the median of three, in ms.
long long bcrypt_ms(const std::string& hash) {
  http::detail::PasswordCheck check({{"prometheus", hash}});
  std::vector<long long> times;
  for (int i = 0; i < 3; ++i) {
    const auto start = std::chrono::steady_clock::now();
    CHECK_FALSE(check.verify({"prometheus", "wrong"}));
    times.push_back(elapsed_ms(start));
  }
  std::sort(times.begin(), times.end());
  return times[1];
}

// A login on a new connection from `from`: its time in ms, or -1 when it does not get 200.
long long timed_login(std::uint16_t port, const std::string& from, const std::string& user_password) {
  const auto start = std::chrono::steady_clock::now();
  const auto client = client_from(from, port);
  client->send(get("/metrics", basic(user_password)));
  const auto reply = client->read_reply(false, 10s);
  return reply && reply->status == 200 ? elapsed_ms(start) : -1;
}

std::unique_ptr<Client> wrong_password(const std::string& from, std::uint16_t port) {
  auto client = client_from(from, port);
  client->send(get("/metrics", basic("prometheus:wrong")));
  return client;
}

}  // namespace

// --- basic auth ---

TEST_CASE("basic auth: the Authorization header and strict base64", "[http][web][auth]") {
  using http::detail::parse_basic;
  CHECK(http::detail::base64_decode("cHJvbWV0aGV1czpzM2NyM3Q=") == "prometheus:s3cr3t");
  CHECK(http::detail::base64_decode("YQ==") == "a");
  CHECK(http::detail::base64_decode("YWI=") == "ab");
  CHECK(http::detail::base64_decode("") == "");
  for (std::string_view bad : {"YQ=", "Y===", "YQ==YQ==", "Y Q==", "YQ=a", "****"}) CHECK_FALSE(http::detail::base64_decode(bad));
  const auto ok = parse_basic("Basic cHJvbWV0aGV1czpzM2NyM3Q=");
  REQUIRE(ok);
  CHECK(ok->user == "prometheus");
  CHECK(ok->password == "s3cr3t");
  CHECK(parse_basic("basic   cHJvbWV0aGV1czpzM2NyM3Q=  ")->password == "s3cr3t");
  CHECK(parse_basic("Basic OnA6cQ==")->password == "p:q");  // ":p:q": the first ':' ends the user
  CHECK(parse_basic("Basic OnA6cQ==")->user.empty());
  CHECK_FALSE(parse_basic(""));
  CHECK_FALSE(parse_basic("Bearer cHJvbWV0aGV1czpzM2NyM3Q="));
  CHECK_FALSE(parse_basic("Basic bm9jb2xvbg=="));  // "nocolon"
  CHECK_FALSE(parse_basic("Basic"));
}

TEST_CASE("basic auth: bcrypt verification, unknown users, and the bounded memory of successes", "[http][web][auth]") {
  const auto hash = bcrypt("s3cr3t");
  http::detail::PasswordCheck check({{"prometheus", hash}});
  CHECK_FALSE(check.remembered({"prometheus", "s3cr3t"}));
  CHECK(check.verify({"prometheus", "s3cr3t"}));
  CHECK(check.remembered({"prometheus", "s3cr3t"}));
  CHECK_FALSE(check.verify({"prometheus", "s3cr3T"}));
  CHECK_FALSE(check.verify({"grafana", "s3cr3t"}));  // another user with that password
  CHECK_FALSE(check.verify({"prometheus", std::string("s3cr3t\0x", 8)}));
  CHECK_FALSE(check.remembered({"grafana", "s3cr3t"}));

  std::map<std::string, std::string, std::less<>> many;
  for (std::size_t i = 0; i <= http::detail::PasswordCheck::max_remembered; ++i) many["user" + std::to_string(i)] = hash;
  http::detail::PasswordCheck bounded(many);
  for (const auto& [user, unused] : many) REQUIRE(bounded.verify({user, "s3cr3t"}));
  // 129 successes through a memory of 128: it was emptied once, and holds the newest.
  CHECK_FALSE(bounded.remembered({"user0", "s3cr3t"}));
  CHECK(bounded.remembered({"user99", "s3cr3t"}));
}

TEST_CASE("basic auth: 401 without or with wrong credentials, 200 with the right ones, /healthz open", "[http][web][auth]") {
  http::ServerOptions options;
  options.security.basic_auth_users = {{"prometheus", bcrypt("s3cr3t")}};
  TestServer server(options);
  Client client(server.port());
  const auto expect_401 = [&](const std::string& extra) {
    client.send(get("/metrics", extra));
    const auto reply = client.read_reply();
    REQUIRE(reply);
    CHECK(reply->status == 401);
    CHECK(reply->header("www-authenticate") == "Basic realm=\"lockwatch\"");
    CHECK(reply->body == "{\"error\":\"unauthorized\"}\n");
  };
  expect_401("");
  expect_401(basic("prometheus:wrong"));
  expect_401(basic("grafana:s3cr3t"));
  expect_401("Authorization: Bearer abc\r\n");
  expect_401("Authorization: Basic !!!!\r\n");
  for (int i = 0; i < 2; ++i) {  // the second time from memory
    client.send(get("/metrics", basic("prometheus:s3cr3t")));
    const auto reply = client.read_reply();
    REQUIRE(reply);
    CHECK(reply->status == 200);
    CHECK(reply->body == "lockwatch_up 1\n");
  }
  client.send(get("/healthz"));  // same connection: a 401 does not close it
  const auto health = client.read_reply();
  REQUIRE(health);
  CHECK(health->status == 200);
  client.send("HEAD /echo/x HTTP/1.1\r\nHost: x\r\n\r\n");
  const auto head = client.read_reply(true);
  REQUIRE(head);
  CHECK(head->status == 401);
  CHECK(server.stats().requests == 9);
}

TEST_CASE("basic auth: bcrypt runs off the io thread, so a slow check delays no one else", "[http][web][auth]") {
  http::ServerOptions options;
  options.security.basic_auth_users = {{"prometheus", bcrypt("s3cr3t", 11)}};  // over 100 ms per check
  options.request_timeout = 60s;  // a loaded machine may take seconds for it
  TestServer server(options);
  Client slow(server.port());
  slow.send(get("/metrics", basic("prometheus:wrong")));
  Client probe(server.port());
  probe.send(get("/healthz"));
  const auto health = probe.read_reply();
  REQUIRE(health);
  CHECK(health->status == 200);
  // Had bcrypt run on the io thread, the probe's answer would have waited for it, and the
  // 401 would be there by now.
  CHECK_FALSE(slow.read_reply(false, 1ms));
  const auto refused = slow.read_reply(false, 30s);
  REQUIRE(refused);
  CHECK(refused->status == 401);
}

TEST_CASE("stop() waits for a running password check and drops the queued ones", "[http][web][auth]") {
  http::ServerOptions options;
  options.security.basic_auth_users = {{"prometheus", bcrypt("s3cr3t", 11)}};
  auto server = std::make_unique<TestServer>(options);
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < 3; ++i) {
    clients.push_back(std::make_unique<Client>(server->port()));
    clients.back()->send(get("/metrics", basic("prometheus:wrong")));
  }
  REQUIRE(eventually([&] { return server->stats().requests == 3; }));
  server.reset();  // the io_context goes with it: no check may report to it afterwards
  for (auto& client : clients) CHECK(client->closed_within(3s));
}

TEST_CASE("basic auth: a flood of wrong passwords from one address does not delay another's login", "[http][web][auth][tenants]") {
  const auto hash = bcrypt("s3cr3t", 10);  // a deployment's cost
  http::ServerOptions options;
  options.max_connections_per_client = 64;  // one address, many connections
  options.security.basic_auth_users = {{"prometheus", hash}, {"grafana", hash}};
  TestServer server(options);
  const auto one = bcrypt_ms(hash);
  const auto alone = timed_login(server.port(), "127.0.0.3", "grafana:s3cr3t");  // one check, no flood

  constexpr std::size_t flood = 40;  // would take 40 checks one after the other
  std::vector<std::unique_ptr<Client>> attacker;
  for (std::size_t i = 0; i < flood; ++i) attacker.push_back(wrong_password("127.0.0.2", server.port()));
  REQUIRE(eventually([&] { return server.stats().requests == flood + 1; }));
  const auto flooded = timed_login(server.port(), "127.0.0.4", "prometheus:s3cr3t");
  INFO("one check " << one << " ms, a login alone " << alone << " ms, under the flood " << flooded << " ms");
  REQUIRE(alone >= 0);
  REQUIRE(flooded >= 0);
  // Behind max_password_checks_per_client (2) of the flood's checks at most; an unbounded
  // queue would put it behind all 40.
  CHECK(flooded < 10 * one + 500);

  std::size_t unauthorized = 0, busy = 0;
  for (auto& client : attacker) {
    const auto reply = client->read_reply(false, 10s);
    REQUIRE(reply);
    unauthorized += reply->status == 401 ? 1u : 0u;
    busy += reply->status == 503 ? 1u : 0u;
    if (reply->status == 503) CHECK(reply->header("retry-after") == "1");
  }
  CHECK(unauthorized + busy == flood);
  CHECK(busy >= flood / 2);  // all but 2, unless the machine is slow to send them
  const auto stats = server.stats();
  CHECK(stats.password_checks_refused == busy);  // no bcrypt for those
  CHECK(stats.password_checks_run == unauthorized + 2);
}

TEST_CASE("basic auth: addresses take turns for bcrypt, so a newcomer waits for the running check only", "[http][web][auth][tenants]") {
  http::ServerOptions options;
  options.security.basic_auth_users = {{"prometheus", bcrypt("s3cr3t", 12)}};  // long enough to arrive during one
  options.request_timeout = 30s;
  TestServer server(options);
  const auto first = wrong_password("127.0.0.2", server.port());
  const auto second = wrong_password("127.0.0.2", server.port());
  REQUIRE(eventually([&] { return server.stats().requests == 2; }));  // one check runs, one waits
  REQUIRE(timed_login(server.port(), "127.0.0.3", "prometheus:s3cr3t") >= 0);
  // In arrival order the login would have come third; in turns, second.
  CHECK(server.stats().password_checks_run == 2);
  for (const auto* client : {&first, &second}) {
    const auto reply = (*client)->read_reply(false, 10s);
    REQUIRE(reply);
    CHECK(reply->status == 401);
  }
}

TEST_CASE("basic auth: the checks of connections that closed before their turn are dropped unrun", "[http][web][auth][tenants]") {
  http::ServerOptions options;
  options.security.basic_auth_users = {{"prometheus", bcrypt("s3cr3t", 11)}};
  TestServer server(options);
  std::vector<std::unique_ptr<Client>> clients;  // two from each of 8 addresses: the 16 the queue holds
  for (int i = 0; i < 16; ++i) clients.push_back(wrong_password(loopback(2 + i / 2), server.port()));
  REQUIRE(eventually([&] { return server.stats().requests == 16; }));
  CHECK(server.stats().password_checks_refused == 0);
  clients.clear();  // every client hangs up
  REQUIRE(eventually([&] {
    const auto s = server.stats();
    return s.password_checks_run + s.password_checks_dropped == 16;
  }));
  CHECK(server.stats().password_checks_dropped >= 12);  // all but the one or two already running
  CHECK(eventually([&] { return server.stats().open_connections == 0; }));
  CHECK(timed_login(server.port(), "127.0.0.20", "prometheus:s3cr3t") >= 0);
}

TEST_CASE("basic auth: over the checks' bounds a request gets 503 and Retry-After at once, remembered credentials pass", "[http][web][auth][tenants]") {
  const auto hash = bcrypt("s3cr3t", 11);
  http::ServerOptions options;
  options.max_password_checks = 4;  // max_password_checks_per_client stays 2
  options.security.basic_auth_users = {{"prometheus", hash}};
  TestServer server(options);
  const auto one = bcrypt_ms(hash);
  REQUIRE(timed_login(server.port(), "127.0.0.1", "prometheus:s3cr3t") >= 0);  // remembered from now on

  const auto expect_busy = [](Client& client) {
    const auto reply = client.read_reply(false, 5s);
    REQUIRE(reply);
    CHECK(reply->status == 503);
    CHECK(reply->header("retry-after") == "1");
    CHECK(reply->header("connection") == "(absent)");  // kept alive: the client may retry on it
  };
  std::vector<std::unique_ptr<Client>> queued;
  const auto start = std::chrono::steady_clock::now();
  queued.push_back(wrong_password("127.0.0.2", server.port()));
  queued.push_back(wrong_password("127.0.0.2", server.port()));
  const auto third = wrong_password("127.0.0.2", server.port());  // the address's third check
  expect_busy(*third);
  queued.push_back(wrong_password("127.0.0.3", server.port()));
  queued.push_back(wrong_password("127.0.0.3", server.port()));
  const auto fifth = wrong_password("127.0.0.4", server.port());  // the fifth in all
  expect_busy(*fifth);
  const auto remembered = timed_login(server.port(), "127.0.0.5", "prometheus:s3cr3t");
  const auto busy_ms = elapsed_ms(start);
  INFO("one check " << one << " ms; refusals and the remembered login after " << busy_ms << " ms");
  CHECK(remembered >= 0);
  CHECK(busy_ms < one);  // the 4 queued checks take 4 x one
  CHECK(server.stats().password_checks_refused == 2);

  for (auto& client : queued) {
    const auto reply = client->read_reply(false, 10s);
    REQUIRE(reply);
    CHECK(reply->status == 401);
  }
  third->send(get("/metrics", basic("prometheus:s3cr3t")));  // retried on the same connection
  const auto retried = third->read_reply(false, 5s);
  REQUIRE(retried);
  CHECK(retried->status == 200);
  CHECK(server.stats().password_checks_run == 5);  // the first login and the 4 queued; the retry was remembered
}

TEST_CASE("set_security: users and TLS change for new connections", "[http][web]") {
  TestServer server;
  Client before(server.port());
  before.send(get("/metrics"));  // served, so accepted before the change
  REQUIRE(before.read_reply());
  http::Security security = tls_options().security;
  security.basic_auth_users = {{"prometheus", bcrypt("s3cr3t")}};
  server.set_security(security);
  before.send(get("/metrics"));  // an open plain connection stays plain, under the new users
  const auto refused = before.read_reply();
  REQUIRE(refused);
  CHECK(refused->status == 401);
  auto context = client_context();
  TlsClient after(server.port(), *context);
  REQUIRE_FALSE(after.handshake());
  after.send(get("/metrics", basic("prometheus:s3cr3t")));
  const auto reply = after.read_reply();
  REQUIRE(reply);
  CHECK(reply->status == 200);

  security.tls->cert_file = "/nonexistent/tls.crt";
  CHECK_THROWS_WITH(server.set_security(security), Catch::Contains("/nonexistent/tls.crt"));
  TlsClient still(server.port(), *context);  // the failed change changed nothing
  CHECK_FALSE(still.handshake());
}

// --- TLS ---

TEST_CASE("TLS: requests over TLS 1.2 and 1.3, kept alive, with basic auth", "[http][web][tls]") {
  auto options = tls_options();
  options.security.basic_auth_users = {{"prometheus", bcrypt("s3cr3t")}};
  TestServer server(options);
  for (const int version : {TLS1_2_VERSION, TLS1_3_VERSION}) {
    CAPTURE(version);
    auto context = client_context(version);
    TlsClient client(server.port(), *context);
    REQUIRE_FALSE(client.handshake());
    client.send(get("/metrics", basic("prometheus:s3cr3t")));
    const auto first = client.read_reply();
    client.send(get("/echo/two", basic("prometheus:s3cr3t")) + get("/healthz"));
    const auto second = client.read_reply();
    const auto third = client.read_reply();
    REQUIRE((first && second && third));
    CHECK(first->body == "lockwatch_up 1\n");
    CHECK(second->body == R"({"what":"two","x":""})");
    CHECK(third->status == 200);
    client.send(get("/metrics"));
    const auto refused = client.read_reply();
    REQUIRE(refused);
    CHECK(refused->status == 401);
  }
  CHECK(server.stats().accepted == 2);
}

TEST_CASE("TLS: Connection: close ends with close_notify and the connection is closed", "[http][web][tls]") {
  TestServer server(tls_options());
  auto context = client_context();
  TlsClient client(server.port(), *context);
  REQUIRE_FALSE(client.handshake());
  client.send(get("/metrics", "Connection: close\r\n"));
  const auto reply = client.read_reply();
  REQUIRE(reply);
  CHECK(reply->status == 200);
  CHECK(client.closed_within(3s));
  CHECK(eventually([&] { return server.stats().open_connections == 0; }));
}

TEST_CASE("TLS: a plain-HTTP client gets a plain 400 and the server goes on serving", "[http][web][tls]") {
  TestServer server(tls_options());
  Client plain(server.port());
  plain.send(get("/metrics"));
  const auto reply = plain.read_reply();
  REQUIRE(reply);
  CHECK(reply->status == 400);
  CHECK(reply->body == "this port speaks TLS only: use https://\n");
  CHECK(plain.closed_within(3s));
  Client garbage(server.port());  // not HTTP either
  garbage.send(std::string("\x16\x03\x01\x00\x05hello", 10));
  CHECK(garbage.closed_within(3s));
  auto context = client_context();
  TlsClient client(server.port(), *context);
  REQUIRE_FALSE(client.handshake());
  client.send(get("/metrics"));
  const auto served = client.read_reply();
  REQUIRE(served);
  CHECK(served->status == 200);
  CHECK(eventually([&] { return server.stats().open_connections == 1; }));
}

TEST_CASE("TLS: a client that never finishes its handshake is closed at request_timeout", "[http][web][tls]") {
  auto options = tls_options();
  options.request_timeout = 300ms;
  TestServer server(options);
  SECTION("silent after connecting") {
    Client silent(server.port());
    const auto start = std::chrono::steady_clock::now();
    CHECK(silent.closed_within(3s));
    CHECK(std::chrono::steady_clock::now() - start >= 250ms);
  }
  SECTION("half a ClientHello") {
    Client half(server.port());
    half.send(std::string("\x16\x03\x01\x02\x00\x01", 6));
    CHECK(half.closed_within(3s));
  }
  CHECK(eventually([&] { return server.stats().timed_out == 1 && server.stats().open_connections == 0; }));
}

TEST_CASE("TLS: the handshake and the first request's headers share header_timeout", "[http][web][tls][tenants]") {
  auto options = tls_options();
  options.header_timeout = 300ms;  // request_timeout stays 5 s
  TestServer server(options);
  auto context = client_context();
  const auto start = std::chrono::steady_clock::now();
  TlsClient client(server.port(), *context);
  REQUIRE_FALSE(client.handshake());
  REQUIRE(eventually([&] { return server.stats().pending_connections == 1; }));
  CHECK(client.closed_within(3s));  // no request after the handshake
  CHECK(elapsed_ms(start) >= 250);
  CHECK(elapsed_ms(start) < 1500);
  CHECK(eventually([&] { return server.stats().timed_out == 1 && server.stats().pending_connections == 0; }));
  CHECK(server.stats().accepted == 0);
}

TEST_CASE("TLS: min_version TLS13 refuses a TLS 1.2-only client", "[http][web][tls]") {
  TestServer server(tls_options(http::TlsVersion::tls13));
  auto old_client = client_context(TLS1_2_VERSION);
  TlsClient refused(server.port(), *old_client);
  CHECK(refused.handshake());
  auto new_client = client_context();
  TlsClient accepted(server.port(), *new_client);
  REQUIRE_FALSE(accepted.handshake());
  accepted.send(get("/metrics"));
  const auto reply = accepted.read_reply();
  REQUIRE(reply);
  CHECK(reply->status == 200);
}

TEST_CASE("TLS: the connection cap and the request size limit hold", "[http][web][tls]") {
  auto options = tls_options();
  options.max_connections = 1;
  options.max_request_bytes = 1024;
  TestServer server(options);
  auto context = client_context();
  {
    TlsClient first(server.port(), *context);
    REQUIRE_FALSE(first.handshake());
    first.send(get("/metrics", "X-Filler: " + std::string(2000, 'a') + "\r\n"));
    const auto too_large = first.read_reply();
    REQUIRE(too_large);
    CHECK(too_large->status == 413);
    CHECK(first.closed_within(3s));
  }
  REQUIRE(eventually([&] { return server.stats().open_connections == 0; }));
  TlsClient holder(server.port(), *context);
  REQUIRE_FALSE(holder.handshake());
  holder.send(get("/metrics"));
  REQUIRE(holder.read_reply());
  TlsClient over(server.port(), *context);
  REQUIRE_FALSE(over.handshake());
  over.send(get("/metrics"));
  const auto refused = over.read_reply();
  REQUIRE(refused);
  CHECK(refused->status == 503);
  CHECK(server.stats().rejected_over_cap == 1);
}

TEST_CASE("TLS: client certificates are required when a client CA is set", "[http][web][tls]") {
  const auto& c = certificates();
  auto options = tls_options();
  options.security.tls->client_ca_file = c.ca;
  TestServer server(options);
  for (const int version : {TLS1_2_VERSION, TLS1_3_VERSION}) {
    auto anonymous = client_context(version);
    TlsClient refused(server.port(), *anonymous);
    CHECK(turned_away(refused));
  }

  auto known = client_context();
  known->use_certificate_chain_file(c.client_cert);
  known->use_private_key_file(c.client_key, ssl::context::pem);
  TlsClient client(server.port(), *known);
  REQUIRE_FALSE(client.handshake());
  client.send(get("/metrics"));
  const auto reply = client.read_reply();
  REQUIRE(reply);
  CHECK(reply->status == 200);
}

TEST_CASE("TLS: files that cannot be loaded are named, and the server does not start", "[http][web][tls]") {
  const auto& c = certificates();
  boost::asio::io_context io;
  const auto fails = [&](http::TlsOptions tls, const std::string& message) {
    http::ServerOptions options;
    options.security.tls = tls;
    CHECK_THROWS_WITH(http::Server(io, options, [](const http::Request&) { return http::text_response("x"); }),
                      Catch::Contains(message));
  };
  fails({(c.dir / "missing.crt").string(), c.key, "", {}}, "TLS: cannot load the certificate " + (c.dir / "missing.crt").string());
  fails({c.cert, (c.dir / "missing.key").string(), "", {}}, "TLS: cannot load the private key " + (c.dir / "missing.key").string());
  fails({c.cert, c.other_key, "", {}}, "TLS: cannot load the private key " + c.other_key.string());  // not the certificate's
  fails({c.key, c.key, "", {}}, "TLS: cannot load the certificate " + c.key.string());
  fails({c.cert, c.key, (c.dir / "missing-ca.crt").string(), {}}, "TLS: cannot load the client CA");
}
