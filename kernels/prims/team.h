// What the primitives need from the threads running one schedule stream, written so that one
// source compiles for both: on a GPU a thread block (all its threads cooperate on each piece;
// decisions are agreed through barriers), on the host one thread (the same code with one member).
// Also the memory accesses of the FIFO protocols: acquire loads and release stores of the
// counters, and the 8-byte stores and loads that carry the LL protocol's data and flag together.
#pragma once

#include <cstdint>

#include "kernels/host_device.h"

#if defined(__CUDA_ARCH__)
#include <cuda/atomic>
#endif

namespace tutti::prims {

#if defined(__CUDA_ARCH__)

// A thread block.
struct Team {
  __device__ int tid() const { return static_cast<int>(threadIdx.x); }
  __device__ int size() const { return static_cast<int>(blockDim.x); }
  __device__ bool leader() const { return threadIdx.x == 0; }
  __device__ void Sync() const { __syncthreads(); }
  // Every member passes its vote; all get the same answer.
  __device__ bool All(bool v) const { return __syncthreads_and(v) != 0; }
  __device__ bool Any(bool v) const { return __syncthreads_or(v) != 0; }
  // Before a release store by the leader: what every member wrote is visible system-wide.
  __device__ void FenceBeforePublish() const {
    __threadfence_system();
    __syncthreads();
  }
};

__device__ inline uint64_t LoadAcquire(const uint64_t* p) {
  cuda::atomic_ref<uint64_t, cuda::thread_scope_system> a(*const_cast<uint64_t*>(p));
  return a.load(cuda::memory_order_acquire);
}
__device__ inline void StoreRelease(uint64_t* p, uint64_t v) {
  cuda::atomic_ref<uint64_t, cuda::thread_scope_system> a(*p);
  a.store(v, cuda::memory_order_release);
}
__device__ inline uint64_t LoadWord(const uint64_t* p) { return *reinterpret_cast<const volatile uint64_t*>(p); }
__device__ inline void StoreWord(uint64_t* p, uint64_t v) { *reinterpret_cast<volatile uint64_t*>(p) = v; }

#else

// One host thread.
struct Team {
  int tid() const { return 0; }
  int size() const { return 1; }
  bool leader() const { return true; }
  void Sync() const {}
  bool All(bool v) const { return v; }
  bool Any(bool v) const { return v; }
  void FenceBeforePublish() const {}
};

inline uint64_t LoadAcquire(const uint64_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
inline void StoreRelease(uint64_t* p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
inline uint64_t LoadWord(const uint64_t* p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
inline void StoreWord(uint64_t* p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }

#endif

}  // namespace tutti::prims
