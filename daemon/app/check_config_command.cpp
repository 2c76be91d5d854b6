// SPDX-License-Identifier: Apache-2.0
#include "check_config_command.hpp"

#include <string>

#include "lockwatch/config/load.hpp"

namespace lockwatch::app {
namespace {

constexpr std::string_view usage =
    "usage: lockwatch check-config FILE\n"
    "  Reads a YAML configuration file as 'lockwatch run --config FILE' would and reports every\n"
    "  problem as FILE:LINE:COL: message. Exit codes: 0 valid, 1 invalid, 2 usage.\n"
    "  The keys and their defaults: docs/configuration.md.\n";

int usage_error(std::ostream& err, const std::string& problem) {
  err << "lockwatch check-config: " << problem << "\n" << usage;
  return 2;
}

}  // namespace

int run_check_config(std::span<const std::string_view> args, std::ostream& out, std::ostream& err) {
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    out << usage;
    return 0;
  }
  if (args.size() != 1) return usage_error(err, args.empty() ? "no file given" : "one file at a time");
  // A leading '-' is an option we do not have; "./-x" still names such a file.
  if (args[0].starts_with("-")) return usage_error(err, "unknown option " + std::string(args[0]));
  const std::string path(args[0]);
  const auto result = config::load_config_file(path);
  if (!result.ok()) {
    for (const auto& e : result.errors) err << config::to_string(e) << "\n";
    err << path << ": " << result.errors.size() << (result.errors.size() == 1 ? " error\n" : " errors\n");
    return 1;
  }
  out << path << ": ok\n" << config::summary(*result.config) << "\n";
  return 0;
}

}  // namespace lockwatch::app
