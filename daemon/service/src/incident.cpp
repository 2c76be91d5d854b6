// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/service/incident.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <fstream>

#include "lockwatch/report/analyze_report.hpp"
#include "lockwatch/report/json_writer.hpp"

namespace lockwatch::service {
namespace fs = std::filesystem;

namespace {

std::string utc_stamp(double unix_seconds) {
  const auto t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%dT%H%M%SZ", &tm);
  return text;
}

std::uint64_t size_below(const fs::path& dir) {
  std::uint64_t total = 0;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec))
    if (e.is_regular_file(ec)) total += e.file_size(ec);
  return total;
}

std::string summary_json(const TargetState& target, const Trigger& trigger, const std::vector<store::SampleInfo>& samples) {
  report::JsonWriter w;
  w.begin_object().key("format").value("lockwatch-incident/1").key("target").value(target.label());
  w.key("trigger").begin_object().key("reason").value(trigger.reason).key("value").value(trigger.value);
  w.key("threshold").value(trigger.threshold).key("time").value(trigger.time).end_object();
  w.key("samples").begin_array();
  for (std::size_t i = 0; i < samples.size(); ++i) {
    char file[32];
    std::snprintf(file, sizeof file, "dump-%04zu.txt", i + 1);
    const auto& d = samples[i].dump;
    w.begin_object().key("file").value(file).key("id").value(samples[i].id).key("time").value(sampling::unix_seconds(d.started));
    w.key("burst").value(d.burst).key("locks").value(d.locks).key("source").value(sampling::to_string(d.source));
    w.key("form").value(sampling::to_string(d.form)).end_object();
  }
  w.end_array();
  report::AnalyzeResult analysis;
  analysis.inputs.push_back({target.label(), samples.size(), {}});
  analysis.dump_input.assign(target.correlator().size(), 0);
  analysis.report = target.correlator().report();
  std::string out = w.str();
  return out + ",\"analysis\":" + report::render_json(analysis) + "}\n";
}

bool write_text(const fs::path& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  return static_cast<bool>(out.flush());
}

// The newest samples whose text fits the budget (the burst is newest), so one incident of a
// huge JVM cannot exceed the disk budget on its own; a tenth is left for the summary.
std::vector<store::SampleInfo> within_budget(std::vector<store::SampleInfo> samples, std::uint64_t max_bytes) {
  std::uint64_t total = 0;
  auto first = samples.size();
  while (first > 0 && total + samples[first - 1].text_bytes <= max_bytes / 10 * 9) total += samples[--first].text_bytes;
  samples.erase(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(first));
  return samples;
}

}  // namespace

std::optional<Trigger> check_trigger(const IncidentPolicy& p, const TargetState& target, double now) {
  if (!p.enabled) return std::nullopt;
  if (p.blocked_threshold > 0 && target.latest_blocked() >= p.blocked_threshold)
    return Trigger{"blocked_threads", static_cast<double>(target.latest_blocked()), static_cast<double>(p.blocked_threshold), now};
  // 31 threads parked on an appender's lock or 44 starved on a pool are as much an incident
  // as 20 BLOCKED ones, and never BLOCKED.
  const auto parked = target.latest_waiters(analysis::LockKind::park);
  if (p.park_threshold > 0 && parked >= p.park_threshold)
    return Trigger{"park_waiters", static_cast<double>(parked), static_cast<double>(p.park_threshold), now};
  const auto starved = target.latest_waiters(analysis::LockKind::resource);
  if (p.resource_threshold > 0 && starved >= p.resource_threshold)
    return Trigger{"resource_waiters", static_cast<double>(starved), static_cast<double>(p.resource_threshold), now};
  const auto rate = target.contended_rate();
  if (p.contended_enters_per_second > 0 && rate && *rate >= p.contended_enters_per_second)
    return Trigger{"contended_enters_per_second", *rate, p.contended_enters_per_second, now};
  return std::nullopt;
}

IncidentWritten write_incident(const IncidentPolicy& policy, const TargetState& target, const Trigger& trigger) {
  IncidentWritten result;
  result.path = policy.directory / (utc_stamp(trigger.time) + "-" + target.label());
  std::error_code ec;
  fs::create_directories(result.path, ec);
  if (ec) return result.error = "cannot create " + result.path.string() + ": " + ec.message(), result;
  const auto samples = within_budget(target.ring().list(), policy.max_bytes);
  for (std::size_t i = 0; i < samples.size(); ++i) {
    char file[32];
    std::snprintf(file, sizeof file, "dump-%04zu.txt", i + 1);
    if (!write_text(result.path / file, target.ring().text(samples[i].id).value_or("")))
      return result.error = "cannot write " + (result.path / file).string(), result;
  }
  if (!write_text(result.path / "summary.json", summary_json(target, trigger, samples)))
    return result.error = "cannot write " + (result.path / "summary.json").string(), result;
  result.bytes = size_below(result.path);
  result.removed = enforce_budget(policy.directory, policy.max_bytes, result.path);
  return result;
}

std::vector<fs::path> enforce_budget(const fs::path& directory, std::uint64_t max_bytes, const fs::path& keep) {
  std::vector<std::pair<fs::path, std::uint64_t>> incidents;  // names start with the UTC time: sorted = oldest first
  std::uint64_t total = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(directory, ec))
    if (e.is_directory(ec)) incidents.emplace_back(e.path(), size_below(e.path())), total += incidents.back().second;
  std::sort(incidents.begin(), incidents.end());
  std::vector<fs::path> removed;
  for (const auto& [path, bytes] : incidents) {
    if (total <= max_bytes) break;
    if (path == keep) continue;
    fs::remove_all(path, ec);
    total -= bytes;
    removed.push_back(path);
  }
  return removed;
}

}  // namespace lockwatch::service
