// SPDX-License-Identifier: Apache-2.0
// The `dump_format` key: its values, its default, and a clear error for anything else.
#include <catch2/catch.hpp>

#include "lockwatch/config/load.hpp"

using namespace lockwatch;

TEST_CASE("config: dump_format auto (default), print, json", "[config][json]") {
  const auto none = config::load_config_text("interval: 1s\n", "none.yaml");
  REQUIRE(none.ok());
  CHECK(none.config->dump_format == config::DumpFormat::automatic);
  const auto print = config::load_config_text("dump_format: print\n", "print.yaml");
  REQUIRE(print.ok());
  CHECK(print.config->dump_format == config::DumpFormat::print);
  CHECK(config::summary(*print.config).find("dump format print") != std::string::npos);
  const auto json = config::load_config_text("dump_format: json\n", "json.yaml");
  REQUIRE(json.ok());
  CHECK(json.config->dump_format == config::DumpFormat::json);
  CHECK(config::summary(*none.config).find("dump format") == std::string::npos);
}

TEST_CASE("config: a dump_format that is none of the three names the choices", "[config][json]") {
  const auto bad = config::load_config_text("dump_format: jsonl\n", "bad.yaml");
  REQUIRE_FALSE(bad.ok());
  REQUIRE(bad.errors.size() == 1);
  const auto text = config::to_string(bad.errors[0]);
  CHECK(text.find("dump_format") != std::string::npos);
  CHECK(text.find("auto, print, json") != std::string::npos);
}
