// SPDX-License-Identifier: Apache-2.0
// lockwatch: finds the contended locks of a JVM from its thread dumps.
#include <iostream>
#include <span>
#include <string_view>
#include <vector>

#include "analyze_command.hpp"
#include "check_config_command.hpp"
#include "dump_command.hpp"
#include "run_command.hpp"

namespace {

constexpr std::string_view usage =
    "usage: lockwatch <command> [options]\n"
    "\n"
    "commands:\n"
    "  analyze [--format text|json] FILE|DIR...   contended locks, holders, deadlocks and pools\n"
    "                                             in saved thread dumps (jstack, jcmd, SIGQUIT\n"
    "                                             output, Thread.dump_to_file), read as a sequence\n"
    "  dump --pid PID [--backend attach|jstack]    print one thread dump of a running JVM\n"
    "       [--locks] [--timeout DURATION]          (like jstack; attach is safe and ~100x cheaper)\n"
    "  check-config FILE                          check a YAML configuration file; every problem\n"
    "                                             as FILE:LINE:COL: message (docs/configuration.md)\n"
    "  run [--config FILE] [--pid PID]...          the daemon: samples JVMs, serves /metrics and\n"
    "      [--match REGEX] [--interval DURATION]    an API, keeps incident evidence\n"
    "      [--listen HOST:PORT] [--ring-size N]\n"
    "  version                                    print the version\n"
    "\n"
    "Run 'lockwatch <command> --help' for the options of a command.\n";

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string_view> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << usage;
    return 2;
  }
  const auto command = args.front();
  const std::span<const std::string_view> rest(args.begin() + 1, args.end());
  if (command == "analyze") return lockwatch::app::run_analyze(rest, std::cout, std::cerr);
  if (command == "dump") return lockwatch::app::run_dump(rest, std::cout, std::cerr);
  if (command == "check-config") return lockwatch::app::run_check_config(rest, std::cout, std::cerr);
  if (command == "run") return lockwatch::app::run_daemon(rest, std::cout, std::cerr);
  if (command == "version" || command == "--version") {
    std::cout << "lockwatch " << LOCKWATCH_VERSION << "\n";
    return 0;
  }
  if (command == "help" || command == "--help" || command == "-h") {
    std::cout << usage;
    return 0;
  }
  std::cerr << "lockwatch: unknown command '" << command << "'\n" << usage;
  return 2;
}
