// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/sampling/dump_record.hpp"

namespace lockwatch::sampling {

std::string_view to_string(Outcome outcome) noexcept {
  switch (outcome) {
    case Outcome::ok: return "ok";
    case Outcome::timeout: return "timeout";
    case Outcome::attach_refused: return "attach_refused";
    case Outcome::target_gone: return "target_gone";
    case Outcome::io_error: return "io_error";
    case Outcome::parse_error: return "parse_error";
    case Outcome::tool_failed: return "tool_failed";
    case Outcome::too_large: return "too_large";
    case Outcome::untrusted: return "untrusted";
    case Outcome::dump_file_failed: return "dump_file_failed";
  }
  return "io_error";
}

std::string_view to_string(DumpForm form) noexcept { return form == DumpForm::json ? "json" : "print"; }

std::string_view to_string(DumpSource source) noexcept {
  switch (source) {
    case DumpSource::attach: return "attach";
    case DumpSource::jstack: return "jstack";
    case DumpSource::none: break;
  }
  return "none";
}

std::string no_dump_error(DumpSource source, std::string_view head, std::uint64_t bytes) {
  std::string shown(head.substr(0, 120));
  for (auto& c : shown)
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  return std::string(to_string(source)) + " answered " + std::to_string(bytes) +
         " bytes without a thread dump" + (shown.empty() ? "" : ": '" + shown + "'");
}

std::string too_many_threads_error(std::uint64_t bound, std::string_view what_then) {
  return "the reply held more than limits.max_threads (" + std::to_string(bound) + ") thread entries: " +
         std::string(what_then);
}

}  // namespace lockwatch::sampling
