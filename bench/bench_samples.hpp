// SPDX-License-Identifier: Apache-2.0
// The benchmarks' input of successive samples: LOCKWATCH_BENCH_INPUT names a directory whose
// files (recursively, in name order) are one dump each, or one file; unset, the directory the
// build configured (LOCKWATCH_BENCH_DEFAULT_INPUT, the real-dump corpus). Shared by the
// benchmarks that feed a target one reply per file.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace lockwatch::bench {

inline std::vector<std::string> load_samples() {
  namespace fs = std::filesystem;
  const char* env = std::getenv("LOCKWATCH_BENCH_INPUT");
  const fs::path root = env != nullptr && *env != '\0' ? env : LOCKWATCH_BENCH_DEFAULT_INPUT;
  std::vector<fs::path> files;
  if (fs::is_directory(root)) {
    for (const auto& entry : fs::recursive_directory_iterator(root))
      if (entry.is_regular_file()) files.push_back(entry.path());
  } else {
    files.push_back(root);
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> samples;
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    samples.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return samples;
}

}  // namespace lockwatch::bench
