// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/sampling/dump_form.hpp"

#include <cctype>

namespace lockwatch::sampling {
namespace {

bool has(std::string_view text, std::string_view what) { return text.find(what) != std::string_view::npos; }

// "Full thread dump OpenJDK 64-Bit Server VM (25.0.3+9-LTS mixed mode, sharing):" - the VM
// version opens the parenthesis.
std::string_view print_version(std::string_view text) {
  const auto header = text.find("Full thread dump ");
  if (header == std::string_view::npos) return {};
  const auto line = text.substr(header, text.find('\n', header) - header);
  const auto open = line.find('(');
  return open == std::string_view::npos ? std::string_view{} : line.substr(open + 1);
}

// "runtimeVersion": "25.0.3+9-LTS" near the top of the JSON dump.
std::string_view json_version(std::string_view text) {
  const auto key = text.substr(0, 4096).find("\"runtimeVersion\"");
  if (key == std::string_view::npos) return {};
  const auto quote = text.find('"', text.find(':', key));
  return quote == std::string_view::npos ? std::string_view{} : text.substr(quote + 1, 64);
}

}  // namespace

std::string_view to_string(FormMode mode) noexcept {
  switch (mode) {
    case FormMode::automatic: return "auto";
    case FormMode::print: return "print";
    case FormMode::json: return "json";
  }
  return "auto";
}

std::optional<FormMode> parse_form_mode(std::string_view text) {
  if (text == "auto") return FormMode::automatic;
  if (text == "print") return FormMode::print;
  if (text == "json") return FormMode::json;
  return std::nullopt;
}

int jdk_major_of(std::string_view v) {
  std::size_t digits = 0;
  int major = 0;
  while (digits < v.size() && digits < 4 && std::isdigit(static_cast<unsigned char>(v[digits])))
    major = major * 10 + (v[digits++] - '0');
  if (digits == 0 || digits == 4) return 0;
  const auto rest = v.substr(digits);
  // JDK 8 prints its HotSpot's own version, "25.382-b05": a minor and a "-b" build.
  if (rest.starts_with('.')) {
    std::size_t at = 1;
    while (at < rest.size() && std::isdigit(static_cast<unsigned char>(rest[at]))) ++at;
    if (rest.substr(at).starts_with("-b")) return 8;
  }
  const bool jdk9_or_later = rest.empty() || rest.front() == '.' || rest.front() == '+' || rest.front() == '-' ||
                             rest.front() == ' ';
  return jdk9_or_later && major >= 9 ? major : 0;
}

FormEvidence evidence_of(DumpForm form, std::string_view text) {
  FormEvidence e;
  if (form == DumpForm::json) {
    e.jdk_major = jdk_major_of(json_version(text));
    // JDK 25 marks them ("virtual": true); every virtual thread's stack ends in VirtualThread.run.
    e.mounted = has(text, "\"virtual\": true") || has(text, "java.lang.VirtualThread.run(");
    e.virtual_threads = e.mounted;
    return e;
  }
  e.jdk_major = jdk_major_of(print_version(text));
  if (e.jdk_major > 0 && e.jdk_major < 21) return e;  // no virtual threads before 21: no search
  e.mounted = has(text, "\n   Carrying virtual thread #") || has(text, "at java.lang.VirtualThread.");
  // The JVM's own helper threads exist once the application has used virtual threads.
  e.virtual_threads = e.mounted || has(text, "\"VirtualThread-unparker\"") || has(text, "\"VirtualThread-unblocker\"");
  return e;
}

bool FormChooser::wants_json(Clock::time_point now) const {
  if (mode_ == FormMode::print || falling_back(now)) return false;
  if (mode_ == FormMode::json) return true;
  return jdk_major_ >= 21 && virtual_seen_ && now - *virtual_seen_ < times_.idle;
}

DumpForm FormChooser::choose(Clock::time_point now) {
  if (!wants_json(now)) return DumpForm::print;
  const auto every = mode_ == FormMode::automatic && jdk_major_ < 25 ? times_.json_every_before_25 : 1;
  return every <= 1 || chosen_++ % every == 0 ? DumpForm::json : DumpForm::print;
}

void FormChooser::observe(DumpForm form, Outcome outcome, std::string_view text, Clock::time_point now) {
  if (mode_ == FormMode::print) return;  // nothing to decide: no search of the text
  observe(form, outcome, outcome == Outcome::ok ? evidence_of(form, text) : FormEvidence{}, now);
}

void FormChooser::observe(DumpForm form, Outcome outcome, const FormEvidence& e, Clock::time_point now) {
  if (mode_ == FormMode::print) return;  // nothing to decide
  if (form == DumpForm::json && outcome == Outcome::dump_file_failed) {
    fallback_until_ = now + times_.fallback;
    return;
  }
  if (outcome != Outcome::ok) return;
  if (e.jdk_major > 0) jdk_major_ = e.jdk_major;
  if (e.virtual_threads && (!mounted_only_ || e.mounted)) {
    virtual_seen_ = now;
    mounted_only_ = false;
  }
  // A JSON sample without virtual threads past `idle`: the next is a print, and the helper
  // threads alone do not bring JSON back.
  if (form == DumpForm::json && !e.virtual_threads && virtual_seen_ && now - *virtual_seen_ >= times_.idle)
    mounted_only_ = true;
}

std::string FormChooser::reason(Clock::time_point now) const {
  if (mode_ == FormMode::print) return "dump_format is print";
  if (falling_back(now)) return "the JVM could not write its JSON dump: Thread.print until the fallback time has passed";
  if (mode_ == FormMode::json) return "dump_format is json";
  if (jdk_major_ == 0) return "JDK version not known yet";
  if (jdk_major_ < 21) return "JDK " + std::to_string(jdk_major_) + " has no JSON thread dump";
  if (!virtual_seen_) return "JDK " + std::to_string(jdk_major_) + ", no virtual threads seen";
  if (now - *virtual_seen_ >= times_.idle) return "no virtual threads seen lately";
  return "JDK " + std::to_string(jdk_major_) + " runs virtual threads";
}

}  // namespace lockwatch::sampling
