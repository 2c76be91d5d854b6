// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/analysis/sites.hpp"

#include <array>

namespace lockwatch::analysis {
namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// All of j.u.c. is machinery from the application's point of view: the interesting
// frame is the caller of ReentrantLock.lock / CountDownLatch.await / Queue.take.
constexpr std::array<std::string_view, 10> plumbing_prefixes{
    "java.util.concurrent.",
    "jdk.internal.misc.Unsafe.",
    "sun.misc.Unsafe.",
    "java.lang.Object.wait",      // wait, wait0 (JDK 19+)
    "java.lang.Thread.sleep",     // sleep, sleep0, sleepNanos (JDK 21+)
    "java.lang.Thread.join",
    "java.lang.Thread.onSpinWait",
    "java.lang.VirtualThread.",   // park / parkNanos / yieldContinuation (JDK 21+)
    "jdk.internal.vm.Continuation.",
    "jdk.internal.misc.VirtualThreads.",
};

constexpr std::array<std::string_view, 5> idle_blockers{
    "java.util.concurrent.SynchronousQueue",
    "java.util.concurrent.LinkedTransferQueue",
    "java.util.concurrent.ForkJoinPool",
    "java.util.concurrent.Exchanger",
    "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionNode",
};

}  // namespace

bool is_lock_plumbing(std::string_view method) noexcept {
  for (auto prefix : plumbing_prefixes)
    if (starts_with(method, prefix)) return true;
  // JDK 21+: LockSupport.park of a virtual thread goes through JavaLangAccess, an
  // anonymous class of java.lang.System ("java.lang.System$1.parkVirtualThread").
  return starts_with(method, "java.lang.System$") && method.find(".parkVirtualThread") != std::string_view::npos;
}

std::string_view site_from(const model::ThreadInfo& thread, std::size_t from) noexcept {
  if (from >= thread.frames.size()) return {};
  for (std::size_t i = from; i < thread.frames.size(); ++i) {
    const auto method = model::frame_method(thread.frames[i].text);
    if (!is_lock_plumbing(method)) return method;
  }
  return model::frame_method(thread.frames[from].text);
}

bool is_idle_blocker(std::string_view lock_class) noexcept {
  // Condition waits (an idle pool's queue.take, a Condition.await) release the lock.
  if (lock_class.find("$ConditionObject") != std::string_view::npos) return true;
  for (auto prefix : idle_blockers)
    if (starts_with(lock_class, prefix)) return true;
  return false;
}

}  // namespace lockwatch::analysis
