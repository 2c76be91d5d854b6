// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/report/analyze_input.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <system_error>
#include <utility>

#include "lockwatch/analysis/lock_graph.hpp"

namespace lockwatch::report {

namespace fs = std::filesystem;

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

std::vector<std::string> expand_inputs(const std::vector<std::string>& paths) {
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

InputFeed::InputFeed(std::string label, AnalyzeResult& result, analysis::Correlator& correlator,
                     analysis::LockTime& lock_time, DumpSink keep)
    : result_(result), correlator_(correlator), lock_time_(lock_time), keep_(std::move(keep)) {
  result_.inputs.push_back({std::move(label), 0, {}});
}

void InputFeed::feed(std::string_view chunk) {
  parser_.feed(chunk);
  drain();
}

void InputFeed::finish(std::ostream& err) {
  parser_.finish();
  drain();
  auto& input = result_.inputs.back();
  input.stats = parser_.stats();
  if (input.dumps == 0) err << "lockwatch analyze: no thread dump found in '" << input.path << "'\n";
}

void InputFeed::drain() {
  for (auto& dump : parser_.take_dumps()) {
    const auto graph = analysis::build_lock_graph(dump);
    correlator_.add(dump, graph, static_cast<double>(result_.dump_input.size()));
    add_lock_time(dump, graph);
    result_.dump_input.push_back(result_.inputs.size() - 1);
    ++result_.inputs.back().dumps;
    if (keep_) keep_(std::move(dump));  // the correlator keeps no stacks: the HTML report's come from here
  }
}

// Files carry no GC counters, so every hold is followed by lock key; a dump without a
// timestamp line is taken to be one second after the previous one.
void InputFeed::add_lock_time(const model::ThreadDump& dump, const analysis::LockGraph& graph) {
  const auto t = analysis::parse_dump_timestamp(dump.timestamp);
  last_time_ = t ? *t : last_time_ + 1.0;
  lock_time_.add(dump, graph, last_time_, std::nullopt);
}

bool analyze_stream(std::istream& in, const std::string& label, AnalyzeResult& result,
                    analysis::Correlator& correlator, std::ostream& err, analysis::LockTime* lock_time,
                    DumpSink keep) {
  analysis::LockTime unused;
  InputFeed input(label, result, correlator, lock_time ? *lock_time : unused, std::move(keep));
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

}  // namespace lockwatch::report
