// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/report/analyze_report.hpp"
#include "lockwatch/report/json_writer.hpp"
#include "lock_time_sections.hpp"

namespace lockwatch::report {
namespace {

using analysis::DumpSummary;
using analysis::LockSummary;
using analysis::ResolutionCounts;

std::string_view encoding_name(parser::Encoding e) {
  return e == parser::Encoding::utf16le ? "utf-16le" : e == parser::Encoding::utf16be ? "utf-16be" : "utf-8";
}

void write_resolution(JsonWriter& w, const ResolutionCounts& r) {
  w.begin_object().key("same_dump").value(r.same_dump).key("correlated").value(r.correlated);
  w.key("unresolved").value(r.unresolved).key("inferred").value(r.inferred).end_object();
}

void write_states(JsonWriter& w, const std::map<model::ThreadState, std::uint32_t>& states) {
  w.begin_object();
  for (const auto& [state, n] : states) w.key(model::to_string(state)).value(std::uint64_t{n});
  w.end_object();
}

void write_deadlocks(JsonWriter& w, const DumpSummary& d) {
  w.begin_array();
  for (const auto& c : d.deadlocks) {
    w.begin_object().key("threads").begin_array();
    for (const auto& name : c.threads) w.value(name);
    w.end_array().key("kinds").begin_array();
    for (auto k : c.kinds) w.value(analysis::to_string(k));
    w.end_array().key("found_in_graph").value(c.found_in_graph);
    w.key("reported_by_jvm").value(c.reported_by_jvm).end_object();
  }
  w.end_array();
}

std::string_view form_name(model::DumpFormat f) {
  switch (f) {
    case model::DumpFormat::jstack: return "print";
    case model::DumpFormat::dump_to_file_plain: return "plain";
    case model::DumpFormat::dump_to_file_json: return "json";
  }
  return "print";
}

// Virtual threads printed without a state (JDK 21-24) are listed under "none".
void write_virtual(JsonWriter& w, const DumpSummary& d) {
  w.key("form").value(form_name(d.format)).key("lock_fields").value(d.lock_fields);
  w.key("virtual_threads").value(std::uint64_t{d.virtual_threads}).key("virtual_states").begin_object();
  for (const auto& [state, n] : d.virtual_states)
    w.key(state == model::ThreadState::none ? "none" : model::to_string(state)).value(std::uint64_t{n});
  w.end_object().key("pinned_carrier_threads").value(std::uint64_t{d.pinned_carrier_threads});
  w.key("pinned_carriers").begin_array();
  for (const auto& p : d.pinned_carriers) {
    w.begin_object().key("carrier").value(p.carrier);
    if (p.virtual_thread) w.key("virtual_thread").value(*p.virtual_thread);
    w.key("site").value(p.site).end_object();
  }
  w.end_array();
}

// Chains of waits: each lock's holder waits for the next; the last lock is the root.
void write_chains(JsonWriter& w, const DumpSummary& d) {
  w.begin_array();
  for (const auto& c : d.chains) {
    w.begin_object().key("locks").begin_array();
    for (const auto& k : c.locks)
      w.begin_object().key("kind").value(analysis::to_string(k.kind)).key("lock_class").value(k.lock_class).key("site").value(k.site).end_object();
    w.end_array().key("root_waiters").value(std::uint64_t{c.waiters}).key("deadlock").value(c.deadlock).end_object();
  }
  w.end_array();
}

void write_dump(JsonWriter& w, const AnalyzeResult& r, std::size_t i) {
  const DumpSummary& d = r.report.dumps[i];
  w.begin_object().key("file").value(r.inputs[r.dump_input[i]].path);
  if (!d.timestamp.empty()) w.key("timestamp").value(d.timestamp);
  w.key("threads").value(std::uint64_t{d.threads}).key("java_threads").value(std::uint64_t{d.java_threads});
  w.key("states"), write_states(w, d.states);
  write_virtual(w, d);
  w.key("contending_threads").value(std::uint64_t{d.contending_threads});
  w.key("deadlocks"), write_deadlocks(w, d);
  w.key("chains"), write_chains(w, d);
  w.key("pools").begin_array();
  for (const auto& p : d.pools) {
    w.begin_object().key("pool").value(p.pool).key("threads").value(std::uint64_t{p.threads});
    w.key("states"), write_states(w, p.states), w.end_object();
  }
  w.end_array().key("complete").value(d.complete).key("synchronizers_listed").value(d.synchronizers_listed);
  w.key("unknown_lines").value(d.unknown_lines).end_object();
}

void write_lock(JsonWriter& w, const LockSummary& l) {
  w.begin_object().key("kind").value(analysis::to_string(l.key.kind));
  w.key("lock_class").value(l.key.lock_class).key("site").value(l.key.site);
  w.key("max_waiters").value(std::uint64_t{l.max_waiters}).key("wait_observations").value(l.wait_observations);
  w.key("dumps").value(std::uint64_t{l.dumps_seen}).key("holders").begin_array();
  for (const auto& h : l.holders)
    w.begin_object().key("site").value(h.site).key("thread").value(h.thread).key("observations").value(h.observations)
        .key("busy_at").value(h.busy_at).end_object();
  w.end_array().key("resolution"), write_resolution(w, l.resolution);
  w.key("per_dump").begin_array();
  for (const auto& d : l.per_dump) {
    w.begin_object().key("dump").value(std::uint64_t{d.dump}).key("waiters").begin_array();
    for (const auto& n : d.waiters) w.value(n);
    w.end_array().key("more_waiters").value(std::uint64_t{d.more_waiters}).key("holders").begin_array();
    for (const auto& n : d.holders) w.value(n);
    w.end_array().end_object();
  }
  w.end_array().end_object();
}

void write_inputs(JsonWriter& w, const AnalyzeResult& r) {
  w.begin_array();
  for (const auto& in : r.inputs) {
    w.begin_object().key("file").value(in.path).key("dumps").value(std::uint64_t{in.dumps});
    w.key("bytes").value(in.stats.bytes).key("encoding").value(encoding_name(in.stats.encoding));
    w.key("junk_lines").value(in.stats.junk_lines).key("incomplete_dumps").value(in.stats.incomplete_dumps);
    w.key("stopped_by_limit").value(in.stats.stopped != parser::StopReason::none).end_object();
  }
  w.end_array();
}

}  // namespace

std::string render_json(const AnalyzeResult& r) {
  JsonWriter w;
  w.begin_object().key("dumps").begin_array();
  for (std::size_t i = 0; i < r.report.dumps.size(); ++i) write_dump(w, r, i);
  w.end_array().key("locks").begin_array();
  for (const auto& l : r.report.locks) write_lock(w, l);
  w.end_array().key("holder_resolution"), write_resolution(w, r.report.resolution);
  w.key("stuck_threads").begin_array();
  for (const auto& s : r.report.stuck) {
    w.begin_object().key("thread").value(s.thread);
    if (s.java_id) w.key("java_id").value(*s.java_id);
    w.key("kind").value(analysis::to_string(s.lock.kind)).key("lock_class").value(s.lock.lock_class);
    w.key("site").value(s.lock.site).key("samples").value(std::uint64_t{s.samples}).end_object();
  }
  w.end_array();
  if (r.lock_time) w.key("lock_time"), write_lock_time_json(w, *r.lock_time);
  w.key("inputs"), write_inputs(w, r);
  w.end_object();
  return w.str() + "\n";
}

}  // namespace lockwatch::report
