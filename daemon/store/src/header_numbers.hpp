// SPDX-License-Identifier: Apache-2.0
// The numbers of a thread header that change every sample (cpu=, elapsed=, ...), cut out
// so the rest of the header is the same text sample after sample and interns to one copy.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace lockwatch::store::detail {

/// Marks where a number was cut out of a template line; followed by one byte '0'+fraction digits.
inline constexpr char number_mark = '\x01';

/// If `line` is a thread header with volatile numbers, writes the template to `tmpl`,
/// appends the numbers to `numbers` (varints) and returns true. A token that would not
/// render back byte for byte is left in the template as text.
bool cut_numbers(std::string_view line, std::string& tmpl, std::string& numbers);

/// Whether cut_numbers(line) would write exactly `tmpl` and return true; if so, appends the
/// numbers as it would. Nothing is copied: this is the ring's check of a header against the
/// template the same thread had in the last sample, run on every header of every sample.
bool numbers_fit(std::string_view line, std::string_view tmpl, std::string& numbers);

/// Renders a template back, taking its numbers from `numbers` at `pos` (advanced).
/// False when the numbers run out (a corrupt store; the caller reports it).
bool paste_numbers(std::string_view tmpl, std::string_view numbers, std::size_t& pos, std::string& out);

void put_varint(std::string& out, std::uint64_t v);
bool get_varint(std::string_view in, std::size_t& pos, std::uint64_t& v);

}  // namespace lockwatch::store::detail
