// SPDX-License-Identifier: Apache-2.0
// The three pictures, drawn as SVG on the server: a chart of waiters per lock, the wait-for
// graph, the flame graph. Only presentation attributes and classes (the pages' policy
// forbids inline style); every text from a dump goes through text().
#include <algorithm>
#include <cmath>

#include "html_write.hpp"
#include "lockwatch/page/html.hpp"

namespace lockwatch::page::detail {
namespace {

// The chart.
constexpr double chart_w = 640, chart_h = 250, chart_l = 40, chart_r = 12, chart_t = 10, chart_b = 28;
// The graph: boxes in columns by hops to their chain's root.
constexpr double box_w = 260, box_h = 34, column_w = 296, row_h = 42, graph_l = 46, graph_t = 8;
constexpr double chars_per_box = 38;  // 11px monospace: ~6.6 px a character
// The flame graph.
constexpr double flame_w = 1200, frame_h = 17, char_w = 6.6;

std::string n(double v) { return number(v, 1); }

double nice_step(double range) {
  const double raw = std::max(range / 4, 1.0);
  const double magnitude = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * magnitude >= raw) return m * magnitude;
  return 10 * magnitude;
}

std::string x_tick(const view::TargetView& v, double t) {
  if (!v.unix_times) return "dump " + number(t + 1, 0);
  const double ago = v.last_time - t;
  return ago < 0.5 ? "now" : "-" + duration(ago);
}

void polyline(std::string& out, std::vector<double> xs, std::vector<std::uint32_t> ys, double y_of_zero, double scale,
              std::string_view cls, std::string_view stroke, const std::string& title) {
  if (xs.size() == 1) xs = {chart_l, chart_w - chart_r}, ys = {ys[0], ys[0]};  // one dump: a level, not an invisible point
  out += "<polyline class=\"";
  out += cls;
  out += "\"";
  if (!stroke.empty()) out.append(" stroke=\"").append(stroke).append("\"");
  out += " points=\"";
  for (std::size_t i = 0; i < xs.size(); ++i) out += n(xs[i]) + "," + n(y_of_zero - ys[i] * scale) + " ";
  out += "\"><title>" + title + "</title></polyline>\n";
}

}  // namespace

void chart_svg(std::string& out, const view::TargetView& v) {
  const auto& s = v.series;
  if (s.times.empty()) {
    out += "<p class=\"empty\">no dump yet</p>\n";
    return;
  }
  std::uint32_t top = 1;
  for (auto c : s.contending) top = std::max(top, c);
  for (const auto& l : s.locks)
    for (auto w : l.waiters) top = std::max(top, w);
  const double step = nice_step(top), y_max = std::ceil(top / step) * step;
  const double plot_w = chart_w - chart_l - chart_r, plot_h = chart_h - chart_t - chart_b, zero = chart_t + plot_h;
  const double t0 = s.times.front(), t1 = s.times.back();
  std::vector<double> xs;
  for (std::size_t i = 0; i < s.times.size(); ++i)
    xs.push_back(chart_l + (t1 > t0 ? (s.times[i] - t0) / (t1 - t0) * plot_w : plot_w / 2));
  out += "<svg class=\"chart\" role=\"img\" width=\"" + n(chart_w) + "\" height=\"" + n(chart_h) + "\" viewBox=\"0 0 " +
         n(chart_w) + " " + n(chart_h) + "\" aria-label=\"waiters per lock over time\">\n";
  for (double y = 0; y <= y_max + 1e-9; y += step) {
    const double py = zero - y / y_max * plot_h;
    out += "<line class=\"gridline\" x1=\"" + n(chart_l) + "\" x2=\"" + n(chart_w - chart_r) + "\" y1=\"" + n(py) + "\" y2=\"" + n(py) + "\"/>";
    out += "<text class=\"tick\" x=\"" + n(chart_l - 6) + "\" y=\"" + n(py + 4) + "\" text-anchor=\"end\">" + number(y, 0) + "</text>\n";
  }
  std::string last_tick;
  for (int k = 0; k <= 4; ++k) {
    double t = t1 > t0 ? t0 + (t1 - t0) * k / 4 : t0;
    if (!v.unix_times) t = std::round(t);  // dumps are numbered: a tick on a dump, and each once
    const auto label = x_tick(v, t);
    if (label == last_tick) continue;
    last_tick = label;
    const double px = chart_l + (t1 > t0 ? (t - t0) / (t1 - t0) * plot_w : plot_w / 2);
    const char* anchor = px < chart_l + 20 ? "start" : px > chart_w - chart_r - 20 ? "end" : "middle";
    out += "<text class=\"tick\" x=\"" + n(px) + "\" y=\"" + n(chart_h - 8) + "\" text-anchor=\"" + anchor + "\">" +
           text(label) + "</text>\n";
  }
  out += "<line class=\"axis\" x1=\"" + n(chart_l) + "\" x2=\"" + n(chart_w - chart_r) + "\" y1=\"" + n(zero) + "\" y2=\"" + n(zero) + "\"/>\n";
  const double scale = plot_h / y_max;
  polyline(out, xs, s.contending, zero, scale, "series all", "", "every thread waiting for a lock");
  for (std::size_t i = s.locks.size(); i-- > 0;)  // the first lock drawn last, on top
    polyline(out, xs, s.locks[i].waiters, zero, scale, "series", colour(i), text(lock_label(v.hot_locks[s.locks[i].lock].key)));
  out += "</svg>\n";
}

namespace {

double box_x(const view::GraphNode& node) { return graph_l + node.depth * column_w; }
double box_y(const view::GraphNode& node) { return graph_t + node.row * row_h; }

std::string node_class(const view::GraphNode& node) {
  std::string cls = "node";
  switch (node.kind) {
    case view::NodeKind::thread: cls += node.depth == 0 ? " root" : ""; break;
    case view::NodeKind::group: cls += " group"; break;
    case view::NodeKind::unknown_holder: cls += " unknown"; break;
    case view::NodeKind::more: cls += " more"; break;
  }
  return cls + (node.deadlocked ? " dead" : "");
}

// Two lines in the box; the tooltip has them whole.
std::pair<std::string, std::string> box_lines(const view::GraphNode& node, bool synchronizers_listed) {
  const bool owner_unlisted = node.lock_kind == analysis::LockKind::park && !synchronizers_listed;
  switch (node.kind) {
    case view::NodeKind::thread: {
      std::string first = node.name.empty() ? "(no name)" : "\"" + node.name + "\"";
      if (node.depth == 0 && !node.deadlocked) return {first, node.state + ", busy in " + node.site};
      return {first, node.state + " at " + node.site};
    }
    case view::NodeKind::group:
      return {std::to_string(node.threads) + " threads" + (node.name.empty() ? "" : " " + node.name), node.state + " at " + node.site};
    case view::NodeKind::unknown_holder:
      return {owner_unlisted ? "owner unknown (not a -l dump)" : "owner not in this dump", node.name};
    case view::NodeKind::more: return {"+" + std::to_string(node.threads) + " more threads", "not drawn: box limit"};
  }
  return {};
}

std::string tooltip(const view::GraphNode& node, const std::pair<std::string, std::string>& lines) {
  std::string tip = text(lines.first, 400) + "\n" + text(lines.second, 400);
  if (node.kind == view::NodeKind::thread && node.depth == 0 && !node.deadlocked) tip += "\nholds the lock its chain waits for, and waits for none";
  if (node.deadlocked) tip += "\nin a deadlock";
  for (const auto& name : node.names) tip += "\n  \"" + text(name, 120) + "\"";
  if (node.kind == view::NodeKind::group && node.threads > node.names.size()) tip += "\n  ...";
  return tip;
}

void graph_edge(std::string& out, const view::WaitGraph& g, const view::GraphEdge& e) {
  const auto& from = g.nodes[e.from];
  const auto& to = g.nodes[e.to];
  const double x1 = box_x(from), y1 = box_y(from) + box_h / 2, y2 = box_y(to) + box_h / 2;
  std::string d;
  if (e.deadlock) {  // both in the first column: an arc on its left
    const double x2 = box_x(to), bend = std::min(40.0, 14 + std::abs(y2 - y1) / 6);
    d = "M" + n(x1) + " " + n(y1) + " C" + n(x1 - bend) + " " + n(y1) + " " + n(x2 - bend) + " " + n(y2) + " " + n(x2 - 2) + " " + n(y2);
  } else {
    const double x2 = box_x(to) + box_w;
    d = "M" + n(x1) + " " + n(y1) + " C" + n(x1 - 20) + " " + n(y1) + " " + n(x2 + 20) + " " + n(y2) + " " + n(x2 + 2) + " " + n(y2);
  }
  out += "<path class=\"edge" + std::string(e.deadlock ? " dead" : "") + "\" d=\"" + d + "\" marker-end=\"url(#" +
         (e.deadlock ? "arrow-dead" : "arrow") + ")\"><title>waits for " + std::string(analysis::to_string(e.kind)) + " " +
         text(e.lock_class, 200) + "</title></path>\n";
}

}  // namespace

void graph_svg(std::string& out, const view::WaitGraph& g) {
  if (g.nodes.empty()) {
    out += "<p class=\"empty\">no thread waits for a lock in the newest dump</p>\n";
    return;
  }
  const double w = graph_l + g.depth * column_w + box_w + 10, h = graph_t + g.rows * row_h + 4;
  out += "<svg class=\"graph\" role=\"img\" width=\"" + n(w) + "\" height=\"" + n(h) + "\" viewBox=\"0 0 " + n(w) + " " + n(h) +
         "\" aria-label=\"wait-for graph\">\n<defs>"
         "<marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\">"
         "<path d=\"M0,0 L10,5 L0,10 z\" fill=\"#7b8494\"/></marker>"
         "<marker id=\"arrow-dead\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\">"
         "<path d=\"M0,0 L10,5 L0,10 z\" fill=\"#c62828\"/></marker></defs>\n";
  for (const auto& e : g.edges) graph_edge(out, g, e);
  for (const auto& node : g.nodes) {
    const auto lines = box_lines(node, g.synchronizers_listed);
    const auto chars = static_cast<std::size_t>(chars_per_box);
    out += "<g class=\"" + node_class(node) + "\" transform=\"translate(" + n(box_x(node)) + " " + n(box_y(node)) + ")\">";
    out += "<rect width=\"" + n(box_w) + "\" height=\"" + n(box_h) + "\" rx=\"4\"/>";
    out += "<text x=\"6\" y=\"14\">" + text(lines.first, chars) + "</text>";
    out += "<text class=\"sub\" x=\"6\" y=\"28\">" + text(lines.second, chars) + "</text>";
    out += "<title>" + tooltip(node, lines) + "</title></g>\n";
  }
  out += "</svg>\n";
}

namespace {

bool jdk_frame(std::string_view name) {
  for (std::string_view prefix : {"java.", "javax.", "jdk.", "sun.", "com.sun."})
    if (name.starts_with(prefix)) return true;
  return false;
}

// Warm colours from the frame's name, so a frame keeps its colour across refreshes; the
// JDK's own frames pale, so the application's code stands out.
std::string frame_fill(const view::FlameFrame& f) {
  if (f.depth == 0) return "#c9ced8";
  std::uint32_t hash = 2166136261u;
  for (char c : f.name) hash = (hash ^ static_cast<unsigned char>(c)) * 16777619u;
  if (jdk_frame(f.name)) return "hsl(" + std::to_string(40 + hash % 15) + ",35%," + std::to_string(76 + hash % 8) + "%)";
  return "hsl(" + std::to_string(hash % 50) + ",78%," + std::to_string(58 + (hash >> 8) % 12) + "%)";
}

}  // namespace

void flame_svg(std::string& out, const view::Flame& f) {
  if (f.total == 0 || f.frames.empty()) {
    out += "<p class=\"empty\">no thread waits for a lock in these dumps</p>\n";
    return;
  }
  const double h = (f.depth + 1) * frame_h + 2;
  out += "<svg class=\"flame\" role=\"img\" width=\"" + n(flame_w) + "\" height=\"" + n(h) + "\" viewBox=\"0 0 " + n(flame_w) + " " +
         n(h) + "\" aria-label=\"flame graph\">\n";
  const double total = static_cast<double>(f.total);
  for (const auto& frame : f.frames) {
    const double x = static_cast<double>(frame.offset) / total * flame_w, w = static_cast<double>(frame.value) / total * flame_w;
    const double y = h - (frame.depth + 1) * frame_h;
    const std::string name = frame.depth == 0 ? "all: " + std::to_string(f.total) + " waiting thread stacks" : frame.name;
    const std::string share = number(static_cast<double>(frame.value) * 100 / total, 1);
    out += "<g class=\"frame\"><rect x=\"" + n(x) + "\" y=\"" + n(y) + "\" width=\"" + number(std::max(w - 0.3, 0.2), 2) +
           "\" height=\"" + n(frame_h - 1) + "\" fill=\"" + frame_fill(frame) + "\"/>";
    if (w >= 28) {
      const auto fit = static_cast<std::size_t>((w - 6) / char_w);
      out += "<text x=\"" + n(x + 3) + "\" y=\"" + n(y + 12) + "\">" + text(name, fit) + "</text>";
    }
    out += "<title>" + text(name, 400) + "\n" + std::to_string(frame.value) + " stack(s), " + share + "%</title></g>\n";
  }
  out += "</svg>\n";
}

}  // namespace lockwatch::page::detail
