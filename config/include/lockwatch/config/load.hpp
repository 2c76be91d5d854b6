// SPDX-License-Identifier: Apache-2.0
// Reading a YAML config into a Config, with every problem reported at its line and column.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockwatch/config/config.hpp"

namespace lockwatch::config {

struct ConfigError {
  std::string file;
  int line = 0;    // 1-based; 0 when the problem has no place in a file (unreadable file, validate())
  int column = 0;  // 1-based; 0 with line 0
  std::string message;
};

/// "FILE:LINE:COL: message"; "FILE: message" without a position; "message" without a file.
std::string to_string(const ConfigError& error);

/// Either the config or every problem found (never both): a YAML syntax error stops the
/// reading, anything else is collected so one run shows all of them.
struct LoadResult {
  std::optional<Config> config;
  std::vector<ConfigError> errors;
  bool ok() const { return config.has_value(); }
};

/// Reads and checks a config file. An empty file gives the defaults; a missing or unreadable
/// file is one error naming the file and the system's reason.
LoadResult load_config_file(const std::string& path);

/// The same for text already in memory; `name` is the file name errors carry.
LoadResult load_config_text(std::string_view text, std::string_view name);

/// The web config file named by `web_config_file`, with the same kind of errors. Relative
/// certificate and key paths are taken relative to the file's directory (as node_exporter
/// does) and returned absolute. An empty file gives plain HTTP without authentication.
struct WebLoadResult {
  std::optional<WebSettings> web;
  std::vector<ConfigError> errors;
  bool ok() const { return web.has_value(); }
};
WebLoadResult load_web_config_file(const std::string& path);
WebLoadResult load_web_config_text(std::string_view text, std::string_view name);

/// The checks the loader runs after reading, for a Config changed since (command-line
/// overrides): ranges, listen address, regex, cross-setting rules. Errors have no file or
/// position; each message starts with the key ("interval: must be greater than 0").
std::vector<ConfigError> validate(const Config& config);

}  // namespace lockwatch::config
