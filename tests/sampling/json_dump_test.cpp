// SPDX-License-Identifier: Apache-2.0
// The JSON thread dump (Thread.dump_to_file -format=json) through the attach client, against
// real JVMs: virtual threads are in it, its file never stays behind, leftovers go, a JVM that
// cannot write it says so, and a JDK 17 JVM refuses it cleanly. Each case starts its own JVM.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "lockwatch/parser/dump_parser.hpp"
#include "lockwatch/sampling/attach_client.hpp"
#include "lockwatch/sampling/dump_file_name.hpp"
#include "lent_buffers.hpp"
#include "process.hpp"
#include "test_support.hpp"

using namespace lockwatch;
using namespace std::chrono_literals;
using sampling::DumpForm;
using sampling::Outcome;
namespace fs = std::filesystem;

namespace {

const fs::path jdk25_home = LOCKWATCH_JDK25_HOME;
const fs::path jdk17_home = LOCKWATCH_JDK17_HOME;
const fs::path classes_root = LOCKWATCH_SCENARIO_CLASSES;

bool have_jdk25() { return fs::exists(classes_root / "jdk25" / "VirtualCrowd.class"); }
#define REQUIRE_JDK25()                                                                 \
  if (!have_jdk25()) {                                                                  \
    WARN("SKIPPED: no Temurin 25 at " LOCKWATCH_JDK25_HOME " (or its scenarios)");      \
    return;                                                                             \
  }

std::vector<std::string> java_argv(const fs::path& home, const std::string& classes, std::vector<std::string> flags,
                                   const std::string& main_class, std::vector<std::string> args) {
  std::vector<std::string> argv{(home / "bin" / "java").string()};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"-cp", (classes_root / classes).string(), main_class});
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

std::unique_ptr<test::Child> start(std::vector<std::string> argv) {
  auto jvm = std::make_unique<test::Child>(argv);
  REQUIRE(jvm->wait_for_line("READY", 90s));
  return jvm;
}

sampling::DumpRecord dump(int pid, DumpForm form, std::chrono::milliseconds timeout = 30s) {
  sampling::DumpRequest request;
  request.pid = pid;
  request.timeout = timeout;
  request.form = form;
  return sampling::attach_dump(request);
}

// lockwatch's directory for root's JVMs in this machine's /tmp (the tests' JVMs run as root).
const fs::path our_dir = fs::path("/tmp") / sampling::DumpFileName::directory_for(::geteuid());

// Entries of ours (generated names) in `dir`.
std::size_t ours_in(const fs::path& dir) {
  std::size_t n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (sampling::DumpFileName::is_ours(e.path().filename().string())) ++n;
  return n;
}

std::size_t count_virtual(const model::ThreadDump& d, const std::string& prefix, model::ThreadState state) {
  std::size_t n = 0;
  for (const auto& t : d.threads)
    if (t.is_virtual && t.name.starts_with(prefix) && t.state == state) ++n;
  return n;
}

void age(const fs::path& p, bool symlink) {
  timespec times[2];
  times[0].tv_sec = times[1].tv_sec = ::time(nullptr) - 3600;
  times[0].tv_nsec = times[1].tv_nsec = 0;
  REQUIRE(::utimensat(AT_FDCWD, p.c_str(), times, symlink ? AT_SYMLINK_NOFOLLOW : 0) == 0);
}

}  // namespace

TEST_CASE("json dump: virtual threads blocked on a monitor and parked on a ReentrantLock (JDK 25)", "[json][jvm][vthreads]") {
  REQUIRE_JDK25();
  auto jvm = start(java_argv(jdk25_home, "jdk25", {"-Xmx64m"}, "VirtualThreads", {"120"}));
  const auto r = dump(jvm->pid(), DumpForm::json);
  INFO(r.error);
  REQUIRE(r.outcome == Outcome::ok);
  CHECK(r.form == DumpForm::json);
  const auto dumps = parser::parse_dumps(r.text);
  REQUIRE(dumps.size() == 1);
  CHECK(dumps[0].format == model::DumpFormat::dump_to_file_json);
  // Unmounted: in no Thread.print, all in the JSON dump.
  CHECK(count_virtual(dumps[0], "metrics-vt-", model::ThreadState::blocked) >= 2);
  CHECK(count_virtual(dumps[0], "session-vt-", model::ThreadState::waiting) >= 3);
  const auto print = dump(jvm->pid(), DumpForm::print);
  REQUIRE(print.outcome == Outcome::ok);
  CHECK(print.form == DumpForm::print);
  CHECK(print.text.find("\"metrics-vt-1\"") == std::string::npos);
  // The file was read and removed: nothing of ours is left in the JVM's /tmp.
  CHECK(ours_in(our_dir) == 0);
  struct stat st {};
  REQUIRE(::stat(our_dir.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0700);
  CHECK(st.st_uid == ::geteuid());
}

TEST_CASE("json dump: 10 000 virtual threads, within the bounds", "[json][jvm][vthreads][scale]") {
  REQUIRE_JDK25();
  auto jvm = start(java_argv(jdk25_home, "jdk25", {"-Xmx512m"}, "VirtualCrowd", {"180", "10000"}));
  const auto r = dump(jvm->pid(), DumpForm::json);
  INFO(r.error);
  REQUIRE(r.outcome == Outcome::ok);
  CHECK(r.text.size() < sampling::ReplyBounds{}.max_bytes);
  const auto dumps = parser::parse_dumps(r.text);
  REQUIRE(dumps.size() == 1);
  CHECK(count_virtual(dumps[0], "ledger-vt-", model::ThreadState::blocked) == 5000);
  CHECK(count_virtual(dumps[0], "journal-vt-", model::ThreadState::waiting) == 5000);
  const auto seconds = std::chrono::duration<double>(r.elapsed).count();
  WARN("10 000 virtual threads: JSON dump " << r.text.size() << " bytes in " << seconds << " s");
  CHECK(seconds < 20);
  CHECK(ours_in(our_dir) == 0);
  // A bound smaller than the dump: too_large, and the file still goes.
  sampling::DumpRequest small;
  small.pid = jvm->pid();
  small.timeout = 30s;
  small.form = DumpForm::json;
  small.bounds.max_bytes = 1 << 20;
  const auto over = sampling::attach_dump(small);
  CHECK(over.outcome == Outcome::too_large);
  CHECK(over.error.find("limits.max_reply_bytes") != std::string::npos);
  CHECK(over.text.empty());
  CHECK(ours_in(our_dir) == 0);
}

TEST_CASE("json dump: leftovers of lockwatch's own are removed, nothing else", "[json][jvm][cleanup]") {
  REQUIRE_JDK25();
  fs::create_directories(our_dir);
  fs::permissions(our_dir, fs::perms::owner_all, fs::perm_options::replace);
  const auto old_file = our_dir / "00000000000000000000000000000001.json";
  const auto old_link = our_dir / "00000000000000000000000000000002.json";
  const auto young = our_dir / "00000000000000000000000000000003.json";
  const auto other = our_dir / "keep.txt";
  test::write_file(old_file, "{}");
  fs::create_symlink("/etc/hostname", old_link);
  test::write_file(young, "{}");
  test::write_file(other, "not ours");
  age(old_file, false);
  age(old_link, true);
  age(other, false);
  auto jvm = start(java_argv(jdk25_home, "jdk25", {"-Xmx64m"}, "MonitorContention", {"120"}));
  const auto r = dump(jvm->pid(), DumpForm::json);
  INFO(r.error);
  CHECK(r.outcome == Outcome::ok);
  CHECK_FALSE(fs::exists(fs::symlink_status(old_file)));
  CHECK_FALSE(fs::exists(fs::symlink_status(old_link)));
  CHECK(fs::exists("/etc/hostname"));          // the link went, not what it named
  CHECK(fs::exists(young));                    // maybe another lockwatch's dump in flight
  CHECK(fs::exists(other));                    // not a name lockwatch makes
  CHECK(ours_in(our_dir) == 1);                // and this dump's own file is gone
  fs::remove(young);
  fs::remove(other);
}

TEST_CASE("json dump: a JVM whose /tmp is read-only is a labelled outcome, Thread.print still works",
          "[json][jvm][readonly]") {
  REQUIRE_JDK25();
  if (::geteuid() != 0) {
    WARN("SKIPPED: a mount namespace with a read-only /tmp needs root");
    return;
  }
  // The JVM gets a /tmp of its own (a tmpfs in a new mount namespace), creates its attach
  // socket there at start, and then that /tmp is made read-only. No hsperfdata: a file mapped
  // for writing would keep the remount from succeeding.
  auto argv = java_argv(jdk25_home, "jdk25", {"-Xmx64m", "-XX:+StartAttachListener", "-XX:-UsePerfData"}, "VirtualThreads", {"120"});
  argv.insert(argv.begin(), {"unshare", "-m", "--propagation", "private", "sh", "-c",
                             "mount -t tmpfs -o size=16m,mode=1777 lockwatch-test-tmp /tmp && exec \"$0\" \"$@\""});
  auto jvm = start(argv);
  for (int i = 0; i < 50 && !fs::exists("/proc/" + std::to_string(jvm->pid()) + "/root/tmp/.java_pid" + std::to_string(jvm->pid())); ++i)
    std::this_thread::sleep_for(100ms);
  const auto remount = test::run_command({"nsenter", "-t", std::to_string(jvm->pid()), "-m", "mount", "-o", "remount,ro", "/tmp"}, 30s);
  INFO(remount.err);
  REQUIRE(remount.exit_code == 0);
  const auto r = dump(jvm->pid(), DumpForm::json);
  INFO(r.error);
  CHECK(r.outcome == Outcome::dump_file_failed);
  CHECK(r.form == DumpForm::json);
  CHECK(r.error.find("read-only") != std::string::npos);
  CHECK(r.error.find("JSON thread dump") != std::string::npos);
  const auto print = dump(jvm->pid(), DumpForm::print);
  INFO(print.error);
  CHECK(print.outcome == Outcome::ok);
}

TEST_CASE("json dump: with a text sink the file streams there; a refusal keeps its message", "[json][jvm]") {
  std::string sunk;
  sampling::DumpRequest request;
  request.timeout = 30s;
  request.form = DumpForm::json;
  request.on_text = [&](std::string_view chunk) { sunk.append(chunk); };
  {
    auto jvm = start(java_argv(jdk17_home, "jdk17", {"-Xmx64m"}, "MonitorContention", {"120"}));
    request.pid = jvm->pid();
    const auto refused = sampling::attach_dump(request);
    CHECK(refused.outcome == Outcome::dump_file_failed);
    CHECK(refused.error.find("Unknown diagnostic command") != std::string::npos);
    CHECK(sunk.empty());  // an error reply is no dump: it never reaches the sink
  }
  REQUIRE_JDK25();
  auto jvm = start(java_argv(jdk25_home, "jdk25", {"-Xmx64m"}, "VirtualThreads", {"120"}));
  request.pid = jvm->pid();
  const auto r = sampling::attach_dump(request);
  INFO(r.error);
  REQUIRE(r.outcome == Outcome::ok);
  CHECK(r.text.empty());
  const auto dumps = parser::parse_dumps(sunk);
  REQUIRE(dumps.size() == 1);
  CHECK(dumps[0].format == model::DumpFormat::dump_to_file_json);
  CHECK(count_virtual(dumps[0], "metrics-vt-", model::ThreadState::blocked) >= 2);
  CHECK(ours_in(our_dir) == 0);

  // The daemon's way: the file read straight into lent buffers, given back in order.
  test::LentBuffers buffers(8192);
  request.on_text = {};
  request.chunks = buffers.chunks();
  const auto lent = sampling::attach_dump(request);
  INFO(lent.error);
  REQUIRE(lent.outcome == Outcome::ok);
  CHECK(lent.text.empty());
  REQUIRE(buffers.given.size() >= 2);
  const auto joined = buffers.text();
  const auto again = parser::parse_dumps(joined);
  REQUIRE(again.size() == 1);
  CHECK(again[0].format == model::DumpFormat::dump_to_file_json);
  CHECK(count_virtual(again[0], "metrics-vt-", model::ThreadState::blocked) >= 2);
  CHECK(ours_in(our_dir) == 0);
}

TEST_CASE("json dump: a JDK 17 JVM refuses the command cleanly and keeps its Thread.print", "[json][jvm][jdk17]") {
  auto jvm = start(java_argv(jdk17_home, "jdk17", {"-Xmx64m"}, "MonitorContention", {"120"}));
  const auto r = dump(jvm->pid(), DumpForm::json);
  INFO(r.error);
  CHECK(r.outcome == Outcome::dump_file_failed);
  CHECK(r.error.find("JDK 21") != std::string::npos);
  CHECK(r.error.find("Unknown diagnostic command") != std::string::npos);
  CHECK(ours_in(our_dir) == 0);
  const auto print = dump(jvm->pid(), DumpForm::print);
  CHECK(print.outcome == Outcome::ok);
  CHECK(print.text.find("Full thread dump") != std::string::npos);
}

TEST_CASE("json dump: the sidecar case - a JVM of another user in its own namespaces gets its own directory",
          "[json][jvm][sidecar]") {
  REQUIRE_JDK25();
  if (::geteuid() != 0) {
    WARN("SKIPPED: the sidecar test needs root for unshare and setpriv");
    return;
  }
  const std::string java = (jdk25_home / "bin" / "java").string();
  // A private tmpfs /tmp hides anything below /tmp; the JVM runs as nobody, so its classes go
  // to a world-readable copy.
  const test::ReadableCopy readable(classes_root / "jdk25", "json-sidecar");
  test::Child ns({"unshare", "--pid", "--fork", "--mount", "--propagation", "private", "sh", "-c",
                  "mount -t tmpfs tmpfs /tmp && exec setpriv --reuid=65534 --regid=65534 --clear-groups " + java +
                      " -Xmx64m -cp " + readable.path().string() + " VirtualThreads 120"});
  REQUIRE(ns.wait_for_line("READY", 60s));
  const int jvm_pid =
      std::stoi(test::read_file("/proc/" + std::to_string(ns.pid()) + "/task/" + std::to_string(ns.pid()) + "/children"));
  struct KillAtExit {
    int pid;
    ~KillAtExit() { ::kill(pid, SIGKILL); }
  } kill_namespace{jvm_pid};
  // lockwatch runs as root here: it creates the directory and gives it to the JVM's uid.
  const auto r = dump(jvm_pid, DumpForm::json);
  INFO(r.error);
  REQUIRE(r.outcome == Outcome::ok);
  CHECK(r.text.find("\"metrics-vt-1\"") != std::string::npos);
  const fs::path dir = "/proc/" + std::to_string(jvm_pid) + "/root/tmp/.lockwatch-65534";
  struct stat st {};
  REQUIRE(::lstat(dir.c_str(), &st) == 0);
  CHECK(S_ISDIR(st.st_mode));
  CHECK(st.st_uid == 65534);
  CHECK(st.st_gid == 65534);
  CHECK((st.st_mode & 07777) == 0700);
  CHECK(ours_in(dir) == 0);
}

TEST_CASE("json dump: another user's directory or a symlink under lockwatch's name is refused", "[json][jvm][safety]") {
  REQUIRE_JDK25();
  if (::geteuid() != 0) {
    WARN("SKIPPED: planting another user's directory needs root");
    return;
  }
  auto jvm = start(java_argv(jdk25_home, "jdk25", {"-Xmx64m"}, "MonitorContention", {"120"}));
  const auto aside = fs::path("/tmp") / ("lockwatch-test-aside-" + std::to_string(::getpid()));
  struct Restore {
    fs::path aside;
    ~Restore() {
      std::error_code ec;
      fs::remove(our_dir, ec);
      if (fs::exists(aside, ec)) fs::rename(aside, our_dir, ec);
    }
  } restore{aside};
  if (fs::exists(fs::symlink_status(our_dir))) fs::rename(our_dir, aside);
  SECTION("a directory of another user") {
    fs::create_directory(our_dir);
    REQUIRE(::chown(our_dir.c_str(), 65534, 65534) == 0);
    const auto r = dump(jvm->pid(), DumpForm::json);
    INFO(r.error);
    CHECK(r.outcome == Outcome::untrusted);
    CHECK(r.error.find("belongs to uid 65534") != std::string::npos);
    CHECK(fs::is_empty(our_dir));  // nothing was created in it
  }
  SECTION("a symlink to a directory elsewhere") {
    const auto elsewhere = fs::path("/tmp") / ("lockwatch-test-elsewhere-" + std::to_string(::getpid()));
    fs::create_directory(elsewhere);
    fs::create_directory_symlink(elsewhere, our_dir);
    const auto r = dump(jvm->pid(), DumpForm::json);
    INFO(r.error);
    CHECK(r.outcome == Outcome::untrusted);
    CHECK(fs::is_empty(elsewhere));  // the JVM was never asked to write there
    fs::remove(our_dir);
    fs::remove(elsewhere);
  }
  // Thread.print is untouched by either.
  CHECK(dump(jvm->pid(), DumpForm::print).outcome == Outcome::ok);
}
