// Communicator: a group of ranks that can exchange messages (a process group).
//
//   auto comm = tutti::Communicator::InitFromEnv();        // tuttirun / torchrun / mpirun / srun
//   comm.value()->Send(buf, bytes, /*peer=*/1);
//
// Every blocking call has a timeout (TUTTI_TIMEOUT, or per communicator / per call). A peer that
// dies fails every pending operation on every surviving rank with an error naming it.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/base/dtype.h"
#include "core/coll/call_digest.h"
#include "core/mem/mem_kind.h"
#include "core/launch/launch_env.h"
#include "core/p2p/engine.h"
#include "core/base/status.h"
#include "core/group.h"
#include "core/store/store.h"
#include "core/work.h"
#include "core/work_completer.h"

namespace tutti {

namespace exec {
class LocalEngine;
class DeviceRuntime;
}  // namespace exec

struct CommOptions {
  double timeout_s = -1;    // < 0: TUTTI_TIMEOUT
  std::string transport;    // "": TUTTI_TRANSPORT (auto, shm, tcp)
  std::string host_id;      // "": TUTTI_HOST_ID, else hostname + boot id + network namespace
  std::string secret;       // "": TUTTI_SECRET (checked in every TCP handshake)
  bool secret_set = false;  // true: use `secret` even if empty
  // Each unset one comes from its environment variable (README, "Environment variables"); set
  // here they win, so ranks that are threads of one process need not share a setenv.
  std::optional<double> heartbeat_timeout_s;  // TUTTI_HEARTBEAT_TIMEOUT
  std::optional<int64_t> socket_nsocks;       // TUTTI_SOCKET_NSOCKS
  std::optional<int64_t> socket_bufsize;      // TUTTI_SOCKET_BUFSIZE
  std::optional<int64_t> shm_fifo_bytes;      // TUTTI_SHM_FIFO_BYTES
  std::optional<bool> shm_cma;                // TUTTI_SHM_CMA (true: 1, false: 0; unset: the variable)
  std::optional<int64_t> eager_limit;         // TUTTI_EAGER_LIMIT
  std::optional<int64_t> spin_us;             // TUTTI_SPIN_US
  std::optional<int64_t> yield_us;            // TUTTI_YIELD_US
  std::optional<bool> move_waiters;           // TUTTI_MOVE_WAITERS
  std::optional<bool> lazy_connect;           // TUTTI_CONNECT=lazy
  std::optional<bool> strict_checks;          // TUTTI_STRICT_CHECKS
  // Where collectives' local copies and reductions run (core/exec/local_engine.h); null: a CPU
  // engine as TUTTI_LOCAL_ENGINE says. Sub-communicators made by Split share it.
  std::shared_ptr<exec::LocalEngine> local_engine;
  // The GPU runtime for collectives on device memory; null: the CUDA runtime where the program
  // was built with CUDA. Tests substitute one (core/exec/device_runtime.h).
  std::shared_ptr<exec::DeviceRuntime> device_runtime;
};

class BufferPool;
class DevicePath;
class LazyConnector;
class PlanCache;
struct CollPlan;
struct CollConfig;
class CollRegistry;
class HostStream;
struct StreamGate;
struct Registration;  // core/mem/registration_cache.h
class RegistrationCache;
class SlotChannel;
class FusedPath;
class SlotRun;
struct SlotCall;
struct SlotWaitEnv;

// Options of one collective call.
struct CollOptions {
  std::string algorithm;       // "": automatic (TUTTI_ALGO, then the cost model)
  double timeout_s = -1;       // < 0: the communicator's timeout
  double premul_scalar = 1.0;  // this rank's factor for RedOp::kPremulSum
  int nchannels = 0;           // parallel streams (0: TUTTI_NCHANNELS)
  // Stream-ordered call (NCCL's semantics, on a host stream): the blocking form enqueues the
  // collective on `stream` and returns at once (argument errors included are reported by
  // stream->Synchronize(), naming the call); it runs after what the stream already holds, and
  // later work on the stream runs after it. Not owned; must outlive the queued call. The
  // asynchronous (I...) forms do not take a stream.
  HostStream* stream = nullptr;
};

class Communicator {
 public:
  // Forms a communicator of `size` ranks that all use `store` (one communicator per store
  // namespace: wrap a shared store in a PrefixStore to make several).
  static Result<std::unique_ptr<Communicator>> Create(std::shared_ptr<Store> store, int rank, int size,
                                                      const CommOptions& opts = {});
  // Reads the launch environment (tuttirun, torchrun, mpirun, srun) and calls Init.
  static Result<std::unique_ptr<Communicator>> InitFromEnv(const CommOptions& opts = {});
  // Explicit options in code (rank, world_size, master_addr, master_port, secret): rank 0 hosts
  // the store at master_addr:master_port and every rank connects to it.
  static Result<std::unique_ptr<Communicator>> Init(const LaunchInfo& info, const CommOptions& opts = {});

  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  double timeout() const { return engine_->options().timeout_s; }
  // "shm", "tcp", "self" or "none": how this rank reaches `peer`.
  std::string TransportTo(int peer) const { return engine_->TransportName(peer); }

  // Point-to-point. Sends of up to kBufferedSendMax bytes complete once buffered (as MPI_Send's
  // eager sends), larger ones once the receiver has matched them; messages with the same
  // (peer, tag) are received in the order sent. timeout_s < 0: the communicator's timeout.
  Status Send(const void* buf, size_t bytes, int peer, int tag = 0, double timeout_s = -1);
  Status Recv(void* buf, size_t bytes, int peer, int tag = 0, double timeout_s = -1);
  Result<Work> ISend(const void* buf, size_t bytes, int peer, int tag = 0);
  // peer may be kAnySource: the first message with `tag` from any rank (MPI_ANY_SOURCE; receives
  // match in the order posted); Work::source() says who sent it.
  Result<Work> IRecv(void* buf, size_t bytes, int peer, int tag = 0);
  // A blocking receive from any rank; returns the sender.
  Result<int> RecvAny(void* buf, size_t bytes, int tag = 0, double timeout_s = -1);
  // Stream-ordered (ncclSend / ncclRecv on a host stream): enqueues and returns at once; the
  // operation runs after what `stream` already holds and later work on the stream waits for it;
  // argument errors and failures surface at stream.Synchronize(), naming the call. As with NCCL
  // outside a group, a send and its matching receive must not each wait, on the two ranks'
  // streams, behind the other's partner (order them alike on both sides, or use two streams).
  // The buffer must stay valid until the stream has run the call.
  Status Send(const void* buf, size_t bytes, int peer, int tag, HostStream& stream);
  Status Recv(void* buf, size_t bytes, int peer, int tag, HostStream& stream);

  // Collectives. Every rank calls the same collectives in the same order with the same count,
  // type, op and root (a mismatch is an error on the ranks involved, detected when their
  // messages meet). `count` is per rank: all_gather's recv and reduce_scatter's send hold
  // size() * count elements, as do scatter's send and gather's recv at the root and both
  // buffers of all_to_all. send == recv is an in-place call (for all_gather, send may also be
  // recv + rank * count; for reduce_scatter, recv may be send + rank * count).
  Status Broadcast(const void* send, void* recv, size_t count, DataType type, int root, const CollOptions& o = {});
  Status Reduce(const void* send, void* recv, size_t count, DataType type, RedOp op, int root,
                const CollOptions& o = {});
  Status Scatter(const void* send, void* recv, size_t count, DataType type, int root, const CollOptions& o = {});
  Status Gather(const void* send, void* recv, size_t count, DataType type, int root, const CollOptions& o = {});
  Status AllReduce(const void* send, void* recv, size_t count, DataType type, RedOp op, const CollOptions& o = {});
  Status AllGather(const void* send, void* recv, size_t count, DataType type, const CollOptions& o = {});
  Status ReduceScatter(const void* send, void* recv, size_t count, DataType type, RedOp op,
                       const CollOptions& o = {});
  Status AllToAll(const void* send, void* recv, size_t count, DataType type, const CollOptions& o = {});
  Status Barrier(const CollOptions& o = {});
  // Asynchronous forms: the Work completes when this rank's part is done.
  Result<Work> IBroadcast(const void* send, void* recv, size_t count, DataType type, int root, const CollOptions& o = {});
  Result<Work> IReduce(const void* send, void* recv, size_t count, DataType type, RedOp op, int root,
                       const CollOptions& o = {});
  Result<Work> IScatter(const void* send, void* recv, size_t count, DataType type, int root, const CollOptions& o = {});
  Result<Work> IGather(const void* send, void* recv, size_t count, DataType type, int root, const CollOptions& o = {});
  Result<Work> IAllReduce(const void* send, void* recv, size_t count, DataType type, RedOp op,
                          const CollOptions& o = {});
  Result<Work> IAllGather(const void* send, void* recv, size_t count, DataType type, const CollOptions& o = {});
  Result<Work> IReduceScatter(const void* send, void* recv, size_t count, DataType type, RedOp op,
                              const CollOptions& o = {});
  Result<Work> IAllToAll(const void* send, void* recv, size_t count, DataType type, const CollOptions& o = {});
  Result<Work> IBarrier(const CollOptions& o = {});

  // v-collectives (MPI's alltoallv, allgatherv, gatherv, scatterv; reduce_scatter with a count
  // per rank): every rank's block has its own count and displacement, in elements (empty displs:
  // blocks packed in rank order). Send and receive buffers must not overlap (no in-place form).
  // Ranks must agree on each block's count; a disagreement is kMismatch on the ranks involved.
  // Blocks of a root-only buffer (gather_v's recv, scatter_v's send) are read at the root only.
  struct Blocks {
    std::vector<uint64_t> counts;
    std::vector<uint64_t> displs;
  };
  Status AllToAllV(const void* send, const Blocks& send_blocks, void* recv, const Blocks& recv_blocks, DataType type,
                   const CollOptions& o = {});
  Status AllGatherV(const void* send, uint64_t count, void* recv, const Blocks& recv_blocks, DataType type,
                    const CollOptions& o = {});
  Status GatherV(const void* send, uint64_t count, void* recv, const Blocks& recv_blocks, DataType type, int root,
                 const CollOptions& o = {});
  Status ScatterV(const void* send, const Blocks& send_blocks, void* recv, uint64_t count, DataType type, int root,
                  const CollOptions& o = {});
  // send: counts[0] + ... + counts[n-1] elements in rank order; recv: counts[rank()] elements,
  // reduced over the ranks in rank order. Ops as for ReduceScatter (avg: the sum divided by the
  // number of ranks; premul_sum: each rank's input scaled by CollOptions::premul_scalar first).
  Status ReduceScatterV(const void* send, void* recv, const std::vector<uint64_t>& counts, DataType type, RedOp op,
                        const CollOptions& o = {});
  Result<Work> IAllToAllV(const void* send, const Blocks& send_blocks, void* recv, const Blocks& recv_blocks,
                          DataType type, const CollOptions& o = {});
  Result<Work> IAllGatherV(const void* send, uint64_t count, void* recv, const Blocks& recv_blocks, DataType type,
                           const CollOptions& o = {});
  Result<Work> IGatherV(const void* send, uint64_t count, void* recv, const Blocks& recv_blocks, DataType type,
                        int root, const CollOptions& o = {});
  Result<Work> IScatterV(const void* send, const Blocks& send_blocks, void* recv, uint64_t count, DataType type,
                         int root, const CollOptions& o = {});
  Result<Work> IReduceScatterV(const void* send, void* recv, const std::vector<uint64_t>& counts, DataType type,
                               RedOp op, const CollOptions& o = {});

  // Hands a call this communicator started to the calling thread's group (core/group.h), which
  // waits for it at GroupEnd with timeout_s (< 0: the communicator's); `what` names the call in
  // a timeout. The blocking calls do this themselves inside a group; a failure to start is
  // returned and kept for GroupEnd.
  Status AddToGroup(Result<Work> started, double timeout_s, const char* what);

  // Runs fn(the Work's status) once `work`, a call of this communicator, completes (the hook
  // futures and PyTorch's Work.get_future need): at once on this thread when it already has,
  // else on the communicator's completer thread (started at the first such call), one function
  // at a time, as soon as its Work completes, in whatever order Works complete. A Work still
  // pending a communicator timeout later gets a timeout failure; Abort() completes pending Works
  // with its error, Destroy() with "communicator destroyed". A function may issue calls, but
  // calls of a communicator must still come in the same order on every rank, so a program that
  // issues from a callback and from its own thread must order the two itself. A function may
  // Abort or Destroy the communicator but must not delete it (its thread is the one running fn).
  // Exceptions thrown by fn are logged and dropped. kInvalidUsage for an empty Work or a
  // destroyed communicator.
  Status OnComplete(const Work& work, std::function<void(const Status&)> fn);

  // Sub-communicators. Collective over this communicator: every rank calls it, in the same
  // order. Ranks with the same color form a group, ordered by (key, rank). color < 0 and ranks
  // outside `ranks` get a kNotMember error.
  Result<std::unique_ptr<Communicator>> Split(int color, int key);
  Result<std::unique_ptr<Communicator>> NewGroup(const std::vector<int>& ranks);

  // Registers [p, p+bytes) with this communicator, as ncclCommRegister: the memory's kind is
  // found once (host, pinned host, CUDA device or managed) and transports may prepare it for
  // one-sided access; calls on registered buffers reuse that. A range inside a registered one
  // shares its registration. Deregister before freeing the memory; a handle deregistered twice
  // is kInvalidArgument. Registrations end with the communicator. What a handle holds
  // (Registration) is in core/mem/registration_cache.h.
  using MemHandle = std::shared_ptr<const Registration>;
  Result<MemHandle> Register(const void* p, size_t bytes);
  Status Deregister(const MemHandle& handle);
  // What [p, p+bytes) is: from a registration covering it, else asked of the CUDA driver now
  // (host memory everywhere without one).
  MemInfo MemoryOf(const void* p, size_t bytes) const;

  // What the communicator holds for calls in flight. Everything but pooled_bytes (scratch kept
  // for reuse, bounded) is zero when no call is in flight: per-call state is released when the
  // call ends (tests and the soak benchmark check it).
  struct Stats {
    size_t pending_ops = 0;        // point-to-point operations posted and not complete
    size_t tracked_messages = 0;   // entries in the engine's per-peer tables
    size_t tag_queues = 0;         // per-tag queues of posted / unexpected messages
    size_t collectives_in_flight = 0;
    size_t pooled_bytes = 0;
    size_t cached_plans = 0;       // distinct collective calls planned (core/coll/plan_cache.h)
    size_t direct_slot_calls = 0;  // collectives whose blocks were read from the writers' buffers (SlotCall::direct)
  };
  Stats stats() const;

  // Fails everything pending or later with kAborted and drops connections. Always returns
  // promptly; safe from any thread.
  void Abort(const std::string& why = "");
  // Says goodbye to peers and releases everything. Later calls fail. Idempotent.
  void Destroy();

 private:
  Communicator() = default;
  Result<std::unique_ptr<Communicator>> SplitWithCheck(int color, int key, const std::string& check,
                                                       const std::string& what);
  Result<std::unique_ptr<Communicator>> SplitLocked(int color, int key, const std::string& check,
                                                    const std::string& what);
  // A collective call, in phases (core/coll/collectives.cc): CheckCall (arguments, which
  // buffers this rank provides and where they live), PlanFor (the cached plan), PrepareRun
  // (private copies, scaling, scratch, staging), then the executor.
  struct CollCall;
  struct CallShape;
  struct PreparedRun;
  Result<Work> StartCollective(const CollCall& call);
  Result<Work> StartChecked(const CollCall& call, const CallShape& shape);
  // A blocking collective (without a stream).
  Status RunCollective(const CollCall& call);
  // A v-collective (core/coll/vector_collectives.cc): runs `schedule` over the buffers.
  struct VCall;
  Result<Work> StartVector(const VCall& call);
  // Through the shared slots (core/coll/slot_collectives.cc).
  struct SlotPrep;
  bool TakesSlots(const CollCall& call, const CallShape& shape) const;
  SlotCall SlotCallFor(const CollCall& call, const CallShape& shape) const;
  bool SlotDirect(const CollCall& call, const CallShape& shape) const;
  Status PrepareSlotCall(const CollCall& call, const CallShape& shape, SlotPrep& p);
  Status ClaimSlotCall(SlotPrep* p);
  std::shared_ptr<SlotRun> EnqueueSlotRun(SlotPrep& p);
  SlotWaitEnv SlotEnv() const;
  Result<Work> StartSlotCollective(const CollCall& call, const CallShape& shape);
  Status RunSlotCollective(const CollCall& call, const CallShape& shape);
  Result<CallShape> CheckCall(const CollCall& call) const;
  Result<std::shared_ptr<const CollPlan>> PlanFor(const CollCall& call, const CallShape& shape);
  // `staged`: device buffers get page-locked host mirrors (the staged device path).
  Result<PreparedRun> PrepareRun(const CollCall& call, const CallShape& shape, const CollPlan& plan, uint64_t seq,
                                 bool staged = true);
  // On device memory through the fused kernels (core/coll/fused_run.cc): whether the call takes
  // that path (the same answer on every rank that calls with device memory), and the call, run
  // to its end before it returns.
  bool TakesFused(const CallShape& shape, const CollPlan& plan) const;
  Result<Work> StartFused(const CollCall& call, const CallShape& shape, const std::shared_ptr<const CollPlan>& plan);
  // Chooses the algorithm and builds the description, signature and schedule of a call.
  // `fused`: for the fused kernels, which pipeline every op through their FIFOs: one schedule
  // stream per channel (no pieces split into streams).
  Result<std::shared_ptr<const CollPlan>> MakePlan(const CollCall& call, int nchannels, bool fused, bool distinct);
  // Queues call(options without the stream) on o.stream (see CollOptions::stream).
  Status OnStream(const CollOptions& o, const std::string& what, std::function<Status(const CollOptions&)> call);
  // Queued stream work that has not run yet will find the communicator gone (waits for a
  // running one).
  void CloseStreamGate();
  // A point-to-point call's checks and its post to the engine: for ISend/IRecv, and for the
  // blocking Send/Recv, which wait on the op itself (no Work to allocate per call).
  Result<std::shared_ptr<Op>> PostSendOp(const void* buf, size_t bytes, int peer, int tag);
  Result<std::shared_ptr<Op>> PostRecvOp(void* buf, size_t bytes, int peer, int tag);
  // kInvalidArgument naming the call and buffer when [p, p+bytes) is memory the host path
  // cannot touch (CUDA device memory).
  Status CheckHostAccessible(const std::string& who, const char* which, const void* p, size_t bytes) const;
  // What CheckHostAccessible accepts, without building its message (for per-call checks).
  bool HostAccessible(const void* p, size_t bytes) const;

  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  std::shared_ptr<Store> store_;
  std::shared_ptr<void> keepalive_;  // e.g. the store server hosted by rank 0
  CommOptions opts_;
  std::shared_ptr<P2PEngine> engine_;
  std::shared_ptr<LazyConnector> connector_;  // lazy connection only
  std::shared_ptr<exec::LocalEngine> local_;
  std::shared_ptr<DevicePath> devices_;
  std::shared_ptr<PlanCache> plans_;
  int split_count_ = 0;
  std::atomic<uint64_t> direct_slot_calls_{0};  // Stats::direct_slot_calls (written under the issuing claim)
  std::atomic<uint64_t> coll_seq_{0};  // read unclaimed only to name a call in a misuse error
  CallTrail trail_;  // every collective call, in issue order (under the issue claim)
  std::shared_ptr<CollRegistry> colls_;
  std::shared_ptr<BufferPool> buffers_;
  std::shared_ptr<const CollConfig> coll_cfg_;
  std::shared_ptr<RegistrationCache> registrations_;
  std::shared_ptr<StreamGate> stream_gate_;  // lets queued stream work see that we are gone
  std::string transport_summary_;  // "shm" if every peer is reached by shm, else "tcp"
  // Single-host communicators: the shared slots small collectives go through
  // (core/coll/slot_channel.h), and the largest call (bytes) that takes them.
  std::shared_ptr<SlotChannel> slots_;
  uint64_t slot_max_ = 0;
  bool strict_checks_ = false;  // slot calls compare every rank's call every round (TUTTI_STRICT_CHECKS)
  uint64_t slot_copy_block_max_ = 0;  // SlotRules::copy_block_max
  bool slot_all_gather_stays_ = false;  // SlotRules::all_gather_stays
  // SlotRules::direct_min, direct_rooted_min and direct_broadcast_min, where every rank can read
  // the others' memory.
  uint64_t slot_direct_min_ = 0, slot_direct_rooted_min_ = 0, slot_direct_broadcast_min_ = 0;
  // Single-host communicators with a device runtime that has fused kernels (TUTTI_FUSED).
  std::shared_ptr<FusedPath> fused_;
  std::atomic<bool> destroyed_{false};
  std::mutex completer_mu_;
  std::shared_ptr<WorkCompleter> completer_;  // made by the first OnComplete

  friend class CommBuilder;
};

}  // namespace tutti
