// SPDX-License-Identifier: Apache-2.0
// The rules a Config must satisfy, shared by the YAML loader (which adds positions) and validate().
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "lockwatch/config/config.hpp"

namespace lockwatch::config::detail {

struct Range {
  std::int64_t min = 0;
  std::int64_t max = 0;
};

// Bounds past which a value is a typo or would hurt the JVM or the machine, not a choice.
namespace limits {
inline constexpr Range max_concurrent_dumps{1, 256};
inline constexpr Range lock_every{1, 1'000'000};
inline constexpr Range pid{1, std::numeric_limits<int>::max()};
inline constexpr Range ring_samples{1, 100'000};
inline constexpr Range top_k{1, 1000};
inline constexpr Range stuck_samples{1, 100'000};
inline constexpr Range neighbour_window{0, 100};
inline constexpr Range blocked_threshold{0, 1'000'000};
inline constexpr Range contended_enters_per_second{0, 1'000'000'000'000};
inline constexpr Range burst_count{1, 1000};
inline constexpr Range max_connections{1, 10'000};
inline constexpr Range max_targets{1, 100'000};
inline constexpr Range max_threads{1, 10'000'000};
inline constexpr Range idle_id{1, 4'294'967'294};  // never root; (uid_t)-1 means "unchanged" to the kernel
inline constexpr std::uint64_t min_reply_bytes = 64 * KiB;      // a small JVM's dump
inline constexpr std::uint64_t min_line_bytes = 1 * KiB;
inline constexpr std::uint64_t max_line_bytes = 16 * MiB;
inline constexpr std::uint64_t min_correlator_bytes = 1 * MiB;
inline constexpr std::uint64_t min_ring_bytes = 64 * KiB;      // below this not even a small dump fits
inline constexpr std::uint64_t min_incident_bytes = 1 * MiB;   // one burst of dumps of a small JVM
}  // namespace limits

/// "must be between 1 and 100000, got 0"; `value` as the user wrote it.
std::string range_message(std::string_view value, Range range);

/// Why `text` is not a listen address ("" when it is one).
std::string listen_problem(std::string_view text);

/// One broken rule. `keys` names the setting at fault first and then any other setting the
/// rule involves: the loader points at the first of them that the file sets.
struct Problem {
  std::vector<std::string> keys;
  std::string message;  // without the key
};

std::vector<Problem> check_config(const Config& config);

/// The web config's rules: a certificate with its key, client CA with client_auth_type,
/// bcrypt hashes and user names that Basic auth can carry.
std::vector<Problem> check_web(const WebSettings& web);

/// "$2y$10$" + 53 characters of bcrypt's base64: the hashes `htpasswd -B` and Python's
/// bcrypt write, and that libxcrypt verifies ($2a$, $2b$ and $2y$, cost 4-31).
bool is_bcrypt_hash(std::string_view hash);

}  // namespace lockwatch::config::detail
