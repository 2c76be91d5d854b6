// SPDX-License-Identifier: Apache-2.0
// Interned strings: dumps repeat the same class names, sites and thread names sample after
// sample, so a correlator keeps each once and refers to it by view.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_set>

namespace lockwatch::analysis {

class StringPool {
 public:
  /// The pooled copy of `text`; stable for the pool's lifetime (nodes never move).
  std::string_view intern(std::string_view text);
  std::size_t size() const noexcept { return strings_.size(); }
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_set<std::string, Hash, std::equal_to<>> strings_;
  std::size_t bytes_ = 0;
};

}  // namespace lockwatch::analysis
