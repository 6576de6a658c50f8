// TuttiBackend: torch.distributed's process-group backend "tutti" (CPU tensors), a c10d::Backend
// over one tutti Communicator formed through the store torch gives the group.
//
// Every call starts tutti's asynchronous form and returns a TuttiWork at once (async_op=False is
// torch waiting on it). Tensors that are not contiguous, lists of tensors and uneven all-to-all
// splits go through contiguous buffers the call keeps, copied into the caller's tensors when it
// succeeds. Failures (timeouts, dead ranks, mismatched calls) raise DistBackendError with tutti's
// message, naming the rank, the call and the peer.
#pragma once

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "core/communicator.h"
#include "tools/torch/torch_work.h"

namespace tutti::torch_backend {

class TuttiBackend : public c10d::Backend {
 public:
  // Forms the communicator (collective over the group's ranks, through `store`).
  TuttiBackend(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size, std::chrono::milliseconds timeout);
  ~TuttiBackend() override;

  const std::string getBackendName() const override { return "tutti"; }

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors, const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors, const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                     const c10d::AllreduceCoalescedOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors, const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_coalesced(std::vector<std::vector<at::Tensor>>& outputs,
                                                     std::vector<at::Tensor>& inputs,
                                                     const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_into_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                                 std::vector<at::Tensor>& inputs,
                                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
                                        const c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& outputs,
                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                                 std::vector<at::Tensor>& inputs,
                                                                 const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input, std::vector<int64_t>& output_splits,
                                               std::vector<int64_t>& input_splits,
                                               const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
                                          const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dst, int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int src, int tag) override;
  c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor>& tensors, int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override;

  void setTimeout(std::chrono::milliseconds timeout) override;
  void abort() override;
  void shutdown() override;

 private:
  struct Call;
  Call Begin(const char* what, std::chrono::milliseconds timeout);
  c10::intrusive_ptr<c10d::Work> Issue(Call& call, c10d::OpType type);
  CollOptions Options(const Call& call) const;
  // One all_gather into `output` (size() inputs) / reduce_scatter of `input`, added to `call`.
  void AddAllGather(Call& call, const at::Tensor& output, const at::Tensor& input);
  void AddReduceScatter(Call& call, const at::Tensor& output, const at::Tensor& input, const c10d::ReduceOp& op);
  // A receive from `src` (or kAnySource).
  c10::intrusive_ptr<c10d::Work> Receive(std::vector<at::Tensor>& tensors, int src, int tag, const char* what,
                                         c10d::OpType type);
  std::shared_ptr<Communicator> comm_;  // shared with the Completer, which Works may keep
  std::shared_ptr<Completer> completer_;
  double timeout_s_;
};

}  // namespace tutti::torch_backend
