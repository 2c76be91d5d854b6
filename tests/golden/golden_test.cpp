// SPDX-License-Identifier: Apache-2.0
// Golden tests: every real dump -> its canonical parse and its analyze report, compared
// with reviewed files under tests/golden/expected. LOCKWATCH_UPDATE_GOLDEN=1 rewrites
// them; review the change with `git diff tests/golden/expected`.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "lockwatch/parser/dump_parser.hpp"
#include "lockwatch/report/analyze_input.hpp"
#include "lockwatch/report/analyze_report.hpp"
#include "test_support.hpp"

using namespace lockwatch;
namespace fs = std::filesystem;

namespace {

fs::path expected_dir() { return test::source_dir() / "tests" / "golden" / "expected"; }

std::string canonical_parse(const fs::path& file) {
  parser::DumpParser p;
  p.feed(test::read_file(file));
  p.finish();
  auto dumps = p.take_dumps();
  return test::parse_fingerprint(dumps, p.stats());
}

// The text report over `files` as one sequence, labelled by their relative names.
std::string sequence_report(const std::vector<fs::path>& files, const fs::path& base) {
  report::AnalyzeResult result;
  analysis::Correlator correlator;
  std::ostringstream err;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    report::analyze_stream(in, fs::relative(f, base).generic_string(), result, correlator, err);
  }
  result.report = correlator.report();
  return err.str() + report::render_text(result);
}

// Checks both golden files of one input; returns the failures.
std::vector<std::string> check_file(const fs::path& file, const fs::path& base, const fs::path& out_dir) {
  const auto rel = fs::relative(file, base);
  std::vector<std::string> failures;
  for (const auto& [suffix, text] : {std::pair{".parse", canonical_parse(file)}, std::pair{".report", sequence_report({file}, base)}}) {
    auto problem = test::check_golden(out_dir / (rel.generic_string() + suffix), text);
    if (!problem.empty()) failures.push_back(problem);
  }
  return failures;
}

bool corpus_present() {
  if (fs::is_directory(test::corpus_dir())) return true;
  if (std::getenv("CI") != nullptr) FAIL("the public corpus is missing: " << test::corpus_dir());
  WARN("skipping the corpus golden files: " << test::corpus_dir() << " is absent");
  return false;
}

void require_no_failures(const std::vector<std::string>& failures) {
  for (const auto& f : failures) FAIL_CHECK(f);
  CHECK(failures.empty());
}

}  // namespace

TEST_CASE("golden: the public corpus of real dumps (JDK 1.5 to 25)", "[golden]") {
  if (!corpus_present()) return;
  std::vector<std::string> failures;
  const auto files = test::files_below(test::corpus_dir());
  CHECK(files.size() >= 37);
  for (const auto& f : files)
    for (auto& problem : check_file(f, test::corpus_dir(), expected_dir() / "corpus")) failures.push_back(problem);
  require_no_failures(failures);
}

TEST_CASE("golden: dumps captured from the scenario programs", "[golden]") {
  const auto files = test::files_below(test::captured_dir());
  REQUIRE_FALSE(files.empty());
  std::vector<std::string> failures;
  for (const auto& f : files)
    for (auto& problem : check_file(f, test::captured_dir(), expected_dir() / "captured")) failures.push_back(problem);
  require_no_failures(failures);
}

TEST_CASE("golden: each scenario's dump sequence, correlated", "[golden][correlator]") {
  std::vector<std::string> failures;
  for (const auto& jdk : fs::directory_iterator(test::captured_dir())) {
    for (const auto& scenario : fs::directory_iterator(jdk.path())) {
      std::vector<fs::path> sequence;
      for (const auto& f : test::files_below(scenario.path()))
        if (f.filename().string().starts_with("dump-")) sequence.push_back(f);
      if (sequence.size() < 2) continue;
      const auto rel = fs::relative(scenario.path(), test::captured_dir()).generic_string();
      auto problem = test::check_golden(expected_dir() / "sequences" / (rel + ".report"), sequence_report(sequence, test::captured_dir()));
      if (!problem.empty()) failures.push_back(problem);
    }
  }
  require_no_failures(failures);
}

TEST_CASE("golden: no expected file without its input", "[golden]") {
  std::vector<std::string> stale;
  for (const auto& e : test::files_below(expected_dir())) {
    auto rel = fs::relative(e, expected_dir());
    auto top = *rel.begin();
    if (top == "metrics") continue;  // the exporter's cases: metrics_golden_test.cpp checks those
    auto input = rel.lexically_relative(top);
    if (top == "sequences") {
      if (!fs::is_directory(test::captured_dir() / input.replace_extension(""))) stale.push_back(e.string());
      continue;
    }
    const auto base = top == "corpus" ? test::corpus_dir() : test::captured_dir();
    if (top == "corpus" && !fs::is_directory(base)) continue;
    if (!fs::exists(base / input.replace_extension(""))) stale.push_back(e.string());
  }
  for (const auto& s : stale) FAIL_CHECK("golden file without input (delete it): " << s);
  CHECK(stale.empty());
}
