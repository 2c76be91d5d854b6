// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/analysis/stacks.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <tuple>
#include <unordered_map>

namespace lockwatch::analysis {
namespace {

// ';' separates frames in the format and ' ' the count, so neither may appear inside one.
// Methods rarely hold either: two memchr over the method cost less than a test of each
// byte, which took half the time of building a stack.
void append_method(std::string& out, std::string_view method) {
  const std::size_t at = out.size();
  out.append(method);
  if (method.empty() || (std::memchr(method.data(), ';', method.size()) == nullptr &&
                         std::memchr(method.data(), ' ', method.size()) == nullptr))
    return;
  for (std::size_t i = at; i < out.size(); ++i)
    if (out[i] == ';' || out[i] == ' ') out[i] = '_';
}

std::uint64_t word_at(const char* p) {
  std::uint64_t w;
  std::memcpy(&w, p, sizeof w);
  return w;
}

// A cheap hash of a frame's text - its length and its first and last 8 bytes (the line
// number is at the end): it only sorts threads into candidate groups, which are then
// compared exactly.
std::uint64_t frame_hash(std::string_view s) {
  constexpr std::uint64_t k = 0x9E3779B97F4A7C15ull;
  if (s.size() >= 8) return (word_at(s.data()) * k) ^ word_at(s.data() + s.size() - 8) ^ s.size();
  std::uint64_t w = 0;
  if (!s.empty()) std::memcpy(&w, s.data(), s.size());
  return (w * k) ^ s.size();
}

// Threads whose frames are the same text in the same state: one collapsed line, whose string
// is built once for all of them. Frames are a dump's bulk; building a string per thread
// and sorting a thousand of them cost more than the rest of a sample's analysis. Groups are
// by text, not by method, so no frame is cut to its method here; two groups that differ
// only in line numbers make the same line and are merged afterwards.
struct StackGroup {
  const model::ThreadInfo* thread = nullptr;  // the first thread of the group
  std::uint32_t threads = 0;
  std::uint32_t next = 0;  // the next group with the same hash, 0 for none (group 0 is never chained)
};

class StackGrouper {
 public:
  // Threads of one parsed body (ThreadInfo::body_id) have the same state and frames: the
  // first of them finds the group, the others only count. A dump has a few dozen bodies
  // for a thousand threads, so most threads cost one lookup of a number, not a hash of
  // every frame.
  void add(const model::ThreadInfo& t) {
    if (t.body_id == 0) return void(add_by_text(t));
    auto [it, fresh] = by_body_.try_emplace(t.body_id, 0);
    if (fresh) it->second = add_by_text(t);
    else ++groups_[it->second].threads;
  }

  // The groups as collapsed lines, in no particular order.
  std::vector<CollapsedStack> lines() const {
    std::vector<CollapsedStack> out;
    out.reserve(groups_.size());
    for (const auto& g : groups_) out.push_back({stack_of(*g.thread), g.thread->state, g.threads});
    return out;
  }

  const std::vector<StackGroup>& groups() const noexcept { return groups_; }
  /// body_id -> its group, for every body seen.
  const std::unordered_map<std::uint64_t, std::uint32_t>& bodies() const noexcept { return by_body_; }

  static std::string stack_of(const model::ThreadInfo& t) {
    std::string out;
    std::size_t bytes = t.frames.size();
    for (const auto& f : t.frames) bytes += f.text.size();
    out.reserve(bytes);  // the methods are shorter than the frames
    for (auto it = t.frames.rbegin(); it != t.frames.rend(); ++it) {
      if (!out.empty()) out.push_back(';');
      append_method(out, model::frame_method(it->text));
    }
    return out;
  }

 private:
  // The group of a thread by its state and frames' text; a new one when none matches.
  std::uint32_t add_by_text(const model::ThreadInfo& t) {
    std::uint64_t h = static_cast<std::uint64_t>(t.state) + 1;
    for (const auto& f : t.frames) h = std::rotl(h, 23) ^ frame_hash(f.text);
    h *= 0xBF58476D1CE4E5B9ull;
    const auto added = static_cast<std::uint32_t>(groups_.size());
    auto [it, fresh] = by_hash_.try_emplace(h, added);
    if (!fresh) {
      for (std::uint32_t g = it->second;; g = groups_[g].next) {
        if (same(*groups_[g].thread, t)) return ++groups_[g].threads, g;
        if (groups_[g].next == 0) {
          groups_[g].next = added;
          break;
        }
      }
    }
    groups_.push_back({&t, 1, 0});
    return added;
  }

  static bool same(const model::ThreadInfo& a, const model::ThreadInfo& b) {
    if (a.state != b.state || a.frames.size() != b.frames.size()) return false;
    for (std::size_t i = 0; i < a.frames.size(); ++i)
      if (a.frames[i].text != b.frames[i].text) return false;
    return true;
  }

  std::vector<StackGroup> groups_;
  std::unordered_map<std::uint64_t, std::uint32_t> by_hash_;  // hash -> first group with it
  std::unordered_map<std::uint64_t, std::uint32_t> by_body_;  // body_id -> its group
};

}  // namespace

std::vector<CollapsedStack> collapse(const model::ThreadDump& dump) {
  StackGrouper grouper;
  for (const auto& t : dump.threads)
    if (!t.frames.empty()) grouper.add(t);
  auto out = grouper.lines();
  std::sort(out.begin(), out.end(), [](const CollapsedStack& a, const CollapsedStack& b) {
    return std::tie(a.stack, a.state) < std::tie(b.stack, b.state);
  });
  std::vector<CollapsedStack> merged;
  for (auto& s : out) {
    if (!merged.empty() && merged.back().stack == s.stack && merged.back().state == s.state) merged.back().threads += s.threads;
    else merged.push_back(std::move(s));
  }
  return merged;
}

// A thread's stack in the table: the one its body had in the newest sample, else built.
StackHistory::Stack* StackHistory::stack_for(const model::ThreadInfo& t) {
  if (t.body_id != 0)
    if (auto it = last_bodies_.find(t.body_id); it != last_bodies_.end()) return it->second;
  return &*stacks_.try_emplace(StackGrouper::stack_of(t), 0).first;
}

// As collapse() groups, but each group's line is found in the table (by its body, when the
// newest sample had it) instead of being built, sorted and merged as a string.
void StackHistory::add(std::uint64_t sample_id, const model::ThreadDump& dump) {
  StackGrouper grouper;
  for (const auto& t : dump.threads)
    if (!t.frames.empty()) grouper.add(t);
  const auto& groups = grouper.groups();
  std::vector<Stack*> stack_of_group(groups.size());
  Sample sample{sample_id, {}};
  sample.entries.reserve(groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g) {
    stack_of_group[g] = stack_for(*groups[g].thread);
    sample.entries.push_back({stack_of_group[g], groups[g].thread->state, groups[g].threads});
  }
  // Groups that differ only in line numbers (or bodies of the same frames) share a line:
  // one entry each, as collapse() merges them.
  auto& entries = sample.entries;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.stack != b.stack ? std::less<const Stack*>{}(a.stack, b.stack) : a.state < b.state;
  });
  std::size_t kept = 0;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (kept > 0 && entries[kept - 1].stack == entries[i].stack && entries[kept - 1].state == entries[i].state)
      entries[kept - 1].threads += entries[i].threads;
    else entries[kept++] = entries[i];
  }
  entries.resize(kept);
  entries.shrink_to_fit();
  for (const auto& e : entries) ++e.stack->second;
  last_bodies_.clear();
  for (const auto& [body, g] : grouper.bodies()) last_bodies_.emplace(body, stack_of_group[g]);
  samples_.push_back(std::move(sample));
}

void StackHistory::forget_before(std::uint64_t first_kept) {
  while (!samples_.empty() && samples_.front().id < first_kept) {
    for (const auto& e : samples_.front().entries)
      if (--e.stack->second == 0) stacks_.erase(stacks_.find(e.stack->first));
    samples_.pop_front();
  }
  if (samples_.empty()) last_bodies_.clear();  // its stacks may be gone
}

std::string StackHistory::collapsed(std::string_view state, std::size_t last) const {
  const std::size_t first = last == 0 || last >= samples_.size() ? 0 : samples_.size() - last;
  std::map<std::string_view, std::uint64_t> counts;
  for (std::size_t i = first; i < samples_.size(); ++i)
    for (const auto& e : samples_[i].entries)
      if (state.empty() || model::to_string(e.state) == state) counts[e.stack->first] += e.threads;
  std::string out;
  for (const auto& [stack, n] : counts) out.append(stack).append(" ").append(std::to_string(n)).append("\n");
  return out;
}

}  // namespace lockwatch::analysis
