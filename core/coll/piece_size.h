// The piece size a collective over tcp is cut into (its schedule's chunk), when nobody asked for
// one (TUTTI_CHUNK_BYTES, CommOptions): every rank must pick the same, so every input is the same
// on every rank of a communicator.
#pragma once

#include <cstdint>

namespace tutti {

// Over tcp, pieces unless asked otherwise: on a network link the ranks then keep it busy both
// ways while each piece is forwarded (1 Gbit/s between namespace hosts, bench/link_bench.sh:
// 256 KiB pieces took 2 hosts' ring all_reduce of 1-4 MiB from 79-87% to 92-97% of the raw TCP
// rate). Between hosts, calls up to 4 MiB take 64 KiB pieces: with 256 KiB a rank's block of a
// 1-4 MiB all_gather on 4 hosts was a single piece, forwarded only once whole (84-88% of raw;
// 64 KiB: 97-101%); larger calls keep 256 KiB (as good there). Inside one host (loopback) the
// CPU and not a link is the limit and each message costs it: 256 KiB (64 KiB pieces took 1.3-2.3x
// as long at 1-4 MiB), and 1 MiB when the host's ranks outnumber its CPUs, where every message
// also costs the switches between the ranks that share a CPU (4 ranks on 2 CPUs, 2-128 MiB:
// 1 MiB pieces took all_reduce, reduce_scatter, all_gather and broadcast 1.1-1.3x faster at
// 8 MiB and up; at 2 ranks they were no better).
//   between_hosts  the communicator's ranks are not all on one host (the same on every rank)
//   call_bytes     the call's size as nccl-tests counts it
//   local_ranks    ranks on this host; host_cpus: its online CPUs (the same for all its ranks)
inline int64_t TcpPieceBytes(bool between_hosts, uint64_t call_bytes, int local_ranks, int host_cpus) {
  constexpr uint64_t kLinkSmallCallBytes = 4 << 20;
  if (between_hosts) return call_bytes <= kLinkSmallCallBytes ? 64 << 10 : 256 << 10;
  return host_cpus > 0 && local_ranks > host_cpus ? 1 << 20 : 256 << 10;
}

}  // namespace tutti
