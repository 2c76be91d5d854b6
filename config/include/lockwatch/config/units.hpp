// SPDX-License-Identifier: Apache-2.0
// Durations and byte sizes as people write them in configs and on command lines.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace lockwatch::config {

/// "250ms", "10s", "1m", "1h"; a bare number is seconds. Nothing for anything else: signs,
/// fractions, spaces, other units, or a value that does not fit in milliseconds.
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);

/// "512KiB", "32MiB", "1GiB", "1TiB", "100B" or plain bytes "1048576" (binary units only:
/// "MB" is ambiguous). Nothing for anything else, or for a value above 2^64 - 1.
std::optional<std::uint64_t> parse_size(std::string_view text);

/// The largest unit that is exact: 1500ms -> "1500ms", 60000ms -> "1m", 0 -> "0s".
std::string format_duration(std::chrono::milliseconds duration);

/// The largest binary unit that is exact: 33554432 -> "32MiB", 1000 -> "1000B".
std::string format_size(std::uint64_t bytes);

}  // namespace lockwatch::config
