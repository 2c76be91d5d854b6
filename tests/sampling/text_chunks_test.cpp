// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "lent_buffers.hpp"
#include "lockwatch/sampling/text_chunks.hpp"

using namespace lockwatch::sampling;

namespace {

// What a read does: writes `bytes` where space() says and returns the part that landed.
std::string_view read_into(ChunkedText& out, std::string_view bytes) {
  const auto space = out.space();
  const auto n = std::min(space.size(), bytes.size());
  std::memcpy(space.data(), bytes.data(), n);
  return {space.data(), n};
}

}  // namespace

TEST_CASE("text chunks: reads land in the lent buffer and it is given back as it was lent", "[attach][chunks]") {
  lockwatch::test::LentBuffers consumer(8192);
  ChunkedText out(consumer.chunks());
  const std::string text(20000, 'x');
  std::string_view rest = text;
  while (!rest.empty()) {
    const auto landed = read_into(out, rest);
    out.add(landed);
    rest.remove_prefix(landed.size());
  }
  out.flush();
  CHECK(consumer.text() == text);
  REQUIRE(consumer.given.size() == 3);  // 8192 + 8192 + 3616
  CHECK(consumer.given[0].size() == 8192);
  CHECK(consumer.given[2].size() == 20000 - 2 * 8192);
  // Not copied: each buffer given is the one lent, filled where it lay.
  for (std::size_t i = 0; i < consumer.given.size(); ++i) CHECK(consumer.given[i].data() == consumer.lent[i]);
  // Each comes back as large as it was filled to, the last one too.
  for (const auto size : consumer.given_sizes) CHECK(size >= 8192);
  CHECK(out.bytes() == text.size());
}

TEST_CASE("text chunks: text from elsewhere is copied in, over as many buffers as it needs", "[attach][chunks]") {
  lockwatch::test::LentBuffers consumer(5000);
  ChunkedText out(consumer.chunks());
  std::string text;
  for (int i = 0; i < 3000; ++i) text += std::to_string(i) + '\n';
  out.add(std::string_view(text).substr(0, 7));
  out.add(std::string_view(text).substr(7, 12000));  // past two buffers
  const auto landed = read_into(out, std::string_view(text).substr(12007, 100));  // then in place again
  out.add(landed);
  out.add(std::string_view(text).substr(12107));
  out.flush();
  out.flush();  // nothing more to give
  CHECK(consumer.text() == text);
  for (std::size_t i = 0; i + 1 < consumer.given.size(); ++i) CHECK(consumer.given[i].size() == 5000);
}

TEST_CASE("text chunks: nothing is given without text; a small lent buffer is grown", "[attach][chunks]") {
  lockwatch::test::LentBuffers consumer(0);
  {
    ChunkedText out(consumer.chunks());
    out.flush();
    CHECK(consumer.given.empty());
    CHECK(out.space().size() >= ChunkedText::kMinCapacity);
    out.flush();  // lent, but empty: still nothing to give
    CHECK(consumer.given.empty());
  }
  // Text a bound held back (BoundedReply passes none of a read past it) lands but is not
  // text: only what add() was told counts.
  lockwatch::test::LentBuffers bounded(8192);
  ChunkedText out(bounded.chunks());
  const auto first = read_into(out, "abc");
  out.add(first);
  read_into(out, "never added");
  out.flush();
  REQUIRE(bounded.given.size() == 1);
  CHECK(bounded.given[0] == "abc");
}

// The daemon's pool lends the buffers it got back: the last one of a text came back short of
// text, and is lent for the next text without a byte of it written (no zero-fill).
TEST_CASE("text chunks: a buffer lent again is used as it was, nothing written past the text", "[attach][chunks]") {
  std::string pool;  // one buffer, given back and lent again
  std::size_t last_text = 0;
  const TextChunks chunks{[&] { return std::move(pool); },
                          [&](std::string&& b, std::size_t text_bytes) { last_text = text_bytes, pool = std::move(b); },
                          {}};
  {
    ChunkedText out(chunks);
    out.add(std::string(ChunkedText::kMinCapacity + 100, 'a'));  // one full buffer, then 100 bytes in it again
    out.flush();
  }
  CHECK(last_text == 100);
  REQUIRE(pool.size() >= ChunkedText::kMinCapacity);
  const auto size = pool.size();
  ChunkedText next(chunks);
  next.add("xyz");
  next.flush();
  CHECK(last_text == 3);
  REQUIRE(pool.size() == size);
  CHECK(pool.substr(0, 4) == "xyza");
  CHECK(pool.find_first_not_of('a', 3) == std::string::npos);  // the rest as the last text left it
}

// The daemon's setting (TextChunks::hold_first): its processing thread wakes for each buffer
// given, so the first waits for the second, or for the text's end, and goes just before it.
TEST_CASE("text chunks: hold_first gives the first buffer with the second, and the rest as they fill", "[attach][chunks]") {
  lockwatch::test::LentBuffers consumer(8192);
  auto chunks = consumer.chunks();
  chunks.hold_first = true;
  std::string text;
  for (int i = 0; text.size() < 4 * 8192; ++i) text += std::to_string(i) + '\n';
  ChunkedText out(chunks);
  std::string_view rest = text;
  // Reads of 3000 bytes, as a socket gives them, until `upto` bytes of the text are added.
  const auto read_until = [&](std::size_t upto) {
    while (out.bytes() < upto) {
      const auto landed = read_into(out, rest.substr(0, std::min<std::size_t>(3000, upto - out.bytes())));
      out.add(landed);
      rest.remove_prefix(landed.size());
    }
  };
  SECTION("a text of up to two buffers comes at its end, in order") {
    read_until(8192 + 4000);
    CHECK(consumer.given.empty());  // the first is full, and kept
    out.flush();
    REQUIRE(consumer.given.size() == 2);
    CHECK(consumer.given[0] == text.substr(0, 8192));
    CHECK(consumer.given[1] == text.substr(8192, 4000));
  }
  SECTION("a longer one: the first two when the second fills, then each as it fills") {
    read_until(2 * 8192 - 1);
    CHECK(consumer.given.empty());
    read_until(2 * 8192);
    CHECK(consumer.given.size() == 2);
    read_until(3 * 8192);
    CHECK(consumer.given.size() == 3);
    read_until(text.size());
    out.flush();
    CHECK(consumer.text() == text);
  }
  // Kept, not copied: each buffer given is the one lent, and nothing of the text is lost.
  for (std::size_t i = 0; i < consumer.given.size(); ++i) CHECK(consumer.given[i].data() == consumer.lent[i]);
  for (const auto size : consumer.given_sizes) CHECK(size >= 8192);
}
