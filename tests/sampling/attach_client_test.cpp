// SPDX-License-Identifier: Apache-2.0
// The attach client against real JVMs: the dump matches jstack's, and a JVM that must not
// be signalled is never signalled. Each case starts its own JVM and kills only that one.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "lockwatch/parser/dump_parser.hpp"
#include "lockwatch/sampling/attach_client.hpp"
#include "lent_buffers.hpp"
#include "process.hpp"
#include "test_support.hpp"
#include "skip.hpp"

using namespace lockwatch;
using namespace std::chrono_literals;
using sampling::Outcome;
namespace fs = std::filesystem;

namespace {

struct Jdk {
  std::string name;
  fs::path home;
};

std::vector<Jdk> jdks() {
  std::vector<Jdk> out{{"jdk17", LOCKWATCH_JDK17_HOME}};
  if (fs::exists(fs::path(LOCKWATCH_SCENARIO_CLASSES) / "jdk25"))
    out.push_back({"jdk25", LOCKWATCH_JDK25_HOME});
  else
    WARN("SKIPPED on JDK 25: no Temurin 25 at " LOCKWATCH_JDK25_HOME);
  return out;
}

fs::path classes(const Jdk& jdk) { return fs::path(LOCKWATCH_SCENARIO_CLASSES) / jdk.name; }

std::unique_ptr<test::Child> start_jvm(const Jdk& jdk, std::vector<std::string> flags, const std::string& main_class,
                                       const std::vector<std::string>& args = {"120"}) {
  std::vector<std::string> argv{(jdk.home / "bin" / "java").string(), "-Xmx64m"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"-cp", classes(jdk).string(), main_class});
  argv.insert(argv.end(), args.begin(), args.end());
  auto jvm = std::make_unique<test::Child>(argv);
  REQUIRE(jvm->wait_for_line("READY", 60s));
  return jvm;
}

sampling::DumpRecord dump(int pid, std::chrono::milliseconds timeout = 20s) {
  sampling::DumpRequest request;
  request.pid = pid;
  request.timeout = timeout;
  return sampling::attach_dump(request);
}

bool alive(int pid) { return ::kill(pid, 0) == 0; }

// What a JVM killed with SIGKILL leaves behind: a socket file nobody listens on, at the
// path a new JVM with the same pid would use.
void plant_stale_socket(int pid) {
  const std::string path = "/tmp/.java_pid" + std::to_string(pid);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
  ::unlink(path.c_str());
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  ::close(fd);
}

// Java threads by (#id, name), leaving out compiler threads, which come and go.
std::set<std::pair<std::uint64_t, std::string>> java_threads(const std::string& text) {
  std::set<std::pair<std::uint64_t, std::string>> out;
  for (const auto& d : parser::parse_dumps(text))
    for (const auto& t : d.threads)
      if (t.java_id && !t.name.starts_with("C1 ") && !t.name.starts_with("C2 ")) out.emplace(*t.java_id, t.name);
  return out;
}

}  // namespace

TEST_CASE("attach: first attach starts the listener; the dump has jstack's threads", "[attach][jvm]") {
  for (const auto& jdk : jdks()) {
    INFO(jdk.name);
    auto jvm = start_jvm(jdk, {}, "MonitorContention");
    const auto ours = dump(jvm->pid());
    INFO(ours.error);
    REQUIRE(ours.outcome == Outcome::ok);
    CHECK(ours.source == sampling::DumpSource::attach);  // stamped by the backend that took it
    CHECK(ours.form == sampling::DumpForm::print);
    auto jstack = test::run_command({(jdk.home / "bin" / "jstack").string(), std::to_string(jvm->pid())}, 60s);
    REQUIRE(jstack.exit_code == 0);
    CHECK(java_threads(ours.text) == java_threads(jstack.out));
    CHECK(java_threads(ours.text).size() >= 9);
    CHECK(ours.text.find("0\n") != 0);  // the status line is stripped
    std::this_thread::sleep_for(300ms);
    CHECK(jvm->output().find("Full thread dump") == std::string::npos);  // nothing spilled into its stdout
  }
}

TEST_CASE("attach: with a text sink the dump streams there and the record keeps none", "[attach][jvm]") {
  for (const auto& jdk : jdks()) {
    INFO(jdk.name);
    auto jvm = start_jvm(jdk, {}, "MonitorContention");
    sampling::DumpRequest request;
    request.pid = jvm->pid();
    request.timeout = 20s;
    std::string sunk;
    std::size_t chunks = 0;
    request.on_text = [&](std::string_view chunk) { sunk.append(chunk), ++chunks; };
    const auto streamed = sampling::attach_dump(request);
    INFO(streamed.error);
    REQUIRE(streamed.outcome == Outcome::ok);
    CHECK(streamed.text.empty());
    CHECK(chunks >= 1);
    CHECK(sunk.find("0\n") != 0);  // the status line is not part of the text
    CHECK(sunk.find("Full thread dump") != std::string::npos);
    const auto whole = dump(jvm->pid());
    REQUIRE(whole.outcome == Outcome::ok);
    CHECK(java_threads(sunk) == java_threads(whole.text));
  }
}

TEST_CASE("attach: with lent buffers the dump is read into them and each is given back full", "[attach][jvm]") {
  const auto jdk = jdks().front();
  auto jvm = start_jvm(jdk, {}, "MonitorContention");
  sampling::DumpRequest request;
  request.pid = jvm->pid();
  request.timeout = 20s;
  test::LentBuffers lent(sampling::ChunkedText::kSmallest);  // the smallest taken as it is: several per dump
  request.chunks = lent.chunks();
  const auto streamed = sampling::attach_dump(request);
  INFO(streamed.error);
  REQUIRE(streamed.outcome == Outcome::ok);
  CHECK(streamed.text.empty());
  const auto sunk = lent.text();
  CHECK(sunk.find("Full thread dump") != std::string::npos);
  CHECK(sunk.find("0\n") != 0);  // the status line is not part of the text
  REQUIRE(lent.given.size() >= 2);  // a dump of this JVM is larger than one buffer
  for (std::size_t i = 0; i + 1 < lent.given.size(); ++i) CHECK(lent.given[i].size() == lent.capacity);
  CHECK(lent.lent.size() <= lent.given.size() + 1);  // at most the one an end of text on a buffer's edge took
  const auto whole = dump(jvm->pid());
  REQUIRE(whole.outcome == Outcome::ok);
  CHECK(java_threads(sunk) == java_threads(whole.text));
}

// The daemon's parser counts a Thread.print reply's thread entries (TextChunks::
// past_thread_bound): the reader then leaves the count to it, and gives up when told.
TEST_CASE("attach: a consumer that counts thread entries decides the thread bound", "[attach][jvm][limits]") {
  const auto jdk = jdks().front();
  // 300 threads twenty frames deep: a reply of ~0.4 MB, more than the JVM's socket buffer
  // holds, so it takes several reads.
  auto jvm = start_jvm(jdk, {"-Xss512k"}, "ThreadCrowd", {"120", "300"});
  sampling::DumpRequest request;
  request.pid = jvm->pid();
  request.timeout = 20s;
  request.bounds.max_threads = 2;  // far fewer than the JVM has: counted here, it would be too_large
  SECTION("within the consumer's bound the reply is read whole, not counted again") {
    test::LentBuffers lent(sampling::ChunkedText::kSmallest);
    request.chunks = lent.chunks();
    request.chunks.past_thread_bound = [] { return false; };
    const auto r = sampling::attach_dump(request);
    INFO(r.error);
    REQUIRE(r.outcome == Outcome::ok);
    CHECK(lent.text().find("JNI global refs") != std::string::npos);  // to its end
  }
  SECTION("past it the reply is given up at the next read, too_large") {
    test::LentBuffers lent(sampling::ChunkedText::kSmallest);
    request.chunks = lent.chunks();
    request.chunks.past_thread_bound = [&lent] { return !lent.given.empty(); };  // past once a buffer came back
    const auto r = sampling::attach_dump(request);
    INFO(r.error);
    CHECK(r.outcome == Outcome::too_large);
    CHECK(r.error.find("limits.max_threads (2) thread entries: dropped the connection") != std::string::npos);
    CHECK(lent.text().find("JNI global refs") == std::string::npos);  // not read to its end
    CHECK(lent.text().size() < 300 * 1000);
    CHECK(alive(jvm->pid()));
  }
  SECTION("without such a consumer the reader counts them itself") {
    test::LentBuffers lent(sampling::ChunkedText::kSmallest);
    request.chunks = lent.chunks();
    const auto r = sampling::attach_dump(request);
    CHECK(r.outcome == Outcome::too_large);
    CHECK(r.error.find("limits.max_threads (2)") != std::string::npos);
  }
}

TEST_CASE("attach: -l adds lock owners; -l is opt-in", "[attach][jvm]") {
  const auto jdk = jdks().front();
  auto jvm = start_jvm(jdk, {}, "ReentrantLockPool");
  sampling::DumpRequest request;
  request.pid = jvm->pid();
  CHECK(sampling::attach_dump(request).text.find("Locked ownable synchronizers") == std::string::npos);
  request.locks = true;
  const auto with_locks = sampling::attach_dump(request);
  REQUIRE(with_locks.outcome == Outcome::ok);
  CHECK(with_locks.text.find("ReentrantLock$NonfairSync)") != std::string::npos);
  CHECK(with_locks.text.find("Locked ownable synchronizers") != std::string::npos);
}

TEST_CASE("attach: -XX:+DisableAttachMechanism fails clearly and is never signalled", "[attach][jvm][safety]") {
  for (const auto& jdk : jdks()) {
    INFO(jdk.name);
    auto jvm = start_jvm(jdk, {"-XX:+DisableAttachMechanism"}, "MonitorContention");
    const auto r = dump(jvm->pid());
    INFO(r.error);
    CHECK(r.outcome == Outcome::attach_refused);
    CHECK(r.error.find("DisableAttachMechanism") != std::string::npos);
    std::this_thread::sleep_for(500ms);
    CHECK(jvm->output().find("Full thread dump") == std::string::npos);
    CHECK(alive(jvm->pid()));
  }
}

TEST_CASE("attach: a stale socket left by a dead JVM with the same pid", "[attach][jvm][safety]") {
  const auto jdk = jdks().front();
  SECTION("the new JVM's listener is started and replaces it") {
    auto jvm = start_jvm(jdk, {}, "MonitorContention");
    plant_stale_socket(jvm->pid());
    const auto r = dump(jvm->pid());
    INFO(r.error);
    CHECK(r.outcome == Outcome::ok);
  }
  SECTION("a JVM with attach disabled is still never signalled") {
    auto jvm = start_jvm(jdk, {"-XX:+DisableAttachMechanism"}, "MonitorContention");
    plant_stale_socket(jvm->pid());
    const auto r = dump(jvm->pid());
    ::unlink(("/tmp/.java_pid" + std::to_string(jvm->pid())).c_str());
    CHECK(r.outcome == Outcome::attach_refused);
    CHECK(r.error.find("DisableAttachMechanism") != std::string::npos);
    std::this_thread::sleep_for(300ms);
    CHECK(jvm->output().find("Full thread dump") == std::string::npos);
  }
}

TEST_CASE("attach: a -Xrs JVM is never killed", "[attach][jvm][safety]") {
  // -Xrs: the JVM installs no SIGQUIT handler, so SIGQUIT would terminate it; it starts
  // its attach listener at startup instead, so no signal is needed.
  const auto jdk = jdks().front();
  auto jvm = start_jvm(jdk, {"-Xrs"}, "MonitorContention");
  const auto r = dump(jvm->pid());
  INFO(r.error);
  CHECK((r.outcome == Outcome::ok || r.outcome == Outcome::attach_refused));
  std::this_thread::sleep_for(300ms);
  CHECK(alive(jvm->pid()));
}

TEST_CASE("attach: a process that is not a JVM is never signalled", "[attach][safety]") {
  test::Child sleeper({"sleep", "60"});
  std::this_thread::sleep_for(100ms);
  const auto r = dump(sleeper.pid());
  CHECK(r.outcome == Outcome::attach_refused);
  CHECK(r.error.find("hsperfdata") != std::string::npos);
  std::this_thread::sleep_for(100ms);
  CHECK(alive(sleeper.pid()));  // SIGQUIT would have killed it
}

TEST_CASE("attach: no such process", "[attach]") {
  const auto r = dump(0x3ffffff0);
  CHECK(r.outcome == Outcome::target_gone);
  CHECK(r.error.find("no process") != std::string::npos);
}

TEST_CASE("attach: a stopped JVM times out cleanly, then recovers", "[attach][jvm]") {
  const auto jdk = jdks().front();
  auto jvm = start_jvm(jdk, {}, "MonitorContention");
  REQUIRE(dump(jvm->pid()).outcome == Outcome::ok);  // the listener is up
  REQUIRE(test::stop_process(jvm->pid()));
  const auto stopped = dump(jvm->pid(), 1500ms);
  ::kill(jvm->pid(), SIGCONT);
  CHECK(stopped.outcome == Outcome::timeout);
  CHECK(stopped.elapsed < 4s);
  CHECK(dump(jvm->pid()).outcome == Outcome::ok);
}

TEST_CASE("attach: a JVM that dies during the dump is target_gone, promptly", "[attach][jvm]") {
  const auto jdk = jdks().front();
  auto jvm = start_jvm(jdk, {}, "MonitorContention");
  REQUIRE(dump(jvm->pid()).outcome == Outcome::ok);  // the listener is up
  // Stopped, the JVM accepts the connection (the kernel queues it) but never answers:
  // the dump is in flight when the JVM is killed.
  REQUIRE(test::stop_process(jvm->pid()));
  boost::asio::io_context io;
  sampling::DumpRecord result;
  sampling::DumpRequest request;
  request.pid = jvm->pid();
  request.timeout = 20s;
  sampling::async_attach_dump(io, request, {}, [&result](sampling::DumpRecord r) { result = std::move(r); });
  boost::asio::steady_timer kill_timer(io, 300ms);
  kill_timer.async_wait([pid = jvm->pid()](boost::system::error_code) { ::kill(pid, SIGKILL); });
  io.run();
  INFO(result.error);
  CHECK(result.outcome == Outcome::target_gone);
  CHECK(result.error.find("exited during the dump") != std::string::npos);
  CHECK(result.elapsed < 5s);
}

TEST_CASE("attach: the sidecar case - own PID and mount namespace, private /tmp, another user", "[attach][jvm][sidecar]") {
  if (::geteuid() != 0) {
    lockwatch::test::skip("the sidecar test needs root for unshare and setpriv");
    return;
  }
  const auto jdk = jdks().front();
  const std::string java = (jdk.home / "bin" / "java").string();
  // The JVM gets a private tmpfs on /tmp, which hides anything below /tmp (a checkout may
  // live there), and runs as nobody: its classes go to a world-readable copy in /var/tmp.
  const test::ReadableCopy readable(classes(jdk), "sidecar");
  const fs::path& copy = readable.path();
  // unshare forks: its child is PID 1 of the new namespace and becomes the JVM (exec).
  test::Child ns({"unshare", "--pid", "--fork", "--mount", "--propagation", "private", "sh", "-c",
                  "mount -t tmpfs tmpfs /tmp && exec setpriv --reuid=65534 --regid=65534 --clear-groups " + java +
                      " -Xmx64m -cp " + copy.string() + " MonitorContention 120"});
  REQUIRE(ns.wait_for_line("READY", 60s));
  const auto children = test::read_file("/proc/" + std::to_string(ns.pid()) + "/task/" + std::to_string(ns.pid()) + "/children");
  const int jvm_pid = std::stoi(children);
  // Killing unshare does not end the namespace: its init (the JVM) must be killed itself,
  // which takes every process of the namespace with it.
  struct KillAtExit {
    int pid;
    ~KillAtExit() { ::kill(pid, SIGKILL); }
  } kill_namespace{jvm_pid};
  const auto status = test::read_file("/proc/" + std::to_string(jvm_pid) + "/status");
  REQUIRE(status.find("NSpid:\t" + std::to_string(jvm_pid) + "\t1\n") != std::string::npos);
  const auto r = dump(jvm_pid);
  INFO(r.error);
  REQUIRE(r.outcome == Outcome::ok);
  const auto dumps = parser::parse_dumps(r.text);
  REQUIRE(dumps.size() == 1);
  const auto blocked = std::count_if(dumps[0].threads.begin(), dumps[0].threads.end(),
                                     [](const auto& t) { return t.state == model::ThreadState::blocked; });
  CHECK(blocked >= 5);
}
