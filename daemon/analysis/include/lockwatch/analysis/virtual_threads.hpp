// SPDX-License-Identifier: Apache-2.0
// Virtual threads in one dump: how many per state, and the carriers they pin.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "lockwatch/model/thread_dump.hpp"

namespace lockwatch::analysis {

/// A platform thread that carries a virtual thread and waits with it mounted: the virtual
/// thread could not unmount (JDK 21-23 inside `synchronized`, any JDK in a class initializer
/// or native frame), so the carrier is lost to every other virtual thread meanwhile.
struct PinnedCarrier {
  std::uint32_t carrier = 0;                      // index into ThreadDump::threads
  std::optional<std::uint64_t> virtual_thread;    // its #id / tid, when the dump names it
  std::optional<std::uint32_t> virtual_index;     // the virtual thread's entry (dump_to_file JSON only)
  std::uint32_t site_thread = 0;                  // whose frames say where it waits: the virtual thread's when listed
  std::size_t site_frame = 0;                     // the first frame of the carried stack in that thread
};

/// Pinned carriers, in dump order. Text dumps: a carrier prints "Carrying virtual thread #N"
/// and is waiting (a waiting state, a wait line, or the carried stack parked, sleeping or in
/// Object.wait). JSON dumps: a platform thread named as `carrier` by a virtual thread, where
/// either of them is BLOCKED, WAITING or TIMED_WAITING. JDK 21-24 JSON prints no states and
/// no carrier: nothing can be found there.
std::vector<PinnedCarrier> find_pinned_carriers(const model::ThreadDump& dump);

/// Virtual threads the dump lists, per state; threads without a state (JDK 21-24 JSON) are
/// counted under ThreadState::none.
std::map<model::ThreadState, std::uint32_t> virtual_thread_states(const model::ThreadDump& dump);

}  // namespace lockwatch::analysis
