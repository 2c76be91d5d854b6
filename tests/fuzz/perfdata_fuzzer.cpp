// SPDX-License-Identifier: Apache-2.0
// Fuzz target for the hsperfdata parser. The file belongs to the target JVM (or whoever
// planted it), so whatever the bytes: no read outside them (ASan), an error exactly when the
// result is missing or partial, never more counters than the file says it published, and
// counters_of() works on whatever parse_perfdata() returned. The bytes past the prologue's
// `used` are the JVM's work in progress and must not change the result.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "lockwatch/sampling/perfdata.hpp"

namespace {

namespace sampling = lockwatch::sampling;

[[noreturn]] void fail(const char* what, const std::string& error) {
  std::fprintf(stderr, "perfdata_fuzzer: %s (error: '%s')\n", what, error.c_str());
  __builtin_trap();
}

// The typed counters are the maps' entries under fixed names: nothing invented, nothing lost.
void check_counters(const sampling::PerfData& data, const std::string& error) {
  const auto c = sampling::counters_of(data);
  if (c.threads_live != data.get_long("java.threads.live")) fail("threads_live differs from its entry", error);
  if (c.safepoints != data.get_long("sun.rt.safepoints")) fail("safepoints differs from its entry", error);
  if (c.frequency != data.get_long("sun.os.hrt.frequency")) fail("frequency differs from its entry", error);
  const auto caps = data.get_string("sun.rt.jvmCapabilities");
  if (c.attach_supported && (!caps || caps->empty() || (*caps)[0] != (*c.attach_supported ? '1' : '0')))
    fail("attach_supported does not come from the first capability", error);
  if (!data.get_string("java.property.java.vm.version") && !data.get_string("java.vm.version") &&
      !c.vm_version.empty())
    fail("a vm_version without a version entry", error);
}

// The prologue's `used` (offset 8, in the file's byte order at offset 4); only called on
// bytes parse_perfdata() accepted, so the prologue is there and `used` is positive.
std::size_t used_bytes(std::string_view bytes) {
  const bool little = bytes[4] == 1;
  std::uint32_t used = 0;
  for (std::size_t i = 0; i < 4; ++i)
    used = used << 8 | static_cast<unsigned char>(bytes[8 + (little ? 3 - i : i)]);
  return used;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Bytes are bytes: the parser reads them as chars, signedness is irrelevant here.
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::string error;
  const std::optional<sampling::PerfData> parsed = sampling::parse_perfdata(bytes, &error);
  if (!parsed) {
    if (error.empty()) fail("no result and no error", error);
    return 0;
  }
  // An error is set exactly when the entry walk stopped early.
  if (!parsed->complete && error.empty()) fail("a partial result without an error", error);
  if (parsed->complete && !error.empty()) fail("a complete result with an error", error);
  // Each published entry adds at most one counter (unknown types and duplicates add none).
  const auto counters = parsed->longs.size() + parsed->strings.size();
  if (parsed->num_entries < 0 || counters > static_cast<std::size_t>(parsed->num_entries))
    fail("more counters than published entries", error);
  for (const auto& [name, value] : parsed->longs)
    if (name.empty()) fail("a counter without a name", error);
  for (const auto& [name, value] : parsed->strings)
    if (name.empty() || value.find('\0') != std::string::npos) fail("an empty name or a NUL in a string", error);
  check_counters(*parsed, error);
  // A tick keeps only the counters: the same walk, the same counters.
  std::string few_error;
  const auto few = sampling::parse_perfdata(bytes, &few_error, sampling::PerfDataKeep::counters);
  if (!few || few->complete != parsed->complete || few_error != error ||
      sampling::counters_of(*few).safepoint_time_ticks != sampling::counters_of(*parsed).safepoint_time_ticks ||
      sampling::counters_of(*few).vm_version != sampling::counters_of(*parsed).vm_version ||
      sampling::counters_of(*few).gc_collections != sampling::counters_of(*parsed).gc_collections)
    fail("keeping only the counters changes the walk or the counters", error);
  // The JVM may be writing past `used`: cutting the file there must change nothing.
  const std::size_t used = used_bytes(bytes);
  if (used < bytes.size()) {
    std::string cut_error;
    const auto cut = sampling::parse_perfdata(bytes.substr(0, used), &cut_error);
    if (!cut || cut->longs != parsed->longs || cut->strings != parsed->strings || cut->complete != parsed->complete ||
        cut_error != error)
      fail("the bytes past `used` change the result", error);
  }
  return 0;
}
