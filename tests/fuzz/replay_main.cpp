// SPDX-License-Identifier: Apache-2.0
// Replays files (directories recursively) through a libFuzzer target without libFuzzer, so
// the corpus and every saved crash run as a plain test with any compiler.
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

namespace fs = std::filesystem;

// The input being run, kept in a fixed buffer so a signal handler may print it.
char current_input[4096];

void report_crash(int signal_number) {
  constexpr char prefix[] = "replay: crashed on input ";
  (void)!write(STDERR_FILENO, prefix, sizeof prefix - 1);
  (void)!write(STDERR_FILENO, current_input, std::strlen(current_input));
  (void)!write(STDERR_FILENO, "\n", 1);
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
}

void install_crash_report() {
  for (const int s : {SIGILL, SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGTRAP}) std::signal(s, report_crash);
}

bool hidden(const fs::path& p) { return p.filename().string().starts_with("."); }

// Files under `root` (or `root` itself), in name order so runs are repeatable.
bool collect(const fs::path& root, std::vector<fs::path>& files) {
  std::error_code ec;
  if (fs::is_regular_file(root, ec)) {
    files.push_back(root);
    return true;
  }
  if (!fs::is_directory(root, ec)) return false;
  std::vector<fs::path> found;
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file(ec) && !hidden(it->path())) found.push_back(it->path());
  std::sort(found.begin(), found.end());
  files.insert(files.end(), found.begin(), found.end());
  return !ec;
}

bool run_one(const fs::path& file, std::size_t& bytes) {
  std::ifstream in(file, std::ios::binary);
  const std::vector<char> data{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) return false;
  std::snprintf(current_input, sizeof current_input, "%s", file.c_str());
  // libFuzzer hands over bytes; the target reinterprets them the same way.
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(data.data()), data.size());
  bytes += data.size();
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  install_crash_report();
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    if (!collect(argv[i], files)) {
      std::fprintf(stderr, "replay: cannot read '%s'\n", argv[i]);
      return 2;
    }
  }
  std::size_t bytes = 0;
  for (const auto& file : files) {
    if (!run_one(file, bytes)) {
      std::fprintf(stderr, "replay: error reading '%s'\n", file.c_str());
      return 2;
    }
  }
  std::printf("replay: %zu inputs, %zu bytes, no crash or mismatch\n", files.size(), bytes);
  return 0;
}
