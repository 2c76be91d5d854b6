// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/analysis/virtual_threads.hpp"

#include <algorithm>
#include <string_view>
#include <unordered_map>

namespace lockwatch::analysis {
namespace {

using model::ThreadInfo;
using model::ThreadState;

bool waiting_state(ThreadState s) noexcept {
  return s == ThreadState::blocked || s == ThreadState::waiting || s == ThreadState::timed_waiting;
}

bool has_wait_line(const ThreadInfo& t) noexcept {
  return std::any_of(t.locks.begin(), t.locks.end(), [](const model::LockRef& r) {
    return r.action == model::LockAction::waiting_to_lock || r.action == model::LockAction::parking ||
           r.action == model::LockAction::waiting_on || r.action == model::LockAction::waiting_to_relock;
  });
}

// The carried stack's top frame is where the JVM blocks a thread: a carrier whose mounted
// virtual thread sits there waits with it (the carrier itself prints no state line).
bool blocks_at(const ThreadInfo& t, std::size_t frame) noexcept {
  if (frame >= t.frames.size()) return false;
  const std::string_view m = model::frame_method(t.frames[frame].text);
  return m == "jdk.internal.misc.Unsafe.park" || m == "sun.misc.Unsafe.park" || m == "java.lang.Object.wait0" ||
         m == "java.lang.Object.wait" || m == "java.lang.Thread.sleep0" || m == "java.lang.Thread.sleepNanos0" ||
         m == "java.lang.Thread.sleep";
}

// Text dumps print no entry for the carried virtual thread: the carrier's own lines decide.
std::optional<PinnedCarrier> pinned_in_text(std::uint32_t i, const ThreadInfo& t) {
  if (!t.carrying_vthread) return std::nullopt;
  const std::size_t carried = t.mounted_frames_begin.value_or(0);
  if (!waiting_state(t.state) && !has_wait_line(t) && !blocks_at(t, carried)) return std::nullopt;
  return PinnedCarrier{i, t.carrying_vthread, std::nullopt, i, carried};
}

}  // namespace

std::vector<PinnedCarrier> find_pinned_carriers(const model::ThreadDump& dump) {
  // JSON: the virtual thread names its carrier by tid; index the platform threads by tid.
  std::unordered_map<std::uint64_t, std::uint32_t> carried_by;  // carrier tid -> virtual thread index
  for (std::uint32_t i = 0; i < dump.threads.size(); ++i)
    if (dump.threads[i].is_virtual && dump.threads[i].carrier) carried_by.emplace(*dump.threads[i].carrier, i);
  std::vector<PinnedCarrier> out;
  for (std::uint32_t i = 0; i < dump.threads.size(); ++i) {
    const ThreadInfo& t = dump.threads[i];
    if (t.is_virtual) continue;
    if (auto p = pinned_in_text(i, t)) {
      out.push_back(*p);
      continue;
    }
    const auto it = t.java_id ? carried_by.find(*t.java_id) : carried_by.end();
    if (it == carried_by.end()) continue;
    const ThreadInfo& v = dump.threads[it->second];
    if (waiting_state(t.state) || waiting_state(v.state)) out.push_back({i, v.java_id, it->second, it->second, 0});
  }
  return out;
}

std::map<model::ThreadState, std::uint32_t> virtual_thread_states(const model::ThreadDump& dump) {
  std::map<model::ThreadState, std::uint32_t> states;
  for (const auto& t : dump.threads)
    if (t.is_virtual) ++states[t.state];
  return states;
}

}  // namespace lockwatch::analysis
