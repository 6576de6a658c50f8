// One kernel per call; block b runs task b (a rank's stream) with prims::StreamExec until its
// program ends, it fails, or another block failed (the abort flag). Timeouts use the global
// timer (nanoseconds, the same on every SM).
#include "kernels/cuda/prims_kernel.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "kernels/cuda/device.h"
#include "kernels/cuda/world_kernel.h"
#include "kernels/functors.h"
#include "kernels/prims/report.h"
#include "kernels/prims/stream_exec.h"

namespace tutti::cuda {

using detail::BlockTask;
using detail::CudaError;
using detail::KernelFn;
using detail::PickKernel;

namespace {

__device__ __forceinline__ uint64_t GlobalNs() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

template <class S, class Op>
__global__ void __launch_bounds__(kMaxBlockThreads)
    WorldKernel(const BlockTask* tasks, int* abort_flag, uint64_t timeout_ns, volatile unsigned long long* progress) {
  const BlockTask& t = tasks[blockIdx.x];
  const prims::Team team;
  prims::StreamExec<S, Op> exec(t.prog, t.view, t.stream, t.state);
  uint64_t since = GlobalNs();  // meaningful in the leader only
  uint32_t idle = 0;
  unsigned long long moves = 0;
  for (;;) {
    const int r = exec.Poll(team);
    if (r == prims::kPollDone) return;
    if (r == prims::kPollError) {
      if (team.leader()) atomicExch(abort_flag, 1);
      return;
    }
    if (r == prims::kPollMoved) {
      idle = 0;
      // Now and then, in host memory: the host's watchdog sees a long run is alive.
      if (team.leader() && (++moves & 255) == 0) progress[blockIdx.x] = moves;
      if (team.leader()) since = GlobalNs();
      continue;
    }
    if ((++idle & 63) != 0) continue;
    int flag = 0;
    bool late = false;
    if (team.leader()) {
      flag = *reinterpret_cast<volatile int*>(abort_flag);
      late = GlobalNs() - since > timeout_ns;
    }
    if (team.Any(flag != 0)) {
      // (The leader's reading counts: only it writes the state.)
      exec.Fail(team, flag == detail::kCancelFlag ? prims::kErrCancelled : prims::kErrAborted);
      return;
    }
    if (team.Any(late)) {
      exec.Fail(team, prims::kErrTimeout);
      if (team.leader()) atomicExch(abort_flag, 1);
      return;
    }
  }
}

// The first connection (lowest index) left with pieces sent but not received, into *first.
__global__ void FindUndrained(const uint8_t* mem, size_t stride, size_t n, unsigned long long* first) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const auto* c = reinterpret_cast<const prims::ConnCtl*>(mem + i * stride);
    if (c->tail != c->head) atomicMin(first, static_cast<unsigned long long>(i));
  }
}

__global__ void InitCounters(uint8_t* mem, size_t stride, size_t n, uint64_t base) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    auto* c = reinterpret_cast<prims::ConnCtl*>(mem + i * stride);
    c->tail = base;
    c->head = base;
  }
}


// Device memory released with the world unless kept (a kernel that never ended still uses it).
class DeviceArena {
 public:
  ~DeviceArena() {
    if (!leak_) {
      for (void* p : ptrs_) cudaFree(p);
    }
  }
  Result<uint8_t*> Alloc(size_t bytes) {
    void* p = nullptr;
    if (cudaError_t e = cudaMalloc(&p, std::max<size_t>(bytes, 64)); e != cudaSuccess) return CudaError("cudaMalloc", e);
    ptrs_.push_back(p);
    return static_cast<uint8_t*>(p);
  }
  void Leak() { leak_ = true; }

 private:
  std::vector<void*> ptrs_;
  bool leak_ = false;
};

size_t Align(size_t x) { return (x + 63) / 64 * 64; }


// Bytes one run moves through device memory: every source read (a slot for received data),
// every destination and sent slot written; LL pieces move twice their data.
uint64_t Traffic(const std::vector<algo::PrimProgram>& programs, size_t elem, const prims::FifoGeom& g) {
  uint64_t total = 0;
  const uint64_t wire = g.proto == prims::Proto::kLL ? 2 : 1;
  for (const auto& p : programs) {
    for (const algo::PrimOp& op : p.ops) {
      const uint64_t bytes = op.count * elem;
      for (int i = 0; i < op.nsrcs; ++i) total += bytes * (op.srcs[i].buf == algo::kPrimRecv ? wire : 1);
      total += bytes * op.ndsts + (op.send_peer >= 0 ? bytes * wire : 0);
    }
  }
  return total;
}

}  // namespace

namespace detail {

Status CudaError(const char* what, cudaError_t e) {
  return InternalError(std::string(what) + ": " + cudaGetErrorString(e));
}

Status PickKernel(DataType type, RedOp op, KernelFn* kernel, size_t* elem) {
  const Status bad_type = InvalidArgument(std::string("DeviceWorld: ") + RedOpName(op) + " on " + DataTypeName(type));
  return kernels::DispatchType(
      type,
      [&](auto tag) -> Status {
        using S = typename decltype(tag)::type;
        *elem = sizeof(S);
        return kernels::DispatchOp<kernels::Accum<S>>(
            op,
            [&](auto optag) -> Status {
              *kernel = WorldKernel<S, typename decltype(optag)::type>;
              return OkStatus();
            },
            [&] { return bad_type; });
      },
      [&] { return bad_type; });
}

}  // namespace detail

struct DeviceWorld::Impl {
  DeviceArena arena;
  std::vector<algo::PrimProgram> programs;
  std::vector<std::pair<int, uint32_t>> owner;  // task -> (rank, stream)
  KernelFn kernel = nullptr;
  size_t elem = 0;
  DeviceWorldOptions options;
  size_t ntasks = 0;
  uint8_t* states = nullptr;
  const BlockTask* tasks = nullptr;
  int* abort_flag = nullptr;
  uint8_t* conns = nullptr;  // nconns connections, `stride` bytes apart
  size_t nconns = 0, stride = 0;
  int nranks = 0;
  unsigned long long* undrained = nullptr;      // device: FindUndrained's answer
  volatile unsigned long long* progress = nullptr;  // mapped host memory, one word per block
  cudaStream_t stream = nullptr;
  cudaEvent_t done = nullptr;
  bool launched = false;
  std::string broken;  // why a run failed: the connections' state is then unknown
};


DeviceWorld::DeviceWorld(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

DeviceWorld::~DeviceWorld() {
  if (impl_ && impl_->done) cudaEventDestroy(impl_->done);
  if (impl_ && impl_->progress) cudaFreeHost(const_cast<unsigned long long*>(impl_->progress));
}

// What every world needs besides its image: the progress words the host watches, a check that
// every block fits on the device at once, the completion event.
Status FinishSetup(DeviceWorld::Impl* impl, const DeviceWorldOptions& o) {
  void* progress = nullptr;
  if (cudaError_t e = cudaHostAlloc(&progress, std::max<size_t>(impl->ntasks, 1) * sizeof(unsigned long long),
                                    cudaHostAllocMapped);
      e != cudaSuccess) {
    return CudaError("cudaHostAlloc of the progress words", e);
  }
  impl->progress = static_cast<volatile unsigned long long*>(progress);

  // Every block resident at once, or none launched.
  int device = 0, sms = 0, per_sm = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, impl->kernel, o.threads, 0);
      e != cudaSuccess) {
    return CudaError("occupancy query", e);
  }
  if (static_cast<size_t>(per_sm) * sms < impl->ntasks) {
    return UnavailableError("the fused kernel needs " + std::to_string(impl->ntasks) + " blocks of " +
                            std::to_string(o.threads) + " threads resident at once; the device holds " +
                            std::to_string(per_sm * sms));
  }
  if (cudaError_t e = cudaEventCreateWithFlags(&impl->done, cudaEventDisableTiming); e != cudaSuccess) {
    return CudaError("cudaEventCreate", e);
  }
  return OkStatus();
}

Result<std::unique_ptr<DeviceWorld>> DeviceWorld::Create(DataType type, RedOp op,
                                                         const std::vector<algo::PrimProgram>& programs,
                                                         const std::vector<DeviceRankBuffers>& buffers,
                                                         const DeviceWorldOptions& o) {
  if (Status st = prims::CheckWorld(programs, buffers.size(), o.geom); !st.ok()) return st.WithContext("DeviceWorld");
  if (DataTypeSize(type) == 0) return InvalidArgument("DeviceWorld: unknown data type");
  std::vector<std::array<uint64_t, 3>> sizes;
  for (const DeviceRankBuffers& b : buffers) {
    const bool known = b.input_bytes || b.output_bytes || b.scratch_bytes;
    sizes.push_back({known ? b.input_bytes : UINT64_MAX, known ? b.output_bytes : UINT64_MAX,
                     known ? b.scratch_bytes : UINT64_MAX});
  }
  if (Status st = prims::CheckRegions(programs, sizes, static_cast<uint32_t>(DataTypeSize(type))); !st.ok()) {
    return st.WithContext("DeviceWorld");
  }
  if (o.threads < 32 || o.threads > kMaxBlockThreads || o.threads % 32 != 0) {
    return InvalidArgument("DeviceWorld: " + std::to_string(o.threads) + " threads per block (a multiple of 32, at most " +
                           std::to_string(kMaxBlockThreads) + ")");
  }
  auto impl = std::make_unique<Impl>();
  TUTTI_RETURN_IF_ERROR(PickKernel(type, op, &impl->kernel, &impl->elem));
  if (Result<int> count = DeviceCount(); !count.ok()) return count.status();
  impl->programs = programs;
  impl->options = o;
  const int n = static_cast<int>(programs.size());
  uint32_t nstreams = 1;
  for (const auto& p : programs) nstreams = std::max(nstreams, static_cast<uint32_t>(p.streams.size()));

  // Connections: conn (s, from, to) at ((s * n + from) * n + to) * stride, as the host world.
  const size_t stride = Align(prims::ConnBytes(o.geom));
  const size_t nconns = static_cast<size_t>(nstreams) * n * n;
  Result<uint8_t*> conns = impl->arena.Alloc(stride * nconns);
  if (!conns.ok()) return conns.status();
  if (cudaError_t e = cudaMemset(*conns, 0, stride * nconns); e != cudaSuccess) return CudaError("cudaMemset", e);
  InitCounters<<<static_cast<unsigned>(std::min<size_t>((nconns + 255) / 256, 1024)), 256>>>(*conns, stride, nconns,
                                                                                           o.counter_base);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return CudaError("counter init", e);

  // Everything else in one host image copied once: per rank its program arrays, connection
  // tables and LL staging; then the states, the tasks and the abort flag.
  std::vector<uint8_t> image;
  auto reserve = [&](size_t bytes) {
    const size_t at = Align(image.size());
    image.resize(at + Align(bytes));
    return at;
  };
  auto put = [&](const void* src, size_t bytes) {
    const size_t at = reserve(bytes);
    if (bytes > 0) std::memcpy(image.data() + at, src, bytes);
    return at;
  };
  struct RankAt {
    size_t streams, steps, ops, send, recv, stage;
  };
  std::vector<RankAt> at(n);
  std::vector<prims::ConnCtl*> table(static_cast<size_t>(nstreams) * n);
  for (int r = 0; r < n; ++r) {
    const algo::PrimProgram& p = programs[r];
    at[r].streams = put(p.streams.data(), p.streams.size() * sizeof(algo::PrimStream));
    at[r].steps = put(p.steps.data(), p.steps.size() * sizeof(algo::PrimStep));
    at[r].ops = put(p.ops.data(), p.ops.size() * sizeof(algo::PrimOp));
    for (int side = 0; side < 2; ++side) {  // send table, then receive table
      for (uint32_t s = 0; s < nstreams; ++s) {
        for (int q = 0; q < n; ++q) {
          const size_t from = side == 0 ? r : q, to = side == 0 ? q : r;
          table[s * n + q] = reinterpret_cast<prims::ConnCtl*>(*conns + ((s * n + from) * n + to) * stride);
        }
      }
      (side == 0 ? at[r].send : at[r].recv) = put(table.data(), table.size() * sizeof(table[0]));
    }
    at[r].stage = reserve(static_cast<size_t>(o.geom.slot_bytes) * nstreams);
  }
  for (const auto& p : programs) impl->ntasks += p.streams.size();
  const size_t states_at = reserve(impl->ntasks * sizeof(prims::StreamState));
  const size_t tasks_at = reserve(impl->ntasks * sizeof(BlockTask));
  const size_t flag_at = reserve(sizeof(int));
  const size_t undrained_at = reserve(sizeof(unsigned long long));
  Result<uint8_t*> dev = impl->arena.Alloc(image.size());
  if (!dev.ok()) return dev.status();
  uint8_t* base = *dev;

  std::vector<BlockTask> tasks;
  for (int r = 0; r < n; ++r) {
    prims::RankView v;
    v.rank = r;
    v.nranks = n;
    v.bufs[0] = static_cast<uint8_t*>(buffers[r].input);
    v.bufs[1] = static_cast<uint8_t*>(buffers[r].output);
    v.bufs[2] = static_cast<uint8_t*>(buffers[r].scratch);
    v.send = reinterpret_cast<prims::ConnCtl* const*>(base + at[r].send);
    v.recv = reinterpret_cast<prims::ConnCtl* const*>(base + at[r].recv);
    v.geom = o.geom;
    v.stage = base + at[r].stage;
    const prims::ProgramView pv{reinterpret_cast<const algo::PrimStream*>(base + at[r].streams),
                                reinterpret_cast<const algo::PrimStep*>(base + at[r].steps),
                                reinterpret_cast<const algo::PrimOp*>(base + at[r].ops),
                                static_cast<uint32_t>(programs[r].streams.size())};
    for (uint32_t s = 0; s < programs[r].streams.size(); ++s) {
      auto* state = reinterpret_cast<prims::StreamState*>(base + states_at) + tasks.size();
      tasks.push_back(BlockTask{pv, v, s, state});
      impl->owner.emplace_back(r, s);
    }
  }
  if (!tasks.empty()) std::memcpy(image.data() + tasks_at, tasks.data(), tasks.size() * sizeof(BlockTask));
  if (cudaError_t e = cudaMemcpy(base, image.data(), image.size(), cudaMemcpyHostToDevice); e != cudaSuccess) {
    return CudaError("cudaMemcpy of the programs", e);
  }
  // The counters' initialisation (default stream) is done before any launch.
  if (cudaError_t e = cudaStreamSynchronize(nullptr); e != cudaSuccess) return CudaError("initialisation", e);
  impl->states = base + states_at;
  impl->tasks = reinterpret_cast<const BlockTask*>(base + tasks_at);
  impl->abort_flag = reinterpret_cast<int*>(base + flag_at);
  impl->undrained = reinterpret_cast<unsigned long long*>(base + undrained_at);
  impl->conns = *conns;
  impl->nconns = nconns;
  impl->stride = stride;
  impl->nranks = n;
  TUTTI_RETURN_IF_ERROR(FinishSetup(impl.get(), o));
  const uint64_t traffic = Traffic(programs, impl->elem, o.geom);
  std::unique_ptr<DeviceWorld> world(new DeviceWorld(std::move(impl)));
  world->traffic_ = traffic;
  return Result<std::unique_ptr<DeviceWorld>>(std::move(world));
}

Status DeviceWorld::Launch(void* stream) {
  Impl& m = *impl_;
  if (!m.broken.empty()) {
    return InvalidUsage("DeviceWorld: an earlier run failed (" + m.broken +
                        "); its connections may hold stale pieces: create a new world");
  }
  if (m.launched && static_cast<cudaStream_t>(stream) != m.stream) {
    return InvalidUsage("DeviceWorld: launched on another stream before the previous run was waited for");
  }
  m.stream = static_cast<cudaStream_t>(stream);
  if (m.ntasks == 0) return OkStatus();
  // Fresh states and abort flag; the counters carry on from the last run.
  if (cudaError_t e = cudaMemsetAsync(m.states, 0, m.ntasks * sizeof(prims::StreamState), m.stream); e != cudaSuccess) {
    return CudaError("cudaMemsetAsync", e);
  }
  if (cudaError_t e = cudaMemsetAsync(m.abort_flag, 0, sizeof(int), m.stream); e != cudaSuccess) {
    return CudaError("cudaMemsetAsync", e);
  }
  void* progress = nullptr;
  cudaHostGetDevicePointer(&progress, const_cast<unsigned long long*>(m.progress), 0);
  m.kernel<<<static_cast<unsigned>(m.ntasks), m.options.threads, 0, m.stream>>>(
      m.tasks, m.abort_flag, static_cast<uint64_t>(m.options.timeout_s * 1e9),
      static_cast<volatile unsigned long long*>(progress));
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return CudaError("launch of the fused kernel", e);
  if (cudaError_t e = cudaEventRecord(m.done, m.stream); e != cudaSuccess) return CudaError("cudaEventRecord", e);
  m.launched = true;
  return OkStatus();
}

Status DeviceWorld::Wait() {
  Impl& m = *impl_;
  if (!m.launched) return OkStatus();
  m.launched = false;
  Status st = WaitRun();
  if (!st.ok() && m.broken.empty()) m.broken = st.ToString();
  return st;
}

Status DeviceWorld::WaitRun() {
  Impl& m = *impl_;
  // The kernel times out by itself when it stops moving; the host gives up only when the blocks'
  // progress words stood still for twice that and 5 s more (blocks that ignore the abort flag).
  const double limit = 2 * m.options.timeout_s + 5;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit);
  unsigned long long seen = 0;
  cudaError_t done;
  while ((done = cudaEventQuery(m.done)) == cudaErrorNotReady) {
    unsigned long long sum = 0;
    for (size_t i = 0; i < m.ntasks; ++i) sum += m.progress[i];
    if (sum != seen) {
      seen = sum;
      deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit);
    } else if (std::chrono::steady_clock::now() > deadline) {
      m.arena.Leak();
      return TimeoutError("the fused kernel made no progress for " + std::to_string(limit) +
                          " s and did not end (its blocks ignore the abort flag); the device is left running it");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  if (done != cudaSuccess) return CudaError("the fused kernel", done);
  std::vector<prims::StreamState> states(m.ntasks);
  if (cudaError_t e = cudaMemcpy(states.data(), m.states, m.ntasks * sizeof(prims::StreamState), cudaMemcpyDeviceToHost);
      e != cudaSuccess) {
    return CudaError("cudaMemcpy of the states", e);
  }
  Status failed = prims::FirstFailure(
      m.ntasks,
      [&](size_t i, const algo::PrimProgram** p, int* rank, uint32_t* s) {
        *p = &m.programs[m.owner[i].first];
        *rank = m.owner[i].first;
        *s = m.owner[i].second;
        return &states[i];
      },
      prims::PieceElems(m.options.geom, static_cast<uint32_t>(m.elem)), m.options.timeout_s);
  if (!failed.ok()) return failed;
  // Every piece sent was received: a send nobody expected completes as soon as it fits the FIFO.
  const unsigned long long none = ~0ull;
  unsigned long long first = none;
  cudaMemcpy(m.undrained, &none, sizeof none, cudaMemcpyHostToDevice);
  FindUndrained<<<static_cast<unsigned>(std::min<size_t>((m.nconns + 255) / 256, 1024)), 256>>>(m.conns, m.stride,
                                                                                              m.nconns, m.undrained);
  if (cudaError_t e = cudaMemcpy(&first, m.undrained, sizeof first, cudaMemcpyDeviceToHost); e != cudaSuccess) {
    return CudaError("the drain check", e);
  }
  if (first != none) {
    const size_t n = static_cast<size_t>(m.nranks);
    const size_t to = first % n, from = first / n % n, stream = first / (n * n);
    return MismatchError("rank " + std::to_string(from) + " sent pieces to rank " + std::to_string(to) + " on stream " +
                         std::to_string(stream) + " that rank " + std::to_string(to) +
                         " never received (the ranks' programs disagree)");
  }
  return OkStatus();
}

Status RunDeviceWorld(DataType type, RedOp op, const std::vector<algo::PrimProgram>& programs,
                      const std::vector<DeviceRankBuffers>& buffers, const DeviceWorldOptions& options) {
  Result<std::unique_ptr<DeviceWorld>> world = DeviceWorld::Create(type, op, programs, buffers, options);
  if (!world.ok()) return world.status();
  cudaStream_t stream;
  if (cudaError_t e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking); e != cudaSuccess) {
    return CudaError("cudaStreamCreate", e);
  }
  Status st = (*world)->Launch(stream);
  if (st.ok()) st = (*world)->Wait();
  cudaStreamDestroy(stream);  // returns at once; a kernel still running keeps what it uses
  return st;
}

}  // namespace tutti::cuda
