// libnccl.so.2, communicators: version, unique ids, init (rank, all, config, scalable), split,
// finalize / destroy / abort, queries, errors, registration, memory.
#include <cstdlib>
#include <cstring>
#include <thread>

#include "core/mem/mem_kind.h"
#include "core/store/tcp_store_client.h"
#include "tools/nccl/state.h"
#include "tools/nccl/unique_id.h"

using namespace tutti;
using namespace tutti::nccl;

#define NCCL_API extern "C" __attribute__((visibility("default")))

namespace {

std::string R(int rank) { return "rank " + std::to_string(rank); }

// Forms the communicator of `rank` through the store the id names.
Status InitFromId(ncclComm_t* out, int nranks, const IdContents& id, int rank) {
  TUTTI_ASSIGN_OR_RETURN(std::unique_ptr<TcpStoreClient> client,
                         TcpStoreClient::Connect(id.host, id.port, id.secret, 300));
  std::shared_ptr<Store> store(std::move(client));
  CommOptions opts;
  opts.secret = id.secret;
  opts.secret_set = true;
  auto made = Communicator::Create(store, rank, nranks, opts);
  if (!made.ok()) return made.status();
  auto c = std::make_unique<ncclComm>();
  c->comm = std::move(made).value();
  c->store = std::move(store);
  c->device = 0;
  Track(c.get());
  *out = c.release();
  return OkStatus();
}

Status CheckConfig(const ncclConfigAbi* config) {
  if (config == nullptr) return OkStatus();
  if (config->magic != kConfigMagic || config->size < offsetof(ncclConfigAbi, blocking) + sizeof(int))
    return InvalidArgument("the config was not initialized with NCCL_CONFIG_INITIALIZER");
  return OkStatus();
}

Status InitRank(const char* fn, ncclComm_t* out, int nranks, const ncclUniqueIdAbi& id, int rank,
                const ncclConfigAbi* config) {
  if (out == nullptr) return InvalidArgument("null comm pointer");
  if (nranks < 1 || rank < 0 || rank >= nranks)
    return InvalidArgument(R(rank) + " of " + std::to_string(nranks) + " ranks is out of range");
  TUTTI_RETURN_IF_ERROR(CheckConfig(config));
  TUTTI_ASSIGN_OR_RETURN(IdContents contents, ReadUniqueId(id));
  return RunOrQueueInit([=] { return InitFromId(out, nranks, contents, rank).WithContext(std::string(fn) + ", " + R(rank)); });
}

void Release(ncclComm* c, bool abort) {
  Untrack(c);
  if (abort)
    c->comm->Abort("ncclCommAbort");
  else
    c->comm->Destroy();
  delete c;
}

}  // namespace

NCCL_API int ncclGetVersion(int* version) {
  return Guard(__func__, [&] {
    if (version == nullptr) return InvalidArgument("null version pointer");
    *version = kVersionCode;
    return OkStatus();
  });
}

NCCL_API int ncclGetUniqueId(ncclUniqueIdAbi* id) {
  return Guard(__func__, [&] {
    if (id == nullptr) return InvalidArgument("null id pointer");
    TUTTI_ASSIGN_OR_RETURN(*id, MakeUniqueId());
    return OkStatus();
  });
}

NCCL_API int ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueIdAbi id, int rank) {
  return Guard(__func__, [&] { return InitRank(__func__, comm, nranks, id, rank, nullptr); });
}

NCCL_API int ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueIdAbi id, int rank, ncclConfigAbi* config) {
  return Guard(__func__, [&] { return InitRank(__func__, comm, nranks, id, rank, config); });
}

NCCL_API int ncclCommInitRankScalable(ncclComm_t* comm, int nranks, int rank, int nids, ncclUniqueIdAbi* ids,
                                      ncclConfigAbi* config) {
  return Guard(__func__, [&] {
    if (nids < 1 || ids == nullptr) return InvalidArgument("no unique ids");
    // Every id names a store the ranks could meet at; the first is enough for tutti.
    return InitRank(__func__, comm, nranks, ids[0], rank, config);
  });
}

NCCL_API int ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  return Guard(__func__, [&] {
    if (comms == nullptr || ndev < 1) return InvalidArgument("needs an array for ndev >= 1 communicators");
    TUTTI_ASSIGN_OR_RETURN(ncclUniqueIdAbi id, MakeUniqueId());
    TUTTI_ASSIGN_OR_RETURN(IdContents contents, ReadUniqueId(id));
    std::vector<Status> results(ndev);
    std::vector<std::thread> threads;
    for (int r = 0; r < ndev; ++r)
      threads.emplace_back([&, r] { results[r] = InitFromId(&comms[r], ndev, contents, r); });
    for (auto& t : threads) t.join();
    for (int r = 0; r < ndev; ++r)
      if (!results[r].ok()) {
        for (int k = 0; k < ndev; ++k)
          if (results[k].ok()) Release(comms[k], true);
        return results[r].WithContext(R(r));
      }
    for (int r = 0; r < ndev; ++r) comms[r]->device = devlist ? devlist[r] : r;
    return OkStatus();
  });
}

NCCL_API int ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfigAbi* config) {
  return Guard(__func__, [&] {
    TUTTI_ASSIGN_OR_RETURN(ncclComm * c, Lookup(comm, "ncclCommSplit"));
    if (newcomm == nullptr) return InvalidArgument("null newcomm pointer");
    TUTTI_RETURN_IF_ERROR(CheckConfig(config));
    return RunOrQueueInit([c, color, key, newcomm]() -> Status {
      auto sub = c->comm->Split(color == kSplitNoColor ? -1 : color, key);
      if (!sub.ok()) {
        if (sub.status().code() == Code::kNotMember) {
          *newcomm = nullptr;
          return OkStatus();
        }
        return sub.status();
      }
      auto n = std::make_unique<ncclComm>();
      n->comm = std::move(sub).value();
      n->store = c->store;
      n->device = c->device;
      Track(n.get());
      *newcomm = n.release();
      return OkStatus();
    });
  });
}

NCCL_API int ncclCommShrink(ncclComm_t comm, int* exclude, int nexclude, ncclComm_t* newcomm, ncclConfigAbi* config,
                            int flags) {
  return Guard(__func__, [&] {
    TUTTI_RETURN_IF_ERROR(Lookup(comm, "ncclCommShrink").status());
    return InvalidUsage("not supported by tutti yet: the excluded ranks would have to take part (use "
                        "ncclCommSplit with NCCL_SPLIT_NOCOLOR on them while they are alive)");
  });
}

NCCL_API int ncclCommRevoke(ncclComm_t comm, int flags) {
  return Guard(__func__, [&] {
    TUTTI_ASSIGN_OR_RETURN(ncclComm * c, Lookup(comm, "ncclCommRevoke"));
    c->comm->Abort("ncclCommRevoke");
    return OkStatus();
  });
}

NCCL_API int ncclCommFinalize(ncclComm_t comm) {
  return Guard(__func__, [&] {
    // Calls on host memory have completed when they returned (or at ncclGroupEnd).
    return Lookup(comm, "ncclCommFinalize").status();
  });
}

NCCL_API int ncclCommDestroy(ncclComm_t comm) {
  return Guard(__func__, [&] {
    TUTTI_ASSIGN_OR_RETURN(ncclComm * c, Lookup(comm, "ncclCommDestroy"));
    Release(c, false);
    return OkStatus();
  });
}

NCCL_API int ncclCommAbort(ncclComm_t comm) {
  return Guard(__func__, [&] {
    TUTTI_ASSIGN_OR_RETURN(ncclComm * c, Lookup(comm, "ncclCommAbort"));
    Release(c, true);
    return OkStatus();
  });
}

NCCL_API const char* ncclGetErrorString(int result) {
  switch (result) {
    case kSuccess: return "no error";
    case kUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case kSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case kInternalError: return "internal error - please report this issue to the NCCL developers";
    case kInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case kInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case kRemoteError: return "remote process exited or there was a network error";
    case kInProgress: return "NCCL operation in progress";
    default: return "unknown result code";
  }
}

NCCL_API const char* ncclGetLastError(ncclComm_t) { return LastError().c_str(); }

NCCL_API int ncclCommGetAsyncError(ncclComm_t comm, int* async_error) {
  return Guard(__func__, [&] {
    TUTTI_ASSIGN_OR_RETURN(ncclComm * c, Lookup(comm, "ncclCommGetAsyncError"));
    if (async_error == nullptr) return InvalidArgument("null pointer");
    std::lock_guard<std::mutex> lock(c->mu);
    *async_error = ToResult(c->async_error);
    if (!c->async_error.ok()) SetLastError(c->async_error.ToString());
    return OkStatus();
  });
}

NCCL_API int ncclCommCount(const ncclComm_t comm, int* count) {
  return Guard(__func__, [&] {
    TUTTI_ASSIGN_OR_RETURN(ncclComm * c, Lookup(comm, "ncclCommCount"));
    if (count == nullptr) return InvalidArgument("null pointer");
    *count = c->comm->size();
    return OkStatus();
  });
}

NCCL_API int ncclCommCuDevice(const ncclComm_t comm, int* device) {
  return Guard(__func__, [&] {
    TUTTI_ASSIGN_OR_RETURN(ncclComm * c, Lookup(comm, "ncclCommCuDevice"));
    if (device == nullptr) return InvalidArgument("null pointer");
    *device = c->device;
    return OkStatus();
  });
}

NCCL_API int ncclCommUserRank(const ncclComm_t comm, int* rank) {
  return Guard(__func__, [&] {
    TUTTI_ASSIGN_OR_RETURN(ncclComm * c, Lookup(comm, "ncclCommUserRank"));
    if (rank == nullptr) return InvalidArgument("null pointer");
    *rank = c->comm->rank();
    return OkStatus();
  });
}

namespace {
struct RegHandle {
  Communicator::MemHandle handle;
};
}  // namespace

NCCL_API int ncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle) {
  return Guard(__func__, [&] {
    TUTTI_ASSIGN_OR_RETURN(ncclComm * c, Lookup(comm, "ncclCommRegister"));
    if (handle == nullptr) return InvalidArgument("null handle pointer");
    TUTTI_ASSIGN_OR_RETURN(Communicator::MemHandle h, c->comm->Register(buff, size));
    *handle = new RegHandle{std::move(h)};
    return OkStatus();
  });
}

NCCL_API int ncclCommDeregister(const ncclComm_t comm, void* handle) {
  return Guard(__func__, [&] {
    TUTTI_ASSIGN_OR_RETURN(ncclComm * c, Lookup(comm, "ncclCommDeregister"));
    if (handle == nullptr) return InvalidArgument("null handle");
    auto* h = static_cast<RegHandle*>(handle);
    Status st = c->comm->Deregister(h->handle);
    if (st.ok()) delete h;
    return st;
  });
}

NCCL_API int ncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindowHandle* win, int flags) {
  return Guard(__func__, [&] {
    TUTTI_RETURN_IF_ERROR(Lookup(comm, "ncclCommWindowRegister").status());
    return InvalidUsage("symmetric memory windows are not supported by tutti yet (ncclCommRegister is)");
  });
}

NCCL_API int ncclCommWindowDeregister(ncclComm_t comm, ncclWindowHandle win) {
  return Guard(__func__, [&] {
    TUTTI_RETURN_IF_ERROR(Lookup(comm, "ncclCommWindowDeregister").status());
    return InvalidUsage("symmetric memory windows are not supported by tutti yet");
  });
}

// The device-side API (nccl_device.h): kernels that talk to peers themselves.
NCCL_API int ncclDevCommCreate(ncclComm_t comm, const void* reqs, void* out) {
  return Guard(__func__, [&] { return InvalidUsage("the device communication API is not supported by tutti yet"); });
}

NCCL_API int ncclDevCommDestroy(ncclComm_t comm, const void* devcomm) {
  return Guard(__func__, [&] { return InvalidUsage("the device communication API is not supported by tutti yet"); });
}

NCCL_API int ncclMemAlloc(void** ptr, size_t size) {
  return Guard(__func__, [&] {
    if (ptr == nullptr) return InvalidArgument("null pointer");
    if (SystemMemoryProbe().knows_devices())
      return InvalidUsage("device memory allocation is not supported by tutti yet (use cudaMalloc)");
    // No CUDA device here: host memory, page-aligned (what the host path works on).
    void* p = nullptr;
    if (posix_memalign(&p, 4096, size == 0 ? 1 : size) != 0) return SystemError("out of memory for " + std::to_string(size) + " bytes");
    *ptr = p;
    return OkStatus();
  });
}

NCCL_API int ncclMemFree(void* ptr) {
  return Guard(__func__, [&] {
    std::free(ptr);
    return OkStatus();
  });
}
