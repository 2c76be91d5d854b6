// SPDX-License-Identifier: Apache-2.0
// lockwatch_fake_jvm: a process that passes for a HotSpot JVM to lockwatch - an hsperfdata
// file, a SIGQUIT handler, an attach listener on /tmp/.java_pid<pid> - and then answers
// like a compromised application container would (--mode). Standalone: std and POSIX only,
// so it shares no code with the daemon it attacks.
//
//   lockwatch_fake_jvm --mode MODE [options]          prints READY when set up, SIGTERM ends it
//
// Honest modes: ok (a small valid dump, N threads BLOCKED on one monitor with its holder),
// decoy (the same with "DECOY" threads, on --socket PATH and without hsperfdata: a socket
// planted in lockwatch's own /tmp). Hostile modes: endless, huge-line, many-threads, stall,
// drip, nested-locks, long-name, not-a-dump (status 0, then ~200 KB of log lines and no
// dump), fifo-trigger, symlink-trigger, socket-swap, perfdata-swap,
// fork, json-symlink and json-fifo (answer a `jcmd Thread.dump_to_file -format=json PATH`
// request by planting a symlink to --link-target, or a FIFO, at PATH and reporting it
// written; a thread dump request gets the small valid dump). Tool mode: write-perfdata --out FILE (a valid hsperfdata file for a test to plant).
//
// What it touches: its own /tmp (the hsperfdata file and directory, .java_pid<pid>,
// .attach_pid<pid> and helper names starting with .lw_), its cwd's .attach_pid<pid>, the
// paths named by --link-target/--decoy/--socket/--out, and nothing else; it talks only on
// unix sockets. A janitor process removes everything it created once it and its children
// are gone, however they die (SIGKILL included). --private-tmp gives it a tmpfs /tmp of
// its own in a new mount namespace (root only), as an app container has: lockwatch then
// reaches it only through /proc/<pid>/root/tmp, and an absolute symlink it plants names a
// path of lockwatch's filesystem.
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <sched.h>
#endif

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::uint64_t MiB = 1024 * 1024;

// ---------------------------------------------------------------------------------------
// Options

constexpr const char* usage =
    "usage: lockwatch_fake_jvm --mode MODE [options]\n"
    "modes: ok endless huge-line many-threads stall drip nested-locks long-name not-a-dump fifo-trigger\n"
    "       symlink-trigger socket-swap perfdata-swap fork decoy json-symlink json-fifo write-perfdata\n"
    "  --threads N        BLOCKED threads in a dump (ok 6, many-threads 20000)\n"
    "  --bytes N          huge-line: length of the line (default 256MiB; 0: endless)\n"
    "  --locks N          nested-locks: '- locked' lines in one thread (default 200000)\n"
    "  --lock-frames      nested-locks: one 'at' frame before every '- locked' line\n"
    "  --name-bytes N     long-name: length of the long thread name (default 70000)\n"
    "  --children N       fork: processes that each publish an hsperfdata file (default 2000)\n"
    "  --link-target P    symlink-trigger: where the trigger symlinks point;\n"
    "                     perfdata-swap: the directory /tmp/hsperfdata_<user> becomes a link to\n"
    "  --decoy P          socket-swap: also swap /tmp/.java_pid<pid> for a symlink to P\n"
    "  --swap-us N        socket-swap: microseconds each name stays in place (default 2000)\n"
    "  --after-ms N       perfdata-swap: swap N ms after READY (default: on SIGUSR1)\n"
    "  --socket P         decoy: the socket path to serve on\n"
    "  --out P            write-perfdata: the file to write\n"
    "  --threads-live N   the java.threads.live counter published (default: threads in a dump)\n"
    "  --trigger          start the attach listener only on SIGQUIT with a trigger file present\n"
    "  --private-tmp      (root) a new mount namespace with a fresh tmpfs on /tmp\n"
    "  --cwd DIR          chdir there first (default with --private-tmp: /tmp/app)\n"
    "  --label NAME       re-exec with argv[0] NAME, so lockwatch labels the target NAME\n"
    "  --drip-ms N        drip: milliseconds between bytes (default 100)\n"
    "  --marker NAME      decoy, socket-swap: the decoy's holder thread name; its waiters are\n"
    "                     NAME-exec-N (default DECOY)\n"
    "  -D...              ignored (a marker for the command line)\n";

struct Options {
  std::string mode = "ok";
  long threads = -1;
  std::uint64_t bytes = 256 * MiB;
  std::uint64_t locks = 200'000;
  bool lock_frames = false;
  std::uint64_t name_bytes = 70'000;
  long children = 2000;
  std::string link_target;
  std::string decoy;
  long swap_us = 2000;
  long after_ms = -1;
  std::string socket;
  std::string out;
  long long threads_live = -1;
  bool trigger = false;
  bool private_tmp = false;
  std::string cwd;
  std::string label;
  long drip_ms = 100;
  std::string marker = "DECOY";
};

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "lockwatch_fake_jvm: %s\n", what.c_str());
  std::fflush(stderr);
  std::_Exit(2);
}

[[noreturn]] void die_errno(const std::string& what) { die(what + ": " + std::strerror(errno)); }

std::uint64_t to_u64(const std::string& flag, const std::string& v) {
  char* end = nullptr;
  errno = 0;
  const auto n = std::strtoull(v.c_str(), &end, 10);
  if (errno != 0 || end == v.c_str() || *end != '\0') die(flag + " takes a number, got '" + v + "'");
  return n;
}

long to_long(const std::string& flag, const std::string& v) {
  const auto n = to_u64(flag, v);
  if (n > 1'000'000'000ULL) die(flag + " is too large");
  return static_cast<long>(n);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("-D", 0) == 0) continue;
    if (a == "--help") std::fputs(usage, stdout), std::exit(0);
    if (a == "--lock-frames") { o.lock_frames = true; continue; }
    if (a == "--trigger") { o.trigger = true; continue; }
    if (a == "--private-tmp") { o.private_tmp = true; continue; }
    if (i + 1 >= argc) die(a + " needs a value\n" + usage);
    const std::string v = argv[++i];
    if (a == "--mode") o.mode = v;
    else if (a == "--threads") o.threads = to_long(a, v);
    else if (a == "--bytes") o.bytes = to_u64(a, v);
    else if (a == "--locks") o.locks = to_u64(a, v);
    else if (a == "--name-bytes") o.name_bytes = to_u64(a, v);
    else if (a == "--children") o.children = to_long(a, v);
    else if (a == "--link-target") o.link_target = v;
    else if (a == "--decoy") o.decoy = v;
    else if (a == "--swap-us") o.swap_us = to_long(a, v);
    else if (a == "--after-ms") o.after_ms = to_long(a, v);
    else if (a == "--socket") o.socket = v;
    else if (a == "--out") o.out = v;
    else if (a == "--threads-live") o.threads_live = static_cast<long long>(to_u64(a, v));
    else if (a == "--cwd") o.cwd = v;
    else if (a == "--label") o.label = v;
    else if (a == "--drip-ms") o.drip_ms = to_long(a, v);
    else if (a == "--marker") o.marker = v;
    else die("unknown option " + a + "\n" + usage);
  }
  if (o.threads < 0) o.threads = o.mode == "many-threads" ? 20'000 : 6;
  return o;
}

// ---------------------------------------------------------------------------------------
// The janitor: a child that outlives us and removes what we created. Paths reach it through
// a pipe, one "F path" (unlink) or "D path" (rmdir) line each; the pipe's EOF (every writer
// gone: we and our children, however we died) is its cue.

int g_janitor = -1;
pid_t g_janitor_pid = -1;
std::vector<pid_t> g_children;  // the decoy child, fork's children: killed and reaped on SIGTERM

void start_janitor() {
  int fds[2];
  if (::pipe(fds) != 0) die_errno("pipe");
  const pid_t pid = ::fork();
  if (pid < 0) die_errno("fork (janitor)");
  if (pid == 0) {
    ::close(fds[1]);
    // Keeps going through the test runner's Ctrl-C and a SIGTERM to the group: it must clean.
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1}) ::signal(s, SIG_IGN);
    ::prctl(PR_SET_NAME, "fake-jvm-janitor");
    std::string text;
    char buf[4096];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) != 0;) {
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) break;
      text.append(buf, static_cast<std::size_t>(n));
    }
    std::vector<std::string> dirs;
    for (std::size_t at = 0; at < text.size();) {
      const auto nl = text.find('\n', at);
      if (nl == std::string::npos) break;
      const std::string line = text.substr(at, nl - at);
      at = nl + 1;
      if (line.size() < 3) continue;
      if (line[0] == 'F') ::unlink(line.c_str() + 2);
      else dirs.push_back(line.substr(2));
    }
    for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) ::rmdir(it->c_str());
    std::_Exit(0);
  }
  ::close(fds[0]);
  ::fcntl(fds[1], F_SETFD, FD_CLOEXEC);
  g_janitor = fds[1];
  g_janitor_pid = pid;
}

std::vector<std::string> g_created;  // main process only: removed at once on SIGTERM

void remember(char kind, const std::string& path) {
  if (g_janitor >= 0) {
    const std::string line = std::string(1, kind) + " " + path + "\n";
    if (::write(g_janitor, line.data(), line.size()) < 0) { /* the janitor is gone: nothing to do */ }
  }
  g_created.push_back(std::string(1, kind) + path);
}

// A clean exit leaves no process behind, not even a zombie: the children are killed and
// reaped, then the janitor (whose pipe closes with the last of them) is reaped too.
void clean_up_now() {
  for (pid_t child : g_children) ::kill(child, SIGKILL);
  for (pid_t child : g_children) ::waitpid(child, nullptr, 0);
  g_children.clear();
  std::vector<std::string> dirs;
  for (const auto& entry : g_created) {
    if (entry[0] == 'F') ::unlink(entry.c_str() + 1);
    else dirs.push_back(entry.substr(1));
  }
  for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) ::rmdir(it->c_str());
  if (g_janitor >= 0) ::close(g_janitor), g_janitor = -1;
  if (g_janitor_pid > 0) ::waitpid(g_janitor_pid, nullptr, 0), g_janitor_pid = -1;
}

// ---------------------------------------------------------------------------------------
// Signals: a self-pipe the main loop polls. SIGQUIT is caught, as a JVM does (lockwatch
// reads SigCgt before it signals); SIGPIPE is ignored (a reader may go at any time).

int g_wake[2] = {-1, -1};
std::atomic<bool> g_stop{false};

void on_signal(int signo) {
  const int saved = errno;
  if (signo == SIGTERM || signo == SIGINT) g_stop.store(true);
  const char c = signo == SIGQUIT ? 'Q' : signo == SIGUSR1 ? 'U' : 'T';
  if (::write(g_wake[1], &c, 1) < 0) { /* the pipe is full: a wake-up is pending anyway */ }
  errno = saved;
}

void on_signal_quietly(int) {}

void install(int signo, void (*handler)(int)) {
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(signo, &sa, nullptr);
}

void install_signals() {
  if (::pipe2(g_wake, O_CLOEXEC | O_NONBLOCK) != 0) die_errno("pipe2");
  for (int s : {SIGTERM, SIGINT, SIGQUIT, SIGUSR1}) install(s, on_signal);
  ::signal(SIGPIPE, SIG_IGN);
}

// ---------------------------------------------------------------------------------------
// hsperfdata (HotSpot perfMemory.hpp / jvmstat v2.0): a 32-byte prologue, then entries
// back to back, little endian, in a 32 KiB file like the JVM's.

class PerfFile {
 public:
  void add_long(const std::string& name, std::int64_t value, std::uint8_t units, std::uint8_t variability) {
    std::string data(8, '\0');
    for (int i = 0; i < 8; ++i) data[static_cast<std::size_t>(i)] = static_cast<char>((static_cast<std::uint64_t>(value) >> (8 * i)) & 0xff);
    add(name, 'J', 0, data, units, variability);
  }
  void add_string(const std::string& name, const std::string& value, std::size_t length, std::uint8_t variability = 1) {
    std::string data = value.substr(0, length - 1);
    data.resize(length, '\0');
    add(name, 'B', static_cast<std::int32_t>(length), data, 5 /* U_String */, variability);
  }
  std::string bytes() const {
    std::string out(32, '\0');
    const char magic[] = {'\xca', '\xfe', '\xc0', '\xc0'};
    std::memcpy(out.data(), magic, 4);
    out[4] = 1;  // little endian
    out[5] = 2;  // major
    out[6] = 0;  // minor
    out[7] = 1;  // accessible
    put32(out, 8, static_cast<std::int32_t>(32 + entries_.size()));  // used
    put32(out, 12, 0);                                               // overflow
    put64(out, 16, 123456789);                                       // mod_time_stamp
    put32(out, 24, 32);                                              // entry_offset
    put32(out, 28, count_);                                          // num_entries
    out += entries_;
    if (out.size() < 32 * 1024) out.resize(32 * 1024, '\0');
    return out;
  }

 private:
  static void put32(std::string& s, std::size_t at, std::int32_t v) {
    for (std::size_t i = 0; i < 4; ++i) s[at + i] = static_cast<char>((static_cast<std::uint32_t>(v) >> (8 * i)) & 0xff);
  }
  static void put64(std::string& s, std::size_t at, std::int64_t v) {
    for (std::size_t i = 0; i < 8; ++i) s[at + i] = static_cast<char>((static_cast<std::uint64_t>(v) >> (8 * i)) & 0xff);
  }
  void add(const std::string& name, char type, std::int32_t vector_length, const std::string& data, std::uint8_t units,
           std::uint8_t variability) {
    const std::size_t name_offset = 20;
    std::size_t data_offset = name_offset + name.size() + 1;
    data_offset = (data_offset + 7) / 8 * 8;
    std::size_t length = (data_offset + data.size() + 7) / 8 * 8;
    std::string e(length, '\0');
    put32(e, 0, static_cast<std::int32_t>(length));
    put32(e, 4, static_cast<std::int32_t>(name_offset));
    put32(e, 8, vector_length);
    e[12] = type;
    e[13] = 0;  // flags
    e[14] = static_cast<char>(units);
    e[15] = static_cast<char>(variability);
    put32(e, 16, static_cast<std::int32_t>(data_offset));
    std::memcpy(e.data() + name_offset, name.c_str(), name.size() + 1);
    std::memcpy(e.data() + data_offset, data.data(), data.size());
    entries_ += e;
    ++count_;
  }
  std::string entries_;
  std::int32_t count_ = 0;
};

std::string perfdata_bytes(long long threads_live, const std::string& command) {
  PerfFile f;
  constexpr std::uint8_t none = 1, ticks = 3, events = 4, hertz = 6;
  constexpr std::uint8_t constant = 1, monotonic = 2, variable = 3;
  f.add_long("sun.os.hrt.frequency", 1'000'000'000, hertz, constant);
  f.add_string("java.property.java.vm.version", "17.0.21+0-lockwatch-fake", 64);
  f.add_string("java.property.java.vm.name", "OpenJDK 64-Bit Server VM", 64);
  f.add_string("java.vm.version", "17.0.21+0-lockwatch-fake", 64);
  f.add_string("sun.rt.javaCommand", command, 256);
  // Position 0: attach supported; 1: services. As JDK 17 publishes it by default.
  f.add_string("sun.rt.jvmCapabilities", "1100000000000000000000000000000000000000000000000000000000000000", 65);
  f.add_long("java.threads.live", threads_live, events, variable);
  f.add_long("java.threads.daemon", threads_live > 1 ? threads_live - 1 : 0, events, variable);
  f.add_long("java.threads.started", threads_live, events, monotonic);
  f.add_long("sun.rt.safepoints", 7, events, monotonic);
  f.add_long("sun.rt.safepointTime", 1'000'000, ticks, monotonic);
  f.add_long("sun.rt.safepointSyncTime", 100'000, ticks, monotonic);
  f.add_long("sun.rt._sync_ContendedLockAttempts", 42, events, monotonic);
  f.add_long("sun.rt._sync_Parks", 17, events, monotonic);
  f.add_long("sun.rt.createVmBeginTime", 1, none, constant);
  return f.bytes();
}

void write_whole(const std::string& path, const std::string& bytes, mode_t mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0) die_errno("cannot write " + path);
  for (std::size_t at = 0; at < bytes.size();) {
    const auto n = ::write(fd, bytes.data() + at, bytes.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) die_errno("cannot write " + path);
    at += static_cast<std::size_t>(n);
  }
  ::close(fd);
}

std::string user_name() {
  const passwd* pw = ::getpwuid(::geteuid());
  return pw != nullptr ? pw->pw_name : std::to_string(::geteuid());
}

std::string perf_dir() { return "/tmp/hsperfdata_" + user_name(); }

// Publishes /tmp/hsperfdata_<user>/<pid> as the JVM does (directory 0755, file 0600).
void publish_perfdata(long long threads_live, const std::string& command) {
  const std::string dir = perf_dir();
  if (::mkdir(dir.c_str(), 0755) == 0) remember('D', dir);
  else if (errno != EEXIST) die_errno("mkdir " + dir);
  const std::string file = dir + "/" + std::to_string(::getpid());
  const std::string tmp = dir + "/.lw_" + std::to_string(::getpid());
  remember('F', file);
  write_whole(tmp, perfdata_bytes(threads_live, command), 0600);
  if (::rename(tmp.c_str(), file.c_str()) != 0) die_errno("rename " + tmp);
}

// ---------------------------------------------------------------------------------------
// Thread dumps, in JDK 17's text format (tests/golden/captured/jdk17/MonitorContention).

constexpr const char* kLock = "0x00000000ffd1b6f0";

std::string banner() {
  return "2026-12-01 08:00:00\n"
         "Full thread dump OpenJDK 64-Bit Server VM (17.0.21+0-lockwatch-fake mixed mode, sharing):\n\n";
}

std::string hex(std::uint64_t v, int width = 16) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%0*" PRIx64, width, v);
  return text;
}

std::string header(const std::string& name, std::uint64_t number, const std::string& what) {
  return "\"" + name + "\" #" + std::to_string(number) + " daemon prio=5 os_prio=0 cpu=0.26ms elapsed=1.09s tid=" +
         hex(0x7f76d8140000 + number * 0x1000) + " nid=" + hex(0x400 + number, 1) + " " + what + "  [" +
         hex(0x7f76b1500000 + number * 0x100000) + "]\n";
}

std::string main_thread() {
  return "\"main\" #1 prio=5 os_prio=0 cpu=72.31ms elapsed=1.21s tid=0x00007f76d8017f30 nid=0x48b waiting on condition  "
         "[0x00007f76dc71e000]\n"
         "   java.lang.Thread.State: TIMED_WAITING (sleeping)\n"
         "\tat java.lang.Thread.sleep(java.base@17.0.21/Native Method)\n"
         "\tat FakeApp.main(FakeApp.java:24)\n\n";
}

std::string holder_thread(const std::string& name, std::uint64_t number) {
  return header(name, number, "waiting on condition") +
         "   java.lang.Thread.State: TIMED_WAITING (sleeping)\n"
         "\tat java.lang.Thread.sleep(java.base@17.0.21/Native Method)\n"
         "\tat Ledger.recalculate(FakeApp.java:80)\n"
         "\tat Ledger.post(FakeApp.java:72)\n"
         "\t- locked <" + std::string(kLock) + "> (a Ledger)\n"
         "\tat FakeApp.serve(FakeApp.java:59)\n"
         "\tat java.lang.Thread.run(java.base@17.0.21/Thread.java:840)\n\n";
}

std::string blocked_thread(const std::string& name, std::uint64_t number) {
  return header(name, number, "waiting for monitor entry") +
         "   java.lang.Thread.State: BLOCKED (on object monitor)\n"
         "\tat Ledger.post(FakeApp.java:72)\n"
         "\t- waiting to lock <" + std::string(kLock) + "> (a Ledger)\n"
         "\tat FakeApp.serve(FakeApp.java:59)\n"
         "\tat java.lang.Thread.run(java.base@17.0.21/Thread.java:840)\n\n";
}

std::string trailer() { return "JNI global refs: 4, weak refs: 0\n\n"; }

// main, the holder "<prefix>0" and `blocked` waiters "<prefix>1".."<prefix>N".
std::string small_dump(long blocked, const std::string& prefix, const std::string& holder) {
  std::string d = banner() + main_thread() + holder_thread(holder, 11);
  for (long i = 1; i <= blocked; ++i) d += blocked_thread(prefix + std::to_string(i), 11 + static_cast<std::uint64_t>(i));
  return d + trailer();
}

// ---------------------------------------------------------------------------------------
// The attach listener: one thread per connection (at most 64 at once), each reads the
// request "1\0threaddump\0<3 args>" and answers "0\n" + what the mode's writer sends.

// Writes everything; false once the reader has gone (or we are stopping).
bool send_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    if (g_stop.load()) return false;
    const auto n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}
bool send_all(int fd, const std::string& s) { return send_all(fd, s.data(), s.size()); }

// The request the connection's thread read last ("1\0jcmd\0...\0\0\0"): the json modes
// answer the path in it.
thread_local std::string t_request;

// Reads the request: version, command and three arguments, each NUL-terminated.
bool read_request(int fd) {
  t_request.clear();
  int nuls = 0;
  std::size_t total = 0;
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  char buf[256];
  while (nuls < 5) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) return false;
    const auto n = ::read(fd, buf, sizeof buf);
    if (n <= 0) return false;
    for (ssize_t i = 0; i < n; ++i) nuls += buf[i] == '\0';
    t_request.append(buf, static_cast<std::size_t>(n));
    total += static_cast<std::size_t>(n);
    if (total > 4096) return false;
  }
  return true;
}

// Holds the connection until the peer closes it or we stop.
void hold_open(int fd) {
  char buf[256];
  while (!g_stop.load()) {
    pollfd p{fd, POLLIN, 0};
    const int r = ::poll(&p, 1, 200);
    if (r < 0 && errno != EINTR) return;
    if (r > 0 && ::read(fd, buf, sizeof buf) <= 0) return;
  }
}

using Writer = std::function<void(int fd)>;
std::atomic<int> g_connections{0};

int listen_unix(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) die_errno("socket");
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) die("socket path too long: " + path);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  ::unlink(path.c_str());
  const mode_t old = ::umask(077);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) die_errno("bind " + path);
  ::umask(old);
  remember('F', path);
  ::chmod(path.c_str(), 0600);
  if (::listen(fd, 64) != 0) die_errno("listen " + path);
  return fd;
}

// Accepts one pending connection (if any) and serves it on its own thread.
void accept_one(int listener, const Writer& writer) {
  const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) return;
  if (g_connections.load() >= 64) return void(::close(fd));
  ++g_connections;
  std::thread([fd, writer] {
    if (read_request(fd)) writer(fd);
    ::close(fd);
    --g_connections;
  }).detach();
}

// Serves `listener` until we stop: for the decoy child, which has no other work.
void serve_forever(int listener, const Writer& writer) {
  while (!g_stop.load()) {
    pollfd p{listener, POLLIN, 0};
    if (::poll(&p, 1, 200) > 0) accept_one(listener, writer);
  }
}

// ---------------------------------------------------------------------------------------
// The modes' replies.

Writer fixed_reply(std::string payload) {
  return [payload = "0\n" + std::move(payload)](int fd) { send_all(fd, payload); };
}

// The path of a `jcmd Thread.dump_to_file -format=json PATH` request; "" for any other.
std::string json_dump_path(const std::string& request) {
  const std::string prefix = std::string("1\0jcmd\0", 7) + "Thread.dump_to_file -format=json ";
  if (request.compare(0, prefix.size(), prefix) != 0) return {};
  const auto end = request.find('\0', prefix.size());
  return end == std::string::npos ? std::string{} : request.substr(prefix.size(), end - prefix.size());
}

// What a compromised JVM does with lockwatch's JSON dump request: plant something else at
// the path, then report the file written. Thread dump requests get `dump`.
Writer planting_reply(std::function<void(const std::string&)> plant, std::string dump) {
  return [plant = std::move(plant), dump = "0\n" + std::move(dump)](int fd) {
    const auto path = json_dump_path(t_request);
    if (path.empty()) return void(send_all(fd, dump));
    plant(path);
    send_all(fd, "0\nCreated " + path + "\n");
  };
}

// Thread entries at full speed until the reader goes: an attach reply with no end.
Writer endless_reply() {
  return [](int fd) {
    if (!send_all(fd, "0\n" + banner() + main_thread() + holder_thread("fake-exec-0", 11))) return;
    std::string batch;
    for (std::uint64_t n = 12;; ) {
      batch.clear();
      while (batch.size() < 256 * 1024) batch += blocked_thread("fake-exec-" + std::to_string(n - 11), n), ++n;
      if (!send_all(fd, batch)) return;
    }
  };
}

// A valid start, then one line of `bytes` bytes (0: a line that never ends).
Writer huge_line_reply(std::uint64_t bytes) {
  return [bytes](int fd) {
    if (!send_all(fd, "0\n" + banner() + main_thread() + holder_thread("fake-exec-0", 11) + "\"")) return;
    const std::string chunk(1 * MiB, 'x');
    for (std::uint64_t sent = 0; bytes == 0 || sent < bytes;) {
      const std::size_t n = bytes == 0 ? chunk.size() : static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), bytes - sent));
      if (!send_all(fd, chunk.data(), n)) return;
      sent += n;
    }
    send_all(fd, "\" #12 daemon prio=5 os_prio=0 tid=0x0000000000000001 nid=0x1 runnable  [0x0]\n"
                 "   java.lang.Thread.State: RUNNABLE\n\n" + trailer());
  };
}

// Status 0 and then no dump at all: log lines an application printed instead, in many writes.
Writer not_a_dump_reply() {
  return [](int fd) {
    if (!send_all(fd, "0\n")) return;
    for (int i = 0; i < 4000; ++i)
      if (!send_all(fd, "2026-12-01 12:00:00 INFO [worker-" + std::to_string(i) + "] request served in 3 ms\n")) return;
  };
}

// `count` small BLOCKED threads, generated as they are sent.
Writer many_threads_reply(long count) {
  return [count](int fd) {
    if (!send_all(fd, "0\n" + banner() + main_thread() + holder_thread("fake-exec-0", 11))) return;
    std::string batch;
    for (long i = 1; i <= count;) {
      batch.clear();
      for (; i <= count && batch.size() < 256 * 1024; ++i) {
        const auto n = static_cast<std::uint64_t>(i) + 11;
        batch += "\"t-" + std::to_string(i) + "\" #" + std::to_string(n) +
                 " prio=5 os_prio=0 tid=" + hex(n) + " nid=" + hex(n, 1) + " waiting for monitor entry  [0x0]\n"
                 "   java.lang.Thread.State: BLOCKED (on object monitor)\n"
                 "\tat Ledger.post(FakeApp.java:72)\n"
                 "\t- waiting to lock <" + std::string(kLock) + "> (a Ledger)\n\n";
      }
      if (!send_all(fd, batch)) return;
    }
    send_all(fd, trailer());
  };
}

// One thread holding `locks` distinct monitors, next to a normal contention picture.
Writer nested_locks_reply(std::uint64_t locks, bool frames, long blocked) {
  return [locks, frames, blocked](int fd) {
    std::string head = "0\n" + banner() + main_thread() + header("lock-hoarder", 10, "runnable") +
                       "   java.lang.Thread.State: RUNNABLE\n\tat Nest.deepest(FakeApp.java:101)\n";
    if (!send_all(fd, head)) return;
    std::string batch;
    for (std::uint64_t i = 0; i < locks;) {
      batch.clear();
      for (; i < locks && batch.size() < 256 * 1024; ++i) {
        if (frames) batch += "\tat Nest.level" + std::to_string(i % 1000) + "(FakeApp.java:" + std::to_string(200 + i % 1000) + ")\n";
        batch += "\t- locked <" + hex(0xe0000000ULL + i * 16) + "> (a java.lang.Object)\n";
      }
      if (!send_all(fd, batch)) return;
    }
    std::string rest = "\tat Nest.main(FakeApp.java:100)\n\n" + holder_thread("fake-exec-0", 11);
    for (long i = 1; i <= blocked; ++i) rest += blocked_thread("fake-exec-" + std::to_string(i), 11 + static_cast<std::uint64_t>(i));
    send_all(fd, rest + trailer());
  };
}

// The contention picture, one of whose waiters has a name of `name_bytes` bytes.
std::string long_name_dump(std::uint64_t name_bytes, long blocked) {
  std::string name = "long-";
  name.resize(static_cast<std::size_t>(std::max<std::uint64_t>(name_bytes, 6)), 'n');
  std::string d = banner() + main_thread() + holder_thread("fake-exec-0", 11);
  for (long i = 1; i <= blocked; ++i) d += blocked_thread("fake-exec-" + std::to_string(i), 11 + static_cast<std::uint64_t>(i));
  d += blocked_thread(name, 99);
  return d + trailer();
}

// A valid start, then one byte every `ms` milliseconds: a reply that never completes in time.
Writer drip_reply(long ms) {
  return [ms](int fd) {
    if (!send_all(fd, "0\n" + banner())) return;
    while (send_all(fd, "x")) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  };
}

Writer stall_reply() {
  return [](int fd) { hold_open(fd); };
}

// ---------------------------------------------------------------------------------------
// Triggers, as HotSpot looks for them on SIGQUIT: .attach_pid<pid> in the cwd, else in /tmp,
// a regular file owned by our euid or root.

std::string trigger_name() { return ".attach_pid" + std::to_string(::getpid()); }

std::string cwd_path() {
  char buf[4096];
  return ::getcwd(buf, sizeof buf) != nullptr ? std::string(buf) : std::string(".");
}

bool trigger_present() {
  for (const std::string& dir : {cwd_path(), std::string("/tmp")}) {
    struct stat st {};
    const std::string p = dir + "/" + trigger_name();
    if (::lstat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && (st.st_uid == ::geteuid() || st.st_uid == 0)) return true;
  }
  return false;
}

void plant_triggers(const std::function<void(const std::string&)>& make) {
  for (const std::string& dir : {cwd_path(), std::string("/tmp")}) {
    const std::string p = dir + "/" + trigger_name();
    ::unlink(p.c_str());
    remember('F', p);
    make(p);
  }
}

// ---------------------------------------------------------------------------------------
// socket-swap: a child (another pid) serves a decoy and keeps replacing our socket's name.

std::string java_pid_path() { return "/tmp/.java_pid" + std::to_string(::getpid()); }

void die_with_parent(pid_t parent) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) std::_Exit(0);
}

// Atomically points `name` at the inode of `source` (a hard link: a socket file can have
// several names) or, with `symlink_to`, replaces it with a symlink.
void replace_name(const std::string& name, const std::string& source, bool as_symlink, const std::string& scratch) {
  ::unlink(scratch.c_str());
  const int rc = as_symlink ? ::symlink(source.c_str(), scratch.c_str()) : ::link(source.c_str(), scratch.c_str());
  if (rc == 0) ::rename(scratch.c_str(), name.c_str());
}

pid_t start_decoy_swapper(const Options& o, const std::string& real_name) {
  const pid_t parent = ::getpid();
  const std::string name = java_pid_path();
  const std::string decoy = "/tmp/.lw_decoy" + std::to_string(parent);
  const std::string scratch = "/tmp/.lw_swap" + std::to_string(parent);
  remember('F', decoy);
  remember('F', scratch);
  const pid_t pid = ::fork();
  if (pid < 0) die_errno("fork (decoy)");
  if (pid > 0) return g_children.push_back(pid), pid;
  die_with_parent(parent);
  g_created.clear();  // the parent removes them
  g_children.clear();
  const int listener = listen_unix(decoy);
  std::thread([listener, marker = o.marker] { serve_forever(listener, fixed_reply(small_dump(6, marker + "-exec-", marker))); }).detach();
  // The names the path cycles through: ours, the decoy's, and a symlink to --decoy.
  struct Step {
    std::string source;
    bool symlink;
  };
  std::vector<Step> cycle{{real_name, false}, {decoy, false}};
  if (!o.decoy.empty()) cycle.push_back({real_name, false}), cycle.push_back({o.decoy, true});
  for (std::size_t i = 0; !g_stop.load(); ++i) {
    const auto& step = cycle[i % cycle.size()];
    replace_name(name, step.source, step.symlink, scratch);
    std::this_thread::sleep_for(std::chrono::microseconds(o.swap_us));
  }
  std::_Exit(0);
}

// ---------------------------------------------------------------------------------------
// fork: processes that look like JVMs to discovery and do nothing else.

void fork_children(const Options& o, const std::string& command) {
  int ready[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) die_errno("pipe2");
  const pid_t parent = ::getpid();
  long started = 0;
  for (long i = 0; i < o.children; ++i) {
    const pid_t pid = ::fork();
    if (pid < 0) {
      std::fprintf(stderr, "lockwatch_fake_jvm: fork %ld of %ld failed: %s\n", i + 1, o.children, std::strerror(errno));
      break;
    }
    if (pid == 0) {
      die_with_parent(parent);
      ::close(ready[0]);
      g_created.clear();
      g_children.clear();
      install(SIGQUIT, on_signal_quietly);  // caught, like a JVM's, and harmless
      install(SIGUSR1, on_signal_quietly);
      ::signal(SIGTERM, SIG_DFL);
      ::signal(SIGINT, SIG_DFL);
      publish_perfdata(1, command);
      const char c = 'r';
      if (::write(ready[1], &c, 1) < 0) std::_Exit(1);
      ::close(ready[1]);
      for (;;) ::pause();
    }
    ++started;
    g_children.push_back(pid);
  }
  ::close(ready[1]);
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  char buf[512];
  for (long got = 0; got < started && Clock::now() < deadline;) {
    pollfd p{ready[0], POLLIN, 0};
    if (::poll(&p, 1, 1000) <= 0) continue;
    const auto n = ::read(ready[0], buf, sizeof buf);
    if (n <= 0) break;
    got += n;
  }
  ::close(ready[0]);
}

// ---------------------------------------------------------------------------------------
// Setup: namespaces, label, cwd.

void private_tmp() {
  if (::geteuid() != 0) die("--private-tmp needs root (a mount namespace and a tmpfs)");
  if (::unshare(CLONE_NEWNS) != 0) die_errno("unshare(CLONE_NEWNS)");
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) die_errno("making mounts private");
  if (::mount("lockwatch-fake-tmp", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=64m,mode=1777") != 0) die_errno("mount tmpfs on /tmp");
}

void relabel(int argc, char** argv, const std::string& label) {
  if (label.empty() || label == argv[0]) return;
  char self[4096];
  const auto n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) die_errno("readlink /proc/self/exe");
  self[n] = '\0';
  std::vector<char*> args(argv, argv + argc);
  args[0] = const_cast<char*>(label.c_str());
  args.push_back(nullptr);
  ::execv(self, args.data());
  die_errno("re-exec as " + label);
}

void ready() {
  std::printf("READY\n");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  relabel(argc, argv, o.label);
  // A test that dies (a CTest timeout, a crash) takes us along, cleanly: SIGTERM is our exit.
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);

  if (o.mode == "write-perfdata") {
    if (o.out.empty()) die("write-perfdata needs --out FILE");
    write_whole(o.out, perfdata_bytes(o.threads_live >= 0 ? o.threads_live : 1, "FakeApp"), 0644);
    return 0;
  }

  if (o.private_tmp) private_tmp();
  std::string cwd = o.cwd;
  if (cwd.empty() && o.private_tmp) {
    cwd = "/tmp/app";
    ::mkdir(cwd.c_str(), 0755);
  }
  if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) die_errno("chdir " + cwd);

  install_signals();
  start_janitor();
  if (o.private_tmp && cwd == "/tmp/app") remember('D', cwd);

  const std::string command = "FakeApp --mode " + o.mode;
  const long long live = o.threads_live >= 0 ? o.threads_live : o.threads + 2;
  const std::string& mode = o.mode;

  Writer writer;
  bool listener_at_once = !o.trigger;
  bool perfdata = true;
  std::string socket_path = java_pid_path();
  if (mode == "ok") writer = fixed_reply(small_dump(o.threads, "fake-exec-", "fake-exec-0"));
  else if (mode == "endless") writer = endless_reply();
  else if (mode == "huge-line") writer = huge_line_reply(o.bytes);
  else if (mode == "many-threads") writer = many_threads_reply(o.threads);
  else if (mode == "stall") writer = stall_reply();
  else if (mode == "drip") writer = drip_reply(o.drip_ms);
  else if (mode == "nested-locks") writer = nested_locks_reply(o.locks, o.lock_frames, o.threads);
  else if (mode == "long-name") writer = fixed_reply(long_name_dump(o.name_bytes, o.threads));
  else if (mode == "not-a-dump") writer = not_a_dump_reply();
  else if (mode == "fifo-trigger" || mode == "symlink-trigger") listener_at_once = false;
  else if (mode == "socket-swap") {
    writer = fixed_reply(small_dump(o.threads, "fake-exec-", "fake-exec-0"));
    socket_path = "/tmp/.lw_real" + std::to_string(::getpid());
    listener_at_once = true;
  } else if (mode == "perfdata-swap") {
    if (!o.private_tmp) die("perfdata-swap replaces /tmp/hsperfdata_<user>: only with --private-tmp");
    if (o.link_target.empty()) die("perfdata-swap needs --link-target DIR");
    writer = fixed_reply(small_dump(o.threads, "fake-exec-", "fake-exec-0"));
  } else if (mode == "json-symlink") {
    if (o.link_target.empty()) die("json-symlink needs --link-target PATH");
    writer = planting_reply([target = o.link_target](const std::string& p) {
      if (::symlink(target.c_str(), p.c_str()) != 0) std::fprintf(stderr, "lockwatch_fake_jvm: symlink %s: %s\n", p.c_str(), std::strerror(errno));
    }, small_dump(o.threads, "fake-exec-", "fake-exec-0"));
  } else if (mode == "json-fifo") {
    writer = planting_reply([](const std::string& p) {
      if (::mkfifo(p.c_str(), 0600) != 0) std::fprintf(stderr, "lockwatch_fake_jvm: mkfifo %s: %s\n", p.c_str(), std::strerror(errno));
    }, small_dump(o.threads, "fake-exec-", "fake-exec-0"));
  } else if (mode == "fork") {
    writer = nullptr;
  } else if (mode == "decoy") {
    if (o.socket.empty()) die("decoy needs --socket PATH");
    writer = fixed_reply(small_dump(o.threads, o.marker + "-exec-", o.marker));
    socket_path = o.socket;
    perfdata = false;
    listener_at_once = true;
  } else {
    die("unknown mode " + mode + "\n" + usage);
  }

  if (perfdata) publish_perfdata(live, command);
  if (mode == "fifo-trigger")
    plant_triggers([](const std::string& p) {
      if (::mkfifo(p.c_str(), 0600) != 0) die_errno("mkfifo " + p);
    });
  if (mode == "symlink-trigger") {
    if (o.link_target.empty()) die("symlink-trigger needs --link-target PATH");
    plant_triggers([&](const std::string& p) {
      if (::symlink(o.link_target.c_str(), p.c_str()) != 0) die_errno("symlink " + p);
    });
  }
  if (mode == "fork") fork_children(o, command);

  int listener = -1;
  if (writer && listener_at_once) listener = listen_unix(socket_path);
  if (mode == "socket-swap") {
    remember('F', java_pid_path());
    replace_name(java_pid_path(), socket_path, false, "/tmp/.lw_swap" + std::to_string(::getpid()));
    start_decoy_swapper(o, socket_path);
  }

  ready();
  const auto started = Clock::now();
  bool swapped = false;
  int quits = 0;
  auto swap_perfdata = [&] {
    if (swapped) return;
    swapped = true;
    const std::string dir = perf_dir();
    const std::string aside = "/tmp/.lw_hsperfdata_aside";
    if (::rename(dir.c_str(), aside.c_str()) != 0) die_errno("rename " + dir);
    remember('F', aside + "/" + std::to_string(::getpid()));
    remember('D', aside);
    remember('F', dir);  // the symlink
    if (::symlink(o.link_target.c_str(), dir.c_str()) != 0) die_errno("symlink " + dir);
    std::printf("SWAPPED\n");
    std::fflush(stdout);
  };

  while (!g_stop.load()) {
    pollfd fds[2] = {{g_wake[0], POLLIN, 0}, {listener, POLLIN, 0}};
    const int r = ::poll(fds, listener >= 0 ? 2 : 1, 100);
    if (r < 0 && errno != EINTR) die_errno("poll");
    if (r > 0 && (fds[0].revents & POLLIN) != 0) {
      char sig[64];
      const auto n = ::read(g_wake[0], sig, sizeof sig);
      for (ssize_t i = 0; i < n; ++i) {
        if (sig[i] == 'U' && mode == "perfdata-swap") swap_perfdata();
        if (sig[i] != 'Q') continue;
        // HotSpot: a trigger file starts the attach listener; without one SIGQUIT prints a
        // dump to stdout.
        if (writer && listener < 0 && trigger_present()) {
          listener = listen_unix(socket_path);
        } else if (++quits <= 3) {  // bounded: nobody may be reading our stdout
          std::printf("SIGQUIT without a usable trigger file\n");
          std::fflush(stdout);
        }
      }
    }
    if (listener >= 0 && r > 0 && (fds[1].revents & POLLIN) != 0) accept_one(listener, writer);
    if (mode == "perfdata-swap" && o.after_ms >= 0 && Clock::now() - started >= std::chrono::milliseconds(o.after_ms))
      swap_perfdata();
  }
  if (listener >= 0) ::close(listener);
  clean_up_now();
  std::fflush(stdout);
  std::_Exit(0);
}
