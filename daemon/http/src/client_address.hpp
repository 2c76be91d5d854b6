// SPDX-License-Identifier: Apache-2.0
// The address a client's connections and password checks are counted under.
#pragma once

#include "lockwatch/asio.hpp"  // the one way to include Asio

namespace lockwatch::http::detail {

/// A dual-stack listener sees an IPv4 client as ::ffff:a.b.c.d: it counts as a.b.c.d, so a
/// client has one budget whichever way it connects. Other addresses count as they are.
inline boost::asio::ip::address client_address(const boost::asio::ip::address& address) {
  if (address.is_v6() && address.to_v6().is_v4_mapped())
    return boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, address.to_v6());
  return address;
}

}  // namespace lockwatch::http::detail
