// SPDX-License-Identifier: Apache-2.0
#include "e2e_support.hpp"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <regex>
#include <sstream>
#include <thread>

namespace lockwatch::e2e {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::unique_ptr<test::Child> start_jvm(const std::string& main_class, std::vector<std::string> flags) {
  std::vector<std::string> argv{fs::path(LOCKWATCH_JDK17_HOME) / "bin" / "java", "-Xmx64m"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"-cp", (fs::path(LOCKWATCH_SCENARIO_CLASSES) / "jdk17").string(), main_class, "300"});
  auto jvm = std::make_unique<test::Child>(argv);
  REQUIRE(jvm->wait_for_line("READY", 60s));
  return jvm;
}

fs::path scratch(const std::string& name) {
  const auto dir = fs::temp_directory_path() / ("lockwatch-e2e-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

Daemon::Daemon(std::vector<std::string> args, bool capture_log) {
  args.insert(args.begin(), {LOCKWATCH_BINARY, "run", "--listen", "127.0.0.1:0"});
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
