// SPDX-License-Identifier: Apache-2.0
// What the HTML files of lockwatch::page share: escaped text, numbers, colours, the SVG views.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "lockwatch/page/view.hpp"

namespace lockwatch::page::detail {

/// escape() of at most `max_chars` characters of `raw` ("..." marks a cut).
std::string text(std::string_view raw, std::size_t max_chars = 300);
/// text() with a line-break opportunity after each '.' and '$': class and method names wrap
/// at their dots instead of widening a table.
std::string code(std::string_view raw, std::size_t max_chars = 300);
/// A number with at most `decimals` decimals, shortest form ("12", "0.5").
std::string number(double value, int decimals = 1);
std::string bytes(std::uint64_t n);         // "1.2 MiB"
std::string duration(double seconds);       // "45 s", "12 min", "3.5 h"
std::string utc(double unix_seconds);       // "2026-11-30 12:00:01 UTC"
/// The colour of the chart's `series`-th line (and of its lock's swatch).
std::string_view colour(std::size_t series);
/// "monitor Inventory at Inventory.reserve", raw.
std::string lock_label(const analysis::LockKey& key);

void chart_svg(std::string& out, const view::TargetView& view);
void graph_svg(std::string& out, const view::WaitGraph& graph);
void flame_svg(std::string& out, const view::Flame& flame);

}  // namespace lockwatch::page::detail
