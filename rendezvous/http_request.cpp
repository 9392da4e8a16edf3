// SPDX-License-Identifier: MIT
#include "rendezvous/http_request.hpp"

#include <algorithm>
#include <cctype>
#include <optional>

#include <fmt/format.h>

namespace ddl::rendezvous {
namespace {

HttpParsed refused(int status, std::string why) {
  HttpParsed parsed;
  parsed.end = HttpParse::refused;
  parsed.status = status;
  parsed.why = std::move(why);
  return parsed;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view trim_spaces(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
  return text;
}

// Where the head ends (after its blank line) and how long the terminator is.
std::optional<std::pair<std::size_t, std::size_t>> find_head_end(std::string_view buffer) {
  const std::size_t crlf = buffer.find("\r\n\r\n");
  const std::size_t lf = buffer.find("\n\n");
  if (crlf == std::string_view::npos && lf == std::string_view::npos) return std::nullopt;
  if (lf == std::string_view::npos || (crlf != std::string_view::npos && crlf < lf)) return std::pair{crlf, 4U};
  return std::pair{lf, 2U};
}

bool is_token(std::string_view text) {
  return !text.empty() && std::ranges::all_of(text, [](char c) { return c >= 'A' && c <= 'Z'; });
}

// "PUT /scope/key HTTP/1.1" into method and target.
bool parse_request_line(std::string_view line, HttpRequest& request) {
  line = trim_spaces(line);
  const std::size_t first = line.find(' ');
  const std::size_t last = line.rfind(' ');
  if (first == std::string_view::npos || last == first) return false;
  std::string_view method = line.substr(0, first);
  std::string_view target = trim_spaces(line.substr(first + 1, last - first - 1));
  std::string_view version = line.substr(last + 1);
  if (!is_token(method) || target.empty() || target.front() != '/' ||
      target.find_first_of(" \t") != std::string_view::npos ||
      !(version == "HTTP/1.0" || version == "HTTP/1.1")) {
    return false;
  }
  request.method = std::string(method);
  request.target = std::string(target);
  return true;
}

bool all_digits(std::string_view text) {
  return !text.empty() && text.size() <= 18 && std::ranges::all_of(text, [](char c) { return c >= '0' && c <= '9'; });
}

} // namespace

HttpParsed parse_http_request(std::string_view buffer, const HttpLimits& limits) {
  auto head_end = find_head_end(buffer);
  if (!head_end) {
    if (buffer.size() > limits.max_head) {
      return refused(413, fmt::format("request head over {} bytes", limits.max_head));
    }
    return {};
  }
  if (head_end->first > limits.max_head) {
    return refused(413, fmt::format("request head over {} bytes", limits.max_head));
  }
  std::string_view head = buffer.substr(0, head_end->first);
  HttpParsed parsed;
  std::size_t line_end = head.find('\n');
  if (!parse_request_line(head.substr(0, line_end), parsed.request)) {
    return refused(400, "malformed request line");
  }
  std::optional<std::size_t> length;
  while (line_end != std::string_view::npos) {
    head.remove_prefix(line_end + 1);
    line_end = head.find('\n');
    std::string_view line = head.substr(0, line_end);
    if (trim_spaces(line).empty()) continue;
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0 || line.front() == ' ' || line.front() == '\t') {
      return refused(400, "malformed header line");
    }
    std::string_view name = line.substr(0, colon);
    std::string_view value = trim_spaces(line.substr(colon + 1));
    if (iequals(name, "Transfer-Encoding")) {
      return refused(501, "Transfer-Encoding is not supported; send Content-Length");
    }
    if (iequals(name, "Content-Length")) {
      if (!all_digits(value)) return refused(400, "malformed Content-Length");
      const std::size_t size = std::stoull(std::string(value));
      if (length && *length != size) return refused(400, "conflicting Content-Length headers");
      length = size;
    }
  }
  if (parsed.request.method == "PUT" && !length) {
    return refused(411, "PUT needs Content-Length");
  }
  const std::size_t body_size = length.value_or(0);
  if (body_size > limits.max_body) {
    return refused(413, fmt::format("body of {} bytes is over the {} allowed", body_size, limits.max_body));
  }
  const std::size_t body_start = head_end->first + head_end->second;
  if (buffer.size() - body_start < body_size) {
    return {};
  }
  parsed.request.body = std::string(buffer.substr(body_start, body_size));
  parsed.end = HttpParse::complete;
  return parsed;
}

bool http_head_complete(std::string_view buffer) { return find_head_end(buffer).has_value(); }

std::string format_http_response(const HttpResponse& response) {
  std::string_view reason = "Error";
  switch (response.status) {
  case 200: reason = "OK"; break;
  case 400: reason = "Bad Request"; break;
  case 403: reason = "Forbidden"; break;
  case 404: reason = "Not Found"; break;
  case 405: reason = "Method Not Allowed"; break;
  case 408: reason = "Request Timeout"; break;
  case 411: reason = "Length Required"; break;
  case 413: reason = "Payload Too Large"; break;
  case 501: reason = "Not Implemented"; break;
  case 503: reason = "Service Unavailable"; break;
  case 507: reason = "Insufficient Storage"; break;
  default: break;
  }
  return fmt::format("HTTP/1.0 {} {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}", response.status, reason,
                     response.body.size(), response.body);
}

} // namespace ddl::rendezvous
