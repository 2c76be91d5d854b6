// SPDX-License-Identifier: Apache-2.0
// Durations and sizes: whole numbers with a unit suffix, checked for overflow.
#include "lockwatch/config/units.hpp"

#include <array>
#include <charconv>
#include <limits>
#include <utility>

#include "units_detail.hpp"

namespace lockwatch::config {
namespace {

using Unit = std::pair<std::string_view, std::uint64_t>;

constexpr std::array<Unit, 5> duration_units{{{"ms", 1}, {"s", 1000}, {"", 1000}, {"m", 60'000}, {"h", 3'600'000}}};
constexpr std::array<Unit, 6> size_units{
    {{"", 1}, {"B", 1}, {"KiB", 1ULL << 10}, {"MiB", 1ULL << 20}, {"GiB", 1ULL << 30}, {"TiB", 1ULL << 40}}};

template <std::size_t N>
detail::UnitParse parse_with_units(std::string_view text, const std::array<Unit, N>& units) {
  detail::UnitParse out;
  std::uint64_t number = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, number);
  out.unit = std::string_view(ptr, static_cast<std::size_t>(end - ptr));
  if (ec == std::errc::invalid_argument) {
    // from_chars into an unsigned type refuses '-': say so instead of "not a number".
    const bool negative = text.size() > 1 && text[0] == '-' && text[1] >= '0' && text[1] <= '9';
    out.failure = negative ? detail::UnitFailure::negative : detail::UnitFailure::not_a_number;
    return out;
  }
  for (const auto& [name, factor] : units) {
    if (name != out.unit) continue;
    const bool fits = ec == std::errc{} && number <= std::numeric_limits<std::uint64_t>::max() / factor;
    out.failure = fits ? detail::UnitFailure::none : detail::UnitFailure::too_large;
    out.value = fits ? number * factor : 0;
    return out;
  }
  out.failure = out.unit.starts_with('.') ? detail::UnitFailure::fraction : detail::UnitFailure::unknown_unit;
  return out;
}

template <std::size_t N>
std::string format_with_units(std::uint64_t value, const std::array<Unit, N>& units, std::string_view zero) {
  if (value == 0) return std::string(zero);
  std::string_view best_name;
  std::uint64_t best_factor = 0;
  for (const auto& [name, factor] : units)
    if (!name.empty() && value % factor == 0 && factor > best_factor) best_name = name, best_factor = factor;
  return std::to_string(value / best_factor) + std::string(best_name);
}

}  // namespace

namespace detail {

UnitParse parse_duration_ms(std::string_view text) {
  auto out = parse_with_units(text, duration_units);
  // milliseconds::rep is signed: the last bit of the unsigned range does not fit.
  constexpr auto max_ms = static_cast<std::uint64_t>(std::numeric_limits<std::chrono::milliseconds::rep>::max());
  if (out.failure == UnitFailure::none && out.value > max_ms) out.failure = UnitFailure::too_large;
  return out;
}

UnitParse parse_size_bytes(std::string_view text) { return parse_with_units(text, size_units); }

}  // namespace detail

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text) {
  const auto parsed = detail::parse_duration_ms(text);
  if (parsed.failure != detail::UnitFailure::none) return std::nullopt;
  return std::chrono::milliseconds(static_cast<std::chrono::milliseconds::rep>(parsed.value));
}

std::optional<std::uint64_t> parse_size(std::string_view text) {
  const auto parsed = detail::parse_size_bytes(text);
  if (parsed.failure != detail::UnitFailure::none) return std::nullopt;
  return parsed.value;
}

std::string format_duration(std::chrono::milliseconds duration) {
  if (duration.count() < 0) return std::to_string(duration.count()) + "ms";
  return format_with_units(static_cast<std::uint64_t>(duration.count()), duration_units, "0s");
}

std::string format_size(std::uint64_t bytes) { return format_with_units(bytes, size_units, "0B"); }

}  // namespace lockwatch::config
