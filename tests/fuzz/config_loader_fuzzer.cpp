// SPDX-License-Identifier: Apache-2.0
// Fuzz target for the YAML config loader. Whatever the bytes: no exception escapes, the
// result is a config or errors (never both, never neither), every error points inside the
// text and says something, and a config the loader accepts passes validate() unchanged.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "lockwatch/config/load.hpp"

namespace {

namespace config = lockwatch::config;

constexpr std::string_view kName = "fuzz.yaml";

[[noreturn]] void fail(const char* what, const config::ConfigError* error = nullptr) {
  std::fprintf(stderr, "config_loader_fuzzer: %s\n", what);
  if (error != nullptr) std::fprintf(stderr, "  error: %s\n", config::to_string(*error).c_str());
  __builtin_trap();
}

// Lines as yaml-cpp numbers them: one more than the line feeds ('\n' alone moves its mark
// to the next line; a lone '\r' does not). An error at the very end of a text that ends in
// '\n' is on that last, empty line.
std::size_t line_count(std::string_view text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
}

// The bytes of 1-based line `line`, without its '\n'.
std::string_view line_text(std::string_view text, std::size_t line) {
  std::size_t begin = 0;
  for (std::size_t i = 1; i < line; ++i) begin = text.find('\n', begin) + 1;
  return text.substr(begin, text.find('\n', begin) - begin);  // npos - begin: to the end
}

// The highest column an error on `line` may have. A text without NUL bytes is read as UTF-8
// byte by byte, so a column is at most one past the line's last byte. A NUL or a 0xFE/0xFF
// byte first may make yaml-cpp read UTF-16 or UTF-32, transcoded to UTF-8 before columns
// are counted: up to 3 bytes for every 2 of the input (an unpaired surrogate becomes U+FFFD).
std::size_t max_column(std::string_view text, std::size_t line) {
  const bool utf8 = text.find('\0') == std::string_view::npos &&
                    (text.empty() || (text[0] != '\xfe' && text[0] != '\xff'));
  if (utf8) return line_text(text, line).size() + 1;
  return text.size() * 3 / 2 + 3;
}

void check_error(const config::ConfigError& error, std::string_view text) {
  if (error.message.empty()) fail("an error without a message", &error);
  if (error.file != kName) fail("an error naming another file", &error);
  if (error.line == 0 && error.column == 0) return;  // no place in the file: a cross-setting rule
  if (error.line < 1 || static_cast<std::size_t>(error.line) > line_count(text))
    fail("an error line outside the text", &error);
  const auto line = static_cast<std::size_t>(error.line);
  if (error.column < 1 || static_cast<std::size_t>(error.column) > max_column(text, line))
    fail("an error column outside its line", &error);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Bytes are bytes: the loader reads them as chars, signedness is irrelevant here.
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  config::LoadResult result;
  try {
    result = config::load_config_text(text, kName);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "config_loader_fuzzer: exception escaped: %s\n", e.what());
    __builtin_trap();
  } catch (...) {
    fail("a non-standard exception escaped");
  }
  if (result.config.has_value() == !result.errors.empty()) fail("both a config and errors, or neither");
  for (const auto& error : result.errors) check_error(error, text);
  if (result.config) {
    const auto problems = config::validate(*result.config);
    if (!problems.empty()) fail("validate() rejects a loaded config", &problems.front());
  }
  return 0;
}
