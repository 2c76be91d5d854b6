// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "text_input.hpp"

using namespace lockwatch::parser;
using namespace lockwatch::parser::detail;

namespace {

std::vector<std::string> split(std::string_view text, std::size_t max_line, std::size_t chunk) {
  LineSplitter s(max_line);
  std::vector<std::string> lines;
  auto sink = [&](std::string_view l, bool cut) { lines.push_back(std::string(l) + (cut ? "<cut>" : "")); };
  for (std::size_t at = 0; at < text.size(); at += chunk) s.feed(text.substr(at, chunk), sink);
  s.finish(sink);
  return lines;
}

std::string decode(std::string_view bytes, std::size_t chunk, Encoding* enc = nullptr) {
  Transcoder t;
  std::string out;
  for (std::size_t at = 0; at < bytes.size(); at += chunk) t.feed(bytes.substr(at, chunk), out);
  t.finish(out);
  if (enc != nullptr) *enc = t.encoding();
  return out;
}

std::string utf16le(std::u16string_view text, bool bom) {
  std::string out = bom ? "\xFF\xFE" : "";
  for (char16_t c : text) out.push_back(static_cast<char>(c & 0xFF)), out.push_back(static_cast<char>(c >> 8));
  return out;
}

}  // namespace

TEST_CASE("line splitter: CRLF, missing final newline, any chunking", "[parser][input]") {
  const std::string text = "a\r\nbb\n\nccc";
  for (std::size_t chunk = 1; chunk <= text.size(); ++chunk) {
    INFO("chunk " << chunk);
    CHECK(split(text, 100, chunk) == std::vector<std::string>{"a", "bb", "", "ccc"});
  }
}

TEST_CASE("line splitter: a long line keeps its first and last halves, on any chunking", "[parser][input]") {
  const std::string text = "0123456789\nok\nabcde\r\nxyz\n";
  for (std::size_t chunk = 1; chunk <= text.size(); ++chunk) {
    INFO("chunk " << chunk);
    // The '\r' of a CRLF line counts towards its length (it may come in a later chunk).
    CHECK(split(text, 4, chunk) == std::vector<std::string>{"0189<cut>", "ok", "abe<cut>", "xyz"});
    CHECK(split(text, 5, chunk) == std::vector<std::string>{"01789<cut>", "ok", "abde<cut>", "xyz"});
    CHECK(split(text, 6, chunk) == std::vector<std::string>{"012789<cut>", "ok", "abcde", "xyz"});
  }
}

TEST_CASE("line splitter: a line of megabytes costs its bound, on any chunking", "[parser][input][security]") {
  std::string text(3 << 20, 'n');
  text[0] = '"';
  text += "\" #12 prio=5 nid=0x1 waiting for monitor entry [0x0]\n";
  for (std::size_t chunk : {std::size_t{1} << 10, std::size_t{64} << 10, text.size()}) {
    const auto lines = split(text, 1024, chunk);
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].size() == 1024 + 5);  // + "<cut>"
    CHECK(lines[0].front() == '"');
    CHECK(lines[0].find("waiting for monitor entry [0x0]<cut>") != std::string::npos);
  }
}

TEST_CASE("transcoder: UTF-16LE with and without BOM, UTF-16BE, UTF-8 BOM", "[parser][input]") {
  Encoding enc{};
  const std::u16string text = u"Full thread dump \u00fc \U0001F600\r\n";
  const std::string expected = "Full thread dump \xC3\xBC \xF0\x9F\x98\x80\r\n";
  for (std::size_t chunk = 1; chunk <= 7; ++chunk) {
    CHECK(decode(utf16le(text, true), chunk, &enc) == expected);
    CHECK(enc == Encoding::utf16le);
    CHECK(decode(utf16le(text, false), chunk, &enc) == expected);
  }
  std::string be = "\xFE\xFF";
  for (char16_t c : std::u16string(u"ab")) be.push_back(static_cast<char>(c >> 8)), be.push_back(static_cast<char>(c & 0xFF));
  CHECK(decode(be, 1, &enc) == "ab");
  CHECK(enc == Encoding::utf16be);
  CHECK(decode("\xEF\xBB\xBFhi", 1, &enc) == "hi");
  CHECK(enc == Encoding::utf8);
}

TEST_CASE("transcoder: broken UTF-16 becomes replacement characters, not a crash", "[parser][input]") {
  const std::string lone_high = utf16le(std::u16string(1, char16_t{0xD800}) + u"x", true);
  CHECK(decode(lone_high, 1) == "\xEF\xBF\xBDx");
  CHECK(decode(std::string("\xFF\xFE" "a\0b", 5), 2) == "a\xEF\xBF\xBD");  // odd trailing byte
}

TEST_CASE("transcoder: Latin-1 and short inputs pass through as bytes", "[parser][input]") {
  CHECK(decode("caf\xE9", 1) == "caf\xE9");
  CHECK(decode("x", 1) == "x");
  CHECK(decode("", 1).empty());
}

TEST_CASE("transcoder: only the first 4 bytes decide; a whole input in one chunk is not copied", "[parser][input]") {
  Transcoder t;
  std::string out;
  const std::string reply = "2024-05-01 12:00:00\nFull thread dump X:\n";
  // feed_head takes the deciding bytes only: the caller keeps the rest and routes it as is.
  CHECK(t.feed_head(std::string_view(reply).substr(0, 2), out) == 2);
  CHECK_FALSE(t.decided());
  CHECK(t.feed_head(std::string_view(reply).substr(2), out) == 2);  // 2 more make 4
  CHECK(t.decided());
  CHECK(t.passthrough());
  CHECK(out == "2024");
  CHECK(t.feed_head(reply, out) == 0);  // decided: nothing more to take
  // UTF-16 in one chunk: the same text whatever the first chunk's size.
  const std::u16string text = u"Full thread dump \u00fc\n";
  for (std::size_t chunk = 1; chunk <= 9; ++chunk) CHECK(decode(utf16le(text, true), chunk) == decode(utf16le(text, true), 1000));
  CHECK(decode(utf16le(text, false), 1000) == "Full thread dump \xC3\xBC\n");
}
