// The fused collective kernel on one GPU (kernels/cuda/prims_kernel.h): n ranks as blocks of one
// launch, a schedule lowered by algorithms/lowering, timed with CUDA events beside
// cudaMemcpy device-to-device measured in the same run.
//
//   prims_gpu_bench [--ranks 2,4,8] [--algo ring] [--min 8] [--max 64M] [--channels 8]
//                   [--iters 20] [--passes 5] [--threads 256]
//
// Per size and protocol: median time of one call (over passes of `iters` back-to-back launches),
// algbw = bytes / time, busbw as nccl-tests (all_reduce: 2 (n-1) / n x algbw), and the device
// memory traffic of a call (every source read, destination and slot written) per second beside
// what cudaMemcpy moves per second (2 x its bandwidth): the memory-traffic bound. Without a GPU
// it says so and exits 0.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/lowering.h"
#include "bench/bench_util.h"
#include "algorithms/registry.h"
#include "kernels/cuda/device.h"
#include "kernels/cuda/prims_kernel.h"

namespace tutti {
namespace {

struct Flags {
  std::vector<int> ranks = {2, 4, 8};
  std::string algo = "ring";
  uint64_t min_bytes = 8, max_bytes = uint64_t{64} << 20;
  int channels = 8, iters = 20, passes = 5, threads = 256;
};

bool Parse(int argc, char** argv, Flags* f) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--ranks") {
      f->ranks = bench::ParseInts(v);
    } else if (k == "--algo") {
      f->algo = v;
    } else if (k == "--min") {
      f->min_bytes = bench::ParseSize(v);
    } else if (k == "--max") {
      f->max_bytes = bench::ParseSize(v);
    } else if (k == "--channels") {
      f->channels = std::atoi(v.c_str());
    } else if (k == "--iters") {
      f->iters = std::atoi(v.c_str());
    } else if (k == "--passes") {
      f->passes = std::atoi(v.c_str());
    } else if (k == "--threads") {
      f->threads = std::atoi(v.c_str());
    } else {
      return false;
    }
  }
  return argc % 2 == 1 && f->iters > 0 && f->passes > 0 && f->channels > 0 && !f->ranks.empty();
}

// Seconds per call of `call` (median over passes of iters calls between two events).
template <class F>
double TimeCalls(const Flags& f, cudaStream_t stream, F call) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  call();  // warm-up
  cudaStreamSynchronize(stream);
  std::vector<double> t;
  for (int p = 0; p < f.passes; ++p) {
    cudaEventRecord(a, stream);
    for (int i = 0; i < f.iters; ++i) call();
    cudaEventRecord(b, stream);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    t.push_back(ms * 1e-3 / f.iters);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return bench::Median(t);
}

struct DeviceBuffer {
  explicit DeviceBuffer(size_t bytes) {
    if (cudaMalloc(&p, std::max<size_t>(bytes, 64)) != cudaSuccess) p = nullptr;
    if (p) cudaMemset(p, 0, std::max<size_t>(bytes, 64));
  }
  ~DeviceBuffer() {
    if (p) cudaFree(p);
  }
  void* p = nullptr;
};

int Main(int argc, char** argv) {
  Flags f;
  if (!Parse(argc, argv, &f)) {
    std::fprintf(stderr, "usage: %s [--ranks 2,4,8] [--algo ring] [--min 8] [--max 64M] [--channels 8] "
                         "[--iters 20] [--passes 5] [--threads 256]\n", argv[0]);
    return 2;
  }
  Result<int> devices = cuda::DeviceCount();
  if (!devices.ok()) {
    std::printf("prims_gpu_bench: no GPU (%s); nothing measured\n", devices.status().ToString().c_str());
    return 0;
  }
  Result<cuda::DeviceInfo> info = cuda::GetDeviceInfo(0);
  if (info.ok()) std::printf("# %s, %d SMs\n", info->name.c_str(), info->multiprocessors);
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);

  // The copy baseline: cudaMemcpy device to device at the largest size.
  {
    DeviceBuffer a(f.max_bytes), b(f.max_bytes);
    const double s = TimeCalls(f, stream, [&] { cudaMemcpyAsync(b.p, a.p, f.max_bytes, cudaMemcpyDeviceToDevice, stream); });
    std::printf("# cudaMemcpy D2D %llu bytes: %.1f GB/s copied, %.1f GB/s of memory traffic\n",
                static_cast<unsigned long long>(f.max_bytes), f.max_bytes / s / 1e9, 2 * f.max_bytes / s / 1e9);
  }
  std::printf("%5s %6s %12s %10s %10s %10s %12s\n", "ranks", "proto", "bytes", "time_us", "algbw", "busbw",
              "traffic_GB/s");
  int failures = 0;
  for (int n : f.ranks) {
    for (uint64_t bytes = f.min_bytes; bytes <= f.max_bytes; bytes *= 4) {
      const uint64_t count = std::max<uint64_t>(bytes / 4, 1);
      std::vector<algo::PrimProgram> programs;
      algo::CollArgs a;
      a.coll = algo::Collective::kAllReduce;
      a.nranks = n;
      a.count = count;
      a.nchannels = f.channels;
      bool ok = true;
      for (int r = 0; r < n && ok; ++r) {
        a.rank = r;
        Result<algo::Schedule> s = algo::BuildSchedule(f.algo, a);
        Result<algo::PrimProgram> p = s.ok() ? algo::LowerSchedule(*s) : Result<algo::PrimProgram>(s.status());
        if (!p.ok()) {
          std::printf("%s: %s\n", f.algo.c_str(), p.status().ToString().c_str());
          ok = false;
        } else {
          programs.push_back(std::move(*p));
        }
      }
      if (!ok) return 1;
      std::vector<std::unique_ptr<DeviceBuffer>> mem;
      std::vector<cuda::DeviceRankBuffers> bufs(n);
      for (int r = 0; r < n; ++r) {
        for (uint64_t elems : {count, count, programs[r].scratch_count}) mem.push_back(std::make_unique<DeviceBuffer>(elems * 4));
        bufs[r] = cuda::DeviceRankBuffers{mem[3 * r]->p, mem[3 * r + 1]->p, mem[3 * r + 2]->p};
      }
      for (prims::Proto proto : {prims::Proto::kSimple, prims::Proto::kLL}) {
        if (proto == prims::Proto::kLL && bytes > (uint64_t{4} << 20)) continue;
        cuda::DeviceWorldOptions o;
        o.geom = proto == prims::Proto::kLL ? prims::FifoGeom{8, 4096, proto} : prims::FifoGeom{4, 65536, proto};
        o.threads = f.threads;
        Result<std::unique_ptr<cuda::DeviceWorld>> world =
            cuda::DeviceWorld::Create(DataType::kFloat32, RedOp::kSum, programs, bufs, o);
        if (!world.ok()) {
          std::printf("%5d %6s %12llu  %s\n", n, proto == prims::Proto::kLL ? "LL" : "Simple",
                      static_cast<unsigned long long>(count * 4), world.status().ToString().c_str());
          ++failures;
          continue;
        }
        Status launch = OkStatus();
        const double s = TimeCalls(f, stream, [&] {
          if (launch.ok()) launch = (*world)->Launch(stream);
        });
        Status st = launch.ok() ? (*world)->Wait() : launch;
        if (!st.ok()) {
          std::printf("%5d %6s %12llu  %s\n", n, proto == prims::Proto::kLL ? "LL" : "Simple",
                      static_cast<unsigned long long>(count * 4), st.ToString().c_str());
          ++failures;
          continue;
        }
        const double algbw = count * 4.0 / s / 1e9;
        std::printf("%5d %6s %12llu %10.2f %10.2f %10.2f %12.1f\n", n, proto == prims::Proto::kLL ? "LL" : "Simple",
                    static_cast<unsigned long long>(count * 4), s * 1e6, algbw, algbw * 2 * (n - 1) / n,
                    (*world)->TrafficBytes() / s / 1e9);
      }
    }
  }
  cudaStreamDestroy(stream);
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace tutti

int main(int argc, char** argv) { return tutti::Main(argc, argv); }
