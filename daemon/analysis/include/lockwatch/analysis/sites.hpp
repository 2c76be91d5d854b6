// SPDX-License-Identifier: Apache-2.0
// Which frame is "the site": the code that waits or holds, not the JDK's lock machinery.
#pragma once

#include <cstddef>
#include <cstdint>
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
/// That frame's index (`from` when the whole stack is plumbing).
std::size_t site_index(const model::ThreadInfo& thread, std::size_t from) noexcept;

/// Frames of the JDK and platform (java., javax., jdk., sun., com.sun., jakarta., kotlin.).
bool is_jdk_frame(std::string_view method) noexcept;
/// The first frame that is neither JDK nor lock plumbing: where application or library
/// code is. The first non-plumbing frame when every frame is the JDK's.
std::string_view first_non_jdk_frame(const model::ThreadInfo& thread) noexcept;

/// What a thread parked on `blocker` waits for: a lock (ReentrantLock, a read-write lock,
/// any AQS lock), a resource another thread hands over (a pooled object through a
/// condition, a latch, a future, a handoff), or work (a pool's idle worker).
enum class ParkWait : std::uint8_t { lock, resource, idle };
/// Decided from the stack, not the blocker alone: a condition or handoff parked under an
/// executor's work loop (ThreadPoolExecutor.getTask, Tomcat's TaskQueue, ForkJoinPool's
/// awaitWork, a consumer's own run loop, ...) is idle; under other code it waits for a
/// resource (commons-pool2's borrowObject, a CountDownLatch.await of a request).
ParkWait classify_park(const model::ThreadInfo& thread, std::string_view blocker) noexcept;
/// The resource's class: the blocker's, or for a Condition (whose class says nothing) the
/// class whose method awaits it - "org.apache.commons.pool2.impl.LinkedBlockingDeque".
std::string_view resource_class(const model::ThreadInfo& thread, std::string_view blocker) noexcept;
/// A blocker that is no lock (see classify_park).
bool is_resource_blocker(std::string_view lock_class) noexcept;

/// True for park blockers that usually mean "idle" when nothing but the class is known:
/// conditions and handoffs (not latches, futures or semaphores). classify_park decides
/// better, from the stack.
bool is_idle_blocker(std::string_view lock_class) noexcept;

}  // namespace lockwatch::analysis
