// SPDX-License-Identifier: Apache-2.0
// The jstack backend against real JVMs: JDK 17 and, when installed, Temurin 25, each dumped
// by its own jstack; every failure outcome produced by a real process, not a fake.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "lockwatch/parser/dump_parser.hpp"
#include "lockwatch/sampling/jstack_source.hpp"
#include "lockwatch/sampling/proc.hpp"
#include "process.hpp"
#include "skip.hpp"
#include "test_support.hpp"

using namespace lockwatch;
using namespace std::chrono_literals;
using sampling::DumpRequest;
using sampling::DumpRecord;
using sampling::Outcome;
namespace fs = std::filesystem;

#ifndef LOCKWATCH_JDK17_HOME
#define LOCKWATCH_JDK17_HOME "/usr/lib/jvm/java-17-openjdk-amd64"
#endif
#ifndef LOCKWATCH_JDK25_HOME
#define LOCKWATCH_JDK25_HOME "/usr/lib/jvm/temurin-25-jdk-amd64"
#endif

namespace {

// Above Linux's PID_MAX_LIMIT (2^22): no process can have it, so no test signals a stranger.
constexpr int kNoSuchPid = 4'194'305;

struct Jdk {
  std::string name;
  fs::path home;
  fs::path classes;
  std::string jstack() const { return (home / "bin" / "jstack").string(); }
};

/// JDK 17 always; Temurin 25 when it and its compiled scenarios are there.
std::vector<Jdk> jdks() {
  const fs::path classes = LOCKWATCH_SCENARIO_CLASSES;
  INFO("compile the scenarios first: tests/integration/compile_scenarios.sh " << classes.string()
                                                                            << " JDK17_HOME [JDK25_HOME]");
  REQUIRE(fs::exists(classes / "jdk17" / "MonitorContention.class"));
  std::vector<Jdk> out{{"jdk17", LOCKWATCH_JDK17_HOME, classes / "jdk17"}};
  if (fs::exists(fs::path(LOCKWATCH_JDK25_HOME) / "bin" / "jstack") && fs::exists(classes / "jdk25"))
    out.push_back({"jdk25", LOCKWATCH_JDK25_HOME, classes / "jdk25"});
  else
    WARN("SKIPPED on JDK 25: no Temurin 25 (or its compiled scenarios) at " LOCKWATCH_JDK25_HOME);
  return out;
}

/// A scenario JVM, killed on destruction, after which the files named after its pid go too:
/// a SIGKILLed JVM leaves /tmp/.java_pidN and its hsperfdata, a killed jstack leaves
/// .attach_pidN in the JVM's working directory (ours: possibly the source tree).
class Jvm {
 public:
  explicit Jvm(const std::vector<std::string>& argv) : child_(std::make_unique<test::Child>(argv)) {}
  Jvm(const Jvm&) = delete;
  Jvm& operator=(const Jvm&) = delete;
  ~Jvm() {
    const std::string pid = std::to_string(child_->pid());
    child_.reset();
    std::error_code ignored;
    for (const fs::path& file : {fs::current_path(ignored) / (".attach_pid" + pid), fs::path("/tmp/.attach_pid" + pid),
                                 fs::path("/tmp/.java_pid" + pid)})
      fs::remove(file, ignored);
    for (const auto& dir : fs::directory_iterator("/tmp", ignored))  // hsperfdata_<user>/<pid>
      if (dir.path().filename().string().rfind("hsperfdata_", 0) == 0) fs::remove(dir.path() / pid, ignored);
  }
  int pid() const { return child_->pid(); }
  test::Child& child() { return *child_; }

 private:
  std::unique_ptr<test::Child> child_;
};

/// MonitorContention on `jdk`: `argv` comes before java (setpriv), `flags` after it.
std::unique_ptr<Jvm> start_jvm(const Jdk& jdk, const std::vector<std::string>& flags = {},
                               std::vector<std::string> argv = {}) {
  argv.push_back((jdk.home / "bin" / "java").string());
  argv.insert(argv.end(), flags.begin(), flags.end());
  for (const auto& a : {std::string("-Xmx64m"), std::string("-cp"), jdk.classes.string(),
                        std::string("MonitorContention"), std::string("120")})
    argv.push_back(a);
  auto jvm = std::make_unique<Jvm>(argv);
  if (!jvm->child().wait_for_line("READY", 60s))
    FAIL(jdk.name << " MonitorContention printed no READY: " << jvm->child().output());
  return jvm;
}

/// A directory of this test run, removed with everything in it.
struct TempDir {
  fs::path path = fs::temp_directory_path() / ("lockwatch-jstack-test-" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

DumpRequest request(int pid, bool locks, std::chrono::milliseconds timeout = 60s) {
  DumpRequest r;
  r.pid = pid;
  r.locks = locks;
  r.timeout = timeout;
  return r;
}

/// Reads what the JVM prints for `how_long` (waits for a line it never prints).
const std::string& printed_within(test::Child& jvm, std::chrono::seconds how_long) {
  jvm.wait_for_line("lockwatch test: a line no scenario prints", how_long);
  return jvm.output();
}

/// Our direct children, from /proc: pid -> state letter ('Z' is an unreaped zombie).
std::map<int, char> our_children() {
  std::map<int, char> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line) || line.rfind(')') == std::string::npos) continue;
    std::istringstream rest(line.substr(line.rfind(')') + 1));  // the name may hold spaces and ')'
    char state = '?';
    int ppid = 0;
    if (rest >> state >> ppid && ppid == ::getpid()) out[std::stoi(name)] = state;
  }
  return out;
}

std::size_t open_fds() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& fd : fs::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

std::string describe(const std::map<int, char>& children) {
  std::string out;
  for (const auto& [pid, state] : children) out += std::to_string(pid) + ":" + state + " ";
  return out;
}

int blocked_threads(const model::ThreadDump& dump) {
  int n = 0;
  for (const auto& t : dump.threads) n += t.state == model::ThreadState::blocked ? 1 : 0;
  return n;
}

/// Checks an ok dump: jstack's own text, one complete dump with the contention in it.
void check_contention_dump(const DumpRecord& r, bool locks) {
  INFO("outcome " << sampling::to_string(r.outcome) << ", error: " << r.error);
  REQUIRE(r.outcome == Outcome::ok);
  CHECK(r.error.empty());
  // Nothing before the dump: a timestamp line, then the header, exactly as jstack prints it.
  CHECK(r.text.find("Full thread dump") == r.text.find('\n') + 1);
  const auto dumps = parser::parse_dumps(r.text);
  REQUIRE(dumps.size() == 1);
  CHECK(dumps[0].stats.has_header);
  CHECK(dumps[0].stats.complete);
  CHECK_FALSE(dumps[0].timestamp.empty());
  CHECK(blocked_threads(dumps[0]) >= 5);
  CHECK(dumps[0].synchronizers_listed == locks);
  CHECK((r.text.find("Locked ownable synchronizers") != std::string::npos) == locks);
}

}  // namespace

TEST_CASE("jstack: a contended JVM dumps ok, with and without -l", "[jstack][jvm]") {
  for (const auto& jdk : jdks()) {
    INFO(jdk.name);
    auto jvm = start_jvm(jdk);
    check_contention_dump(sampling::jstack_dump(request(jvm->pid(), false), jdk.jstack()), false);
    check_contention_dump(sampling::jstack_dump(request(jvm->pid(), true), jdk.jstack()), true);
  }
}

TEST_CASE("jstack: a pid that does not exist is target_gone, quickly", "[jstack][jvm]") {
  for (const auto& jdk : jdks()) {
    const auto r = sampling::jstack_dump(request(kNoSuchPid, false, 30s), jdk.jstack());
    INFO(jdk.name << " error: " << r.error);
    CHECK(r.outcome == Outcome::target_gone);
    CHECK(r.elapsed < 10s);  // jstack's start-up, not the deadline
    CHECK(r.error.find(std::to_string(kNoSuchPid)) != std::string::npos);
    CHECK(r.text.empty());
  }
  // Not a pid at all: refused before jstack could read it as a main-class pattern.
  CHECK(sampling::jstack_dump(request(0, false), jdks().front().jstack()).outcome == Outcome::target_gone);
}

// A pod's init that has not waited for its JVM yet leaves a zombie: its pid still answers
// kill(2) and has a /proc entry, so jstack signals it and waits for an attach socket that
// never comes. The JVM is gone, whether jstack gives up first (it exits 1 after ~10 s on
// JDK 17, ~6 s on JDK 25) or the deadline does; neither is an attach refusal.
TEST_CASE("jstack: a JVM that exited but is not reaped yet (a zombie) is target_gone", "[jstack][jvm]") {
  const pid_t zombie = ::fork();
  if (zombie == 0) ::_exit(0);
  REQUIRE(zombie > 0);
  struct Reap {
    pid_t pid;
    ~Reap() { ::waitpid(pid, nullptr, 0); }
  } reap{zombie};
  const auto state = [proc = sampling::ProcFs{}, zombie] { return proc.status(zombie).value_or(sampling::ProcStatus{}).state; };
  for (int i = 0; i < 200 && state() != 'Z'; ++i) std::this_thread::sleep_for(10ms);
  REQUIRE(state() == 'Z');
  REQUIRE(::kill(zombie, 0) == 0);  // what made it look alive
  for (const auto& jdk : jdks()) {
    const auto r = sampling::jstack_dump(request(zombie, false, 60s), jdk.jstack());
    INFO(jdk.name << " error: " << r.error);
    CHECK(r.outcome == Outcome::target_gone);
    CHECK(r.error.find(std::to_string(zombie)) != std::string::npos);
  }
  const auto cut = sampling::jstack_dump(request(zombie, false, 2s), jdks().front().jstack());
  INFO("deadline first: " << cut.error);
  CHECK(cut.outcome == Outcome::target_gone);
  CHECK(cut.error.find("exited while jstack ran") != std::string::npos);
}

TEST_CASE("jstack: -XX:+DisableAttachMechanism is attach_refused, and the JVM prints no dump", "[jstack][jvm]") {
  for (const auto& jdk : jdks()) {
    auto jvm = start_jvm(jdk, {"-XX:+DisableAttachMechanism"});
    const auto r = sampling::jstack_dump(request(jvm->pid(), true, 30s), jdk.jstack());
    INFO(jdk.name << " error: " << r.error);
    CHECK(r.outcome == Outcome::attach_refused);
    CHECK(r.error.find("DisableAttachMechanism") != std::string::npos);
    // A SIGQUIT fallback would make the JVM print a dump into its own stdout (the app's log).
    const std::string& printed = printed_within(jvm->child(), 2s);
    INFO("the JVM printed: " << printed);
    CHECK(printed.find("Full thread dump") == std::string::npos);
    CHECK(printed.find("JNI global refs") == std::string::npos);
  }
}

TEST_CASE("jstack: a JVM of another user is attach_refused, naming its uid and gid", "[jstack][jvm]") {
  if (::geteuid() != 0 || !fs::exists("/usr/bin/setpriv")) {
    lockwatch::test::skip("needs root and setpriv to run the JVM and jstack as two other users");
    return;
  }
  const TempDir dir;
  for (auto jdk : jdks()) {
    INFO(jdk.name);
    // The JVM runs as 65534: its classes must be readable wherever the checkout is.
    const test::ReadableCopy classes(jdk.classes, "jstack-" + jdk.name);
    jdk.classes = classes.path();
    auto jvm = start_jvm(jdk, {}, {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"});
    // jstack as uid/gid 65533: the tool path must be one executable, so a wrapper drops the ids.
    const fs::path wrapper = dir.path / ("jstack-as-65533-" + jdk.name);
    std::ofstream(wrapper) << "#!/bin/sh\nexec setpriv --reuid=65533 --regid=65533 --clear-groups " << jdk.jstack()
                           << " \"$@\"\n";
    fs::permissions(wrapper, fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec);
    const auto r = sampling::jstack_dump(request(jvm->pid(), false, 30s), wrapper.string());
    INFO("error: " << r.error);
    CHECK(r.outcome == Outcome::attach_refused);
    CHECK(r.error.find("uid 65534, gid 65534") != std::string::npos);
  }
}

TEST_CASE("jstack: a stopped JVM times out, jstack is reaped, and dumps again after SIGCONT", "[jstack][jvm]") {
  for (const auto& jdk : jdks()) {
    INFO(jdk.name);
    auto jvm = start_jvm(jdk);
    REQUIRE(test::stop_process(jvm->pid()));  // our own child
    const auto r = sampling::jstack_dump(request(jvm->pid(), false, 2s), jdk.jstack());
    INFO("error: " << r.error);
    CHECK(r.outcome == Outcome::timeout);
    CHECK(r.elapsed >= 2s);
    CHECK(r.elapsed < 3500ms);
    const auto children = our_children();  // jstack gone and reaped: only the JVM is left
    INFO("our children: " << describe(children));
    CHECK(children.size() == 1);
    CHECK(children.count(jvm->pid()) == 1);
    REQUIRE(::kill(jvm->pid(), SIGCONT) == 0);
    check_contention_dump(sampling::jstack_dump(request(jvm->pid(), false, 60s), jdk.jstack()), false);
  }
}

TEST_CASE("jstack: a missing or unusable jstack is tool_failed", "[jstack]") {
  for (const std::string path : {"/nonexistent/bin/jstack", "", "/tmp"}) {
    const auto r = sampling::jstack_dump(request(::getpid(), false), path);
    INFO("path '" << path << "' error: " << r.error);
    CHECK(r.outcome == Outcome::tool_failed);
    CHECK(r.error.find("install a JDK or set JAVA_HOME") != std::string::npos);
  }
  // The asynchronous form reports it on the io_context, never from inside the call.
  boost::asio::io_context io;
  int calls = 0;
  sampling::async_jstack_dump(io, request(::getpid(), false), "/nonexistent/bin/jstack", [&](DumpRecord) { ++calls; });
  CHECK(calls == 0);
  io.run();
  CHECK(calls == 1);
}

TEST_CASE("jstack: a tool that is not jstack is tool_failed, or answers no dump", "[jstack]") {
  // Whether the text is a dump is the parser's to say (the service makes an empty or
  // foreign text parse_error, as for the attach backend): the backend reports what ran.
  const auto silent = sampling::jstack_dump(request(::getpid(), false), "/bin/true");
  INFO("true: " << silent.error);
  CHECK(silent.outcome == Outcome::ok);
  CHECK(silent.text.empty());
  CHECK(silent.source == sampling::DumpSource::jstack);
  const auto failing = sampling::jstack_dump(request(::getpid(), false), "/bin/false");
  INFO("false: " << failing.error);
  CHECK(failing.outcome == Outcome::tool_failed);
  CHECK(failing.error.find("exited with status 1") != std::string::npos);
  // Executable but unable to exec (its interpreter is missing): the forked child still exits
  // and is reaped.
  const TempDir dir;
  const fs::path broken = dir.path / "jstack";
  std::ofstream(broken) << "#!/nonexistent/interpreter\n";
  fs::permissions(broken, fs::perms::owner_all);
  const auto unrunnable = sampling::jstack_dump(request(::getpid(), false), broken.string());
  INFO("unrunnable: " << unrunnable.error);
  CHECK(unrunnable.outcome == Outcome::tool_failed);
  INFO("our children: " << describe(our_children()));
  CHECK(our_children().empty());
}

TEST_CASE("jstack: find_jstack prefers $JAVA_HOME, else PATH", "[jstack]") {
  const char* saved = std::getenv("JAVA_HOME");
  const std::string old = saved ? saved : "";
  ::setenv("JAVA_HOME", LOCKWATCH_JDK17_HOME, 1);
  CHECK(sampling::find_jstack() == LOCKWATCH_JDK17_HOME "/bin/jstack");
  ::setenv("JAVA_HOME", "/nonexistent", 1);
  const std::string on_path = sampling::find_jstack();
  INFO("on PATH: " << on_path);
  CHECK((on_path.empty() || (fs::path(on_path).is_absolute() && ::access(on_path.c_str(), X_OK) == 0)));
  saved ? ::setenv("JAVA_HOME", old.c_str(), 1) : ::unsetenv("JAVA_HOME");
}

TEST_CASE("jstack: parallel dumps on one io_context, run by two threads, all complete", "[jstack][jvm]") {
  struct Run {
    Run(DumpRequest req, std::string path, Outcome outcome) : request(req), tool(std::move(path)), expected(outcome) {}
    DumpRequest request;
    std::string tool;
    Outcome expected;
    int calls = 0;
    DumpRecord result;
  };
  std::vector<std::unique_ptr<Jvm>> jvms;
  std::vector<Run> runs;
  for (const auto& jdk : jdks()) {
    jvms.push_back(start_jvm(jdk));
    for (bool locks : {false, true, false}) runs.emplace_back(request(jvms.back()->pid(), locks), jdk.jstack(), Outcome::ok);
  }
  runs.emplace_back(request(kNoSuchPid, false), runs.front().tool, Outcome::target_gone);
  runs.emplace_back(request(jvms.front()->pid(), false), "/nonexistent/bin/jstack", Outcome::tool_failed);

  const std::size_t fds_before = open_fds();
  const auto start = std::chrono::steady_clock::now();
  {
    boost::asio::io_context io;
    for (auto& run : runs)  // `runs` no longer grows: the references stay valid
      sampling::async_jstack_dump(io, run.request, run.tool, [&run](DumpRecord r) { ++run.calls, run.result = std::move(r); });
    std::thread second([&io] { io.run(); });  // the job's strand keeps each run's handlers in order
    io.run();
    second.join();
  }
  const auto wall = std::chrono::steady_clock::now() - start;
  CHECK(open_fds() == fds_before);  // no pipe end left open

  std::chrono::steady_clock::duration summed{};
  for (const auto& run : runs) {
    INFO("pid " << run.request.pid << " via " << run.tool << ": " << run.result.error);
    CHECK(run.calls == 1);
    CHECK(run.result.outcome == run.expected);
    if (run.expected == Outcome::ok) CHECK(parser::parse_dumps(run.result.text).size() == 1);
    summed += run.result.elapsed;
  }
  CHECK(wall < summed);  // they overlapped rather than ran one after another
  INFO("our children: " << describe(our_children()));
  CHECK(our_children().size() == jvms.size());
}
