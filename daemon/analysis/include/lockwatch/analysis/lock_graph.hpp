// SPDX-License-Identifier: Apache-2.0
// Per dump: who waits for which lock, who holds it, and the deadlock cycles.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "lockwatch/model/thread_dump.hpp"

namespace lockwatch::analysis {

/// monitor: a synchronized block; park: a java.util.concurrent lock (ReentrantLock, a
/// read-write lock, any AQS lock); resource: no lock but something another thread hands
/// over - a pooled object behind a Condition, a latch, a future, a semaphore's permit.
/// A resource has no holder.
enum class LockKind : std::uint8_t { monitor, park, resource };
std::string_view to_string(LockKind kind) noexcept;

/// The lock class of a BLOCKED thread whose dump names no lock (no "waiting to lock" line).
inline constexpr std::string_view unnamed_lock_class = "(not printed)";

/// One thread waiting to acquire a lock, in one dump. Views point into the dump.
struct Wait {
  std::uint32_t thread = 0;              // index into ThreadDump::threads
  LockKind kind = LockKind::monitor;
  std::optional<std::uint64_t> address;  // valid within this dump only (GC moves objects)
  std::string_view lock_class;           // resource: see resource_class()
  std::string_view site;                 // where it waits: first frame that is not lock plumbing
  std::optional<std::uint32_t> holder;   // thread index of the owner, when this dump shows it
  std::optional<std::uint32_t> held;     // index into LockGraph::held of the lock the owner holds
};

/// A lock some thread holds: a monitor ("- locked", minus the one it waits on) or an
/// owned j.u.c. synchronizer (only listed in -l dumps).
struct Held {
  std::uint32_t thread = 0;
  LockKind kind = LockKind::monitor;
  std::uint64_t address = 0;
  std::string_view lock_class;
  std::string_view site;                 // monitor: the frame that took it; park: the holder's own site
  std::string_view busy_at;              // where the holder is now: its first non-plumbing frame
};

struct Cycle {
  std::vector<std::uint32_t> threads;    // in wait-for order
  std::vector<std::string_view> missing; // JVM-reported threads whose entries the dump lacks
  std::vector<LockKind> kinds;           // the lock each thread waits for, same order
  bool found_in_graph = false;
  bool reported_by_jvm = false;
};

struct LockGraph {
  std::vector<Wait> waits;
  std::vector<Held> held;
  std::vector<Cycle> deadlocks;
};

/// The waits of a graph grouped by lock key (kind, lock class, site, compared by content),
/// so that work per key is done once per key, not once per waiting thread (a dump may show
/// hundreds of threads waiting for one lock). Groups come in the order of their first wait,
/// the waits of a group in graph order.
struct WaitGroups {
  std::vector<std::uint32_t> waits;  // indices into LockGraph::waits, group after group
  std::vector<std::uint32_t> begin;  // group k holds waits[begin[k], begin[k + 1]); one more than groups
  std::size_t size() const noexcept { return begin.empty() ? 0 : begin.size() - 1; }
};
WaitGroups group_waits_by_key(const LockGraph& graph);

/// Builds the wait-for graph of one dump and finds its cycles; cross-checks them with
/// the JVM's own deadlock report (the JVM misses some j.u.c. cycles, and without -l
/// the graph misses j.u.c. owners).
LockGraph build_lock_graph(const model::ThreadDump& dump);

}  // namespace lockwatch::analysis
