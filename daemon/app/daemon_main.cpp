// SPDX-License-Identifier: Apache-2.0
// lockwatch-daemon: the daemon alone. `lockwatch run FLAGS` execs it with its own argument
// vector, "run" included, so the word is skipped here; run directly, it takes run's FLAGS.
#include <iostream>
#include <string_view>
#include <vector>

#include "run_command.hpp"

int main(int argc, char** argv) {
  std::vector<std::string_view> args(argv + 1, argv + argc);
  if (!args.empty() && args.front() == "run") args.erase(args.begin());
  return lockwatch::app::run_daemon(args, std::cout, std::cerr);
}
