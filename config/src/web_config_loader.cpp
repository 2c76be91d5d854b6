// SPDX-License-Identifier: Apache-2.0
// The web config file's grammar (`--web.config.file`): node_exporter's format, the part lockwatch
// serves (TLS and basic auth). Its positions and value readers are the main file's
// (yaml_reader.hpp); the keys, and the refusal of node_exporter keys lockwatch does not
// implement, are its own.
#include <algorithm>
#include <string>
#include <optional>

#include "lockwatch/config/load.hpp"
#include "suggest.hpp"
#include "yaml_reader.hpp"

namespace lockwatch::config {
namespace {

// The shared reading, by name (yaml_reader.hpp).
using detail::Item;
using detail::Reader;
using detail::got;
using detail::join;
using detail::last_part;
using detail::position_of;

// Keys of node_exporter's web config that lockwatch does not implement. They are refused
// rather than ignored: a file that restricts client SANs or ciphers must not leave the
// endpoint more open than it says.
constexpr std::string_view unsupported_web_keys[] = {
    "http_server_config", "rate_limit",    "cert",          "key", "client_ca", "client_allowed_sans",
    "max_version",        "cipher_suites", "curve_preferences", "prefer_server_cipher_suites"};
constexpr std::string_view web_top_keys[] = {"tls_server_config", "basic_auth_users"};
constexpr std::string_view tls_keys[] = {"cert_file", "key_file", "min_version", "client_ca_file", "client_auth_type"};

// The web config file (`--web.config.file`): node_exporter's format, the part lockwatch serves.
class WebLoader : public Reader {
 public:
  using Reader::Reader;

  WebSettings web;

  void document(const std::vector<YAML::Node>& documents);
  WebLoadResult finish();

 private:
  void top_key(const Item& item);
  void tls(const Item& item);
  void tls_key(const Item& item, TlsServerSettings& out);
  void users(const Item& item);
  void unknown(const Item& item, const std::vector<std::string_view>& known);
};

void WebLoader::document(const std::vector<YAML::Node>& documents) {
  if (const auto* top = single_mapping(documents, "web config file"))
    entries(*top, "", [this](const Item& item) { top_key(item); });
}

void WebLoader::top_key(const Item& item) {
  if (item.path == "tls_server_config") return tls(item);
  if (item.path == "basic_auth_users") return users(item);
  unknown(item, {std::begin(web_top_keys), std::end(web_top_keys)});
}

// An empty section means plain HTTP, as in node_exporter; any key in it asks for TLS.
void WebLoader::tls(const Item& item) {
  if (item.value.IsNull()) return;
  if (!item.value.IsMap()) return error(item, "expected a mapping with keys " + join({std::begin(tls_keys), std::end(tls_keys)}) + ", " + got(item.value));
  if (item.value.size() == 0) return;
  auto& out = web.tls.emplace();
  entries(item.value, item.path, [this, &out](const Item& key) { tls_key(key, out); });
}

void WebLoader::tls_key(const Item& item, TlsServerSettings& out) {
  const auto name = last_part(item.path);
  if (name == "cert_file") return text(item, out.cert_file);
  if (name == "key_file") return text(item, out.key_file);
  if (name == "client_ca_file") return text(item, out.client_ca_file);
  if (name == "min_version") return choice(item, out.min_version, parse_tls_version, "TLS12, TLS13");
  if (name == "client_auth_type") {
    if (item.value.IsNull()) return void(out.client_auth = ClientAuth::none);
    return choice(item, out.client_auth, parse_client_auth, "\"\", NoClientCert, RequireAndVerifyClientCert");
  }
  unknown(item, {std::begin(tls_keys), std::end(tls_keys)});
}

void WebLoader::users(const Item& item) {
  if (item.value.IsNull()) return;
  if (!item.value.IsMap()) return error(item, "expected a mapping of user names to bcrypt hashes, " + got(item.value));
  entries(item.value, item.path, [this](const Item& user) {
    if (const auto* hash = scalar(user, "a bcrypt hash")) web.basic_auth_users[user.key.Scalar()] = *hash;
  });
}

void WebLoader::unknown(const Item& item, const std::vector<std::string_view>& known) {
  const auto name = last_part(item.path);
  std::string message = "unknown key '" + item.path + "'";
  if (std::find(std::begin(unsupported_web_keys), std::end(unsupported_web_keys), name) != std::end(unsupported_web_keys))
    message = "'" + item.path + "' is not supported by lockwatch; it reads " + join(known) + " here";
  else if (auto near = detail::closest(name, known))
    message += " (did you mean '" + std::string(*near) + "'?)";
  else
    message += "; known keys here: " + join(known);
  error(position_of(item.key.Mark()), message);
}

WebLoadResult WebLoader::finish() {
  auto errors = sorted_errors(detail::check_web(web));
  if (!errors.empty()) return {std::nullopt, std::move(errors)};
  return {std::move(web), {}};
}

}  // namespace

WebLoadResult load_web_config_text(std::string_view text, std::string_view name) {
  return load_yaml<WebLoadResult>(WebLoader(name), text, name);
}

}  // namespace lockwatch::config
