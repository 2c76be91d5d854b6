// SPDX-License-Identifier: Apache-2.0
// Fuzz target for the attach reply decoder and the bounds the payload is collected within.
// A socket hands the reply over in pieces of any size, so the result must not depend on
// where they break: the bytes fed whole, split at one input-chosen point, and fed a byte at
// a time must give the same status, payload and malformed flag, and the same verdict of the
// bounds (within them or not). The result is also checked against the reply format itself,
// and a payload kept within bounds against the bounds.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "lockwatch/sampling/attach_protocol.hpp"
#include "lockwatch/sampling/bounded_reply.hpp"

namespace {

using lockwatch::sampling::BoundedReply;
using lockwatch::sampling::ReplyBounds;
using lockwatch::sampling::ReplyDecoder;

struct Decoded {
  std::optional<int> status;
  bool malformed = false;
  std::string payload;

  bool operator==(const Decoded&) const = default;
};

Decoded finish(const ReplyDecoder& decoder, std::string payload) {
  return {decoder.status(), decoder.malformed(), std::move(payload)};
}

Decoded decode_whole(std::string_view in) {
  ReplyDecoder decoder;
  std::string payload(decoder.feed(in));
  return finish(decoder, std::move(payload));
}

Decoded decode_split(std::string_view in, std::size_t cut) {
  ReplyDecoder decoder;
  std::string payload(decoder.feed(in.substr(0, cut)));
  payload += decoder.feed(in.substr(cut));
  return finish(decoder, std::move(payload));
}

// One byte per feed, with an empty feed before each: the worst a socket can do.
Decoded decode_bytewise(std::string_view in) {
  ReplyDecoder decoder;
  std::string payload;
  for (std::size_t i = 0; i < in.size(); ++i) {
    payload += decoder.feed({});
    payload += decoder.feed(in.substr(i, 1));
  }
  return finish(decoder, std::move(payload));
}

// The cut comes from the last two bytes, so the fuzzer steers it without moving the status
// line at the front.
std::size_t cut_point(std::string_view in) {
  if (in.size() < 2) return in.size();
  const auto hi = static_cast<unsigned char>(in[in.size() - 2]);
  const auto lo = static_cast<unsigned char>(in[in.size() - 1]);
  return (std::size_t{hi} << 8 | lo) % (in.size() + 1);
}

void print(const char* label, const Decoded& d) {
  std::fprintf(stderr, "  %s: status=%s%d malformed=%d payload=%zu bytes\n", label, d.status ? "" : "(none) ",
               d.status.value_or(0), d.malformed ? 1 : 0, d.payload.size());
}

[[noreturn]] void mismatch(const char* what, const Decoded& whole, const Decoded& other) {
  std::fprintf(stderr, "attach_reply_fuzzer: %s\n", what);
  print("whole", whole);
  print("other", other);
  __builtin_trap();
}

// What any decoding must say about `in`: a status exactly when the first line is a whole
// number no longer than 11 characters, then the rest is payload; malformed never together
// with a status; nothing at all while the first line is short and open.
void check_format(std::string_view in, const Decoded& d) {
  const auto nl = in.find('\n');
  if (d.status && d.malformed) mismatch("status and malformed at once", d, d);
  if (d.status && (nl == std::string_view::npos || nl > 11)) mismatch("a status without a short status line", d, d);
  if (d.status && d.payload != in.substr(nl + 1)) mismatch("payload is not the bytes after the status line", d, d);
  if (!d.status && !d.payload.empty()) mismatch("payload without a status", d, d);
  if (!d.status && !d.malformed && (nl != std::string_view::npos || in.size() > 11))
    mismatch("neither status nor malformed after a complete or overlong line", d, d);
}

// Small bounds the input chooses (its first byte), so both bounds are hit often.
ReplyBounds bounds_for(std::string_view in) {
  const auto b = in.empty() ? 0u : static_cast<unsigned char>(in[0]);
  return {std::size_t{16} + (b & 0x0f) * 64, std::size_t{1} + (b >> 4)};
}

std::size_t thread_entries(std::string_view payload) {
  std::size_t n = !payload.empty() && payload[0] == '"';
  for (std::size_t i = 0; i + 1 < payload.size(); ++i) n += payload[i] == '\n' && payload[i + 1] == '"';
  return n;
}

void bound_failure(const char* what, std::size_t size) {
  std::fprintf(stderr, "attach_reply_fuzzer: bounded reply: %s (payload %zu bytes)\n", what, size);
  __builtin_trap();
}

// The payload of the whole decode, kept within bounds whole, split and byte by byte.
void check_bounds(std::string_view in, const std::string& payload) {
  const auto bounds = bounds_for(in);
  const bool fits = payload.size() <= bounds.max_bytes && thread_entries(payload) <= bounds.max_threads;
  BoundedReply whole(bounds), split(bounds), bytewise(bounds);
  whole.append(payload);
  const auto cut = cut_point(payload);
  if (split.append(std::string_view(payload).substr(0, cut))) split.append(std::string_view(payload).substr(cut));
  for (std::size_t i = 0; i < payload.size() && bytewise.append(std::string_view(payload).substr(i, 1)); ++i) {
  }
  for (const BoundedReply* r : {&whole, &split, &bytewise}) {
    const bool kept = r->over() == BoundedReply::Over::none;
    if (kept != fits) bound_failure(fits ? "refused a payload within bounds" : "kept a payload past a bound", payload.size());
    if (kept && r->text() != payload) bound_failure("kept text differs from the payload", payload.size());
    if (!kept && !r->text().empty()) bound_failure("a refused reply still holds text", payload.size());
    if (r->text().size() > bounds.max_bytes) bound_failure("holds more than max_bytes", payload.size());
    if (r->over() == BoundedReply::Over::bytes && payload.size() <= bounds.max_bytes) bound_failure("wrong reason: bytes", payload.size());
    if (r->over() == BoundedReply::Over::threads && thread_entries(payload) <= bounds.max_threads)
      bound_failure("wrong reason: threads", payload.size());
  }
  // Streamed to a sink that counts thread entries itself (the daemon's parser): only the bytes
  // are bounded here, and every byte within them reaches the sink once.
  BoundedReply counted(bounds);
  std::string sunk;
  counted.stream_to([&](std::string_view text) { sunk.append(text); }, [] { return false; });
  if (counted.append(std::string_view(payload).substr(0, cut))) counted.append(std::string_view(payload).substr(cut));
  const bool within = payload.size() <= bounds.max_bytes;
  if ((counted.over() == BoundedReply::Over::none) != within)
    bound_failure(within ? "a counting sink's reply refused within max_bytes" : "a counting sink's reply kept past max_bytes", payload.size());
  if (within && sunk != payload) bound_failure("a counting sink did not get every byte once", payload.size());
  if (sunk.size() > bounds.max_bytes) bound_failure("a counting sink got more than max_bytes", payload.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Bytes are bytes: the decoder reads them as chars, signedness is irrelevant here.
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const Decoded whole = decode_whole(in);
  check_format(in, whole);
  const Decoded split = decode_split(in, cut_point(in));
  if (!(split == whole)) mismatch("whole and split decodes differ", whole, split);
  const Decoded bytewise = decode_bytewise(in);
  if (!(bytewise == whole)) mismatch("whole and byte-by-byte decodes differ", whole, bytewise);
  check_bounds(in, whole.payload);
  return 0;
}
