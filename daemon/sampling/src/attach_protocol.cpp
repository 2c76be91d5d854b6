// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/sampling/attach_protocol.hpp"

#include <charconv>

namespace lockwatch::sampling {

std::string encode_request(AttachCommand command) {
  using namespace std::string_view_literals;
  // JDK 8 takes -l only as the exact argument "-l" (strcmp); JDK 11+ look for the letter.
  return command == AttachCommand::threaddump_locks ? std::string("1\0threaddump\0-l\0\0\0"sv)
                                                    : std::string("1\0threaddump\0\0\0\0"sv);
}

std::string_view ReplyDecoder::feed(std::string_view bytes) {
  if (status_ || malformed_) return status_ ? bytes : std::string_view{};
  const auto nl = bytes.find('\n');
  line_.append(bytes.substr(0, nl));
  // A jint printed with "%d": at most 11 characters.
  if (line_.size() > 11) {
    malformed_ = true;
    return {};
  }
  if (nl == std::string_view::npos) return {};
  int value = 0;
  auto [ptr, ec] = std::from_chars(line_.data(), line_.data() + line_.size(), value);
  if (ec != std::errc{} || ptr != line_.data() + line_.size()) {
    malformed_ = true;
    return {};
  }
  status_ = value;
  return bytes.substr(nl + 1);
}

}  // namespace lockwatch::sampling
