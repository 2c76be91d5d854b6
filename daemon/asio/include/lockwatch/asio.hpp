// SPDX-License-Identifier: Apache-2.0
// The one way to include Boost.Asio: Debian's Boost 1.74 awaitable.hpp uses std::exchange
// without including <utility>, which g++ 12 in C++20 mode rejects.
#pragma once

#include <utility>

#include <boost/asio.hpp>
