// SPDX-License-Identifier: MIT
#include "src/util/net_resolve.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <atomic>
#include <condition_variable>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#include <fmt/core.h>

#include "src/util/text.hpp"

namespace ddl::net {
namespace {

std::atomic<NameLookup> g_lookup{NameLookup::resolver};

std::string bare_host(const std::string& host) {
  return host.size() >= 2 && host.front() == '[' && host.back() == ']' ? host.substr(1, host.size() - 2) : host;
}

// The address /etc/hosts gives `name` (first line naming it), "" when none.
std::string hosts_file_address(const std::string& name) {
  std::ifstream file("/etc/hosts");
  std::string line;
  const std::string wanted = to_lower(name);
  while (std::getline(file, line)) {
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::string address;
    std::string alias;
    words >> address;
    while (words >> alias) {
      if (to_lower(alias) == wanted) {
        return address;
      }
    }
  }
  return "";
}

bool is_numeric(const std::string& host) {
  in6_addr v6{};
  in_addr v4{};
  return ::inet_pton(AF_INET, host.c_str(), &v4) == 1 || ::inet_pton(AF_INET6, host.c_str(), &v6) == 1;
}

// The name as getaddrinfo may take it in no_dns mode: numeric, or "" when
// only the resolver knows it.
std::string without_dns(const std::string& host) {
  if (is_numeric(host)) {
    return host;
  }
  if (to_lower(host) == "localhost") {
    return "127.0.0.1";
  }
  return hosts_file_address(host);
}

bool loopback(const sockaddr* addr) {
  if (addr->sa_family == AF_INET) {
    return (ntohl(reinterpret_cast<const sockaddr_in*>(addr)->sin_addr.s_addr) >> 24) == 127;
  }
  if (addr->sa_family == AF_INET6) {
    return IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr);
  }
  return false;
}

NameAnswer answer_of(const std::string& name) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  NameAnswer answer;
  int rc = lookup(name, nullptr, hints, &list);
  if (rc != 0 || list == nullptr) {
    answer.why = rc != 0 ? gai_strerror(rc) : "no address";
    return answer;
  }
  answer.resolved = true;
  answer.loopback = true;
  for (const addrinfo* entry = list; entry != nullptr; entry = entry->ai_next) {
    answer.loopback = answer.loopback && loopback(entry->ai_addr);
  }
  ::freeaddrinfo(list);
  return answer;
}

// Shared with the lookup threads, which may outlive resolve_all (a lookup
// cannot be cancelled): they only ever touch this.
struct Lookups {
  std::vector<std::string> names;
  std::vector<NameAnswer> answers;
  std::vector<bool> done;
  std::size_t next = 0;
  std::size_t finished = 0;
  std::mutex mutex;
  std::condition_variable changed;
};

void lookup_worker(const std::shared_ptr<Lookups>& work) {
  while (true) {
    std::size_t i = 0;
    {
      std::lock_guard lock(work->mutex);
      if (work->next >= work->names.size()) {
        return;
      }
      i = work->next++;
    }
    NameAnswer answer = answer_of(work->names[i]);
    std::lock_guard lock(work->mutex);
    work->answers[i] = std::move(answer);
    work->done[i] = true;
    ++work->finished;
    work->changed.notify_all();
  }
}

} // namespace

void set_name_lookup(NameLookup how) { g_lookup = how; }
NameLookup name_lookup() { return g_lookup; }

int lookup(const std::string& host, const char* service, const addrinfo& hints, addrinfo** out) {
  std::string name = bare_host(host);
  addrinfo asked = hints;
  if (g_lookup == NameLookup::no_dns) {
    name = without_dns(name);
    if (name.empty()) {
      return EAI_NONAME;
    }
    asked.ai_flags |= AI_NUMERICHOST;
  }
  return ::getaddrinfo(name.c_str(), service, &asked, out);
}

bool known_without_dns(const std::string& host) { return !without_dns(bare_host(host)).empty(); }

std::vector<NameAnswer> resolve_all(const std::vector<std::string>& names, Millis deadline) {
  if (g_lookup == NameLookup::no_dns) {  // nothing waits: no threads
    std::vector<NameAnswer> answers;
    for (const auto& name : names) {
      answers.push_back(answer_of(name));
    }
    return answers;
  }
  auto work = std::make_shared<Lookups>();
  work->names = names;
  work->answers.resize(names.size());
  work->done.assign(names.size(), false);
  const std::size_t threads = std::min<std::size_t>(64, names.size());
  for (std::size_t t = 0; t < threads; ++t) {
    std::thread([work] { lookup_worker(work); }).detach();
  }
  std::unique_lock lock(work->mutex);
  work->changed.wait_for(lock, deadline, [&] { return work->finished == names.size(); });
  std::vector<NameAnswer> answers = work->answers;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (!work->done[i]) {
      answers[i].why = fmt::format("no answer within {:g}s", static_cast<double>(deadline.count()) / 1000.0);
    }
  }
  work->next = names.size();  // the threads still looking stop after their name
  return answers;
}

} // namespace ddl::net
