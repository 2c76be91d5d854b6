// SPDX-License-Identifier: Apache-2.0
// Pattern matching segment by segment; the route table is small and fixed at start-up.
#include "lockwatch/http/router.hpp"

#include <algorithm>
#include <exception>
#include <set>
#include <stdexcept>

namespace lockwatch::http {
namespace {

// "/a/b" -> {"a", "b"}; "/" -> {""}. The caller guarantees the leading '/'.
std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> parts;
  path.remove_prefix(1);
  for (;;) {
    const auto slash = path.find('/');
    parts.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) return parts;
    path.remove_prefix(slash + 1);
  }
}

bool is_capture(std::string_view segment) {
  return segment.size() > 2 && segment.front() == '{' && segment.back() == '}';
}

[[noreturn]] void bad_pattern(const std::string& pattern, const char* why) {
  throw std::invalid_argument("HTTP route pattern '" + pattern + "': " + why);
}

// Literal segments rank before captures, earlier positions first: "/t/list" beats "/t/{id}".
bool more_specific(const std::vector<bool>& a, const std::vector<bool>& b) {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
}

}  // namespace

void Router::add(std::string pattern, Handler handler) {
  if (pattern.empty() || pattern.front() != '/') bad_pattern(pattern, "must start with '/'");
  Route route{pattern, {}, std::move(handler)};
  std::set<std::string, std::less<>> names;
  for (auto part : split_path(pattern)) {
    const bool capture = is_capture(part);
    if (capture) part = part.substr(1, part.size() - 2);
    if (part.find_first_of("{}") != std::string_view::npos) bad_pattern(pattern, "'{name}' must be a whole segment");
    if (capture && !names.emplace(part).second) bad_pattern(pattern, "a capture name is used twice");
    route.segments.push_back({std::string(part), capture});
  }
  if (const auto* other = same_paths(route)) bad_pattern(pattern, ("the same paths as '" + other->pattern + "'").c_str());
  routes_.push_back(std::move(route));
}

// Two patterns that differ only in capture names would make the choice between them arbitrary.
const Router::Route* Router::same_paths(const Route& route) const {
  const auto same = [](const Segment& a, const Segment& b) { return a.capture == b.capture && (a.capture || a.text == b.text); };
  for (const auto& other : routes_)
    if (std::equal(other.segments.begin(), other.segments.end(), route.segments.begin(), route.segments.end(), same))
      return &other;
  return nullptr;
}

const Router::Route* Router::match(const std::vector<std::string_view>& parts, Params& params) const {
  const Route* best = nullptr;
  std::vector<bool> best_shape;
  for (const auto& route : routes_) {
    if (route.segments.size() != parts.size()) continue;
    std::vector<bool> shape;
    for (std::size_t i = 0; i < parts.size() && shape.size() == i; ++i) {
      const auto& segment = route.segments[i];
      if (segment.capture ? !parts[i].empty() : parts[i] == segment.text) shape.push_back(segment.capture);
    }
    if (shape.size() != parts.size() || (best && !more_specific(shape, best_shape))) continue;
    best = &route;
    best_shape = std::move(shape);
  }
  if (!best) return nullptr;
  for (std::size_t i = 0; i < parts.size(); ++i)
    if (best->segments[i].capture) params.emplace(best->segments[i].text, parts[i]);
  return best;
}

Response Router::handle(const Request& request) const {
  Params params;
  const Route* route = request.path.starts_with('/') ? match(split_path(request.path), params) : nullptr;
  if (!route) return not_found();
  const bool head = request.method == "HEAD";
  if (request.method != "GET" && !head) return method_not_allowed();
  Response response;
  try {
    response = route->handler(request, params);
  } catch (const std::exception& e) {
    // Kept short: a client needs the gist, not a whole exception text.
    return internal_error("internal error: " + std::string(std::string_view(e.what()).substr(0, 200)));
  } catch (...) {
    return internal_error("internal error");
  }
  if (head) response.body.clear();
  return response;
}

}  // namespace lockwatch::http
