// SPDX-License-Identifier: Apache-2.0
// The report of `lockwatch analyze`: for an engineer in an incident (text) and for tools (JSON).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "lockwatch/analysis/correlator.hpp"
#include "lockwatch/analysis/lock_time.hpp"
#include "lockwatch/parser/dump_parser.hpp"

namespace lockwatch::report {

struct InputFile {
  std::string path;
  std::size_t dumps = 0;
  parser::ParseStats stats;
};

struct AnalyzeResult {
  std::vector<InputFile> inputs;
  std::vector<std::size_t> dump_input;  // index into inputs, per dump of the report
  analysis::SequenceReport report;
  std::optional<analysis::LockTimeReport> lock_time;  // wait seconds, holds, holder activity
};

std::string render_json(const AnalyzeResult& result);
std::string render_text(const AnalyzeResult& result);

}  // namespace lockwatch::report
