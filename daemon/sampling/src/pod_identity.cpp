// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/sampling/pod_identity.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "lockwatch/sampling/proc.hpp"

namespace lockwatch::sampling {
namespace {

bool is_hex(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// 8-4-4-4-12 hex digits with `sep` between the groups: a pod UID, with '-' (cgroupfs paths,
// the log tree) or '_' (systemd slice names, which cannot hold '-' inside a unit's own name).
bool is_uid(std::string_view s, char sep) {
  static constexpr std::size_t groups[] = {8, 4, 4, 4, 12};
  for (std::size_t i = 0; i < std::size(groups); ++i) {
    if (s.size() < groups[i] || !is_hex(s.substr(0, groups[i]))) return false;
    s.remove_prefix(groups[i]);
    if (i + 1 < std::size(groups)) {
      if (s.empty() || s.front() != sep) return false;
      s.remove_prefix(1);
    }
  }
  return s.empty();
}

// "pod<uid>" (cgroupfs) or "[kubelet-]kubepods[-<qos>]-pod<uid_>.slice" (systemd; kind
// and other nested kubelets prefix their slices): the pod's UID.
std::optional<std::string> pod_of(std::string_view component) {
  if (component.starts_with("pod") && is_uid(component.substr(3), '-')) return std::string(component.substr(3));
  if (component.find("kubepods") == std::string_view::npos || !component.ends_with(".slice")) return std::nullopt;
  component.remove_suffix(6);
  const auto at = component.rfind("-pod");
  if (at == std::string_view::npos || !is_uid(component.substr(at + 4), '_')) return std::nullopt;
  std::string uid(component.substr(at + 4));
  std::replace(uid.begin(), uid.end(), '_', '-');
  return uid;
}

// "<id>" (containerd and Docker with cgroupfs), "<runtime>-<id>[.scope]" (cri-containerd-,
// crio-, docker-, libpod-; with systemd a .scope): the container's 64-hex-digit id.
std::optional<std::string> container_of(std::string_view component) {
  if (component.ends_with(".scope")) component.remove_suffix(6);
  if (const auto dash = component.rfind('-'); dash != std::string_view::npos) component.remove_prefix(dash + 1);
  if (component.size() == 64 && is_hex(component)) return std::string(component);
  return std::nullopt;
}

std::vector<std::string_view> components(std::string_view path) {
  std::vector<std::string_view> out;
  for (std::size_t at = 0; at <= path.size();) {
    const auto end = std::min(path.find('/', at), path.size());
    if (end > at) out.push_back(path.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

struct LineResult {
  std::optional<std::string> pod;
  std::optional<PodCgroup> found;
};

// One "ID:CONTROLLERS:PATH" line. The container is the last id-shaped component below the
// pod's: a runtime may nest the process one level deeper (a ".../<id>.scope/init").
LineResult parse_line(std::string_view line) {
  const auto first = line.find(':');
  const auto second = first == std::string_view::npos ? first : line.find(':', first + 1);
  if (second == std::string_view::npos) return {};
  const auto parts = components(line.substr(second + 1));
  LineResult r;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    auto pod = pod_of(parts[i]);
    if (!pod) continue;
    r.pod = pod;
    for (std::size_t j = parts.size(); j-- > i + 1;)
      if (auto id = container_of(parts[j])) return r.found = PodCgroup{*pod, *id}, r;
  }
  return r;
}

std::string path_of(std::string_view line) {
  const auto first = line.find(':');
  const auto second = first == std::string_view::npos ? first : line.find(':', first + 1);
  return std::string(second == std::string_view::npos ? line : line.substr(second + 1));
}

struct Entry {
  std::string name;
  unsigned char type = DT_UNKNOWN;
};

// The names in `dir` (at most max_entries), opened without following a symlink at its end.
std::optional<std::vector<Entry>> list(int at, const std::string& dir, int* err = nullptr) {
  const int fd = ::openat(at, dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (err) *err = errno;
    return std::nullopt;
  }
  DIR* d = ::fdopendir(fd);
  if (!d) {
    if (err) *err = errno;
    ::close(fd);
    return std::nullopt;
  }
  std::vector<Entry> out;
  while (const dirent* e = ::readdir(d)) {
    const std::string_view name(e->d_name);
    if (name == "." || name == "..") continue;
    if (out.size() >= PodLogTree::max_entries) break;
    out.push_back({std::string(name), e->d_type});
  }
  ::closedir(d);
  return out;
}

bool is_dir(int at, const std::string& name, unsigned char type) {
  if (type != DT_UNKNOWN) return type == DT_DIR;
  struct stat st {};
  return ::fstatat(at, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

std::string short_id(const std::string& id) { return id.substr(0, 12); }

// "<namespace>_<pod>_<uid>": neither a namespace nor a pod name can hold '_'.
std::optional<PodLabels> pod_directory(const std::string& name, const std::string& uid) {
  const auto first = name.find('_');
  const auto last = name.rfind('_');
  if (first == std::string::npos || first == last || name.substr(last + 1) != uid) return std::nullopt;
  PodLabels labels{name.substr(0, first), name.substr(first + 1, last - first - 1), ""};
  if (labels.namespace_name.empty() || labels.pod.empty() || labels.pod.find('_') != std::string::npos) return std::nullopt;
  return labels;
}

// "<pod>_<namespace>_<container>-<id>.log" in /var/log/containers.
std::optional<std::string> container_from_links(const std::string& dir, const PodLabels& pod, const std::string& id) {
  if (dir.empty()) return std::nullopt;
  const auto entries = list(AT_FDCWD, dir);
  if (!entries) return std::nullopt;
  const std::string prefix = pod.pod + "_" + pod.namespace_name + "_";
  const std::string suffix = "-" + id + ".log";
  for (const auto& e : *entries) {
    const auto& n = e.name;
    if (n.size() > prefix.size() + suffix.size() && n.starts_with(prefix) && n.ends_with(suffix))
      return n.substr(prefix.size(), n.size() - prefix.size() - suffix.size());
  }
  return std::nullopt;
}

// Docker (cri-dockerd) keeps the log in its own tree: the kubelet's "<restart>.log" is a
// symlink to /var/lib/docker/containers/<id>/<id>-json.log. Read, never followed.
bool links_to(int pod_dir, const std::string& container, const std::string& id) {
  const int fd = ::openat(pod_dir, container.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  bool found = false;
  if (const auto files = list(fd, ".")) {
    for (const auto& f : *files) {
      char target[4096];
      const auto n = ::readlinkat(fd, f.name.c_str(), target, sizeof target - 1);
      if (n > 0 && std::string_view(target, static_cast<std::size_t>(n)).find(id) != std::string_view::npos) found = true;
    }
  }
  ::close(fd);
  return found;
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

std::optional<PodCgroup> parse_pod_cgroup(std::string_view text, std::string* why) {
  std::optional<std::string> pod_without_container;
  std::string shown;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const auto line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    if (line.empty()) continue;
    auto r = parse_line(line);
    if (r.found) return r.found;
    // For the reason: the pod's path, else the first path that is not the root ("0::/" in a
    // hybrid layout says nothing).
    if (r.pod && !pod_without_container) pod_without_container = r.pod, shown = path_of(line);
    if (!pod_without_container && (shown.empty() || shown == "/")) shown = path_of(line);
  }
  if (why) {
    *why = pod_without_container
               ? "its cgroup " + shown + " names pod " + *pod_without_container + " but no container id below it"
               : "its cgroup " + (shown.empty() ? std::string("(none)") : shown) +
                     " is not a Kubernetes pod's (no kubepods pod<UID> component)";
  }
  return std::nullopt;
}

PodLogTree::PodLogTree(std::string pod_logs, std::string container_logs)
    : pod_logs_(std::move(pod_logs)), container_logs_(std::move(container_logs)) {}

PodLookup PodLogTree::lookup(const PodCgroup& cgroup) const {
  int err = 0;
  const auto pods = list(AT_FDCWD, pod_logs_, &err);
  if (!pods) return {std::nullopt, "cannot read " + pod_logs_ + ": " + std::strerror(err), true};
  std::optional<PodLabels> labels;
  std::string pod_dir;
  for (const auto& e : *pods)
    if ((labels = pod_directory(e.name, cgroup.pod_uid))) {
      pod_dir = e.name;
      break;
    }
  if (!labels)
    return {std::nullopt, "pod " + cgroup.pod_uid + " has no directory <namespace>_<pod>_" + cgroup.pod_uid + " in " + pod_logs_, true};
  if (auto name = container_from_links(container_logs_, *labels, cgroup.container_id)) {
    labels->container = *name;
    return {labels, "", false};
  }
  const int dir = ::openat(AT_FDCWD, (pod_logs_ + "/" + pod_dir).c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  std::vector<std::string> containers;
  if (dir >= 0) {
    if (const auto entries = list(dir, "."))
      for (const auto& e : *entries)
        if (is_dir(dir, e.name, e.type)) containers.push_back(e.name);
    std::sort(containers.begin(), containers.end());
    for (const auto& c : containers)
      if (links_to(dir, c, cgroup.container_id)) labels->container = c;
    ::close(dir);
  }
  if (labels->container.empty() && containers.size() == 1) labels->container = containers.front();
  if (!labels->container.empty()) return {labels, "", false};
  return {labels,
          "container " + short_id(cgroup.container_id) + " of pod " + labels->namespace_name + "/" + labels->pod +
              " is not named in " + (container_logs_.empty() ? pod_logs_ : container_logs_) + " (" +
              std::to_string(containers.size()) + " containers: " + join(containers) + ")",
          true};
}

PodLookup lookup_pod(const std::string& proc_root, int pid, const PodLogTree& tree) {
  const auto path = proc_root + "/" + std::to_string(pid) + "/cgroup";
  const auto text = read_small_file(path, 64 * 1024);
  if (!text) return {std::nullopt, "cannot read " + path + ": " + std::strerror(errno), false};
  std::string why;
  const auto cgroup = parse_pod_cgroup(*text, &why);
  if (!cgroup) return {std::nullopt, why, false};
  return tree.lookup(*cgroup);
}

}  // namespace lockwatch::sampling
