// SPDX-License-Identifier: Apache-2.0
// The wait-for graph of one dump laid out as chains: who blocks whom, down to the root lock.
#include <algorithm>
#include <numeric>
#include <set>
#include <tuple>

#include "lockwatch/analysis/pools.hpp"
#include "lockwatch/analysis/sites.hpp"
#include "lockwatch/page/view.hpp"

namespace lockwatch::view {
namespace {

constexpr std::uint32_t none = 0xFFFF'FFFFu;
constexpr std::size_t names_in_tooltip = 8;

// Threads are entities 0..T-1; an owner that is not in the dump is an entity after them,
// one per lock, so its waiters still end in a root.
struct Forest {
  std::size_t threads = 0;
  std::vector<std::uint32_t> wait_of;                  // per thread: index into LockGraph::waits, or none
  std::vector<std::uint32_t> parent;                   // per entity: whom it waits for, or none
  std::vector<std::vector<std::uint32_t>> children;
  std::vector<const analysis::Wait*> unknown_lock;     // per unknown owner: one wait for it
  std::vector<std::int32_t> cycle;                     // per entity: its deadlock's index, or -1
  std::vector<std::uint64_t> subtree;                  // threads at or below an entity
};

using UnknownKey = std::tuple<analysis::LockKind, std::uint64_t, std::string_view, std::string_view>;

Forest link(const model::ThreadDump& dump, const analysis::LockGraph& g) {
  Forest f;
  f.threads = dump.threads.size();
  f.wait_of.assign(f.threads, none);
  f.parent.assign(f.threads, none);
  std::map<UnknownKey, std::uint32_t> unknown;
  for (std::uint32_t w = 0; w < g.waits.size(); ++w) {
    const auto& wait = g.waits[w];
    f.wait_of[wait.thread] = w;
    if (wait.holder) {
      f.parent[wait.thread] = *wait.holder;
      continue;
    }
    const UnknownKey key{wait.kind, wait.address.value_or(0), wait.lock_class, wait.address ? std::string_view{} : wait.site};
    auto [it, added] = unknown.try_emplace(key, static_cast<std::uint32_t>(f.threads + f.unknown_lock.size()));
    if (added) f.unknown_lock.push_back(&wait), f.parent.push_back(none);
    f.parent[wait.thread] = it->second;
  }
  f.cycle.assign(f.parent.size(), -1);
  for (std::size_t c = 0; c < g.deadlocks.size(); ++c)
    for (auto t : g.deadlocks[c].threads)
      if (g.deadlocks[c].found_in_graph) f.cycle[t] = static_cast<std::int32_t>(c);
  f.children.resize(f.parent.size());
  for (std::uint32_t e = 0; e < f.parent.size(); ++e)
    if (f.parent[e] != none && f.cycle[e] < 0) f.children[f.parent[e]].push_back(e);  // a cycle's edges are drawn apart
  return f;
}

// Threads at or below each entity, children first (an explicit stack: chains can be as long
// as the dump has threads). `seen` guards against a cycle the analysis did not report.
void count_subtrees(Forest& f, const std::vector<std::uint32_t>& roots) {
  f.subtree.assign(f.parent.size(), 0);
  std::vector<std::uint8_t> seen(f.parent.size(), 0);
  for (const auto root : roots) {
    std::vector<std::pair<std::uint32_t, std::size_t>> stack{{root, 0}};
    seen[root] = 1;
    while (!stack.empty()) {
      auto& [e, next] = stack.back();
      if (next < f.children[e].size()) {
        const auto child = f.children[e][next++];
        if (!seen[child]) seen[child] = 1, stack.emplace_back(child, 0);
        continue;
      }
      f.subtree[e] += e < f.threads ? 1 : 0;
      const auto done = e;
      stack.pop_back();
      if (!stack.empty()) f.subtree[stack.back().first] += f.subtree[done];
    }
  }
}

// What a chain starts from: a holder waiting for nothing, an unknown owner, or a whole cycle.
struct Unit {
  std::vector<std::uint32_t> members;
  std::uint64_t threads = 0;
};

std::vector<Unit> units_of(const Forest& f, const analysis::LockGraph& g) {
  std::vector<Unit> units;
  for (const auto& c : g.deadlocks)
    if (c.found_in_graph && !c.threads.empty()) units.push_back({{c.threads.begin(), c.threads.end()}, 0});
  for (std::uint32_t e = 0; e < f.parent.size(); ++e)
    if (f.parent[e] == none && f.cycle[e] < 0 && !f.children[e].empty()) units.push_back({{e}, 0});
  return units;
}

class Layout {
 public:
  Layout(const model::ThreadDump& dump, const analysis::LockGraph& g, const Forest& f, const Limits& limits, WaitGraph& out)
      : dump_(dump), g_(g), f_(f), limits_(limits), out_(out) {}

  bool room() const { return out_.nodes.size() < limits_.graph_nodes; }

  void unit(const Unit& u) {
    std::vector<std::size_t> nodes;
    for (const auto e : u.members) nodes.push_back(entity(e, 0));
    if (u.members.size() < 2 && f_.cycle[u.members[0]] < 0) return;
    for (std::size_t k = 0; k < u.members.size(); ++k)  // each waits for the next: the cycle
      edge(nodes[k], nodes[(k + 1) % nodes.size()], u.members[k], true);
  }

  std::uint32_t rows() const { return next_row_; }

 private:
  // A box for one thread or unknown owner, then its waiters to the right of it.
  std::size_t entity(std::uint32_t e, std::uint32_t depth) {
    const auto index = add_node(depth);
    fill(out_.nodes[index], e);
    place_children(index, e, depth);
    return index;
  }

  std::size_t add_node(std::uint32_t depth) {
    out_.nodes.emplace_back();
    out_.nodes.back().depth = depth;
    out_.depth = std::max(out_.depth, depth);
    return out_.nodes.size() - 1;
  }

  void fill(GraphNode& n, std::uint32_t e) const {
    if (e >= f_.threads) {
      n.kind = NodeKind::unknown_holder;
      n.name = std::string(f_.unknown_lock[e - f_.threads]->lock_class);
      n.lock_kind = f_.unknown_lock[e - f_.threads]->kind;
      n.threads = 0;
      return;
    }
    const auto& t = dump_.threads[e];
    n.name = std::string(t.name);
    n.state = std::string(model::to_string(t.state));
    n.site = std::string(f_.wait_of[e] != none ? g_.waits[f_.wait_of[e]].site : analysis::site_from(t, 0));
    n.deadlocked = deadlocked(e);
  }

  bool deadlocked(std::uint32_t thread) const {
    return std::any_of(g_.deadlocks.begin(), g_.deadlocks.end(), [&](const analysis::Cycle& c) {
      return std::find(c.threads.begin(), c.threads.end(), thread) != c.threads.end();
    });
  }

  // Waiters nobody waits for fold by (lock, site, state); the rest stay single, biggest first.
  struct Item {
    std::vector<std::uint32_t> threads;
    std::uint64_t size = 0;
  };
  std::vector<Item> items_of(std::uint32_t e) const {
    std::map<std::tuple<analysis::LockKind, std::string_view, std::string_view, model::ThreadState>, Item> leaves;
    std::vector<Item> items;
    for (const auto child : f_.children[e]) {
      if (!f_.children[child].empty()) {
        items.push_back({{child}, f_.subtree[child]});
        continue;
      }
      const auto& w = g_.waits[f_.wait_of[child]];
      auto& leaf = leaves[{w.kind, w.lock_class, w.site, dump_.threads[child].state}];
      leaf.threads.push_back(child), ++leaf.size;
    }
    for (auto& [key, item] : leaves) items.push_back(std::move(item));
    std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.size > b.size; });
    return items;
  }

  void place_children(std::size_t index, std::uint32_t e, std::uint32_t depth) {
    std::optional<double> first, last;
    std::uint64_t left_out = 0;
    const auto items = f_.children[e].empty() ? std::vector<Item>{} : items_of(e);
    for (const auto& item : items) {
      if (!room() || depth + 1 > limits_.graph_depth) {
        left_out += item.size;
        continue;
      }
      const auto child = item.threads.size() > 1 ? group(item, depth + 1) : entity(item.threads[0], depth + 1);
      edge(child, index, item.threads[0], false);
      if (!first) first = out_.nodes[child].row;
      last = out_.nodes[child].row;
    }
    if (left_out > 0) {
      const auto more = add_node(depth + 1);
      out_.nodes[more].kind = NodeKind::more;
      out_.nodes[more].threads = static_cast<std::uint32_t>(left_out);
      out_.nodes[more].row = next_row_++;
      edge(more, index, f_.children[e][0], false);
      if (!first) first = out_.nodes[more].row;
      last = out_.nodes[more].row;
    }
    out_.nodes[index].row = first ? (*first + *last) / 2 : next_row_++;
  }

  std::size_t group(const Item& item, std::uint32_t depth) {
    const auto index = add_node(depth);
    auto& n = out_.nodes[index];
    n.kind = NodeKind::group;
    n.threads = static_cast<std::uint32_t>(item.threads.size());
    const auto& first = dump_.threads[item.threads[0]];
    const auto pool = analysis::pool_of(first.name);
    const bool one_pool = pool && std::all_of(item.threads.begin(), item.threads.end(), [&](std::uint32_t t) {
      return analysis::pool_of(dump_.threads[t].name) == pool;
    });
    n.name = one_pool ? *pool : "";
    for (std::size_t i = 0; i < std::min(item.threads.size(), names_in_tooltip); ++i)
      n.names.emplace_back(dump_.threads[item.threads[i]].name);
    n.state = std::string(model::to_string(first.state));
    n.site = std::string(g_.waits[f_.wait_of[item.threads[0]]].site);
    n.row = next_row_++;
    return index;
  }

  // `waiter` is the thread whose wait the arrow stands for.
  void edge(std::size_t from, std::size_t to, std::uint32_t waiter, bool deadlock) {
    GraphEdge e;
    e.from = from, e.to = to;
    if (waiter < f_.threads && f_.wait_of[waiter] != none) {
      const auto& w = g_.waits[f_.wait_of[waiter]];
      e.kind = w.kind, e.lock_class = std::string(w.lock_class);
    }
    e.deadlock = deadlock;
    out_.edges.push_back(std::move(e));
  }

  const model::ThreadDump& dump_;
  const analysis::LockGraph& g_;
  const Forest& f_;
  const Limits& limits_;
  WaitGraph& out_;
  std::uint32_t next_row_ = 0;
};

}  // namespace

WaitGraph build_wait_graph(const model::ThreadDump& dump, const analysis::LockGraph& g, const Limits& limits) {
  WaitGraph out;
  out.waiting_threads = g.waits.size();
  out.deadlocks = g.deadlocks.size();
  out.synchronizers_listed = dump.synchronizers_listed;
  if (g.waits.empty() && g.deadlocks.empty()) return out;
  auto forest = link(dump, g);
  auto units = units_of(forest, g);
  std::vector<std::uint32_t> roots;
  for (const auto& u : units) roots.insert(roots.end(), u.members.begin(), u.members.end());
  count_subtrees(forest, roots);
  for (auto& u : units)
    for (const auto e : u.members) u.threads += forest.subtree[e];
  std::stable_sort(units.begin(), units.end(), [](const Unit& a, const Unit& b) { return a.threads > b.threads; });
  Layout layout(dump, g, forest, limits, out);
  for (const auto& u : units) {
    if (!layout.room()) {
      ++out.omitted_chains, out.omitted_threads += u.threads;
      continue;
    }
    layout.unit(u);
    ++out.chains;
  }
  out.rows = layout.rows();
  return out;
}

}  // namespace lockwatch::view
