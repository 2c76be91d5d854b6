// SPDX-License-Identifier: Apache-2.0
#include "collapsed.hpp"

namespace lockwatch::store::detail {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ')) s.remove_suffix(1);
  return s;
}

// "java.lang.Thread.sleep(java.base@17/Native Method)" -> "java.lang.Thread.sleep"; ';'
// separates frames in the format, so it must not appear inside one.
std::string method_of(std::string_view frame) {
  std::string m(frame.substr(0, frame.find('(')));
  for (char& c : m)
    if (c == ';' || c == ' ') c = '_';
  return m;
}

}  // namespace

std::optional<CollapsedThread> collapse_block(const std::vector<std::string_view>& lines) {
  if (lines.empty() || lines.front().empty() || lines.front()[0] != '"') return std::nullopt;
  constexpr std::string_view state_key = "java.lang.Thread.State: ";
  CollapsedThread out;
  std::vector<std::string> frames;
  for (auto raw : lines) {
    const auto line = trim(raw);
    if (line.starts_with(state_key)) out.state = std::string(line.substr(state_key.size(), line.find(' ', state_key.size()) - state_key.size()));
    if (line.starts_with("at ")) frames.push_back(method_of(line.substr(3)));
  }
  if (frames.empty()) return std::nullopt;
  for (auto it = frames.rbegin(); it != frames.rend(); ++it) out.stack.append(out.stack.empty() ? "" : ";").append(*it);
  return out;
}

}  // namespace lockwatch::store::detail
