// SPDX-License-Identifier: MIT
// The PMIx server itself (see server.hpp for the design): the library's
// server API, the namespace registration and the host callbacks.
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include <fmt/core.h>

#include "src/pmix/info_list_pmix.hpp"
#include "src/pmix/keys.hpp"
#include "src/pmix/library_pmix.hpp"
#include "src/pmix/server.hpp"
#include "src/pmix/session_dir.hpp"

namespace ddl::pmix {

namespace {

// Open MPI 4.1 direct launch without a resource manager it knows (server.hpp).
const std::vector<std::string> k_open_mpi_selection = {"OMPI_MCA_schizo=ompi", "OMPI_MCA_ess=pmi"};

// Waits for one pmix_op_cbfunc_t.
struct OpWait {
  std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false;
  pmix_status_t status = PMIX_SUCCESS;

  static void callback(pmix_status_t status, void* cbdata) {
    auto* self = static_cast<OpWait*>(cbdata);
    std::lock_guard lock(self->mutex);
    self->status = status;
    self->done = true;
    self->done_cv.notify_all();
  }
  // The outcome of a call that returned `started`: its callback's status
  // once it comes, unless the call finished (or failed) at once.
  pmix_status_t wait(pmix_status_t started) {
    if (started == PMIX_OPERATION_SUCCEEDED) {
      return PMIX_SUCCESS;
    }
    if (started != PMIX_SUCCESS) {
      return started;
    }
    std::unique_lock lock(mutex);
    done_cv.wait(lock, [this] { return done; });
    return status;
  }
};

// Whether fence results may still reach the library: closed before
// PMIx_server_finalize, so that a late exchange never calls into it.
struct FenceGate {
  std::mutex mutex;
  bool open = true;
};

} // namespace

struct Server::State {
  JobLayout layout;
  ServerEvents events;
  SessionDir dir;
  std::shared_ptr<FenceGate> gate = std::make_shared<FenceGate>();
  bool initialized = false;
};

namespace {

std::atomic<Server::State*> g_active{nullptr};

int job_rank(const pmix_proc_t* proc) { return static_cast<int>(proc->rank); }

// Releases the client at once. OpenPMIx 4 passes no cbfunc for some calls
// and wants OPERATION_SUCCEEDED; 5.0.8 and later pass one and want it called.
pmix_status_t release_client(pmix_op_cbfunc_t cbfunc, void* cbdata) {
  if (cbfunc == nullptr) {
    return PMIX_OPERATION_SUCCEEDED;
  }
  cbfunc(PMIX_SUCCESS, cbdata);
  return PMIX_SUCCESS;
}

pmix_status_t on_connected(const pmix_proc_t* proc, void* /*server_object*/,
                           pmix_op_cbfunc_t cbfunc, void* cbdata) {
  if (auto* state = g_active.load(); state != nullptr && state->events.connected) {
    state->events.connected(job_rank(proc));
  }
  return release_client(cbfunc, cbdata);
}

pmix_status_t on_finalized(const pmix_proc_t* proc, void* /*server_object*/,
                           pmix_op_cbfunc_t cbfunc, void* cbdata) {
  if (auto* state = g_active.load(); state != nullptr && state->events.finalized) {
    state->events.finalized(job_rank(proc));
  }
  return release_client(cbfunc, cbdata);
}

pmix_status_t on_abort(const pmix_proc_t* proc, void* /*server_object*/, int status,
                       const char msg[], pmix_proc_t* /*procs*/, size_t /*nprocs*/,
                       pmix_op_cbfunc_t cbfunc, void* cbdata) {
  if (auto* state = g_active.load(); state != nullptr && state->events.aborted) {
    state->events.aborted(job_rank(proc), status, msg != nullptr ? msg : "");
  }
  return release_client(cbfunc, cbdata);
}

// Whether `procs` name the whole namespace: its wildcard, or every rank.
bool whole_namespace(const Server::State& state, const pmix_proc_t procs[], size_t nprocs) {
  for (size_t i = 0; i < nprocs; ++i) {
    if (state.layout.nspace != procs[i].nspace) {
      return false;
    }
    if (procs[i].rank == PMIX_RANK_WILDCARD) {
      return true;
    }
  }
  return nprocs == static_cast<size_t>(state.layout.world_size());
}

void release_result(void* data) { delete static_cast<std::string*>(data); }

// Hands every host's data to PMIx, unless the server is gone.
FenceDone fence_reply(std::shared_ptr<FenceGate> gate, pmix_modex_cbfunc_t cbfunc, void* cbdata) {
  return [gate = std::move(gate), cbfunc, cbdata](Result<std::string> all) {
    std::lock_guard lock(gate->mutex);
    if (!gate->open) {
      return;
    }
    if (!all) {
      cbfunc(PMIX_ERROR, nullptr, 0, cbdata, nullptr, nullptr);
      return;
    }
    auto* data = new std::string(std::move(*all));
    cbfunc(PMIX_SUCCESS, data->data(), data->size(), cbdata, release_result, data);
  };
}

pmix_status_t on_fence(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t* /*info*/,
                       size_t /*ninfo*/, char* data, size_t ndata, pmix_modex_cbfunc_t cbfunc,
                       void* cbdata) {
  auto* state = g_active.load();
  if (state == nullptr || !state->events.fence || !whole_namespace(*state, procs, nprocs)) {
    return PMIX_ERR_NOT_SUPPORTED;
  }
  std::string contribution = data != nullptr ? std::string(data, ndata) : std::string();
  state->events.fence(std::move(contribution), fence_reply(state->gate, cbfunc, cbdata));
  return PMIX_SUCCESS;
}

// Room for a newer library's longer module struct (it copies the whole of
// its own version's struct): what ddl leaves unset stays NULL.
union ModuleStorage {
  pmix_server_module_t module;
  unsigned char room[4 * sizeof(pmix_server_module_t)];
};

pmix_server_module_t* server_module() {
  static ModuleStorage storage{};
  storage.module.client_connected = on_connected;
  storage.module.client_finalized = on_finalized;
  storage.module.abort = on_abort;
  storage.module.fence_nb = on_fence;
  return &storage.module;
}

Result<void> init_library(const Server::State& state) {
  const auto& api = pmix_api();
  InfoList info;
  info.add_string(PMIX_SERVER_TMPDIR, state.dir.path());
  info.add_string(PMIX_SYSTEM_TMPDIR, state.dir.path());
  info.add_bool(PMIX_SERVER_TOOL_SUPPORT, false);
  info.add_bool(PMIX_SERVER_SYSTEM_SUPPORT, false);
  info.add_string(PMIX_HOSTNAME, state.layout.hosts[static_cast<size_t>(state.layout.this_host)].name);
  auto array = info.take();
  pmix_status_t status = api.server_init(server_module(), static_cast<pmix_info_t*>(array.array),
                                         array.size);
  api.data_array_destruct(&array);
  if (status != PMIX_SUCCESS) {
    return fail(ExitCode::launch, "PMIx_server_init failed: " + status_text(status));
  }
  return {};
}

Result<void> register_namespace(const Server::State& state) {
  const auto& api = pmix_api();
  SessionDirs dirs{state.dir.path(), state.dir.nsdir()};
  auto keys = namespace_keys(state.layout, dirs);
  auto array = namespace_info(keys);
  if (!array) {
    return fail(array.error());
  }
  pmix_nspace_t nspace{};
  std::strncpy(nspace, state.layout.nspace.c_str(), PMIX_MAX_NSLEN);
  OpWait wait;
  pmix_status_t status = wait.wait(
      api.register_nspace(nspace, state.layout.local_ranks(), static_cast<pmix_info_t*>(array->array),
                          array->size, OpWait::callback, &wait));
  api.data_array_destruct(&*array);
  if (status != PMIX_SUCCESS) {
    return fail(ExitCode::launch, fmt::format("PMIx_server_register_nspace({}) failed: {}",
                                              state.layout.nspace, status_text(status)));
  }
  return {};
}

pmix_proc_t proc_of(const JobLayout& layout, int rank) {
  pmix_proc_t proc{};
  std::strncpy(proc.nspace, layout.nspace.c_str(), PMIX_MAX_NSLEN);
  proc.rank = static_cast<pmix_rank_t>(rank);
  return proc;
}

Result<void> register_clients(const Server::State& state) {
  const auto& layout = state.layout;
  for (int rank = layout.first_local_rank(); rank < layout.first_local_rank() + layout.local_ranks();
       ++rank) {
    pmix_proc_t proc = proc_of(layout, rank);
    OpWait wait;
    pmix_status_t status = wait.wait(pmix_api().register_client(
        &proc, ::getuid(), ::getgid(), nullptr, OpWait::callback, &wait));
    if (status != PMIX_SUCCESS) {
      return fail(ExitCode::launch, fmt::format("PMIx_server_register_client(rank {}) failed: {}",
                                                rank, status_text(status)));
    }
  }
  return {};
}

} // namespace

bool server_available(std::string* why) {
  const auto& api = pmix_api();
  if (why != nullptr) {
    *why = api.error;
  }
  return api.error.empty();
}

Server::Server(std::unique_ptr<State> state) : state_(std::move(state)) {}

Result<std::unique_ptr<Server>> Server::start(const JobLayout& layout, ServerEvents events) {
  if (auto checked = check_layout(layout); !checked) {
    return fail(checked.error());
  }
  if (std::string why; !server_available(&why)) {
    return fail(ExitCode::usage, "cannot host a PMIx server: " + why);
  }
  auto dir = SessionDir::create(layout.hosts[static_cast<size_t>(layout.this_host)].name);
  if (!dir) {
    return fail(dir.error());
  }
  auto state = std::make_unique<State>();
  state->layout = layout;
  state->events = std::move(events);
  state->dir = std::move(*dir);
  State* expected = nullptr;
  if (!g_active.compare_exchange_strong(expected, state.get())) {
    return fail(ExitCode::launch, "a PMIx server already runs in this process");
  }
  std::unique_ptr<Server> server(new Server(std::move(state)));
  if (auto ok = init_library(*server->state_); !ok) {
    return fail(ok.error());
  }
  server->state_->initialized = true;
  if (auto ok = register_namespace(*server->state_); !ok) {
    return fail(ok.error());
  }
  if (auto ok = register_clients(*server->state_); !ok) {
    return fail(ok.error());
  }
  return server;
}

Server::~Server() {
  {
    std::lock_guard lock(state_->gate->mutex);
    state_->gate->open = false;
  }
  if (state_->initialized) {
    pmix_api().server_finalize();
  }
  g_active.store(nullptr);
}

Result<std::vector<std::string>> Server::rank_env(int rank) const {
  pmix_proc_t proc = proc_of(state_->layout, rank);
  char** env = nullptr;
  pmix_status_t status = pmix_api().setup_fork(&proc, &env);
  std::vector<std::string> entries;
  for (char** entry = env; entry != nullptr && *entry != nullptr; ++entry) {
    entries.emplace_back(*entry);
    std::free(*entry);
  }
  std::free(env);
  if (status != PMIX_SUCCESS) {
    return fail(ExitCode::launch, fmt::format("PMIx_server_setup_fork(rank {}) failed: {}", rank,
                                              status_text(status)));
  }
  entries.insert(entries.end(), k_open_mpi_selection.begin(), k_open_mpi_selection.end());
  entries.push_back("OMPI_MCA_btl_vader_backing_directory=" + state_->dir.shm());
  return entries;
}

const std::string& Server::directory() const { return state_->dir.path(); }

std::string Server::library_version() const {
  const char* version = pmix_api().get_version();
  return version != nullptr ? version : "";
}

} // namespace ddl::pmix
