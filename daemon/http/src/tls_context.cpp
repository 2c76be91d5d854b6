// SPDX-License-Identifier: Apache-2.0
// OpenSSL settings for the HTTP endpoint: TLS 1.2 or 1.3 only, optional client certificates.
#include "tls_context.hpp"

#include <openssl/ssl.h>

#include <stdexcept>
#include <string>

namespace lockwatch::http::detail {
namespace {

namespace ssl = boost::asio::ssl;

template <class Load>
void load(const char* what, const std::string& file, Load load_it) {
  try {
    load_it();
  } catch (const boost::system::system_error& e) {
    throw std::runtime_error("TLS: cannot load the " + std::string(what) + " " + file + ": " + e.code().message());
  }
}

// Client certificates: the CA to verify them with, and the list of its names that the
// server sends so that a client knows which certificate to offer.
void require_client_certificates(ssl::context& context, const std::string& ca_file) {
  load("client CA", ca_file, [&] { context.load_verify_file(ca_file); });
  if (STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(ca_file.c_str())) SSL_CTX_set_client_CA_list(context.native_handle(), names);
  context.set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
}

}  // namespace

std::shared_ptr<ssl::context> make_tls_context(const TlsOptions& options) {
  auto context = std::make_shared<ssl::context>(ssl::context::tls_server);
  context->set_options(ssl::context::default_workarounds | ssl::context::single_dh_use);
  auto* native = context->native_handle();
  SSL_CTX_set_min_proto_version(native, options.min_version == TlsVersion::tls13 ? TLS1_3_VERSION : TLS1_2_VERSION);
  // Renegotiation costs the server a handshake per request of the client's: refuse it.
  SSL_CTX_set_options(native, SSL_OP_NO_RENEGOTIATION);
  // Resumed sessions of verified clients need an id context, or OpenSSL refuses them.
  static constexpr unsigned char id[] = "lockwatch";
  SSL_CTX_set_session_id_context(native, id, sizeof id - 1);
  // The key is checked against the certificate loaded before it.
  load("certificate", options.cert_file, [&] { context->use_certificate_chain_file(options.cert_file); });
  load("private key", options.key_file, [&] { context->use_private_key_file(options.key_file, ssl::context::pem); });
  if (!options.client_ca_file.empty()) require_client_certificates(*context, options.client_ca_file);
  return context;
}

}  // namespace lockwatch::http::detail
