// SPDX-License-Identifier: Apache-2.0
// The daemon against a hostile target: everything that comes from the watched application
// (a compromised app container next to the lockwatch sidecar) is an attack. Each case runs
// `lockwatch run` on tests/hostile/fake_jvm.cpp in one of its modes next to a real JVM
// (MonitorContention, JDK 17) and asserts, throughout the attack:
//   - /metrics and /healthz answer 200 within 1 s, every time they are polled;
//   - the real JVM keeps >= 90% of its samples (interval 200 ms, counted over a measured
//     window that starts after its first samples; less one for the window's edges);
//   - the daemon's peak RSS (VmHWM) stays under the bound the case states;
//   - nothing is created or read outside the target's root (canaries in our /tmp);
//   - lockwatch_samples_total{result=...} and the "sampling failed" log line name what happened.
// The cases that need a mount namespace (--private-tmp: the fake gets its own /tmp, as a
// container has) skip, or drop that part, with a WARN when not run as root.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "e2e_support.hpp"
#include "skip.hpp"

using namespace lockwatch;
using namespace lockwatch::e2e;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

// Under AddressSanitizer the daemon runs several times slower and its RSS is mostly the
// sanitizer's shadow and quarantine: the share and memory bounds are the release build's to
// show; the sanitized run keeps every attack and looks for memory errors in its handling.
#if defined(__SANITIZE_ADDRESS__)
#define LOCKWATCH_E2E_SANITIZED 1
#else
#define LOCKWATCH_E2E_SANITIZED 0
#endif
// Of the real JVM's samples. Under ASan each sample of the daemon costs several times more
// and 16 forked "JVMs" share two cores with it: 40-47% was measured there; the release run
// holds the 90%.
constexpr double kGoodShare = LOCKWATCH_E2E_SANITIZED ? 0.25 : 0.9;
constexpr std::uint64_t kRssGuard = LOCKWATCH_E2E_SANITIZED ? 16 : 2;  // x the bound: stop observing

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kInterval = 200ms;
// Seconds: the slowest /metrics or /healthz allowed. The sanitized daemon parses a 9 MB
// hostile reply several times slower and shares two cores with it; it was seen to answer once
// in 1.4 s there. The release run keeps the 1 s bound (measured: 5 ms).
constexpr auto kServeLimit = LOCKWATCH_E2E_SANITIZED ? 2.5 : 1.0;
constexpr auto kGetGiveUp = LOCKWATCH_E2E_SANITIZED ? 3000ms : 1500ms;  // a poll waits no longer than this
const std::string kGood = "MonitorContention";

bool root() { return ::geteuid() == 0; }

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The state letter of /proc/PID/stat; '?' once the process is gone (reaped).
char process_state(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto paren = text.rfind(')');
  return paren != std::string::npos && text.size() > paren + 2 ? text[paren + 2] : '?';
}

/// SIGTERM, then waits (at most 20 s) until the process has exited: a zombie its Child then
/// reaps. A JVM ends this way removes its /tmp/.java_pid<pid> and hsperfdata file itself; a
/// SIGKILLed one leaves them behind.
void terminate(pid_t pid) {
  ::kill(pid, SIGTERM);
  for (const auto deadline = Clock::now() + 20s; Clock::now() < deadline;) {
    const char s = process_state(pid);
    if (s == 'Z' || s == '?') return;
    std::this_thread::sleep_for(20ms);
  }
}

/// A scenario JVM that is stopped with SIGTERM when it goes (see terminate()).
struct Jvm {
  std::unique_ptr<test::Child> proc;
  ~Jvm() {
    if (proc) terminate(proc->pid());
  }
  test::Child* operator->() const { return proc.get(); }
};

Jvm good_jvm(std::vector<std::string> flags = {}) { return Jvm{start_jvm(kGood, std::move(flags))}; }

/// tests/hostile/fake_jvm.cpp in one mode, READY. Stopped with SIGTERM when it goes: it then
/// kills and reaps its helpers (the decoy, fork's children, its janitor) and removes its files,
/// so no process or file outlives the test; Child's SIGKILL only reaps it afterwards.
class Fake {
 public:
  explicit Fake(std::vector<std::string> args) {
    // Its cwd is where lockwatch creates a trigger file: a scratch directory (removed with the
    // case), or /tmp/app of its own /tmp - never the test's cwd.
    static int fakes = 0;
    const bool placed = std::find(args.begin(), args.end(), "--cwd") != args.end() ||
                        std::find(args.begin(), args.end(), "--private-tmp") != args.end();
    if (!placed) args.insert(args.end(), {"--cwd", scratch("hostile-cwd-" + std::to_string(++fakes)).string()});
    args.insert(args.begin(), LOCKWATCH_FAKE_JVM);
    proc_ = std::make_unique<test::Child>(args);
    if (!proc_->wait_for_line("READY", 90s)) FAIL("the fake JVM did not get ready: " << proc_->output());
  }
  ~Fake() { stop(); }
  Fake(const Fake&) = delete;
  Fake& operator=(const Fake&) = delete;

  pid_t pid() const { return proc_->pid(); }
  test::Child& child() { return *proc_; }
  std::string spid() const { return std::to_string(pid()); }

  void stop() {
    if (!proc_ || stopped_) return;
    stopped_ = true;
    terminate(pid());
  }

 private:
  std::unique_ptr<test::Child> proc_;
  bool stopped_ = false;
};

/// Adds --private-tmp when we are root: the fake then has a /tmp of its own, like an app
/// container, which lockwatch sees only through /proc/PID/root/tmp, and works in /tmp/app
/// there. Otherwise it shares our /tmp (and works in a scratch directory).
std::vector<std::string> contained(std::vector<std::string> args) {
  if (root()) args.push_back("--private-tmp");
  return args;
}

std::string pid_list(const std::vector<pid_t>& pids) {
  std::string out;
  for (auto p : pids) out += (out.empty() ? "" : ", ") + std::to_string(p);
  return "[" + out + "]";
}

/// A config for the hostile cases: 200 ms interval, `timeout`, no incidents, exactly these
/// pids; `extra` adds whole top-level sections (limits:, analysis:, ring:...).
fs::path hostile_config(const std::string& name, const std::vector<pid_t>& pids, const std::string& extra = "",
                        const std::string& timeout = "1s") {
  const auto file = scratch("hostile-" + name) / "lockwatch.yaml";
  test::write_file(file, "interval: 200ms\ntimeout: " + timeout +
                             "\nincidents:\n  enabled: false\ntargets:\n  pids: " + pid_list(pids) +
                             "\n  rescan: 500ms\n" + extra);
  return file;
}

/// Reads whatever the daemon logged so far without blocking: a log pipe nobody reads fills
/// up and would stall the daemon itself, which the test would then blame on the attack.
void drain(test::Child& p) { p.wait_for_text(std::string("\x01\x02 never logged"), 0s); }

/// Polls the daemon's log for a line holding every one of `parts`.
bool log_says(test::Child& p, const std::vector<std::string>& parts, std::chrono::seconds timeout = 5s) {
  for (const auto deadline = Clock::now() + timeout;;) {
    drain(p);
    std::istringstream in(p.output());
    for (std::string line; std::getline(in, line);) {
      bool all = true;
      for (const auto& part : parts) all = all && line.find(part) != std::string::npos;
      if (all) return true;
    }
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(200ms);
  }
}

bool logged_failure(Daemon& d, const std::string& label, const std::string& outcome) {
  return log_says(*d.proc, {"msg=\"sampling failed\"", "target=" + label + " ", "outcome=" + outcome});
}

/// The scrape, or "" when the daemon does not answer within kGetGiveUp.
std::string scrape(const Daemon& d) {
  const auto r = timed_get(d.port, "/metrics", kGetGiveUp);
  return r.reply.status == 200 ? r.reply.body : "";
}

double samples(const std::string& scrape_text, const std::string& label, const std::string& result = "") {
  std::vector<std::string> labels{target(label)};
  if (!result.empty()) labels.push_back("result=\"" + result + "\"");
  return metric(scrape_text, "lockwatch_samples_total", labels).value_or(0);
}

/// Like eventually(), but drains the daemon's log while it waits.
bool until(Daemon& d, const std::function<bool()>& ok, std::chrono::seconds timeout = 20s) {
  for (const auto deadline = Clock::now() + timeout; Clock::now() < deadline;) {
    drain(*d.proc);
    if (ok()) return true;
    std::this_thread::sleep_for(200ms);
  }
  return ok();
}

/// What one attack window showed.
struct Observed {
  int requests = 0;
  int failed = 0;            // no 200 within kGetGiveUp
  double worst = 0;          // seconds, the slowest /metrics or /healthz
  std::string worst_what;
  std::uint64_t peak_kib = 0;
  double window = 0;         // seconds between the good JVM's first and last count
  double good_ok = 0;        // its ok samples in the window
  bool good_counted = false; // both ends of the window were scraped
  bool aborted = false;      // stopped early: RSS over the bound
  std::string note;

  double good_expected() const { return window / std::chrono::duration<double>(kInterval).count(); }
};

struct WatchOptions {
  std::chrono::seconds window = 10s;
  std::string good = kGood;                                    // "" when no good JVM runs
  std::uint64_t peak_limit_mib = 64;                           // the RSS bound
  std::function<void(const std::string& scrape_text)> each;    // more checks every round
};

// The window is measured between two scrapes that saw a new count (below); 2 s more keeps it
// as long as asked for although each end may wait up to a publication for its change.
WatchOptions watch(std::chrono::seconds window) {
  WatchOptions w;
  w.window = window + 2s;
  return w;
}

/// Polls /metrics and /healthz every ~300 ms for the window, timing each request, and
/// reads the daemon's VmHWM; stops early once the RSS passes twice its bound (the attack
/// has then proved its point, and the machine is shared).
/// A target is published at most once a second, so its count is read where it changed: the
/// window runs from the first scrape that saw a new count to the last, each within a poll
/// of its publication.
Observed observe(Daemon& d, const WatchOptions& w) {
  Observed o;
  std::optional<std::pair<Clock::time_point, double>> first, last;
  std::optional<double> seen;
  const auto end = Clock::now() + w.window;
  while (Clock::now() < end) {
    drain(*d.proc);
    std::string text;
    for (const char* path : {"/metrics", "/healthz"}) {
      const auto r = timed_get(d.port, path, kGetGiveUp);
      ++o.requests;
      if (r.reply.status != 200) ++o.failed;
      if (r.seconds > o.worst) o.worst = r.seconds, o.worst_what = std::string(path) + " -> " + std::to_string(r.reply.status);
      if (std::string(path) == "/metrics" && r.reply.status == 200) text = r.reply.body;
    }
    if (!w.good.empty() && !text.empty()) {
      const auto point = std::make_pair(Clock::now(), samples(text, w.good, "ok"));
      if (seen && point.second != *seen) (first ? last : first) = point;
      seen = point.second;
    }
    if (w.each) w.each(text);
    o.peak_kib = std::max(o.peak_kib, peak_rss_kib(d.proc->pid()).value_or(0));
    if (o.peak_kib > kRssGuard * w.peak_limit_mib * 1024) {
      o.aborted = true;
      o.note = "stopped early: the daemon's RSS passed " + std::to_string(kRssGuard * w.peak_limit_mib) + " MiB";
      break;
    }
    std::this_thread::sleep_for(300ms);
  }
  if (first && last) {
    o.good_counted = true;
    o.window = std::chrono::duration<double>(last->first - first->first).count();
    o.good_ok = last->second - first->second;
  }
  return o;
}

void check_served(const Observed& o) {
  INFO(o.requests << " requests; slowest " << o.worst << " s (" << o.worst_what << "); " << o.failed
                  << " without a 200 within " << kGetGiveUp.count() << " ms. " << o.note);
  CHECK(o.failed == 0);
  CHECK(o.worst < kServeLimit);
}

void check_good_jvm(const Observed& o) {
  INFO("the real JVM: " << o.good_ok << " ok samples in " << o.window << " s, " << o.good_expected()
                        << " expected at 200 ms. " << o.note);
  CHECK(o.good_counted);
  CHECK(o.window >= 4.0);
  CHECK(o.good_ok >= kGoodShare * o.good_expected() - 1);
}

void check_rss(const Observed& o, std::uint64_t limit_mib) {
#if LOCKWATCH_E2E_SANITIZED
  // Under AddressSanitizer the RSS is mostly its shadow memory and freed-block quarantine
  // (256 MiB by default), not lockwatch's: the bound is checked by the release build's run.
  WARN("ASan build: the daemon's VmHWM (" << o.peak_kib / 1024 << " MiB) is not checked against " << limit_mib << " MiB");
  return;
#endif
  INFO("the daemon's VmHWM: " << o.peak_kib / 1024 << " MiB, bound " << limit_mib << " MiB. " << o.note);
  CHECK(o.peak_kib < limit_mib * 1024);
}

void check_all(const Observed& o, const WatchOptions& w) {
  check_served(o);
  if (!w.good.empty()) check_good_jvm(o);
  check_rss(o, w.peak_limit_mib);
}

/// The real JVM has been sampled twice: the window measures it from here. A daemon that
/// has not answered three scrapes in a row is not waited for any longer.
void warm_up(Daemon& d, const std::string& good = kGood) {
  int silent = 0;
  CHECK(until(d, [&] {
    const auto r = timed_get(d.port, "/metrics", kGetGiveUp);
    silent = r.reply.status == 200 ? 0 : silent + 1;
    return silent >= 3 || samples(r.reply.body, good, "ok") >= 2;
  }, 15s));
  CHECK(silent < 3);
}

/// The entries of a directory that must stay empty (a canary).
std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) out.push_back(e.path().filename().string());
  return out;
}

/// Every stored sample of `label` not read yet, fetched through the API; the ids go to `seen`.
std::vector<std::string> new_samples(const Daemon& d, const std::string& label, std::set<std::uint64_t>& seen) {
  std::vector<std::string> texts;
  const auto list = timed_get(d.port, "/api/v1/targets/" + label + "/samples", kGetGiveUp);
  if (list.reply.status != 200) return texts;
  const std::regex id(R"("id":(\d+))");
  for (std::sregex_iterator it(list.reply.body.begin(), list.reply.body.end(), id), end; it != end; ++it) {
    const auto n = std::stoull((*it)[1].str());
    if (!seen.insert(n).second) continue;
    const auto text = timed_get(d.port, "/api/v1/targets/" + label + "/samples/" + std::to_string(n), kGetGiveUp);
    if (text.reply.status == 200) texts.push_back(text.reply.body);
  }
  return texts;
}

/// Declared first in every case, so it goes last. A child that outlived its parent (a fake
/// JVM's helper, after a failure that SIGKILLed the fake) comes to us instead of to init and
/// is reaped when the case ends; the case's scratch directories (canaries, configs, planted
/// files) are removed.
struct ReapOrphans {
  ReapOrphans() { ::prctl(PR_SET_CHILD_SUBREAPER, 1); }
  ~ReapOrphans() {
    for (const auto deadline = Clock::now() + 2s; Clock::now() < deadline;) {
      const pid_t p = ::waitpid(-1, nullptr, WNOHANG);
      if (p < 0) break;                       // no child left at all
      if (p == 0) std::this_thread::sleep_for(20ms);
    }
    const std::string suffix = "-" + std::to_string(::getpid());
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(fs::temp_directory_path(), ec)) {
      const auto name = e.path().filename().string();
      if (name.starts_with("lockwatch-e2e-hostile-") && name.ends_with(suffix)) fs::remove_all(e.path(), ec);
    }
  }
};

}  // namespace

// The control: honest fakes, one listening at once, one starting its listener on SIGQUIT with
// a trigger file as HotSpot does, are sampled like the real JVM next to them. Every check of
// the attack cases holds here on any daemon, so a failure there is the attack's doing, not
// the fake's or the harness's.
TEST_CASE("hostile: control - honest fake JVMs are sampled like a real one", "[e2e][hostile]") {
  ReapOrphans reaper;
  auto good = good_jvm();
  Fake at_once({"--mode", "ok", "--label", "honest"});
  Fake lazy(contained({"--mode", "ok", "--trigger", "--label", "honest-trigger"}));
  Daemon d({"--config", hostile_config("control", {at_once.pid(), lazy.pid(), good->pid()}).string()}, true);
  warm_up(d);
  const auto w = watch(6s);
  const auto o = observe(d, w);
  check_all(o, w);
  const auto text = scrape(d);
  for (const char* label : {"honest", "honest-trigger"}) {
    INFO(label);
    CHECK(samples(text, label, "ok") >= 10);
    CHECK(samples(text, label) == samples(text, label, "ok"));
    CHECK(metric(text, "lockwatch_lock_waiters", {target(label), "lock_class=\"Ledger\""}).value_or(-1) == 6.0);
    CHECK(metric(text, "lockwatch_jvm_threads_live", {target(label)}).value_or(-1) == 8.0);
  }
  CHECK(lazy.child().output().find("SIGQUIT without") == std::string::npos);  // the trigger was found
}

// 1. The trigger file is opened for writing: a FIFO with no reader used to block the daemon's
// only I/O thread in open(), so nothing was served any more.
TEST_CASE("hostile: a FIFO planted as the attach trigger - untrusted, the daemon never freezes", "[e2e][hostile]") {
  ReapOrphans reaper;
  auto good = good_jvm();
  Fake fake(contained({"--mode", "fifo-trigger", "--label", "fifo-trigger"}));
  Daemon d({"--config", hostile_config("fifo", {fake.pid(), good->pid()}).string()}, true);
  warm_up(d);
  const auto w = watch(8s);
  const auto o = observe(d, w);
  check_all(o, w);
  CHECK(samples(scrape(d), "fifo-trigger", "untrusted") >= 1);
  CHECK(logged_failure(d, "fifo-trigger", "untrusted"));
}

// 2a. A symlink as the trigger file was followed in lockwatch's own filesystem: the target
// chose where lockwatch (often root) created a file.
TEST_CASE("hostile: a symlink planted as the attach trigger - untrusted, nothing created at its target", "[e2e][hostile]") {
  ReapOrphans reaper;
  if (!root()) WARN("not root: the fake shares our /tmp (no --private-tmp); the symlink still points into our canary");
  auto good = good_jvm();
  const auto canary = scratch("hostile-canary-trigger");
  Fake fake(contained({"--mode", "symlink-trigger", "--label", "symlink-trigger", "--link-target",
                       (canary / "escaped").string()}));
  Daemon d({"--config", hostile_config("symlink", {fake.pid(), good->pid()}).string()}, true);
  warm_up(d);
  std::vector<std::string> found;
  auto w = watch(8s);
  w.each = [&](const std::string&) {
    if (found.empty()) found = entries(canary);
  };
  const auto o = observe(d, w);
  check_all(o, w);
  INFO("created in the canary directory " << canary << ": " << (found.empty() ? "nothing" : found.front()));
  CHECK(found.empty());
  CHECK(entries(canary).empty());
  CHECK(samples(scrape(d), "symlink-trigger", "untrusted") >= 1);
  CHECK(logged_failure(d, "symlink-trigger", "untrusted"));
}

// 2b. hsperfdata is read on every tick from the path found at discovery: a /tmp/hsperfdata_<user>
// directory swapped for a symlink afterwards made lockwatch read a file outside the target.
TEST_CASE("hostile: the hsperfdata directory swapped for a symlink - the file outside is never read", "[e2e][hostile]") {
  if (!root()) {
    test::skip("the perfdata-swap attack needs root (the fake's own /tmp in a mount namespace)");
    return;
  }
  ReapOrphans reaper;
  auto good = good_jvm();
  const auto planted = scratch("hostile-planted-perfdata");
  Fake fake({"--mode", "perfdata-swap", "--private-tmp", "--label", "perfdata-swap", "--link-target", planted.string(),
             "--threads-live", "11"});
  // The counter file a symlink would lead to: the same name, a value nobody else publishes.
  const auto r = test::run_command({LOCKWATCH_FAKE_JVM, "--mode", "write-perfdata", "--out", (planted / fake.spid()).string(),
                                    "--threads-live", "424242"}, 30s);
  REQUIRE(r.exit_code == 0);
  Daemon d({"--config", hostile_config("perfdata", {fake.pid(), good->pid()}).string()}, true);
  const auto live = [&](const std::string& text) {
    return metric(text, "lockwatch_jvm_threads_live", {target("perfdata-swap")}).value_or(-1);
  };
  REQUIRE(until(d, [&] { return live(scrape(d)) == 11.0; }));  // its own file, read through its root
  warm_up(d);
  ::kill(fake.pid(), SIGUSR1);
  REQUIRE(fake.child().wait_for_line("SWAPPED", 10s));
  bool leaked = false;
  auto w = watch(6s);
  w.each = [&](const std::string& text) { leaked = leaked || live(text) == 424242.0; };
  const auto o = observe(d, w);
  check_all(o, w);
  INFO("lockwatch_jvm_threads_live{target=\"perfdata-swap\"} showed 424242, the planted file's value");
  CHECK_FALSE(leaked);
  CHECK(live(scrape(d)) != 424242.0);
}

// 3. The socket was checked, then connected to by name: a swap in between (a hard link of a
// decoy's socket renamed over it, or a symlink to a socket in lockwatch's own /tmp) made
// lockwatch store another process's "dumps" as the target's.
TEST_CASE("hostile: the attach socket swapped for a decoy - no decoy dump is ever stored", "[e2e][hostile]") {
  ReapOrphans reaper;
  auto good = good_jvm();
  // A: a forked child (another pid) serves "DECOY" dumps and renames hard links of its socket
  // and ours over /tmp/.java_pid<pid> in turn.
  Fake links({"--mode", "socket-swap", "--label", "swap-link", "--swap-us", "3000"});
  std::vector<pid_t> pids{links.pid(), good->pid()};
  std::vector<std::string> labels{"swap-link"};
  // B (root): its own /tmp, where the name also becomes, for 50 us at a time, a symlink to a
  // socket in OUR /tmp serving "DECOY-HOST" dumps.
  std::unique_ptr<Fake> host_decoy, symlinks;
  if (root()) {
    const auto sock = scratch("hostile-decoy") / "decoy.sock";
    host_decoy = std::make_unique<Fake>(std::vector<std::string>{"--mode", "decoy", "--socket", sock.string(), "--marker", "DECOY-HOST"});
    symlinks = std::make_unique<Fake>(std::vector<std::string>{"--mode", "socket-swap", "--private-tmp", "--label", "swap-symlink",
                                                               "--decoy", sock.string(), "--swap-us", "50"});
    pids.push_back(symlinks->pid());
    labels.push_back("swap-symlink");
  } else {
    WARN("not root: only the hard-link swap runs (the symlink swap needs the fake's own /tmp)");
  }
  Daemon d({"--config", hostile_config("swap", pids).string()}, true);
  warm_up(d);
  std::map<std::string, std::set<std::uint64_t>> seen;
  std::map<std::string, int> decoys, host_decoys;
  auto w = watch(10s);
  w.each = [&](const std::string&) {
    for (const auto& label : labels)
      for (const auto& text : new_samples(d, label, seen[label])) {
        decoys[label] += text.find("DECOY") != std::string::npos;
        host_decoys[label] += text.find("DECOY-HOST") != std::string::npos;
      }
  };
  const auto o = observe(d, w);
  w.each("");
  check_all(o, w);
  const auto text = scrape(d);
  for (const auto& label : labels) {
    INFO(label << ": " << seen[label].size() << " stored samples read, " << decoys[label] << " of them a decoy's ("
               << host_decoys[label] << " from the socket in our own /tmp)");
    CHECK(decoys[label] == 0);
    CHECK(samples(text, label, "untrusted") >= 1);
  }
  CHECK(logged_failure(d, "swap-link", "untrusted"));
}

// 4a. An attach reply had no size limit: a target streaming thread entries at full speed
// grew the daemon by hundreds of MiB per second.
TEST_CASE("hostile: an endless attach reply - too_large, the daemon's memory bounded", "[e2e][hostile]") {
  ReapOrphans reaper;
  auto good = good_jvm();
  Fake fake({"--mode", "endless", "--label", "endless"});
  Daemon d({"--config", hostile_config("endless", {fake.pid(), good->pid()}, "limits:\n  max_reply_bytes: 4MiB\n").string()}, true);
  warm_up(d);
  auto w = watch(8s);
  w.peak_limit_mib = 64;  // 4 MiB replies: the daemon itself is about 10 MiB
  const auto o = observe(d, w);
  fake.stop();
  check_all(o, w);
  CHECK(samples(scrape(d), "endless", "too_large") >= 1);
  CHECK(logged_failure(d, "endless", "too_large"));
}

// 4b. One 256 MiB line was accepted whole (and copied): gigabytes of RSS for one sample.
TEST_CASE("hostile: one 256 MiB line in a reply - too_large at the default limits, memory bounded", "[e2e][hostile]") {
  ReapOrphans reaper;
  auto good = good_jvm();
  Fake fake({"--mode", "huge-line", "--label", "huge-line"});
  // Default limits (32 MiB replies, 64 KiB lines); 2 s lets even a loaded machine send 32 MiB.
  Daemon d({"--config", hostile_config("huge-line", {fake.pid(), good->pid()}, "", "2s").string()}, true);
  warm_up(d);
  auto w = watch(8s);
  w.peak_limit_mib = 160;  // one 32 MiB reply and its copies, with room to spare
  const auto o = observe(d, w);
  fake.stop();
  check_all(o, w);
  CHECK(samples(scrape(d), "huge-line", "too_large") >= 1);
  CHECK(logged_failure(d, "huge-line", "too_large"));
}

// 5. 20 000 BLOCKED threads per dump (a 4 MB reply) were parsed, stored and correlated
// every 200 ms: past limits.max_threads it must be too_large.
TEST_CASE("hostile: 20 000 threads per dump - too_large past limits.max_threads, memory bounded", "[e2e][hostile]") {
  ReapOrphans reaper;
  auto good = good_jvm();
  Fake fake({"--mode", "many-threads", "--threads", "20000", "--label", "many-threads"});
  Daemon d({"--config", hostile_config("many-threads", {fake.pid(), good->pid()},
                                       "limits:\n  max_threads: 10000\nanalysis:\n  max_bytes: 8MiB\n", "2s").string()},
           true);
  warm_up(d);
  auto w = watch(8s);
  w.peak_limit_mib = 64;
  const auto o = observe(d, w);
  check_all(o, w);
  const auto text = scrape(d);
  CHECK(samples(text, "many-threads", "too_large") >= 1);
  CHECK(samples(text, "many-threads", "ok") == 0);
  CHECK(logged_failure(d, "many-threads", "too_large"));
}

// 6. 200 000 "- locked" lines in one thread made processing quadratic: the processing thread,
// shared by every target, was busy for minutes per sample.
TEST_CASE("hostile: 200 000 locks held by one thread - processed quickly, the real JVM unharmed", "[e2e][hostile]") {
  ReapOrphans reaper;
  auto good = good_jvm();
  Fake fake({"--mode", "nested-locks", "--locks", "200000", "--label", "nested-locks"});
  Daemon d({"--config", hostile_config("nested-locks", {fake.pid(), good->pid()}, "", "2s").string()}, true);
  warm_up(d);
  const double before = samples(scrape(d), "nested-locks");
  auto w = watch(10s);
  w.peak_limit_mib = 256;  // a 9 MB reply, parsed
  const auto o = observe(d, w);
  const double processed = samples(scrape(d), "nested-locks") - before;
  check_all(o, w);
  INFO("samples of the 200 000-lock target processed in the " << w.window.count() << " s window: " << processed);
  // Each within 2 s. The target is paced by what its samples cost to process (3x): the
  // sanitized daemon parses several times slower, so it processes fewer of them.
  CHECK(processed >= (LOCKWATCH_E2E_SANITIZED ? 2 : 5));
}

// 7a. Every process with an hsperfdata file became a target: 2 000 forks of the app pushed the
// real JVM out of its samples.
TEST_CASE("hostile: 2 000 forked processes with hsperfdata files - at most targets.max, the real JVM kept", "[e2e][hostile]") {
  ReapOrphans reaper;
  const std::string marker = "-Dlockwatch.e2e.hostile.fork=" + std::to_string(::getpid());
  auto good = good_jvm({marker});
  const auto file = scratch("hostile-fork") / "lockwatch.yaml";
  // Log level error: 2 000 "target added" lines would only measure the log pipe.
  test::write_file(file, "interval: 200ms\ntimeout: 1s\nincidents:\n  enabled: false\nlog:\n  level: error\n"
                         "targets:\n  match: \"" + marker + "\"\n  rescan: 300ms\n  max: 16\n");
  Daemon d({"--config", file.string()});
  warm_up(d);
  // Its own /tmp when root: the trigger files lockwatch may create for 2 000 "JVMs" stay there.
  Fake fake(contained({"--mode", "fork", "--children", "2000", "--label", "fork-bomb", marker}));
  std::size_t most = 0;
  bool good_listed = true;
  const std::regex entry(R"("target":")");
  auto w = watch(10s);
  w.peak_limit_mib = 128;
  w.each = [&](const std::string&) {
    const auto list = timed_get(d.port, "/api/v1/targets", kGetGiveUp);
    if (list.reply.status != 200) return;
    const auto n = static_cast<std::size_t>(std::distance(
        std::sregex_iterator(list.reply.body.begin(), list.reply.body.end(), entry), std::sregex_iterator()));
    most = std::max(most, n);
    good_listed = good_listed && list.reply.body.find("\"target\":\"" + kGood + "\"") != std::string::npos;
  };
  const auto o = observe(d, w);
  fake.stop();
  check_all(o, w);
  INFO("the most targets listed at once: " << most);
  CHECK(most >= 2);  // the fake's processes were seen at all
  CHECK(most <= 16);
  CHECK(good_listed);
}

// 7b. Three targets that accept, read the request and never answer held both dump slots
// (max_concurrent_dumps 2) for their whole timeout, again and again.
TEST_CASE("hostile: three stalling targets - the real JVM keeps its samples", "[e2e][hostile]") {
  ReapOrphans reaper;
  auto good = good_jvm();
  Fake a({"--mode", "stall", "--label", "stall-a"});
  Fake b({"--mode", "stall", "--label", "stall-b"});
  Fake c({"--mode", "stall", "--label", "stall-c"});
  Daemon d({"--config", hostile_config("stall", {a.pid(), b.pid(), c.pid(), good->pid()}, "", "2s").string()}, true);
  warm_up(d);
  auto w = watch(12s);
  const auto o = observe(d, w);
  check_all(o, w);
  const auto text = scrape(d);
  for (const char* label : {"stall-a", "stall-b", "stall-c"}) {
    INFO(label);
    CHECK(samples(text, label, "timeout") >= 1);
    CHECK(samples(text, label, "ok") == 0);
  }
  CHECK(logged_failure(d, "stall-a", "timeout"));
}

// 7c. A 70 KB thread name made its thread vanish from the counts: a line over the parser's
// line limit was dropped instead of shortened.
TEST_CASE("hostile: lockwatch dump of a reply without a dump - parse_error, nothing printed", "[e2e][hostile]") {
  Fake fake({"--mode", "not-a-dump"});
  const auto r = test::run_command({LOCKWATCH_BINARY, "dump", "--pid", fake.spid()}, 60s);
  INFO(r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.out.empty());  // held until the parser decided, so none of it reached stdout
  CHECK(r.err.find("parse_error: attach answered") != std::string::npos);
  CHECK(r.err.find("without a thread dump: '2026-12-01 12:00:00 INFO [worker-0]") != std::string::npos);
  Fake honest({"--mode", "ok"});  // the control: the same command prints a dump
  const auto ok = test::run_command({LOCKWATCH_BINARY, "dump", "--pid", honest.spid()}, 60s);
  CHECK(ok.exit_code == 0);
  CHECK(ok.out.find("Full thread dump") != std::string::npos);
  CHECK(ok.out.find("\"fake-exec-0\"") != std::string::npos);
}

TEST_CASE("hostile: a 70 KB thread name - the thread is still counted", "[e2e][hostile]") {
  ReapOrphans reaper;
  auto good = good_jvm();
  Fake fake({"--mode", "long-name", "--name-bytes", "70000", "--threads", "6", "--label", "long-name"});
  Daemon d({"--config", hostile_config("long-name", {fake.pid(), good->pid()}).string()}, true);
  warm_up(d);
  CHECK(until(d, [&] { return samples(scrape(d), "long-name", "ok") >= 3; }));
  auto w = watch(5s);
  const auto o = observe(d, w);
  check_all(o, w);
  const auto text = scrape(d);
  const auto t = target("long-name");
  INFO("6 waiters named fake-exec-N and one whose name is 70 000 bytes, all BLOCKED on one Ledger");
  CHECK(metric(text, "lockwatch_threads", {t, "state=\"BLOCKED\""}).value_or(-1) == 7.0);
  CHECK(metric(text, "lockwatch_lock_waiters", {t, "lock_class=\"Ledger\"", "site=\"Ledger.post\""}).value_or(-1) == 7.0);
}

// A reply dropped as too_large must not harm a real JVM: JDK 25 streams the reply while it
// produces the dump at a safepoint, so a reader that stops reading without closing holds
// every application thread stopped. ThreadCrowd's pulse thread prints the time every 100 ms.
TEST_CASE("hostile: a real JDK 25 JVM whose replies are too_large - never left at a safepoint", "[e2e][hostile][jvm]") {
  const fs::path jdk25 = LOCKWATCH_JDK25_HOME;
  if (!fs::exists(jdk25 / "bin" / "java") || !fs::exists(fs::path(LOCKWATCH_SCENARIO_CLASSES) / "jdk25" / "ThreadCrowd.class")) {
    test::skip("no Temurin 25 at " + jdk25.string() + " (or its scenario classes were not compiled)");
    return;
  }
  ReapOrphans reaper;
  Jvm jvm{start_jvm_of(jdk25.string(), "jdk25", "ThreadCrowd", {}, {"300", "2000"})};  // ~3 MB per dump
  const auto file = scratch("hostile-jdk25") / "lockwatch.yaml";
  test::write_file(file, "interval: 500ms\ntimeout: 5s\nincidents:\n  enabled: false\nlimits:\n  max_reply_bytes: 64KiB\n"
                         "targets:\n  pids: [" + std::to_string(jvm->pid()) + "]\n");
  Daemon d({"--config", file.string()}, true);
  const auto system_ms = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  };
  // Let it be sampled a few times first (each sample too_large once the limit holds).
  CHECK(until(d, [&] {
    jvm->wait_for_text("\x01 never printed", 0s);
    return samples(scrape(d), "ThreadCrowd") >= 2;
  }, 30s));
  const auto from_ms = system_ms();
  auto w = watch(8s);
  w.good = "";
  w.each = [&](const std::string&) { jvm->wait_for_text("\x01 never printed", 0s); };
  const auto o = observe(d, w);
  const auto to_ms = system_ms();
  check_all(o, w);
  const auto text = scrape(d);
  CHECK(samples(text, "ThreadCrowd", "too_large") >= 3);
  CHECK(samples(text, "ThreadCrowd", "ok") == 0);
  CHECK(logged_failure(d, "ThreadCrowd", "too_large"));

  // Its application threads ran throughout: no gap between two pulses longer than 1.5 s
  // (a normal dump of these 2 000 threads stops it for about 0.3 s).
  const auto pulses = [&] {
    std::vector<long long> t;
    const std::regex pulse(R"(PULSE \d+ (\d+))");
    const auto& out = jvm->output();
    for (std::sregex_iterator it(out.begin(), out.end(), pulse), end; it != end; ++it) t.push_back(std::stoll((*it)[1].str()));
    return t;
  };
  long long worst_gap = 0, count = 0;
  const auto seen = pulses();
  for (std::size_t i = 1; i < seen.size(); ++i)
    if (seen[i] >= from_ms && seen[i - 1] <= to_ms) worst_gap = std::max(worst_gap, seen[i] - seen[i - 1]), ++count;
  INFO(count << " pulses in the window, the longest gap " << worst_gap << " ms");
  CHECK(count >= 40);
  CHECK(worst_gap < 1500);

  // And it still answers a normal dump promptly, with every thread in it.
  const auto start = Clock::now();
  const auto dump = test::run_command({(jdk25 / "bin" / "jcmd").string(), std::to_string(jvm->pid()), "Thread.print"}, 60s);
  const double took = seconds_since(start);
  INFO("jcmd Thread.print: exit " << dump.exit_code << " after " << took << " s; " << dump.err.substr(0, 300));
  CHECK(dump.exit_code == 0);
  CHECK(took < 15.0);
  CHECK(dump.out.find("crowd-worker-2000") != std::string::npos);
  const auto after = pulses().size();
  CHECK(jvm->wait_for_text("PULSE " + std::to_string(after + 2) + " ", 5s));
}

// The reply streams into the parser and the ring as it is read: a 20 000-thread honest reply
// (7.8 MB, over a hundred 64 KiB reads) is still stored whole - every sample is the reply,
// thread for thread - and analysed as one dump.
TEST_CASE("hostile: control - a 20 000-thread honest reply streams into the ring whole", "[e2e][hostile]") {
  ReapOrphans reaper;
  Fake big({"--mode", "ok", "--threads", "20000", "--label", "big-honest"});
  Daemon d({"--config", hostile_config("big-honest", {big.pid()}, "", "5s").string()}, true);
  REQUIRE(until(d, [&] { return samples(scrape(d), "big-honest", "ok") >= 2; }, 60s));
  std::set<std::uint64_t> seen;
  const auto texts = new_samples(d, "big-honest", seen);
  REQUIRE(texts.size() >= 2);
  for (const auto& text : texts) {
    CHECK(text == texts.front());  // the fake answers the same reply every time
    std::size_t entries = 0;
    for (std::size_t at = 0; at < text.size(); at = text.find('\n', at) + 1) {
      if (text[at] == '"') ++entries;
      if (text.find('\n', at) == std::string::npos) break;
    }
    CHECK(entries == 20'002);  // main, the holder and 20 000 threads blocked on it
    CHECK(text.find("JNI global refs") != std::string::npos);  // to its last line
  }
  const auto scraped = scrape(d);
  CHECK(samples(scraped, "big-honest") == samples(scraped, "big-honest", "ok"));
  CHECK(metric(scraped, "lockwatch_lock_waiters", {target("big-honest"), "lock_class=\"Ledger\""}).value_or(-1) == 20'000.0);
}
