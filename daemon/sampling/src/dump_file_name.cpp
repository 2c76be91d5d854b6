// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/sampling/dump_file_name.hpp"

#include <sys/random.h>

#include <array>
#include <cerrno>

namespace lockwatch::sampling {
namespace {

constexpr std::size_t random_bytes = 16;
constexpr std::string_view suffix = ".json";

bool fill_random(std::array<unsigned char, random_bytes>& out) {
  std::size_t got = 0;
  while (got < out.size()) {
    const auto n = ::getrandom(out.data() + got, out.size() - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    got += static_cast<std::size_t>(n);
  }
  return true;
}

bool lower_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

}  // namespace

std::optional<DumpFileName> DumpFileName::generate(std::uint32_t jvm_uid) {
  std::array<unsigned char, random_bytes> bytes{};
  if (!fill_random(bytes)) return std::nullopt;
  constexpr char digits[] = "0123456789abcdef";
  std::string file;
  file.reserve(2 * random_bytes + suffix.size());
  for (const auto b : bytes) file += digits[b >> 4], file += digits[b & 0xf];
  file += suffix;
  return DumpFileName(directory_for(jvm_uid), std::move(file));
}

std::string DumpFileName::directory_for(std::uint32_t jvm_uid) { return ".lockwatch-" + std::to_string(jvm_uid); }

bool DumpFileName::is_ours(std::string_view name) noexcept {
  if (name.size() != 2 * random_bytes + suffix.size() || !name.ends_with(suffix)) return false;
  for (std::size_t i = 0; i < 2 * random_bytes; ++i)
    if (!lower_hex(name[i])) return false;
  return true;
}

}  // namespace lockwatch::sampling
