// SPDX-License-Identifier: Apache-2.0
// Label values made safe for the exposition: valid UTF-8, no control characters, bounded.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace lockwatch::exporter {

/// Longest label value in bytes, the "…" included. Class names and sites are far shorter;
/// a longer value is a garbled or hostile name, and every scrape repeats every byte of it.
inline constexpr std::size_t max_label_value_bytes = 200;

/// `raw` as a label value: each byte that does not start a valid UTF-8 sequence (overlong
/// forms and surrogates included) and each control character (C0, DEL, C1) becomes U+FFFD;
/// a result over `max_label_value_bytes` is cut at a character boundary and ends in "…".
/// Quotes, backslashes and other printable text stay: the exposition writer escapes them.
std::string sanitize_label_value(std::string_view raw);

}  // namespace lockwatch::exporter
