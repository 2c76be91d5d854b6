// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/analysis/holder_inference.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "lockwatch/analysis/sites.hpp"

namespace lockwatch::analysis {
namespace {

// One lock object of the dump: its address, or (class, site) when none is printed.
using GroupKey = std::tuple<std::uint64_t, std::string_view, std::string_view>;

struct Group {
  std::vector<std::uint32_t> waits;
  std::vector<std::uint32_t> waiters;    // thread indices, sorted once the group is whole
  std::set<std::string_view> sites;      // where its waiters wait
  std::map<std::string_view, std::uint32_t> lock_line;  // per site: the first line its waiters call lock() at
};

// "Pool.borrow(Pool.java:86)" -> 86; none without a line ("Native Method", "Unknown Source").
std::optional<std::uint32_t> frame_line(std::string_view text) {
  const auto close = text.rfind(')');
  const auto colon = text.rfind(':', close);
  if (close == std::string_view::npos || colon == std::string_view::npos || colon + 1 >= close) return std::nullopt;
  std::uint32_t line = 0;
  for (auto c : text.substr(colon + 1, close - colon - 1)) {
    if (c < '0' || c > '9' || line > 100'000'000) return std::nullopt;
    line = line * 10 + static_cast<std::uint32_t>(c - '0');
  }
  return line;
}

// The waiter's own frame in its site: the line of the lock() call it waits in.
std::optional<std::uint32_t> waiting_line(const model::ThreadInfo& t, std::string_view site) {
  for (const auto& f : t.frames)
    if (model::frame_method(f.text) == site) return frame_line(f.text);
  return std::nullopt;
}

bool in_juc(std::string_view method) { return method.starts_with("java.util.concurrent."); }

// The frame of `t` in one of the waiters' sites, nearest the top.
std::optional<std::size_t> site_frame(const model::ThreadInfo& t, const std::set<std::string_view>& sites) {
  for (std::size_t i = 0; i < t.frames.size(); ++i)
    if (sites.count(model::frame_method(t.frames[i].text))) return i;
  return std::nullopt;
}

// What a thread inside the waiters' site can be. A candidate has gone past lock(): it runs
// code the site calls after the lock() line (the work under the lock), or sleeps or waits
// right in the site outside j.u.c. code. A thread before the lock() line is not the owner. A
// thread that may own it but the dump cannot tell - RUNNABLE in j.u.c. code under the site
// (just handed the lock inside acquire(), or releasing it), or running in the site's own frame
// past the lock() line - makes the dump ambiguous: then nothing is inferred.
enum class Role : std::uint8_t { none, candidate, ambiguous };

Role role_of(const model::ThreadInfo& t, std::size_t at, std::optional<std::uint32_t> lock_line) {
  const auto line = frame_line(t.frames[at].text);
  const bool before_lock = line && lock_line && *line < *lock_line;
  const std::size_t top = site_index(t, 0);
  if (top < at) return before_lock ? Role::none : Role::candidate;
  if (top > at) return Role::none;
  const bool in_lock_code = std::any_of(t.frames.begin(), t.frames.begin() + static_cast<std::ptrdiff_t>(at),
                                        [](const auto& f) { return in_juc(model::frame_method(f.text)); });
  if (in_lock_code) return t.state == model::ThreadState::runnable ? Role::ambiguous : Role::none;  // parked: a Condition
  if (at > 0) return before_lock ? Role::none : Role::candidate;  // sleeping or waiting in the site
  return before_lock ? Role::none : Role::ambiguous;
}

// The same view, not only the same text.
bool same_view(std::string_view a, std::string_view b) { return a.data() == b.data() && a.size() == b.size(); }

std::map<GroupKey, Group> unowned_parks(const model::ThreadDump& dump, const LockGraph& g) {
  std::map<GroupKey, Group> groups;
  // The waiters of one lock come in runs, many of one parsed body (ThreadInfo::body_id): past
  // the first of a body at a site, a waiter brings no new site and no new line.
  std::optional<GroupKey> last_key;
  Group* last_group = nullptr;
  std::uint64_t last_body = 0;
  std::string_view last_site;
  for (std::uint32_t i = 0; i < g.waits.size(); ++i) {
    const auto& w = g.waits[i];
    if (w.kind != LockKind::park || w.holder || w.site.empty()) continue;
    const GroupKey key = w.address ? GroupKey{*w.address, {}, {}} : GroupKey{0, w.lock_class, w.site};
    const bool same_group = last_key && *last_key == key;
    auto& group = same_group ? *last_group : groups[key];
    group.waits.push_back(i);
    group.waiters.push_back(w.thread);
    const auto body = dump.threads[w.thread].body_id;
    const bool repeat = same_group && body != 0 && body == last_body && same_view(w.site, last_site);
    last_key = key, last_group = &group, last_body = body, last_site = w.site;
    if (repeat) continue;
    group.sites.insert(w.site);
    if (const auto line = waiting_line(dump.threads[w.thread], w.site)) {
      auto [it, added] = group.lock_line.try_emplace(w.site, *line);
      if (!added) it->second = std::min(it->second, *line);
    }
  }
  for (auto& [key, group] : groups) {
    std::sort(group.waiters.begin(), group.waiters.end());
    group.waiters.erase(std::unique(group.waiters.begin(), group.waiters.end()), group.waiters.end());
  }
  return groups;
}

// Where a thread is in a group's sites and what it can be there: its frames and state
// alone decide, so threads of one parsed body (ThreadInfo::body_id) are looked at once per
// group - a dump of a thousand threads has a few dozen bodies.
struct Place {
  std::optional<std::size_t> at;  // its frame in one of the sites
  Role role = Role::none;
};

Place place_of(const model::ThreadInfo& t, const Group& group) {
  const auto at = site_frame(t, group.sites);
  if (!at) return {};
  const auto line = group.lock_line.find(model::frame_method(t.frames[*at].text));
  return {at, role_of(t, *at, line == group.lock_line.end() ? std::nullopt : std::optional(line->second))};
}

// A thread past lock() in one of the waiters' sites, with that frame's method and line.
struct Candidate {
  std::uint32_t thread = 0;
  std::size_t at = 0;  // its frame in the site
  std::string_view site;
  std::optional<std::uint32_t> line;
};

Candidate candidate(const model::ThreadDump& dump, std::uint32_t thread, std::size_t at) {
  const auto& frame = dump.threads[thread].frames[at].text;
  return {thread, at, model::frame_method(frame), frame_line(frame)};
}

// Of two threads past lock() in one site, the one at the later line (or a second one at the
// same line) has left the lock: its line is learned (SiteLines). Only where the waiters' lock()
// line and the candidates' lines are printed.
void learn_lines(const Group& group, const std::vector<Candidate>& candidates, SiteLines& learned) {
  std::map<std::string_view, std::vector<std::uint32_t>> by_site;
  for (const auto& c : candidates)
    if (c.line && group.lock_line.count(c.site)) by_site[c.site].push_back(*c.line);
  for (auto& [site, lines] : by_site) {
    std::sort(lines.begin(), lines.end());
    for (std::size_t i = 1; i < lines.size(); ++i) learned.learn(site, lines[i]);  // past the first: later, or the same again
  }
}

// The one candidate, with its frame in the site; none when there are none, several, or a
// thread that may own the lock unseen. With `learned`, every candidate is gathered to teach it.
std::optional<Candidate> sole_candidate(const model::ThreadDump& dump, const Group& group, SiteLines* learned) {
  // A waiter whose header already says "runnable" while its state line is still parked is being
  // woken: the lock was released a moment ago and may be free or just handed over - whoever is
  // in the site now may have left it (PrepareThenLock's settle() after unlock()).
  if (std::any_of(group.waiters.begin(), group.waiters.end(),
                  [&](std::uint32_t t) { return dump.threads[t].header_status.starts_with("runnable"); }))
    return std::nullopt;
  std::unordered_map<std::uint64_t, Place> by_body;
  std::vector<Candidate> candidates;
  bool ambiguous = false;
  auto next_waiter = group.waiters.begin();
  for (std::uint32_t t = 0; t < dump.threads.size(); ++t) {
    if (next_waiter != group.waiters.end() && *next_waiter == t) {
      ++next_waiter;
      continue;
    }
    const auto& thread = dump.threads[t];
    Place place;
    if (thread.body_id == 0) place = place_of(thread, group);
    else if (auto [it, fresh] = by_body.try_emplace(thread.body_id); !fresh) place = it->second;
    else place = it->second = place_of(thread, group);
    if (place.role == Role::none) continue;
    if (place.role == Role::ambiguous) ambiguous = true;
    else candidates.push_back(candidate(dump, t, *place.at));
    if (!learned && (ambiguous || candidates.size() > 1)) return std::nullopt;
  }
  if (learned == nullptr) return candidates.empty() ? std::nullopt : std::optional(candidates.front());
  const bool sole = !ambiguous && candidates.size() == 1 &&
                    !(candidates[0].line && learned->after_unlock(candidates[0].site, *candidates[0].line));
  learn_lines(group, candidates, *learned);
  return sole ? std::optional(candidates.front()) : std::nullopt;
}

}  // namespace

bool SiteLines::after_unlock(std::string_view site, std::uint32_t line) const {
  const auto it = lines_.find(site);
  return it != lines_.end() && std::binary_search(it->second.begin(), it->second.end(), line);
}

void SiteLines::learn(std::string_view site, std::uint32_t line) {
  if (after_unlock(site, line) || size_ >= max_lines) return;
  auto it = lines_.find(site);
  if (it == lines_.end()) {
    it = lines_.emplace(std::string(site), std::vector<std::uint32_t>{}).first;
    bytes_ += 96 + site.size();
  }
  it->second.insert(std::upper_bound(it->second.begin(), it->second.end(), line), line);
  ++size_;
  bytes_ += sizeof(line);
}

std::vector<InferredHolder> infer_juc_holders(const model::ThreadDump& dump, const LockGraph& g, SiteLines* learned) {
  std::vector<InferredHolder> out;
  if (dump.synchronizers_listed) return out;  // a -l dump names every owner: nothing to guess
  for (const auto& [key, group] : unowned_parks(dump, g)) {
    const auto holder = sole_candidate(dump, group, learned);
    if (!holder) continue;
    const auto& t = dump.threads[holder->thread];
    const auto site = model::frame_method(t.frames[holder->at].text);
    for (auto w : group.waits) out.push_back({w, holder->thread, site, site_from(t, 0)});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.wait < b.wait; });
  return out;
}

}  // namespace lockwatch::analysis
