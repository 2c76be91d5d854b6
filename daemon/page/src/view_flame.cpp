// SPDX-License-Identifier: Apache-2.0
// The flame graph's tree: stacks folded frame by frame, then cut to what can be drawn.
#include <algorithm>
#include <charconv>

#include "lockwatch/page/view.hpp"

namespace lockwatch::view {
namespace {

// Distinct call paths kept: a hostile or huge dump (every thread a different deep stack)
// must not grow the tree without bound; stacks past it are counted, not added.
constexpr std::size_t max_tree_nodes = 200'000;
// Distinct methods remembered normalized; the cache starts over past this.
constexpr std::size_t max_cached_names = 100'000;

}  // namespace

std::string_view FlameBuilder::normalized(std::string_view method) {
  if (names_.size() >= max_cached_names) names_.clear();
  auto [it, added] = names_.try_emplace(std::string(method));
  if (added) it->second = normalize_frame(method);
  return it->second;
}

void FlameBuilder::add_stack(const std::vector<std::string_view>& frames, std::uint64_t count) {
  if (frames.empty() || count == 0) return;
  if (nodes_.size() + frames.size() > max_tree_nodes) {
    dropped_ += count;
    return;
  }
  std::uint32_t at = 0;
  nodes_[0].value += count;
  for (const auto frame : frames) {
    const auto name = normalized(frame);
    auto& children = nodes_[at].children;
    auto it = children.find(name);
    if (it == children.end()) {
      it = children.emplace(std::string(name), static_cast<std::uint32_t>(nodes_.size())).first;
      nodes_.emplace_back();  // invalidates `children`: not used again below
    }
    at = it->second;
    nodes_[at].value += count;
  }
}

void FlameBuilder::add_dump(const model::ThreadDump& dump, const analysis::LockGraph& graph) {
  ++dumps_;
  std::vector<std::string_view> frames;
  for (const auto& wait : graph.waits) {
    const auto& thread = dump.threads[wait.thread];
    frames.clear();
    for (auto f = thread.frames.rbegin(); f != thread.frames.rend(); ++f) frames.push_back(model::frame_method(f->text));
    add_stack(frames, 1);
  }
}

void FlameBuilder::add_collapsed(std::string_view text) {
  ++dumps_;
  std::vector<std::string_view> frames;
  while (!text.empty()) {
    const auto eol = text.find('\n');
    auto line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
    const auto space = line.rfind(' ');
    if (space == std::string_view::npos) continue;
    std::uint64_t count = 0;
    const auto digits = line.substr(space + 1);
    if (std::from_chars(digits.data(), digits.data() + digits.size(), count).ec != std::errc{}) continue;
    frames.clear();
    for (auto stack = line.substr(0, space); !stack.empty();) {
      const auto semi = stack.find(';');
      frames.push_back(stack.substr(0, semi));
      stack = semi == std::string_view::npos ? std::string_view{} : stack.substr(semi + 1);
    }
    add_stack(frames, count);
  }
}

// Preorder over the tree, siblings in name order (equal code lands at the same place in
// every refresh), keeping frames of at least `min_value` stacks. A frame's offset counts
// every sibling before it, drawn or not, so what is drawn sits where it belongs.
Flame FlameBuilder::finish(std::size_t max_frames, double width) const {
  Flame out;
  out.total = nodes_[0].value;
  out.dumps = dumps_;
  out.dropped = dropped_;
  if (out.total == 0 || max_frames == 0) return out;
  // Half a pixel, and no more frames than the budget: the budget's smallest value is the cut.
  auto min_value = static_cast<std::uint64_t>(static_cast<double>(out.total) * 0.5 / width);
  std::vector<std::uint64_t> values;
  values.reserve(nodes_.size());
  for (const auto& n : nodes_) values.push_back(n.value);
  if (values.size() > max_frames) {
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(max_frames - 1), values.end(), std::greater<>());
    min_value = std::max(min_value, values[max_frames - 1]);
  }
  min_value = std::max<std::uint64_t>(min_value, 1);
  struct Visit {
    std::uint32_t node;
    std::string_view name;
    std::uint64_t offset;
    std::uint32_t depth;
  };
  std::vector<Visit> stack{{0, "all", 0, 0}};
  std::size_t kept = 0;
  while (!stack.empty()) {
    const auto v = stack.back();
    stack.pop_back();
    const auto& node = nodes_[v.node];
    if (node.value < min_value || kept >= max_frames) continue;
    ++kept;
    out.frames.push_back({std::string(v.name), node.value, v.offset, v.depth});
    out.depth = std::max(out.depth, v.depth);
    // Pushed in reverse so that the first name comes off the stack first.
    std::vector<Visit> children;
    std::uint64_t offset = v.offset;
    for (const auto& [name, child] : node.children) {
      children.push_back({child, name, offset, v.depth + 1});
      offset += nodes_[child].value;
    }
    stack.insert(stack.end(), children.rbegin(), children.rend());
  }
  out.omitted = nodes_.size() - kept;
  return out;
}

}  // namespace lockwatch::view
