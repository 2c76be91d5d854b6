// SPDX-License-Identifier: Apache-2.0
// Which frame is "the site": the code that waits or holds, not the JDK's lock machinery.
#pragma once

#include <string_view>

#include "lockwatch/model/thread_dump.hpp"

namespace lockwatch::analysis {

/// True for frames of the JDK's own waiting machinery (LockSupport, AQS, Unsafe.park,
/// Object.wait, j.u.c. latches/queues/pools, virtual-thread parking): never the answer
/// to "where does the application wait".
bool is_lock_plumbing(std::string_view method) noexcept;

/// The method of the first frame at or below `from` that is not plumbing; the frame
/// at `from` itself when the whole stack is plumbing; "" without frames.
std::string_view site_from(const model::ThreadInfo& thread, std::size_t from) noexcept;

/// True for park blockers that mean "idle", not contention: condition waits of idle
/// pools and queues, fork-join workers without work.
bool is_idle_blocker(std::string_view lock_class) noexcept;

}  // namespace lockwatch::analysis
