// SPDX-License-Identifier: Apache-2.0
// The jstack backend on Boost.Process v1 (Boost 1.74). This is the only file of the project
// that includes boost/process: it is heavy to compile and its quirks are handled here.
#include "lockwatch/sampling/jstack_source.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/process/args.hpp>
#include <boost/process/async_pipe.hpp>
#include <boost/process/child.hpp>
#include <boost/process/env.hpp>
#include <boost/process/exe.hpp>
#include <boost/process/extend.hpp>
#include <boost/process/io.hpp>
#include <boost/process/search_path.hpp>

#include "lockwatch/sampling/proc.hpp"

namespace lockwatch::sampling {
namespace {

namespace asio = boost::asio;
namespace bp = boost::process;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::duration_cast;
using std::chrono::milliseconds;

constexpr std::size_t kMaxStderr = 64 * 1024;               // any jstack message or stack trace fits
constexpr std::size_t kMaxStdout = std::size_t{512} << 20;  // far above real dumps; bounds a runaway tool
constexpr int kStdoutPipeBytes = 1 << 20;                   // see prepare_pipes()
constexpr std::size_t kExcerptChars = 1000;                 // of stderr, in error texts
constexpr std::string_view kDumpMarker = "Full thread dump";

// ---- text helpers ---------------------------------------------------------------------------

/// Case-insensitive substring test (jstack's messages vary in case between JDKs).
bool mentions(std::string_view text, std::string_view needle) {
  const auto lower_eq = [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  };
  return std::search(text.begin(), text.end(), needle.begin(), needle.end(), lower_eq) != text.end();
}

bool mentions_any(std::string_view text, std::initializer_list<std::string_view> needles) {
  return std::any_of(needles.begin(), needles.end(), [&](std::string_view n) { return mentions(text, n); });
}

/// Output as one trimmed, quoted line for an error text: newlines become "; ", long text is cut.
std::string excerpt(std::string_view text, bool truncated, const char* if_empty = "(nothing on stderr)") {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  if (text.empty()) return if_empty;
  std::string out;
  for (char c : text.substr(0, kExcerptChars)) {
    if (c == '\n') out += "; ";
    else if (c != '\r') out += c;
  }
  if (text.size() > kExcerptChars || truncated) out += " [...]";
  return "'" + out + "'";
}

// ---- facts about the system -----------------------------------------------------------------

bool is_executable_file(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
}

/// "uid U, gid G" (effective: what the attach check compares) of a process, or "".
std::string owner_of(int pid) {
  const auto status = ProcFs().status(pid);
  return status ? "uid " + std::to_string(status->euid()) + ", gid " + std::to_string(status->egid()) : "";
}

/// Boost.Process 1.74 reports a failed exec but never reaps the child it forked for it.
void reap_failed_child(pid_t pid) {
  if (pid <= 0) return;  // fork itself failed
  ::kill(pid, SIGKILL);  // normally exiting already; never yet reaped, so still ours
  ::waitpid(pid, nullptr, 0);
}

DumpRecord failure(Outcome outcome, std::string error) {
  DumpRecord r;
  r.outcome = outcome;
  r.error = std::move(error);
  return r;
}

/// The result for a tool that cannot run, before anything is started.
DumpRecord no_tool(const std::string& path) {
  if (path.empty()) return failure(Outcome::tool_failed, "no jstack: install a JDK or set JAVA_HOME");
  return failure(Outcome::tool_failed,
                 "no jstack at '" + path + "' (not found or not executable): install a JDK or set JAVA_HOME");
}

// ---- one run --------------------------------------------------------------------------------

/// Why the job stopped the child itself, if it did.
enum class Stop : std::uint8_t { none, deadline, overflow };

/// One jstack run: the child, its two pipes, the deadline, and the join of the three endings
/// (stdout closed, stderr closed, child reaped) into exactly one call of `done`.
class JstackJob : public std::enable_shared_from_this<JstackJob> {
 public:
  JstackJob(asio::io_context& io, const DumpRequest& request, std::string path,
            std::function<void(DumpRecord)> done)
      : strand_(asio::make_strand(io)), request_(request), path_(std::move(path)),
        done_(std::move(done)), out_pipe_(io), err_pipe_(io), deadline_(strand_), exit_fd_(strand_),
        exit_poll_(strand_) {}
  JstackJob(const JstackJob&) = delete;
  JstackJob& operator=(const JstackJob&) = delete;
  // The dump is the target's text as the tool relays it: the same bound as an attach reply
  // (plus the timestamp line jstack prints first).
  std::size_t stdout_bound() const { return std::min(kMaxStdout, request_.bounds.max_bytes + 256); }
  ~JstackJob();

  void start();

 private:
  void run();
  std::vector<std::string> arguments() const;
  void prepare_pipes();
  bool spawn();
  void read_stdout();
  void read_stderr();
  void on_stdout(const boost::system::error_code& ec, std::size_t n);
  void on_stderr(const boost::system::error_code& ec, std::size_t n);
  void watch_exit();
  void poll_exit(Clock::duration delay);
  bool try_reap();
  void exit_ending();
  void on_deadline(const boost::system::error_code& ec);
  void abort(Stop why);
  void ending_done();
  void finish(DumpRecord result);
  void finish_later(DumpRecord result);

  DumpRecord classify();  // moves the dump out: called once, at the end
  DumpRecord exited_zero();
  DumpRecord exited_nonzero(int code) const;
  DumpRecord attach_refused(const std::string& said) const;
  DumpRecord timed_out() const;

  asio::strand<asio::io_context::executor_type> strand_;  // every handler of the job runs here
  DumpRequest request_;
  std::string path_;
  std::function<void(DumpRecord)> done_;
  bp::async_pipe out_pipe_, err_pipe_;
  asio::steady_timer deadline_;
  asio::posix::stream_descriptor exit_fd_;  // the child's pidfd: readable once it has exited
  asio::steady_timer exit_poll_;            // where pidfd_open is missing (Linux < 5.3, seccomp)
  bp::child child_;
  ProcessWatch jvm_;  // the target, opened before jstack starts: a zombie or a reused pid reads as gone
  std::array<char, 64 * 1024> out_buf_{};
  std::array<char, 4 * 1024> err_buf_{};
  std::string out_, err_;
  bool err_truncated_ = false;
  bool reaped_ = false;  // waitpid returned the child: its pid may be reused, never signal it again
  int status_ = 0;       // from that waitpid
  std::error_code wait_error_;
  Stop stop_ = Stop::none;
  int endings_left_ = 3;
  bool finished_ = false;
  Clock::time_point started_;
};

JstackJob::~JstackJob() {
  // Only when the io_context went away before the child was reaped: never leave a zombie.
  if (child_.valid() && !reaped_ && child_.id() > 0) {
    ::kill(child_.id(), SIGKILL);
    ::waitpid(child_.id(), nullptr, 0);
  }
  child_.detach();  // its destructor would otherwise waitpid/kill a pid that is no longer ours
}

void JstackJob::start() {
  // On the strand from the first step: with several threads running io, a handler of this
  // job must never race the code that arms the timer and the reads.
  asio::dispatch(strand_, [self = shared_from_this()] { self->run(); });
}

void JstackJob::run() {
  started_ = Clock::now();
  if (!is_executable_file(path_)) return finish_later(no_tool(path_));
  if (request_.pid <= 0)  // jstack reads "0" as a main-class pattern and "-1" as an option
    return finish_later(failure(Outcome::target_gone, "no process has pid " + std::to_string(request_.pid)));
  jvm_ = ProcessWatch(ProcFs(), request_.pid);
  prepare_pipes();
  if (!spawn()) return;
  watch_exit();
  deadline_.expires_after(request_.timeout);
  deadline_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) { self->on_deadline(ec); });
  read_stdout();
  read_stderr();
}

std::vector<std::string> JstackJob::arguments() const {
  // -J-XX:-UsePerfData: jstack is a JVM too; without its own hsperfdata file it is not
  // discovered as a target itself, and a SIGKILLed jstack leaves no stale file behind.
  std::vector<std::string> args{"-J-XX:-UsePerfData"};
  if (request_.locks) args.emplace_back("-l");
  args.push_back(std::to_string(request_.pid));
  return args;
}

void JstackJob::prepare_pipes() {
  // Boost.Process 1.74 makes its pipes with pipe(2), inheritable: any child started meanwhile
  // (another target's jstack, from any thread) would inherit them, and one holding a write
  // end delays our EOF until it exits.
  for (int fd : {out_pipe_.native_source(), out_pipe_.native_sink(), err_pipe_.native_source(),
                 err_pipe_.native_sink()}) {
    if (fd > STDERR_FILENO) ::fcntl(fd, F_SETFD, FD_CLOEXEC);  // dup2 onto 0-2 clears the flag
  }
  // jstack relays the JVM's reply as it arrives; a bigger pipe lets it write a whole burst
  // while this io_context serves other targets, so the reply is never throttled. Best effort.
  ::fcntl(out_pipe_.native_sink(), F_SETPIPE_SZ, kStdoutPipeBytes);
}

bool JstackJob::spawn() {
  std::error_code ec;  // reported here instead of thrown
  auto self = shared_from_this();
  child_ = bp::child(bp::exe = path_, bp::args = arguments(), bp::std_in < bp::null, bp::std_out > out_pipe_,
                     bp::std_err > err_pipe_,
                     // The JVM's options in a shared environment are not meant for jstack (an agent
                     // path, a big heap, "Picked up ..." lines in stderr).
                     bp::env["JAVA_TOOL_OPTIONS"] = boost::none, bp::env["_JAVA_OPTIONS"] = boost::none,
                     bp::extend::on_error([](auto& exec, const std::error_code&) { reap_failed_child(exec.pid); }), ec);
  if (!ec) return true;
  finish_later(failure(Outcome::tool_failed,
                       "could not start jstack (" + path_ + "): " + ec.message() + "; is it a JDK's jstack?"));
  return false;
}

void JstackJob::read_stdout() {
  out_pipe_.async_read_some(asio::buffer(out_buf_),
                            asio::bind_executor(strand_, [self = shared_from_this()](auto& ec, std::size_t n) {
                              self->on_stdout(ec, n);
                            }));
}

void JstackJob::read_stderr() {
  err_pipe_.async_read_some(asio::buffer(err_buf_),
                            asio::bind_executor(strand_, [self = shared_from_this()](auto& ec, std::size_t n) {
                              self->on_stderr(ec, n);
                            }));
}

void JstackJob::on_stdout(const boost::system::error_code& ec, std::size_t n) {
  out_.append(out_buf_.data(), n);
  if (ec) return ending_done();  // EOF, or the pipe was closed by abort()
  if (out_.size() > stdout_bound()) {
    abort(Stop::overflow);
    return ending_done();
  }
  read_stdout();
}

void JstackJob::on_stderr(const boost::system::error_code& ec, std::size_t n) {
  // Keep draining past the bound: a child blocked on a full stderr pipe would never finish.
  const std::size_t keep = std::min(n, kMaxStderr - std::min(kMaxStderr, err_.size()));
  err_.append(err_buf_.data(), keep);
  err_truncated_ = err_truncated_ || keep < n;
  if (ec) return ending_done();
  read_stderr();
}

// The child's exit is watched through a pidfd, not Boost.Process's on_exit: 1.74 learns of
// exits from SIGCHLD, and with several threads running the io_context that notice was seen to
// get lost (the dump waited forever, the child a zombie); its SIGCHLD wait also kept a finished
// io_context running. A pidfd turns readable once its process has exited, for this child only.
void JstackJob::watch_exit() {
  const int fd = static_cast<int>(::syscall(SYS_pidfd_open, child_.id(), 0));
  if (fd < 0) return poll_exit(std::chrono::milliseconds(5));
  boost::system::error_code ec;
  exit_fd_.assign(fd, ec);
  if (ec) {
    ::close(fd);
    return poll_exit(std::chrono::milliseconds(5));
  }
  exit_fd_.async_wait(asio::posix::stream_descriptor::wait_read,
                      [self = shared_from_this()](const boost::system::error_code& wait_ec) {
                        if (wait_ec == asio::error::operation_aborted) return;
                        if (!self->try_reap()) self->poll_exit(std::chrono::milliseconds(5));  // not expected
                      });
}

/// Without a pidfd: look again after `delay`, backing off to 200 ms (a dump takes >= 100 ms).
void JstackJob::poll_exit(Clock::duration delay) {
  exit_poll_.expires_after(delay);
  exit_poll_.async_wait([self = shared_from_this(), delay](const boost::system::error_code& ec) {
    if (ec || self->try_reap()) return;
    self->poll_exit(std::min<Clock::duration>(delay * 2, std::chrono::milliseconds(200)));
  });
}

/// True once the child is reaped (now or before); its ending is then counted once.
bool JstackJob::try_reap() {
  if (reaped_) return true;
  int status = 0;
  const pid_t r = ::waitpid(child_.id(), &status, WNOHANG);
  if (r == 0) return false;  // still running
  if (r < 0) wait_error_ = std::error_code(errno, std::generic_category());
  reaped_ = true;
  status_ = status;
  exit_ending();
  return true;
}

void JstackJob::exit_ending() {
  boost::system::error_code ignored;
  exit_fd_.close(ignored);
  ending_done();
}

void JstackJob::on_deadline(const boost::system::error_code& ec) {
  if (ec || finished_ || stop_ != Stop::none) return;  // cancelled, or the run was already stopped
  // Reaped but the pipes still open means a descendant holds them: stop waiting for it.
  abort(reaped_ ? stop_ : Stop::deadline);
}

void JstackJob::abort(Stop why) {
  stop_ = why;
  // Not yet reaped, so the pid cannot have been reused. 1.74's child::terminate() is avoided:
  // its own waitpid would steal the exit status from the on_exit handler.
  if (!reaped_) ::kill(child_.id(), SIGKILL);
  boost::system::error_code ignored;
  out_pipe_.close(ignored);  // pending reads complete with operation_aborted
  err_pipe_.close(ignored);
}

void JstackJob::ending_done() {
  if (--endings_left_ == 0) finish(classify());
}

void JstackJob::finish(DumpRecord result) {
  if (std::exchange(finished_, true)) return;
  deadline_.cancel();
  exit_poll_.cancel();
  result.elapsed = Clock::now() - started_;
  result.source = DumpSource::jstack, result.form = DumpForm::print;
  auto done = std::move(done_);
  done_ = nullptr;
  if (done) done(std::move(result));
}

/// Reports a failure before anything runs; `done` must still come from the io_context.
void JstackJob::finish_later(DumpRecord result) {
  asio::post(strand_, [self = shared_from_this(), r = std::move(result)]() mutable { self->finish(std::move(r)); });
}

// ---- outcome mapping ------------------------------------------------------------------------

DumpRecord JstackJob::classify() {
  if (stop_ == Stop::deadline) return timed_out();
  if (stop_ == Stop::overflow)
    return failure(Outcome::too_large, "jstack (" + path_ + ") printed more than limits.max_reply_bytes (" +
                                           std::to_string(stdout_bound()) + " bytes): it was killed");
  if (wait_error_)
    return failure(Outcome::io_error, "could not learn how jstack ended (waitpid: " + wait_error_.message() +
                                          "): is SIGCHLD ignored, or does other code reap all children?");
  const int status = status_;
  if (WIFSIGNALED(status))
    return failure(Outcome::tool_failed, "jstack was killed by signal " + std::to_string(WTERMSIG(status)) +
                                             " before it finished (out of memory? a container limit?); stderr: " +
                                             excerpt(err_, err_truncated_));
  return WEXITSTATUS(status) == 0 ? exited_zero() : exited_nonzero(WEXITSTATUS(status));
}

// Whether the text holds a dump is the parser's to say, as for every backend.
DumpRecord JstackJob::exited_zero() {
  DumpRecord r;
  r.outcome = Outcome::ok;
  r.text = std::move(out_);  // as jstack printed it: a timestamp line, then "Full thread dump ..."
  return r;
}

DumpRecord JstackJob::exited_nonzero(int code) const {
  const std::string said = excerpt(err_, err_truncated_);
  const std::string pid = std::to_string(request_.pid);
  // JDK 17: "PID: No such process"; JDK 25: "PID: non existent JVM pid: PID".
  // A JVM that exited but is not reaped yet (a zombie: its pod's init has not waited for it)
  // still answers kill(2), and jstack then waits for its attach socket and says it does not
  // respond; asked through the pidfd it is gone, as the attach backend reports it.
  if (mentions_any(err_, {"no such process", "non existent jvm pid"}) || !jvm_.exists())
    return failure(Outcome::target_gone, "process " + pid +
                                             " does not exist (it exited, or the pid is not from this PID "
                                             "namespace); jstack said: " + said);
  if (mentions_any(err_, {"operation not permitted", "permission denied", "not secure", "attachnotsupported",
                          "attach mechanism", "attach handshake", "unable to open socket file", "connection refused"}))
    return attach_refused(said);
  return failure(Outcome::tool_failed, "jstack (" + path_ + ") exited with status " + std::to_string(code) +
                                           "; it said: " + said + "; check that this JDK's jstack runs");
}

DumpRecord JstackJob::attach_refused(const std::string& said) const {
  const std::string pid = std::to_string(request_.pid);
  if (mentions_any(err_, {"operation not permitted", "permission denied", "not secure"})) {
    const std::string owner = owner_of(request_.pid);
    return failure(Outcome::attach_refused,
                   "JVM " + pid + " refused the attach: only a caller with the JVM's own uid and gid may attach" +
                       (owner.empty() ? "" : " (it runs as " + owner + ")") +
                       "; run lockwatch as that user, e.g. with setpriv --reuid/--regid; jstack said: " + said);
  }
  if (mentions(err_, "does not support the attach mechanism"))
    return failure(Outcome::attach_refused, "JVM " + pid +
                                                " runs with -XX:+DisableAttachMechanism, so no attach-based tool "
                                                "can dump it; remove that flag from its options; jstack said: " + said);
  return failure(Outcome::attach_refused,
                 "JVM " + pid + " did not answer the attach handshake: it may not be a HotSpot JVM, may still be "
                 "starting, may see another /tmp (run lockwatch in the JVM's container), or may run with "
                 "-XX:+DisableAttachMechanism -XX:-UsePerfData; jstack said: " + said);
}

DumpRecord JstackJob::timed_out() const {
  const auto ms = duration_cast<milliseconds>(request_.timeout).count();
  const std::string pid = std::to_string(request_.pid);
  if (!jvm_.exists())
    return failure(Outcome::target_gone, "process " + pid + " exited while jstack ran (killed after " +
                                             std::to_string(ms) + " ms); stderr: " + excerpt(err_, err_truncated_));
  return failure(Outcome::timeout, "jstack did not finish within " + std::to_string(ms) + " ms and was killed: JVM " +
                                       pid + " may be stopped (SIGSTOP, a debugger), unable to reach a safepoint, "
                                       "or swapping; check its State in /proc/" + pid + "/status, or retry with a "
                                       "longer timeout; stderr: " + excerpt(err_, err_truncated_));
}

}  // namespace

void async_jstack_dump(asio::io_context& io, const DumpRequest& request, std::string jstack_path,
                       std::function<void(DumpRecord)> done) {
  std::make_shared<JstackJob>(io, request, std::move(jstack_path), std::move(done))->start();
}

DumpRecord jstack_dump(const DumpRequest& request, const std::string& jstack_path) {
  asio::io_context io;
  DumpRecord result;
  async_jstack_dump(io, request, jstack_path, [&result](DumpRecord r) { result = std::move(r); });
  io.run();
  return result;
}

std::string find_jstack() {
  if (const char* home = std::getenv("JAVA_HOME"); home != nullptr && *home != '\0') {
    const fs::path candidate = fs::path(home) / "bin" / "jstack";
    if (is_executable_file(candidate)) return candidate.string();
  }
  const auto found = bp::search_path("jstack");  // an executable regular file on PATH, or ""
  if (found.empty()) return {};
  std::error_code ec;
  const fs::path absolute = fs::absolute(found.string(), ec);  // PATH may hold relative entries
  return ec ? found.string() : absolute.string();
}

}  // namespace lockwatch::sampling
