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
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "lockwatch/analysis/correlator.hpp"
#include "lockwatch/analysis/lock_time.hpp"
#include "lockwatch/page/html.hpp"
#include "lockwatch/parser/dump_parser.hpp"
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

constexpr std::string_view usage =
    "usage: lockwatch analyze [--format text|json|html] [--stuck-samples N] [--window N] FILE|DIR|-...\n"
    "  Files are read in the order given as one sequence of dumps (a directory: its files in\n"
    "  natural name order; '-': standard input, e.g. jstack -l PID | lockwatch analyze -).\n"
    "  --format html writes one self-contained page (hot locks, waiters over the dumps, the\n"
    "  wait-for graph, a flame graph) that opens from disk: lockwatch analyze --format html DIR > report.html\n";

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
      if (!v || (*v != "json" && *v != "text" && *v != "html")) return "--format takes text, json or html";
      o.format = *v == "json" ? Format::json : *v == "html" ? Format::html : Format::text;
    } else if (a == "--stuck-samples" || a == "--window") {
      auto v = next();
      auto n = v ? parse_count(*v) : std::nullopt;
      if (!n) return std::string(a) + " takes a whole number >= 1";
      (a == "--window" ? o.correlator.neighbour_window : o.correlator.stuck_samples) = *n;
    } else if (a.starts_with("--") || (a.starts_with("-") && a != "-")) {
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

// Parses one input chunk by chunk; each dump goes to the correlator as soon as it is
// complete, so memory holds one dump at a time, not the whole file.
class InputFeed {
 public:
  InputFeed(const std::string& label, report::AnalyzeResult& result, analysis::Correlator& correlator,
            view::StackViews* stacks, analysis::LockTime& lock_time)
      : result_(result), correlator_(correlator), stacks_(stacks), lock_time_(lock_time) {
    result_.inputs.push_back({label, 0, {}});
  }

  void feed(std::string_view chunk) {
    parser_.feed(chunk);
    drain();
  }

  void finish(std::ostream& err) {
    parser_.finish();
    drain();
    auto& input = result_.inputs.back();
    input.stats = parser_.stats();
    if (input.dumps == 0) err << "lockwatch analyze: no thread dump found in '" << input.path << "'\n";
  }

 private:
  void drain() {
    for (auto& dump : parser_.take_dumps()) {
      correlator_.add(dump, static_cast<double>(result_.dump_input.size()));
      add_lock_time(dump);
      result_.dump_input.push_back(result_.inputs.size() - 1);
      ++result_.inputs.back().dumps;
      if (stacks_) stacks_->add(std::move(dump));  // the HTML report's stacks: the correlator keeps none
    }
  }

  report::AnalyzeResult& result_;
  // Files carry no GC counters, so every hold is followed by lock key; a dump without a
  // timestamp line is taken to be one second after the previous one.
  void add_lock_time(const model::ThreadDump& dump) {
    const auto t = analysis::parse_dump_timestamp(dump.timestamp);
    last_time_ = t ? *t : last_time_ + 1.0;
    lock_time_.add(dump, analysis::build_lock_graph(dump), last_time_, std::nullopt);
  }

  analysis::Correlator& correlator_;
  view::StackViews* stacks_;
  analysis::LockTime& lock_time_;
  double last_time_ = 0;
  parser::DumpParser parser_;
};

// Regular files are mapped, not read: the parser takes its lines straight from the page
// cache (reading copied every byte once more). A window at a time, so a big file does not
// pin its whole size in memory; the parser carries a line cut by a window's end.
bool read_mapped(int fd, std::size_t size, InputFeed& input, std::ostream& err) {
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

bool read_file(const std::string& path, std::vector<char>& buffer, report::AnalyzeResult& result,
               analysis::Correlator& correlator, view::StackViews* stacks, std::ostream& err,
               analysis::LockTime& lock_time) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    err << "lockwatch analyze: cannot read '" << path << "': " << std::strerror(errno) << "\n";
    return false;
  }
  struct stat st {};
  // Big regular files are mapped; small ones (most dump files) cost less to read than to map.
  const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > (4 << 20);
  if (regular) {
    InputFeed input(path, result, correlator, stacks, lock_time);
    if (read_mapped(fd, static_cast<std::size_t>(st.st_size), input, err)) {
      ::close(fd);
      return true;
    }
    result.inputs.pop_back();  // not mappable: read it instead (nothing was fed)
  }
  InputFeed input(path, result, correlator, stacks, lock_time);
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
std::string html_report(const std::vector<std::string>& paths, const report::AnalyzeResult& result,
                        const analysis::Correlator& correlator, const view::StackViews& stacks) {
  page::ReportPage report;
  report.title = paths.front() == "-" ? std::string("standard input") : display_name(paths.front());
  if (paths.size() > 1) report.title += " and " + std::to_string(paths.size() - 1) + " more";
  for (const auto& in : result.inputs) report.inputs.push_back({in.path, in.dumps});
  report.view = view::build_target_view(report.title, view::window_of(correlator), stacks, false);
  report.version = LOCKWATCH_VERSION;
  return page::render_report(report);
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
                    analysis::Correlator& correlator, std::ostream& err, view::StackViews* stacks,
                    analysis::LockTime* lock_time) {
  analysis::LockTime unused;
  InputFeed input(label, result, correlator, stacks, lock_time ? *lock_time : unused);
  std::vector<char> buffer(256 * 1024);
  while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0)
    input.feed({buffer.data(), static_cast<std::size_t>(in.gcount())});
  if (in.bad()) {
    err << "lockwatch analyze: error reading '" << label << "'\n";
    return false;
  }
  input.finish(err);
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
  analysis::LockTime lock_time;  // every input continues the same JVM's samples, as for the correlator
  std::optional<view::StackViews> stacks;
  if (options.format == Format::html) stacks.emplace();
  std::vector<char> buffer(1 << 20);  // shared by every file: one allocation, not one per file
  for (const auto& path : expand(options.paths)) {
    const bool ok = path == "-" ? analyze_stream(std::cin, "-", result, correlator, err, stacks ? &*stacks : nullptr, &lock_time)
                                : read_file(path, buffer, result, correlator, stacks ? &*stacks : nullptr, err, lock_time);
    if (!ok) return 2;
  }
  if (result.dump_input.empty()) {
    err << "lockwatch analyze: no thread dump in the input\n";
    return 1;
  }
  if (stacks) {
    out << html_report(options.paths, result, correlator, *stacks);
    return 0;
  }
  result.report = correlator.report();
  result.lock_time = lock_time.report();
  out << (options.format == Format::json ? report::render_json(result) : report::render_text(result));
  return 0;
}

}  // namespace lockwatch::app
