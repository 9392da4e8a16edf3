// SPDX-License-Identifier: MIT
#pragma once

// The hang watchdog ([watchdog], issue 17): what counts as a rank's progress
// (an output line, one matching watchdog.progress, or a heartbeat through the
// rendezvous), when the gang has stalled or one rank straggles, and the
// report that names the stalled ranks, the last line each printed and the
// stack dumps they gave.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/job/job.hpp"
#include "src/launch/watchdog_suspects.hpp"
#include "src/render/launches.hpp"
#include "src/util/pattern.hpp"

namespace ddl {

using WatchClock = std::chrono::steady_clock;

// A progress pattern is matched against the first this many bytes of a line:
// RE2 takes time linear in them, so each line costs the output thread at
// most a few microseconds.
inline constexpr std::size_t k_progress_match_bytes = 1024;
// Evidence kept per rank once a dump was asked for.
inline constexpr std::size_t k_max_evidence_lines = 400;

// Each rank's last progress and last line. Fed from the backends' threads
// (lines) and the rendezvous (heartbeats); read by the supervisor.
//
// The ranks it watches are the gang's, or under --mpi pmix (watch_mpi_ranks)
// the MPI ranks: the gang's ranks are then hosts (one `ddl worker pmix-host`
// each) whose lines start "[R] " for the MPI rank R that wrote them, and
// whose stack dumps name each MPI rank ("ddl: MPI rank R (pid P) on HOST:").
// line(), bytes() and heartbeat() take the gang's rank; every other rank
// below is a watched one.
class ProgressBoard {
public:
  ProgressBoard(int world_size, const WatchdogSection& watchdog);

  // --mpi pmix: watch the MPI ranks, `host_ranks` of them on each gang rank
  // (host h holds the ranks after those of hosts 0..h-1). Empty: the gang's
  // ranks. Between attempts only.
  void watch_mpi_ranks(const std::vector<int>& host_ranks);
  // The gang's rank (a host under --mpi pmix) that runs watched rank `rank`.
  int gang_rank(int rank) const;
  // A new attempt: every rank's progress is "now", lines and evidence cleared.
  void begin_attempt();
  // A whole line gang rank `rank` printed (either stream): its last line,
  // evidence, and progress when it matches watchdog.progress (any line when
  // watchdog.progress is unset and MPI ranks are watched).
  void line(int rank, std::string_view text);
  // Output arrived (any bytes, a '\r' progress-bar update too): progress
  // when watchdog.progress is unset. Not with MPI ranks watched: bytes do
  // not say which rank wrote them (their lines do).
  void bytes(int rank);
  // A heartbeat from gang rank `rank` (the rendezvous' HEARTBEAT frame):
  // under --mpi pmix a worker's, for every MPI rank on its host.
  void heartbeat(int rank);
  // Every rank made progress now (the gang resumed after SIGCONT).
  void touch_all();
  // From now on, keep what each rank prints as evidence (the stack dumps).
  void start_evidence();

  int world_size() const { return static_cast<int>(ranks_.size()); }
  WatchClock::time_point last_progress(int rank) const;
  std::string last_line(int rank) const;
  std::vector<std::string> evidence(int rank) const;
  // When any rank last added evidence; nullopt when none has.
  std::optional<WatchClock::time_point> last_evidence() const;
  // The gang's ranks with evidence (any of their MPI ranks under --mpi pmix).
  std::vector<bool> gang_has_evidence() const;
  // The step number of the rank's last line that matched watchdog.progress
  // (the first number in the pattern's first group, or in the whole match);
  // nullopt when none had one.
  std::optional<long long> step(int rank) const;

private:
  struct Rank {
    std::atomic<WatchClock::rep> progress{0};
    std::atomic<long long> step{-1};
    mutable std::mutex mutex;
    std::string last_line;
    std::deque<std::string> evidence;
  };
  void progress(int rank);
  Rank* at(int rank);
  const Rank* at(int rank) const;
  // The watched rank of gang rank `rank`'s line, and its text without the tag.
  std::pair<int, std::string_view> route(int rank, std::string_view text);

  ProgressSource source_;
  std::optional<Pattern> pattern_;
  std::vector<Rank> ranks_;
  // --mpi pmix: the first MPI rank of each host, then the MPI world size;
  // empty when the gang's ranks are watched.
  std::vector<int> first_;
  std::mutex dump_mutex_;
  std::vector<int> dumping_;  // per host: the MPI rank whose dump its untagged lines are
  std::atomic<bool> collecting_{false};
  std::atomic<WatchClock::rep> evidence_at_{0};
};

// A stall or a straggler.
struct Hang {
  bool straggler = false;
  std::vector<int> ranks;  // the stalled ranks (all running ones for a stall)
  std::chrono::milliseconds silent{0};  // how long without progress (the longest)
};

// The hang, if any, at `now`: no running rank made progress for `stall`, or
// some running rank's progress lags the newest one's by `straggler` (only
// with two or more running ranks). `running` is indexed by rank.
std::optional<Hang> find_hang(const WatchdogSection& watchdog, const std::vector<WatchClock::time_point>& last,
                              const std::vector<bool>& running, WatchClock::time_point now);

// "ddl: watchdog: no rank made progress for 2s (watchdog.stall = 2s); asking ranks 0-3 for their
// stacks (SIGUSR1) for up to 30s, then ending the attempt (exit 5)".
std::string hang_announcement(const WatchdogSection& watchdog, const Hang& hang, std::string_view dump_how);

// How the ranks are asked for their stacks: "SIGUSR1", "gdb dump", "py-spy
// dump", "py-spy, gdb or Python's faulthandler".
std::string dump_how(const WatchdogSection& watchdog);

// The note for a rank the dump signal killed: "rank 1 on HOST: killed by the
// dump signal SIGUSR1 (no handler for it); ..." with the handler to add.
std::string dump_signal_death(int rank, std::string_view host, int dump_signal);

// The report: the hang, the suspects and the groups of ranks alike
// (watchdog_suspects), then per stalled rank its host, its last line and
// the evidence it printed since the dump was asked for.
// The stalled ranks compared: the lagging steps, then group_by_place of
// their innermost frames (or last lines).
std::vector<StallGroup> stall_groups(const Hang& hang, const ProgressBoard& board,
                                     const std::vector<RankLaunch>& launches);

std::string hang_report(const Hang& hang, const ProgressBoard& board,
                        const std::vector<RankLaunch>& launches, const std::vector<std::string>& notes);

} // namespace ddl
