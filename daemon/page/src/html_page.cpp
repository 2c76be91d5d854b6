// SPDX-License-Identifier: Apache-2.0
// The documents: the live page, the report file, an incident's files; and the escaping that
// every value from a JVM goes through.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <vector>

#include "html_write.hpp"
#include "lockwatch/model/text.hpp"
#include "lockwatch/page/html.hpp"

namespace lockwatch::page {
namespace {

using detail::number;
using detail::text;

// Characters that reorder or hide text around them: shown as escapes, so a thread name
// cannot make a frame or another name read differently.
bool invisible(char32_t cp) {
  return (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0xFEFF;
}

void escape_code_point(char32_t cp, std::string& out) {
  switch (cp) {
    case '&': out += "&amp;"; return;
    case '<': out += "&lt;"; return;
    case '>': out += "&gt;"; return;
    case '"': out += "&quot;"; return;
    case '\'': out += "&#39;"; return;
    case '\n': out += "\\n"; return;
    case '\r': out += "\\r"; return;
    case '\t': out += "\\t"; return;
    default: break;
  }
  if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || invisible(cp)) {
    char buf[12];
    std::snprintf(buf, sizeof buf, cp < 0x100 ? "\\x%02X" : "\\u%04X", static_cast<unsigned>(cp));
    out += buf;
    return;
  }
  model::append_utf8(cp, out);
}

}  // namespace

std::string escape(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  model::for_each_code_point(raw, [&out](char32_t cp) { escape_code_point(cp, out); });
  return out;
}

std::string url_component(std::string_view raw) {
  static constexpr std::string_view hex = "0123456789ABCDEF";
  std::string out;
  for (char c : raw) {
    const auto b = static_cast<unsigned char>(c);
    if (std::isalnum(b) != 0 || c == '-' || c == '.' || c == '_' || c == '~') {
      out += c;
    } else {
      out += '%';
      out += hex[b >> 4];
      out += hex[b & 15];
    }
  }
  return out;
}

namespace detail {

std::string text(std::string_view raw, std::size_t max_chars) {
  std::vector<char32_t> chars;
  model::for_each_code_point(raw, [&](char32_t cp) {
    if (chars.size() <= max_chars) chars.push_back(cp);
  });
  const bool cut = chars.size() > max_chars;
  if (cut) chars.resize(max_chars > 0 ? max_chars - 1 : 0);  // room for the mark
  std::string out;
  out.reserve(chars.size() + 8);
  for (const auto cp : chars) escape_code_point(cp, out);
  if (cut) out += "\u2026";
  return out;
}

std::string code(std::string_view raw, std::size_t max_chars) {
  const auto escaped = text(raw, max_chars);  // entities hold neither '.' nor '$'
  std::string out;
  out.reserve(escaped.size() + escaped.size() / 8);
  for (char c : escaped) {
    out += c;
    if (c == '.' || c == '$') out += "<wbr>";
  }
  return out;
}

std::string number(double value, int decimals) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s == "-0" ? "0" : s;
}

std::string bytes(std::uint64_t n) {
  const double v = static_cast<double>(n);
  if (n < 1024) return std::to_string(n) + " B";
  if (n < 1024 * 1024) return number(v / 1024, 1) + " KiB";
  return number(v / (1024 * 1024), 1) + " MiB";
}

std::string duration(double s) {
  if (s < 90) return number(s, s < 10 ? 1 : 0) + " s";
  if (s < 90 * 60) return number(s / 60, 1) + " min";
  return number(s / 3600, 1) + " h";
}

std::string utc(double unix_seconds) {
  const auto t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

std::string_view colour(std::size_t series) {
  // Okabe-Ito, distinguishable with the common colour-vision deficiencies.
  static constexpr std::string_view palette[] = {"#0072b2", "#d55e00", "#009e73", "#cc79a7",
                                                 "#e69f00", "#56b4e9", "#8c564b", "#6b6b6b"};
  return palette[series % std::size(palette)];
}

std::string lock_label(const analysis::LockKey& key) {
  return std::string(analysis::to_string(key.kind)) + " " + key.lock_class + " at " + (key.site.empty() ? "<no frames>" : key.site);
}

}  // namespace detail

namespace {

using detail::colour;

struct Doc {
  std::string title;
  bool live = true;
  std::string root;  // the path back to the daemon's `/`, relative: the page may sit behind a proxy's prefix
  unsigned refresh = 0;
  std::string subtitle;
};

void open_document(std::string& out, const Doc& doc) {
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  // First in <head>: a policy in <meta> applies only to what follows it.
  if (!doc.live) out += "<meta http-equiv=\"Content-Security-Policy\" content=\"" + report_csp() + "\">\n";  // ours: no '"' or '&' in it
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<meta name=\"referrer\" content=\"no-referrer\">\n";
  out += "<title>" + text(doc.title, 160) + "</title>\n";
  if (doc.live) {
    out += "<link rel=\"stylesheet\" href=\"" + doc.root + "assets/lockwatch.css\">\n";
    out += "<script src=\"" + doc.root + "assets/lockwatch.js\" defer></script>\n";
  } else {
    out += "<style>";
    out += stylesheet();
    out += "</style>\n";
  }
  out += "</head>\n<body";
  if (doc.live) out += " data-refresh=\"" + std::to_string(doc.refresh) + "\"";
  out += ">\n<header class=\"top\"><h1>lockwatch</h1><span class=\"sub\">" + text(doc.subtitle, 200) + "</span>";
  if (doc.live && doc.refresh > 0)
    out += "<span class=\"status\" id=\"refresh-status\"></span><button id=\"refresh-toggle\" type=\"button\">pause</button>";
  out += "</header>\n";
}

void close_document(std::string& out, const std::string& footer) {
  out += "<footer>" + footer + "</footer>\n</body>\n</html>\n";
}

std::string swatch(std::size_t series) {
  return "<svg class=\"swatch\" width=\"10\" height=\"10\" aria-hidden=\"true\"><rect width=\"10\" height=\"10\" rx=\"2\" fill=\"" +
         std::string(colour(series)) + "\"/></svg>";
}

std::string states_line(const std::map<model::ThreadState, std::uint32_t>& states) {
  std::string out;
  for (const auto& [state, count] : states) {
    const std::string name = state == model::ThreadState::none ? "no state" : std::string(model::to_string(state));
    out += (out.empty() ? "" : " \u00b7 ") + name + " <b>" + std::to_string(count) + "</b>";
  }
  return out.empty() ? "no Java thread states" : out;
}

// Virtual threads and the carriers they pin, in the newest dump; nothing for a dump that
// lists neither (Thread.print of a JVM without pinned carriers).
void virtual_facts(std::string& out, const view::TargetView& v) {
  if (v.virtual_now > 0)
    out += "<p class=\"facts\">virtual threads <b>" + std::to_string(v.virtual_now) + "</b> \u00b7 " + states_line(v.virtual_states_now) + "</p>\n";
  if (!v.lock_fields_now)
    out += "<p class=\"note\">The newest dump is <code>Thread.dump_to_file</code> output without thread states or lock "
           "fields (JDK 21-24): names and stacks only, so no waiter, holder or pinned carrier is known there.</p>\n";
  if (v.pinned_now == 0) return;
  out += "<p class=\"facts\">carriers pinned by a virtual thread <b>" + std::to_string(v.pinned_now) + "</b>:";
  for (std::size_t i = 0; i < v.pinned_carriers_now.size(); ++i) {
    const auto& p = v.pinned_carriers_now[i];
    out += std::string(i ? ";" : "") + " \"" + text(p.carrier, 60) + "\"";
    if (p.virtual_thread) out += " (#" + std::to_string(*p.virtual_thread) + ")";
    out += " at <code>" + detail::code(p.site, 120) + "</code>";
  }
  if (v.pinned_now > v.pinned_carriers_now.size()) out += " and " + std::to_string(v.pinned_now - v.pinned_carriers_now.size()) + " more";
  out += "</p>\n";
}

std::string holder_cell(const view::HotLock& l, bool synchronizers_listed) {
  if (l.holders.empty()) {
    if (l.key.kind == analysis::LockKind::park && !synchronizers_listed)
      return "<span class=\"note\">owner unknown: j.u.c. owners are printed only in -l dumps</span>";
    return "<span class=\"note\">not seen in any dump</span>";
  }
  std::string out;
  for (std::size_t i = 0; i < std::min<std::size_t>(l.holders.size(), 3); ++i) {
    const auto& h = l.holders[i];
    out += "<div><code>" + detail::code(h.site.empty() ? "<no frames>" : h.site, 160) + "</code>";
    if (!h.busy_at.empty() && h.busy_at != h.site) out += " busy in <code>" + detail::code(h.busy_at, 160) + "</code>";
    out += " <span class=\"note\">" + std::to_string(h.dumps) + " dump(s), by \"" + text(h.thread, 60) + "\"";
    if (h.threads > 1) out += " and " + std::to_string(h.threads - 1) + " other(s)";
    out += "</span></div>";
  }
  if (l.holders.size() > 3) out += "<div class=\"note\">+" + std::to_string(l.holders.size() - 3) + " more holder sites</div>";
  return out;
}

void hot_locks_table(std::string& out, const view::TargetView& v) {
  out += "<h3>Hot locks</h3>\n";
  if (v.hot_locks.empty()) {
    out += "<p class=\"empty\">no thread waited for a lock in " + std::string(v.dumps == 1 ? "this dump" : "these dumps") + "</p>\n";
    return;
  }
  out += "<table class=\"locks\"><thead><tr><th>kind</th><th>lock</th><th>waiting at</th><th class=\"num\">waiters now</th>"
         "<th class=\"num\">max</th><th>held at (holder activity)</th><th class=\"num\">holder found<br>same / near / no</th>"
         "</tr></thead><tbody>\n";
  for (const auto& l : v.hot_locks) {
    out += "<tr><td class=\"kind\">" + (l.series ? swatch(*l.series) : std::string()) + std::string(analysis::to_string(l.key.kind)) + "</td>";
    out += "<td><code>" + detail::code(l.key.lock_class, 160) + "</code></td>";
    out += "<td><code>" + detail::code(l.key.site.empty() ? "<no frames>" : l.key.site, 160) + "</code></td>";
    out += "<td class=\"num\"><b>" + std::to_string(l.waiters_now) + "</b></td><td class=\"num\">" + std::to_string(l.max_waiters) + "</td>";
    out += "<td>" + holder_cell(l, v.synchronizers_listed) + "</td>";
    out += "<td class=\"num\">" + std::to_string(l.resolution.same_dump) + " / " + std::to_string(l.resolution.correlated) + " / " +
           std::to_string(l.resolution.unresolved) +
           (l.resolution.inferred > 0 ? " (" + std::to_string(l.resolution.inferred) + " inferred)" : std::string()) + "</td></tr>\n";
  }
  out += "</tbody></table>\n";
  if (v.locks_in_window > v.hot_locks.size())
    out += "<p class=\"note\">+" + std::to_string(v.locks_in_window - v.hot_locks.size()) +
           " more lock(s) waited for in the window: all of them are in the JSON report</p>\n";
}

std::string window_text(const view::TargetView& v) {
  if (!v.unix_times) return std::to_string(v.dumps) + " dump(s)";
  return std::to_string(v.dumps) + " sample(s) over " + detail::duration(std::max(0.0, v.last_time - v.first_time));
}

// "com.example.Cache.get" -> "Cache.get" (n = 2): the legend has room for the short form only.
std::string_view last_parts(std::string_view name, int n) {
  auto at = name.size();
  for (int i = 0; i < n && at != std::string_view::npos && at > 0; ++i) at = name.rfind('.', at - 1);
  return at == std::string_view::npos ? name : name.substr(at + 1);
}

void chart_figure(std::string& out, const view::TargetView& v) {
  const auto& s = v.series;
  out += "<figure class=\"card-chart\"><figcaption>Waiters per lock over " + window_text(v);
  if (s.dumps > s.times.size()) out += "; a point is the largest count of " + number(static_cast<double>(s.dumps) / static_cast<double>(s.times.size()), 1) + " dumps";
  out += "; dashed: every waiting thread</figcaption>\n";
  detail::chart_svg(out, v);
  if (!s.locks.empty()) {
    out += "<p class=\"note legend\">";
    for (std::size_t i = 0; i < s.locks.size(); ++i) {
      const auto& key = v.hot_locks[s.locks[i].lock].key;
      out += swatch(i) + "<code>" + text(last_parts(key.lock_class, 1), 40) + "</code> at <code>" + text(last_parts(key.site, 2), 48) +
             "</code> &nbsp; ";
    }
    out += "</p>\n";
  }
  out += "</figure>\n";
}

void graph_figure(std::string& out, const view::TargetView& v) {
  const auto& g = v.graph;
  out += "<figure class=\"card-graph\"><figcaption>Who waits for whom in the newest dump: an arrow goes from waiters to "
         "the holder of their lock, down to the root of the chain (orange: holds, waits for nothing; red: deadlock). " +
         std::to_string(g.waiting_threads) + " waiting thread(s), " + std::to_string(g.chains) + " chain(s)";
  if (g.omitted_chains > 0)
    out += "; " + std::to_string(g.omitted_chains) + " smaller chain(s) of " + std::to_string(g.omitted_threads) + " thread(s) not drawn";
  out += "</figcaption>\n<div class=\"scroll\">";
  detail::graph_svg(out, g);
  out += "</div></figure>\n";
}

void flame_figure(std::string& out, const view::TargetView& v, bool live) {
  const auto& f = v.flame;
  out += "<h3>Where the waiting threads are</h3>\n<figure class=\"card-flame\"><figcaption>Flame graph of the stacks of the threads "
         "waiting for a lock (BLOCKED on a monitor or parked on a j.u.c. lock; idle pool threads left out) in the " +
         std::string(live ? "newest " : "") + std::to_string(f.dumps) + " dump(s): the width is the number of thread stacks, "
         "the root at the bottom; lambda, proxy and generated class numbers are taken out of frame names so equal code merges";
  if (f.omitted > 0) out += "; " + std::to_string(f.omitted) + " frame(s) too narrow to draw";
  if (f.dropped > 0) out += "; " + std::to_string(f.dropped) + " stack(s) past the memory bound not counted";
  out += "</figcaption>\n<div class=\"scroll\">";
  detail::flame_svg(out, f);
  out += "</div></figure>\n";
}

void stuck_table(std::string& out, const view::TargetView& v) {
  if (v.stuck.empty()) return;
  out += "<h3>Threads waiting on the same lock in consecutive dumps</h3>\n<table><thead><tr><th>thread</th><th>lock</th>"
         "<th class=\"num\">dumps in a row</th></tr></thead><tbody>\n";
  for (const auto& s : v.stuck)
    out += "<tr><td>\"" + text(s.thread, 80) + "\"</td><td><code>" + detail::code(detail::lock_label(s.lock), 240) + "</code></td><td class=\"num\">" +
           std::to_string(s.samples) + "</td></tr>\n";
  out += "</tbody></table>\n";
}

void deadlock_alert(std::string& out, const view::TargetView& v) {
  for (const auto& d : v.deadlocks_now) {
    out += "<div class=\"alert\"><b>Deadlock</b> in the newest dump:";
    for (std::size_t i = 0; i < d.threads.size(); ++i) {
      out += std::string(i ? " \u2192 " : " ") + "\"" + text(d.threads[i], 60) + "\"";
      if (i < d.kinds.size()) out += " (" + std::string(analysis::to_string(d.kinds[i])) + ")";
    }
    out += d.reported_by_jvm && d.found_in_graph ? " [JVM report + wait-for graph]" : d.reported_by_jvm ? " [JVM report]" : " [wait-for graph]";
    out += "</div>\n";
  }
}

void target_section(std::string& out, const view::TargetView& v, bool live, const std::string& subtitle) {
  out += "<section class=\"card target\" id=\"target\">\n<h2>" + text(v.name, 160) + " <small>" + subtitle + "</small></h2>\n";
  out += "<p class=\"facts\">" + window_text(v) + " \u00b7 newest: <b>" + std::to_string(v.threads_now) + "</b> Java threads \u00b7 " +
         states_line(v.states_now) + " \u00b7 waiting for a lock <b>" + std::to_string(v.contending_now) + "</b>";
  if (!v.deadlocks_now.empty()) out += " <span class=\"badge dead\">" + std::to_string(v.deadlocks_now.size()) + " deadlock(s)</span>";
  out += "</p>\n";
  virtual_facts(out, v);
  deadlock_alert(out, v);
  hot_locks_table(out, v);
  const bool parks = std::any_of(v.hot_locks.begin(), v.hot_locks.end(), [](const auto& l) { return l.key.kind == analysis::LockKind::park; });
  if (parks && !v.synchronizers_listed)
    out += "<p class=\"note\">Owners of j.u.c. locks are printed only by <code>jstack -l</code> (config <code>locks</code>); these dumps have none.</p>\n";
  out += "<div class=\"grid\">\n";
  chart_figure(out, v);
  graph_figure(out, v);
  out += "</div>\n";
  flame_figure(out, v, live);
  stuck_table(out, v);
  out += "</section>\n";
}

std::string health_cell(const view::Health& h) {
  std::string out = h.up ? "<span class=\"badge up\">up</span>" : "<span class=\"badge down\">" + text(h.last_outcome, 40) + "</span>";
  if (h.deadlocked_now > 0) out += " <span class=\"badge dead\">deadlock</span>";
  if (!h.last_error.empty()) out += "<div class=\"note\">" + text(h.last_error, 200) + "</div>";
  return out;
}

void targets_section(std::string& out, const LivePage& page) {
  out += "<section class=\"card\" id=\"targets\">\n<h2>Targets <small>" + std::to_string(page.targets.size()) + " watched";
  if (!page.interval.empty()) out += " \u00b7 a sample every " + text(page.interval, 20);
  out += "</small></h2>\n";
  if (page.targets.empty()) {
    out += "<p class=\"empty\">no JVM found yet (discovery runs every few seconds; see /api/v1/targets)</p>\n</section>\n";
    return;
  }
  out += "<table><thead><tr><th>target</th><th>health</th><th class=\"num\">pid</th><th class=\"num\">threads</th>"
         "<th class=\"num\">BLOCKED</th><th class=\"num\">waiting for a lock</th><th>most waiters now</th><th class=\"num\">samples</th>"
         "<th class=\"num\">last sample</th></tr></thead><tbody>\n";
  for (const auto& h : page.targets) {
    const bool selected = page.selected && page.selected->name == h.target;
    out += selected ? "<tr class=\"sel\">" : "<tr>";
    out += "<td><a href=\"?target=" + escape(url_component(h.target)) + "\" title=\"" + text(h.cmdline, 300) + "\">" +
           text(h.target, 80) + "</a></td>";
    out += "<td>" + health_cell(h) + "</td><td class=\"num\">" + std::to_string(h.pid) + "</td>";
    out += "<td class=\"num\">" + std::to_string(h.threads_now) + "</td><td class=\"num\">" + std::to_string(h.blocked_now) + "</td>";
    out += "<td class=\"num\">" + std::to_string(h.contending_now) + "</td>";
    out += "<td>" + (h.top_waiters > 0 ? "<b>" + std::to_string(h.top_waiters) + "</b> on <code>" + detail::code(h.top_lock, 120) + "</code>" : std::string("-")) + "</td>";
    out += "<td class=\"num\">" + std::to_string(h.samples) + "</td><td class=\"num\">" +
           (h.last_sample > 0 ? detail::duration(std::max(0.0, page.now - h.last_sample)) + " ago" : std::string("never")) + "</td></tr>\n";
  }
  out += "</tbody></table>\n</section>\n";
}

void incidents_section(std::string& out, const LivePage& page) {
  out += "<section class=\"card\" id=\"incidents\">\n<h2>Incidents <small>" + std::to_string(page.incidents.size()) +
         " kept: the ring and a burst of dumps, written when BLOCKED threads spike</small></h2>\n";
  if (page.incidents.empty()) {
    out += "<p class=\"empty\">none yet</p>\n</section>\n";
    return;
  }
  out += "<table><thead><tr><th>incident</th><th class=\"num\">dumps</th><th class=\"num\">size</th><th>open</th></tr></thead><tbody>\n";
  for (const auto& i : page.incidents) {
    const auto base = "incidents/" + escape(url_component(i.name)) + "/";
    out += "<tr><td><code>" + text(i.name, 120) + "</code></td><td class=\"num\">" + std::to_string(i.dumps) + "</td><td class=\"num\">" +
           detail::bytes(i.bytes) + "</td><td><a href=\"" + base + "report.html\">report</a>";
    if (i.summary) out += " \u00b7 <a href=\"" + base + "summary.json\">summary.json</a>";
    out += " \u00b7 <a href=\"" + base + "\">dumps</a></td></tr>\n";
  }
  out += "</tbody></table>\n</section>\n";
}

std::string version_text(const std::string& version) { return "lockwatch " + text(version, 40); }

}  // namespace

std::string render_live(const LivePage& page) {
  std::string out;
  out.reserve(256 * 1024);
  const auto title = page.selected ? page.selected->name + " - lockwatch" : std::string("lockwatch");
  open_document(out, {title, true, "", page.refresh_seconds, "live view"});
  out += "<main>\n";
  targets_section(out, page);
  if (page.selected) target_section(out, *page.selected, true, "the ring: the newest dumps of this JVM");
  incidents_section(out, page);
  out += "</main>\n";
  close_document(out, version_text(page.version) + " \u00b7 page made " + detail::utc(page.now) +
                          " \u00b7 every file of this page comes from this daemon; nothing is loaded from elsewhere");
  return out;
}

std::string render_report(const ReportPage& page) {
  std::string out;
  out.reserve(256 * 1024);
  open_document(out, {page.title + " - lockwatch report", false, "", 0, "report of " + page.title});
  out += "<main>\n";
  target_section(out, page.view, false, "lockwatch analyze");
  out += "<section class=\"card\" id=\"inputs\">\n<h2>Inputs <small>read as one sequence, in this order</small></h2>\n<table>"
         "<thead><tr><th>file</th><th class=\"num\">dumps</th></tr></thead><tbody>\n";
  const std::size_t shown = std::min<std::size_t>(page.inputs.size(), 1000);
  for (std::size_t i = 0; i < shown; ++i)
    out += "<tr><td><code>" + text(page.inputs[i].path, 200) + "</code></td><td class=\"num\">" + std::to_string(page.inputs[i].dumps) + "</td></tr>\n";
  if (page.inputs.size() > shown) out += "<tr><td colspan=\"2\" class=\"note\">+" + std::to_string(page.inputs.size() - shown) + " more files</td></tr>\n";
  out += "</tbody></table>\n</section>\n</main>\n";
  close_document(out, version_text(page.version) + " \u00b7 a self-contained file: no script, nothing loaded from the network");
  return out;
}

std::string render_incident(const Incident& incident, const std::vector<std::string>& files) {
  std::string out;
  open_document(out, {incident.name + " - lockwatch incident", true, "../../", 0, "incident " + incident.name});
  out += "<main>\n<section class=\"card\">\n<h2>" + text(incident.name, 160) + " <small>" + std::to_string(incident.dumps) +
         " dump(s), " + detail::bytes(incident.bytes) + "</small></h2>\n<p><a href=\"report.html\">the report of this incident</a> \u00b7 "
         "<a href=\"../../\">back to the live view</a></p>\n<table><thead><tr><th>file</th></tr></thead><tbody>\n";
  for (const auto& f : files) out += "<tr><td><a href=\"" + escape(url_component(f)) + "\"><code>" + text(f, 80) + "</code></a></td></tr>\n";
  out += "</tbody></table>\n</section>\n</main>\n";
  close_document(out, "lockwatch");
  return out;
}

}  // namespace lockwatch::page
