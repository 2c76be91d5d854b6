// SPDX-License-Identifier: Apache-2.0
// `lockwatch run`: discovery, scheduler, processing, exporter and HTTP API on one Asio
// loop plus one processing thread, so a scrape never waits for a dump or a parse.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "lockwatch/config/config.hpp"

namespace lockwatch::service {

struct DaemonSettings {
  config::Config config;
  /// SIGHUP: the config to switch to, or nothing (and `error` set) to keep the current one.
  std::function<std::optional<config::Config>(std::string& error)> reload;
  std::string version = "unknown";
  std::string proc_root = "/proc";
};

class Daemon {
 public:
  explicit Daemon(DaemonSettings settings);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  /// Binds the HTTP server; throws std::system_error naming the address when it cannot.
  void start();
  /// Runs until SIGTERM or SIGINT (or stop()); returns the process exit code.
  int run();
  void stop();
  std::uint16_t port() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace lockwatch::service
