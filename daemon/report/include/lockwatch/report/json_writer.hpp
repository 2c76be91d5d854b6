// SPDX-License-Identifier: Apache-2.0
// A small streaming JSON writer. Strings from dumps are untrusted bytes: they come out
// as valid, escaped UTF-8 whatever they hold.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lockwatch::report {

class JsonWriter {
 public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  /// Object member name; the next call writes its value.
  JsonWriter& key(std::string_view name);
  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& value(std::uint64_t number);
  JsonWriter& value(double number);
  JsonWriter& value(bool flag);
  JsonWriter& null();

  const std::string& str() const noexcept { return out_; }

 private:
  void before_value();
  std::string out_;
  std::vector<bool> first_;  // per open container: no member written yet
  bool after_key_ = false;
};

/// `raw` as a JSON string literal (with quotes): UTF-8 validated, invalid bytes read as Latin-1.
std::string json_quote(std::string_view raw);

}  // namespace lockwatch::report
