// SPDX-License-Identifier: Apache-2.0
// "Did you mean": the known name a mistyped one most likely meant.
#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace lockwatch::config::detail {

/// Optimal string alignment distance (a swap of two neighbours counts one), ignoring case.
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `word`, if it is close enough to be a typo of it: at most 2 edits,
/// and fewer than half of the word's letters (so "foo" does not suggest "log").
std::optional<std::string_view> closest(std::string_view word, std::span<const std::string_view> candidates);

}  // namespace lockwatch::config::detail
