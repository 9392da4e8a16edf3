// SPDX-License-Identifier: MIT
#pragma once

// The small part of HTTP/1.x that Horovod's key/value rendezvous speaks
// (horovod/common/gloo/http_store.cc against horovodrun's http_server.py):
// one request per connection, a body only with Content-Length. Parsing is
// bounded: a head over max_head or a body over max_body is refused (413)
// before it is read, anything malformed is a 400.

#include <cstddef>
#include <string>
#include <string_view>

namespace ddl::rendezvous {

struct HttpLimits {
  std::size_t max_head = 8 * 1024;     // request line and headers
  std::size_t max_body = 1024 * 1024;  // one value
};

struct HttpRequest {
  std::string method;  // "GET", "PUT", "DELETE", ... as sent
  std::string target;  // "/scope/key"
  std::string body;
};

enum class HttpParse { incomplete, complete, refused };

struct HttpParsed {
  HttpParse end = HttpParse::incomplete;
  HttpRequest request;      // when complete
  int status = 0;           // when refused: 400, 411, 413, 501
  std::string why;          // when refused
};

// Parses the request at the start of `buffer` (all bytes read so far).
HttpParsed parse_http_request(std::string_view buffer, const HttpLimits& limits);
// Whether `buffer` holds the whole head (request line and headers).
bool http_head_complete(std::string_view buffer);

struct HttpResponse {
  int status = 200;
  std::string body;
};

// "HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
std::string format_http_response(const HttpResponse& response);

} // namespace ddl::rendezvous
