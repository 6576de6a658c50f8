// The MPI back-end of the perf harness: PerfBackend over MPI's collectives on MPI_COMM_WORLD, so
// that mpi_perf prints tutti_perf's table for Open MPI (or any MPI implementing MPI-3).
//
// What each collective calls (in-place forms as MPI defines them, MPI_IN_PLACE):
//   all_reduce      MPI_Allreduce                 (in place: MPI_IN_PLACE as sendbuf)
//   all_gather      MPI_Allgather                 (in place: MPI_IN_PLACE; own block already at
//                                                  recv + rank x count, NCCL's layout too)
//   reduce_scatter  MPI_Reduce_scatter_block      (in place: MPI_IN_PLACE, the input taken from
//                                                  and the result left at the start of the
//                                                  buffer; then moved to NCCL's send + rank x
//                                                  count, a local copy of count elements)
//   broadcast       MPI_Bcast                     (out of place: the root first copies send to
//                                                  recv; MPI's broadcast has one buffer)
//   reduce          MPI_Reduce                    (in place: MPI_IN_PLACE at the root)
//   scatter         MPI_Scatter                   (in place: MPI_IN_PLACE as the root's recvbuf)
//   gather          MPI_Gather                    (in place: MPI_IN_PLACE as the root's sendbuf)
//   all_to_all      MPI_Alltoall                  (in place: MPI_IN_PLACE)
//   send_recv       MPI_Sendrecv
//   barrier         MPI_Barrier
// Types: MPI's own for int8..uint64, float, double. fp16, bf16 and fp8 have no MPI type: the
// reducing collectives skip them (Supports() false), the others move them as 16/8-bit integers
// (a copy is a copy). Ops: sum, prod, min, max (MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX); avg and
// premul_sum have no MPI op and are skipped. --algo: the library chooses (Open MPI's coll
// components, tunable with OMPI_MCA_coll_tuned_* variables); -T is not honoured (MPI has no
// timeouts); after an error Abort() calls MPI_Abort, which ends every rank.
#pragma once

#include <memory>
#include <string>

#include "bench/perf/perf_backend.h"
#include "bench/perf/perf_options.h"

namespace tutti::perf {

class MpiBackend : public PerfBackend {
 public:
  // OK only for "" (the library's choice): MPI has no portable way to name an algorithm.
  static Status CheckAlgorithm(Coll coll, const std::string& algorithm);
  // Checks --algo, then MPI_Init (once per process) with errors returned instead of fatal.
  static Result<std::unique_ptr<PerfBackend>> Create(const PerfOptions& o);
  ~MpiBackend() override;  // MPI_Finalize

  std::string name() const override { return "mpi"; }
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
  void Abort(const std::string& why) override;

 private:
  MpiBackend() = default;

  int rank_ = 0, size_ = 1;
  int local_rank_ = 0, local_size_ = 1;
  std::string library_;  // first line of MPI_Get_library_version
};

}  // namespace tutti::perf
