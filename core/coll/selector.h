// Choosing an algorithm for a collective call.
//
// Order: the call's own option, then TUTTI_ALGO ("ring" for every collective that has a ring, or
// per collective: "allreduce:tree,allgather:ring"), then an alpha-beta-gamma cost model: for
// each algorithm that implements the collective, time = steps * alpha + bytes sent * beta +
// bytes reduced * gamma, with (alpha, beta, gamma) per transport; the cheapest wins. The choice
// depends only on (collective, world size, bytes, transport), so all ranks choose alike; the
// algorithm is also part of each call's signature, so ranks configured differently get a
// mismatch error rather than a hang.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "algorithms/schedule.h"
#include "core/base/status.h"

namespace tutti {

struct CostParams {
  double alpha_s = 0;           // per message step
  double beta_s_per_byte = 0;   // per byte moved
  double gamma_s_per_byte = 0;  // per byte reduced
  // A network link is the bottleneck (tcp): an algorithm cut into pipelined pieces hides its
  // reductions behind the transfers, one that runs as a single stream (rhd reduce_scatter) does
  // not.
  bool network = false;
  // The call runs as one fused kernel per rank on device memory (Choose's `device`).
  bool device = false;
};

// Blocks (bytes per rank) from this size up are moved straight between their source and
// destination in one step within a host (flat all_gather, gather, scatter; see selector.cc), also
// when the ranks outnumber the CPUs, where smaller blocks take the shared slots.
constexpr uint64_t kDirectBlockMin = 256 << 10;

// The direct calls' smallest blocks (SlotRules::direct_min, direct_rooted_min) where each rank has
// a CPU, and where the ranks outnumber the CPUs (Busy). Below them the copies through the slots
// were as fast or faster: a direct call's writers wait for their readers (a rooted call's root no
// longer runs ahead), and each block read costs a system call. Same-run A/B, 2-vCPU VM, medians
// of 3, us, slots -> direct: 2 ranks all_gather 8 KiB blocks 1.77 -> 1.42, 32 KiB 5.15 -> 2.91,
// scatter 32 KiB 2.98 -> 2.00 (but 8 KiB 0.79 -> 0.99), gather 64 KiB 5.71 -> 4.27 (16 KiB 1.47 ->
// 1.90); 4 ranks all_to_all 32 KiB 28.2 -> 20.1, gather 128 KiB 32.0 -> 25.9 (32 KiB 7.0 -> 11.0).
constexpr uint64_t kSlotDirectMin = 8 << 10;
constexpr uint64_t kSlotDirectRootedMin = 32 << 10;
constexpr uint64_t kSlotDirectBusyMin = 32 << 10;
constexpr uint64_t kSlotDirectBusyRootedMin = 64 << 10;
// Broadcasts take direct calls from kSlotDirectRootedMin bytes where each rank has a CPU, and from
// this size where the ranks outnumber the CPUs. Same-run A/B, medians of 3, us, slots or messages
// -> direct: 2 ranks 32 KiB 3.26 -> 2.31, 256 KiB 22.7 -> 11.2, 4 MiB 759 -> 508, 16 MiB 3283 ->
// 2549; 4 ranks 128 KiB 20.0 -> 21.2 (64 KiB 10.1 -> 12.1), 512 KiB 114 -> 83, 4 MiB 1405 -> 1089,
// 16 MiB 11949 -> 6305.
constexpr uint64_t kSlotDirectBusyBroadcastMin = 256 << 10;

// An all_reduce or reduce_scatter of this many bytes (CallBytes) has its pieces read one-sidedly
// into scratch where every rank on the host has a CPU: one copy (split with the sender from
// kSplitCopyMin up) instead of two through the FIFO, and the pieces are still in cache when
// reduced. A/B with every piece of up to 2 MiB read, 2 ranks, medians of 3, us, FIFO -> read:
// all_reduce 2 MiB 610 -> 456, 4 MiB 1065 -> 913, 8 MiB 2052 -> 1847, but 512 KiB 75 -> 79 and
// 16 MiB 4751 -> 5239 (its pieces too are 2 MiB or less; the scratch no longer stays in cache);
// reduce_scatter 2 MiB 366 -> 316, 4-8 MiB level, 16 MiB 2655 -> 2928; reduce slower from 2 MiB
// (445 -> 567). With 4 ranks on the 2 CPUs, every staged receive read (TUTTI_SHM_CMA=1), slower
// at most sizes (all_reduce 256 KiB 129 -> 145: the sender idles while the receiver copies).
constexpr uint64_t kReducedReadMin = 2 << 20;
constexpr uint64_t kReducedReadMax = 8 << 20;
// Whether a call of `coll` moving `call_bytes` (CallBytes) reads its reduced pieces so, with
// `local_ranks` ranks on a host of `host_cpus` CPUs (0: unknown).
bool ReadsReducedPieces(algo::Collective coll, uint64_t call_bytes, int local_ranks, int host_cpus);

// Defaults measured on this project's machines; TUTTI_COST_<SHM|TCP> overrides ("alpha_us,GBps,reduce_GBps").
Result<CostParams> CostParamsFor(const std::string& transport);

// Model time of `algorithm` for a collective of `bytes` (the nccl-tests size: the whole
// array for all_gather / reduce_scatter / gather / scatter / all_to_all) on p ranks.
double ModelTime(const std::string& algorithm, algo::Collective coll, int p, double bytes, const CostParams& c);

class Selector {
 public:
  // Parses TUTTI_ALGO.
  static Result<Selector> FromEnv();
  static Result<Selector> Parse(const std::string& spec);

  // `device`: the call runs fused on device memory (see CostParams::device).
  Result<std::string> Choose(algo::Collective coll, int p, uint64_t bytes, const std::string& transport,
                             const std::string& per_call, bool device = false) const;
  // True when TUTTI_ALGO names the algorithm of `coll` (so the call must run that schedule).
  bool Forces(algo::Collective coll) const;

 private:
  std::string global_;
  std::map<algo::Collective, std::string> per_coll_;
};

// A communicator's collective settings, read from the environment once when it is created.
struct CollConfig {
  Selector selector;    // TUTTI_ALGO
  int nchannels = 1;    // TUTTI_NCHANNELS
  int64_t chunk_bytes = 0;  // TUTTI_CHUNK_BYTES
  static Result<CollConfig> FromEnv();
};

// "allreduce", "all_reduce", "AllReduce" ... -> Collective.
bool ParseCollective(const std::string& name, algo::Collective* out);

}  // namespace tutti
