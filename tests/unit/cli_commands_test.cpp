// SPDX-License-Identifier: Apache-2.0
// The subcommands over the one flag parser: each one's usage errors, as the shell sees them
// ("lockwatch dump: unknown option --x"), exit 2 before anything runs; --flag=value as
// --flag value; --help from each command's table.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "analyze_command.hpp"
#include "check_config_command.hpp"
#include "dump_command.hpp"
#include "run_command.hpp"
#include "test_support.hpp"

#include <unistd.h>

using namespace lockwatch;

namespace {

using Command = int (*)(std::span<const std::string_view>, std::ostream&, std::ostream&);

struct Run {
  int code = 0;
  std::string out, err;
  std::string first_line() const { return err.substr(0, err.find('\n')); }
};

Run run(Command command, std::vector<std::string_view> args) {
  std::ostringstream out, err;
  Run r;
  r.code = command(args, out, err);
  r.out = out.str(), r.err = err.str();
  return r;
}

struct Entry {
  const app::CommandSpec& spec;
  Command command;
};

std::vector<Entry> every_command() {
  return {{app::analyze_spec(), app::run_analyze},
          {app::dump_spec(), app::run_dump},
          {app::check_config_spec(), app::run_check_config},
          {app::run_spec(), app::run_daemon}};
}

}  // namespace

TEST_CASE("commands: --help lists every flag of the table and fits 100 columns", "[cli][flags]") {
  for (const auto& [spec, command] : every_command()) {
    INFO(spec.name);
    const auto help = run(command, {"--help"});
    CHECK(help.code == 0);
    CHECK(help.err.empty());
    CHECK(help.out == app::usage_text(spec));
    CHECK(help.out.starts_with("usage: lockwatch " + std::string(spec.name)));
    for (const auto& flag : spec.flags) CHECK(help.out.find("\n  " + std::string(flag.name)) != std::string::npos);
    std::istringstream lines(help.out);
    for (std::string line; std::getline(lines, line);) CHECK(line.size() <= 100);
    CHECK(run(command, {"-h"}).out == help.out);
  }
}

TEST_CASE("commands: unknown options and missing values, named with the command, exit 2", "[cli][flags]") {
  for (const auto& [spec, command] : every_command()) {
    INFO(spec.name);
    const auto unknown = run(command, {"--x"});
    CHECK(unknown.code == 2);
    CHECK(unknown.first_line() == "lockwatch " + std::string(spec.name) + ": unknown option --x");
    CHECK(unknown.err.find("\nusage: lockwatch " + std::string(spec.name)) != std::string::npos);
    CHECK(unknown.out.empty());
  }
  CHECK(run(app::run_dump, {"--pid"}).first_line() == "lockwatch dump: missing value for --pid");
  CHECK(run(app::run_daemon, {"--config"}).first_line() == "lockwatch run: missing value for --config");
  CHECK(run(app::run_analyze, {"x", "--window"}).first_line() == "lockwatch analyze: missing value for --window");
}

TEST_CASE("commands: the values' own messages, in both value forms", "[cli][flags]") {
  for (const auto& form : {std::vector<std::string_view>{"--pid", "abc"}, {"--pid=abc"}})
    CHECK(run(app::run_dump, form).first_line() == "lockwatch dump: --pid takes a process id");
  CHECK(run(app::run_dump, {"--pid", "1", "--format=yaml"}).first_line() == "lockwatch dump: --format takes print or json");
  CHECK(run(app::run_dump, {"--locks"}).first_line() == "lockwatch dump: --pid is required");
  CHECK(run(app::run_dump, {"--pid", "1", "--backend", "jstack", "--format", "json"}).first_line() ==
        "lockwatch dump: --format json needs --backend attach");
  CHECK(run(app::run_analyze, {"--format=xml", "x"}).first_line() == "lockwatch analyze: --format takes text, json or html");
  CHECK(run(app::run_analyze, {"--stuck-samples=0", "x"}).first_line() ==
        "lockwatch analyze: --stuck-samples takes a whole number >= 1");
  CHECK(run(app::run_analyze, {"--format", "json"}).first_line() == "lockwatch analyze: no input files");
  CHECK(run(app::run_daemon, {"--interval=soon"}).first_line() == "lockwatch run: --interval takes a duration like 200ms, 1s, 1m");
}

TEST_CASE("commands: --pid repeats for run only; other flags once", "[cli][flags]") {
  // Both pids are taken: the line fails on the interval, after them, before the daemon starts.
  const auto pids = run(app::run_daemon, {"--pid", "1", "--pid=2", "--interval", "soon"});
  CHECK(pids.code == 2);
  CHECK(pids.first_line() == "lockwatch run: --interval takes a duration like 200ms, 1s, 1m");
  CHECK(run(app::run_daemon, {"--listen", "a:1", "--listen", "b:1"}).first_line() == "lockwatch run: --listen given twice");
  CHECK(run(app::run_dump, {"--pid", "1", "--pid", "2"}).first_line() == "lockwatch dump: --pid given twice");
  CHECK(run(app::run_analyze, {"--format", "json", "--format", "text", "x"}).first_line() ==
        "lockwatch analyze: --format given twice");
  CHECK(run(app::run_daemon, {"foo"}).first_line() == "lockwatch run: unexpected argument 'foo'");
}

TEST_CASE("commands: analyze reads --format=json as --format json", "[cli][flags]") {
  const auto file = (test::captured_dir() / "jdk17" / "MonitorContention" / "dump-1.txt").string();
  const auto spaced = run(app::run_analyze, {"--format", "json", "--window", "2", file});
  const auto joined = run(app::run_analyze, {"--format=json", "--window=2", file});
  REQUIRE(spaced.code == 0);
  CHECK(spaced.out.starts_with("{"));
  CHECK(joined.code == 0);
  CHECK(joined.out == spaced.out);
}

TEST_CASE("commands: check-config takes a file named like an option after '--'", "[cli][flags]") {
  const auto r = run(app::run_check_config, {"--", "-no-such-file.yaml"});
  CHECK(r.code == 1);  // read as a file, not refused as an option
  CHECK(r.err.starts_with("-no-such-file.yaml: cannot open: "));
  CHECK(run(app::run_check_config, {"-no-such-file.yaml"}).first_line() == "lockwatch check-config: unknown option -no-such-file.yaml");
}

TEST_CASE("dump: a tool that exits 0 without a thread dump is parse_error, exit 1", "[cli]") {
  // The parser decides for the CLI as for the daemon: a JAVA_HOME whose jstack prints
  // something else must not pass as a dump.
  const auto home = std::filesystem::temp_directory_path() / ("lockwatch-cli-jstack-" + std::to_string(::getpid()));
  std::filesystem::create_directories(home / "bin");
  test::write_file(home / "bin" / "jstack", "#!/bin/sh\necho 'hello from not-jstack'\n");
  std::filesystem::permissions(home / "bin" / "jstack", std::filesystem::perms::owner_all);
  const char* before = std::getenv("JAVA_HOME");
  const std::string saved = before ? before : "";
  ::setenv("JAVA_HOME", home.c_str(), 1);
  const auto r = run(app::run_dump, {"--pid", "1", "--backend", "jstack"});
  if (saved.empty()) ::unsetenv("JAVA_HOME"); else ::setenv("JAVA_HOME", saved.c_str(), 1);
  std::filesystem::remove_all(home);
  INFO(r.err);
  CHECK(r.code == 1);
  CHECK(r.out.empty());
  CHECK(r.err == "lockwatch dump: pid 1: parse_error: jstack answered 22 bytes without a thread dump: 'hello from not-jstack '\n");
}
