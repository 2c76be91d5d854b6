// SPDX-License-Identifier: Apache-2.0
// `lockwatch check-config`: the command over the config loader - its output, exit codes and
// usage errors, and the web config file that a config names. The loaders themselves:
// config_test.cpp and web_config_test.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "check_config_command.hpp"
#include "test_support.hpp"

using namespace lockwatch;
namespace fs = std::filesystem;

namespace {

// A real bcrypt hash (cost 4, password "secret"), so the format check sees what htpasswd writes.
constexpr const char* hash = "$2y$04$ORtftCAIc4UaHHaJd/qcnOv/IPmsgRVezpq.RxLdbGHp/VHD35iN2";

std::string temp_file(const std::string& name, std::string_view text) {
  const auto path = fs::temp_directory_path() / ("lockwatch-config-test-" + name);
  test::write_file(path, text);
  return path.string();
}

struct Run {
  int code = 0;
  std::string out, err;
};

Run check_config(std::vector<std::string_view> args) {
  std::ostringstream out, err;
  Run r;
  r.code = app::run_check_config(args, out, err);
  r.out = out.str(), r.err = err.str();
  return r;
}

}  // namespace

TEST_CASE("check-config: ok and the effective settings, exit 0", "[config][cli]") {
  const auto file = temp_file("cli-ok.yaml", "interval: 500ms\nbackend: jstack\n");
  const auto r = check_config({file});
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  CHECK(r.out.starts_with(file + ": ok\n"));
  CHECK(r.out.find("interval 500ms") != std::string::npos);
  CHECK(r.out.find("backend jstack") != std::string::npos);
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 2);
}

TEST_CASE("check-config: every error on stderr as FILE:LINE:COL, exit 1", "[config][cli]") {
  const auto file = temp_file("cli-bad.yaml", "interval: abc\nring:\n  samples: 0\n");
  const auto r = check_config({file});
  CHECK(r.code == 1);
  CHECK(r.out.empty());
  CHECK(r.err == file + ":1:11: interval: expected a duration like 200ms, 1s, 1m, 1h, got 'abc'\n" + file +
                     ":3:12: ring.samples: must be between 1 and 100000, got 0\n" + file + ": 2 errors\n");

  const auto missing = check_config({"/nonexistent/lockwatch.yaml"});
  CHECK(missing.code == 1);
  CHECK(missing.err.starts_with("/nonexistent/lockwatch.yaml: cannot open: "));
}

TEST_CASE("check-config: usage errors exit 2, --help exits 0", "[config][cli]") {
  for (const auto& args : {std::vector<std::string_view>{}, {"a.yaml", "b.yaml"}, {"--strict", "a.yaml"}}) {
    const auto r = check_config(args);
    CHECK(r.code == 2);
    CHECK(r.err.find("usage: lockwatch check-config FILE") != std::string::npos);
  }
  const auto help = check_config({"--help"});
  CHECK(help.code == 0);
  CHECK(help.out.starts_with("usage: lockwatch check-config FILE"));
}

TEST_CASE("check-config: also checks the web config file that the config names", "[web][config]") {
  const auto dir = fs::temp_directory_path() / "lockwatch-check-web-test";
  fs::create_directories(dir);
  const auto main = (dir / "lockwatch.yaml").string(), web = (dir / "web.yaml").string();
  test::write_file(main, "web_config_file: " + web + "\n");
  const auto check = [&](std::string& out, std::string& err) {
    std::ostringstream o, e;
    const std::vector<std::string_view> args{main};
    const int code = app::run_check_config(args, o, e);
    out = o.str(), err = e.str();
    return code;
  };
  std::string out, err;
  test::write_file(web, "basic_auth_users:\n  prometheus: plain\n");
  CHECK(check(out, err) == 1);
  CHECK_THAT(err, Catch::StartsWith(web + ":2:15: basic_auth_users.prometheus: expected a bcrypt hash"));
  CHECK_THAT(err, Catch::EndsWith(web + ": 1 error\n"));
  test::write_file(web, std::string("basic_auth_users:\n  prometheus: ") + hash + "\n");
  CHECK(check(out, err) == 0);
  CHECK_THAT(out, Catch::Contains(", web " + web + " (basic auth for 1 user)"));
  fs::remove_all(dir);
}
