// SPDX-License-Identifier: Apache-2.0
// The only file that includes spdlog.
#include "lockwatch/service/log.hpp"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace lockwatch::log {
namespace {

spdlog::level::level_enum to_spdlog(Level level) {
  switch (level) {
    case Level::trace: return spdlog::level::trace;
    case Level::debug: return spdlog::level::debug;
    case Level::info: return spdlog::level::info;
    case Level::warn: return spdlog::level::warn;
    case Level::error: return spdlog::level::err;
    case Level::off: return spdlog::level::off;
  }
  return spdlog::level::info;
}

bool needs_quotes(std::string_view v) {
  if (v.empty()) return true;
  for (char ch : v)
    if (const auto c = static_cast<unsigned char>(ch); c <= ' ' || c == '"' || c == '=' || c == '\\' || c == 0x7f) return true;
  return false;
}

void append_value(std::string& out, std::string_view v) {
  if (!needs_quotes(v)) return void(out.append(v));
  out.push_back('"');
  for (char ch : v) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') out.push_back('\\'), out.push_back(static_cast<char>(c));
    else if (c == '\n') out.append("\\n");
    else if (c < ' ' || c == 0x7f) out.append("\\x").push_back("0123456789abcdef"[c >> 4]), out.push_back("0123456789abcdef"[c & 15]);
    else out.push_back(static_cast<char>(c));
  }
  out.push_back('"');
}

}  // namespace

void setup(Level level) {
  auto logger = spdlog::stderr_logger_mt("lockwatch");
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ level=%l %v", spdlog::pattern_time_type::utc);
  logger->flush_on(spdlog::level::trace);  // a sidecar's log is read live; never lose the last lines
  spdlog::set_default_logger(logger);
  set_level(level);
}

void set_level(Level level) { spdlog::set_level(to_spdlog(level)); }

std::string format_line(std::string_view event, Fields fields) {
  std::string out = "msg=";
  append_value(out, event);
  for (const auto& [key, value] : fields) {
    out.append(" ").append(key).append("=");
    append_value(out, value);
  }
  return out;
}

void write(Level level, std::string_view event, Fields fields) {
  const auto l = to_spdlog(level);
  if (!spdlog::should_log(l)) return;
  spdlog::log(l, "{}", format_line(event, fields));
}

bool RateLimit::allow(std::chrono::steady_clock::time_point now, std::uint64_t& suppressed) {
  if (last_ && now - *last_ < period_) return ++held_, false;
  last_ = now;
  suppressed = std::exchange(held_, 0);
  return true;
}

}  // namespace lockwatch::log
