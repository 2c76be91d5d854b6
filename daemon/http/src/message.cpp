// SPDX-License-Identifier: Apache-2.0
// Request-target decoding and the small responses every endpoint shares.
#include "lockwatch/http/message.hpp"

#include <cstdio>

namespace lockwatch::http {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Error messages are short and ours, but an exception's text may hold anything: escape
// what JSON needs and replace non-ASCII bytes, so the body always parses.
std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(byte));
      out += escaped;
    } else {
      out += byte < 0x80 ? c : '?';
    }
  }
  return out + '"';
}

}  // namespace

std::optional<std::string> percent_decode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+' && plus_is_space) {
      out += ' ';
    } else if (text[i] != '%') {
      out += text[i];
    } else {
      const int high = i + 2 < text.size() ? hex_value(text[i + 1]) : -1;
      const int low = high < 0 ? -1 : hex_value(text[i + 2]);
      if (low < 0) return std::nullopt;
      out += static_cast<char>(high * 16 + low);
      i += 2;
    }
  }
  return out;
}

std::optional<Query> parse_query(std::string_view text) {
  Query query;
  while (!text.empty()) {
    const auto amp = text.find('&');
    const auto piece = text.substr(0, amp);
    text = amp == std::string_view::npos ? std::string_view{} : text.substr(amp + 1);
    if (piece.empty()) continue;
    const auto eq = piece.find('=');
    auto key = percent_decode(piece.substr(0, eq), true);
    auto value = percent_decode(eq == std::string_view::npos ? std::string_view{} : piece.substr(eq + 1), true);
    if (!key || !value) return std::nullopt;
    query.emplace(std::move(*key), std::move(*value));
  }
  return query;
}

std::optional<Request> make_request(std::string method, std::string_view target) {
  if (target.empty() || target.front() != '/') return std::nullopt;
  const auto question = target.find('?');
  auto path = percent_decode(target.substr(0, question));
  auto query = parse_query(question == std::string_view::npos ? std::string_view{} : target.substr(question + 1));
  if (!path || !query) return std::nullopt;
  return Request{std::move(method), std::move(*path), std::move(*query)};
}

bool valid_header(std::string_view name, std::string_view value) noexcept {
  constexpr std::string_view token_marks = "!#$%&'*+-.^_`|~";
  auto token_char = [&](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || token_marks.find(c) != std::string_view::npos;
  };
  if (name.empty()) return false;
  for (char c : name)
    if (!token_char(c)) return false;
  for (char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte < 0x20 && c != '\t') || byte == 0x7F) return false;
  }
  return true;
}

Response text_response(std::string body, unsigned status) { return {status, "text/plain; charset=utf-8", std::move(body)}; }

Response json_response(std::string body, unsigned status) { return {status, "application/json", std::move(body)}; }

Response error_response(unsigned status, std::string_view message) {
  return json_response("{\"error\":" + json_string(message) + "}\n", status);
}

Response bad_request(std::string_view why) { return error_response(400, why); }
Response unauthorized() { return error_response(401, "unauthorized"); }
Response not_found() { return error_response(404, "not found"); }
Response method_not_allowed() { return error_response(405, "method not allowed: this API is read-only (GET, HEAD)"); }
Response payload_too_large() { return error_response(413, "request too large"); }
Response internal_error(std::string_view why) { return error_response(500, why); }
Response unavailable(std::string_view why) { return error_response(503, why); }

}  // namespace lockwatch::http
