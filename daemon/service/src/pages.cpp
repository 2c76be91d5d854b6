// SPDX-License-Identifier: Apache-2.0
#include "pages.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <fstream>
#include <iterator>
#include <set>

#include "lockwatch/parser/dump_parser.hpp"

namespace lockwatch::service::pages {
namespace fs = std::filesystem;
namespace {

// The text parsed for one view: the newest ten samples of a small JVM, the newest one alone
// of a huge one, so a page load costs about the same whatever the JVM (a parse of ~8 MiB).
constexpr std::uint64_t max_view_text = std::uint64_t{8} << 20;
constexpr std::size_t max_view_samples = 10;

std::uint32_t in_state(const std::map<model::ThreadState, std::uint32_t>& states, model::ThreadState state) {
  const auto it = states.find(state);
  return it == states.end() ? 0 : it->second;
}

std::size_t deadlocked_threads(const analysis::DumpSummary& s) {
  std::set<std::string_view> names;
  for (const auto& d : s.deadlocks) names.insert(d.threads.begin(), d.threads.end());
  return names.size();
}

// A directory entry the daemon may have written: "<UTC time>-<target>", "dump-0001.txt". The
// router already keeps '/' out of a segment; "." and ".." and hidden names are refused here.
bool plain_name(std::string_view name) {
  return !name.empty() && name.size() <= 255 && name.front() != '.' && name.find('/') == std::string_view::npos &&
         name.find('\0') == std::string_view::npos;
}

bool dump_file(std::string_view name) {
  if (!name.starts_with("dump-") || !name.ends_with(".txt") || name.size() <= 9) return false;
  const auto digits = name.substr(5, name.size() - 9);
  return std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Regular files only: a symbolic link planted in the incident directory is never followed.
bool regular(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(fs::symlink_status(path, ec)) && !ec;
}

std::optional<std::string> read_whole(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<std::string> files_of(const fs::path& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const auto name = e.path().filename().string();
    if (plain_name(name) && regular(e.path())) files.push_back(name);
  }
  std::sort(files.begin(), files.end());  // dump-0001.txt ...: zero-padded, so name order is time order
  return files;
}

page::Incident describe(const fs::path& dir, std::vector<std::string>* files) {
  page::Incident incident{dir.filename().string(), 0, 0, false};
  const auto names = files_of(dir);
  for (const auto& name : names) {
    std::error_code ec;
    incident.bytes += fs::file_size(dir / name, ec);
    incident.dumps += dump_file(name) ? 1u : 0u;
    incident.summary = incident.summary || name == "summary.json";
  }
  if (files) *files = names;
  return incident;
}

// The same view as `lockwatch analyze --format html DIR`: dumps numbered in file order.
http::Response incident_report(const fs::path& dir, const analysis::CorrelatorOptions& options, const std::string& version) {
  analysis::Correlator correlator(options);
  view::StackViews stacks;
  page::ReportPage report;
  report.title = dir.filename().string();
  std::size_t dumps = 0;
  for (const auto& name : files_of(dir)) {
    if (!dump_file(name)) continue;
    const auto text = read_whole(dir / name);
    if (!text) continue;
    auto parsed = parser::parse_dumps(*text);
    report.inputs.push_back({name, parsed.size()});
    for (auto& dump : parsed) {
      correlator.add(dump, static_cast<double>(dumps++));
      stacks.add(std::move(dump));
    }
  }
  if (dumps == 0) return http::error_response(404, "no thread dump in this incident");
  report.view = view::build_target_view(report.title, view::window_of(correlator), stacks, false);
  report.version = version;
  return html_response(page::render_report(report), page::report_csp(true));
}

}  // namespace

view::Health health(const Watched& t) {
  view::Health h;
  h.target = t.label;
  h.pid = t.jvm.id.pid;
  h.cmdline = t.jvm.cmdline;
  const auto& s = t.state;
  h.up = s.last_outcome() == sampling::Outcome::ok && s.ring().size() > 0;
  h.last_outcome = std::string(sampling::to_string(s.last_outcome()));
  h.last_error = s.last_error();
  h.samples = s.ring().size();
  h.ring_bytes = s.ring().bytes();
  const auto& c = s.correlator();
  if (c.size() == 0) return h;
  const auto newest = c.size() - 1;
  const auto& d = c.summary(newest);
  h.last_sample = d.time;
  h.threads_now = d.java_threads;
  // java_threads counts virtual threads too: BLOCKED ones count here as well.
  h.blocked_now = in_state(d.states, model::ThreadState::blocked) + in_state(d.virtual_states, model::ThreadState::blocked);
  h.contending_now = d.contending_threads;
  h.deadlocked_now = deadlocked_threads(d);
  for (const auto& [key, n] : c.tally(newest).waiters)
    if (n > h.top_waiters) h.top_waiters = n, h.top_lock = std::string(analysis::to_string(key.kind)) + " " + key.lock_class + " at " + key.site;
  return h;
}

Snapshot snapshot(const Watched& t) {
  Snapshot s{t.label, view::window_of(t.state.correlator()), {}};
  const auto& ring = t.state.ring();
  const auto list = ring.list();
  std::uint64_t bytes = 0;
  auto first = list.size();
  while (first > 0 && list.size() - first < max_view_samples &&
         (first == list.size() || bytes + list[first - 1].text_bytes <= max_view_text))
    bytes += list[--first].text_bytes;
  for (auto i = first; i < list.size(); ++i)
    if (auto text = ring.text(list[i].id)) s.texts.push_back(std::move(*text));
  return s;
}

view::TargetView target_view(Snapshot s) {
  view::StackViews stacks;
  for (const auto& text : s.texts)
    for (auto& dump : parser::parse_dumps(text)) stacks.add(std::move(dump));
  return view::build_target_view(std::move(s.label), s.window, stacks, true);
}

std::vector<page::Incident> incidents(const fs::path& directory, std::size_t max) {
  std::vector<fs::path> dirs;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(directory, ec))
    if (plain_name(e.path().filename().string()) && fs::is_directory(fs::symlink_status(e.path(), ec))) dirs.push_back(e.path());
  // Names start with the UTC time: the newest sort last. Only the shown ones are read.
  std::sort(dirs.begin(), dirs.end(), std::greater<>());
  if (dirs.size() > max) dirs.resize(max);
  std::vector<page::Incident> out;
  for (const auto& d : dirs) out.push_back(describe(d, nullptr));
  return out;
}

http::Response incident_response(const fs::path& directory, std::string_view name, std::string_view file,
                                 const analysis::CorrelatorOptions& options, const std::string& version) {
  std::error_code ec;
  const auto dir = directory / std::string(name);
  if (!plain_name(name) || !fs::is_directory(fs::symlink_status(dir, ec))) return http::error_response(404, "no such incident");
  if (file.empty()) {
    std::vector<std::string> files;
    const auto incident = describe(dir, &files);
    return html_response(page::render_incident(incident, files), page::live_csp());
  }
  if (file == "report.html") return incident_report(dir, options, version);
  const auto path = dir / std::string(file);
  if ((file != "summary.json" && !dump_file(file)) || !regular(path)) return http::error_response(404, "no such file in this incident");
  auto text = read_whole(path);
  if (!text) return http::error_response(404, "cannot read this file");
  // Dumps are the JVM's bytes: served as plain text (and nosniff), never as a page; and
  // should a browser render one anyway, the policy lets it run and load nothing.
  http::Response r{200, file == "summary.json" ? "application/json" : "text/plain; charset=utf-8", std::move(*text)};
  r.headers = {{"Content-Security-Policy", "default-src 'none'; sandbox"}};
  return r;
}

http::Response live_page(const std::vector<std::shared_ptr<Watched>>& targets, const http::Request& request,
                         const LiveSettings& settings) {
  page::LivePage p;
  p.now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  p.interval = settings.interval;
  p.version = settings.version;
  if (const auto it = request.query.find("refresh"); it != request.query.end()) {
    unsigned seconds = 0;
    const auto& v = it->second;
    if (std::from_chars(v.data(), v.data() + v.size(), seconds).ec != std::errc{} || seconds > 3600)
      return http::bad_request("refresh takes a number of seconds, 0 to 3600");
    p.refresh_seconds = seconds;
  }
  // The target asked for; else (or when it is gone) the one with most threads waiting now.
  const auto wanted = request.query.find("target");
  std::shared_ptr<Watched> chosen, asked;
  std::uint32_t most = 0;
  for (const auto& t : targets) {
    {
      std::lock_guard lock(t->mu);
      p.targets.push_back(health(*t));
    }
    const auto& h = p.targets.back();
    if (wanted != request.query.end() && h.target == wanted->second) asked = t;
    if (!chosen || h.contending_now > most) chosen = t, most = h.contending_now;
  }
  if (asked) chosen = asked;
  std::sort(p.targets.begin(), p.targets.end(), [](const auto& a, const auto& b) { return a.target < b.target; });
  if (chosen) {
    Snapshot s;
    {
      std::lock_guard lock(chosen->mu);
      s = snapshot(*chosen);
    }
    p.selected = target_view(std::move(s));  // the parsing, without holding the target
  }
  p.incidents = incidents(settings.incident_directory);
  return html_response(page::render_live(p), page::live_csp());
}

http::Response html_response(std::string html, std::string csp) {
  http::Response r{200, "text/html; charset=utf-8", std::move(html)};
  r.headers = {{"Content-Security-Policy", std::move(csp)}};
  return r;
}

}  // namespace lockwatch::service::pages
