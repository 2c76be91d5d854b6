// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/model/canonical.hpp"

#include <cstdio>

#include "lockwatch/model/text.hpp"

namespace lockwatch::model {
namespace {

std::string hex(std::uint64_t value) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(value));
  return buf;
}

std::string number(double value) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.2f", value);
  return buf;
}

std::string quoted(std::string_view raw) { return '"' + printable(raw) + '"'; }

template <class T, class F>
void optional_field(std::string& out, std::string_view key, const std::optional<T>& v, F&& format) {
  if (v) out.append(" ").append(key).append("=").append(format(*v));
}

void print_header(std::string& out, const ThreadInfo& t) {
  out.append("thread ").append(quoted(t.name));
  auto dec = [](std::uint64_t v) { return std::to_string(v); };
  optional_field(out, "java_id", t.java_id, dec);
  optional_field(out, "os_tid", t.os_tid, dec);
  optional_field(out, "nid", t.nid, dec);
  optional_field(out, "tid", t.tid, hex);
  if (t.daemon) out.append(" daemon");
  if (t.is_virtual) out.append(" virtual");
  if (t.prio >= 0) out.append(" prio=").append(std::to_string(t.prio));
  if (t.os_prio != -1) out.append(" os_prio=").append(std::to_string(t.os_prio));
  optional_field(out, "cpu_ms", t.cpu_ms, number);
  optional_field(out, "elapsed_s", t.elapsed_s, number);
  if (!t.header_status.empty()) out.append(" status=").append(quoted(t.header_status));
  if (t.state != ThreadState::none) out.append(" state=").append(to_string(t.state));
  if (!t.state_detail.empty()) out.append(" detail=").append(quoted(t.state_detail));
  optional_field(out, "carrying", t.carrying_vthread, dec);
  optional_field(out, "carrier", t.carrier, dec);
  if (t.truncated) out.append(" truncated");
  out.append(t.is_java() ? " kind=java\n" : " kind=vm\n");
}

void print_lock(std::string& out, const LockRef& l) {
  out.append("    lock ").append(to_string(l.action));
  out.append(" ").append(l.address ? hex(*l.address) : std::string("-"));
  out.append(" ").append(quoted(l.class_name)).append("\n");
}

void print_body(std::string& out, const ThreadInfo& t) {
  for (std::size_t i = 0; i < t.frames.size(); ++i) {
    if (t.mounted_frames_begin && *t.mounted_frames_begin == i) out.append("  mounted_virtual_thread\n");
    out.append("  at ").append(printable(t.frames[i].text)).append("\n");
    for (const auto& l : t.locks)
      if (l.frame == i) print_lock(out, l);
  }
  for (const auto& l : t.locks)
    if (l.frame >= t.frames.size()) print_lock(out, l);
  if (t.synchronizers_listed) out.append("  synchronizers").append(t.owned_synchronizers.empty() ? " none\n" : "\n");
  for (const auto& s : t.owned_synchronizers)
    out.append("    owns ").append(hex(s.address)).append(" ").append(quoted(s.class_name)).append("\n");
  for (const auto& n : t.notes) out.append("  note ").append(quoted(n)).append("\n");
}

}  // namespace

std::string printable(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  for_each_code_point(raw, [&out](char32_t cp) {
    if (cp == '"' || cp == '\\') {
      out.push_back('\\'), out.push_back(static_cast<char>(cp));
    } else if (cp == '\n') {
      out.append("\\n");
    } else if (cp == '\t') {
      out.append("\\t");
    } else if (cp < 0x20 || cp == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(cp));
      out.append(buf);
    } else {
      append_utf8(cp, out);
    }
  });
  return out;
}

std::string canonical_text(const ThreadDump& dump) {
  std::string out;
  out.append("dump format=").append(to_string(dump.format));
  out.append(dump.stats.has_header ? " header" : " no_header");
  out.append(dump.stats.complete ? " complete" : " incomplete");
  if (dump.synchronizers_listed) out.append(" synchronizers_listed");
  if (dump.jni_global_refs) out.append(" jni_global_refs=").append(std::to_string(*dump.jni_global_refs));
  out.append("\n");
  if (!dump.timestamp.empty()) out.append("timestamp ").append(quoted(dump.timestamp)).append("\n");
  if (!dump.vm_banner.empty()) out.append("banner ").append(quoted(dump.vm_banner)).append("\n");
  out.append("stats lines=").append(std::to_string(dump.stats.lines));
  out.append(" unknown=").append(std::to_string(dump.stats.unknown_lines));
  out.append(" long=").append(std::to_string(dump.stats.long_lines));
  out.append(" frames_dropped=").append(std::to_string(dump.stats.frames_dropped));
  if (dump.stats.locks_dropped) out.append(" locks_dropped=").append(std::to_string(dump.stats.locks_dropped));
  out.append("\n");
  for (const auto& t : dump.threads) print_header(out, t), print_body(out, t);
  for (const auto& d : dump.jvm_deadlocks) {
    out.append("jvm_deadlock");
    for (auto name : d.threads) out.append(" ").append(quoted(name));
    out.append("\n");
  }
  return out;
}

}  // namespace lockwatch::model
