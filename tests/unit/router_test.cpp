// SPDX-License-Identifier: Apache-2.0
// Request-target decoding, route patterns and the router's answers for what no handler serves.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "lockwatch/http/router.hpp"

using namespace lockwatch::http;

namespace {

Request get(std::string path, std::string method = "GET") { return Request{std::move(method), std::move(path), {}}; }

// Echoes the route's name and its captures, so a test sees which route ran with what.
Router::Handler echo(std::string name) {
  return [name](const Request&, const Params& params) {
    std::string body = name;
    for (const auto& [key, value] : params) body += " " + key + "=" + value;
    return text_response(body);
  };
}

}  // namespace

TEST_CASE("percent_decode decodes escapes and rejects broken ones", "[http]") {
  CHECK(percent_decode("a%20b%2Fc%7e") == "a b/c~");
  CHECK(percent_decode("a+b") == "a+b");
  CHECK(percent_decode("a+b", true) == "a b");
  CHECK(percent_decode("%41%4a%4A") == "AJJ");
  CHECK_FALSE(percent_decode("%"));
  CHECK_FALSE(percent_decode("abc%4"));
  CHECK_FALSE(percent_decode("%zz"));
  CHECK_FALSE(percent_decode("%4g"));
}

TEST_CASE("parse_query decodes keys and values; the first of repeated keys wins", "[http]") {
  const auto query = parse_query("since=10&name=a%20b&flag&empty=&&x=1&x=2&plus=1+2");
  REQUIRE(query);
  CHECK(query->size() == 6);
  CHECK(query->at("since") == "10");
  CHECK(query->at("name") == "a b");
  CHECK(query->at("flag").empty());
  CHECK(query->at("empty").empty());
  CHECK(query->at("x") == "1");
  CHECK(query->at("plus") == "1 2");
  CHECK_FALSE(parse_query("a=%G1"));
  CHECK(parse_query("")->empty());
}

TEST_CASE("make_request splits path and query and decodes both", "[http]") {
  const auto request = make_request("GET", "/api/v1/targets/my%20app/samples?limit=5&q=%2F");
  REQUIRE(request);
  CHECK(request->method == "GET");
  CHECK(request->path == "/api/v1/targets/my app/samples");
  CHECK(request->query.at("limit") == "5");
  CHECK(request->query.at("q") == "/");
  CHECK(make_request("GET", "/")->path == "/");
  CHECK(make_request("GET", "/metrics?")->query.empty());
}

TEST_CASE("make_request refuses targets that are not in origin form or have bad escapes", "[http]") {
  CHECK_FALSE(make_request("GET", ""));
  CHECK_FALSE(make_request("GET", "*"));
  CHECK_FALSE(make_request("GET", "http://example.invalid/metrics"));
  CHECK_FALSE(make_request("GET", "/a%2"));
  CHECK_FALSE(make_request("GET", "/a?b=%x1"));
}

TEST_CASE("router matches literal paths exactly", "[http]") {
  Router router;
  router.add("/metrics", echo("metrics"));
  router.add("/", echo("root"));
  CHECK(router.handle(get("/metrics")).body == "metrics");
  CHECK(router.handle(get("/")).body == "root");
  CHECK(router.handle(get("/metrics/")).status == 404);
  CHECK(router.handle(get("/metricsx")).status == 404);
  CHECK(router.handle(get("//metrics")).status == 404);
  CHECK(router.handle(get("/Metrics")).status == 404);
}

TEST_CASE("router captures whole segments by name", "[http]") {
  Router router;
  router.add("/api/v1/targets/{target}/samples/{id}", echo("sample"));
  router.add("/api/v1/targets/{target}", echo("target"));
  CHECK(router.handle(get("/api/v1/targets/app-1/samples/42")).body == "sample id=42 target=app-1");
  CHECK(router.handle(get("/api/v1/targets/app-1")).body == "target target=app-1");
  CHECK(router.handle(get("/api/v1/targets/")).status == 404);  // a capture needs a non-empty segment
  CHECK(router.handle(get("/api/v1/targets/app-1/samples")).status == 404);
  CHECK(router.handle(get("/api/v1/targets/app-1/samples/42/x")).status == 404);
}

TEST_CASE("router captures receive the decoded path", "[http]") {
  Router router;
  router.add("/targets/{target}", echo("target"));
  const auto request = make_request("GET", "/targets/my%20app%21");
  REQUIRE(request);
  CHECK(router.handle(*request).body == "target target=my app!");
}

TEST_CASE("router prefers a literal segment over a capture, whatever the order of add", "[http]") {
  Router router;
  router.add("/targets/{target}", echo("one"));
  router.add("/targets/summary", echo("summary"));
  router.add("/{a}/{b}", echo("any"));
  CHECK(router.handle(get("/targets/summary")).body == "summary");
  CHECK(router.handle(get("/targets/x")).body == "one target=x");
  CHECK(router.handle(get("/other/x")).body == "any a=other b=x");
}

TEST_CASE("router refuses malformed and duplicate patterns", "[http]") {
  Router router;
  router.add("/targets/{target}", echo("one"));
  CHECK_THROWS_AS(router.add("targets", echo("x")), std::invalid_argument);
  CHECK_THROWS_AS(router.add("", echo("x")), std::invalid_argument);
  CHECK_THROWS_AS(router.add("/a/x{id}", echo("x")), std::invalid_argument);
  CHECK_THROWS_AS(router.add("/a/{}", echo("x")), std::invalid_argument);
  CHECK_THROWS_AS(router.add("/a/{id}/{id}", echo("x")), std::invalid_argument);
  CHECK_THROWS_WITH(router.add("/targets/{name}", echo("x")), Catch::Contains("/targets/{target}"));
  CHECK_NOTHROW(router.add("/targets/{target}/x", echo("x")));
}

TEST_CASE("router answers 404 with a JSON body for unknown paths", "[http]") {
  Router router;
  router.add("/metrics", echo("metrics"));
  const auto response = router.handle(get("/nope"));
  CHECK(response.status == 404);
  CHECK(response.content_type == "application/json");
  CHECK(response.body == "{\"error\":\"not found\"}\n");
}

TEST_CASE("router answers 405 for methods other than GET and HEAD, without running the handler", "[http]") {
  int calls = 0;
  Router router;
  router.add("/metrics", [&calls](const Request&, const Params&) { return ++calls, text_response("x"); });
  for (const char* method : {"POST", "PUT", "DELETE", "OPTIONS", "get"}) {
    CAPTURE(method);
    CHECK(router.handle(get("/metrics", method)).status == 405);
  }
  CHECK(calls == 0);
  CHECK(router.handle(get("/metrics", "GET")).status == 200);
  CHECK(calls == 1);
}

TEST_CASE("router answers HEAD like GET without the body", "[http]") {
  Router router;
  router.add("/metrics", [](const Request&, const Params&) { return json_response("{\"a\":1}", 201); });
  const auto response = router.handle(get("/metrics", "HEAD"));
  CHECK(response.status == 201);
  CHECK(response.content_type == "application/json");
  CHECK(response.body.empty());
}

TEST_CASE("router turns a handler's exception into 500 and never propagates it", "[http]") {
  Router router;
  router.add("/std", [](const Request&, const Params&) -> Response { throw std::runtime_error("snapshot \"x\" gone"); });
  router.add("/long", [](const Request&, const Params&) -> Response { throw std::runtime_error(std::string(1000, 'x')); });
  router.add("/int", [](const Request&, const Params&) -> Response { throw 7; });
  Response response;
  REQUIRE_NOTHROW(response = router.handle(get("/std")));
  CHECK(response.status == 500);
  CHECK(response.body == "{\"error\":\"internal error: snapshot \\\"x\\\" gone\"}\n");
  CHECK(router.handle(get("/long")).body.size() < 300);
  REQUIRE_NOTHROW(response = router.handle(get("/int")));
  CHECK(response.status == 500);
  CHECK(response.body == "{\"error\":\"internal error\"}\n");
}

TEST_CASE("error bodies stay valid JSON whatever the message holds", "[http]") {
  CHECK(error_response(400, "tab\there \xc3\xa9 \\").body == "{\"error\":\"tab\\u0009here ?? \\\\\"}\n");
  CHECK(bad_request("x").status == 400);
  CHECK(payload_too_large().status == 413);
  CHECK(unavailable("busy").status == 503);
  CHECK(method_not_allowed().status == 405);
  CHECK(text_response("hi").content_type == "text/plain; charset=utf-8");
}
