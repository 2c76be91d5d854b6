// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/sampling/bounded_reply.hpp"

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
  bytes_ += payload.size();
  if (bytes_ > bounds_.max_bytes) return give_up(Over::bytes), false;
  // Thread entries start a line with '"': count line starts that are quotes. memchr keeps
  // this at a few cycles per line on the usual 40-byte frame lines.
  const char* at = payload.data();
  const char* end = at + payload.size();
  if (at != end && line_start_ && *at == '"') ++threads_;
  while (at != end) {
    const void* nl = std::memchr(at, '\n', static_cast<std::size_t>(end - at));
    if (nl == nullptr) break;
    at = static_cast<const char*>(nl) + 1;
    if (at != end && *at == '"') ++threads_;
  }
  line_start_ = payload.empty() ? line_start_ : payload.back() == '\n';
  if (threads_ > bounds_.max_threads) return give_up(Over::threads), false;
  if (!sink_) text_.append(payload);
  else if (!payload.empty()) sink_(payload);
  return true;
}

void BoundedReply::stream_to(Sink sink) {
  sink_ = std::move(sink);
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
      return "the reply held more than limits.max_threads (" + std::to_string(bounds_.max_threads) +
             ") thread entries: dropped the connection";
  }
  return {};
}

}  // namespace lockwatch::sampling
