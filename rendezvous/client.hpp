// SPDX-License-Identifier: MIT
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "src/util/error.hpp"
#include "src/job/job.hpp"

namespace ddl::rendezvous {

// Who joins: the values a rank finds in DDL_RENDEZVOUS, DDL_TOKEN, DDL_RANK,
// DDL_WORLD_SIZE and DDL_JOB. They all enter the join MAC (see protocol.hpp).
struct JoinInfo {
  std::string endpoint;   // "host:port" (IPv6: "[::1]:port")
  std::string token;      // the job secret, as given (64 hex digits)
  int rank = 0;
  int world_size = 1;
  std::string job;
};

// JoinInfo from this process's environment; an error names the missing or
// malformed variable (the token's value is never part of a message).
Result<JoinInfo> join_info_from_env();

// Whom a heartbeat speaks for: join_info_from_env, but under --mpi pmix (a
// rank of `ddl worker pmix-host`, whose DDL_RANK is its MPI rank) the gang
// rank of its host's worker, DDL_HEARTBEAT_RANK of DDL_HEARTBEAT_WORLD_SIZE.
Result<JoinInfo> heartbeat_info_from_env();

// One HEARTBEAT (see protocol.hpp): the rank made progress, for the hang
// watchdog. Does not join. Errors as Client::connect's (no retry).
Result<void> send_heartbeat(const JoinInfo& who, Millis timeout);

// A blocking client of the launcher's rendezvous service, for ddl's own workers
// (the allreduce benchmark) and for tests. One request at a time; not
// thread-safe. Its socket is CLOEXEC. Errors: ExitCode::launch when the
// service cannot be reached or refuses the join, ExitCode::rendezvous_timeout
// when a deadline passes. After any error the connection is closed and every
// later call fails.
class Client {
public:
  // Dials, answers the server's challenge, and waits until the join is
  // accepted. A refused or dropped connection (a busy or crowded server) is
  // tried again, with backoff and jitter, until `timeout` passes; a refused
  // join (wrong token, rank, world size or job) is final.
  static Result<Client> connect(const JoinInfo& who, Millis timeout);

  Client(Client&&) noexcept;
  Client& operator=(Client&&) noexcept;
  ~Client();  // says goodbye (a clean leave, not a death) and closes

  // Returns once every rank of the world has called barrier().
  Result<void> barrier(Millis timeout);
  // Stores `value` under `key` (overwrites); visible to every rank.
  Result<void> set(std::string_view key, std::string_view value);
  // Waits up to `timeout` for `key` to be set, then returns its value.
  Result<std::string> get(std::string_view key, Millis timeout);
  // Every rank contributes `value`; returns all of them, indexed by rank.
  Result<std::vector<std::string>> allgather(std::string_view value, Millis timeout);
  // A clean leave: the server will not report this rank as dead.
  void close();

  int rank() const;
  int world_size() const;

  struct State;  // internal

private:
  explicit Client(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

} // namespace ddl::rendezvous
