// SPDX-License-Identifier: Apache-2.0
#include "lock_line.hpp"

#include <array>
#include <utility>

#include "thread_header.hpp"

namespace lockwatch::parser::detail {
namespace {

using model::LockAction;

// Longest prefixes first: "waiting on the Class..." before "waiting on ".
constexpr std::array<std::pair<std::string_view, LockAction>, 7> prefixes{{
    {"waiting on the Class initialization monitor for ", LockAction::class_init_wait},  // JDK 17+
    {"waiting to re-lock in wait() ", LockAction::waiting_to_relock},
    {"waiting to lock ", LockAction::waiting_to_lock},
    {"parking to wait for ", LockAction::parking},  // printed with two spaces before '<'
    {"waiting on ", LockAction::waiting_on},
    {"eliminated ", LockAction::eliminated},
    {"locked ", LockAction::locked},
}};

// The first byte before the rest: most prefixes tried on a line fail there, without a call
// to memcmp.
bool starts_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && (p.empty() || s.front() == p.front()) && s.substr(0, p.size()) == p;
}

std::string_view skip_spaces(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  return s;
}

// "<0x0000000712345678>" (jstack), "<9fffffff59c52280>" (HP-UX), "<java.lang.Object@4dadf602>"
// (dump_to_file plain), "<no object reference available>", "<owner is scalar replaced>".
void parse_object(std::string_view inner, LockLine& out) {
  if (auto hex = parse_uint(inner.substr(0, 2) == "0x" ? inner.substr(2) : inner, true)) {
    out.address = hex;
    return;
  }
  const auto at = inner.rfind('@');
  if (at != std::string_view::npos && inner.find(' ') == std::string_view::npos) {
    out.address = parse_uint(inner.substr(at + 1), true);
    out.class_name = inner.substr(0, at);
  }
}

}  // namespace

std::optional<LockLine> parse_lock_line(std::string_view text) {
  if (text == "lock is eliminated") return LockLine{LockAction::eliminated, std::nullopt, {}};  // JDK 25 plain
  for (const auto& [prefix, action] : prefixes) {
    if (!starts_with(text, prefix)) continue;
    LockLine out{action, std::nullopt, {}};
    std::string_view rest = skip_spaces(text.substr(prefix.size()));
    if (action == LockAction::class_init_wait) {
      out.class_name = rest;
      return out;
    }
    if (rest.empty() || rest.front() != '<') return std::nullopt;
    const auto close = rest.find('>');
    if (close == std::string_view::npos) return std::nullopt;
    parse_object(rest.substr(1, close - 1), out);
    rest = skip_spaces(rest.substr(close + 1));
    if (rest.substr(0, 3) == "(a " && rest.back() == ')') out.class_name = rest.substr(3, rest.size() - 4);
    return out;
  }
  return std::nullopt;
}

std::optional<OwnedLine> parse_owned_line(std::string_view text) {
  if (text == "None") return OwnedLine{true, 0, {}};
  if (text.empty() || text.front() != '<') return std::nullopt;
  const auto close = text.find('>');
  if (close == std::string_view::npos) return std::nullopt;
  auto inner = text.substr(1, close - 1);
  auto address = parse_uint(inner.substr(0, 2) == "0x" ? inner.substr(2) : inner, true);
  if (!address) return std::nullopt;
  auto rest = skip_spaces(text.substr(close + 1));
  OwnedLine out{false, *address, {}};
  if (rest.substr(0, 3) == "(a " && rest.back() == ')') out.class_name = rest.substr(3, rest.size() - 4);
  return out;
}

}  // namespace lockwatch::parser::detail
