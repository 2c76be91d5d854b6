// SPDX-License-Identifier: Apache-2.0
// What the pages show, as plain values: hot locks, waiters per lock over the window, the
// wait-for graph of the newest dump and the flame graph of the contending threads' stacks.
// Computed from the correlator and parsed dumps; no HTTP and no HTML here (html.hpp renders
// these), so the daemon's page and `lockwatch analyze --format html` show the same numbers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "lockwatch/analysis/correlator.hpp"
#include "lockwatch/analysis/lock_graph.hpp"
#include "lockwatch/model/thread_dump.hpp"

namespace lockwatch::view {

/// What a page may hold at most, whatever the JVM: these bound its size (docs/daemon.md).
struct Limits {
  std::size_t hot_locks = 10;     // rows of the hot-lock table
  std::size_t series = 8;         // of those, the locks drawn in the waiters chart
  std::size_t points = 600;       // chart points; more dumps are bucketed (the largest count of each bucket)
  std::size_t graph_nodes = 120;  // boxes of the wait-for graph
  std::uint32_t graph_depth = 16; // hops drawn along one chain
  std::size_t flame_frames = 2000;
  std::size_t stuck_threads = 10;
};

struct HolderSite {
  std::string site;           // where it took the lock (a j.u.c. lock: where its owner is)
  std::string busy_at;        // where the holder was while holding it, most often
  std::uint64_t dumps = 0;    // dumps that showed a holder here
  std::string thread;         // the holder seen most often
  std::size_t threads = 0;    // distinct holder threads at this site
};

struct HotLock {
  analysis::LockKey key;
  std::uint32_t waiters_now = 0;         // in the newest dump
  std::uint32_t max_waiters = 0;         // in any dump of the window
  std::uint64_t wait_observations = 0;
  std::uint32_t dumps_seen = 0;
  std::vector<HolderSite> holders;       // most dumps first
  analysis::ResolutionCounts resolution;
  std::optional<std::size_t> series;     // its line in the chart (also its colour)
};

struct LockSeries {
  std::size_t lock = 0;                  // index into TargetView::hot_locks
  std::vector<std::uint32_t> waiters;    // one per point
};

struct WaiterSeries {
  std::vector<double> times;             // per point: its dump's time (see TargetView::unix_times)
  std::vector<std::uint32_t> contending; // per point: every thread waiting for a lock
  std::vector<LockSeries> locks;
  std::size_t dumps = 0;                 // dumps behind the points (more than points when bucketed)
};

enum class NodeKind : std::uint8_t {
  thread,         // one thread
  group,          // waiters with the same lock, site and holder, folded into one box
  unknown_holder, // the lock's owner is not in the dump (a j.u.c. lock without -l, a virtual thread)
  more,           // what the budget left out below a node
};

struct GraphNode {
  NodeKind kind = NodeKind::thread;
  std::string name;              // a thread's name; a group's pool or first thread; unknown: the lock's class
  std::uint32_t threads = 1;     // threads this box stands for
  std::vector<std::string> names;  // a group's first names, for its tooltip
  std::string state;             // "BLOCKED", ... ("" for non-thread boxes)
  std::string site;              // a waiter: where it waits; a chain's root: where it is busy
  std::uint32_t depth = 0;       // hops to its chain's root (the root: 0)
  double row = 0;                // vertical place, in rows from the top
  bool deadlocked = false;
  analysis::LockKind lock_kind = analysis::LockKind::monitor;  // unknown_holder: the lock it stands for
};

struct GraphEdge {
  std::size_t from = 0;          // waits for a lock that `to` holds
  std::size_t to = 0;
  analysis::LockKind kind = analysis::LockKind::monitor;
  std::string lock_class;
  bool deadlock = false;
};

struct WaitGraph {
  std::vector<GraphNode> nodes;
  std::vector<GraphEdge> edges;
  std::uint32_t rows = 0;
  std::uint32_t depth = 0;          // deepest node drawn
  std::size_t chains = 0;           // roots drawn: a holder that waits for nothing, a deadlock, an unknown owner
  std::size_t omitted_chains = 0;   // roots past the box budget
  std::size_t omitted_threads = 0;  // their threads
  std::size_t deadlocks = 0;        // cycles in the dump
  std::size_t waiting_threads = 0;  // threads waiting for a lock in the dump
  bool synchronizers_listed = false;  // a -l dump: a j.u.c. lock's owner would be in it
};

/// The wait-for graph of one dump as boxes and arrows: each thread waits for at most one
/// lock, so it is a forest of chains ending at a root - a holder that waits for nothing,
/// an owner not in the dump, or a deadlock cycle (highlighted). Waiters nobody waits for
/// fold into one box per (holder, lock, site, state); at most `limits.graph_nodes` boxes.
WaitGraph build_wait_graph(const model::ThreadDump& dump, const analysis::LockGraph& graph, const Limits& limits = {});

/// A frame's method with what differs between runs of the same code taken out, so equal
/// code merges: hidden-class and lambda numbers ("Foo$$Lambda$123/0x0000000800c0b440.run"
/// -> "Foo$$Lambda.run"), proxy numbers ("$Proxy42" -> "$Proxy", "jdk.proxy3" -> "jdk.proxy"),
/// generated accessors ("GeneratedMethodAccessor17" -> "GeneratedMethodAccessor") and the
/// hashes of bytecode generators ("$$EnhancerBySpringCGLIB$$abc123" -> "$$EnhancerBySpringCGLIB").
std::string normalize_frame(std::string_view method);

struct FlameFrame {
  std::string name;
  std::uint64_t value = 0;   // thread stacks through this frame
  std::uint64_t offset = 0;  // stacks left of it under the same root: its x position
  std::uint32_t depth = 0;   // 0: the root, "all"
};

struct Flame {
  std::vector<FlameFrame> frames;  // preorder, siblings in name order; frames[0] is the root
  std::uint64_t total = 0;         // stacks
  std::size_t dumps = 0;
  std::size_t omitted = 0;         // frames too narrow to draw or past the budget
  std::uint32_t depth = 0;
  std::uint64_t dropped = 0;       // stacks not added: the tree reached its memory bound
};

/// Folds stacks, root first, into a tree of frames.
class FlameBuilder {
 public:
  /// The stacks of the threads that wait to acquire a lock in `dump` (the lock graph's
  /// waiters: BLOCKED on a monitor, or parked on a j.u.c. lock that is not an idle blocker).
  void add_dump(const model::ThreadDump& dump, const analysis::LockGraph& graph);
  /// Collapsed stacks, "root;...;leaf count" per line (the /collapsed endpoint's format).
  void add_collapsed(std::string_view text);
  void add_stack(const std::vector<std::string_view>& frames_root_first, std::uint64_t count);
  /// The frames at least half a pixel wide in a `width`-pixel graph, at most `max_frames`.
  Flame finish(std::size_t max_frames, double width = 1200) const;

 private:
  struct Node {
    std::map<std::string, std::uint32_t, std::less<>> children;
    std::uint64_t value = 0;
  };
  std::string_view normalized(std::string_view method);

  std::vector<Node> nodes_{Node{}};
  std::unordered_map<std::string, std::string> names_;  // method -> normalized, bounded
  std::size_t dumps_ = 0;
  std::uint64_t dropped_ = 0;
};

/// What the correlator holds about the window, copied while the target is locked.
struct Window {
  analysis::SequenceReport report;
  std::vector<std::map<analysis::LockKey, std::uint32_t>> waiters;  // per dump, oldest first
};
Window window_of(const analysis::Correlator& correlator);

/// The views that need stacks, which the correlator does not keep: fed the dumps of a
/// sequence in order, it folds the contending threads' stacks and keeps the newest dump.
class StackViews {
 public:
  void add(model::ThreadDump dump);
  std::size_t dumps() const noexcept { return dumps_; }
  Flame flame(const Limits& limits) const { return flame_.finish(limits.flame_frames); }
  /// The wait-for graph of the newest dump (empty without one).
  WaitGraph graph(const Limits& limits) const;

 private:
  FlameBuilder flame_;
  std::optional<model::ThreadDump> newest_;
  std::size_t dumps_ = 0;
};

struct TargetView {
  std::string name;
  bool unix_times = true;  // dump times are unix seconds; false: `analyze` numbers them 0, 1, ...
  std::size_t dumps = 0;
  double first_time = 0, last_time = 0;
  std::uint32_t threads_now = 0;
  std::map<model::ThreadState, std::uint32_t> states_now;    // platform threads
  std::uint32_t virtual_now = 0;                              // virtual threads the newest dump lists
  std::map<model::ThreadState, std::uint32_t> virtual_states_now;
  std::uint32_t pinned_now = 0;                               // carriers pinned by a virtual thread
  std::vector<analysis::PinnedCarrierSummary> pinned_carriers_now;  // the first ones, named
  bool lock_fields_now = true;                                // false: JDK 21-24 JSON, stacks only
  std::uint32_t contending_now = 0;
  std::vector<analysis::DeadlockSummary> deadlocks_now;
  bool synchronizers_listed = false;  // some dump is a -l dump: j.u.c. owners knowable
  std::vector<HotLock> hot_locks;     // waiting now first, then most observed
  std::size_t locks_in_window = 0;    // every lock key waited for in the window
  WaiterSeries series;
  WaitGraph graph;                    // of the newest dump
  Flame flame;                        // of the dumps StackViews was given
  std::vector<analysis::StuckThread> stuck;
};

TargetView build_target_view(std::string name, const Window& window, const StackViews& stacks, bool unix_times,
                             const Limits& limits = {});

/// One watched JVM in the live page's list.
struct Health {
  std::string target;
  int pid = 0;
  std::string cmdline;
  bool up = false;
  std::string last_outcome;
  std::string last_error;
  std::size_t samples = 0;
  std::uint64_t ring_bytes = 0;
  double last_sample = 0;             // unix seconds; 0: none yet
  std::uint32_t threads_now = 0;
  std::uint32_t blocked_now = 0;
  std::uint32_t contending_now = 0;
  std::size_t deadlocked_now = 0;     // threads in deadlocks in the newest dump
  std::string top_lock;               // the lock with most waiters now, "kind class at site"
  std::uint32_t top_waiters = 0;
};

}  // namespace lockwatch::view
