// SPDX-License-Identifier: Apache-2.0
// The daemon's log: one line per event, key=value pairs, so logs can be grepped and parsed.
#pragma once

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace lockwatch::log {

enum class Level : std::uint8_t { trace, debug, info, warn, error, off };

using Fields = std::initializer_list<std::pair<std::string_view, std::string>>;

/// Lines go to stderr (a container's log); timestamps in UTC.
void setup(Level level);
void set_level(Level level);
void write(Level level, std::string_view event, Fields fields = {});
inline void info(std::string_view event, Fields fields = {}) { write(Level::info, event, fields); }
inline void warn(std::string_view event, Fields fields = {}) { write(Level::warn, event, fields); }
inline void error(std::string_view event, Fields fields = {}) { write(Level::error, event, fields); }
inline void debug(std::string_view event, Fields fields = {}) { write(Level::debug, event, fields); }

/// `event key=value ...`, values quoted when they hold spaces, quotes or '='; control
/// characters escaped, so a hostile thread name cannot forge a log line.
std::string format_line(std::string_view event, Fields fields);

/// One warning per period for a repeating condition, with the count of the ones held back.
class RateLimit {
 public:
  explicit RateLimit(std::chrono::steady_clock::duration period) : period_(period) {}
  /// True when this occurrence should be logged; `suppressed` says how many were not since.
  bool allow(std::chrono::steady_clock::time_point now, std::uint64_t& suppressed);
  void reset() { last_.reset(), held_ = 0; }

 private:
  std::chrono::steady_clock::duration period_;
  std::optional<std::chrono::steady_clock::time_point> last_;
  std::uint64_t held_ = 0;
};

}  // namespace lockwatch::log
