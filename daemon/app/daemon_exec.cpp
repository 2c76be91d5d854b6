// SPDX-License-Identifier: Apache-2.0
#include "daemon_exec.hpp"

#include <cerrno>
#include <cstring>
#include <iostream>
#include <string>
#include <system_error>
#include <vector>

#include <unistd.h>

namespace lockwatch::app {

std::filesystem::path daemon_path() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return (ec ? std::filesystem::path() : self.parent_path()) / "lockwatch-daemon";
}

int exec_daemon(std::string_view argv0, std::span<const std::string_view> args, std::ostream& err) {
  const std::string path = daemon_path().string();
  std::vector<std::string> words{std::string(argv0), "run"};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  std::cout.flush();
  ::execv(path.c_str(), argv.data());
  const int e = errno;
  err << "lockwatch run: cannot start the daemon " << path << ": " << std::strerror(e)
      << " (lockwatch-daemon is installed next to lockwatch)\n";
  return 1;
}

}  // namespace lockwatch::app
