// PerfBackend: what tutti_perf needs from a communication library, so that one harness (flags,
// sweep, data, checks, timing, table) measures tutti and, as separate binaries printing the same
// table, other libraries (Open MPI, Gloo).
//
// Every collective is blocking and works on raw host buffers. `count` is per rank, as in
// tutti::Communicator: all_gather's recv and reduce_scatter's send hold size() x count
// elements, as do scatter's send and gather's recv (the harness gives every rank full-size
// buffers, also where a rank's buffer is unused), and both buffers of all_to_all. In-place
// calls use the NCCL layouts: send == recv; all_gather and gather: send = recv + rank x count;
// reduce_scatter and scatter: recv = send + rank x count. A back-end whose library lacks a form
// (an in-place layout, premul_sum, a type) emulates it or says so in Supports().
#pragma once

#include <string>

#include "bench/perf/perf_coll.h"
#include "core/base/status.h"
#include "core/base/dtype.h"

namespace tutti::perf {

// A reduction: the op and, for RedOp::kPremulSum, this rank's factor (each rank's input is
// multiplied by its own scalar, then the products are summed).
struct Reduction {
  RedOp op = RedOp::kSum;
  double premul_scalar = 1.0;
};

// How a double is combined across ranks (for times and error counts).
enum class Agg { kSum, kMin, kMax };

class PerfBackend {
 public:
  virtual ~PerfBackend() = default;

  virtual std::string name() const = 0;  // "tutti", "mpi", "gloo": printed in the preamble
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // One line about this rank (pid, host, transport, ...); rank 0 prints every rank's.
  virtual std::string Describe() const = 0;

  // Chooses the algorithm used for `coll` from now on ("": the library's own choice). An
  // InvalidArgument naming what exists when the library has no such algorithm for `coll`.
  virtual Status SetAlgorithm(Coll coll, const std::string& algorithm) = 0;
  // Whether the library can run `coll` on `type` with `op` (op matters only for reducing
  // collectives). Rows that are not supported are skipped with a note.
  virtual bool Supports(Coll coll, DataType type, RedOp op) const { return true; }

  virtual Status AllReduce(const void* send, void* recv, size_t count, DataType type, const Reduction& red) = 0;
  virtual Status AllGather(const void* send, void* recv, size_t count, DataType type) = 0;
  virtual Status ReduceScatter(const void* send, void* recv, size_t count, DataType type, const Reduction& red) = 0;
  virtual Status Broadcast(const void* send, void* recv, size_t count, DataType type, int root) = 0;
  virtual Status Reduce(const void* send, void* recv, size_t count, DataType type, const Reduction& red,
                        int root) = 0;
  virtual Status Scatter(const void* send, void* recv, size_t count, DataType type, int root) = 0;
  virtual Status Gather(const void* send, void* recv, size_t count, DataType type, int root) = 0;
  virtual Status AllToAll(const void* send, void* recv, size_t count, DataType type) = 0;
  // Sends `count` elements to send_peer while receiving `count` from recv_peer (both posted
  // before either is waited for, so a ring of these cannot deadlock).
  virtual Status SendRecv(const void* send, int send_peer, void* recv, int recv_peer, size_t count,
                          DataType type) = 0;

  virtual Status Barrier() = 0;
  // `value` combined over all ranks; every rank gets the result.
  virtual Result<double> AllReduceDouble(double value, Agg agg) = 0;
  // Gives up after an error so that other ranks do not wait forever; must return promptly.
  virtual void Abort(const std::string& why) {}
};

}  // namespace tutti::perf
