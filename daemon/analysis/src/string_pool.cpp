// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/analysis/string_pool.hpp"

namespace lockwatch::analysis {

std::string_view StringPool::intern(std::string_view text) {
  if (auto it = strings_.find(text); it != strings_.end()) return *it;
  bytes_ += text.size();
  return *strings_.emplace(text).first;
}

}  // namespace lockwatch::analysis
