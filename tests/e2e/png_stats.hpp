// SPDX-License-Identifier: Apache-2.0
// Enough of PNG to tell a rendered page from a blank one: the size of a screenshot and how
// varied its colours are. Reads what chromium writes (8-bit RGB or RGBA, not interlaced)
// with an inflate of its own, so the tests need no image library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace lockwatch::test {

struct PngStats {
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  std::size_t colours = 0;      // distinct RGB values
  double dominant_share = 0;    // pixels of the most common colour / all pixels
};

/// Nothing (and `error` set) for anything it cannot read.
std::optional<PngStats> png_stats(std::string_view file_bytes, std::string& error);

}  // namespace lockwatch::test
