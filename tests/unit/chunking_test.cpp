// SPDX-License-Identifier: Apache-2.0
// Chunk invariance on real dumps: however the bytes arrive, the parse is the same.
#include <catch2/catch.hpp>

#include "lockwatch/parser/dump_parser.hpp"
#include "test_support.hpp"

using namespace lockwatch;

namespace {

std::vector<std::filesystem::path> real_dumps() {
  auto files = test::files_below(test::corpus_dir());
  for (auto& f : test::files_below(test::captured_dir())) files.push_back(f);
  return files;
}

}  // namespace

TEST_CASE("chunk invariance: every chunk size 1..64 and random splits", "[parser][property]") {
  const auto files = real_dumps();
  REQUIRE_FALSE(files.empty());
  for (const auto& file : files) {
    const std::string text = test::read_file(file);
    const std::string whole = test::parse_in_chunks(text, text.size() + 1);
    INFO(file.string());
    for (std::size_t chunk = 1; chunk <= 64; ++chunk) {
      if (chunk > 4 && text.size() > 200'000 && chunk % 7 != 0) continue;  // keep big files quick
      REQUIRE(test::parse_in_chunks(text, chunk) == whole);
    }
    for (unsigned seed = 1; seed <= 8; ++seed) REQUIRE(test::parse_random_splits(text, 50, seed) == whole);
  }
}

TEST_CASE("chunk invariance holds when limits cut the input", "[parser][property][limits]") {
  parser::ParserLimits limits;
  limits.max_line_bytes = 100;
  limits.max_total_bytes = 50'000;
  limits.max_threads = 20;
  for (const auto& file : real_dumps()) {
    const std::string text = test::read_file(file);
    INFO(file.string());
    const std::string whole = test::parse_in_chunks(text, text.size() + 1, limits);
    for (std::size_t chunk : {std::size_t{1}, std::size_t{3}, std::size_t{1000}}) REQUIRE(test::parse_in_chunks(text, chunk, limits) == whole);
  }
}
