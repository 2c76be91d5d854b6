// SPDX-License-Identifier: Apache-2.0
#include "analyze_command.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "lockwatch/analysis/correlator.hpp"
#include "lockwatch/analysis/lock_time.hpp"
#include "lockwatch/page/html.hpp"
#include "lockwatch/page/view.hpp"
#include "lockwatch/report/analyze_input.hpp"
#include "lockwatch/report/analyze_report.hpp"

namespace lockwatch::app {
namespace {

namespace fs = std::filesystem;

enum class Format { text, json, html };

struct Options {
  Format format = Format::text;
  analysis::CorrelatorOptions correlator;
  std::vector<std::string> paths;
};

constexpr FlagSpec flag_table[] = {
    {"--format", "text|json|html", "text for people (the default), json for tools, html for one page"},
    {"--stuck-samples", "N", "waiting on one lock in N dumps in a row is stuck (default 3)"},
    {"--window", "N", "dumps before and after one that may name its holders (default 1)"},
};

constexpr CommandSpec spec{
    "analyze",
    "contended locks, holders, deadlocks and pools in saved thread dumps",
    "FILE|DIR|-...",
    "  Files are read in the order given as one sequence of dumps (jstack, jcmd, SIGQUIT output,\n"
    "  Thread.dump_to_file; a directory: its files in natural name order; '-': standard input,\n"
    "  e.g. jstack -l PID | lockwatch analyze -).\n"
    "  --format html writes one self-contained page (hot locks, waiters over the dumps, the\n"
    "  wait-for graph, a flame graph) that opens from disk:\n"
    "  lockwatch analyze --format html DIR > report.html\n",
    flag_table,
};

std::optional<std::uint32_t> parse_count(std::string_view text) {
  std::uint32_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || ptr != text.data() + text.size() || value == 0) return std::nullopt;
  return value;
}

// The values of the flags the table let through; an error message, or "" when they are good.
std::string read_options(const ParsedArgs& args, Options& o) {
  for (const auto& [flag, v] : args.flags) {
    if (flag->name == "--format") {
      if (v != "json" && v != "text" && v != "html") return "--format takes text, json or html";
      o.format = v == "json" ? Format::json : v == "html" ? Format::html : Format::text;
    } else {
      auto n = parse_count(v);
      if (!n) return std::string(flag->name) + " takes a whole number >= 1";
      (flag->name == "--window" ? o.correlator.neighbour_window : o.correlator.stuck_samples) = *n;
    }
  }
  o.paths.assign(args.operands.begin(), args.operands.end());
  return o.paths.empty() ? "no input files" : "";
}

// What one run feeds every input into: shared, since the inputs continue one sequence of dumps.
struct Run {
  report::AnalyzeResult result;
  analysis::Correlator correlator;
  analysis::LockTime lock_time;
  std::optional<view::StackViews> stacks;  // the HTML report's flame and wait-for graphs

  explicit Run(const Options& o) : correlator(o.correlator) {
    if (o.format == Format::html) stacks.emplace();
  }
  report::DumpSink keep() {
    if (!stacks) return {};
    return [this](model::ThreadDump&& dump) { stacks->add(std::move(dump)); };
  }
  report::InputFeed feed(const std::string& label) { return {label, result, correlator, lock_time, keep()}; }
};

// Regular files are mapped, not read: the parser takes its lines straight from the page
// cache (reading copied every byte once more). A window at a time, so a big file does not
// pin its whole size in memory; the parser carries a line cut by a window's end.
bool read_mapped(int fd, std::size_t size, report::InputFeed& input, std::ostream& err) {
  constexpr std::size_t window = 1 << 20;  // a multiple of the page size
  for (std::size_t at = 0; at < size; at += window) {
    const std::size_t length = std::min(window, size - at);
    void* map = ::mmap(nullptr, length, PROT_READ, MAP_PRIVATE, fd, static_cast<off_t>(at));
    if (map == MAP_FAILED && at == 0) return false;  // the caller reads the file instead
    if (map == MAP_FAILED) {
      err << "lockwatch analyze: cannot read past byte " << at << ": " << std::strerror(errno) << "\n";
      break;
    }
    ::madvise(map, length, MADV_SEQUENTIAL);
    input.feed({static_cast<const char*>(map), length});
    ::munmap(map, length);
  }
  input.finish(err);
  return true;
}

bool read_file(const std::string& path, std::vector<char>& buffer, Run& run, std::ostream& err) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    err << "lockwatch analyze: cannot read '" << path << "': " << std::strerror(errno) << "\n";
    return false;
  }
  struct stat st {};
  // Big regular files are mapped; small ones (most dump files) cost less to read than to map.
  const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > (4 << 20);
  if (regular) {
    auto input = run.feed(path);
    if (read_mapped(fd, static_cast<std::size_t>(st.st_size), input, err)) {
      ::close(fd);
      return true;
    }
    run.result.inputs.pop_back();  // not mappable: read it instead (the feed recorded it, but nothing was fed)
  }
  auto input = run.feed(path);
  for (;;) {
    const auto n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      err << "lockwatch analyze: error reading '" << path << "': " << std::strerror(errno) << "\n";
      ::close(fd);
      return false;
    }
    if (n == 0) break;
    input.feed({buffer.data(), static_cast<std::size_t>(n)});
  }
  ::close(fd);
  input.finish(err);
  return true;
}

// "incidents/20261130T101500Z-Shop/" -> "20261130T101500Z-Shop"; "." -> the directory's name.
std::string display_name(const std::string& path) {
  std::error_code ec;
  auto p = fs::absolute(path, ec).lexically_normal();
  while (!p.empty() && p.filename().empty() && p != p.root_path()) p = p.parent_path();
  return p.filename().empty() ? path : p.filename().string();
}

// The same views as the daemon's page, over every dump read; times are the dumps' numbers.
std::string html_report(const std::vector<std::string>& paths, const Run& run) {
  page::ReportPage report;
  report.title = paths.front() == "-" ? std::string("standard input") : display_name(paths.front());
  if (paths.size() > 1) report.title += " and " + std::to_string(paths.size() - 1) + " more";
  for (const auto& in : run.result.inputs) report.inputs.push_back({in.path, in.dumps});
  report.view = view::build_target_view(report.title, view::window_of(run.correlator), *run.stacks, false);
  report.version = LOCKWATCH_VERSION;
  return page::render_report(report);
}

}  // namespace

const CommandSpec& analyze_spec() { return spec; }

int run_analyze(std::span<const std::string_view> args, std::ostream& out, std::ostream& err) {
  ParsedArgs parsed;
  if (auto code = read_args(spec, args, parsed, out, err)) return *code;
  Options options;
  if (auto problem = read_options(parsed, options); !problem.empty()) return usage_error(spec, err, problem);
  Run run(options);
  std::vector<char> buffer(1 << 20);  // shared by every file: one allocation, not one per file
  for (const auto& path : report::expand_inputs(options.paths)) {
    const bool ok = path == "-" ? report::analyze_stream(std::cin, "-", run.result, run.correlator, err, &run.lock_time, run.keep())
                                : read_file(path, buffer, run, err);
    if (!ok) return 2;
  }
  if (run.result.dump_input.empty()) {
    err << "lockwatch analyze: no thread dump in the input\n";
    return 1;
  }
  if (run.stacks) {
    out << html_report(options.paths, run);
    return 0;
  }
  run.result.report = run.correlator.report();
  run.result.lock_time = run.lock_time.report();
  out << (options.format == Format::json ? report::render_json(run.result) : report::render_text(run.result));
  return 0;
}

}  // namespace lockwatch::app
