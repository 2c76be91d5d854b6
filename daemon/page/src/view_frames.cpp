// SPDX-License-Identifier: Apache-2.0
// Frame names as equal code: the numbers and hashes the JVM and bytecode generators put into
// class names differ between runs (and between two proxies of one interface), so a flame
// graph would split one code path into many thin ones.
#include <array>
#include <cctype>

#include "lockwatch/page/view.hpp"

namespace lockwatch::view {
namespace {

bool digit(char c) { return c >= '0' && c <= '9'; }
bool hex(char c) { return digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

std::size_t skip(std::string_view s, std::size_t i, bool (*pred)(char)) {
  while (i < s.size() && pred(s[i])) ++i;
  return i;
}

// Names whose trailing number says only which instance of generated code it is.
constexpr std::array numbered = {
    std::string_view("$$Lambda$"),  // JDK 8-20 lambdas: "Foo$$Lambda$123"
    std::string_view("$Proxy"),     // java.lang.reflect.Proxy: "$Proxy42", "jdk.proxy2.$Proxy17"
    std::string_view("jdk.proxy"),  // the dynamic module of proxies, numbered per class loader
    std::string_view("GeneratedMethodAccessor"),
    std::string_view("GeneratedConstructorAccessor"),
    std::string_view("GeneratedSerializationConstructorAccessor"),
};

// Generators that append "$<hash>" to a single-'$' marker: Hibernate, Byte Buddy, Mockito.
constexpr std::array hashed = {
    std::string_view("$HibernateProxy$"),
    std::string_view("$ByteBuddy$"),
    std::string_view("$MockitoMock$"),
};

// "/0x0000000800c0b440" (a hidden class, JDK 15+) or "/1831932724" (a JDK 8 lambda): the
// length of the suffix at `i`, 0 when there is none. A '/' never occurs in a method name
// otherwise (the module and file part, "(java.base@17/...)", is already cut off).
std::size_t hidden_suffix(std::string_view s, std::size_t i) {
  if (s[i] != '/') return 0;
  if (s.substr(i + 1).starts_with("0x")) {
    const auto end = skip(s, i + 3, hex);
    return end > i + 3 ? end - i : 0;
  }
  const auto end = skip(s, i + 1, digit);
  return end > i + 1 ? end - i : 0;
}

// "$$EnhancerBySpringCGLIB$$abc123", "$$SpringCGLIB$$0", "$$FastClassBySpringCGLIB$$9f": the
// marker kept, "$$<hash>" dropped. Returns the marker's length and sets `end` past the hash.
std::size_t double_dollar_marker(std::string_view s, std::size_t i, std::size_t& end) {
  if (!s.substr(i).starts_with("$$")) return 0;
  const auto word_end = skip(s, i + 2, alnum);
  if (word_end == i + 2 || !s.substr(word_end).starts_with("$$")) return 0;
  const auto hash_end = skip(s, word_end + 2, alnum);
  if (hash_end == word_end + 2) return 0;
  end = hash_end;
  return word_end - i;
}

}  // namespace

std::string normalize_frame(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    // Every pattern starts with one of these: the rest of a name is copied as it is.
    if (const char c = s[i]; c != '$' && c != '/' && c != 'j' && c != 'G') {
      out.push_back(c), ++i;
      continue;
    }
    if (const auto n = hidden_suffix(s, i)) {
      i += n;
      continue;
    }
    bool matched = false;
    for (const auto marker : numbered) {
      if (!s.substr(i).starts_with(marker)) continue;
      const auto end = skip(s, i + marker.size(), digit);
      if (end == i + marker.size() && marker != numbered[0]) continue;  // "$Proxy" alone is a name like any
      out.append(marker.substr(0, marker.back() == '$' ? marker.size() - 1 : marker.size()));
      i = end, matched = true;
      break;
    }
    for (const auto marker : hashed) {
      if (matched || !s.substr(i).starts_with(marker)) continue;
      out.append(marker.substr(0, marker.size() - 1));
      i = skip(s, i + marker.size(), alnum), matched = true;
    }
    std::size_t end = 0;
    if (!matched)
      if (const auto n = double_dollar_marker(s, i, end)) {
        out.append(s.substr(i, n));
        i = end, matched = true;
      }
    if (!matched) out.push_back(s[i++]);
  }
  return out;
}

}  // namespace lockwatch::view
