// SPDX-License-Identifier: Apache-2.0
#include "test_support.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include "lockwatch/model/canonical.hpp"
#include "lockwatch/report/analyze_input.hpp"

namespace lockwatch::test {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void write_file(const fs::path& path, std::string_view text) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

ReadableCopy::ReadableCopy(const fs::path& dir, const std::string& tag) {
  std::string pattern = "/var/tmp/lockwatch-" + tag + "-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp " + pattern + " failed");
  path_ = pattern;
  fs::copy(dir, path_, fs::copy_options::recursive);
  constexpr auto readable = fs::perms::others_read | fs::perms::others_exec | fs::perms::group_read | fs::perms::group_exec;
  for (const auto& e : fs::recursive_directory_iterator(path_)) fs::permissions(e.path(), readable, fs::perm_options::add);
  fs::permissions(path_, readable, fs::perm_options::add);
}

ReadableCopy::~ReadableCopy() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::vector<fs::path> files_below(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename().string().front() != '.') files.push_back(e.path());
  std::sort(files.begin(), files.end(),
            [](const fs::path& a, const fs::path& b) { return report::natural_less(a.generic_string(), b.generic_string()); });
  return files;
}

fs::path corpus_dir() { return LOCKWATCH_CORPUS_DIR; }
fs::path source_dir() { return LOCKWATCH_SOURCE_DIR; }
fs::path captured_dir() { return source_dir() / "tests" / "golden" / "captured"; }

std::string parse_fingerprint(std::vector<model::ThreadDump>& dumps, const parser::ParseStats& stats) {
  std::string out;
  for (const auto& d : dumps) out += model::canonical_text(d) + "--\n";
  out += "stream dumps=" + std::to_string(stats.dumps) + " lines=" + std::to_string(stats.lines) +
         " junk=" + std::to_string(stats.junk_lines) + " incomplete=" + std::to_string(stats.incomplete_dumps) +
         " bytes=" + std::to_string(stats.bytes) + " stopped=" + std::to_string(static_cast<int>(stats.stopped)) + "\n";
  return out;
}

static std::string finish(parser::DumpParser& p) {
  p.finish();
  auto dumps = p.take_dumps();
  return parse_fingerprint(dumps, p.stats());
}

std::string parse_in_chunks(std::string_view text, std::size_t chunk, parser::ParserLimits limits) {
  parser::DumpParser p(limits);
  for (std::size_t at = 0; at < text.size(); at += chunk) p.feed(text.substr(at, chunk));
  return finish(p);
}

std::string parse_random_splits(std::string_view text, std::size_t splits, unsigned seed,
                                parser::ParserLimits limits) {
  std::mt19937 rng(seed);
  std::vector<std::size_t> cuts{0, text.size()};
  std::uniform_int_distribution<std::size_t> pick(0, text.size());
  for (std::size_t i = 0; i < splits; ++i) cuts.push_back(pick(rng));
  std::sort(cuts.begin(), cuts.end());
  parser::DumpParser p(limits);
  for (std::size_t i = 0; i + 1 < cuts.size(); ++i) p.feed(text.substr(cuts[i], cuts[i + 1] - cuts[i]));
  return finish(p);
}

static std::string first_difference(const std::string& expected, const std::string& actual) {
  std::istringstream e(expected), a(actual);
  std::string le, la;
  for (int line = 1;; ++line) {
    const bool more_e = static_cast<bool>(std::getline(e, le)), more_a = static_cast<bool>(std::getline(a, la));
    if (!more_e && !more_a) return "outputs differ only in line endings";
    if (le != la || more_e != more_a)
      return "line " + std::to_string(line) + ":\n  expected: " + (more_e ? le : "<end>") +
             "\n  actual:   " + (more_a ? la : "<end>");
  }
}

std::string check_golden(const fs::path& expected_file, const std::string& actual) {
  const char* update = std::getenv("LOCKWATCH_UPDATE_GOLDEN");
  if (update != nullptr && std::string_view(update) == "1") {
    write_file(expected_file, actual);
    return {};
  }
  std::error_code ec;
  if (!fs::exists(expected_file, ec))
    return "missing golden file " + expected_file.string() + " (run with LOCKWATCH_UPDATE_GOLDEN=1 and review the diff)";
  const std::string expected = read_file(expected_file);
  if (expected == actual) return {};
  return expected_file.string() + " differs at " + first_difference(expected, actual) +
         "\n(if the change is intended: LOCKWATCH_UPDATE_GOLDEN=1, then review `git diff`)";
}

model::ThreadDump parse_one(std::string_view text) {
  auto dumps = parser::parse_dumps(text);
  if (dumps.empty()) throw std::runtime_error("no dump in test input");
  return std::move(dumps.front());
}

}  // namespace lockwatch::test
