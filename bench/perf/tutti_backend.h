// The tutti back-end of tutti_perf: PerfBackend over tutti::Communicator.
#pragma once

#include <memory>
#include <string>

#include "bench/perf/perf_backend.h"
#include "bench/perf/perf_options.h"
#include "core/communicator.h"

namespace tutti::perf {

class TuttiBackend : public PerfBackend {
 public:
  // OK when `algorithm` is "" or one of tutti's algorithms for `coll`; else an InvalidArgument
  // listing those that exist. Needs no communicator.
  static Status CheckAlgorithm(Coll coll, const std::string& algorithm);
  // Checks o.algo, then forms the world communicator from the launch environment
  // (Communicator::InitFromEnv) with o.timeout_s (when > 0) as its timeout.
  static Result<std::unique_ptr<PerfBackend>> Create(const PerfOptions& o);

  TuttiBackend(std::unique_ptr<Communicator> comm, double timeout_s);
  ~TuttiBackend() override;

  std::string name() const override { return "tutti"; }
  int rank() const override { return comm_->rank(); }
  int size() const override { return comm_->size(); }
  std::string Describe() const override;
  Status SetAlgorithm(Coll coll, const std::string& algorithm) override;

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
  void Abort(const std::string& why) override { comm_->Abort(why); }

 private:
  CollOptions Options(Coll coll, double premul_scalar = 1.0) const;

  std::unique_ptr<Communicator> comm_;
  double timeout_s_;  // < 0: the communicator's
  bool has_algo_ = false;
  Coll algo_coll_ = Coll::kAllReduce;
  std::string algo_;
};

}  // namespace tutti::perf
