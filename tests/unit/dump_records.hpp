// SPDX-License-Identifier: Apache-2.0
// Dump records as a backend and the scheduler would deliver them, for tests of what the
// service does with a finished dump.
#pragma once

#include <chrono>
#include <string>

#include "lockwatch/sampling/dump_record.hpp"

namespace lockwatch::test {

/// A record of an attach dump asked for at `unix_seconds` that took `elapsed_seconds`.
inline sampling::DumpRecord dump_record(sampling::Outcome outcome, std::string text, double unix_seconds,
                                        double elapsed_seconds, std::string error = {}) {
  using namespace std::chrono;
  sampling::DumpRecord r;
  r.outcome = outcome, r.text = std::move(text), r.error = std::move(error);
  r.source = sampling::DumpSource::attach;
  r.started = system_clock::time_point(duration_cast<system_clock::duration>(duration<double>(unix_seconds)));
  r.elapsed = duration_cast<steady_clock::duration>(duration<double>(elapsed_seconds));
  return r;
}

/// An ok dump of `text`.
inline sampling::DumpRecord ok_dump(std::string text, double unix_seconds, double elapsed_seconds = 0.01) {
  return dump_record(sampling::Outcome::ok, std::move(text), unix_seconds, elapsed_seconds);
}

}  // namespace lockwatch::test
