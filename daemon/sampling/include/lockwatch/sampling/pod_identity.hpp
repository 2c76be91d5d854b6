// SPDX-License-Identifier: Apache-2.0
// Which Kubernetes pod and container a process runs in, from what the node itself has and
// without the Kubernetes API: the process's cgroup names the pod's UID and the container's
// id, and the kubelet's log tree names the pod and the container:
//
//   /proc/PID/cgroup   .../kubepods-burstable-pod<uid with _>.slice/cri-containerd-<id>.scope
//                      .../kubepods/besteffort/pod<uid>/<id>
//   pod_logs           <namespace>_<pod>_<uid>/<container>/<restart>.log
//   container_logs     <pod>_<namespace>_<container>-<id>.log  (the kubelet's /var/log/containers)
//
// Everything read here is the node's or the kubelet's, never the target's: /proc/PID/cgroup
// is the kernel's, and names in the log trees are only ever listed, never followed.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace lockwatch::sampling {

/// What a cgroup path says: the pod's UID ("0d2c3f5e-8f5a-4b0e-9d7e-2b2f6b0e7a11", as the API
/// spells it) and the container's id (64 hex digits).
struct PodCgroup {
  std::string pod_uid;
  std::string container_id;
  bool operator==(const PodCgroup&) const = default;
};

/// From the text of /proc/PID/cgroup: cgroup v1 (one line per hierarchy) and v2 ("0::PATH"),
/// the cgroupfs and systemd drivers, containerd, CRI-O, Docker (cri-dockerd) and podman ids,
/// paths relative to a cgroup namespace ("/../.."). Nothing when no line names both a pod and a
/// container below it; `why` then says what the process's cgroup is.
std::optional<PodCgroup> parse_pod_cgroup(std::string_view cgroup_text, std::string* why = nullptr);

struct PodLabels {
  std::string namespace_name;
  std::string pod;
  std::string container;  // empty when the log tree does not tell which container of the pod
  bool operator==(const PodLabels&) const = default;
};

/// The answer for one process: labels (possibly without a container) and, when something is
/// unknown, why.
struct PodLookup {
  std::optional<PodLabels> labels;
  std::string error;
  bool retry = false;  // the cgroup names a pod the log tree does not show (yet): look again later
};

/// The kubelet's log tree, read-only. `pod_logs` is /var/log/pods; `container_logs` (may be
/// empty) is /var/log/containers, whose names carry container ids for every runtime.
class PodLogTree {
 public:
  PodLogTree(std::string pod_logs, std::string container_logs);

  /// Namespace and pod from the directory named after the pod's UID; the container from
  /// container_logs, or a Docker-style log symlink naming the id, or the pod's only container
  /// directory.
  PodLookup lookup(const PodCgroup& cgroup) const;

  /// Directory entries read per directory at most: a node with a huge log tree costs bounded work.
  static constexpr std::size_t max_entries = 100'000;

 private:
  std::string pod_logs_;
  std::string container_logs_;
};

/// Reads `<proc_root>/<pid>/cgroup` and looks the process up in `tree`.
PodLookup lookup_pod(const std::string& proc_root, int pid, const PodLogTree& tree);

}  // namespace lockwatch::sampling
