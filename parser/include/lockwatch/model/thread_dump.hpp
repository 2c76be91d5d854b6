// SPDX-License-Identifier: Apache-2.0
// The model of one thread dump: plain data, views into the dump's own arena.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "lockwatch/model/arena.hpp"

namespace lockwatch::model {

/// java.lang.Thread.State, plus `none` for threads that print no state line
/// (VM threads, carriers of a mounted virtual thread, JDK 21-24 dump_to_file).
enum class ThreadState : std::uint8_t { none, new_, runnable, blocked, waiting, timed_waiting, terminated, unknown };

/// "BLOCKED", "TIMED_WAITING", ... as Java spells them; "" for `none`.
std::string_view to_string(ThreadState state) noexcept;
/// Parses the first word of a state line ("BLOCKED", "WAITING", ...); unknown for anything else.
ThreadState parse_thread_state(std::string_view word) noexcept;

/// The kind of a `- ...` line under a frame.
enum class LockAction : std::uint8_t {
  locked,             // "- locked <0x..> (a C)"
  waiting_to_lock,    // "- waiting to lock <0x..> (a C)"            monitor entry (BLOCKED)
  waiting_on,         // "- waiting on <0x..> (a C)"                 Object.wait, monitor released
  waiting_to_relock,  // "- waiting to re-lock in wait() <0x..>"     notified, re-entering the monitor
  parking,            // "- parking to wait for  <0x..> (a C)"       j.u.c. park blocker
  eliminated,         // "- eliminated <..> (a C)"                   lock elided by C2
  class_init_wait,    // "- waiting on the Class initialization monitor for C"  (JDK 17+)
};
std::string_view to_string(LockAction action) noexcept;

struct LockRef {
  LockAction action = LockAction::locked;
  /// Object address (jstack) or identity hash (dump_to_file). Empty for
  /// "<no object reference available>", "<owner is scalar replaced>" and class-init waits.
  std::optional<std::uint64_t> address;
  /// "java.lang.Object", "java.util.concurrent.locks.ReentrantLock$NonfairSync",
  /// "java.lang.Class for Foo" (static synchronized).
  std::string_view class_name;
  /// Index into ThreadInfo::frames of the frame this line follows.
  std::uint32_t frame = 0;
};

/// An entry under "Locked ownable synchronizers:" (only in `-l` dumps).
struct OwnedSynchronizer {
  std::uint64_t address = 0;
  std::string_view class_name;
};

/// One stack frame: the text after "at ", e.g.
/// "java.lang.Thread.sleep(java.base@17.0.15/Native Method)".
struct Frame {
  std::string_view text;
};

/// "java.lang.Thread.sleep" — class and method, without the location.
std::string_view frame_method(std::string_view text) noexcept;
/// "java.lang.Thread" — the method's class (split at the last '.' before '(').
std::string_view frame_class(std::string_view text) noexcept;

struct ThreadInfo {
  std::string_view name;                   // raw bytes between the quotes; may hold '"' or '\n'
  std::optional<std::uint64_t> java_id;    // "#12" (JDK 8+); the identity across samples
  std::optional<std::uint64_t> os_tid;     // "[5379]" (JDK 19+)
  std::optional<std::uint64_t> nid;        // nid=0x6176 (hex) or nid=5379 (decimal, JDK 19+)
  std::optional<std::uint64_t> tid;        // address of the VM's Thread object; reused, not an identity
  bool daemon = false;
  bool is_virtual = false;                 // only dump_to_file lists virtual threads
  bool has_header_fields = false;          // jstack header (prio/tid/nid); false for dump_to_file
  int prio = -1;
  int os_prio = -1;
  std::optional<double> cpu_ms;
  std::optional<double> elapsed_s;
  std::string_view header_status;          // "waiting for monitor entry", "runnable", ...
  ThreadState state = ThreadState::none;
  std::string_view state_detail;           // "on object monitor", "parking", "sleeping"
  std::optional<std::uint64_t> carrying_vthread;  // "Carrying virtual thread #N" (JDK 21+)
  std::optional<std::uint64_t> carrier;           // dump_to_file: tid of the carrier of a mounted vthread
  /// Frames from this index on belong to the mounted virtual thread ("Mounted virtual thread #N").
  std::optional<std::uint32_t> mounted_frames_begin;
  // The lists are views as the strings are: arrays in the dump's arena, or in a body shared
  // with other dumps (body_id).
  std::span<const Frame> frames;
  std::span<const LockRef> locks;          // in dump order; LockRef::frame says which frame
  bool synchronizers_listed = false;       // a "Locked ownable synchronizers:" section was printed
  std::span<const OwnedSynchronizer> owned_synchronizers;
  std::span<const std::string_view> notes; // "No compile task", "Compiling: ...", unknown indented lines
  bool truncated = false;                  // the input ended inside this thread's block
  /// Nonzero when the state, detail, frames, locks and notes above came from a parsed body
  /// shared with other threads and samples (parser::BodyCache): threads with the same
  /// body_id have equal bodies, so what is derived from a body alone can be kept by it.
  std::uint64_t body_id = 0;

  /// A Java thread prints a state line, an #id, frames or a carrier line; VM threads print none.
  bool is_java() const noexcept {
    return java_id || state != ThreadState::none || !frames.empty() || carrying_vthread || is_virtual;
  }
};

/// One cycle as the JVM itself reported it ("Found one Java-level deadlock:").
struct DeadlockReport {
  std::vector<std::string_view> threads;   // names, in the order printed
};

enum class DumpFormat : std::uint8_t {
  jstack,              // jstack / jcmd Thread.print / SIGQUIT / attach "threaddump"
  dump_to_file_plain,  // jcmd Thread.dump_to_file -format=plain (JDK 21+)
  dump_to_file_json,   // jcmd Thread.dump_to_file -format=json (JDK 21+)
};
std::string_view to_string(DumpFormat format) noexcept;

/// What the parser saw in this dump that it could not fully use.
struct DumpStats {
  std::uint64_t lines = 0;
  std::uint64_t unknown_lines = 0;   // lines inside the dump that match no rule (kept as notes when indented)
  std::uint64_t long_lines = 0;      // lines shortened to ParserLimits::max_line_bytes
  std::uint64_t frames_dropped = 0;  // frames past ParserLimits::max_frames_per_thread
  std::uint64_t locks_dropped = 0;   // lock lines past ParserLimits::max_locks_per_thread
  bool has_header = false;           // a "Full thread dump" line opened it
  bool complete = false;             // the end marker was seen (the JNI refs line for jstack text)
};

struct ThreadDump {
  std::unique_ptr<Arena> arena = std::make_unique<Arena>();
  /// Text the views point into besides the arena: thread bodies shared with other dumps of
  /// the same target (ThreadInfo::body_id), kept alive as long as this dump.
  std::vector<std::shared_ptr<const void>> shared;
  DumpFormat format = DumpFormat::jstack;
  std::string_view timestamp;              // "2024-05-01 12:00:00" line before the header, if any
  std::string_view vm_banner;              // "OpenJDK 64-Bit Server VM (17.0.15+6 mixed mode, sharing)"
  std::vector<ThreadInfo> threads;
  std::vector<DeadlockReport> jvm_deadlocks;
  std::optional<std::uint64_t> jni_global_refs;
  /// Any thread printed "Locked ownable synchronizers:" — j.u.c. owners are knowable (-l).
  bool synchronizers_listed = false;
  DumpStats stats;

  ThreadDump() = default;
  ThreadDump(ThreadDump&&) noexcept = default;
  ThreadDump& operator=(ThreadDump&&) noexcept = default;
  ThreadDump(const ThreadDump&) = delete;
  ThreadDump& operator=(const ThreadDump&) = delete;
};

}  // namespace lockwatch::model
