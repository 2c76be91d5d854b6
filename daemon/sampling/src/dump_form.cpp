// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/sampling/dump_form.hpp"

#include <cctype>

namespace lockwatch::sampling {
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
