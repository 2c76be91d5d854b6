// SPDX-License-Identifier: Apache-2.0
// The node agent's Kubernetes labels: /proc/PID/cgroup in the path forms of cgroup v1 and v2
// under containerd, CRI-O and Docker with the systemd and cgroupfs drivers, and a fixture of the
// kubelet's log tree (/var/log/pods, /var/log/containers) as a kubelet lays it out.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>

#include "lockwatch/sampling/pod_identity.hpp"
#include "test_support.hpp"

using namespace lockwatch;
using sampling::PodCgroup;
namespace fs = std::filesystem;

namespace {

const std::string uid = "0d2c3f5e-8f5a-4b0e-9d7e-2b2f6b0e7a11";
const std::string uid_ = "0d2c3f5e_8f5a_4b0e_9d7e_2b2f6b0e7a11";  // as systemd slice names spell it
const std::string id = "3f4b1a9c0e2d4b6f8a1c3e5d7f9b0a2c4e6f8b1d3a5c7e9f0b2d4f6a8c1e3b5d";
const std::string other_id = "9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b";

std::optional<PodCgroup> parse(const std::string& text, std::string* why = nullptr) {
  return sampling::parse_pod_cgroup(text, why);
}

// A cgroup v1 file as the kernel prints it: every hierarchy of the hybrid layout in one path.
std::string v1_file(const std::string& path) {
  std::string out;
  int n = 12;
  for (const char* c : {"pids", "memory", "devices", "cpuset", "blkio", "freezer", "perf_event", "net_cls,net_prio",
                        "hugetlb", "cpu,cpuacct", "rdma"})
    out += std::to_string(n--) + ":" + c + ":" + path + "\n";
  return out + "1:name=systemd:" + path + "\n0::/\n";
}

struct LogTree {
  fs::path dir = fs::temp_directory_path() / ("lockwatch-pod-logs-" + std::to_string(::getpid()));
  LogTree() { fs::remove_all(dir); }
  ~LogTree() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  fs::path pods() const { return dir / "pods"; }
  fs::path containers() const { return dir / "containers"; }
  // /var/log/pods/<ns>_<pod>_<uid>/<container>/0.log, and the kubelet's symlink in
  // /var/log/containers when the container id is given.
  void container(const std::string& ns, const std::string& pod, const std::string& pod_uid, const std::string& name,
                 const std::string& container_id = "") const {
    const auto log = pods() / (ns + "_" + pod + "_" + pod_uid) / name / "0.log";
    test::write_file(log, "2026-11-30T12:00:00.000000000Z stdout F started\n");
    if (container_id.empty()) return;
    fs::create_directories(containers());
    fs::create_symlink(log, containers() / (pod + "_" + ns + "_" + name + "-" + container_id + ".log"));
  }
  sampling::PodLookup lookup(const std::string& container_id, bool with_containers = true) const {
    return sampling::PodLogTree(pods().string(), with_containers ? containers().string() : "").lookup({uid, container_id});
  }
};

}  // namespace

TEST_CASE("pod cgroup: cgroup v1 and v2 under containerd, CRI-O and Docker, systemd and cgroupfs drivers",
          "[pod_identity]") {
  const PodCgroup expected{uid, id};
  // cgroup v1 (hybrid), cgroupfs driver: containerd and Docker name the container by its id alone.
  CHECK(parse(v1_file("/kubepods/burstable/pod" + uid + "/" + id)) == expected);
  CHECK(parse(v1_file("/kubepods/besteffort/pod" + uid + "/" + id)) == expected);
  CHECK(parse(v1_file("/kubepods/pod" + uid + "/" + id)) == expected);  // Guaranteed QoS: no class level
  // cgroup v1, cgroupfs driver, CRI-O: "crio-<id>".
  CHECK(parse(v1_file("/kubepods/burstable/pod" + uid + "/crio-" + id)) == expected);
  // cgroup v1, systemd driver: containerd, CRI-O, Docker (cri-dockerd) scopes.
  const std::string slice = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + uid_ + ".slice/";
  CHECK(parse(v1_file(slice + "cri-containerd-" + id + ".scope")) == expected);
  CHECK(parse(v1_file(slice + "crio-" + id + ".scope")) == expected);
  CHECK(parse(v1_file(slice + "docker-" + id + ".scope")) == expected);
  CHECK(parse(v1_file("/kubepods.slice/kubepods-pod" + uid_ + ".slice/cri-containerd-" + id + ".scope")) == expected);
  // cgroup v2 (unified): one "0::" line, systemd and cgroupfs.
  CHECK(parse("0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + uid_ + ".slice/cri-containerd-" +
              id + ".scope\n") == expected);
  CHECK(parse("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + uid_ + ".slice/crio-" + id +
              ".scope\n") == expected);
  CHECK(parse("0::/kubepods/besteffort/pod" + uid + "/" + id + "\n") == expected);
  // kind / nested kubelets: the kubelet's slices below another slice.
  CHECK(parse("0::/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod" +
              uid_ + ".slice/cri-containerd-" + id + ".scope\n") == expected);
  // The agent in a cgroup namespace of its own (cgroup v2's default): paths start with "/..".
  CHECK(parse("0::/../../kubepods-besteffort.slice/kubepods-besteffort-pod" + uid_ + ".slice/cri-containerd-" + id +
              ".scope\n") == expected);
  // A process one level below its container's cgroup (a runtime's "init" leaf, systemd in a container).
  CHECK(parse("0::/kubepods/burstable/pod" + uid + "/" + id + "/init\n") == expected);
  // podman's own cgroupfs names ("libpod-<id>") below a kubelet-shaped parent.
  CHECK(parse(v1_file("/kubepods/besteffort/pod" + uid + "/libpod-" + id)) == expected);
}

TEST_CASE("pod cgroup: processes outside a pod, or paths it does not understand, give a reason, never a guess",
          "[pod_identity]") {
  std::string why;
  CHECK_FALSE(parse(v1_file("/system.slice/containerd.service"), &why));
  CHECK(why == "its cgroup /system.slice/containerd.service is not a Kubernetes pod's (no kubepods pod<UID> component)");
  CHECK_FALSE(parse("0::/user.slice/user-1000.slice/session-3.scope\n", &why));
  CHECK(why.find("/user.slice/user-1000.slice/session-3.scope is not a Kubernetes pod's") != std::string::npos);
  // The pod's own cgroup (a pause process, conmon on some layouts): no container below it.
  CHECK_FALSE(parse("0::/kubepods/besteffort/pod" + uid + "\n", &why));
  CHECK(why == "its cgroup /kubepods/besteffort/pod" + uid + " names pod " + uid + " but no container id below it");
  // Lookalikes: a short id, a UID with the wrong separator or length, upper-case hex, junk.
  CHECK_FALSE(parse("0::/kubepods/besteffort/pod" + uid + "/" + id.substr(0, 63) + "\n"));
  CHECK_FALSE(parse("0::/kubepods/besteffort/pod" + uid_ + "/" + id + "\n"));
  CHECK_FALSE(parse("0::/kubepods.slice/kubepods-besteffort-pod" + uid + ".slice/cri-containerd-" + id + ".scope\n"));
  CHECK_FALSE(parse("0::/kubepods/besteffort/pod" + uid.substr(1) + "/" + id + "\n"));
  std::string upper = id;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  CHECK_FALSE(parse("0::/kubepods/besteffort/pod" + uid + "/" + upper + "\n"));
  for (const std::string& junk : std::vector<std::string>{"", "\n\n", "garbage", "0:", "::::", "0::", std::string(100000, '/'), "0::/pod\n"})
    CHECK_FALSE(parse(junk, &why));
}

TEST_CASE("pod cgroup: random splices of real path pieces never crash and never invent an id", "[pod_identity]") {
  // Pieces of the real forms, glued at random: whatever comes out is either nothing or a pod
  // UID and a container id that occur in the text as they are.
  const std::vector<std::string> pieces{"0::", "12:pids:", "1:name=systemd:", "/", "/..", "kubepods", ".slice", ".scope",
                                        "kubepods-burstable-pod", "pod", "cri-containerd-", "crio-", "docker-", "-",
                                        "_", uid, uid_, id, id.substr(0, 40), "\n", ":", "besteffort", "init"};
  std::uint32_t state = 12345;
  auto next = [&state] { return state = state * 1664525u + 1013904223u; };
  for (int round = 0; round < 20000; ++round) {
    std::string text;
    for (std::uint32_t n = next() % 14; n > 0; --n) text += pieces[next() % pieces.size()];
    std::string why;
    const auto found = parse(text, &why);
    if (found) {
      CHECK(found->container_id == id);
      CHECK(found->pod_uid == uid);
    } else {
      CHECK_FALSE(why.empty());
    }
  }
}

TEST_CASE("pod log tree: namespace and pod from the UID's directory, the container from /var/log/containers",
          "[pod_identity]") {
  const LogTree tree;
  tree.container("shop", "shop-7d9f8c6b5-x2v4q", uid, "app", id);
  tree.container("shop", "shop-7d9f8c6b5-x2v4q", uid, "envoy", other_id);
  tree.container("kube-system", "coredns-5d78c9869d-8hj2k", "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", "coredns");
  auto found = tree.lookup(id);
  CHECK(found.error.empty());
  REQUIRE(found.labels);
  CHECK(*found.labels == sampling::PodLabels{"shop", "shop-7d9f8c6b5-x2v4q", "app"});
  CHECK(tree.lookup(other_id).labels->container == "envoy");

  // Without /var/log/containers two containers cannot be told apart: namespace and pod, and why.
  found = tree.lookup(id, false);
  REQUIRE(found.labels);
  CHECK(*found.labels == sampling::PodLabels{"shop", "shop-7d9f8c6b5-x2v4q", ""});
  CHECK(found.error == "container " + id.substr(0, 12) + " of pod shop/shop-7d9f8c6b5-x2v4q is not named in " +
                           tree.pods().string() + " (2 containers: app, envoy)");
  CHECK(found.retry);
}

TEST_CASE("pod log tree: the only container, Docker's log symlinks, missing and odd trees", "[pod_identity]") {
  const LogTree tree;
  // One container directory: it is that one, whatever its id.
  tree.container("batch", "report-28345678-abcde", uid, "report");
  auto found = tree.lookup(id, false);
  CHECK(found.error.empty());
  CHECK(found.labels->container == "report");

  // Docker (cri-dockerd): the kubelet's 0.log links to Docker's own <id>-json.log.
  const std::string docker_uid = "11111111-2222-3333-4444-555555555555";
  const auto pod_dir = tree.pods() / ("web_frontend-0_" + docker_uid);
  for (const auto& [name, cid] : {std::pair{"nginx", other_id}, std::pair{"app", id}}) {
    fs::create_directories(pod_dir / name);
    fs::create_symlink("/var/lib/docker/containers/" + cid + "/" + cid + "-json.log", pod_dir / name / "0.log");
  }
  found = sampling::PodLogTree(tree.pods().string(), "").lookup({docker_uid, id});
  CHECK(found.error.empty());
  CHECK(*found.labels == sampling::PodLabels{"web", "frontend-0", "app"});

  // A pod the tree does not show (yet): no labels, a reason, and a retry at the next rescan.
  found = sampling::PodLogTree(tree.pods().string(), "").lookup({"99999999-2222-3333-4444-555555555555", id});
  CHECK_FALSE(found.labels);
  CHECK(found.retry);
  CHECK(found.error.find("has no directory <namespace>_<pod>_99999999-2222-3333-4444-555555555555") != std::string::npos);
  // No tree at all.
  found = sampling::PodLogTree("/nonexistent/pods", "").lookup({uid, id});
  CHECK_FALSE(found.labels);
  CHECK(found.error == "cannot read /nonexistent/pods: No such file or directory");
  // Names that are not "<namespace>_<pod>_<uid>" are passed over, not misread.
  fs::create_directories(tree.pods() / ("only-two_" + docker_uid.substr(0, 8)));
  fs::create_directories(tree.pods() / ("a_b_c_" + uid));
  CHECK(sampling::PodLogTree(tree.pods().string(), "").lookup({uid, id}).labels->namespace_name == "batch");
}

TEST_CASE("pod lookup: the real /proc of this test, which runs in no pod", "[pod_identity]") {
  const LogTree tree;
  const auto found = sampling::lookup_pod("/proc", static_cast<int>(::getpid()), sampling::PodLogTree(tree.pods().string(), ""));
  CHECK_FALSE(found.labels);
  CHECK(found.error.find("is not a Kubernetes pod's") != std::string::npos);
  CHECK_FALSE(found.retry);
  CHECK(sampling::lookup_pod("/proc", 0, sampling::PodLogTree("/", "")).error.find("cannot read /proc/0/cgroup") == 0);
}
