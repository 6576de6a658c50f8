// Collectives on device memory through the communicator, ranks as threads sharing one GPU: the
// fused path (a kernel per rank over connections in device memory) beside the staged path
// (TUTTI_FUSED=0: messages through page-locked host memory), in one run.
//
//   fused_coll_bench [--ranks 2,4] [--min 8] [--max 64M] [--iters 20] [--passes 5]
//
// Per size: median over passes of the time of one blocking all_reduce (float32 sum; `iters`
// back to back, the clock read on rank 0 after a barrier), algbw = bytes / time, busbw as
// nccl-tests (2 (n-1) / n x algbw); each size's result is checked once. Without a GPU it says so
// and exits 0.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_util.h"
#include "core/communicator.h"
#include "core/store/in_memory_store.h"
#include "kernels/cuda/device.h"

namespace tutti {
namespace {

struct Flags {
  std::vector<int> ranks = {2, 4};
  uint64_t min_bytes = 8, max_bytes = uint64_t{64} << 20;
  int iters = 20, passes = 5;
};

bool Parse(int argc, char** argv, Flags* f) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--ranks") {
      f->ranks = bench::ParseInts(v);
    } else if (k == "--min") {
      f->min_bytes = bench::ParseSize(v);
    } else if (k == "--max") {
      f->max_bytes = bench::ParseSize(v);
    } else if (k == "--iters") {
      f->iters = std::atoi(v.c_str());
    } else if (k == "--passes") {
      f->passes = std::atoi(v.c_str());
    } else {
      return false;
    }
  }
  return argc % 2 == 1 && f->iters > 0 && f->passes > 0 && !f->ranks.empty() && f->min_bytes >= 4;
}

// One path, n thread ranks: rows of (bytes, seconds per call); an error ends the run.
struct Row {
  uint64_t bytes;
  double seconds;
  std::string error;
};

std::vector<Row> Measure(const Flags& f, int n, bool fused) {
  setenv("TUTTI_FUSED", fused ? "1" : "0", 1);
  auto store = std::make_shared<InMemoryStore>();
  std::vector<Row> rows;
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      CommOptions o;
      o.timeout_s = 60;
      auto comm = Communicator::Create(store, r, n, o);
      if (!comm.ok()) {
        if (r == 0) rows.push_back({0, 0, comm.status().ToString()});
        return;
      }
      Communicator& c = **comm;
      void* buf = nullptr;
      if (cudaMalloc(&buf, f.max_bytes) != cudaSuccess) std::abort();
      std::vector<float> host(f.max_bytes / 4, static_cast<float>(r + 1));
      bool failed = false;
      for (uint64_t bytes = f.min_bytes; bytes <= f.max_bytes && !failed; bytes *= 4) {
        const size_t count = bytes / 4;
        cudaMemcpy(buf, host.data(), bytes, cudaMemcpyHostToDevice);
        Status st = c.AllReduce(buf, buf, count, DataType::kFloat32, RedOp::kSum);
        float first = 0, last = 0;
        cudaMemcpy(&first, buf, 4, cudaMemcpyDeviceToHost);
        cudaMemcpy(&last, static_cast<char*>(buf) + (count - 1) * 4, 4, cudaMemcpyDeviceToHost);
        const float want = n * (n + 1) / 2.0f;
        if (st.ok() && (first != want || last != want)) {
          st = InternalError("wrong result: " + std::to_string(first) + " / " + std::to_string(last) + ", expected " +
                             std::to_string(want));
        }
        std::vector<double> times;
        for (int p = 0; p < f.passes && st.ok(); ++p) {
          st = c.Barrier();
          const auto t0 = std::chrono::steady_clock::now();
          for (int i = 0; i < f.iters && st.ok(); ++i) st = c.AllReduce(buf, buf, count, DataType::kFloat32, RedOp::kSum);
          times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / f.iters);
        }
        if (r != 0) {
          failed = !st.ok();
          continue;
        }
        if (!st.ok()) {
          rows.push_back({bytes, 0, st.ToString()});
          failed = true;
          continue;
        }
        rows.push_back({bytes, bench::Median(times), ""});
      }
      (void)c.Barrier();
      cudaFree(buf);
      c.Destroy();
    });
  }
  for (auto& t : threads) t.join();
  unsetenv("TUTTI_FUSED");
  return rows;
}

int Main(int argc, char** argv) {
  Flags f;
  if (!Parse(argc, argv, &f)) {
    std::fprintf(stderr, "usage: %s [--ranks 2,4] [--min 8] [--max 64M] [--iters 20] [--passes 5]\n", argv[0]);
    return 2;
  }
  Result<int> devices = cuda::DeviceCount();
  if (!devices.ok()) {
    std::printf("fused_coll_bench: no GPU (%s); nothing measured\n", devices.status().ToString().c_str());
    return 0;
  }
  Result<cuda::DeviceInfo> info = cuda::GetDeviceInfo(0);
  if (info.ok()) std::printf("# %s, %d SMs; all_reduce float32 sum, ranks as threads on one GPU\n", info->name.c_str(),
                             info->multiprocessors);
  std::printf("%5s %12s %14s %10s %14s %10s %10s\n", "ranks", "bytes", "fused_us", "busbw", "staged_us", "busbw",
              "speedup");
  int failures = 0;
  for (int n : f.ranks) {
    const std::vector<Row> fused = Measure(f, n, true), staged = Measure(f, n, false);
    for (size_t i = 0; i < std::max(fused.size(), staged.size()); ++i) {
      const Row* a = i < fused.size() ? &fused[i] : nullptr;
      const Row* b = i < staged.size() ? &staged[i] : nullptr;
      for (const Row* x : {a, b}) {
        if (x != nullptr && !x->error.empty()) {
          std::printf("%5d %12llu  %s: %s\n", n, static_cast<unsigned long long>(x->bytes), x == a ? "fused" : "staged",
                      x->error.c_str());
          ++failures;
        }
      }
      if (a == nullptr || b == nullptr || !a->error.empty() || !b->error.empty()) continue;
      auto busbw = [&](const Row& x) { return x.bytes / x.seconds / 1e9 * 2 * (n - 1) / n; };
      std::printf("%5d %12llu %14.2f %10.2f %14.2f %10.2f %10.2f\n", n, static_cast<unsigned long long>(a->bytes),
                  a->seconds * 1e6, busbw(*a), b->seconds * 1e6, busbw(*b), b->seconds / a->seconds);
    }
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace tutti

int main(int argc, char** argv) { return tutti::Main(argc, argv); }
