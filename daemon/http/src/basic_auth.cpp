// SPDX-License-Identifier: Apache-2.0
// Basic auth: header parsing, bcrypt through libxcrypt, constant-time comparison, the cache.
#include "basic_auth.hpp"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <array>
#include <cstdint>
#include <memory>
#include <stdexcept>

namespace lockwatch::http::detail {
namespace {

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// Four characters -> up to three bytes; '=' only as padding at the very end ("xx==", "xxx=").
bool decode_quad(std::string_view quad, bool last, std::string& out) {
  std::uint32_t bits = 0;
  int padding = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    const int value = quad[i] == '=' && last && i >= 2 ? 0 : base64_value(quad[i]);
    if (value < 0 || (padding > 0 && quad[i] != '=')) return false;
    padding += quad[i] == '=' ? 1 : 0;
    bits = bits << 6 | static_cast<std::uint32_t>(value);
  }
  out += static_cast<char>(bits >> 16);
  if (padding < 2) out += static_cast<char>((bits >> 8) & 0xff);
  if (padding < 1) out += static_cast<char>(bits & 0xff);
  return true;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if ((a[i] | 0x20) != (b[i] | 0x20)) return false;
  return true;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// crypt_rn recomputes the hash from the password and the stored hash's salt and cost;
// equal output means the right password. Compared in constant time.
bool bcrypt_matches(const std::string& password, const std::string& hash) {
  if (password.find('\0') != std::string::npos) return false;  // C strings would cut it short
  auto data = std::make_unique<crypt_data>();  // 32 KiB of scratch space, zeroed as crypt_rn requires
  const char* computed = crypt_rn(password.c_str(), hash.c_str(), data.get(), sizeof *data);
  if (computed == nullptr) return false;  // not a hash libxcrypt knows
  const std::string_view out(computed);
  return out.size() == hash.size() && CRYPTO_memcmp(out.data(), hash.data(), hash.size()) == 0;
}

std::string random_key() {
  std::array<unsigned char, 32> key{};
  if (RAND_bytes(key.data(), static_cast<int>(key.size())) != 1) throw std::runtime_error("basic auth: no random bytes for the cache key");
  return {reinterpret_cast<const char*>(key.data()), key.size()};
}

}  // namespace

std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4)
    if (!decode_quad(text.substr(i, 4), i + 4 == text.size(), out)) return std::nullopt;
  return out;
}

std::optional<Credentials> parse_basic(std::string_view authorization) {
  authorization = trim(authorization);
  const auto space = authorization.find(' ');
  if (space == std::string_view::npos || !iequals(authorization.substr(0, space), "basic")) return std::nullopt;
  const auto decoded = base64_decode(trim(authorization.substr(space)));
  const auto colon = decoded ? decoded->find(':') : std::string::npos;
  if (colon == std::string::npos) return std::nullopt;
  return Credentials{decoded->substr(0, colon), decoded->substr(colon + 1)};
}

PasswordCheck::PasswordCheck(std::map<std::string, std::string, std::less<>> users)
    : users_(std::move(users)), key_(random_key()) {}

std::string PasswordCheck::fingerprint(const Credentials& credentials) const {
  const std::string text = credentials.user + '\0' + credentials.password;
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned length = 0;
  HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()), reinterpret_cast<const unsigned char*>(text.data()),
       text.size(), digest.data(), &length);
  return {reinterpret_cast<const char*>(digest.data()), length};
}

bool PasswordCheck::remembered(const Credentials& credentials) const {
  const auto print = fingerprint(credentials);
  std::lock_guard lock(mu_);
  return verified_.count(print) > 0;
}

bool PasswordCheck::verify(const Credentials& credentials) {
  if (users_.empty()) return false;
  const auto user = users_.find(credentials.user);
  // An unknown user is checked against a real user's hash, so it takes as long.
  const auto& hash = user != users_.end() ? user->second : users_.begin()->second;
  if (!bcrypt_matches(credentials.password, hash) || user == users_.end()) return false;
  const auto print = fingerprint(credentials);
  std::lock_guard lock(mu_);
  if (verified_.size() >= max_remembered) verified_.clear();  // the bound; the next scrape re-verifies
  verified_.insert(print);
  return true;
}

}  // namespace lockwatch::http::detail
