// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/sampling/attach_client.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <span>

#include "attach_preflight.hpp"
#include "dump_file.hpp"
#include "lockwatch/sampling/act_as.hpp"
#include "lockwatch/sampling/attach_protocol.hpp"

namespace lockwatch::sampling {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

std::string seconds(std::chrono::milliseconds ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", static_cast<double>(ms.count()) / 1000.0);
  return text;
}

std::string our_ids() { return "uid " + std::to_string(::geteuid()) + " gid " + std::to_string(::getegid()); }

// One dump: find the socket (starting the listener if allowed), connect, send the
// request, read to EOF, all against one deadline.
class AttachSession : public std::enable_shared_from_this<AttachSession> {
 public:
  AttachSession(asio::io_context& io, const DumpRequest& request, const AttachOptions& options,
                std::function<void(DumpRecord)> done)
      : request_(request), options_(options), proc_(options.proc_root), process_(options.process), socket_(io), deadline_(io), poll_(io),
        done_(std::move(done)), started_(Clock::now()), text_(request.bounds), file_text_(request.bounds),
        chunked_(request_.chunks) {}

  void start() {
    deadline_.expires_after(request_.timeout);
    deadline_.async_wait([self = shared_from_this()](error_code ec) {
      if (!ec) self->finish(Outcome::timeout, "no complete reply within " + seconds(self->request_.timeout) +
                                                  " (a stopped or overloaded JVM?); the connection was closed");
    });
    // The daemon's own, held from its target's last dump, or one for this dump alone.
    if (!process_ || process_->pid() != request_.pid) process_ = std::make_shared<TargetProcess>(proc_, request_.pid);
    const auto* status = process_->status();
    if (!status) return finish(Outcome::target_gone, "no process with pid " + std::to_string(request_.pid));
    // With attach.as target every step that touches the JVM runs under its ids (act_as.hpp);
    // otherwise this is a no-op and the steps run as lockwatch.
    const ActAs as({status->euid(), status->egid()});
    if (!as) return finish(Outcome::attach_refused, as.error());
    auto found = detail::find_target(proc_, request_.pid, *status);
    if (auto* refusal = std::get_if<detail::Refusal>(&found)) return finish(refusal->outcome, refusal->error);
    target_ = std::move(std::get<detail::AttachTarget>(found));
    if (json() && !prepare_dump_file()) return;
    auto state = detail::check_socket(target_);
    if (auto* refusal = std::get_if<detail::Refusal>(&state)) return finish(refusal->outcome, refusal->error);
    if (auto* file = std::get_if<detail::SocketFile>(&state)) return connect(std::move(*file));
    start_listener();
  }

 private:
  bool json() const { return request_.form == DumpForm::json; }

  // The JVM writes the JSON dump to a fresh name in lockwatch's directory in its /tmp; made
  // before the request with the JVM's ids (held by start()), so the JVM can create the file.
  bool prepare_dump_file() {
    // Leftovers are files a JVM wrote after their dump gave up (a timeout) or of a lockwatch
    // that died mid-dump. Only those older than any dump in flight can take are removed, so a
    // second lockwatch (`lockwatch dump` next to the daemon) never loses the file it waits for.
    const auto age = std::max<std::chrono::seconds>(std::chrono::minutes(1),
                                                    std::chrono::duration_cast<std::chrono::seconds>(request_.timeout * 2));
    auto dir = detail::open_dump_dir(target_, age);
    if (auto* refusal = std::get_if<detail::Refusal>(&dir)) return finish(refusal->outcome, refusal->error), false;
    dump_dir_ = std::get<detail::DumpDir>(std::move(dir));
    auto name = DumpFileName::generate(target_.status.euid());
    if (!name) return finish(Outcome::io_error, std::string("no random bytes for a dump file name: ") + std::strerror(errno)), false;
    dump_name_ = std::move(*name);
    return true;
  }

  // The listener starts lazily on the first attach: trigger file + SIGQUIT, once.
  void start_listener() {
    if (!options_.may_start_listener)
      return finish(Outcome::attach_refused, "no attach listener (" + target_.socket_path() + " is missing)");
    // What may_signal reads of the status (its signal handlers) changes without its ids.
    const auto* status = process_->status(true);
    if (!status) return finish(Outcome::target_gone, "no process with pid " + std::to_string(request_.pid));
    target_.status = *status;
    if (auto refusal = detail::may_signal(proc_, target_)) return finish(refusal->outcome, refusal->error);
    auto trigger = detail::create_trigger(target_);
    if (auto* refusal = std::get_if<detail::Refusal>(&trigger)) return finish(refusal->outcome, refusal->error);
    trigger_ = std::get<detail::Trigger>(trigger);
    if (const int err = process_->watch().signal(SIGQUIT); err != 0)
      return finish(err == ESRCH ? Outcome::target_gone : Outcome::attach_refused,
                    std::string("cannot signal the JVM: ") + std::strerror(err));
    signalled_ = true;
    listener_deadline_ = Clock::now() + options_.listener_wait;
    wait_for_socket();
  }

  void wait_for_socket() {
    poll_.expires_after(poll_step_);
    poll_step_ = std::min(poll_step_ * 2, std::chrono::milliseconds(200));
    poll_.async_wait([self = shared_from_this()](error_code ec) {
      if (!ec && !self->finished_) self->check_listener();
    });
  }

  void check_listener() {
    const ActAs as(jvm_ids());
    if (!as) return finish(Outcome::attach_refused, as.error());
    auto state = detail::check_socket(target_);
    if (auto* refusal = std::get_if<detail::Refusal>(&state)) return finish(refusal->outcome, refusal->error);
    auto* file = std::get_if<detail::SocketFile>(&state);
    if (file && (!stale_inode_ || file->inode != *stale_inode_)) return remove_trigger(), connect(std::move(*file));
    if (!process_->watch().exists()) return finish(Outcome::target_gone, "the JVM exited while starting its attach listener");
    if (Clock::now() < listener_deadline_) return wait_for_socket();
    finish(Outcome::attach_refused, "the JVM did not start its attach listener within " + seconds(options_.listener_wait) +
                                        " of SIGQUIT (start it with -XX:+StartAttachListener, or see -Xlog:attach=debug)");
  }

  // Through /proc/self/fd/N of the checked socket file, never by name: the target may
  // rename another socket into place between the check and the connect. Asio's reactive
  // async_connect calls connect(2) before it returns, so the kernel records the credentials
  // the JVM checks (SO_PEERCRED) while the caller's ActAs holds the JVM's ids.
  void connect(detail::SocketFile file) {
    socket_file_ = std::move(file);
    socket_.async_connect(asio::local::stream_protocol::endpoint(socket_file_.connect_path()),
                          [self = shared_from_this()](error_code ec) {
                            if (self->finished_) return;
                            if (ec) return self->connect_failed(ec);
                            if (auto refusal = detail::check_peer(self->socket_.native_handle(), self->target_))
                              return self->finish(refusal->outcome, refusal->error);
                            self->release_paths();
                            self->send_request();
                          });
  }

  void connect_failed(const error_code& ec) {
    const ActAs as(jvm_ids());
    if (!as) return finish(Outcome::attach_refused, as.error());
    // A JVM killed with SIGKILL leaves its socket behind, and a new JVM may reuse its pid:
    // treat the listener as missing, once, through the same checks as a missing socket.
    if (ec == asio::error::connection_refused && !stale_inode_ && !signalled_) {
      stale_inode_ = socket_file_.inode;
      error_code ignored;
      socket_.close(ignored);
      return start_listener();
    }
    if (ec == asio::error::connection_refused)
      return finish(Outcome::attach_refused, target_.socket_path() + " refuses connections: a stale socket of a JVM that died");
    if (ec == asio::error::access_denied)
      return finish(Outcome::attach_refused, "permission denied on " + target_.socket_path() + ": run lockwatch as uid " +
                                                 std::to_string(target_.status.euid()) + " gid " +
                                                 std::to_string(target_.status.egid()) + " (now " + our_ids() + ")");
    finish(Outcome::io_error, "connecting to " + target_.socket_path() + ": " + ec.message());
  }

  void send_request() {
    request_bytes_ = json() ? encode_request(AttachCommand::dump_to_file_json, dump_name_)
                            : encode_request(request_.locks ? AttachCommand::threaddump_locks : AttachCommand::threaddump);
    asio::async_write(socket_, asio::buffer(request_bytes_), [self = shared_from_this()](error_code ec, std::size_t) {
      if (self->finished_) return;
      if (ec) return self->finish(Outcome::attach_refused, "the JVM closed the connection on our request: " + ec.message() +
                                                               self->credentials_hint());
      self->read();
    });
  }

  // Drain at full speed: nothing here waits for whoever takes the text (a sink only copies
  // it away). A reply past its bounds is given up at once and the connection closed (finish()).
  void read() {
    into_ = space(text_);
    socket_.async_read_some(asio::buffer(into_.data(), into_.size()), [self = shared_from_this()](error_code ec, std::size_t n) {
      if (self->finished_) return;
      self->bytes_ += n;
      const auto payload = self->reply_.feed({self->into_.data(), n});
      self->stream_if_dump();
      if (!self->text_.append(payload))
        return self->finish(Outcome::too_large, self->text_.describe() + " (" + std::to_string(self->bytes_) + " bytes read)");
      if (self->reply_.malformed()) return self->finish(Outcome::parse_error, "not an attach reply");
      if (ec == asio::error::eof) return self->end_of_reply();
      if (ec) return self->unless_gone(self->bytes_ == 0 ? Outcome::attach_refused : Outcome::io_error,
                                       "reading the reply: " + ec.message() + (self->bytes_ == 0 ? self->credentials_hint() : ""));
      self->read();
    });
  }

  // A Thread.print whose status says 0 is the dump itself: with a sink it streams from here
  // on. Any other status keeps its text for the error message; a JSON reply is only the
  // "Created <path>" line.
  void stream_if_dump() {
    if (streams() && !json() && !text_.streaming() && reply_.status() == 0) stream(text_);
  }

  bool streams() const { return request_.chunks || request_.on_text; }
  // A Thread.print reply's thread entries are counted by a consumer that parses it anyway;
  // a JSON reply's are not lines that start with '"', and its file is read as it is.
  std::function<bool()> sink_past_thread_bound() const { return json() ? nullptr : request_.chunks.past_thread_bound; }
  void stream(BoundedReply& reply) {
    if (request_.chunks) reply.stream_to([this](std::string_view text) { chunked_.add(text); }, sink_past_thread_bound());
    else reply.stream_to(request_.on_text);
  }

  // Where the next read lands: once the reply streams to lent buffers, straight into one -
  // whatever of it the bounds let through is then already in place (ChunkedText::add).
  // Before (the status line, an error reply) and without them, the session's own buffer.
  std::span<char> space(const BoundedReply& reply) {
    if (request_.chunks && reply.streaming()) return chunked_.space();
    return buffer_;
  }

  void end_of_reply() {
    if (bytes_ == 0)
      return unless_gone(Outcome::attach_refused, "the JVM closed the connection without a reply" + credentials_hint());
    if (!process_->watch().exists()) return finish_gone();
    if (reply_.malformed() || !reply_.status()) return finish(Outcome::parse_error, "not an attach reply");
    if (*reply_.status() == 101) return finish(Outcome::attach_refused, "the JVM does not accept attach protocol version 1");
    if (json()) return json_reply();
    if (*reply_.status() != 0) return finish(Outcome::parse_error, "the JVM refused the thread dump: " + text_.text().substr(0, 200));
    finish(Outcome::ok, {});
  }

  // The reply only says whether the JVM wrote the file; the dump is in the file. A JDK before
  // 21 answers the unknown command with a non-zero status (JDK 17: "Unknown diagnostic
  // command"); a JVM that cannot write says "Failed: ..." with status 0.
  void json_reply() {
    const auto said = text_.text().substr(0, std::min<std::size_t>(text_.text().find('\n'), 300));
    if (*reply_.status() != 0)
      return finish(Outcome::dump_file_failed, "the JVM refused Thread.dump_to_file -format=json (it needs JDK 21+): " + said);
    if (!reports_created(text_.text(), dump_name_))
      return finish(Outcome::dump_file_failed, "the JVM did not write its JSON thread dump to " + dump_name_.jvm_path() + ": " + said);
    {
      const ActAs as(jvm_ids());
      if (!as) return finish(Outcome::attach_refused, as.error());
      auto file = detail::open_dump_file(dump_dir_, dump_name_, target_, request_.bounds.max_bytes);
      if (auto* refusal = std::get_if<detail::Refusal>(&file)) return finish(refusal->outcome, refusal->error);
      dump_fd_ = std::get<Fd>(std::move(file));
    }
    if (streams()) stream(file_text_);
    read_file();
  }

  // A regular file's read never waits for the target, but 32 MiB at once would hold the io
  // thread (and the HTTP server on it) for tens of milliseconds: one buffer per handler, so
  // whatever else is due runs in between; the dump's deadline still covers it.
  void read_file() {
    const auto into = space(file_text_);
    const auto n = ::read(dump_fd_.get(), into.data(), into.size());
    if (n < 0 && errno == EINTR) return post_read_file();
    if (n < 0) return finish(Outcome::io_error, "reading " + dump_dir_.shown + "/" + dump_name_.file() + ": " + std::strerror(errno));
    if (n == 0) return file_text_.bytes() == 0 ? finish(Outcome::parse_error, "the JVM wrote an empty JSON dump")
                                                 : finish(Outcome::ok, {});
    // The file may grow after the size check (the JVM's uid can append): bounded here too.
    if (!file_text_.append({into.data(), static_cast<std::size_t>(n)}))
      return finish(Outcome::too_large, "the JSON dump passed limits.max_reply_bytes (" +
                                            std::to_string(request_.bounds.max_bytes) + " bytes)");
    post_read_file();
  }

  void post_read_file() {
    asio::post(socket_.get_executor(), [self = shared_from_this()] {
      if (!self->finished_) self->read_file();
    });
  }

  // A JVM that dies mid-dump closes the socket like one that refuses us, and the kernel
  // closes its files before /proc shows it gone: look again shortly before blaming attach.
  void unless_gone(Outcome outcome, std::string error) {
    if (!process_->watch().exists()) return finish_gone();
    poll_.expires_after(std::chrono::milliseconds(200));
    poll_.async_wait([self = shared_from_this(), outcome, error = std::move(error)](error_code ec) mutable {
      if (self->finished_) return;
      if (!ec && !self->process_->watch().exists()) return self->finish_gone();
      self->finish(outcome, std::move(error));
    });
  }

  void finish_gone() {
    finish(Outcome::target_gone, "the JVM exited during the dump (" + std::to_string(bytes_) + " bytes read)");
  }

  std::string credentials_hint() const {
    return " (a JVM accepts attach only from its own uid and gid or root: it runs as uid " +
           std::to_string(target_.status.euid()) + " gid " + std::to_string(target_.status.egid()) +
           ", lockwatch as " + our_ids() + ")";
  }

  // Connected: the socket file's descriptor and the JVM's /tmp are no longer needed (the
  // trigger is gone by now), so a dump holds one descriptor while the reply streams.
  void release_paths() {
    socket_file_.fd.reset();
    if (!trigger_) target_.tmp.reset();
  }

  void remove_trigger() {
    if (trigger_) {
      const ActAs as(jvm_ids());
      if (as) detail::remove_trigger(target_, *trigger_);
    }
    trigger_.reset();
  }

  Ids jvm_ids() const { return {target_.status.euid(), target_.status.egid()}; }

  // Whatever happened - read, refused, failed, timed out - the file goes: nothing of a dump
  // stays in the JVM's /tmp. A JVM still writing after a timeout leaves one behind, which a
  // later dump's clean-up removes (prepare_dump_file).
  void remove_dump_file() {
    dump_fd_ = Fd{};
    if (!dump_dir_.fd) return;
    {
      const ActAs as(jvm_ids());
      if (as) detail::remove_dump_file(dump_dir_, dump_name_);
    }
    dump_dir_ = {};
  }

  void finish(Outcome outcome, std::string error) {
    if (finished_) return;
    finished_ = true;
    remove_trigger();
    remove_dump_file();
    error_code ignored;
    socket_.close(ignored);
    deadline_.cancel();
    poll_.cancel();
    chunked_.flush();  // the text's last buffer goes before the record
    auto& text = json() ? file_text_.text() : text_.text();
    DumpRecord result;
    result.outcome = outcome, result.error = std::move(error), result.elapsed = Clock::now() - started_;
    result.form = request_.form, result.source = DumpSource::attach;
    if (outcome == Outcome::ok || outcome == Outcome::target_gone) result.text = std::move(text);
    asio::post(socket_.get_executor(), [done = std::move(done_), result = std::move(result)]() mutable { done(std::move(result)); });
  }

  DumpRequest request_;
  AttachOptions options_;
  ProcFs proc_;
  std::shared_ptr<TargetProcess> process_;  // the JVM, its pidfd opened before its status was read
  detail::AttachTarget target_;
  asio::local::stream_protocol::socket socket_;
  asio::steady_timer deadline_;
  asio::steady_timer poll_;
  std::function<void(DumpRecord)> done_;
  Clock::time_point started_;
  Clock::time_point listener_deadline_;
  std::chrono::milliseconds poll_step_{20};
  std::optional<detail::Trigger> trigger_;
  detail::SocketFile socket_file_;            // the socket connected to, checked before
  std::optional<std::uint64_t> stale_inode_;  // a refused socket; only a new one will do
  bool signalled_ = false;                    // SIGQUIT sent once: never again in this dump
  std::string request_bytes_;
  ReplyDecoder reply_;
  std::array<char, 64 * 1024> buffer_;  // not zeroed: only what a read wrote is looked at
  std::span<char> into_;  // where the read in flight lands: buffer_ or a lent buffer
  BoundedReply text_;
  std::size_t bytes_ = 0;
  bool finished_ = false;
  detail::DumpDir dump_dir_;  // json: lockwatch's directory in the JVM's /tmp
  DumpFileName dump_name_;    // json: the file the JVM is asked to write there
  Fd dump_fd_;                // json: that file, once checked
  BoundedReply file_text_;    // json: its content
  ChunkedText chunked_;       // with DumpRequest::chunks: the lent buffers the text is read into
};

}  // namespace

void async_attach_dump(boost::asio::io_context& io, const DumpRequest& request, const AttachOptions& options,
                       std::function<void(DumpRecord)> done) {
  std::make_shared<AttachSession>(io, request, options, std::move(done))->start();
}

DumpRecord attach_dump(const DumpRequest& request, const AttachOptions& options) {
  boost::asio::io_context io;
  DumpRecord result;
  async_attach_dump(io, request, options, [&result](DumpRecord r) { result = std::move(r); });
  io.run();
  return result;
}

}  // namespace lockwatch::sampling
