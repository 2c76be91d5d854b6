// SPDX-License-Identifier: Apache-2.0
// Maps GET/HEAD paths like /api/v1/targets/{target} to handlers; standard library only.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "lockwatch/http/message.hpp"

namespace lockwatch::http {

/// Values captured by a pattern's {name} segments, percent-decoded.
using Params = std::map<std::string, std::string, std::less<>>;

class Router {
 public:
  using Handler = std::function<Response(const Request&, const Params&)>;

  /// `pattern` is '/'-separated; a segment "{name}" captures one non-empty path segment.
  /// A literal segment beats a capture at the same place, whatever the order of add().
  /// Throws std::invalid_argument on a malformed or duplicate pattern (a programming error).
  void add(std::string pattern, Handler handler);

  /// Never throws: unknown path -> 404, a method other than GET/HEAD -> 405, a handler's
  /// exception -> 500. HEAD runs the GET handler and drops the body.
  Response handle(const Request& request) const;

 private:
  struct Segment {
    std::string text;  // literal text, or the capture's name
    bool capture = false;
  };
  struct Route {
    std::string pattern;
    std::vector<Segment> segments;
    Handler handler;
  };

  const Route* same_paths(const Route& route) const;
  const Route* match(const std::vector<std::string_view>& parts, Params& params) const;

  std::vector<Route> routes_;
};

}  // namespace lockwatch::http
