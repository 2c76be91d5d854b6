// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <set>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

#include "lockwatch/sampling/attach_protocol.hpp"
#include "lockwatch/sampling/bounded_reply.hpp"
#include "lockwatch/sampling/proc.hpp"
#include "process.hpp"
#include "skip.hpp"

using namespace lockwatch::sampling;
using namespace std::string_view_literals;
using namespace std::string_literals;

TEST_CASE("attach request: the exact bytes jstack sends (JDK 8-23)", "[attach][protocol]") {
  CHECK(encode_request(AttachCommand::threaddump) == "1\0threaddump\0\0\0\0"sv);
  CHECK(encode_request(AttachCommand::threaddump_locks) == "1\0threaddump\0-l\0\0\0"sv);
}

TEST_CASE("attach request: nothing but a read-only thread dump can be encoded", "[attach][protocol][security]") {
  // The attach socket also loads agents ("load", "jcmd JVMTI.agent_load") and sets flags.
  // The only way to build a request takes the closed enum - no string, no number - and
  // every value its underlying type can hold, named or not, encodes a thread dump.
  static_assert(!std::is_invocable_v<decltype(&encode_request), std::string_view>);
  static_assert(!std::is_invocable_v<decltype(&encode_request), const char*>);
  static_assert(!std::is_invocable_v<decltype(&encode_request), int>);
  // The one command with an argument (JDK 21+'s JSON dump) takes only a generated file name.
  static_assert(!std::is_invocable_v<decltype(&encode_request), AttachCommand, std::string>);
  const auto name = DumpFileName::generate(1000);
  REQUIRE(name);
  const std::set<std::string> allowed{std::string("1\0threaddump\0\0\0\0"sv), std::string("1\0threaddump\0-l\0\0\0"sv),
                                      "1\0jcmd\0Thread.dump_to_file -format=json "s + name->jvm_path() + "\0\0\0"s};
  std::set<std::string> seen;
  for (unsigned v = 0; v <= 255; ++v) seen.insert(encode_request(static_cast<AttachCommand>(v), *name));
  CHECK(seen == allowed);
}

TEST_CASE("attach reply: status line then payload, any split", "[attach][protocol]") {
  const std::string reply = "0\nFull thread dump x:\n";
  for (std::size_t split = 0; split <= reply.size(); ++split) {
    ReplyDecoder d;
    std::string payload(d.feed(std::string_view(reply).substr(0, split)));
    payload += d.feed(std::string_view(reply).substr(split));
    CHECK(d.status() == 0);
    CHECK(payload == "Full thread dump x:\n");
  }
}

TEST_CASE("attach reply: errors and garbage", "[attach][protocol]") {
  ReplyDecoder bad_version;
  bad_version.feed("101\n");
  CHECK(bad_version.status() == 101);
  ReplyDecoder failed;
  CHECK(failed.feed("-1\nOperation bogus not recognized!") == "Operation bogus not recognized!");
  CHECK(failed.status() == -1);
  ReplyDecoder garbage;
  CHECK(garbage.feed("HTTP/1.1 200 OK\r\n").empty());
  CHECK(garbage.malformed());
  ReplyDecoder endless;
  endless.feed(std::string(100, '1'));
  CHECK(endless.malformed());
  ReplyDecoder nothing;
  CHECK_FALSE(nothing.status());
  CHECK_FALSE(nothing.malformed());
}

TEST_CASE("/proc status: namespace pid, credentials, SIGQUIT handling", "[proc]") {
  // Shape of a JDK 17 JVM's status inside a PID namespace, as a sidecar sees it.
  const auto s = parse_proc_status(
      "Name:\tjava\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4242\nNgid:\t0\nPid:\t4242\nPPid:\t4200\n"
      "Uid:\t65534\t65534\t65534\t65534\nGid:\t65534\t65534\t65534\t65534\nNStgid:\t4242\t1\nNSpid:\t4242\t1\n"
      "SigQ:\t0/96364\nSigPnd:\t0000000000000000\nSigBlk:\t0000000000000000\n"
      "SigIgn:\t0000000000000000\nSigCgt:\t0000000281005ccf\n");
  REQUIRE(s);
  CHECK(s->name == "java");
  CHECK(s->state == 'S');
  CHECK(s->nspid == 1);
  CHECK(s->euid() == 65534);
  CHECK(s->egid() == 65534);
  CHECK(s->handles(3));   // SIGQUIT: the JVM's handler
  CHECK_FALSE(s->handles(10));
  // -Xrs: no SIGQUIT handler; a shell ignoring it.
  auto xrs = parse_proc_status("Name:\tjava\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nSigIgn:\t0\nSigCgt:\t0000000281005ccb\n");
  REQUIRE(xrs);
  CHECK_FALSE(xrs->handles(3));
  CHECK(xrs->nspid == 0);  // an old kernel without NSpid: the caller uses the pid
  auto ignored = parse_proc_status("Name:\tx\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nSigIgn:\t4\nSigCgt:\t4\n");
  CHECK_FALSE(ignored->handles(3));
  CHECK_FALSE(parse_proc_status("Name:\tx\n"));
}

TEST_CASE("/proc stat: start time after a command name with spaces and parens", "[proc]") {
  CHECK(parse_start_time("31593 (cat) R 31589 31589 1179 0 -1 4194304 132 0 0 0 0 0 0 0 20 0 1 0 347114 3133440 384") == 347114);
  CHECK(parse_start_time("7 (a) b) (c) S 1 7 7 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 99 0 0") == 99);
  CHECK_FALSE(parse_start_time("7 (x) S 1 2"));
  CHECK_FALSE(parse_start_time(""));
}

TEST_CASE("/proc of this very process", "[proc]") {
  ProcFs proc;
  const int self = static_cast<int>(::getpid());
  auto s = proc.status(self);
  REQUIRE(s);
  CHECK(s->nspid == self);  // tests run in the host namespace
  CHECK(proc.start_time(self).value_or(0) > 0);
  // Read from the leader task's stat, it is the process's own (what identifies a target).
  const auto whole = read_small_file("/proc/" + std::to_string(self) + "/stat");
  REQUIRE(whole);
  CHECK(proc.start_time(self) == parse_start_time(*whole));
  CHECK(proc.exists(self));
  CHECK_FALSE(proc.exists(0x7ffffff0));
  CHECK(proc.cmdline(self).value_or("").find("lockwatch_sampling_tests") != std::string::npos);
}

TEST_CASE("process watch: a pidfd sees its process exit, as a zombie too, and signals only it", "[proc][security]") {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  const ProcessWatch watch(ProcFs{}, child);
  CHECK(watch.by_pidfd());
  CHECK(watch.exists());
  CHECK(watch.signal(SIGKILL) == 0);  // a signal the test framework's handlers cannot catch in the child
  const ProcFs proc;
  for (int i = 0; i < 500 && proc.status(child).value_or(ProcStatus{}).state != 'Z'; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(proc.status(child).value_or(ProcStatus{}).state == 'Z');
  CHECK_FALSE(watch.exists());  // not reaped yet: nothing left to dump all the same
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK_FALSE(watch.exists());
  CHECK(watch.signal(0) == ESRCH);  // its pid may be another process's by now: never signalled

  // Another /proc tree than the one of this PID namespace: the status file, as before.
  const int self = static_cast<int>(::getpid());
  const ProcessWatch fallback(ProcFs{"/proc/"}, self);
  CHECK_FALSE(fallback.by_pidfd());
  CHECK(fallback.exists());
  CHECK(fallback.signal(0) == 0);
  CHECK_FALSE(ProcessWatch(ProcFs{"/nonexistent"}, self).exists());
}

// The daemon's sessions ask a held target for its status at every sample; the file is read
// again only when the ids the kernel gives its /proc directory change (a process that drops
// root), and never after it exited.
TEST_CASE("target process: its status read once while its ids stay, again when they change, none once gone", "[proc][security]") {
  if (::geteuid() != 0) {
    lockwatch::test::skip("a process changing its ids needs root to start as");
    return;
  }
  // A root shell that drops to 65534:65534 on SIGUSR1 (exec keeps its pid). Child kills and
  // reaps it whatever the test's outcome.
  lockwatch::test::Child dropping({"sh", "-c",
                                   "trap 'exec setpriv --reuid=65534 --regid=65534 --clear-groups sleep 120' USR1; "
                                   "echo READY; while :; do sleep 0.01; done"});
  REQUIRE(dropping.wait_for_line("READY", std::chrono::seconds(10)));
  const pid_t child = dropping.pid();
  TargetProcess held(ProcFs{}, child);
  REQUIRE(held.watch().by_pidfd());
  const auto* first = held.status();
  REQUIRE(first != nullptr);
  CHECK(first->euid() == 0);
  CHECK(first->nspid == child);
  for (int i = 0; i < 5; ++i) CHECK(held.status() != nullptr);
  CHECK(held.status_reads() == 1);  // kept while the ids stay
  CHECK(held.status(true) != nullptr);
  CHECK(held.status_reads() == 2);  // asked fresh, read

  REQUIRE(::kill(child, SIGUSR1) == 0);
  const ProcFs proc;
  for (int i = 0; i < 500 && proc.status(child).value_or(ProcStatus{}).euid() != 65534; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(proc.status(child).value_or(ProcStatus{}).euid() == 65534);
  const auto* dropped = held.status();
  REQUIRE(dropped != nullptr);
  CHECK(dropped->euid() == 65534);  // the old ids are never acted on
  CHECK(dropped->egid() == 65534);
  CHECK(held.status_reads() == 3);
  CHECK(held.status() != nullptr);
  CHECK(held.status_reads() == 3);

  REQUIRE(::kill(child, SIGKILL) == 0);
  REQUIRE(dropping.wait_exit(std::chrono::seconds(5)));  // reaped
  CHECK(held.status() == nullptr);
  CHECK(held.status() == nullptr);

  // A root process that exits: its directory still reads as root's, the ids it had - only
  // the pidfd tells it is gone.
  lockwatch::test::Child staying({"sh", "-c", "echo READY; exec sleep 120"});
  REQUIRE(staying.wait_for_line("READY", std::chrono::seconds(10)));
  TargetProcess root_held(ProcFs{}, staying.pid());
  REQUIRE(root_held.status() != nullptr);
  CHECK(root_held.status()->euid() == 0);
  REQUIRE(::kill(staying.pid(), SIGKILL) == 0);
  REQUIRE(staying.wait_exit(std::chrono::seconds(5)));
  CHECK(root_held.status() == nullptr);
  CHECK(root_held.status_reads() == 1);

  // Without a pidfd (another /proc tree) every call reads the file.
  TargetProcess fallback(ProcFs{"/proc/"}, static_cast<int>(::getpid()));
  CHECK_FALSE(fallback.watch().by_pidfd());
  CHECK(fallback.status() != nullptr);
  CHECK(fallback.status() != nullptr);
  CHECK(fallback.status_reads() == 2);
  CHECK(TargetProcess(ProcFs{}, 0x7ffffff0).status() == nullptr);
}

TEST_CASE("procfs: a real process's argument vector, spaces inside arguments kept", "[attach][proc]") {
  // A loop keeps the shell from exec'ing sleep in its place, which would change the vector.
  lockwatch::test::Child child({"/bin/sh", "-c", "while :; do sleep 0.05; done", "-Dx=a b.c", "", "Main"});
  const ProcFs proc;
  std::optional<std::vector<std::string>> argv;
  for (int i = 0; i < 100 && (!argv || argv->size() < 6); ++i) {
    argv = proc.argv(child.pid());
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE(argv);
  CHECK(*argv == std::vector<std::string>{"/bin/sh", "-c", "while :; do sleep 0.05; done", "-Dx=a b.c", "", "Main"});
  CHECK(proc.cmdline(child.pid()).value_or("") == "/bin/sh -c while :; do sleep 0.05; done -Dx=a b.c  Main");
  CHECK_FALSE(proc.argv(0x7ffffff0));
}

TEST_CASE("bounded reply: bytes and thread entries are bounded on any split", "[attach][protocol][security]") {
  const std::string reply = "Full thread dump x:\n\n\"a\" #1 prio=5\n\tat X.y(X.java:1)\n\n\"b\" #2 prio=5\n\n\"c\" #3\n";
  for (std::size_t split = 0; split <= reply.size(); ++split) {
    INFO("split at " << split);
    BoundedReply fits({reply.size(), 3});
    CHECK(fits.append(std::string_view(reply).substr(0, split)));
    CHECK(fits.append(std::string_view(reply).substr(split)));
    CHECK(fits.text() == reply);
    CHECK(fits.threads() == 3);
    CHECK(fits.over() == BoundedReply::Over::none);

    BoundedReply few_threads({reply.size(), 2});
    const bool first = few_threads.append(std::string_view(reply).substr(0, split));
    const bool second = few_threads.append(std::string_view(reply).substr(split));
    CHECK_FALSE((first && second));
    CHECK(few_threads.over() == BoundedReply::Over::threads);
    CHECK(few_threads.text().empty());  // what was kept is freed at once

    BoundedReply few_bytes({reply.size() - 1, 100});
    const bool a = few_bytes.append(std::string_view(reply).substr(0, split));
    const bool b = few_bytes.append(std::string_view(reply).substr(split));
    CHECK_FALSE((a && b));
    CHECK(few_bytes.over() == BoundedReply::Over::bytes);
    CHECK(few_bytes.describe().find("limits.max_reply_bytes") != std::string::npos);
  }
}

TEST_CASE("bounded reply: streamed to a sink, every byte goes there once and none is kept", "[attach][protocol]") {
  const std::string reply = "Full thread dump x:\n\n\"a\" #1 prio=5\n\tat X.y(X.java:1)\n\n\"b\" #2 prio=5\n\n\"c\" #3\n";
  for (std::size_t split = 0; split <= reply.size(); ++split) {
    INFO("split at " << split);
    for (std::size_t kept_first = 0; kept_first <= split; kept_first += 7) {
      BoundedReply streamed({reply.size(), 3});
      std::string sunk;
      CHECK(streamed.append(std::string_view(reply).substr(0, kept_first)));  // kept until the sink is set
      streamed.stream_to([&](std::string_view chunk) { sunk.append(chunk); });
      CHECK(streamed.streaming());
      CHECK(streamed.text().empty());
      CHECK(streamed.append(std::string_view(reply).substr(kept_first, split - kept_first)));
      CHECK(streamed.append(std::string_view(reply).substr(split)));
      CHECK(sunk == reply);
      CHECK(streamed.text().empty());
      CHECK(streamed.threads() == 3);
      CHECK(streamed.bytes() == reply.size());
    }
    // Past a bound nothing more reaches the sink.
    BoundedReply few_threads({reply.size(), 2});
    std::string sunk;
    few_threads.stream_to([&](std::string_view chunk) { sunk.append(chunk); });
    few_threads.append(std::string_view(reply).substr(0, split));
    few_threads.append(std::string_view(reply).substr(split));
    CHECK(few_threads.over() == BoundedReply::Over::threads);
    CHECK(sunk.size() < reply.size());
    const auto before = sunk.size();
    CHECK_FALSE(few_threads.append("\"d\" #4\n"));
    CHECK(sunk.size() == before);
  }
}

TEST_CASE("bounded reply: an endless stream never holds more than the bound", "[attach][protocol][security]") {
  BoundedReply reply({1 << 20, 50'000});
  const std::string chunk(64 * 1024, 'x');  // one endless line
  std::size_t fed = 0;
  while (reply.append(chunk) && fed < (std::size_t{64} << 20)) fed += chunk.size();
  CHECK(fed <= (std::size_t{1} << 20));
  CHECK(reply.over() == BoundedReply::Over::bytes);
  CHECK(reply.text().capacity() < 64);  // freed: back to the small-string buffer
  CHECK_FALSE(reply.append("more"));
}
