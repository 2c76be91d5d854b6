// SPDX-License-Identifier: Apache-2.0
// Reading the file, formatting errors, and validate() for settings that did not come from a file.
#include <cerrno>
#include <cstdio>
#include <memory>
#include <system_error>

#include "checks.hpp"
#include "lockwatch/config/load.hpp"

namespace lockwatch::config {
namespace {

// A config is a few KiB; a bigger file is a mistake (a dump or a log passed by accident).
constexpr std::size_t max_file_bytes = 1 << 20;

struct CloseFile {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

LoadResult file_error(const std::string& path, const std::string& reason) {
  return {std::nullopt, {{path, 0, 0, reason}}};
}

}  // namespace

std::string to_string(const ConfigError& error) {
  std::string out = error.file;
  if (!out.empty() && error.line > 0) out += ":" + std::to_string(error.line) + ":" + std::to_string(error.column);
  return out.empty() ? error.message : out + ": " + error.message;
}

LoadResult load_config_file(const std::string& path) {
  std::unique_ptr<std::FILE, CloseFile> file(std::fopen(path.c_str(), "rb"));
  if (!file) return file_error(path, "cannot open: " + std::generic_category().message(errno));
  std::string text;
  char buffer[16384];
  while (const auto n = std::fread(buffer, 1, sizeof buffer, file.get())) {
    text.append(buffer, n);
    if (text.size() > max_file_bytes) return file_error(path, "larger than 1MiB; not a configuration file");
  }
  // A directory opens fine on Linux and fails here with EISDIR.
  if (std::ferror(file.get())) return file_error(path, "cannot read: " + std::generic_category().message(errno));
  return load_config_text(text, path);
}

std::vector<ConfigError> validate(const Config& config) {
  std::vector<ConfigError> errors;
  for (auto& problem : detail::check_config(config))
    errors.push_back({"", 0, 0, problem.keys.front() + ": " + problem.message});
  return errors;
}

}  // namespace lockwatch::config
