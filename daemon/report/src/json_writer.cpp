// SPDX-License-Identifier: Apache-2.0
#include "lockwatch/report/json_writer.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "lockwatch/model/text.hpp"

namespace lockwatch::report {

namespace {

// Bytes that pass through unchanged: printable ASCII other than '"' and '\\'.
bool plain(char c) { return c >= 0x20 && c < 0x7F && c != '"' && c != '\\'; }

void quote_code_point(char32_t cp, std::string& out) {
  switch (cp) {
    case '"': out.append("\\\""); return;
    case '\\': out.append("\\\\"); return;
    case '\n': out.append("\\n"); return;
    case '\r': out.append("\\r"); return;
    case '\t': out.append("\\t"); return;
    default: break;
  }
  if (cp < 0x20 || cp == 0x7F) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
    out.append(buf);
  } else {
    model::append_utf8(cp, out);
  }
}

}  // namespace

std::string json_quote(std::string_view raw) {
  std::string out;
  out.reserve(raw.size() + 2);
  out.push_back('"');
  while (!raw.empty()) {
    // Names and frames are mostly plain ASCII: copy such runs whole.
    std::size_t run = 0;
    while (run < raw.size() && plain(raw[run])) ++run;
    out.append(raw.substr(0, run));
    raw.remove_prefix(run);
    std::size_t special = 0;
    while (special < raw.size() && !plain(raw[special])) ++special;
    model::for_each_code_point(raw.substr(0, special), [&out](char32_t cp) { quote_code_point(cp, out); });
    raw.remove_prefix(special);
  }
  out.push_back('"');
  return out;
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_.push_back(',');
    first_.back() = false;
  }
}

JsonWriter& JsonWriter::begin_object() {
  before_value();
  out_.push_back('{');
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  out_.push_back('}');
  first_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  before_value();
  out_.push_back('[');
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  out_.push_back(']');
  first_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
  before_value();
  out_.append(json_quote(name)).push_back(':');
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view text) {
  before_value();
  out_.append(json_quote(text));
  return *this;
}

JsonWriter& JsonWriter::value(std::uint64_t number) {
  before_value();
  out_.append(std::to_string(number));
  return *this;
}

JsonWriter& JsonWriter::value(double number) {
  before_value();
  if (!std::isfinite(number)) {
    out_.append("null");
    return *this;
  }
  // Shortest text that reads back as the same double: unix times need all their digits.
  char buf[40];
  const auto end = std::to_chars(buf, buf + sizeof buf, number).ptr;
  out_.append(buf, end);
  return *this;
}

JsonWriter& JsonWriter::value(bool flag) {
  before_value();
  out_.append(flag ? "true" : "false");
  return *this;
}

JsonWriter& JsonWriter::null() {
  before_value();
  out_.append("null");
  return *this;
}

}  // namespace lockwatch::report
