// SPDX-License-Identifier: Apache-2.0
#include <array>
#include <utility>

#include "lockwatch/model/thread_dump.hpp"

namespace lockwatch::model {
namespace {

constexpr std::array<std::pair<ThreadState, std::string_view>, 7> state_names{{
    {ThreadState::new_, "NEW"},
    {ThreadState::runnable, "RUNNABLE"},
    {ThreadState::blocked, "BLOCKED"},
    {ThreadState::waiting, "WAITING"},
    {ThreadState::timed_waiting, "TIMED_WAITING"},
    {ThreadState::terminated, "TERMINATED"},
    {ThreadState::unknown, "UNKNOWN"},
}};

}  // namespace

std::string_view to_string(ThreadState state) noexcept {
  for (const auto& [value, name] : state_names)
    if (value == state) return name;
  return {};
}

ThreadState parse_thread_state(std::string_view word) noexcept {
  for (const auto& [value, name] : state_names)
    if (name == word) return value;
  return ThreadState::unknown;
}

std::string_view to_string(LockAction action) noexcept {
  switch (action) {
    case LockAction::locked: return "locked";
    case LockAction::waiting_to_lock: return "waiting_to_lock";
    case LockAction::waiting_on: return "waiting_on";
    case LockAction::waiting_to_relock: return "waiting_to_relock";
    case LockAction::parking: return "parking";
    case LockAction::eliminated: return "eliminated";
    case LockAction::class_init_wait: return "class_init_wait";
  }
  return "?";
}

std::string_view to_string(DumpFormat format) noexcept {
  switch (format) {
    case DumpFormat::jstack: return "jstack";
    case DumpFormat::dump_to_file_plain: return "dump_to_file_plain";
    case DumpFormat::dump_to_file_json: return "dump_to_file_json";
  }
  return "?";
}

std::string_view frame_method(std::string_view text) noexcept {
  // "Foo$$Lambda/0x0000.run(Unknown Source)": the location starts at the first '('.
  const auto paren = text.find('(');
  auto method = paren == std::string_view::npos ? text : text.substr(0, paren);
  // dump_to_file prints StackTraceElement.toString(): "java.base/jdk.internal.misc.Unsafe.park",
  // "app//Main.run". Strip the loader/module part; a '/' inside a hidden class name
  // ("Foo$$Lambda/0x..", "LambdaForm$DMH/0x..") follows a segment holding '$'.
  for (auto slash = method.find('/'); slash != std::string_view::npos; slash = method.find('/')) {
    if (method.substr(0, slash).find('$') != std::string_view::npos) break;
    if (method.substr(slash + 1, 2) == "0x") break;
    method.remove_prefix(slash + 1);
  }
  return method;
}

std::string_view frame_class(std::string_view text) noexcept {
  const auto method = frame_method(text);
  const auto dot = method.rfind('.');
  return dot == std::string_view::npos ? std::string_view{} : method.substr(0, dot);
}

}  // namespace lockwatch::model
