// SPDX-License-Identifier: Apache-2.0
// A consumer of a dump's text in lent buffers (DumpRequest::chunks), as the daemon is one:
// lends buffers of `capacity` and keeps what comes back.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "lockwatch/sampling/text_chunks.hpp"

namespace lockwatch::test {

struct LentBuffers {
  explicit LentBuffers(std::size_t c) : capacity(c) {}
  std::size_t capacity;
  std::vector<const char*> lent;  // where each buffer lent began
  std::vector<std::string> given;        // each buffer given, cut to its text
  std::vector<std::size_t> given_sizes;  // each buffer's size as it was given

  sampling::TextChunks chunks() {
    return {[this] {
              std::string b;
              b.reserve(capacity);
              lent.push_back(b.data());
              return b;
            },
            [this](std::string&& b, std::size_t text_bytes) {
              given_sizes.push_back(b.size());
              b.resize(text_bytes);
              given.push_back(std::move(b));
            },
            {}};
  }
  std::string text() const {
    std::string all;
    for (const auto& g : given) all += g;
    return all;
  }
};

}  // namespace lockwatch::test
