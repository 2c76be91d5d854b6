// SPDX-License-Identifier: Apache-2.0
// The web config file (TLS and basic auth): the accepted subset, and each error at its place.
#include <catch2/catch.hpp>

#include <filesystem>

#include "lockwatch/config/load.hpp"
#include "test_support.hpp"

using namespace lockwatch;
namespace fs = std::filesystem;

namespace {

// A real bcrypt hash (cost 4, password "secret"), so the format check sees what htpasswd writes.
constexpr const char* hash = "$2y$04$ORtftCAIc4UaHHaJd/qcnOv/IPmsgRVezpq.RxLdbGHp/VHD35iN2";

config::WebLoadResult load(std::string_view yaml) { return config::load_web_config_text(yaml, "web.yaml"); }

config::WebSettings loaded(std::string_view yaml) {
  const auto result = load(yaml);
  for (const auto& e : result.errors) FAIL_CHECK(config::to_string(e));
  REQUIRE(result.ok());
  return *result.web;
}

// The one error of a text with exactly one problem, as "LINE:COL: message".
std::string error_of(std::string_view yaml) {
  const auto result = load(yaml);
  REQUIRE_FALSE(result.ok());
  for (const auto& e : result.errors) INFO(config::to_string(e));
  REQUIRE(result.errors.size() == 1);
  const auto& e = result.errors.front();
  CHECK(e.file == "web.yaml");
  return std::to_string(e.line) + ":" + std::to_string(e.column) + ": " + e.message;
}

}  // namespace

TEST_CASE("web config: every supported key", "[web][config]") {
  const auto web = loaded(std::string("tls_server_config:\n"
                                      "  cert_file: /etc/lockwatch/tls.crt\n"
                                      "  key_file: /etc/lockwatch/tls.key\n"
                                      "  min_version: TLS13\n"
                                      "  client_ca_file: /etc/lockwatch/ca.crt\n"
                                      "  client_auth_type: RequireAndVerifyClientCert\n"
                                      "basic_auth_users:\n"
                                      "  prometheus: ") + hash + "\n  alice: '" + hash + "'\n");
  REQUIRE(web.tls);
  CHECK(web.tls->cert_file == "/etc/lockwatch/tls.crt");
  CHECK(web.tls->key_file == "/etc/lockwatch/tls.key");
  CHECK(web.tls->min_version == config::TlsVersion::tls13);
  CHECK(web.tls->client_ca_file == "/etc/lockwatch/ca.crt");
  CHECK(web.tls->client_auth == config::ClientAuth::require_and_verify);
  CHECK(web.basic_auth_users == std::map<std::string, std::string>{{"alice", hash}, {"prometheus", hash}});
}

TEST_CASE("web config: empty file and empty sections are plain HTTP without auth", "[web][config]") {
  const auto yaml = GENERATE(as<std::string>{}, "", "# nothing\n", "tls_server_config:\nbasic_auth_users:\n",
                             "tls_server_config: {}\nbasic_auth_users: {}\n");
  CAPTURE(yaml);
  const auto web = loaded(yaml);
  CHECK_FALSE(web.tls);
  CHECK(web.basic_auth_users.empty());
}

TEST_CASE("web config: TLS defaults to TLS 1.2 without client certificates", "[web][config]") {
  const auto web = loaded("tls_server_config:\n  cert_file: a.crt\n  key_file: a.key\n  client_auth_type: \"\"\n");
  REQUIRE(web.tls);
  CHECK(web.tls->min_version == config::TlsVersion::tls12);
  CHECK(web.tls->client_auth == config::ClientAuth::none);
  CHECK(web.tls->cert_file == "a.crt");  // only load_web_config_file knows the directory
}

TEST_CASE("web config: each error names its line and column", "[web][config]") {
  const std::string tls = "tls_server_config:\n  cert_file: a.crt\n  key_file: a.key\n";
  CHECK(error_of(tls + "  min_version: TLS10\n") == "4:16: tls_server_config.min_version: expected one of TLS12, TLS13, got 'TLS10'");
  CHECK(error_of("tls_server_config:\n  cert_file: a.crt\n") ==
        "2:3: tls_server_config.key_file: must be set to serve TLS (with cert_file)");
  CHECK(error_of("tls_server_config:\n  min_version: TLS13\n  key_file: k\n") ==
        "2:3: tls_server_config.cert_file: must be set to serve TLS (with key_file)");
  CHECK(error_of(tls + "  client_ca_file: ca.crt\n") ==
        "4:19: tls_server_config.client_auth_type: must be RequireAndVerifyClientCert when client_ca_file is set");
  CHECK(error_of(tls + "  client_auth_type: RequireAndVerifyClientCert\n") ==
        "4:21: tls_server_config.client_ca_file: must be set with client_auth_type RequireAndVerifyClientCert: "
        "the CA that client certificates must be signed by");
  CHECK(error_of(tls + "  client_auth_type: RequireAnyClientCert\n") ==
        "4:21: tls_server_config.client_auth_type: expected one of \"\", NoClientCert, RequireAndVerifyClientCert, "
        "got 'RequireAnyClientCert'");
  CHECK(error_of(tls + "  cert_flie: b.crt\n") == "4:3: unknown key 'tls_server_config.cert_flie' (did you mean 'cert_file'?)");
  CHECK(error_of(tls + "  cipher_suites: [TLS_AES_128_GCM_SHA256]\n") ==
        "4:3: 'tls_server_config.cipher_suites' is not supported by lockwatch; it reads cert_file, key_file, "
        "min_version, client_ca_file, client_auth_type here");
  CHECK(error_of("tls_server_config: [a, b]\n") ==
        "1:20: tls_server_config: expected a mapping with keys cert_file, key_file, min_version, client_ca_file, "
        "client_auth_type, got a list");
  CHECK(error_of("rate_limit:\n  interval: 1s\n") ==
        "1:1: 'rate_limit' is not supported by lockwatch; it reads tls_server_config, basic_auth_users here");
  CHECK(error_of("basic_auth_user:\n  a: b\n") == "1:1: unknown key 'basic_auth_user' (did you mean 'basic_auth_users'?)");
}

TEST_CASE("web config: basic_auth_users needs bcrypt hashes and names Basic auth can carry", "[web][config]") {
  CHECK(error_of("basic_auth_users:\n  prometheus: secret\n") ==
        "2:15: basic_auth_users.prometheus: expected a bcrypt hash like $2y$10$ followed by 53 characters "
        "(htpasswd -nBC 10 USER)");
  CHECK(error_of(std::string("basic_auth_users:\n  prometheus: ") + "$6$" + (hash + 3) + "\n").starts_with(
      "2:15: basic_auth_users.prometheus: expected a bcrypt hash"));  // sha512-crypt: not what node_exporter reads
  CHECK(error_of(std::string("basic_auth_users:\n  \"a:b\": ") + hash + "\n") ==
        "2:10: basic_auth_users.a:b: a user name must be non-empty and hold no ':'");
  CHECK(error_of("basic_auth_users:\n  prometheus:\n") == "2:3: basic_auth_users.prometheus: expected a bcrypt hash, got nothing");
  CHECK(error_of(std::string("basic_auth_users:\n  p: ") + hash + "\n  p: " + hash + "\n") ==
        "3:3: duplicate key 'basic_auth_users.p' (first set on line 2)");
  CHECK(error_of("basic_auth_users: [alice]\n") ==
        "1:19: basic_auth_users: expected a mapping of user names to bcrypt hashes, got a list");
}

TEST_CASE("web config: YAML syntax errors and stray documents", "[web][config]") {
  CHECK(error_of("tls_server_config:\n  cert_file: [a\n").starts_with("3:1: invalid YAML: "));
  CHECK(error_of("basic_auth_users:\n---\nx: 1\n") ==
        "3:1: a web config file holds one YAML document; remove the '---' before this one");
  CHECK(error_of("just text\n") == "1:1: expected settings as 'key: value' lines, got 'just text'");
}

TEST_CASE("web config file: relative paths are the file's directory's; a missing file is named", "[web][config]") {
  const auto dir = fs::temp_directory_path() / "lockwatch-web-config-test";
  fs::create_directories(dir);
  test::write_file(dir / "web.yaml",
                   "tls_server_config:\n  cert_file: certs/tls.crt\n  key_file: /abs/tls.key\n"
                   "  client_ca_file: ../ca.crt\n  client_auth_type: RequireAndVerifyClientCert\n");
  const auto result = config::load_web_config_file((dir / "web.yaml").string());
  REQUIRE(result.ok());
  CHECK(result.web->tls->cert_file == (dir / "certs/tls.crt").string());
  CHECK(result.web->tls->key_file == "/abs/tls.key");
  CHECK(result.web->tls->client_ca_file == (dir.parent_path() / "ca.crt").string());

  const auto missing = config::load_web_config_file((dir / "nope.yaml").string());
  REQUIRE_FALSE(missing.ok());
  CHECK(config::to_string(missing.errors.front()) == (dir / "nope.yaml").string() + ": cannot open: No such file or directory");
  fs::remove_all(dir);
}

TEST_CASE("main config: web_config_file names the web config, and the summary says what it serves", "[web][config]") {
  const auto result = config::load_config_text("web_config_file: /etc/lockwatch/web.yaml\n", "main.yaml");
  REQUIRE(result.ok());
  auto c = *result.config;
  CHECK(c.web_config_file == "/etc/lockwatch/web.yaml");
  CHECK(c.web == config::WebSettings{});  // the main loader never reads the web file itself
  c.web.tls = config::TlsServerSettings{"a.crt", "a.key", config::TlsVersion::tls13, "", config::ClientAuth::none};
  c.web.basic_auth_users = {{"prometheus", hash}};
  CHECK_THAT(config::summary(c), Catch::EndsWith(", web /etc/lockwatch/web.yaml (TLS13+, basic auth for 1 user)"));
  CHECK(config::summary(config::Config{}).find("web") == std::string::npos);
}
