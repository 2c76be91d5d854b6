// SPDX-License-Identifier: Apache-2.0
// A minimal blocking HTTP/1.1 GET for tests of the daemon's endpoints and of Prometheus's API
// (plain sockets, so the client shares no code with the server it checks; chunked bodies are
// joined).
#pragma once

#include <cstdint>
#include <string>

namespace lockwatch::test {

struct HttpReply {
  int status = 0;            // 0: no connection or no reply
  std::string content_type;
  std::string body;
};

HttpReply http_get(std::uint16_t port, const std::string& path);

}  // namespace lockwatch::test
