// SPDX-License-Identifier: Apache-2.0
#include "e2e_support.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

namespace lockwatch::e2e {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::unique_ptr<test::Child> start_jvm(const std::string& main_class, std::vector<std::string> flags) {
  return start_jvm_of(LOCKWATCH_JDK17_HOME, "jdk17", main_class, std::move(flags), {"300"});
}

std::unique_ptr<test::Child> start_jvm_of(const std::string& java_home, const std::string& classes,
                                          const std::string& main_class, std::vector<std::string> flags,
                                          std::vector<std::string> args) {
  std::vector<std::string> argv{fs::path(java_home) / "bin" / "java", "-Xmx64m"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"-cp", (fs::path(LOCKWATCH_SCENARIO_CLASSES) / classes).string(), main_class});
  argv.insert(argv.end(), args.begin(), args.end());
  auto jvm = std::make_unique<test::Child>(argv);
  REQUIRE(jvm->wait_for_line("READY", 120s));
  return jvm;
}

#ifndef LOCKWATCH_JDK25_HOME
#define LOCKWATCH_JDK25_HOME ""
#endif

std::unique_ptr<test::Child> start_library_jvm(const std::string& jdk, const std::string& main_class,
                                               std::vector<std::string> args, std::vector<std::string> flags) {
  const std::string java_home = jdk == "jdk25" ? LOCKWATCH_JDK25_HOME : LOCKWATCH_JDK17_HOME;
  const auto java = fs::path(java_home) / "bin" / "java";
  const auto classes = fs::path(LOCKWATCH_SCENARIO_CLASSES) / (jdk + "-lib");
  const auto classpath_file = classes / (main_class + ".classpath");
  if (!fs::exists(java)) {
    WARN("SKIPPED " << main_class << " on " << jdk << ": no JDK at '" << java_home << "'");
    return nullptr;
  }
  if (!fs::exists(classpath_file)) {
    WARN("SKIPPED " << main_class << " on " << jdk << ": not compiled (" << classpath_file
                    << " is missing: its Debian jars are not installed, see compile_libraries.sh's output)");
    return nullptr;
  }
  std::string jars = test::read_file(classpath_file);
  while (!jars.empty() && (jars.back() == '\n' || jars.back() == '\r')) jars.pop_back();
  // More heap than start_jvm's 64 MiB: Tomcat and Netty start inside these.
  std::vector<std::string> argv{java.string(), "-Xmx128m"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"-cp", classes.string() + ":" + jars, main_class});
  argv.insert(argv.end(), args.begin(), args.end());
  auto jvm = std::make_unique<test::Child>(argv);
  REQUIRE(jvm->wait_for_line("READY", 120s));
  return jvm;
}

std::string lockwatch_binary() {
  const char* other = std::getenv("LOCKWATCH_E2E_BINARY");
  return other != nullptr && *other != '\0' ? other : LOCKWATCH_BINARY;
}

namespace {

// Every scratch directory of this test process, removed when it exits: CTest runs each case in
// its own process, and a suite left ~60 directories in /tmp per run. LOCKWATCH_E2E_KEEP=1
// keeps them, to look at what a failing case's daemon wrote.
struct Scratches {
  std::set<fs::path> dirs;
  ~Scratches() {
    const char* keep = std::getenv("LOCKWATCH_E2E_KEEP");
    if (keep != nullptr && *keep != '\0' && std::string(keep) != "0") return;
    std::error_code ignored;
    for (const auto& d : dirs) fs::remove_all(d, ignored);
  }
};

}  // namespace

fs::path scratch(const std::string& name) {
  static Scratches made;
  const auto dir = fs::temp_directory_path() / ("lockwatch-e2e-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  made.dirs.insert(dir);
  return dir;
}

Daemon::Daemon(std::vector<std::string> args, bool capture_log) {
  args.insert(args.begin(), {lockwatch_binary(), "run", "--listen", "127.0.0.1:0"});
  proc = std::make_unique<test::Child>(args, capture_log);
  REQUIRE(proc->wait_for_line("/metrics", 30s));
  std::smatch m;
  const std::string out = proc->output();
  REQUIRE(std::regex_search(out, m, std::regex(R"(https?://127\.0\.0\.1:(\d+)/metrics)")));
  port = static_cast<std::uint16_t>(std::stoi(m[1]));
}

std::optional<double> metric(const std::string& text, const std::string& name, std::vector<std::string> labels) {
  std::optional<double> sum;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with(name + "{") && !line.starts_with(name + " ")) continue;
    bool all = true;
    for (const auto& l : labels) all = all && line.find(l) != std::string::npos;
    if (all) sum = sum.value_or(0) + std::stod(line.substr(line.rfind(' ') + 1));
  }
  return sum;
}

std::vector<std::pair<std::string, std::string>> labels_of(const std::string& scrape) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(scrape);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with('#')) continue;
    auto at = line.find('{');
    if (at == std::string::npos) continue;
    while (++at < line.size() && line[at] != '}') {  // at: a label's name, or the ',' before it
      if (line[at] == ',') continue;
      const auto eq = line.find("=\"", at);
      if (eq == std::string::npos) break;
      std::string value;
      auto i = eq + 2;
      for (; i < line.size() && line[i] != '"'; ++i) {
        if (line[i] == '\\' && i + 1 < line.size()) value += line[i++];
        value += line[i];
      }
      out.emplace_back(line.substr(at, eq - at), std::move(value));
      at = i;  // the closing quote
    }
  }
  return out;
}

TimedReply timed_get(std::uint16_t port, const std::string& path, std::chrono::milliseconds limit) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto deadline = start + limit;
  const auto left_ms = [&] {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return ms < 0 ? 0 : static_cast<int>(ms);
  };
  TimedReply out;
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return out;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string raw;
  bool complete = false;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 || errno == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    int err = 0;
    socklen_t len = sizeof err;
    if (::poll(&p, 1, left_ms()) == 1 && ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0) {
      const std::string request = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
      if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size())) {
        std::array<char, 65536> buf{};
        for (;;) {
          pollfd r{fd, POLLIN, 0};
          if (::poll(&r, 1, left_ms()) != 1) break;
          const auto n = ::recv(fd, buf.data(), buf.size(), 0);
          if (n == 0) complete = true;
          if (n <= 0) break;
          raw.append(buf.data(), static_cast<std::size_t>(n));
        }
      }
    }
  }
  ::close(fd);
  out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const auto end = raw.find("\r\n\r\n");
  if (!complete || end == std::string::npos || raw.size() < 12) return out;
  out.reply.status = std::atoi(raw.substr(9, 3).c_str());
  const auto head = raw.substr(0, end);
  const auto type = head.find("\r\nContent-Type: ");
  if (type != std::string::npos) out.reply.content_type = head.substr(type + 16, head.find("\r\n", type + 16) - type - 16);
  out.reply.body = raw.substr(end + 4);
  if (head.find("\r\nTransfer-Encoding: chunked") != std::string::npos) {
    std::string body;
    for (std::size_t at = 0; at < out.reply.body.size();) {
      const auto eol = out.reply.body.find("\r\n", at);
      if (eol == std::string::npos) break;
      const auto size = std::strtoul(out.reply.body.substr(at, eol - at).c_str(), nullptr, 16);
      if (size == 0) break;
      body.append(out.reply.body, eol + 2, size);
      at = eol + 2 + size + 2;
    }
    out.reply.body = std::move(body);
  }
  return out;
}

std::optional<std::uint64_t> peak_rss_kib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("VmHWM:")) return std::strtoull(line.c_str() + 6, nullptr, 10);
  return std::nullopt;
}

bool eventually(const std::function<bool()>& ok, std::chrono::seconds timeout) {
  for (const auto deadline = std::chrono::steady_clock::now() + timeout; std::chrono::steady_clock::now() < deadline;) {
    if (ok()) return true;
    std::this_thread::sleep_for(200ms);
  }
  return ok();
}

void check_promtool(const std::string& scrape) {
  if (test::run_command({"sh", "-c", "command -v promtool"}, 10s).exit_code != 0) {
    if (std::getenv("CI")) FAIL("promtool is missing (Debian package prometheus)");
    WARN("SKIPPED promtool check: promtool not installed");
    return;
  }
  const auto file = scratch("scrape") / "metrics.prom";
  test::write_file(file, scrape);
  const auto r = test::run_command({"promtool", "check", "metrics"}, 30s, file.string());
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
}

}  // namespace lockwatch::e2e
