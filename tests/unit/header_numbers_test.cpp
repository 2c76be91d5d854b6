// SPDX-License-Identifier: Apache-2.0
// The ring's check of a header against the template the thread had in the last sample
// (numbers_fit) must say yes exactly when cutting the header's numbers gives that template.
#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "header_numbers.hpp"
#include "test_support.hpp"

using namespace lockwatch;
using store::detail::cut_numbers;
using store::detail::numbers_fit;

namespace {

std::vector<std::string> real_headers() {
  std::vector<std::string> out;
  auto files = test::files_below(test::captured_dir());
  for (auto& f : test::files_below(test::corpus_dir())) files.push_back(f);
  for (const auto& file : files) {
    const auto text = test::read_file(file);
    for (std::size_t at = 0; at < text.size();) {
      auto nl = text.find('\n', at);
      if (nl == std::string::npos) nl = text.size();
      if (text[at] == '"') out.push_back(text.substr(at, nl - at));
      at = nl + 1;
    }
  }
  return out;
}

// numbers_fit against the reference: cut, then compare the templates.
void check_fit(const std::string& line, const std::string& tmpl) {
  std::string cut, cut_numbers_out;
  const bool expected = cut_numbers(line, cut, cut_numbers_out) && cut == tmpl;
  std::string fit_numbers = "prefix";
  const bool fits = numbers_fit(line, tmpl, fit_numbers);
  INFO("line: " << line << "\ntemplate: " << tmpl);
  REQUIRE(fits == expected);
  REQUIRE(fit_numbers == (fits ? "prefix" + cut_numbers_out : "prefix"));
}

}  // namespace

TEST_CASE("header numbers: a header fits its own template, and a changed one only where cutting agrees", "[store][ring]") {
  const auto headers = real_headers();
  REQUIRE(headers.size() > 1000);
  std::size_t templates = 0;
  for (std::size_t h = 0; h < headers.size(); h += 7) {  // every 7th: the mutations below are many
    const auto& line = headers[h];
    std::string tmpl, numbers;
    if (!cut_numbers(line, tmpl, numbers)) continue;
    ++templates;
    check_fit(line, tmpl);
    // Every byte replaced by the characters that matter to the grammar: digits and dots
    // around numbers, spaces between words, quotes around the name, the mark itself.
    for (std::size_t i = 0; i < line.size(); ++i)
      for (const char c : {'0', '7', '.', ' ', 'x', '"', '\x01', '='}) {
        std::string changed = line;
        changed[i] = c;
        check_fit(changed, tmpl);
      }
    check_fit(line + "1", tmpl);
    check_fit(line + " ", tmpl);
    check_fit(line.substr(0, line.size() - 1), tmpl);
  }
  CHECK(templates > 100);
}

TEST_CASE("header numbers: other threads' headers do not fit", "[store][ring]") {
  const std::string a = "\"worker-1\" #12 prio=5 os_prio=0 cpu=0.42ms elapsed=3.12s tid=0x00007f42e8017ed0 nid=0x2c1c waiting on condition  [0x00007f42b95a7000]";
  const std::string b = "\"worker-2\" #13 prio=5 os_prio=0 cpu=10.42ms elapsed=13.12s tid=0x00007f42e8017ed1 nid=0x2c1d waiting on condition  [0x00007f42b95a7000]";
  std::string ta, tb, numbers;
  REQUIRE(cut_numbers(a, ta, numbers));
  REQUIRE(cut_numbers(b, tb, numbers));
  check_fit(b, ta);
  check_fit(a, tb);
  check_fit("\"worker-1\" #12 prio=5 os_prio=0 cpu=00.42ms elapsed=3.12s tid=0x00007f42e8017ed0 nid=0x2c1c waiting on condition  [0x00007f42b95a7000]", ta);
  check_fit("\"worker-1\" #12 prio=5 os_prio=0 cpu=0.4ms elapsed=3.12s tid=0x00007f42e8017ed0 nid=0x2c1c waiting on condition  [0x00007f42b95a7000]", ta);
  check_fit("\"worker-1\" #12 prio=5 os_prio=0 cpu=123456789012345678901ms elapsed=3.12s tid=0x00007f42e8017ed0 nid=0x2c1c waiting on condition  [0x00007f42b95a7000]", ta);
}
