// SPDX-License-Identifier: Apache-2.0
#include "http_get.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <array>

namespace lockwatch::test {
namespace {

std::string header(const std::string& head, const std::string& name) {
  const auto at = head.find("\r\n" + name + ": ");
  if (at == std::string::npos) return "";
  const auto from = at + name.size() + 4;
  return head.substr(from, head.find("\r\n", from) - from);
}

// Go's net/http (Prometheus) chunks a body of unknown length even on a closing connection.
std::string dechunk(const std::string& body) {
  std::string out;
  for (std::size_t at = 0; at < body.size();) {
    const auto eol = body.find("\r\n", at);
    if (eol == std::string::npos) break;
    const auto size = std::stoul(body.substr(at, eol - at), nullptr, 16);
    if (size == 0) break;
    out.append(body, eol + 2, size);
    at = eol + 2 + size + 2;
  }
  return out;
}

}  // namespace

HttpReply http_get(std::uint16_t port, const std::string& path) {
  HttpReply reply;
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  timeval timeout{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return ::close(fd), reply;
  const std::string request = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) < 0) return ::close(fd), reply;
  std::string raw;
  std::array<char, 65536> buf{};
  for (ssize_t n; (n = ::recv(fd, buf.data(), buf.size(), 0)) > 0;) raw.append(buf.data(), static_cast<std::size_t>(n));
  ::close(fd);
  const auto end = raw.find("\r\n\r\n");
  if (end == std::string::npos || raw.size() < 12) return reply;
  reply.status = std::stoi(raw.substr(9, 3));
  const auto head = raw.substr(0, end);
  reply.content_type = header(head, "Content-Type");
  reply.body = raw.substr(end + 4);
  if (header(head, "Transfer-Encoding") == "chunked") reply.body = dechunk(reply.body);
  return reply;
}

}  // namespace lockwatch::test
