// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the test suites: input files, chunked feeding, golden files.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "lockwatch/parser/dump_parser.hpp"

namespace lockwatch::test {

std::string read_file(const std::filesystem::path& path);
void write_file(const std::filesystem::path& path, std::string_view text);

/// Regular files below `dir` (recursively), sorted; empty if `dir` does not exist.
std::vector<std::filesystem::path> files_below(const std::filesystem::path& dir);

/// A copy of `dir` that any user can read, below /var/tmp (removed when this goes out of
/// scope): a JVM run as another user cannot read classes in a checkout under a 0700 home such
/// as /root, and a private /tmp would hide a copy made there.
class ReadableCopy {
 public:
  ReadableCopy(const std::filesystem::path& dir, const std::string& tag);
  ~ReadableCopy();
  ReadableCopy(const ReadableCopy&) = delete;
  ReadableCopy& operator=(const ReadableCopy&) = delete;
  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
};

/// The real dumps of the public corpus (`LOCKWATCH_CORPUS_DIR`); empty if it is absent.
std::filesystem::path corpus_dir();
/// Dumps captured from this project's Java scenarios (tests/golden/captured).
std::filesystem::path captured_dir();
std::filesystem::path source_dir();

/// Everything a parse produced, as canonical text plus the stream counters: two parses
/// that print the same saw the same input.
std::string parse_fingerprint(std::vector<model::ThreadDump>& dumps, const parser::ParseStats& stats);

/// Parses `text` fed in pieces of `chunk` bytes.
std::string parse_in_chunks(std::string_view text, std::size_t chunk, parser::ParserLimits limits = {});
/// Parses `text` split at `splits` pseudo-random points (deterministic in `seed`).
std::string parse_random_splits(std::string_view text, std::size_t splits, unsigned seed,
                                parser::ParserLimits limits = {});

/// Compares `actual` with the golden file; with LOCKWATCH_UPDATE_GOLDEN=1 rewrites it
/// instead. Returns "" when equal (or updated), else a short diff for the failure message.
std::string check_golden(const std::filesystem::path& expected_file, const std::string& actual);

/// The first dump of `text` (whole-buffer parse); tests of one dump use this.
model::ThreadDump parse_one(std::string_view text);

}  // namespace lockwatch::test
