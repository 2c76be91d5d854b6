// SPDX-License-Identifier: Apache-2.0
// The pod topologies of docs/deployment.md, rebuilt with namespaces (unshare) and run for real:
// the no-shared-PID sidecar (deploy/kubernetes/no-shared-pid) and a JVM whose uid has no passwd
// entry, which writes no hsperfdata file.
#include <catch2/catch.hpp>

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <thread>

#include "http_get.hpp"
#include "process.hpp"
#include "test_support.hpp"
#include "skip.hpp"

using namespace lockwatch;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

bool eventually(const std::function<bool()>& ok, std::chrono::seconds timeout = 30s) {
  for (const auto deadline = std::chrono::steady_clock::now() + timeout; std::chrono::steady_clock::now() < deadline;) {
    if (ok()) return true;
    std::this_thread::sleep_for(200ms);
  }
  return ok();
}

/// A directory under /var/tmp (not /tmp: the containers below mount over /tmp) that a
/// non-root user can read, removed at the end.
struct Workdir {
  fs::path dir;
  Workdir() {
    std::string pattern = "/var/tmp/lockwatch-topology-XXXXXX";
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    dir = pattern;
    fs::permissions(dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                             fs::perms::others_read | fs::perms::others_exec);
  }
  ~Workdir() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  fs::path shared(const std::string& name, unsigned uid) const {
    const auto p = dir / name;
    fs::create_directories(p);
    REQUIRE(::chown(p.c_str(), uid, uid) == 0);
    return p;
  }
};

/// The first child of `pid` (unshare --fork's child: the namespace's PID 1), or -1. Never throws:
/// it runs in a destructor.
int first_child(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  int child = -1;
  return in >> child ? child : -1;
}

/// A "container": its own PID and mount namespace (a fresh /proc), `tmp` mounted at /tmp, and
/// `argv` run as uid/gid `uid` as the namespace's PID 1, as a container's entrypoint is.
class Container {
 public:
  Container(const fs::path& tmp, unsigned uid, const std::string& command, bool own_pid_namespace = true) {
    std::vector<std::string> argv{"unshare"};
    if (own_pid_namespace) argv.insert(argv.end(), {"--pid", "--fork", "--mount-proc"});
    argv.insert(argv.end(), {"--mount", "--propagation", "private", "sh", "-c",
                             "mount --bind " + tmp.string() + " /tmp && exec setpriv --reuid=" + std::to_string(uid) +
                                 " --regid=" + std::to_string(uid) + " --clear-groups " + command});
    proc_ = std::make_unique<test::Child>(argv);
    own_ = own_pid_namespace;
  }
  ~Container() {
    // Killing unshare does not end a PID namespace: its init must be killed itself.
    if (const int init = own_ ? first_child(proc_->pid()) : -1; init > 0) ::kill(init, SIGKILL);
  }
  test::Child& proc() { return *proc_; }
  /// The entrypoint's pid as the host sees it.
  int host_pid() const {
    return own_ ? first_child(proc_->pid()) : proc_->pid();  // without --fork, sh execs in unshare's process
  }

 private:
  std::unique_ptr<test::Child> proc_;
  bool own_ = false;
};

std::string java() { return (fs::path(LOCKWATCH_JDK17_HOME) / "bin" / "java").string(); }

/// The scenario classes copied where a non-root user can read them.
fs::path readable_classes(const Workdir& w) {
  const auto copy = w.dir / "classes";
  fs::copy(fs::path(LOCKWATCH_SCENARIO_CLASSES) / "jdk17", copy, fs::copy_options::recursive);
  for (const auto& e : fs::recursive_directory_iterator(copy))
    fs::permissions(e.path(), fs::perms::others_read | fs::perms::others_exec, fs::perm_options::add);
  fs::permissions(copy, fs::perms::others_read | fs::perms::others_exec, fs::perm_options::add);
  return copy;
}

// The binaries too (lockwatch and the lockwatch-daemon its `run` execs, beside it): a build
// tree under /tmp is hidden by the containers' own /tmp.
std::string readable_binary(const Workdir& w) {
  const auto copy = w.dir / "lockwatch";
  if (fs::exists(copy)) return copy.string();  // a running copy cannot be overwritten
  const fs::path built(LOCKWATCH_BINARY);
  for (const auto* name : {"lockwatch-daemon", "lockwatch"}) {
    fs::copy_file(built.parent_path() / name, w.dir / name);
    fs::permissions(w.dir / name, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                      fs::perms::others_read | fs::perms::others_exec);
  }
  return copy.string();
}

std::uint16_t port_of(test::Child& daemon) {
  REQUIRE(daemon.wait_for_line("/metrics", 30s));
  std::smatch m;
  const std::string out = daemon.output();
  REQUIRE(std::regex_search(out, m, std::regex(R"(http://127\.0\.0\.1:(\d+)/metrics)")));
  return static_cast<std::uint16_t>(std::stoi(m[1]));
}

bool needs_root() {
  if (::geteuid() == 0) return false;
  test::skip("building containers needs root (unshare, mount, setpriv)");
  return true;
}

constexpr unsigned kNobody = 65534;  // in /etc/passwd: the JVM writes hsperfdata_nobody
constexpr unsigned kNoPasswd = 10001;  // no passwd entry here, like runAsUser in many images

}  // namespace

TEST_CASE("topology: no shared PID namespace - StartAttachListener, a shared /tmp, targets.pids [1]",
          "[e2e][jvm][deploy][topology]") {
  if (needs_root()) return;
  REQUIRE(test::run_command({"getent", "passwd", std::to_string(kNobody)}, 10s).exit_code == 0);
  const Workdir w;
  const auto tmp = w.shared("shared-tmp", kNobody);
  fs::permissions(tmp, fs::perms::all | fs::perms::sticky_bit);
  const auto incidents = w.shared("incidents", kNobody);
  const auto classes = readable_classes(w);

  // The app container: the JVM is its PID 1, so its socket is /tmp/.java_pid1.
  Container app(tmp, kNobody, java() + " -XX:+StartAttachListener -Xmx64m -cp " + classes.string() + " MonitorContention 120");
  REQUIRE(app.proc().wait_for_line("READY", 60s));
  CHECK(fs::is_socket(tmp / ".java_pid1"));
  CHECK(fs::exists(tmp / "hsperfdata_nobody" / "1"));

  // The lockwatch container, PID 1 of its own namespace: pid 1 there is lockwatch itself, whose
  // /proc/1/root/tmp is the shared /tmp - so `--pid 1` reaches the application's socket.
  Container sidecar(tmp, kNobody,
                    readable_binary(w) + " run --pid 1 --listen 127.0.0.1:0 --interval 200ms --incident-dir " +
                        incidents.string());
  const auto port = port_of(sidecar.proc());
  REQUIRE(eventually([&] { return test::http_get(port, "/metrics").body.find("lockwatch_samples_total{result=\"ok\"") != std::string::npos; }));
  const auto metrics = test::http_get(port, "/metrics").body;
  INFO(metrics);
  // The target is named from lockwatch's own command line ("lockwatch"), not the application's.
  CHECK(metrics.find("lockwatch_target_up{target=\"lockwatch\"} 1") != std::string::npos);
  CHECK(metrics.find("lock_class=\"Inventory\",site=\"Inventory.reserve\"") != std::string::npos);
  // hsperfdata comes through the shared /tmp too (pid 1 in both namespaces).
  CHECK(metrics.find("lockwatch_jvm_threads_live{target=\"lockwatch\"}") != std::string::npos);
  const auto targets = test::http_get(port, "/api/v1/targets").body;
  CHECK(targets.find("\"hsperfdata\":\"/proc/1/root/tmp/hsperfdata_nobody/1\"") != std::string::npos);
}

TEST_CASE("topology: a JVM whose uid has no passwd entry writes no hsperfdata and is not discovered",
          "[e2e][jvm][deploy][topology]") {
  if (needs_root()) return;
  REQUIRE(test::run_command({"getent", "passwd", std::to_string(kNoPasswd)}, 10s).exit_code != 0);
  const Workdir w;
  const auto app_tmp = w.shared("app-tmp", kNoPasswd);
  const auto classes = readable_classes(w);
  // Shared PID namespace (the host's), the app's own /tmp: the shape of deployment.yaml.
  Container app(app_tmp, kNoPasswd, java() + " -Xmx64m -cp " + classes.string() + " MonitorContention 120", false);
  REQUIRE(app.proc().wait_for_line("READY", 60s));
  std::error_code ec;
  CHECK(fs::is_empty(app_tmp, ec));  // no hsperfdata_<user>: the JVM could not name its user

  const auto incidents = w.shared("incidents", kNoPasswd);
  Container sidecar(w.shared("lockwatch-tmp", kNoPasswd), kNoPasswd,
                    readable_binary(w) + " run --listen 127.0.0.1:0 --interval 200ms --incident-dir " +
                        incidents.string(), false);
  const auto port = port_of(sidecar.proc());
  std::this_thread::sleep_for(1s);  // discovery ran at start
  CHECK(test::http_get(port, "/api/v1/targets").body == "[]");

  // Named by pid it is a target, but without a socket lockwatch may not start the listener.
  Container by_pid(w.shared("lockwatch-tmp-2", kNoPasswd), kNoPasswd,
                   readable_binary(w) + " run --pid " + std::to_string(app.host_pid()) +
                       " --listen 127.0.0.1:0 --interval 200ms --incident-dir " + incidents.string(), false);
  const auto port2 = port_of(by_pid.proc());
  std::string targets;
  const bool refused = eventually([&] {
    targets = test::http_get(port2, "/api/v1/targets").body;
    return targets.find("no attach socket and no hsperfdata file") != std::string::npos;
  });
  INFO(targets);
  CHECK(refused);
  CHECK(targets.find("\"up\":false") != std::string::npos);
  CHECK(app.proc().output().find("Full thread dump") == std::string::npos);  // never signalled
}
