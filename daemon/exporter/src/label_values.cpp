// SPDX-License-Identifier: Apache-2.0
// Label value sanitizing: decode UTF-8, replace what cannot be shown, cut long values.
#include "lockwatch/exporter/label_values.hpp"

#include <cstdint>

#include "lockwatch/model/text.hpp"

namespace lockwatch::exporter {
namespace {

constexpr char32_t replacement = U'\uFFFD';
constexpr std::string_view ellipsis = "\u2026";

bool is_control(char32_t cp) noexcept { return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F); }

// Cuts a valid UTF-8 string to at most `limit` bytes without splitting a character.
void cut_at_boundary(std::string& s, std::size_t limit) {
  std::size_t end = limit;
  while (end > 0 && (static_cast<std::uint8_t>(s[end]) & 0xC0) == 0x80) --end;
  s.resize(end);
}

}  // namespace

std::string sanitize_label_value(std::string_view raw) {
  std::string out;
  // Stop decoding once the value is known to be too long: a hostile name may be megabytes.
  for (std::size_t i = 0; i < raw.size() && out.size() <= max_label_value_bytes;) {
    char32_t cp = 0;
    const std::size_t len = model::detail::utf8_sequence(raw, i, cp);
    model::append_utf8(len == 0 || is_control(cp) ? replacement : cp, out);
    i += len == 0 ? 1 : len;
  }
  if (out.size() <= max_label_value_bytes) return out;
  cut_at_boundary(out, max_label_value_bytes - ellipsis.size());
  out += ellipsis;
  return out;
}

}  // namespace lockwatch::exporter
