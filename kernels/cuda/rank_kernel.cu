#include "kernels/cuda/rank_kernel.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "kernels/cuda/prims_kernel.h"
#include "kernels/cuda/world_kernel.h"
#include "kernels/prims/report.h"

namespace tutti::cuda {

using detail::BlockTask;
using detail::CudaError;

namespace {
constexpr size_t kMaxTasks = 64;  // blocks of one launch (streams of a program)
size_t Align64(size_t x) { return (x + 63) / 64 * 64; }
}  // namespace

struct RankKernel::Impl {
  int device = 0;
  int threads = 256;
  cudaStream_t stream = nullptr;
  cudaStream_t cancel_stream = nullptr;  // writes the abort flag while the kernel runs on `stream`
  cudaEvent_t staged = nullptr;          // the program image (with a zero abort flag) is on the device
  cudaEvent_t done = nullptr;
  // Mapped host memory: kMaxTasks progress words, then kCancelFlag (the source of the write that
  // cancels a run).
  volatile unsigned long long* progress = nullptr;
  std::vector<void*> images;  // device memory; the last is in use, earlier ones wait for ~Impl
  size_t capacity = 0;
  bool leaked = false;  // a kernel that never ended may still use the memory

  ~Impl() {
    if (leaked) return;
    cudaSetDevice(device);
    for (void* p : images) cudaFree(p);
    if (done) cudaEventDestroy(done);
    if (staged) cudaEventDestroy(staged);
    if (stream) cudaStreamDestroy(stream);
    if (cancel_stream) cudaStreamDestroy(cancel_stream);
    if (progress) cudaFreeHost(const_cast<unsigned long long*>(progress));
  }
};

RankKernel::RankKernel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RankKernel::~RankKernel() = default;

Result<std::unique_ptr<RankKernel>> RankKernel::Create(int device, int threads) {
  if (threads < 32 || threads > kMaxBlockThreads || threads % 32 != 0) {
    return InvalidArgument("RankKernel: " + std::to_string(threads) + " threads per block (a multiple of 32, at most " +
                           std::to_string(kMaxBlockThreads) + ")");
  }
  auto impl = std::make_unique<Impl>();
  impl->device = device;
  impl->threads = threads;
  if (cudaError_t e = cudaSetDevice(device); e != cudaSuccess) return CudaError("cudaSetDevice", e);
  if (cudaError_t e = cudaStreamCreateWithFlags(&impl->stream, cudaStreamNonBlocking); e != cudaSuccess) {
    return CudaError("cudaStreamCreate", e);
  }
  if (cudaError_t e = cudaStreamCreateWithFlags(&impl->cancel_stream, cudaStreamNonBlocking); e != cudaSuccess) {
    return CudaError("cudaStreamCreate", e);
  }
  if (cudaError_t e = cudaEventCreateWithFlags(&impl->done, cudaEventDisableTiming); e != cudaSuccess) {
    return CudaError("cudaEventCreate", e);
  }
  if (cudaError_t e = cudaEventCreateWithFlags(&impl->staged, cudaEventDisableTiming); e != cudaSuccess) {
    return CudaError("cudaEventCreate", e);
  }
  void* progress = nullptr;
  if (cudaError_t e = cudaHostAlloc(&progress, (kMaxTasks + 1) * sizeof(unsigned long long), cudaHostAllocMapped);
      e != cudaSuccess) {
    return CudaError("cudaHostAlloc of the progress words", e);
  }
  impl->progress = static_cast<volatile unsigned long long*>(progress);
  impl->progress[kMaxTasks] = detail::kCancelFlag;
  return std::unique_ptr<RankKernel>(new RankKernel(std::move(impl)));
}

Status RankKernel::Run(const prims::RankRun& run) {
  Impl& m = *impl_;
  if (m.leaked) return InvalidUsage("RankKernel: an earlier kernel never ended");
  if (Status st = prims::CheckRankRun(run); !st.ok()) return st.WithContext("rank kernel");
  detail::KernelFn kernel = nullptr;
  size_t elem = 0;
  TUTTI_RETURN_IF_ERROR(detail::PickKernel(run.type, run.op, &kernel, &elem));
  const algo::PrimProgram& p = *run.program;
  const size_t ntasks = p.streams.size();
  if (ntasks == 0) return run.before_launch ? run.before_launch() : OkStatus();  // peers still meet
  if (ntasks > kMaxTasks) return InvalidArgument("rank kernel: " + std::to_string(ntasks) + " streams");
  if (cudaError_t e = cudaSetDevice(m.device); e != cudaSuccess) return CudaError("cudaSetDevice", e);
  int sms = 0, per_sm = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, m.device);
  if (cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, m.threads, 0); e != cudaSuccess) {
    return CudaError("occupancy query", e);
  }
  if (static_cast<size_t>(per_sm) * sms < ntasks) {
    return UnavailableError("the fused kernel needs " + std::to_string(ntasks) + " blocks of " +
                            std::to_string(m.threads) + " threads resident at once; the device holds " +
                            std::to_string(per_sm * sms));
  }

  // The image: program arrays, connection tables, zeroed states and abort flag, the tasks.
  std::vector<uint8_t> image;
  auto reserve = [&](size_t bytes) {
    const size_t at = Align64(image.size());
    image.resize(at + Align64(bytes));
    return at;
  };
  auto put = [&](const void* src, size_t bytes) {
    const size_t at = reserve(bytes);
    if (bytes > 0) std::memcpy(image.data() + at, src, bytes);
    return at;
  };
  const size_t streams_at = put(p.streams.data(), p.streams.size() * sizeof(algo::PrimStream));
  const size_t steps_at = put(p.steps.data(), p.steps.size() * sizeof(algo::PrimStep));
  const size_t ops_at = put(p.ops.data(), p.ops.size() * sizeof(algo::PrimOp));
  const size_t send_at = put(run.send.data(), run.send.size() * sizeof(run.send[0]));
  const size_t recv_at = put(run.recv.data(), run.recv.size() * sizeof(run.recv[0]));
  const size_t states_at = reserve(ntasks * sizeof(prims::StreamState));
  const size_t flag_at = reserve(sizeof(int));
  const size_t tasks_at = reserve(ntasks * sizeof(BlockTask));
  if (image.size() > m.capacity) {
    // Grown, never freed here (see the header); the old image stays until the RankKernel goes.
    const size_t bytes = std::max<size_t>(image.size() * 2, 64 << 10);
    void* dev = nullptr;
    if (cudaError_t e = cudaMalloc(&dev, bytes); e != cudaSuccess) return CudaError("cudaMalloc of the program", e);
    m.images.push_back(dev);
    m.capacity = bytes;
  }
  auto* base = static_cast<uint8_t*>(m.images.back());
  prims::RankView v;
  v.rank = run.rank;
  v.nranks = run.nranks;
  for (int b = 0; b < 3; ++b) v.bufs[b] = run.bufs[b];
  v.send = reinterpret_cast<prims::ConnCtl* const*>(base + send_at);
  v.recv = reinterpret_cast<prims::ConnCtl* const*>(base + recv_at);
  v.geom = run.geom;
  v.stage = run.stage;
  v.tag = run.tag;
  const prims::ProgramView pv{reinterpret_cast<const algo::PrimStream*>(base + streams_at),
                              reinterpret_cast<const algo::PrimStep*>(base + steps_at),
                              reinterpret_cast<const algo::PrimOp*>(base + ops_at), static_cast<uint32_t>(ntasks)};
  for (uint32_t s = 0; s < ntasks; ++s) {
    const BlockTask t{pv, v, s, reinterpret_cast<prims::StreamState*>(base + states_at) + s};
    std::memcpy(image.data() + tasks_at + s * sizeof(BlockTask), &t, sizeof t);
  }
  for (size_t s = 0; s < kMaxTasks; ++s) m.progress[s] = 0;
  if (run.before_launch) TUTTI_RETURN_IF_ERROR(run.before_launch());
  if (cudaError_t e = cudaMemcpyAsync(base, image.data(), image.size(), cudaMemcpyHostToDevice, m.stream);
      e != cudaSuccess) {
    return CudaError("cudaMemcpyAsync of the program", e);
  }
  if (cudaError_t e = cudaEventRecord(m.staged, m.stream); e != cudaSuccess) return CudaError("cudaEventRecord", e);
  void* progress = nullptr;
  cudaHostGetDevicePointer(&progress, const_cast<unsigned long long*>(m.progress), 0);
  kernel<<<static_cast<unsigned>(ntasks), m.threads, 0, m.stream>>>(
      reinterpret_cast<const BlockTask*>(base + tasks_at), reinterpret_cast<int*>(base + flag_at),
      static_cast<uint64_t>(run.timeout_s * 1e9), static_cast<volatile unsigned long long*>(progress));
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return CudaError("launch of the fused kernel", e);
  if (cudaError_t e = cudaEventRecord(m.done, m.stream); e != cudaSuccess) return CudaError("cudaEventRecord", e);

  // The blocks time out by themselves; the host gives up only when their progress words stood
  // still for twice that and 5 s more.
  const double limit = 2 * run.timeout_s + 5;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit);
  unsigned long long seen = 0;
  bool cancel_sent = false;
  cudaError_t done;
  for (int polls = 0; (done = cudaEventQuery(m.done)) == cudaErrorNotReady; ++polls) {
    // The communicator failed meanwhile (the peers will not come): the blocks are told through
    // their abort flag, written from another stream while the kernel runs (after the image,
    // whose zero flag must not land on top of it). Should that fail, the blocks still end at
    // their own timeout.
    if (!cancel_sent && run.cancelled && polls > 200 && polls % 50 == 0 && run.cancelled()) {
      cancel_sent = true;
      if (cudaStreamWaitEvent(m.cancel_stream, m.staged, 0) != cudaSuccess ||
          cudaMemcpyAsync(base + flag_at, const_cast<unsigned long long*>(&m.progress[kMaxTasks]), sizeof(int),
                          cudaMemcpyHostToDevice, m.cancel_stream) != cudaSuccess) {
        cudaGetLastError();  // (cleared: the kernel's own errors are read below)
      }
    }
    unsigned long long sum = 0;
    for (size_t i = 0; i < ntasks; ++i) sum += m.progress[i];
    if (sum != seen) {
      seen = sum;
      deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit);
    } else if (std::chrono::steady_clock::now() > deadline) {
      m.leaked = true;
      return TimeoutError("rank " + std::to_string(run.rank) + ": the fused kernel made no progress for " +
                          std::to_string(limit) + " s and did not end; the device is left running it");
    }
    // Spin briefly (small calls end within microseconds), then sleep between polls.
    if (polls > 200) std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  // A cancel written late must land in this run's image, not in the next one's.
  if (cancel_sent) cudaStreamSynchronize(m.cancel_stream);
  if (done != cudaSuccess) return CudaError("the fused kernel", done);
  std::vector<prims::StreamState> states(ntasks);
  if (cudaError_t e = cudaMemcpyAsync(states.data(), base + states_at, ntasks * sizeof(prims::StreamState),
                                      cudaMemcpyDeviceToHost, m.stream);
      e != cudaSuccess) {
    return CudaError("cudaMemcpyAsync of the states", e);
  }
  if (cudaError_t e = cudaStreamSynchronize(m.stream); e != cudaSuccess) return CudaError("the states", e);
  return prims::FirstFailure(
      ntasks,
      [&](size_t i, const algo::PrimProgram** prog, int* rank, uint32_t* stream) {
        *prog = &p;
        *rank = run.rank;
        *stream = static_cast<uint32_t>(i);
        return &states[i];
      },
      prims::PieceElems(run.geom, static_cast<uint32_t>(elem)), run.timeout_s);
}

}  // namespace tutti::cuda
