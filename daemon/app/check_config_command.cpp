// SPDX-License-Identifier: Apache-2.0
#include "check_config_command.hpp"

#include <string>
#include <vector>

#include "lockwatch/config/load.hpp"

namespace lockwatch::app {
namespace {

constexpr CommandSpec spec{
    "check-config",
    "check a YAML configuration file; every problem as FILE:LINE:COL: message",
    "FILE",
    "  Reads a YAML configuration file as 'lockwatch run --config FILE' would and reports every\n"
    "  problem as FILE:LINE:COL: message, and the web config file it names the same way.\n"
    "  Exit codes: 0 valid, 1 invalid, 2 usage.\n"
    "  The keys and their defaults: docs/configuration.md.\n",
    {},
};

int invalid(std::ostream& err, const std::string& path, const std::vector<config::ConfigError>& errors) {
  for (const auto& e : errors) err << config::to_string(e) << "\n";
  err << path << ": " << errors.size() << (errors.size() == 1 ? " error\n" : " errors\n");
  return 1;
}

}  // namespace

const CommandSpec& check_config_spec() { return spec; }

int run_check_config(std::span<const std::string_view> args, std::ostream& out, std::ostream& err) {
  ParsedArgs parsed;
  if (auto code = read_args(spec, args, parsed, out, err)) return *code;
  // A file named like an option is still reachable: "./-x", or "--" before it.
  if (parsed.operands.size() != 1)
    return usage_error(spec, err, parsed.operands.empty() ? "no file given" : "one file at a time");
  const std::string path(parsed.operands.front());
  auto result = config::load_config_file(path);
  if (!result.ok()) return invalid(err, path, result.errors);
  // The web config it names is part of what `run` reads (its certificates are loaded only at start).
  if (const auto& web_file = result.config->web_config_file; !web_file.empty()) {
    auto web = config::load_web_config_file(web_file);
    if (!web.ok()) return invalid(err, web_file, web.errors);
    result.config->web = std::move(*web.web);
  }
  out << path << ": ok\n" << config::summary(*result.config) << "\n";
  return 0;
}

}  // namespace lockwatch::app
