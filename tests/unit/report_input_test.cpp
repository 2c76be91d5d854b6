// SPDX-License-Identifier: Apache-2.0
// The inputs of `lockwatch analyze` (lockwatch/report/analyze_input.hpp): which files a list of
// paths names, and that the result does not depend on how the bytes arrive.
#include <catch2/catch.hpp>

#include <filesystem>
#include <sstream>

#include "lockwatch/report/analyze_input.hpp"
#include "lockwatch/report/analyze_report.hpp"
#include "test_support.hpp"

using namespace lockwatch;
namespace fs = std::filesystem;

namespace {

// The JSON report of `texts` read as one sequence, each text fed in pieces of `chunk` bytes
// (0: whole), plus what went to the error stream and the dumps the sink was given.
struct Fed {
  std::string json;
  std::string err;
  std::size_t kept = 0;
};

Fed feed_all(const std::vector<std::string>& texts, std::size_t chunk) {
  report::AnalyzeResult result;
  analysis::Correlator correlator;
  analysis::LockTime lock_time;
  std::ostringstream err;
  Fed fed;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    report::InputFeed input("input-" + std::to_string(i), result, correlator, lock_time,
                            [&fed](model::ThreadDump&&) { ++fed.kept; });
    const std::string_view text = texts[i];
    const std::size_t step = chunk == 0 ? text.size() + 1 : chunk;
    for (std::size_t at = 0; at < text.size(); at += step) input.feed(text.substr(at, step));
    input.finish(err);
  }
  result.report = correlator.report();
  result.lock_time = lock_time.report();
  fed.json = report::render_json(result);
  fed.err = err.str();
  return fed;
}

std::vector<std::string> captured(const std::string& scenario) {
  std::vector<std::string> texts;
  for (const auto& f : test::files_below(test::captured_dir() / "jdk17" / scenario))
    if (f.filename() != "nolocks.txt") texts.push_back(test::read_file(f));
  return texts;
}

}  // namespace

TEST_CASE("analyze inputs: file names in natural order", "[report][input]") {
  CHECK(report::natural_less("dump-2.txt", "dump-10.txt"));
  CHECK_FALSE(report::natural_less("dump-10.txt", "dump-2.txt"));
  CHECK(report::natural_less("dump-02.txt", "dump-3.txt"));
  CHECK(report::natural_less("a", "b"));
  CHECK(report::natural_less("dump", "dump-1"));
  CHECK_FALSE(report::natural_less("x1", "x1"));
  CHECK_FALSE(report::natural_less("dump-007", "dump-7"));  // the same number: neither comes first
  CHECK_FALSE(report::natural_less("dump-7", "dump-007"));
}

TEST_CASE("analyze inputs: a directory is its dumps in natural order, files stay as given", "[report][input]") {
  const auto dir = fs::temp_directory_path() / "lockwatch-report-input-test";
  fs::remove_all(dir);
  for (const auto* name : {"dump-10.txt", "dump-2.txt", "dump-1.txt", ".hidden", "summary.json"})
    test::write_file(dir / name, "x\n");
  fs::create_directories(dir / "sub");
  test::write_file(dir / "sub" / "dump-3.txt", "x\n");  // not descended into
  const auto files = report::expand_inputs({"b.txt", dir.string(), "-", "/nonexistent/a.txt"});
  CHECK(files == std::vector<std::string>{"b.txt", (dir / "dump-1.txt").string(), (dir / "dump-2.txt").string(),
                                          (dir / "dump-10.txt").string(), "-", "/nonexistent/a.txt"});
  fs::remove_all(dir);
}

TEST_CASE("analyze inputs: the report is the same however the bytes are cut", "[report][input]") {
  const auto texts = captured("MonitorContention");
  REQUIRE(texts.size() >= 2);
  const auto whole = feed_all(texts, 0);
  REQUIRE(whole.kept == texts.size());  // one dump per captured file, each handed to the sink
  CHECK(whole.err.empty());
  CHECK(whole.json.find("\"dumps\"") != std::string::npos);
  for (const std::size_t chunk : {std::size_t{1}, std::size_t{7}, std::size_t{4096}}) {
    INFO("chunk " << chunk);
    const auto cut = feed_all(texts, chunk);
    CHECK(cut.json == whole.json);
    CHECK(cut.kept == whole.kept);
  }
}

TEST_CASE("analyze inputs: inputs continue one sequence; an input without a dump is named", "[report][input]") {
  const auto texts = captured("MonitorDeadlock");
  REQUIRE_FALSE(texts.empty());
  report::AnalyzeResult result;
  analysis::Correlator correlator;
  analysis::LockTime lock_time;
  std::ostringstream err;
  const std::vector<std::string> inputs{texts.front(), "no dump here\n", texts.back()};
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    report::InputFeed input("in-" + std::to_string(i), result, correlator, lock_time);
    input.feed(inputs[i]);
    input.finish(err);
  }
  REQUIRE(result.inputs.size() == 3);
  CHECK(result.inputs[0].dumps == 1);
  CHECK(result.inputs[1].dumps == 0);
  CHECK(result.inputs[2].dumps == 1);
  CHECK(result.dump_input == std::vector<std::size_t>{0, 2});  // the dumps' inputs, in reading order
  CHECK(correlator.size() == 2);
  CHECK(err.str() == "lockwatch analyze: no thread dump found in 'in-1'\n");
}

TEST_CASE("analyze inputs: a stream reads like the same bytes fed by hand", "[report][input]") {
  const auto texts = captured("MonitorContention");
  REQUIRE_FALSE(texts.empty());
  std::string joined;
  for (const auto& t : texts) joined += t;
  report::AnalyzeResult result;
  analysis::Correlator correlator;
  analysis::LockTime lock_time;
  std::ostringstream err;
  std::istringstream in(joined);
  std::size_t kept = 0;
  REQUIRE(report::analyze_stream(in, "input-0", result, correlator, err, &lock_time,
                                 [&kept](model::ThreadDump&&) { ++kept; }));
  result.report = correlator.report();
  result.lock_time = lock_time.report();
  const auto by_hand = feed_all({joined}, 0);
  CHECK(kept == texts.size());
  CHECK(kept == by_hand.kept);
  CHECK(report::render_json(result) == by_hand.json);
}
