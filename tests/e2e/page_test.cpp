// SPDX-License-Identifier: Apache-2.0
// The pages in a real browser - Debian's chromium, headless - against the daemon on live
// scenario JVMs, and the HTML report of an incident opened from disk. Skipped with a warning
// where chromium is not installed.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <regex>
#include <sstream>

#include "e2e_support.hpp"
#include "png_stats.hpp"
#include "skip.hpp"

using namespace lockwatch;
using namespace lockwatch::e2e;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

// A machine without the browser skips these tests, saying so, rather than failing them:
// scripts/deps.sh installs it, so CI has it.
bool have(const std::string& tool, const std::string& package) {
  if (test::run_command({"sh", "-c", "command -v " + tool}, 10s).exit_code == 0) return true;
  test::skip(tool + " is not installed (Debian package " + package +
             ", installed by scripts/deps.sh): this page test did not run");
  return false;
}

struct Browser {
  int exit_code = -1;
  std::string dom;                   // --dump-dom: the document after its scripts ran
  std::vector<std::string> console;  // the page's console messages (CSP violations land here)
};

// One headless chromium, as root too (--no-sandbox), with nothing of its own on the network
// that could be avoided, and a fresh profile.
Browser chromium(const std::string& url, const std::vector<std::string>& mode) {
  static int runs = 0;
  const auto profile = scratch("chromium-" + std::to_string(++runs));
  std::vector<std::string> argv{"chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                                "--user-data-dir=" + profile.string(), "--enable-logging=stderr", "--v=0"};
  argv.insert(argv.end(), mode.begin(), mode.end());
  argv.push_back(url);
  const auto r = test::run_command(argv, 120s);
  Browser b{r.exit_code, r.out, {}};
  std::istringstream err(r.err);
  for (std::string line; std::getline(err, line);)
    if (line.find(":CONSOLE") != std::string::npos) b.console.push_back(line);
  fs::remove_all(profile);
  return b;
}

// The DOM once the page's scripts have had 5 s of (virtual) time: the live page refreshes.
Browser dom_of(const std::string& url, std::vector<std::string> extra = {}) {
  extra.insert(extra.end(), {"--virtual-time-budget=5000", "--dump-dom"});
  return chromium(url, extra);
}

test::PngStats screenshot(const std::string& url, const fs::path& file, std::vector<std::string> extra = {}) {
  extra.insert(extra.end(), {"--virtual-time-budget=3000", "--screenshot=" + file.string(), "--window-size=1400,1000"});
  const auto b = chromium(url, extra);
  INFO("chromium exit " << b.exit_code);
  std::string error;
  const auto stats = test::png_stats(test::read_file(file), error);
  INFO(error);
  REQUIRE(stats);
  return *stats;
}

// The messages a Content-Security-Policy violation leaves: a page that tried to run or load
// anything its policy forbids.
std::string violations(const Browser& b) {
  std::string out;
  for (const auto& line : b.console)
    if (line.find("Content Security Policy") != std::string::npos || line.find("Content-Security-Policy") != std::string::npos)
      out += line + "\n";
  return out;
}

// Class and method names carry <wbr> break opportunities; searched without them.
std::string without_wbr(std::string dom) {
  for (auto at = dom.find("<wbr>"); at != std::string::npos; at = dom.find("<wbr>", at)) dom.erase(at, 5);
  return dom;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

int refreshes(const std::string& dom) {
  std::smatch m;
  return std::regex_search(dom, m, std::regex(R"re(data-refreshes="(\d+)")re")) ? std::stoi(m[1]) : 0;
}

std::string document_title(const std::string& dom) {
  std::smatch m;
  const auto head = dom.substr(0, dom.find("</head>"));
  return std::regex_search(head, m, std::regex("<title>([^<]*)</title>")) ? m[1].str() : "(none)";
}

// A GET with the whole answer, headers included (test::http_get keeps only the body).
struct Answer {
  int status = 0;
  std::string head;  // lower-cased
  std::string body;
  std::string header(const std::string& name) const {
    const auto at = head.find("\r\n" + name + ": ");
    return at == std::string::npos ? "" : head.substr(at + name.size() + 4, head.find("\r\n", at + 2) - at - name.size() - 4);
  }
};

Answer raw_get(std::uint16_t port, const std::string& path) {
  Answer a;
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  timeval timeout{20, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string raw;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    const std::string request = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) > 0) {
      std::array<char, 65536> buf{};
      for (ssize_t n; (n = ::recv(fd, buf.data(), buf.size(), 0)) > 0;) raw.append(buf.data(), static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  const auto end = raw.find("\r\n\r\n");
  if (end == std::string::npos || raw.size() < 12) return a;
  a.status = std::stoi(raw.substr(9, 3));
  a.head = lower(raw.substr(0, end + 2));
  a.body = raw.substr(end + 4);
  return a;
}

std::string url_of(const Daemon& d) { return "http://127.0.0.1:" + std::to_string(d.port); }

// What every view of a target on MonitorContention shows: the target, the lock, its sites,
// and the three pictures.
void check_contention_views(const std::string& raw_dom) {
  const auto dom = without_wbr(raw_dom);
  INFO(dom.substr(0, 4000));
  CHECK(dom.find("MonitorContention") != std::string::npos);
  CHECK(dom.find("<code>Inventory</code>") != std::string::npos);        // the lock's class
  CHECK(dom.find("<code>Inventory.reserve</code>") != std::string::npos);  // its waiting site (and holder site)
  CHECK(dom.find("busy in <code>Inventory.recalculate</code>") != std::string::npos);  // what the holder does
  CHECK(dom.find("<svg class=\"chart\"") != std::string::npos);
  CHECK(dom.find("<polyline") != std::string::npos);
  CHECK(dom.find("<svg class=\"graph\"") != std::string::npos);
  CHECK(dom.find("threads http-nio-8080-exec-N") != std::string::npos);  // the waiters, folded into one box
  CHECK(dom.find("<svg class=\"flame\"") != std::string::npos);
  CHECK(dom.find(">Inventory.reserve</text>") != std::string::npos);     // a frame of the flame graph
}

void check_not_blank(const test::PngStats& s) {
  INFO("colours " << s.colours << ", most common " << s.dominant_share);
  CHECK(s.width == 1400);
  CHECK(s.height == 1000);
  CHECK(s.colours >= 100);           // text, lines and fills; a blank or error page has a handful
  CHECK(s.dominant_share < 0.85);
}

}  // namespace

TEST_CASE("page: the live view of a contended JVM, and its incident's report opened from disk, in chromium", "[page][jvm]") {
  if (!have("chromium", "chromium")) return;
  auto jvm = start_jvm("MonitorContention");
  const auto dir = scratch("page-live");
  test::write_file(dir / "lockwatch.yaml", "interval: 200ms\nincidents:\n  directory: " + (dir / "incidents").string() +
                                               "\n  blocked_threshold: 3\n  burst_count: 3\n  burst_interval: 100ms\n");
  Daemon d({"--config", (dir / "lockwatch.yaml").string(), "--pid", std::to_string(jvm->pid())});
  REQUIRE(eventually([&] { return metric(d.metrics(), "lockwatch_incidents_total", {target("MonitorContention")}).value_or(0) >= 1; }, 60s));

  // The daemon's answers: a page with its policy, and the two files it uses.
  const auto page = raw_get(d.port, "/");
  CHECK(page.status == 200);
  CHECK(page.header("content-type") == "text/html; charset=utf-8");
  const auto csp = page.header("content-security-policy");
  CHECK(csp.find("default-src 'none'") != std::string::npos);
  CHECK(csp.find("script-src 'self'") != std::string::npos);
  CHECK(csp.find("unsafe") == std::string::npos);
  CHECK(raw_get(d.port, "/assets/lockwatch.js").header("content-type") == "text/javascript; charset=utf-8");
  CHECK(raw_get(d.port, "/assets/lockwatch.css").header("content-type") == "text/css; charset=utf-8");

  const auto live = dom_of(url_of(d) + "/?refresh=1");
  REQUIRE(live.exit_code == 0);
  check_contention_views(live.dom);
  CHECK(refreshes(live.dom) >= 1);  // the script fetched the page again and swapped it in
  CHECK(live.dom.find("updated ") != std::string::npos);
  CHECK(violations(live).empty());  // its own files satisfy its policy
  std::smatch link;
  REQUIRE(std::regex_search(live.dom, link, std::regex(R"re(href="incidents/([^"/]+)/report.html")re")));
  const auto incident = link[1].str();
  check_not_blank(screenshot(url_of(d) + "/?refresh=0", dir / "live.png"));

  // The incident's report for a ticket: one file that opens from disk with no network.
  const auto made = test::run_command({lockwatch_binary(), "analyze", "--format", "html", (dir / "incidents" / incident).string()}, 60s);
  INFO(made.err);
  REQUIRE(made.exit_code == 0);
  test::write_file(dir / "report.html", made.out);
  CHECK_FALSE(std::regex_search(made.out, std::regex(R"re((src|href)="(https?:)?//)re", std::regex::icase)));
  CHECK(made.out.find("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';") != std::string::npos);
  const auto file = dom_of("file://" + (dir / "report.html").string());
  REQUIRE(file.exit_code == 0);
  check_contention_views(file.dom);
  CHECK(document_title(file.dom) == incident + " - lockwatch report");
  // Under default-src 'none' a request of any kind would be refused and logged: none was tried.
  CHECK(violations(file).empty());
  check_not_blank(screenshot("file://" + (dir / "report.html").string(), dir / "report.png"));

  // The daemon serves the same report, its policy in a header; the dumps as plain text.
  const auto served = raw_get(d.port, "/incidents/" + incident + "/report.html");
  CHECK(served.status == 200);
  CHECK(served.header("content-security-policy").find("style-src 'sha256-") != std::string::npos);
  CHECK(raw_get(d.port, "/incidents/" + incident + "/dump-0001.txt").header("content-type") == "text/plain; charset=utf-8");
  CHECK(raw_get(d.port, "/incidents/" + incident + "/..%2f..%2fetc%2fpasswd").status == 404);
  CHECK(raw_get(d.port, "/incidents/../lockwatch.yaml").status == 404);
}

TEST_CASE("page: thread names made of HTML and script show as text and run nothing", "[page][jvm][security]") {
  if (!have("chromium", "chromium")) return;
  auto jvm = start_jvm("MarkupNames");
  const auto dir = scratch("page-hostile");
  Daemon d({"--pid", std::to_string(jvm->pid()), "--interval", "200ms", "--incident-dir", (dir / "incidents").string()});
  REQUIRE(eventually([&] { return metric(d.metrics(), "lockwatch_samples_total", {"result=\"ok\""}).value_or(0) >= 4; }));

  auto check = [](const Browser& b, const std::string& title) {
    INFO(b.dom.substr(0, 4000));
    REQUIRE(b.exit_code == 0);
    CHECK(document_title(b.dom) == title);           // a name that ran would have set it to "pwned"
    CHECK(b.dom.find("id=\"pwned\"") == std::string::npos);  // or added this element
    CHECK(lower(b.dom).find("<img") == std::string::npos);
    CHECK(lower(b.dom).find("<svg onload") == std::string::npos);
    CHECK(b.dom.find("&lt;img src=x onerror=") != std::string::npos);  // the holder's name, as text
    CHECK(b.dom.find("&lt;/title&gt;&lt;script&gt;") != std::string::npos);
    CHECK(violations(b).empty());  // not even an attempt the policy had to stop: escaping alone held
  };
  const auto live = dom_of(url_of(d) + "/?refresh=1");
  check(live, "MarkupNames - lockwatch");
  CHECK(count_of(lower(live.dom), "<script") == 1);  // its own, from /assets
  CHECK(refreshes(live.dom) >= 1);                   // and the refreshed page too

  const auto dumped = test::run_command({lockwatch_binary(), "dump", "--pid", std::to_string(jvm->pid())}, 60s);
  REQUIRE(dumped.exit_code == 0);
  test::write_file(dir / "markup.txt", dumped.out);
  const auto made = test::run_command({lockwatch_binary(), "analyze", "--format", "html", (dir / "markup.txt").string()}, 60s);
  REQUIRE(made.exit_code == 0);
  test::write_file(dir / "markup.html", made.out);
  const auto file = dom_of("file://" + (dir / "markup.html").string());
  check(file, "markup.txt - lockwatch report");
  CHECK(count_of(lower(file.dom), "<script") == 0);
}

namespace {

// bcrypt (cost 4) of "secret", as `htpasswd -nbBC 4 USER secret` writes it.
constexpr const char* secret_hash = "$2y$04$ORtftCAIc4UaHHaJd/qcnOv/IPmsgRVezpq.RxLdbGHp/VHD35iN2";

}  // namespace

TEST_CASE("page: the live view works behind TLS and basic auth, refreshes included", "[page][jvm][web]") {
  if (!have("chromium", "chromium") || !have("openssl", "openssl") || !have("curl", "curl")) return;
  const auto dir = scratch("page-web");
  const auto made = test::run_command({"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
                                       "-addext", "subjectAltName=IP:127.0.0.1", "-days", "1", "-keyout", (dir / "tls.key").string(),
                                       "-out", (dir / "tls.crt").string()}, 120s);
  REQUIRE(made.exit_code == 0);
  test::write_file(dir / "web.yaml", "tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\nbasic_auth_users:\n  sre: " +
                                         std::string(secret_hash) + "\n");
  auto jvm = start_jvm("MonitorContention");
  Daemon d({"--web.config.file", (dir / "web.yaml").string(), "--pid", std::to_string(jvm->pid()), "--interval", "200ms",
            "--incident-dir", (dir / "incidents").string()});
  const auto base = "https://127.0.0.1:" + std::to_string(d.port);
  REQUIRE(eventually([&] {
    const auto r = test::run_command({"curl", "--silent", "--max-time", "5", "--cacert", (dir / "tls.crt").string(), "--user",
                                      "sre:secret", base + "/api/v1/targets"}, 20s);
    return r.out.find("\"up\":true") != std::string::npos;
  }));
  const auto live = dom_of("https://sre:secret@127.0.0.1:" + std::to_string(d.port) + "/?refresh=1", {"--ignore-certificate-errors"});
  REQUIRE(live.exit_code == 0);
  check_contention_views(live.dom);
  CHECK(refreshes(live.dom) >= 1);  // the script's fetches carried the credentials too
  CHECK(violations(live).empty());
  // Without credentials the page and its assets are refused like every other path.
  for (const std::string path : {"/", "/assets/lockwatch.js"}) {
    const auto r = test::run_command({"curl", "--silent", "--max-time", "5", "--cacert", (dir / "tls.crt").string(), "--output",
                                      "/dev/null", "--write-out", "%{http_code}", base + path}, 20s);
    CHECK(r.out == "401");
  }
}

TEST_CASE("page: the browser checks catch a page that breaks its policy, and a blank screenshot", "[page]") {
  if (!have("chromium", "chromium")) return;
  // What the checks above rely on, shown to fail when they should.
  const auto dir = scratch("page-control");
  test::write_file(dir / "bad.html",
                   "<!DOCTYPE html><html><head><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'\">"
                   "<title>control</title></head><body><img src=\"http://127.0.0.1:9/x.png\">"
                   "<script>document.title='pwned'</script></body></html>");
  const auto bad = dom_of("file://" + (dir / "bad.html").string());
  CHECK(violations(bad).find("Content Security Policy") != std::string::npos);
  CHECK(document_title(bad.dom) == "control");
  test::write_file(dir / "blank.html", "<!DOCTYPE html><html><head><title>blank</title></head><body></body></html>");
  const auto blank = screenshot("file://" + (dir / "blank.html").string(), dir / "blank.png");
  CHECK(blank.width == 1400);
  CHECK(blank.dominant_share > 0.99);
  CHECK(blank.colours < 100);
}
