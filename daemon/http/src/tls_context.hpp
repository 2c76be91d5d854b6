// SPDX-License-Identifier: Apache-2.0
// The server's TLS context from TlsOptions: certificate, key, minimum version, client CA.
#pragma once

#include <memory>

#include "lockwatch/http/server.hpp"
#include "lockwatch/asio.hpp"  // before any other Asio header

#include <boost/asio/ssl/context.hpp>

namespace lockwatch::http::detail {

/// Throws std::runtime_error naming the file (and OpenSSL's reason) that cannot be loaded,
/// or a key that does not belong to the certificate.
std::shared_ptr<boost::asio::ssl::context> make_tls_context(const TlsOptions& options);

}  // namespace lockwatch::http::detail
