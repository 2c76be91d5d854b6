// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

#include "lockwatch/model/canonical.hpp"
#include "lockwatch/report/analyze_report.hpp"
#include "lock_time_sections.hpp"

namespace lockwatch::report {
namespace {

using analysis::LockSummary;

constexpr std::size_t max_locks_shown = 10;
constexpr std::size_t max_holders_shown = 4;
constexpr std::size_t max_pools_shown = 8;

std::string quoted(std::string_view raw) { return '"' + model::printable(raw) + '"'; }

std::string states_line(const std::map<model::ThreadState, std::uint32_t>& states) {
  std::string out;
  for (const auto& [state, n] : states) {
    const std::string_view name = state == model::ThreadState::none ? "no state" : model::to_string(state);
    out.append(out.empty() ? "" : ", ").append(name).append(" ").append(std::to_string(n));
  }
  return out.empty() ? "no Java thread states" : out;
}

std::string resolution_line(const analysis::ResolutionCounts& r) {
  return "same dump " + std::to_string(r.same_dump) + ", neighbouring dump " + std::to_string(r.correlated) +
         ", unresolved " + std::to_string(r.unresolved) +
         (r.inferred > 0 ? ", inferred (no -l) " + std::to_string(r.inferred) : std::string());
}

void header(std::string& out, const AnalyzeResult& r) {
  std::size_t incomplete = 0, unknown = 0;
  for (const auto& d : r.report.dumps) incomplete += d.complete ? 0 : 1, unknown += d.unknown_lines;
  out += "lockwatch analyze: " + std::to_string(r.report.dumps.size()) + " dump(s) from " +
         std::to_string(r.inputs.size()) + " file(s)";
  if (incomplete > 0) out += ", " + std::to_string(incomplete) + " incomplete (parsed as far as they go)";
  if (unknown > 0) out += ", " + std::to_string(unknown) + " unrecognised line(s)";
  out += "\n\n";
}

void dumps_section(std::string& out, const AnalyzeResult& r) {
  out += "Thread states per dump\n";
  for (std::size_t i = 0; i < r.report.dumps.size(); ++i) {
    const auto& d = r.report.dumps[i];
    char lead[64];
    std::snprintf(lead, sizeof lead, "  %3zu  %5u threads  ", i + 1, d.threads);
    out += lead + states_line(d.states);
    if (d.virtual_threads > 0)
      out += "; " + std::to_string(d.virtual_threads) + " virtual: " + states_line(d.virtual_states);
    if (d.contending_threads > 0) out += "  (" + std::to_string(d.contending_threads) + " contending)";
    out += "  " + model::printable(r.inputs[r.dump_input[i]].path) + "\n";
  }
  out += "\n";
}

// Holders grouped by (site, busy at): a pool's threads take turns holding the same lock
// at the same code, and that code is the answer, not the thread names.
std::vector<std::string> holder_sites(const LockSummary& l) {
  struct Group {
    std::uint64_t dumps = 0;
    std::vector<std::string> threads;
  };
  std::map<std::pair<std::string, std::string>, Group> groups;
  for (const auto& h : l.holders) {
    auto& g = groups[{h.site, h.busy_at}];
    g.dumps += h.observations;
    g.threads.push_back(h.thread);
  }
  std::vector<std::pair<std::uint64_t, std::string>> lines;
  for (const auto& [where, g] : groups) {
    std::string line = model::printable(where.first.empty() ? "<no frames>" : where.first);
    if (!where.second.empty() && where.second != where.first) line += " (busy in " + model::printable(where.second) + ")";
    line += ", " + std::to_string(g.dumps) + " dump(s), by " + quoted(g.threads[0]);
    if (g.threads.size() > 1) line += " and " + std::to_string(g.threads.size() - 1) + " other thread(s)";
    lines.emplace_back(g.dumps, std::move(line));
  }
  std::stable_sort(lines.begin(), lines.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> out;
  for (auto& [n, line] : lines) out.push_back(std::move(line));
  return out;
}

std::string names_line(const std::vector<std::string>& names, std::uint32_t more) {
  std::string line;
  for (std::size_t i = 0; i < names.size(); ++i) line += (i ? ", " : "") + quoted(names[i]);
  if (more > 0) line += " and " + std::to_string(more) + " more";
  return line;
}

// Who blocks whom in the newest dump the lock was seen in: names, as the offline analyzers show.
void named_threads(std::string& out, const LockSummary& l) {
  if (l.per_dump.empty()) return;
  const auto& last = l.per_dump.back();
  out += "     last dump    " + std::to_string(last.dump + 1) + ": waiting " + names_line(last.waiters, last.more_waiters);
  if (!last.holders.empty()) out += "; held by " + names_line(last.holders, 0);
  out += "\n";
}

void lock_entry(std::string& out, std::size_t rank, const LockSummary& l) {
  out += "  " + std::to_string(rank) + ". " + std::string(analysis::to_string(l.key.kind)) + " " +
         model::printable(l.key.lock_class) + "\n";
  out += "     waiting at   " + model::printable(l.key.site.empty() ? "<no frames>" : l.key.site) + "\n";
  out += "     waiters      max " + std::to_string(l.max_waiters) + " per dump, " +
         std::to_string(l.wait_observations) + " observation(s) in " + std::to_string(l.dumps_seen) + " dump(s)\n";
  if (l.key.kind == analysis::LockKind::resource) {  // a pool, a latch, a future: nobody holds it
    named_threads(out, l);
    return;
  }
  // A monitor's holder prints the frame that took it; a j.u.c. lock's owner only shows
  // where it is now: its site is where the waiters wait when that is in its stack.
  const std::string label = l.key.kind == analysis::LockKind::park ? "     holder at    " : "     held at      ";
  const auto sites = holder_sites(l);
  for (std::size_t i = 0; i < std::min(sites.size(), max_holders_shown); ++i)
    out += (i == 0 ? label : std::string(label.size(), ' ')) + sites[i] + "\n";
  if (sites.empty()) out += label + "not seen in any dump\n";
  out += "     holder found " + resolution_line(l.resolution) + "\n";
  named_threads(out, l);
}

void locks_section(std::string& out, const AnalyzeResult& r) {
  out += "Contended locks and awaited resources (most waiting first)\n";
  if (r.report.locks.empty()) out += "  none: no thread waits to acquire a lock or for a resource\n";
  for (std::size_t i = 0; i < std::min(r.report.locks.size(), max_locks_shown); ++i)
    lock_entry(out, i + 1, r.report.locks[i]);
  if (r.report.locks.size() > max_locks_shown)
    out += "  ... " + std::to_string(r.report.locks.size() - max_locks_shown) + " more (see --format json)\n";
  out += "\n";
}

void deadlocks_section(std::string& out, const AnalyzeResult& r) {
  std::string body;
  for (std::size_t i = 0; i < r.report.dumps.size(); ++i)
    for (const auto& c : r.report.dumps[i].deadlocks) {
      body += "  dump " + std::to_string(i + 1) + ":";
      for (std::size_t k = 0; k < c.threads.size(); ++k)
        body += (k ? " -> " : " ") + quoted(c.threads[k]) + " (" +
                std::string(k < c.kinds.size() ? analysis::to_string(c.kinds[k]) : "?") + ")";
      body += c.reported_by_jvm && c.found_in_graph ? "  [JVM report + wait-for graph]\n"
              : c.reported_by_jvm                   ? "  [JVM report only]\n"
                                                    : "  [wait-for graph only; the JVM did not report it]\n";
    }
  out += "Deadlocks\n" + (body.empty() ? "  none\n" : body) + "\n";
}

std::string lock_name(const analysis::LockKey& k) {
  return model::printable(k.lock_class) + " at " + model::printable(k.site.empty() ? "<no frames>" : k.site) + " (" +
         std::string(analysis::to_string(k.kind)) + ")";
}

// Printed only when some dump has one: the holder of each lock waits for the next, and the
// last lock is the root, the one whose release unblocks the chain. A chain into a cycle has no
// root and is listed under Deadlocks already.
void chains_section(std::string& out, const AnalyzeResult& r) {
  std::string body;
  for (std::size_t i = 0; i < r.report.dumps.size(); ++i)
    for (const auto& c : r.report.dumps[i].chains) {
      if (c.deadlock) continue;
      body += "  dump " + std::to_string(i + 1) + ":";
      for (std::size_t k = 0; k < c.locks.size(); ++k) body += (k ? " -> " : " ") + lock_name(c.locks[k]);
      body += "\n      root " + lock_name(c.locks.back()) + ", " + std::to_string(c.waiters) + " thread(s) behind it\n";
    }
  if (!body.empty()) out += "Chains of waits (each lock's holder waits for the next)\n" + body + "\n";
}

void pools_section(std::string& out, const AnalyzeResult& r) {
  if (r.report.dumps.empty()) return;
  const auto& pools = r.report.dumps.back().pools;
  out += "Thread pools in the last dump\n";
  if (pools.empty()) out += "  none\n";
  for (std::size_t i = 0; i < std::min(pools.size(), max_pools_shown); ++i)
    out += "  " + model::printable(pools[i].pool) + "  " + std::to_string(pools[i].threads) +
           " thread(s): " + states_line(pools[i].states) + "\n";
  out += "\n";
}

std::string pinned_line(const analysis::PinnedCarrierSummary& p) {
  std::string line = "  " + quoted(p.carrier);
  if (p.virtual_thread) line += " carrying virtual thread #" + std::to_string(*p.virtual_thread);
  return line + ", waiting at " + model::printable(p.site.empty() ? "<no frames>" : p.site) + "\n";
}

// Only dumps that can show virtual threads or their carriers (JDK 21+) get the section.
void virtual_section(std::string& out, const AnalyzeResult& r) {
  if (r.report.dumps.empty()) return;
  const bool any = std::any_of(r.report.dumps.begin(), r.report.dumps.end(), [](const auto& d) {
    return d.virtual_threads > 0 || d.pinned_carrier_threads > 0;
  });
  if (!any) return;
  const auto& last = r.report.dumps.back();
  out += "Carriers pinned by a virtual thread in the last dump: " + std::to_string(last.pinned_carrier_threads) + "\n";
  for (const auto& p : last.pinned_carriers) out += pinned_line(p);
  if (last.pinned_carrier_threads > last.pinned_carriers.size())
    out += "  ... " + std::to_string(last.pinned_carrier_threads - last.pinned_carriers.size()) + " more\n";
  out += "\n";
}

void stuck_section(std::string& out, const AnalyzeResult& r) {
  if (r.report.stuck.empty()) return;
  out += "Threads waiting on the same lock in consecutive dumps\n";
  for (const auto& s : r.report.stuck)
    out += "  " + quoted(s.thread) + " on " + std::string(analysis::to_string(s.lock.kind)) + " " +
           model::printable(s.lock.lock_class) + " at " + model::printable(s.lock.site) + ": " +
           std::to_string(s.samples) + " dumps\n";
  out += "\n";
}

void resolution_section(std::string& out, const AnalyzeResult& r) {
  out += "Holder resolution: " + resolution_line(r.report.resolution) + "\n";
  const bool parks = std::any_of(r.report.locks.begin(), r.report.locks.end(),
                                 [](const auto& l) { return l.key.kind == analysis::LockKind::park; });
  const bool listed = std::any_of(r.report.dumps.begin(), r.report.dumps.end(),
                                  [](const auto& d) { return d.synchronizers_listed; });
  if (parks && !listed)
    out += "Note: owners of j.u.c. locks are printed only by `jstack -l`; these dumps have none.\n";
  std::string bare;
  for (std::size_t i = 0; i < r.report.dumps.size(); ++i)
    if (!r.report.dumps[i].lock_fields) bare += (bare.empty() ? "" : ", ") + std::to_string(i + 1);
  if (!bare.empty())
    out += "Note: dump(s) " + bare + " are Thread.dump_to_file output without thread states or lock fields (JDK 21-24): "
           "names and stacks only, so no waiter, holder or pinned carrier is known there.\n";
}

}  // namespace

std::string render_text(const AnalyzeResult& r) {
  std::string out;
  header(out, r);
  dumps_section(out, r);
  locks_section(out, r);
  deadlocks_section(out, r);
  chains_section(out, r);
  pools_section(out, r);
  virtual_section(out, r);
  stuck_section(out, r);
  resolution_section(out, r);
  if (r.lock_time) lock_time_text(out, *r.lock_time);
  return out;
}

}  // namespace lockwatch::report
