// SPDX-License-Identifier: Apache-2.0
// Reading untrusted dump bytes as text: thread names and old dumps are not always UTF-8.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace lockwatch::model {

/// Calls `f(char32_t)` for each code point of `raw`. Valid UTF-8 decodes normally; a byte
/// that does not start a valid sequence is taken as Latin-1 (HP-UX and Windows dumps),
/// so every input maps to some text and nothing is dropped.
template <class F>
void for_each_code_point(std::string_view raw, F&& f);

/// Appends `cp` to `out` as UTF-8; a surrogate or a value past U+10FFFF becomes U+FFFD.
void append_utf8(char32_t cp, std::string& out);

namespace detail {
std::size_t utf8_sequence(std::string_view s, std::size_t i, char32_t& cp) noexcept;
}

template <class F>
void for_each_code_point(std::string_view raw, F&& f) {
  for (std::size_t i = 0; i < raw.size();) {
    char32_t cp = 0;
    const std::size_t len = detail::utf8_sequence(raw, i, cp);
    if (len == 0) {
      f(static_cast<char32_t>(static_cast<std::uint8_t>(raw[i])));
      ++i;
    } else {
      f(cp);
      i += len;
    }
  }
}

}  // namespace lockwatch::model
