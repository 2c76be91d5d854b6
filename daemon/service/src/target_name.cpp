// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/service/target_name.hpp"

#include <algorithm>
#include <array>
#include <string_view>
#include <vector>

namespace lockwatch::service {
namespace {

// Launcher options whose value is the next word (java -help, JDK 9+).
constexpr std::array<std::string_view, 10> takes_value{"-cp", "-classpath", "--class-path", "-p", "--module-path",
                                                       "--add-modules", "--add-opens", "--add-exports", "--add-reads",
                                                       "--upgrade-module-path"};

std::string clean(std::string_view name) {
  std::string out;
  for (char c : name)
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-')
      out.push_back(c);
  if (out.size() > 64) out.resize(64);
  return out.empty() ? "jvm" : out;
}

std::string_view after_last(std::string_view s, char c) { return s.substr(s.rfind(c) + 1); }

}  // namespace

std::string target_label(const std::vector<std::string>& argv) {
  const std::vector<std::string_view> w(argv.begin(), argv.end());
  // A custom launcher, or not a JVM at all: its program name says more than its arguments.
  if (!w.empty() && after_last(w[0], '/') != "java") return clean(after_last(w[0], '/'));
  for (std::size_t i = 1; i < w.size(); ++i) {
    if (w[i].empty()) continue;  // java "" Main: an empty argument names nothing
    if (w[i] == "-jar" && i + 1 < w.size()) {
      auto jar = after_last(w[i + 1], '/');
      return clean(jar.ends_with(".jar") ? jar.substr(0, jar.size() - 4) : jar);
    }
    if ((w[i] == "-m" || w[i] == "--module") && i + 1 < w.size()) return clean(after_last(after_last(w[i + 1], '/'), '.'));
    if (std::find(takes_value.begin(), takes_value.end(), w[i]) != takes_value.end()) {
      ++i;
      continue;
    }
    if (!w[i].starts_with("-")) return clean(after_last(w[i], '.'));
  }
  return "jvm";
}

}  // namespace lockwatch::service
