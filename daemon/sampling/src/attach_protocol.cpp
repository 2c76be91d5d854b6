// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/sampling/attach_protocol.hpp"

#include <charconv>
#include <stdexcept>

namespace lockwatch::sampling {

std::string encode_request(AttachCommand command, const DumpFileName& file) {
  using namespace std::string_view_literals;
  if (command == AttachCommand::dump_to_file_json) {
    if (file.empty()) throw std::invalid_argument("dump_to_file_json needs a generated file name");
    // JDK 21's dump_to_file fails on an existing file: every name is fresh, so no
    // -overwrite, which would let a planted file be truncated by the JVM.
    return std::string("1\0jcmd\0Thread.dump_to_file -format=json "sv) + file.jvm_path() + std::string("\0\0\0"sv);
  }
  // JDK 8 takes -l only as the exact argument "-l" (strcmp); JDK 11+ look for the letter.
  return command == AttachCommand::threaddump_locks ? std::string("1\0threaddump\0-l\0\0\0"sv)
                                                    : std::string("1\0threaddump\0\0\0\0"sv);
}

bool reports_created(std::string_view reply_text, const DumpFileName& file) {
  if (file.empty()) return false;
  const auto line = reply_text.substr(0, reply_text.find('\n'));
  return line == "Created " + file.jvm_path();
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
