// SPDX-License-Identifier: Apache-2.0
#include "lock_time_sections.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

namespace lockwatch::report {
namespace {

constexpr std::size_t max_shown = 10;

std::string fixed(double v, int digits = 1) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string lock_name(const analysis::LockKey& k) {
  return std::string(analysis::to_string(k.kind)) + " " + k.lock_class + " at " + k.site;
}

// Activity per (kind, lock class): the report groups the closed set under its lock.
using ByLock = std::map<std::pair<analysis::LockKind, std::string>, std::map<analysis::HolderActivity, std::uint64_t>>;
ByLock by_lock(const analysis::LockTimeReport& r) {
  ByLock out;
  for (const auto& [k, n] : r.activity) out[{k.kind, k.lock_class}][k.activity] += n;
  return out;
}

void write_hold(JsonWriter& w, const analysis::HoldInProgress& h) {
  w.begin_object().key("kind").value(analysis::to_string(h.key.kind)).key("lock_class").value(h.key.lock_class);
  w.key("holder_site").value(h.key.site).key("thread").value(h.thread).key("seconds").value(h.seconds);
  w.key("samples").value(std::uint64_t{h.samples}).key("by_key").value(h.by_key).end_object();
}

}  // namespace

void write_lock_time_json(JsonWriter& w, const analysis::LockTimeReport& r) {
  w.begin_object().key("samples").value(std::uint64_t{r.samples}).key("weighted_seconds").value(r.weighted_seconds);
  w.key("gc_breaks").value(std::uint64_t{r.gc_breaks}).key("unknown_gc_epochs").value(std::uint64_t{r.unknown_epochs});
  w.key("locks").begin_array();
  for (const auto& l : r.locks) {
    w.begin_object().key("kind").value(analysis::to_string(l.key.kind)).key("lock_class").value(l.key.lock_class);
    w.key("site").value(l.key.site).key("wait_seconds").value(l.wait_seconds);
    w.key("samples").value(std::uint64_t{l.samples}).key("held_samples").value(std::uint64_t{l.held});
    w.key("occupancy").value(l.samples ? static_cast<double>(l.held) / l.samples : 0.0);
    w.key("longest_hold_seconds").value(l.longest_hold_s).key("longest_hold_by_key").value(l.longest_by_key).end_object();
  }
  w.end_array().key("longest_holds").begin_array();
  for (const auto& h : r.longest_holds) write_hold(w, h);
  w.end_array().key("holder_activity").begin_array();
  for (const auto& [lock, counts] : by_lock(r)) {
    w.begin_object().key("kind").value(analysis::to_string(lock.first)).key("lock_class").value(lock.second);
    for (auto a : analysis::holder_activities) {
      const auto it = counts.find(a);
      w.key(analysis::to_string(a)).value(it == counts.end() ? std::uint64_t{0} : it->second);
    }
    w.end_object();
  }
  w.end_array().end_object();
}

void lock_time_text(std::string& out, const analysis::LockTimeReport& r) {
  out += "Time lost waiting (estimated thread-seconds; each observation weighs the gap to the previous dump)\n";
  if (r.locks.empty()) out += "  none\n";
  for (std::size_t i = 0; i < std::min(r.locks.size(), max_shown); ++i) {
    const auto& l = r.locks[i];
    const double occ = l.samples ? 100.0 * l.held / l.samples : 0.0;
    out += "  " + fixed(l.wait_seconds) + " s  " + lock_name(l.key) + "  held in " + fixed(occ, 0) + "% of " +
           std::to_string(l.samples) + " dumps; longest hold seen >= " + fixed(l.longest_hold_s) + " s" +
           (l.longest_by_key ? " (followed by lock key: a GC or no GC counters between dumps)" : "") + "\n";
  }
  out += "\nLongest holds (same thread, same lock, same site in consecutive dumps; a lower bound)\n";
  if (r.longest_holds.empty()) out += "  none\n";
  for (std::size_t i = 0; i < std::min(r.longest_holds.size(), max_shown); ++i) {
    const auto& h = r.longest_holds[i];
    out += "  >= " + fixed(h.seconds) + " s  \"" + h.thread + "\" holds " + lock_name(h.key) + " (" +
           std::to_string(h.samples) + " dumps" + (h.by_key ? ", followed by lock key" : "") + ")\n";
  }
  out += "\nWhat the holders were doing (per held lock per dump)\n";
  const auto locks = by_lock(r);
  if (locks.empty()) out += "  none\n";
  for (const auto& [lock, counts] : locks) {
    out += "  " + std::string(analysis::to_string(lock.first)) + " " + lock.second + ":";
    for (const auto& [a, n] : counts) out += " " + std::string(analysis::to_string(a)) + " " + std::to_string(n);
    out += "\n";
  }
  out += "\n";
}

}  // namespace lockwatch::report
