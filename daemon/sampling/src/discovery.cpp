// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/sampling/discovery.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>

#include "lockwatch/sampling/act_as.hpp"
#include "lockwatch/sampling/perfdata.hpp"

namespace lockwatch::sampling {
namespace {

std::optional<int> as_pid(const std::string& name) {
  int pid = 0;
  auto [ptr, ec] = std::from_chars(name.data(), name.data() + name.size(), pid);
  if (ec != std::errc{} || ptr != name.data() + name.size() || pid <= 0) return std::nullopt;
  return pid;
}

std::vector<int> all_pids(const ProcFs& proc) {
  std::vector<int> pids;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(proc.root(), ec))
    if (auto pid = as_pid(entry.path().filename().string())) pids.push_back(*pid);
  std::sort(pids.begin(), pids.end());
  return pids;
}

bool wanted(const DiscoveredJvm& jvm, const DiscoveryFilter& filter) {
  if (!filter.pids.empty() && std::find(filter.pids.begin(), filter.pids.end(), jvm.id.pid) == filter.pids.end())
    return false;
  return !filter.cmdline || std::regex_search(jvm.cmdline, *filter.cmdline);
}

}  // namespace

std::optional<DiscoveredJvm> discover_pid(const ProcFs& proc, int pid) {
  auto status = proc.status(pid);
  auto start = proc.start_time(pid);
  if (!status || !start) return std::nullopt;
  const int nspid = status->nspid > 0 ? status->nspid : pid;
  const ActAs as({status->euid(), status->egid()});
  if (!as) return std::nullopt;
  auto perfdata = locate_perfdata(proc.root(), pid, nspid);
  if (!perfdata) return std::nullopt;
  return DiscoveredJvm{{pid, *start}, nspid, perfdata->path, perfdata->beneath_root, proc.cmdline(pid).value_or(""),
                       status->euid(), status->egid(), proc.argv(pid).value_or(std::vector<std::string>{})};
}

std::vector<DiscoveredJvm> discover_jvms(const ProcFs& proc, const DiscoveryFilter& filter) {
  return Discovery().scan(proc, filter);  // nothing remembered: every process probed
}

void Discovery::begin(const ProcFs& proc, std::vector<int> pids) {
  pending_ = pids.empty() ? all_pids(proc) : std::move(pids);
  std::reverse(pending_.begin(), pending_.end());
  found_.clear();
}

bool Discovery::step(const ProcFs& proc, std::size_t n) {
  for (; n > 0 && !pending_.empty(); --n) {
    const int pid = pending_.back();
    pending_.pop_back();
    if (auto it = known_.find(pid); it != known_.end() && proc.start_time(pid) == it->second.id.start_time) {
      found_.insert(known_.extract(it));
      continue;
    }
    if (auto jvm = discover_pid(proc, pid)) found_.insert_or_assign(pid, std::move(*jvm));
  }
  if (!pending_.empty()) return true;
  known_ = std::move(found_);
  found_.clear();
  return false;
}

std::vector<DiscoveredJvm> Discovery::result(const DiscoveryFilter& filter) const {
  std::vector<DiscoveredJvm> out;  // in pid order, as the map holds them
  for (const auto& [pid, jvm] : known_)
    if (wanted(jvm, filter)) out.push_back(jvm);
  return out;
}

std::vector<DiscoveredJvm> Discovery::scan(const ProcFs& proc, const DiscoveryFilter& filter) {
  begin(proc, filter.pids);
  while (step(proc, static_cast<std::size_t>(-1))) {
  }
  return result(filter);
}

}  // namespace lockwatch::sampling
