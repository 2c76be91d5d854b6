// SPDX-License-Identifier: Apache-2.0
// HTTP request and response as plain values, so handlers and the router need no Beast.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lockwatch::http {

/// Decoded query parameters; std::less<> so handlers can look up string_views.
using Query = std::map<std::string, std::string, std::less<>>;

struct Request {
  std::string method;  // as sent: "GET", "HEAD", "POST", ...
  std::string path;    // percent-decoded, always starts with '/'
  Query query;         // decoded; the first of repeated keys wins
};

struct Response {
  /// Sends a deferred response; see `deferred`.
  using Reply = std::function<void(Response)>;

  unsigned status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  /// For a handler that answers later, from another thread, so that the io thread never
  /// waits (for a lock, say). When set, the server ignores the rest of this Response and
  /// calls deferred(reply) on the io thread; `reply` may then be called once, later, from
  /// any thread. The server posts the response to the io thread and sends it if the
  /// connection is still open, with the same HEAD, keep-alive and version handling as an
  /// immediate response. request_timeout bounds the wait: a connection whose reply has not
  /// come by then is closed. `reply` holds no reference to the connection: calling it after
  /// the connection closed (or after the Server is destroyed) does nothing, a second call
  /// does nothing, and never calling it keeps nothing alive beyond the connection's timeout.
  /// An exception from `deferred` itself answers 500; a reply that is deferred again, too.
  std::function<void(Reply)> deferred = {};
  /// Extra headers, (name, value), e.g. a page's Content-Security-Policy. The server's own
  /// (Content-Type, Content-Length, Cache-Control, X-Content-Type-Options, Connection...) are
  /// set after these and win. A name that is not an HTTP token, or a value holding a control
  /// character (CR, LF, NUL...), makes the response a 500: a handler cannot split a response.
  std::vector<std::pair<std::string, std::string>> headers = {};
};

/// Splits a request-target ("/a%20b?x=1&y") into a Request. nullopt when it is not in
/// origin form (no leading '/') or holds a malformed %-escape: the server answers 400.
std::optional<Request> make_request(std::string method, std::string_view target);

/// "%2F" -> "/"; with plus_is_space, '+' -> ' ' (query strings). nullopt on a '%' not
/// followed by two hex digits.
std::optional<std::string> percent_decode(std::string_view text, bool plus_is_space = false);

/// "a=1&b=&c" -> {a:1, b:"", c:""}; empty pieces are skipped. nullopt on a bad escape.
std::optional<Query> parse_query(std::string_view text);

/// Whether a Response may carry this extra header: `name` an HTTP token (RFC 9110), `value`
/// without control characters but tab.
bool valid_header(std::string_view name, std::string_view value) noexcept;

Response text_response(std::string body, unsigned status = 200);
Response json_response(std::string body, unsigned status = 200);

/// {"error":"<message>"} with the given status. Non-ASCII bytes in the message become '?',
/// so the body is valid JSON whatever an exception's text holds.
Response error_response(unsigned status, std::string_view message);
Response bad_request(std::string_view why);
Response unauthorized();  // the server adds WWW-Authenticate: Basic realm="lockwatch"
Response not_found();
Response method_not_allowed();  // the server adds "Allow: GET, HEAD"
Response payload_too_large();
Response internal_error(std::string_view why);
Response unavailable(std::string_view why);

}  // namespace lockwatch::http
