// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/analysis/sites.hpp"

#include <array>

namespace lockwatch::analysis {
namespace {

// The first byte before the rest: most prefixes tried on a line fail there, without a call
// to memcmp.
bool starts_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && (p.empty() || s.front() == p.front()) && s.substr(0, p.size()) == p;
}

// All of j.u.c. is machinery from the application's point of view: the interesting
// frame is the caller of ReentrantLock.lock / CountDownLatch.await / Queue.take. The same
// holds for a library's own copy of a j.u.c. structure (commons-pool2 ships its own
// LinkedBlockingDeque): its frames name the data structure, not the code that waits.
constexpr std::array<std::string_view, 11> plumbing_prefixes{
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
    "org.apache.commons.pool2.impl.LinkedBlockingDeque.",
};

// Park blockers that are no lock: conditions, latches, futures, handoffs and fork-join
// pools. A thread parked on one of them waits for work (idle) or for a resource another
// thread will hand it (a pooled connection, a result): which one is read from its stack.
constexpr std::array<std::string_view, 14> resource_blockers{
    "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject",
    "java.util.concurrent.locks.AbstractQueuedLongSynchronizer$ConditionObject",
    "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionNode",  // JDK 17+: the node, not the condition
    "java.util.concurrent.CountDownLatch$Sync",
    "java.util.concurrent.Semaphore$",
    "java.util.concurrent.FutureTask",
    "java.util.concurrent.CompletableFuture$Signaller",
    "java.util.concurrent.SynchronousQueue",
    "java.util.concurrent.LinkedTransferQueue",
    "java.util.concurrent.Exchanger",
    "java.util.concurrent.ForkJoinPool",
    "jsr166e.ForkJoinPool",                       // the pre-JDK 8 backport
    "scala.concurrent.forkjoin.ForkJoinPool",     // Scala 2.10-2.11
    "akka.dispatch.forkjoin.ForkJoinPool",        // Akka 2.3-2.4
};

// Frames of the loops where a pool's worker waits for its next task: a thread parked
// below one of them is idle, whatever it parks on.
constexpr std::array<std::string_view, 14> work_loop_frames{
    "java.util.concurrent.ThreadPoolExecutor.getTask",
    "java.util.concurrent.ScheduledThreadPoolExecutor$DelayedWorkQueue.take",
    "java.util.concurrent.ForkJoinPool.awaitWork",
    "java.util.concurrent.ForkJoinPool.runWorker",
    "java.util.concurrent.ForkJoinPool.scan",
    "jsr166e.ForkJoinPool.",
    "scala.concurrent.forkjoin.ForkJoinPool.",
    "akka.dispatch.forkjoin.ForkJoinPool.",
    "org.apache.tomcat.util.threads.TaskQueue.",          // Tomcat's executor queue (take, poll)
    "io.netty.util.concurrent.SingleThreadEventExecutor.takeTask",
    "io.netty.util.concurrent.GlobalEventExecutor.takeTask",
    "java.lang.ref.ReferenceQueue.remove",                // Finalizer, Cleaner threads (JDK 21+ park)
    "jdk.internal.ref.CleanerImpl.run",
    "org.eclipse.jetty.util.thread.QueuedThreadPool$Runner.idleJobPoll",
};

bool starts_with_any(std::string_view s, auto const& prefixes) {
  for (auto prefix : prefixes)
    if (starts_with(s, prefix)) return true;
  return false;
}

std::string_view class_of(std::string_view method) {
  const auto dot = method.rfind('.');
  return dot == std::string_view::npos ? method : method.substr(0, dot);
}

std::string_view method_name(std::string_view method) {
  const auto dot = method.rfind('.');
  return dot == std::string_view::npos ? method : method.substr(dot + 1);
}

bool generic_condition(std::string_view lock_class) {
  return lock_class.find("$ConditionObject") != std::string_view::npos ||
         lock_class.find("$ConditionNode") != std::string_view::npos;
}

}  // namespace

bool is_lock_plumbing(std::string_view method) noexcept {
  if (starts_with_any(method, plumbing_prefixes)) return true;
  // JDK 21+: LockSupport.park of a virtual thread goes through JavaLangAccess, an
  // anonymous class of java.lang.System ("java.lang.System$1.parkVirtualThread").
  return starts_with(method, "java.lang.System$") && method.find(".parkVirtualThread") != std::string_view::npos;
}

std::size_t site_index(const model::ThreadInfo& thread, std::size_t from) noexcept {
  for (std::size_t i = from; i < thread.frames.size(); ++i)
    if (!is_lock_plumbing(model::frame_method(thread.frames[i].text))) return i;
  return from;
}

std::string_view site_from(const model::ThreadInfo& thread, std::size_t from) noexcept {
  if (from >= thread.frames.size()) return {};
  return model::frame_method(thread.frames[site_index(thread, from)].text);
}

bool is_jdk_frame(std::string_view method) noexcept {
  constexpr std::array<std::string_view, 7> jdk{"java.", "javax.", "jdk.", "sun.", "com.sun.", "jakarta.", "kotlin."};
  return starts_with_any(method, jdk);
}

std::string_view first_non_jdk_frame(const model::ThreadInfo& thread) noexcept {
  for (const auto& f : thread.frames)
    if (const auto m = model::frame_method(f.text); !is_jdk_frame(m) && !is_lock_plumbing(m)) return m;
  return site_from(thread, 0);
}

bool is_resource_blocker(std::string_view lock_class) noexcept { return starts_with_any(lock_class, resource_blockers); }

namespace {

bool in_known_work_loop(const model::ThreadInfo& thread) {
  for (const auto& f : thread.frames)
    if (starts_with_any(model::frame_method(f.text), work_loop_frames)) return true;
  return false;
}

// A result another thread produces: a request that awaits it waits for a resource.
bool awaits_result(std::string_view blocker) {
  constexpr std::array<std::string_view, 4> results{"java.util.concurrent.CountDownLatch$Sync", "java.util.concurrent.Semaphore$",
                                                    "java.util.concurrent.FutureTask", "java.util.concurrent.CompletableFuture$Signaller"};
  return starts_with_any(blocker, results);
}

bool contains_ci(std::string_view text, std::string_view lower_word) {
  if (lower_word.size() > text.size()) return false;
  for (std::size_t i = 0; i + lower_word.size() <= text.size(); ++i) {
    std::size_t k = 0;
    while (k < lower_word.size() && (text[i + k] | 0x20) == lower_word[k]) ++k;
    if (k == lower_word.size()) return true;
  }
  return false;
}

// The vocabulary of taking an object out of a pool: commons-pool2 (Jedis, DBCP2)
// borrowObject, HikariCP ConcurrentBag.borrow, Tomcat JDBC borrowConnection, Netty's
// FixedChannelPool.acquire, Lettuce's BoundedAsyncPool, any *Pool class.
bool acquires_pooled(std::string_view method) {
  const auto name = method_name(method);
  constexpr std::array<std::string_view, 7> verbs{"borrow", "acquire", "checkout", "lease", "obtain", "getconnection", "getresource"};
  for (auto verb : verbs)
    if (contains_ci(name, verb)) return true;
  const auto cls = class_of(method);
  return method_name(cls).find("Pool") != std::string_view::npos;  // the class's own name, not its package
}

// The first few frames from the waiting site down: where the pool's API is called.
bool waits_in_pool(const model::ThreadInfo& thread) {
  const auto site = site_index(thread, 0);
  for (std::size_t i = site; i < thread.frames.size() && i < site + 4; ++i)
    if (acquires_pooled(model::frame_method(thread.frames[i].text))) return true;
  return false;
}

}  // namespace

// Conditions and handoffs are how every queue waits for its next element, so most threads
// parked on one wait for work (a Hazelcast operation thread, a file watcher, AWT's event
// queue): only one under a pool's acquisition code waits for a resource. Latches, futures
// and semaphores are awaited for a result, unless an executor's loop awaits them.
ParkWait classify_park(const model::ThreadInfo& thread, std::string_view blocker) noexcept {
  if (!is_resource_blocker(blocker)) return ParkWait::lock;
  if (in_known_work_loop(thread)) return ParkWait::idle;
  if (awaits_result(blocker)) return ParkWait::resource;
  // A consumer's own loop: the first frame that is not plumbing is a run() method (an
  // AsyncAppender worker's queue.take, a Thread subclass draining its queue).
  if (method_name(site_from(thread, 0)) == "run") return ParkWait::idle;
  return waits_in_pool(thread) ? ParkWait::resource : ParkWait::idle;
}

std::string_view resource_class(const model::ThreadInfo& thread, std::string_view blocker) noexcept {
  if (!generic_condition(blocker)) return blocker;
  // A Condition says nothing by its class: name the structure whose method awaits it, the
  // last plumbing frame above the waiting site (a queue's take, a pool's deque).
  const auto site = site_index(thread, 0);
  for (std::size_t i = site; i-- > 0;) {
    const auto method = model::frame_method(thread.frames[i].text);
    if (!starts_with(method, "java.util.concurrent.locks.") && !starts_with(method, "jdk.internal.misc.") &&
        !starts_with(method, "sun.misc.") && !starts_with(method, "java.lang.VirtualThread."))
      return class_of(method);
  }
  return blocker;
}

bool is_idle_blocker(std::string_view lock_class) noexcept {
  // Kept for callers that see only a blocker class: condition waits and handoffs.
  return generic_condition(lock_class) || (is_resource_blocker(lock_class) && lock_class.find("CountDownLatch") == std::string_view::npos &&
                                           lock_class.find("Future") == std::string_view::npos && lock_class.find("Semaphore") == std::string_view::npos);
}

}  // namespace lockwatch::analysis
