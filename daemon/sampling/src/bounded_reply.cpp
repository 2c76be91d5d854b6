// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/sampling/bounded_reply.hpp"

#include "lockwatch/sampling/dump_record.hpp"

#include <cstring>
#include <utility>

namespace lockwatch::sampling {
namespace {

std::string mib(std::size_t bytes) {
  const auto whole = bytes >> 20;
  return whole > 0 && (bytes & ((std::size_t{1} << 20) - 1)) == 0 ? std::to_string(whole) + " MiB"
                                                                   : std::to_string(bytes) + " bytes";
}

}  // namespace

bool BoundedReply::append(std::string_view payload) {
  if (over_ != Over::none) return false;
  if (sink_past_thread_bound_ && sink_past_thread_bound_()) return give_up(Over::threads), false;
  bytes_ += payload.size();
  if (bytes_ > bounds_.max_bytes) return give_up(Over::bytes), false;
  if (sink_past_thread_bound_) return pass(payload), true;  // the sink counts them (stream_to)
  // Thread entries start a line with '"': count quotes that start a line. The scan looks
  // for quotes, not for line ends: a thread prints two quotes (its name's) against twenty-odd
  // lines, so memchr runs over long stretches and this costs little more than reading the
  // bytes once (it runs on the io thread, on every byte of every reply).
  const char* begin = payload.data();
  const char* end = begin + payload.size();
  if (begin != end && line_start_ && *begin == '"') ++threads_;
  for (const char* at = begin == end ? end : begin + 1; at != end;) {
    const auto* quote = static_cast<const char*>(std::memchr(at, '"', static_cast<std::size_t>(end - at)));
    if (quote == nullptr) break;
    if (quote[-1] == '\n') ++threads_;
    at = quote + 1;
  }
  line_start_ = payload.empty() ? line_start_ : payload.back() == '\n';
  if (threads_ > bounds_.max_threads) return give_up(Over::threads), false;
  pass(payload);
  return true;
}

void BoundedReply::pass(std::string_view payload) {
  if (!sink_) text_.append(payload);
  else if (!payload.empty()) sink_(payload);
}

void BoundedReply::stream_to(Sink sink, std::function<bool()> sink_past_thread_bound) {
  sink_ = std::move(sink);
  sink_past_thread_bound_ = sink_ ? std::move(sink_past_thread_bound) : nullptr;
  if (!sink_ || over_ != Over::none) return;
  if (!text_.empty()) sink_(text_);
  std::string().swap(text_);
}

void BoundedReply::give_up(Over why) {
  over_ = why;
  std::string().swap(text_);
}

std::string BoundedReply::describe() const {
  switch (over_) {
    case Over::none: return {};
    case Over::bytes:
      return "the reply passed limits.max_reply_bytes (" + mib(bounds_.max_bytes) + "): dropped the connection";
    case Over::threads:
      return too_many_threads_error(bounds_.max_threads, "dropped the connection");
  }
  return {};
}

}  // namespace lockwatch::sampling
