// SPDX-License-Identifier: Apache-2.0
// Why a duration or size did not parse, so that config errors can say more than "bad value".
#pragma once

#include <cstdint>
#include <string_view>

namespace lockwatch::config::detail {

enum class UnitFailure { none, not_a_number, negative, fraction, unknown_unit, too_large };

struct UnitParse {
  std::uint64_t value = 0;  // milliseconds or bytes
  UnitFailure failure = UnitFailure::none;
  std::string_view unit;    // the suffix after the digits, for "unknown unit" messages
};

UnitParse parse_duration_ms(std::string_view text);
UnitParse parse_size_bytes(std::string_view text);

}  // namespace lockwatch::config::detail
