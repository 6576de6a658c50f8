// CPU reduction kernels beside memcpy: ReduceN sum for float32, bfloat16, float16, fp8_e4m3 and
// int32 with 2 and 4 sources, at 64 KiB (cache), 1 MiB (L2) and 64 MiB (memory) per buffer.
//
// bytes_per_second counts memory traffic: every source read plus the destination written,
// (n + 1) x buffer size per call, and 2 x size for memcpy, so the columns compare directly
// with memcpy's bandwidth. out_bytes_per_second counts only the bytes produced.
//
//   bazel build -c opt //bench:kernels_bench && bazel-bin/bench/kernels_bench
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/cpu/reduce.h"
#include "core/base/dtype.h"

namespace tutti {
namespace {

constexpr size_t kSizes[] = {size_t{64} << 10, size_t{1} << 20, size_t{64} << 20};
constexpr DataType kTypes[] = {DataType::kFloat32, DataType::kBfloat16, DataType::kFloat16,
                               DataType::kFp8E4M3, DataType::kInt32};

std::string SizeName(size_t bytes) {
  return bytes >= (size_t{1} << 20) ? std::to_string(bytes >> 20) + "MiB"
                                    : std::to_string(bytes >> 10) + "KiB";
}

// Buffers of ordinary values (the pattern of 1.0 / 0.5 / 0.25 in every type, so that no
// subnormals slow the float paths and sums stay finite).
std::vector<uint8_t> MakeBuffer(size_t bytes, DataType t, int salt) {
  std::vector<uint8_t> buf(bytes);
  const size_t count = bytes / DataTypeSize(t);
  for (size_t i = 0; i < count; ++i) {
    const int v = static_cast<int>((i + salt) % 3);
    uint32_t bits = 0;
    switch (t) {
      case DataType::kFloat32: {
        const float f = 1.0f / static_cast<float>(1 << v);
        std::memcpy(&bits, &f, 4);
        break;
      }
      case DataType::kBfloat16: bits = 0x3F80 - (v << 7); break;  // 1, 0.5, 0.25
      case DataType::kFloat16: bits = 0x3C00 - (v << 10); break;
      case DataType::kFp8E4M3: bits = 0x38 - (v << 3); break;
      default: bits = static_cast<uint32_t>(v + 1); break;
    }
    std::memcpy(buf.data() + i * DataTypeSize(t), &bits, DataTypeSize(t));
  }
  return buf;
}

void SetRates(benchmark::State& state, size_t bytes, int streams) {
  const double iters = static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(iters * static_cast<double>(bytes) * streams));
  state.counters["out_bytes_per_second"] =
      benchmark::Counter(iters * static_cast<double>(bytes), benchmark::Counter::kIsRate);
}

void BM_ReduceSum(benchmark::State& state, DataType type, int n, size_t bytes) {
  std::vector<std::vector<uint8_t>> srcs;
  std::vector<const void*> ptrs;
  for (int k = 0; k < n; ++k) srcs.push_back(MakeBuffer(bytes, type, k));
  for (auto& s : srcs) ptrs.push_back(s.data());
  std::vector<uint8_t> dst(bytes, 0);
  const size_t count = bytes / DataTypeSize(type);
  for (auto _ : state) {
    Status st = kernels::ReduceN(dst.data(), ptrs.data(), n, count, type, RedOp::kSum);
    if (!st.ok()) {
      state.SkipWithError(st.ToString().c_str());
      break;
    }
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  SetRates(state, bytes, n + 1);
}

void BM_Memcpy(benchmark::State& state, size_t bytes) {
  std::vector<uint8_t> src = MakeBuffer(bytes, DataType::kInt32, 0), dst(bytes, 0);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), bytes);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  SetRates(state, bytes, 2);
}

const bool kRegistered = [] {
  for (size_t bytes : kSizes) {
    benchmark::RegisterBenchmark(("memcpy/" + SizeName(bytes)).c_str(), BM_Memcpy, bytes)
        ->UseRealTime();
    for (DataType t : kTypes) {
      for (int n : {2, 4}) {
        const std::string name = std::string("ReduceN_sum/") + DataTypeName(t) +
                                 "/n:" + std::to_string(n) + "/" + SizeName(bytes);
        benchmark::RegisterBenchmark(name.c_str(), BM_ReduceSum, t, n, bytes)->UseRealTime();
      }
    }
  }
  return true;
}();

}  // namespace
}  // namespace tutti
