// SPDX-License-Identifier: Apache-2.0
// Reading the files, formatting errors, and validate() for settings that did not come from a file.
#include <cerrno>
#include <cstdio>
#include <filesystem>
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

// The file's text, or why it cannot be had.
std::optional<std::string> read_text(const std::string& path, std::string& error) {
  std::unique_ptr<std::FILE, CloseFile> file(std::fopen(path.c_str(), "rb"));
  if (!file) return error = "cannot open: " + std::generic_category().message(errno), std::nullopt;
  std::string text;
  char buffer[16384];
  while (const auto n = std::fread(buffer, 1, sizeof buffer, file.get())) {
    text.append(buffer, n);
    if (text.size() > max_file_bytes) return error = "larger than 1MiB; not a configuration file", std::nullopt;
  }
  // A directory opens fine on Linux and fails here with EISDIR.
  if (std::ferror(file.get())) return error = "cannot read: " + std::generic_category().message(errno), std::nullopt;
  return text;
}

// node_exporter reads certificate paths relative to the web config file, so a directory
// holding the file and its certificates can be mounted anywhere.
void resolve(std::string& file, const std::filesystem::path& base) {
  if (!file.empty() && std::filesystem::path(file).is_relative()) file = (base / file).lexically_normal().string();
}

}  // namespace

std::string to_string(const ConfigError& error) {
  std::string out = error.file;
  if (!out.empty() && error.line > 0) out += ":" + std::to_string(error.line) + ":" + std::to_string(error.column);
  return out.empty() ? error.message : out + ": " + error.message;
}

LoadResult load_config_file(const std::string& path) {
  std::string error;
  const auto text = read_text(path, error);
  if (!text) return {std::nullopt, {{path, 0, 0, error}}};
  return load_config_text(*text, path);
}

WebLoadResult load_web_config_file(const std::string& path) {
  std::string error;
  const auto text = read_text(path, error);
  if (!text) return {std::nullopt, {{path, 0, 0, error}}};
  auto result = load_web_config_text(*text, path);
  if (result.web && result.web->tls) {
    const auto base = std::filesystem::absolute(path).parent_path();
    for (auto* file : {&result.web->tls->cert_file, &result.web->tls->key_file, &result.web->tls->client_ca_file})
      resolve(*file, base);
  }
  return result;
}

std::vector<ConfigError> validate(const Config& config) {
  std::vector<ConfigError> errors;
  for (auto& problem : detail::check_config(config))
    errors.push_back({"", 0, 0, problem.keys.front() + ": " + problem.message});
  return errors;
}

}  // namespace lockwatch::config
