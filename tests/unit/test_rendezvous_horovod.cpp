// SPDX-License-Identifier: MIT
// Horovod's HTTP rendezvous: request parsing, the store's semantics, and the
// server's bounds over real sockets.
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "rendezvous/horovod_server.hpp"
#include "rendezvous/horovod_store.hpp"
#include "rendezvous/http_request.hpp"
#include "src/util/net.hpp"

using namespace ddl;
using namespace ddl::rendezvous;

namespace {

HttpParsed parse(std::string_view text, HttpLimits limits = {}) { return parse_http_request(text, limits); }

int refused_status(std::string_view text, HttpLimits limits = {}) {
  HttpParsed parsed = parse(text, limits);
  return parsed.end == HttpParse::refused ? parsed.status : 0;
}

HttpResponse call(HorovodStore& store, std::string method, std::string target, std::string body = "") {
  return store.handle(HttpRequest{std::move(method), std::move(target), std::move(body)});
}

net::Fd dial(int port) {
  auto fd = net::dial_tcp("127.0.0.1", port, net::Clock::now() + std::chrono::seconds(5));
  REQUIRE(fd);
  return std::move(*fd);
}

// Sends `request` and reads the whole answer (the server closes after it).
std::string http_exchange(int port, std::string_view request) {
  net::Fd fd = dial(port);
  auto deadline = net::Clock::now() + std::chrono::seconds(5);
  REQUIRE(net::send_all(fd.get(), request, deadline));
  std::string reply;
  char c = 0;
  while (net::recv_exact(fd.get(), &c, 1, deadline)) reply += c;
  return reply;
}

std::string status_line(const std::string& reply) { return reply.substr(0, reply.find("\r\n")); }

} // namespace

TEST_CASE("horovod http: a whole PUT is parsed, byte for byte", "[rendezvous][horovod]") {
  std::string body("a\0b\r\n\r\nc", 8);
  std::string text = "PUT /global/3 HTTP/1.1\r\nHost: h\r\ncontent-length: 8\r\n\r\n" + body;
  HttpParsed parsed = parse(text);
  REQUIRE(parsed.end == HttpParse::complete);
  CHECK(parsed.request.method == "PUT");
  CHECK(parsed.request.target == "/global/3");
  CHECK(parsed.request.body == body);
  CHECK(parse(text.substr(0, text.size() - 1)).end == HttpParse::incomplete);
  CHECK(parse("GET /s/k HTTP/1.0\r\n").end == HttpParse::incomplete);
  CHECK(parse("GET /s/k HTTP/1.0\n\n").end == HttpParse::complete);
}

TEST_CASE("horovod http: malformed requests are 400, oversized ones 413", "[rendezvous][horovod]") {
  CHECK(refused_status("HELLO\r\n\r\n") == 400);
  CHECK(refused_status("GET /s/k\r\n\r\n") == 400);
  CHECK(refused_status("get /s/k HTTP/1.1\r\n\r\n") == 400);
  CHECK(refused_status("GET s/k HTTP/1.1\r\n\r\n") == 400);
  CHECK(refused_status("GET /s/k HTTP/2.0\r\n\r\n") == 400);
  CHECK(refused_status("GET /s/k HTTP/1.1\r\nno colon\r\n\r\n") == 400);
  CHECK(refused_status("PUT /s/k HTTP/1.1\r\nContent-Length: -1\r\n\r\n") == 400);
  CHECK(refused_status("PUT /s/k HTTP/1.1\r\nContent-Length: 1x\r\n\r\n") == 400);
  CHECK(refused_status("PUT /s/k HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n") == 400);
  CHECK(refused_status("PUT /s/k HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n") == 400);
  CHECK(refused_status("PUT /s/k HTTP/1.1\r\n\r\n") == 411);
  CHECK(refused_status("PUT /s/k HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n") == 501);
  HttpLimits small{64, 16};
  CHECK(refused_status("PUT /s/k HTTP/1.1\r\nContent-Length: 17\r\n\r\n", small) == 413);
  CHECK(refused_status("PUT /s/k HTTP/1.1\r\nContent-Length: 16\r\n\r\n", small) == 0);
  CHECK(refused_status("GET /s/k HTTP/1.1\r\nX: " + std::string(100, 'x'), small) == 413);
  CHECK(refused_status("GET /s/k HTTP/1.1\r\nX: " + std::string(100, 'x') + "\r\n\r\n", small) == 413);
}

TEST_CASE("horovod store: GET of a missing key is 404 until it is PUT", "[rendezvous][horovod]") {
  HorovodStore store({}, 1 << 20);
  CHECK(call(store, "GET", "/global/0").status == 404);
  CHECK(call(store, "PUT", "/global/0", "addr").status == 200);
  HttpResponse got = call(store, "GET", "/global/0");
  CHECK(got.status == 200);
  CHECK(got.body == "addr");
  CHECK(call(store, "GET", "/other/0").status == 404);
  CHECK(call(store, "GET", "/global").status == 400);
  CHECK(call(store, "GET", "/global/0/x").status == 400);
  CHECK(call(store, "GET", "//0").status == 400);
  CHECK(call(store, "POST", "/global/0").status == 405);
}

TEST_CASE("horovod store: a declared scope is cleared once all its ranks DELETE", "[rendezvous][horovod]") {
  HorovodStore store({{"global", 2}}, 1 << 20);
  call(store, "PUT", "/global/0", "a");
  call(store, "PUT", "/global/1", "b");
  call(store, "PUT", "/global/rank_0", "h1");
  CHECK(call(store, "DELETE", "/global/0").status == 200);
  CHECK(call(store, "GET", "/global/0").status == 200);  // rank 1 may still read it
  CHECK(call(store, "DELETE", "/global/0").status == 200);  // the same rank twice counts once
  CHECK(call(store, "GET", "/global/1").status == 200);
  CHECK(call(store, "DELETE", "/global/1").status == 200);
  CHECK(call(store, "GET", "/global/0").status == 404);
  CHECK(call(store, "GET", "/global/rank_0").status == 404);
  CHECK(store.bytes() == 0);
  // An ad-hoc scope loses the one key.
  call(store, "PUT", "/mine/a", "1");
  call(store, "PUT", "/mine/b", "2");
  CHECK(call(store, "DELETE", "/mine/a").status == 200);
  CHECK(call(store, "GET", "/mine/a").status == 404);
  CHECK(call(store, "GET", "/mine/b").status == 200);
}

TEST_CASE("horovod store: a PUT past the store's cap is 507 and changes nothing", "[rendezvous][horovod]") {
  HorovodStore store({}, 300);
  CHECK(call(store, "PUT", "/s/a", std::string(100, 'x')).status == 200);
  CHECK(call(store, "PUT", "/s/b", std::string(200, 'x')).status == 507);
  CHECK(call(store, "GET", "/s/b").status == 404);
  CHECK(call(store, "PUT", "/s/a", std::string(150, 'y')).status == 200);  // a replaced value frees its bytes
  store.clear();
  CHECK(store.bytes() == 0);
  CHECK(call(store, "GET", "/s/a").status == 404);
}

TEST_CASE("horovod store: the declared scopes follow the plan", "[rendezvous][horovod]") {
  Plan plan;
  plan.hosts = {Host{"h1", "a", 2, {}, "list"}, Host{"h2", "b", 1, {}, "list"}};
  plan.world_size = 3;
  auto slot = [](int rank, std::size_t host, int local_rank, int local_size, int cross_size) {
    RankSlot s;
    s.rank = rank;
    s.host_index = host;
    s.local_rank = local_rank;
    s.local_size = local_size;
    s.cross_size = cross_size;
    return s;
  };
  plan.ranks = {slot(0, 0, 0, 2, 2), slot(1, 0, 1, 2, 1), slot(2, 1, 0, 1, 2)};
  auto sizes = horovod_scope_sizes(plan);
  CHECK(sizes == HorovodStore::ScopeSizes{
                     {"global", 3}, {"local_h1", 2}, {"local_h2", 1}, {"cross_0", 2}, {"cross_1", 1}});
}

TEST_CASE("horovod server: requests over TCP, a bad one answered, not fatal", "[rendezvous][horovod]") {
  HorovodServer server;
  HorovodServerOptions options;
  options.limits = HttpLimits{1024, 64};
  auto port = server.start(options);
  REQUIRE(port);
  CHECK(status_line(http_exchange(*port, "GET /global/0 HTTP/1.1\r\n\r\n")) == "HTTP/1.0 404 Not Found");
  CHECK(status_line(http_exchange(*port, "PUT /global/0 HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc")) == "HTTP/1.0 200 OK");
  std::string got = http_exchange(*port, "GET /global/0 HTTP/1.1\r\n\r\n");
  CHECK(status_line(got) == "HTTP/1.0 200 OK");
  CHECK(got.ends_with("Content-Length: 3\r\nConnection: close\r\n\r\nabc"));
  CHECK(status_line(http_exchange(*port, "\x01\x02garbage\r\n\r\n")) == "HTTP/1.0 400 Bad Request");
  CHECK(status_line(http_exchange(*port, "PUT /s/k HTTP/1.1\r\nContent-Length: 65\r\n\r\n")) ==
        "HTTP/1.0 413 Payload Too Large");
  const std::string long_head = "GET /s/" + std::string(2000, 'k');
  CHECK(status_line(http_exchange(*port, long_head)) == "HTTP/1.0 413 Payload Too Large");
  server.clear();
  CHECK(status_line(http_exchange(*port, "GET /global/0 HTTP/1.1\r\n\r\n")) == "HTTP/1.0 404 Not Found");
}

namespace {

// What the server sends on `fd` until it closes it ("" when it closed without a word).
std::string read_to_end(const net::Fd& fd) {
  std::string reply;
  char c = 0;
  while (net::recv_exact(fd.get(), &c, 1, net::Clock::now() + std::chrono::seconds(5))) reply += c;
  return reply;
}

} // namespace

TEST_CASE("horovod server: half-sent requests never lock a rank out", "[rendezvous][horovod]") {
  HorovodServer server;
  HorovodServerOptions options;
  options.max_connections = 2;
  options.header_timeout = Millis{300};
  auto port = server.start(options);
  REQUIRE(port);
  net::Fd half = dial(*port);
  REQUIRE(net::send_all(half.get(), "GET /s/k HTTP/1.1\r\nHost:", net::Clock::now() + std::chrono::seconds(1)));
  net::Fd silent = dial(*port);
  auto start = net::Clock::now();
  // Past the cap, the oldest unfinished request of the busiest address goes.
  CHECK(status_line(http_exchange(*port, "GET /s/k HTTP/1.1\r\n\r\n")) == "HTTP/1.0 404 Not Found");
  CHECK(read_to_end(half).empty());
  // A head that does not arrive within header_timeout is answered 408.
  CHECK(status_line(read_to_end(silent)) == "HTTP/1.0 408 Request Timeout");
  CHECK(net::Clock::now() - start >= std::chrono::milliseconds(250));
}

TEST_CASE("horovod server: one address holds at most max_per_address", "[rendezvous][horovod]") {
  HorovodServer server;
  HorovodServerOptions options;
  options.max_per_address = 3;
  auto port = server.start(options);
  REQUIRE(port);
  std::vector<net::Fd> held;
  for (int i = 0; i < 10; ++i) held.push_back(dial(*port));
  CHECK(status_line(http_exchange(*port, "GET /s/k HTTP/1.1\r\n\r\n")) == "HTTP/1.0 404 Not Found");
  int closed = 0;
  for (const net::Fd& fd : held) {
    char c = 0;
    closed += net::recv_exact(fd.get(), &c, 1, net::Clock::now() + std::chrono::milliseconds(200)) ? 0 : 1;
  }
  CHECK(closed >= 8);  // the newest ones may still be open: at most 3 in all
}

TEST_CASE("horovod server: only the ranks' addresses are answered", "[rendezvous][horovod]") {
  HorovodServer server;
  HorovodServerOptions options;
  options.allowed_peers = {"198.18.255.1"};
  auto port = server.start(options);
  REQUIRE(port);
  CHECK(status_line(http_exchange(*port, "PUT /global/0 HTTP/1.1\r\nContent-Length: 1\r\n\r\nx")) ==
        "HTTP/1.0 403 Forbidden");
  HorovodServer open;
  HorovodServerOptions local;
  local.allowed_peers = {"127.0.0.1"};
  auto open_port = open.start(local);
  REQUIRE(open_port);
  CHECK(status_line(http_exchange(*open_port, "GET /global/0 HTTP/1.1\r\n\r\n")) == "HTTP/1.0 404 Not Found");
}
