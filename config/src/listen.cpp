// SPDX-License-Identifier: Apache-2.0
// HOST:PORT for the HTTP server, checked by hand so the config library needs no socket headers.
#include <algorithm>
#include <cctype>
#include <charconv>

#include "checks.hpp"

namespace lockwatch::config {
namespace {

constexpr std::string_view example = "like 127.0.0.1:9465 or [::1]:9465";

bool all_of(std::string_view s, int (*pred)(int)) {
  return std::all_of(s.begin(), s.end(), [pred](char c) { return pred(static_cast<unsigned char>(c)) != 0; });
}

bool is_ipv4(std::string_view s) {
  for (int part = 0; part < 4; ++part) {
    const auto dot = s.find('.');
    const auto digits = s.substr(0, dot);
    unsigned value = 0;
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (digits.empty() || digits.size() > 3 || ec != std::errc{} || ptr != digits.data() + digits.size() || value > 255)
      return false;
    if ((part == 3) != (dot == std::string_view::npos)) return false;
    s.remove_prefix(part == 3 ? s.size() : dot + 1);
  }
  return true;
}

// Groups in one side of a "::" (an IPv4 tail counts two), or -1 when malformed.
int ipv6_groups(std::string_view side, bool may_end_in_ipv4) {
  int groups = 0;
  while (!side.empty()) {
    const auto colon = side.find(':');
    const auto group = side.substr(0, colon);
    if (colon == std::string_view::npos && may_end_in_ipv4 && group.find('.') != std::string_view::npos)
      return is_ipv4(group) ? groups + 2 : -1;
    if (group.empty() || group.size() > 4 || !all_of(group, isxdigit)) return -1;
    ++groups;
    if (colon == std::string_view::npos) break;
    side.remove_prefix(colon + 1);
    if (side.empty()) return -1;  // a single trailing ':'
  }
  return groups;
}

bool is_ipv6(std::string_view s) {
  const auto gap = s.find("::");
  if (gap == std::string_view::npos) return ipv6_groups(s, true) == 8;
  if (s.find("::", gap + 1) != std::string_view::npos) return false;
  const int head = ipv6_groups(s.substr(0, gap), false);
  const int tail = ipv6_groups(s.substr(gap + 2), true);
  return head >= 0 && tail >= 0 && head + tail <= 7;
}

// RFC 1123: dot-separated labels of letters, digits and inner hyphens.
bool is_host_name(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  while (true) {
    const auto dot = s.find('.');
    const auto label = s.substr(0, dot);
    const auto ok_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-'; };
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-' ||
        !std::all_of(label.begin(), label.end(), ok_char))
      return false;
    if (dot == std::string_view::npos) return true;
    s.remove_prefix(dot + 1);
  }
}

std::optional<std::uint16_t> parse_port(std::string_view text) {
  unsigned value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || ptr != text.data() + text.size() || value > 65535)
    return std::nullopt;
  return static_cast<std::uint16_t>(value);
}

std::string host_problem(std::string_view host, bool bracketed) {
  if (bracketed) return is_ipv6(host) ? "" : "'" + std::string(host) + "' is not an IPv6 address";
  if (host.empty()) return "the host is missing (0.0.0.0 listens on every IPv4 interface)";
  if (host.find(':') != std::string_view::npos) return "an IPv6 address goes in brackets: [::1]:9465";
  if (all_of(host, [](int c) { return (std::isdigit(c) != 0 || c == '.') ? 1 : 0; }))
    return is_ipv4(host) ? "" : "'" + std::string(host) + "' is not an IPv4 address";
  return is_host_name(host) ? "" : "'" + std::string(host) + "' is not a valid host name";
}

struct Split {
  std::string_view host, port;
  bool bracketed = false;
  bool ok = false;
};

Split split_host_port(std::string_view text) {
  if (text.starts_with('[')) {
    const auto close = text.find(']');
    if (close == std::string_view::npos || text.substr(close + 1, 1) != ":") return {};
    return {text.substr(1, close - 1), text.substr(close + 2), true, true};
  }
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) return {};
  return {text.substr(0, colon), text.substr(colon + 1), false, true};
}

}  // namespace

namespace detail {

std::string listen_problem(std::string_view text) {
  const auto split = split_host_port(text);
  if (!split.ok) return "expected HOST:PORT " + std::string(example) + ", got '" + std::string(text) + "'";
  if (auto problem = host_problem(split.host, split.bracketed); !problem.empty()) return problem;
  if (!parse_port(split.port)) return "the port must be a number from 0 to 65535 (0: any free port), got '" + std::string(split.port) + "'";
  return "";
}

}  // namespace detail

std::optional<ListenAddress> parse_listen(std::string_view text) {
  if (!detail::listen_problem(text).empty()) return std::nullopt;
  const auto split = split_host_port(text);
  return ListenAddress{std::string(split.host), *parse_port(split.port)};
}

}  // namespace lockwatch::config
