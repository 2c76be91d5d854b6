// SPDX-License-Identifier: Apache-2.0
#include "analyze_command.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "lockwatch/analysis/correlator.hpp"
#include "lockwatch/parser/dump_parser.hpp"
#include "lockwatch/report/analyze_report.hpp"

namespace lockwatch::app {
namespace {

namespace fs = std::filesystem;

struct Options {
  bool json = false;
  analysis::CorrelatorOptions correlator;
  std::vector<std::string> paths;
};

constexpr std::string_view usage =
    "usage: lockwatch analyze [--format text|json] [--stuck-samples N] [--window N] FILE|DIR...\n"
    "  Files are read in the order given as one sequence of dumps (a directory: its files by name).\n";

std::optional<std::uint32_t> parse_count(std::string_view text) {
  std::uint32_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || ptr != text.data() + text.size() || value == 0) return std::nullopt;
  return value;
}

// Returns an error message, or "" when `args` parsed.
std::string parse_args(std::span<const std::string_view> args, Options& o) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto a = args[i];
    auto next = [&]() -> std::optional<std::string_view> {
      if (i + 1 >= args.size()) return std::nullopt;
      return args[++i];
    };
    if (a == "--format" || a.starts_with("--format=")) {
      auto v = a == "--format" ? next() : std::optional(a.substr(9));
      if (!v || (*v != "json" && *v != "text")) return "--format takes text or json";
      o.json = *v == "json";
    } else if (a == "--stuck-samples" || a == "--window") {
      auto v = next();
      auto n = v ? parse_count(*v) : std::nullopt;
      if (!n) return std::string(a) + " takes a whole number >= 1";
      (a == "--window" ? o.correlator.neighbour_window : o.correlator.stuck_samples) = *n;
    } else if (a.starts_with("--")) {
      return "unknown option " + std::string(a);
    } else {
      o.paths.emplace_back(a);
    }
  }
  return o.paths.empty() ? "no input files" : "";
}

// A directory (e.g. an incident) is read as its files in name order.
std::vector<std::string> expand(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const auto& p : paths) {
    std::error_code ec;
    if (!fs::is_directory(p, ec)) {
      files.push_back(p);
      continue;
    }
    std::vector<std::string> entries;
    for (const auto& e : fs::directory_iterator(p, ec))
      if (e.is_regular_file(ec) && e.path().filename().string().front() != '.' &&
          e.path().filename() != "summary.json")
        entries.push_back(e.path().string());
    std::sort(entries.begin(), entries.end(), natural_less);
    files.insert(files.end(), entries.begin(), entries.end());
  }
  return files;
}

bool read_file(const std::string& path, report::AnalyzeResult& result, analysis::Correlator& correlator,
               std::ostream& err) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    err << "lockwatch analyze: cannot read '" << path << "': " << std::strerror(errno) << "\n";
    return false;
  }
  return analyze_stream(in, path, result, correlator, err);
}

}  // namespace

bool natural_less(std::string_view a, std::string_view b) {
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (!digit(a[i]) || !digit(b[j])) {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i, ++j;
      continue;
    }
    const auto ei = a.find_first_not_of("0123456789", i), ej = b.find_first_not_of("0123456789", j);
    auto na = a.substr(i, ei - i), nb = b.substr(j, ej - j);
    while (na.size() > 1 && na.front() == '0') na.remove_prefix(1);
    while (nb.size() > 1 && nb.front() == '0') nb.remove_prefix(1);
    if (na.size() != nb.size()) return na.size() < nb.size();
    if (na != nb) return na < nb;
    i = ei == std::string_view::npos ? a.size() : ei;
    j = ej == std::string_view::npos ? b.size() : ej;
  }
  return a.size() - i < b.size() - j;
}

bool analyze_stream(std::istream& in, const std::string& label, report::AnalyzeResult& result,
                    analysis::Correlator& correlator, std::ostream& err) {
  parser::DumpParser parser;
  std::vector<char> buffer(256 * 1024);
  result.inputs.push_back({label, 0, {}});
  auto add_dumps = [&] {
    for (auto& dump : parser.take_dumps()) {
      correlator.add(dump, static_cast<double>(result.dump_input.size()));
      result.dump_input.push_back(result.inputs.size() - 1);
      ++result.inputs.back().dumps;
    }
  };
  while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0) {
    parser.feed({buffer.data(), static_cast<std::size_t>(in.gcount())});
    add_dumps();
  }
  if (in.bad()) {
    err << "lockwatch analyze: error reading '" << label << "'\n";
    return false;
  }
  parser.finish();
  add_dumps();
  result.inputs.back().stats = parser.stats();
  if (result.inputs.back().dumps == 0) err << "lockwatch analyze: no thread dump found in '" << label << "'\n";
  return true;
}

int run_analyze(std::span<const std::string_view> args, std::ostream& out, std::ostream& err) {
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    out << usage;
    return 0;
  }
  Options options;
  if (auto problem = parse_args(args, options); !problem.empty()) {
    err << "lockwatch analyze: " << problem << "\n" << usage;
    return 2;
  }
  report::AnalyzeResult result;
  analysis::Correlator correlator(options.correlator);
  for (const auto& path : expand(options.paths))
    if (!read_file(path, result, correlator, err)) return 2;
  if (result.dump_input.empty()) {
    err << "lockwatch analyze: no thread dump in the input\n";
    return 1;
  }
  result.report = correlator.report();
  out << (options.json ? report::render_json(result) : report::render_text(result));
  return 0;
}

}  // namespace lockwatch::app
