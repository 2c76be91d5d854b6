// SPDX-License-Identifier: Apache-2.0
// lockwatch: finds the contended locks of a JVM from its thread dumps.
#include <iostream>
#include <span>
#include <string_view>
#include <vector>

#include "analyze_command.hpp"
#include "check_config_command.hpp"
#include "daemon_exec.hpp"
#include "dump_command.hpp"
#include "flags.hpp"
#include "run_command.hpp"

namespace {

using lockwatch::app::CommandSpec;

struct Subcommand {
  const CommandSpec& spec;
  int (*run)(std::span<const std::string_view> args, std::ostream& out, std::ostream& err);
};

const char* argv0 = "lockwatch";

// `run` is lockwatch-daemon's: this binary execs it (daemon_exec.hpp).
int run_elsewhere(std::span<const std::string_view> args, std::ostream&, std::ostream& err) {
  return lockwatch::app::exec_daemon(argv0, args, err);
}

constexpr CommandSpec version_spec{"version", "print the version", "", "", {}};

// `lockwatch --help`, from the same tables as each command's own --help.
std::string overview(std::span<const Subcommand> commands) {
  std::vector<const CommandSpec*> specs;
  for (const auto& c : commands) specs.push_back(&c.spec);
  specs.push_back(&version_spec);
  return lockwatch::app::overview_text(specs);
}

}  // namespace

int main(int argc, char** argv) {
  namespace app = lockwatch::app;
  const Subcommand commands[] = {
      {app::analyze_spec(), app::run_analyze},
      {app::dump_spec(), app::run_dump},
      {app::check_config_spec(), app::run_check_config},
      {app::run_spec(), run_elsewhere},
  };
  if (argc > 0) argv0 = argv[0];
  const std::vector<std::string_view> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << overview(commands);
    return 2;
  }
  const auto command = args.front();
  const std::span<const std::string_view> rest(args.begin() + 1, args.end());
  for (const auto& c : commands)
    if (command == c.spec.name) return c.run(rest, std::cout, std::cerr);
  if (command == "version" || command == "--version") {
    std::cout << "lockwatch " << LOCKWATCH_VERSION << "\n";
    return 0;
  }
  if (command == "help" || command == "--help" || command == "-h") {
    std::cout << overview(commands);
    return 0;
  }
  std::cerr << "lockwatch: unknown command '" << command << "'\n" << overview(commands);
  return 2;
}
