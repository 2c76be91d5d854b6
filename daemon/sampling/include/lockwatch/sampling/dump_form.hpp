// SPDX-License-Identifier: Apache-2.0
// Which dump form each sample of a target takes (`dump_format: auto|print|json`), decided from
// what the JVM itself publishes in its dumps. Pure: no clock of its own, no I/O.
//
// Thread.print lists platform threads only; since JDK 24 (JEP 491) a virtual thread blocked on
// a monitor or parked on a j.u.c. lock is unmounted and in no Thread.print at all. The JSON
// dump (Thread.dump_to_file -format=json, JDK 21+) lists every thread, and from JDK 25 the lock
// each waits for (blockedOn, parkBlocker) and holds (monitorsOwned). `auto`:
//   - print until a sample shows a JDK 21+ JVM that runs virtual threads;
//   - then, on JDK 25+, JSON for every sample; on JDK 21-24, whose JSON has states and stacks
//     but no lock fields, every second sample, so the print samples in between keep the
//     platform threads' locks;
//   - back to print when JSON samples have shown no virtual thread for `idle`; then only a
//     carrier's mounted virtual thread counts as evidence again (the JVM's own unparker and
//     unblocker threads outlive the application's virtual threads);
//   - a JSON dump the JVM cannot write (Outcome::dump_file_failed) sends the target to print for
//     `fallback`, after which JSON is tried again (also under `json`).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "lockwatch/sampling/dump_record.hpp"

namespace lockwatch::sampling {

enum class FormMode : std::uint8_t { automatic, print, json };
std::string_view to_string(FormMode mode) noexcept;  // "auto", "print", "json"
std::optional<FormMode> parse_form_mode(std::string_view text);

/// What one dump says about its JVM, read from the parsed dump by whoever parsed it: the
/// parser is not a dependency of sampling, and the grammar of a dump has one reader.
struct FormEvidence {
  int jdk_major = 0;             // 0: not stated (JDK 8's VM version "25.382-b05" says 8)
  bool virtual_threads = false;  // any sign of virtual threads
  bool mounted = false;          // a virtual thread itself (a carrier's, or listed in JSON)
};
/// The JDK's feature release from a VM version: "25.0.3+9-LTS" 25, "21-ea+5" 21, "17.0.9+9" 17,
/// "25.382-b05" (JDK 8's HotSpot 25) 8; 0 when it is none of these.
int jdk_major_of(std::string_view vm_version);

struct FormTimes {
  std::chrono::milliseconds fallback = std::chrono::minutes(10);  // print after the JVM could not write
  std::chrono::milliseconds idle = std::chrono::minutes(10);      // JSON with no virtual thread: back to print
  std::uint32_t json_every_before_25 = 2;                         // JDK 21-24: every Nth sample is JSON
};

class FormChooser {
 public:
  using Clock = std::chrono::steady_clock;
  explicit FormChooser(FormMode mode = FormMode::automatic, FormTimes times = {}) : mode_(mode), times_(times) {}

  void set_mode(FormMode mode) noexcept { mode_ = mode; }
  FormMode mode() const noexcept { return mode_; }
  /// The form of the next dump (advances the JDK 21-24 alternation).
  DumpForm choose(Clock::time_point now);
  /// A finished dump of the form it asked for, with what its parsed text showed (nothing
  /// when it failed).
  void observe(DumpForm form, Outcome outcome, const FormEvidence& evidence, Clock::time_point now);
  /// For logs and the docs' wording: why the next dump takes the form it takes.
  std::string reason(Clock::time_point now) const;
  bool falling_back(Clock::time_point now) const noexcept { return fallback_until_ && now < *fallback_until_; }
  int jdk_major() const noexcept { return jdk_major_; }

 private:
  bool wants_json(Clock::time_point now) const;

  FormMode mode_;
  FormTimes times_;
  int jdk_major_ = 0;
  std::optional<Clock::time_point> virtual_seen_;   // last sample with virtual threads
  std::optional<Clock::time_point> fallback_until_;
  bool mounted_only_ = false;                       // after an idle return to print
  std::uint64_t chosen_ = 0;                        // JSON-eligible choices, for the alternation
};

}  // namespace lockwatch::sampling
