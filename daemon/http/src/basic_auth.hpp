// SPDX-License-Identifier: Apache-2.0
// HTTP Basic credentials checked against bcrypt hashes, with a bounded cache of successes.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace lockwatch::http::detail {

struct Credentials {
  std::string user;
  std::string password;
};

/// "Basic dXNlcjpwYXNz" -> {"user", "pass"} (the scheme in any case). Nothing for another
/// scheme, bad base64, or decoded text without a ':'.
std::optional<Credentials> parse_basic(std::string_view authorization);

/// Strict base64 (RFC 4648, padded); nothing on any other character or a bad length.
std::optional<std::string> base64_decode(std::string_view text);

/// The users of a web config and their bcrypt hashes. bcrypt is slow on purpose (about
/// 70 ms at cost 10) and Prometheus sends the same credentials every scrape, so a success
/// is remembered - as a keyed hash, never the password - for the next requests, up to
/// max_remembered of them. Thread-safe.
class PasswordCheck {
 public:
  static constexpr std::size_t max_remembered = 128;

  explicit PasswordCheck(std::map<std::string, std::string, std::less<>> users);

  /// True when these credentials passed verify() before: microseconds, fit for the io thread.
  bool remembered(const Credentials& credentials) const;

  /// The bcrypt check (tens of milliseconds: keep it off the io thread). An unknown user
  /// costs the same time as a known one, so timing does not tell which users exist.
  bool verify(const Credentials& credentials);

 private:
  std::string fingerprint(const Credentials& credentials) const;

  std::map<std::string, std::string, std::less<>> users_;
  std::string key_;  // random per process: the remembered fingerprints cannot be tried offline
  mutable std::mutex mu_;
  std::set<std::string> verified_;  // fingerprints of credentials that passed
};

}  // namespace lockwatch::http::detail
