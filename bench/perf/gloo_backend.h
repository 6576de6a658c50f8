// The Gloo back-end of the perf harness: PerfBackend over Gloo's C++ collectives, so that
// gloo_perf prints tutti_perf's table for Gloo (as packaged by Debian: libgloo-dev, 2022).
//
// Rendezvous: the ranks meet in tutti's TCP store (rank 0 hosts it at MASTER_ADDR:MASTER_PORT
// with TUTTI_SECRET, as tutti_perf does; tuttirun sets them), adapted to Gloo's
// rendezvous::Store; Gloo's own stores in this version are a file store, an in-process hash
// store and Redis. Then a full mesh of Gloo TCP pairs: on loopback when every rank is on this
// host, else on GLOO_SOCKET_IFNAME's address or the host name's.
//
// What each collective calls (Gloo's option-struct API unless noted):
//   all_reduce      gloo::allreduce (ring by default; --algo ring | bcube)
//   all_gather      gloo::allgather (ring; in place: no input, own block at recv + rank x count)
//   reduce_scatter  --algo allreduce (the default): gloo::allreduce of the whole n x count array
//                   (out of place into a scratch buffer, then this rank's block copied out; in
//                   place the block is already at send + rank x count). That moves about twice
//                   a reduce-scatter's bytes (busbw still uses the reduce-scatter factor), but
//                   it is the safe way with this Gloo (PyTorch's Gloo back-end does not include
//                   gloo/reduce_scatter.h either).
//                   --algo halving_doubling: gloo::ReduceScatterHalvingDoubling (the older
//                   algorithm-object API, the only reduce-scatter this Gloo has). It has a race:
//                   its final step copies a rank's block to the start of the buffer while an
//                   earlier send from there may still be in flight (sends are never waited for),
//                   so under load, with messages larger than the socket buffers, a peer can
//                   receive overwritten data (seen here at 32 MiB on 2 ranks: the tail of rank
//                   0's block wrong). It works in place on the whole n x count buffer and leaves
//                   a rank's block at its start, so in place the block is then moved to send +
//                   rank x count, and out of place the input is first copied to a scratch
//                   buffer (both copies timed). The object is kept for the last buffer/count/
//                   type/op (its set-up exchanges nothing but is not free).
//   broadcast       gloo::broadcast (binomial tree)
//   reduce          gloo::reduce (ring; non-root ranks also need an output buffer)
//   scatter, gather gloo::scatter, gloo::gather (root sends to / receives from every rank)
//   all_to_all      gloo::alltoall (in place: the input is first copied to a scratch buffer,
//                   Gloo's alltoall needs two buffers)
//   send_recv       unbound buffers: recv from r-1 and send to r+1 posted, then both waited
//   barrier         gloo::barrier (dissemination)
// Types: reductions use Gloo's element-wise functions (gloo/math.h) for int8..uint64, float,
// double and fp16 (gloo::float16, combined in float); bf16 and fp8 reductions, avg and
// premul_sum are skipped (Supports() false). Collectives that only move data move every type.
// Timeouts: -T (else 300 s) is the Gloo context's timeout. Abort() does nothing (Gloo has no
// abort); a failing rank exits and the launcher stops the others.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "bench/perf/perf_backend.h"
#include "bench/perf/perf_options.h"

namespace gloo {
class Context;
}  // namespace gloo

namespace tutti::perf {

class GlooBackend : public PerfBackend {
 public:
  // OK when `algorithm` is "" or one Gloo has for `coll` (all_reduce: ring, bcube;
  // reduce_scatter: allreduce, halving_doubling).
  static Status CheckAlgorithm(Coll coll, const std::string& algorithm);
  // Reads the launch environment (LaunchInfoFromEnv), meets the other ranks through tutti's
  // store and connects the Gloo full mesh.
  static Result<std::unique_ptr<PerfBackend>> Create(const PerfOptions& o);
  ~GlooBackend() override;

  std::string name() const override { return "gloo"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string Describe() const override;
  Status SetAlgorithm(Coll coll, const std::string& algorithm) override;
  bool Supports(Coll coll, DataType type, RedOp op) const override;

  Status AllReduce(const void* send, void* recv, size_t count, DataType type, const Reduction& red) override;
  Status AllGather(const void* send, void* recv, size_t count, DataType type) override;
  Status ReduceScatter(const void* send, void* recv, size_t count, DataType type, const Reduction& red) override;
  Status Broadcast(const void* send, void* recv, size_t count, DataType type, int root) override;
  Status Reduce(const void* send, void* recv, size_t count, DataType type, const Reduction& red, int root) override;
  Status Scatter(const void* send, void* recv, size_t count, DataType type, int root) override;
  Status Gather(const void* send, void* recv, size_t count, DataType type, int root) override;
  Status AllToAll(const void* send, void* recv, size_t count, DataType type) override;
  Status SendRecv(const void* send, int send_peer, void* recv, int recv_peer, size_t count, DataType type) override;
  Status Barrier() override;
  Result<double> AllReduceDouble(double value, Agg agg) override;

  // One cached reduce-scatter object (type-erased; defined in the .cc).
  struct CachedReduceScatter {
    virtual ~CachedReduceScatter() noexcept(false) {}  // Gloo's algorithm objects may throw
    virtual void Run() = 0;
    void* buf = nullptr;
    size_t count = 0;
    DataType type = DataType::kFloat32;
    RedOp op = RedOp::kSum;
  };

 private:
  GlooBackend() = default;
  char* Scratch(size_t bytes);

  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  std::string device_;           // the Gloo device's description
  std::shared_ptr<void> store_;  // rank 0: the store server (kept while the job lives)
  std::shared_ptr<gloo::Context> ctx_;
  bool bcube_ = false;             // --algo bcube for all_reduce
  bool halving_doubling_ = false;  // --algo halving_doubling for reduce_scatter
  std::vector<char> scratch_;
  std::unique_ptr<CachedReduceScatter> rs_;
};

}  // namespace tutti::perf
