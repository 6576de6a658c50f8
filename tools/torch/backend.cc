#include "tools/torch/backend.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cstring>

#include "tools/torch/c10d_store.h"
#include "tools/torch/torch_types.h"

namespace tutti::torch_backend {
namespace {

double Seconds(std::chrono::milliseconds ms) { return static_cast<double>(ms.count()) / 1000.0; }

void CheckOne(const std::vector<at::Tensor>& tensors, const std::string& what) {
  TORCH_CHECK(tensors.size() == 1, "tutti: ", what, " takes one tensor per rank (got ", tensors.size(), ")");
  CheckCpuTensor(tensors[0], what);
}

// Copies block i of `flat` (n elements each) into targets[i].
void CopyBlocksOut(const std::vector<at::Tensor>& targets, const at::Tensor& flat) {
  for (size_t i = 0; i < targets.size(); ++i) {
    at::Tensor dst = targets[i];
    const int64_t n = dst.numel();
    dst.copy_(flat.narrow(0, static_cast<int64_t>(i) * n, n).view(dst.sizes()));
  }
}

void CheckSameShape(const at::Tensor& a, const at::Tensor& b, const std::string& what) {
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), "tutti: ", what, ": tensors of types ", a.scalar_type(), " and ",
              b.scalar_type(), " mixed");
  TORCH_CHECK(a.numel() == b.numel(), "tutti: ", what, ": tensors of ", a.numel(), " and ", b.numel(),
              " elements where they must be equal");
}

}  // namespace

// One torch call being set up: its name for messages, and the state its Work will hold.
struct TuttiBackend::Call {
  std::string what;
  std::shared_ptr<CallState> st = std::make_shared<CallState>();
  TuttiBackend* self = nullptr;

  // A contiguous tensor with t's contents, kept for the call.
  at::Tensor Input(const at::Tensor& t) {
    at::Tensor c = t.contiguous();
    st->keep.push_back(c);
    return c;
  }
  // A contiguous tensor the call writes (with t's contents, for in-place calls), copied into t
  // on success when t is not contiguous itself.
  at::Tensor Output(const at::Tensor& t) {
    at::Tensor c = t.contiguous();
    st->keep.push_back(c);
    if (!c.is_same(t)) st->copy_back.emplace_back(t, c);
    return c;
  }
  // A scratch buffer of n elements like t.
  at::Tensor Scratch(const at::Tensor& like, int64_t n) {
    at::Tensor c = at::empty({n}, like.options().memory_format(at::MemoryFormat::Contiguous));
    st->keep.push_back(c);
    return c;
  }
  // Adds a started tutti call; a failure to start throws (what started already is finished by
  // the completer, which keeps the buffers until then).
  void Add(Result<Work> r) {
    if (!r.ok()) {
      if (!st->works.empty()) self->completer_->Adopt(st, nullptr);
      Throw(r.status());
    }
    st->works.push_back(std::move(r).value());
  }
};

TuttiBackend::TuttiBackend(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                           std::chrono::milliseconds timeout)
    : c10d::Backend(rank, size), timeout_s_(Seconds(timeout)) {
  CommOptions opts;
  if (timeout.count() > 0) opts.timeout_s = timeout_s_;
  auto comm = Communicator::Create(std::make_shared<C10dStore>(store), rank, size, opts);
  if (!comm.ok()) Throw(comm.status());
  comm_ = std::shared_ptr<Communicator>(std::move(comm).value());
  completer_ = std::make_shared<Completer>(comm_);
}

TuttiBackend::~TuttiBackend() { shutdown(); }

void TuttiBackend::shutdown() {
  // Calls still in flight fail now; the functions the completer set for them run before Destroy
  // returns, completing their futures and releasing what they kept.
  if (comm_) comm_->Destroy();
}

void TuttiBackend::abort() {
  // Pending calls fail with this error; their futures complete as they do.
  if (comm_) comm_->Abort("process group aborted");
}

void TuttiBackend::setTimeout(std::chrono::milliseconds timeout) { timeout_s_ = Seconds(timeout); }

TuttiBackend::Call TuttiBackend::Begin(const char* what, std::chrono::milliseconds timeout) {
  Call c;
  c.what = what;
  c.self = this;
  c.st->timeout_s = timeout.count() > 0 ? Seconds(timeout) : timeout_s_;
  return c;
}

CollOptions TuttiBackend::Options(const Call& call) const {
  CollOptions o;
  o.timeout_s = call.st->timeout_s;
  return o;
}

c10::intrusive_ptr<c10d::Work> TuttiBackend::Issue(Call& call, c10d::OpType type) {
  return c10::make_intrusive<TuttiWork>(getRank(), type, call.st, completer_);
}

c10::intrusive_ptr<c10d::Work> TuttiBackend::broadcast(std::vector<at::Tensor>& tensors,
                                                       const c10d::BroadcastOptions& opts) {
  Call c = Begin("broadcast", opts.timeout);
  CheckOne(tensors, c.what);
  at::Tensor buf = c.Output(tensors[0]);
  Elements e = ForCopy(buf);
  c.Add(comm_->IBroadcast(e.data, e.data, e.count, e.type, static_cast<int>(opts.rootRank), Options(c)));
  c.st->outputs = tensors;
  return Issue(c, c10d::OpType::BROADCAST);
}

c10::intrusive_ptr<c10d::Work> TuttiBackend::allreduce(std::vector<at::Tensor>& tensors,
                                                       const c10d::AllreduceOptions& opts) {
  Call c = Begin("all_reduce", opts.timeout);
  CheckOne(tensors, c.what);
  TORCH_CHECK(!opts.sparseIndices.has_value(), "tutti: all_reduce of sparse tensors is not supported");
  at::Tensor buf = c.Output(tensors[0]);
  Reduction r;
  Elements e = ForReduce(buf, opts.reduceOp, c.what, &r);
  CollOptions o = Options(c);
  o.premul_scalar = r.premul_scalar;
  c.Add(comm_->IAllReduce(e.data, e.data, e.count, e.type, r.op, o));
  c.st->outputs = tensors;
  return Issue(c, c10d::OpType::ALLREDUCE);
}

c10::intrusive_ptr<c10d::Work> TuttiBackend::allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                                 const c10d::AllreduceCoalescedOptions& opts) {
  Call c = Begin("all_reduce_coalesced", opts.timeout);
  TORCH_CHECK(!tensors.empty(), "tutti: all_reduce_coalesced of no tensors");
  bool same_type = true;
  for (const at::Tensor& t : tensors) {
    CheckCpuTensor(t, c.what);
    same_type = same_type && t.scalar_type() == tensors[0].scalar_type();
  }
  Reduction r;
  CollOptions o = Options(c);
  if (same_type && tensors.size() > 1) {
    // One call over the tensors laid end to end, copied back on success.
    std::vector<at::Tensor> flat;
    for (const at::Tensor& t : tensors) flat.push_back(t.reshape({-1}));
    at::Tensor buf = at::cat(flat);
    c.st->keep.push_back(buf);
    Elements e = ForReduce(buf, opts.reduceOp, c.what, &r);
    o.premul_scalar = r.premul_scalar;
    c.Add(comm_->IAllReduce(e.data, e.data, e.count, e.type, r.op, o));
    std::vector<at::Tensor> targets = tensors;
    c.st->finish = [targets, buf] {
      int64_t at = 0;
      for (const at::Tensor& t : targets) {
        at::Tensor dst = t;
        dst.copy_(buf.narrow(0, at, t.numel()).view(t.sizes()));
        at += t.numel();
      }
    };
  } else {
    for (const at::Tensor& t : tensors) {
      at::Tensor buf = c.Output(t);
      Elements e = ForReduce(buf, opts.reduceOp, c.what, &r);
      o.premul_scalar = r.premul_scalar;
      c.Add(comm_->IAllReduce(e.data, e.data, e.count, e.type, r.op, o));
    }
  }
  c.st->outputs = tensors;
  return Issue(c, c10d::OpType::ALLREDUCE_COALESCED);
}

c10::intrusive_ptr<c10d::Work> TuttiBackend::reduce(std::vector<at::Tensor>& tensors, const c10d::ReduceOptions& opts) {
  Call c = Begin("reduce", opts.timeout);
  CheckOne(tensors, c.what);
  at::Tensor buf = c.Output(tensors[0]);
  Reduction r;
  Elements e = ForReduce(buf, opts.reduceOp, c.what, &r);
  CollOptions o = Options(c);
  o.premul_scalar = r.premul_scalar;
  c.Add(comm_->IReduce(e.data, e.data, e.count, e.type, r.op, static_cast<int>(opts.rootRank), o));
  c.st->outputs = tensors;
  return Issue(c, c10d::OpType::REDUCE);
}

c10::intrusive_ptr<c10d::Work> TuttiBackend::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                                       std::vector<at::Tensor>& inputs,
                                                       const c10d::AllgatherOptions& opts) {
  Call c = Begin("all_gather", opts.timeout);
  CheckOne(inputs, c.what);
  TORCH_CHECK(outputs.size() == 1 && static_cast<int>(outputs[0].size()) == getSize(), "tutti: all_gather needs ",
              getSize(), " output tensors, one per rank");
  for (const at::Tensor& t : outputs[0]) {
    CheckCpuTensor(t, c.what);
    CheckSameShape(t, inputs[0], c.what);
  }
  at::Tensor in = c.Input(inputs[0]);
  const int64_t n = in.numel();
  at::Tensor flat = c.Scratch(in, n * getSize());
  Elements s = ForCopy(in), r = ForCopy(flat);
  c.Add(comm_->IAllGather(s.data, r.data, s.count, s.type, Options(c)));
  std::vector<at::Tensor> targets = outputs[0];
  c.st->finish = [targets, flat] { CopyBlocksOut(targets, flat); };
  c.st->outputs = outputs[0];
  return Issue(c, c10d::OpType::ALLGATHER);
}

void TuttiBackend::AddAllGather(Call& c, const at::Tensor& output, const at::Tensor& input) {
  CheckCpuTensor(output, c.what);
  CheckCpuTensor(input, c.what);
  TORCH_CHECK(output.scalar_type() == input.scalar_type(), "tutti: ", c.what, ": output ", output.scalar_type(),
              " and input ", input.scalar_type(), " differ");
  TORCH_CHECK(output.numel() == input.numel() * getSize(), "tutti: ", c.what, ": output of ", output.numel(),
              " elements for ", getSize(), " inputs of ", input.numel());
  at::Tensor in = c.Input(input), out = c.Output(output);
  Elements s = ForCopy(in), r = ForCopy(out);
  c.Add(comm_->IAllGather(s.data, r.data, s.count, s.type, Options(c)));
}

c10::intrusive_ptr<c10d::Work> TuttiBackend::_allgather_base(at::Tensor& output, at::Tensor& input,
                                                             const c10d::AllgatherOptions& opts) {
  Call c = Begin("all_gather_into_tensor", opts.timeout);
  AddAllGather(c, output, input);
  c.st->outputs = {output};
  return Issue(c, c10d::OpType::_ALLGATHER_BASE);
}

c10::intrusive_ptr<c10d::Work> TuttiBackend::allgather_coalesced(std::vector<std::vector<at::Tensor>>& outputs,
                                                                 std::vector<at::Tensor>& inputs,
                                                                 const c10d::AllgatherOptions& opts) {
  Call c = Begin("all_gather_coalesced", opts.timeout);
  TORCH_CHECK(outputs.size() == static_cast<size_t>(getSize()), "tutti: ", c.what, " needs ", getSize(),
              " output lists, one per rank (got ", outputs.size(), ")");
  std::vector<at::Tensor> flats;
  for (size_t j = 0; j < inputs.size(); ++j) {
    CheckCpuTensor(inputs[j], c.what);
    at::Tensor in = c.Input(inputs[j]);
    at::Tensor flat = c.Scratch(in, in.numel() * getSize());
    Elements s = ForCopy(in), r = ForCopy(flat);
    c.Add(comm_->IAllGather(s.data, r.data, s.count, s.type, Options(c)));
    flats.push_back(flat);
  }
  for (const auto& list : outputs) {
    TORCH_CHECK(list.size() == inputs.size(), "tutti: ", c.what, ": an output list of ", list.size(), " tensors for ",
                inputs.size(), " inputs");
    for (size_t j = 0; j < list.size(); ++j) CheckSameShape(list[j], inputs[j], c.what);
  }
  auto targets = outputs;
  c.st->finish = [targets, flats] {
    // Input j gathered: rank i's piece goes to targets[i][j].
    for (size_t j = 0; j < flats.size(); ++j) {
      std::vector<at::Tensor> column;
      for (const auto& list : targets) column.push_back(list[j]);
      CopyBlocksOut(column, flats[j]);
    }
  };
  for (const auto& list : outputs) c.st->outputs.insert(c.st->outputs.end(), list.begin(), list.end());
  return Issue(c, c10d::OpType::ALLGATHER_COALESCED);
}

c10::intrusive_ptr<c10d::Work> TuttiBackend::allgather_into_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                                             std::vector<at::Tensor>& inputs,
                                                                             const c10d::AllgatherOptions& opts) {
  Call c = Begin("all_gather_into_tensor_coalesced", opts.timeout);
  TORCH_CHECK(outputs.size() == inputs.size(), "tutti: ", c.what, ": ", outputs.size(), " outputs for ",
              inputs.size(), " inputs");
  for (size_t j = 0; j < inputs.size(); ++j) AddAllGather(c, outputs[j], inputs[j]);
  c.st->outputs = outputs;
  return Issue(c, c10d::OpType::COALESCED);
}

c10::intrusive_ptr<c10d::Work> TuttiBackend::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                                    std::vector<at::Tensor>& inputs, const c10d::GatherOptions& opts) {
  Call c = Begin("gather", opts.timeout);
  CheckOne(inputs, c.what);
  const int root = static_cast<int>(opts.rootRank);
  const bool is_root = getRank() == root;
  if (is_root) {
    TORCH_CHECK(outputs.size() == 1 && static_cast<int>(outputs[0].size()) == getSize(), "tutti: gather at the root needs ",
                getSize(), " output tensors, one per rank");
    for (const at::Tensor& t : outputs[0]) {
      CheckCpuTensor(t, c.what);
      CheckSameShape(t, inputs[0], c.what);
    }
  } else {
    TORCH_CHECK(outputs.empty() || (outputs.size() == 1 && outputs[0].empty()),
                "tutti: gather: only the root (rank ", root, ") passes output tensors");
  }
  at::Tensor in = c.Input(inputs[0]);
  const int64_t n = in.numel();
  at::Tensor flat = is_root ? c.Scratch(in, n * getSize()) : at::Tensor();
  Elements s = ForCopy(in);
  c.Add(comm_->IGather(s.data, is_root ? flat.data_ptr() : nullptr, s.count, s.type, root, Options(c)));
  if (is_root) {
    std::vector<at::Tensor> targets = outputs[0];
    c.st->finish = [targets, flat] { CopyBlocksOut(targets, flat); };
    c.st->outputs = outputs[0];
  }
  return Issue(c, c10d::OpType::GATHER);
}

c10::intrusive_ptr<c10d::Work> TuttiBackend::scatter(std::vector<at::Tensor>& outputs,
                                                     std::vector<std::vector<at::Tensor>>& inputs,
                                                     const c10d::ScatterOptions& opts) {
  Call c = Begin("scatter", opts.timeout);
  CheckOne(outputs, c.what);
  const int root = static_cast<int>(opts.rootRank);
  const bool is_root = getRank() == root;
  at::Tensor flat;
  if (is_root) {
    TORCH_CHECK(inputs.size() == 1 && static_cast<int>(inputs[0].size()) == getSize(), "tutti: scatter at the root needs ",
                getSize(), " input tensors, one per rank");
    std::vector<at::Tensor> parts;
    for (const at::Tensor& t : inputs[0]) {
      CheckCpuTensor(t, c.what);
      CheckSameShape(t, outputs[0], c.what);
      parts.push_back(t.reshape({-1}));
    }
    flat = at::cat(parts);
    c.st->keep.push_back(flat);
  } else {
    TORCH_CHECK(inputs.empty() || (inputs.size() == 1 && inputs[0].empty()),
                "tutti: scatter: only the root (rank ", root, ") passes input tensors");
  }
  at::Tensor out = c.Output(outputs[0]);
  Elements r = ForCopy(out);
  c.Add(comm_->IScatter(is_root ? flat.data_ptr() : nullptr, r.data, r.count, r.type, root, Options(c)));
  c.st->outputs = outputs;
  return Issue(c, c10d::OpType::SCATTER);
}

c10::intrusive_ptr<c10d::Work> TuttiBackend::reduce_scatter(std::vector<at::Tensor>& outputs,
                                                            std::vector<std::vector<at::Tensor>>& inputs,
                                                            const c10d::ReduceScatterOptions& opts) {
  Call c = Begin("reduce_scatter", opts.timeout);
  CheckOne(outputs, c.what);
  TORCH_CHECK(inputs.size() == 1 && static_cast<int>(inputs[0].size()) == getSize(), "tutti: reduce_scatter needs ",
              getSize(), " input tensors, one per rank");
  std::vector<at::Tensor> parts;
  for (const at::Tensor& t : inputs[0]) {
    CheckCpuTensor(t, c.what);
    CheckSameShape(t, outputs[0], c.what);
    parts.push_back(t.reshape({-1}));
  }
  at::Tensor flat = at::cat(parts);
  c.st->keep.push_back(flat);
  at::Tensor out = c.Output(outputs[0]);
  Reduction r;
  Elements s = ForReduce(flat, opts.reduceOp, c.what, &r);
  Elements d = ForReduce(out, opts.reduceOp, c.what, &r);
  CollOptions o = Options(c);
  o.premul_scalar = r.premul_scalar;
  c.Add(comm_->IReduceScatter(s.data, d.data, d.count, d.type, r.op, o));
  c.st->outputs = outputs;
  return Issue(c, c10d::OpType::REDUCE_SCATTER);
}

void TuttiBackend::AddReduceScatter(Call& c, const at::Tensor& output, const at::Tensor& input,
                                    const c10d::ReduceOp& op) {
  CheckCpuTensor(output, c.what);
  CheckCpuTensor(input, c.what);
  TORCH_CHECK(output.scalar_type() == input.scalar_type() && input.numel() == output.numel() * getSize(), "tutti: ",
              c.what, ": input must hold ", getSize(), " outputs of its type (", input.numel(), " elements of ",
              input.scalar_type(), " for ", output.numel(), " of ", output.scalar_type(), ")");
  at::Tensor in = c.Input(input), out = c.Output(output);
  Reduction r;
  Elements s = ForReduce(in, op, c.what, &r);
  Elements d = ForReduce(out, op, c.what, &r);
  CollOptions o = Options(c);
  o.premul_scalar = r.premul_scalar;
  c.Add(comm_->IReduceScatter(s.data, d.data, d.count, d.type, r.op, o));
}

c10::intrusive_ptr<c10d::Work> TuttiBackend::_reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                                  const c10d::ReduceScatterOptions& opts) {
  Call c = Begin("reduce_scatter_tensor", opts.timeout);
  AddReduceScatter(c, output, input, opts.reduceOp);
  c.st->outputs = {output};
  return Issue(c, c10d::OpType::_REDUCE_SCATTER_BASE);
}

c10::intrusive_ptr<c10d::Work> TuttiBackend::reduce_scatter_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                                             std::vector<at::Tensor>& inputs,
                                                                             const c10d::ReduceScatterOptions& opts) {
  Call c = Begin("reduce_scatter_tensor_coalesced", opts.timeout);
  TORCH_CHECK(outputs.size() == inputs.size(), "tutti: ", c.what, ": ", outputs.size(), " outputs for ",
              inputs.size(), " inputs");
  for (size_t j = 0; j < inputs.size(); ++j) AddReduceScatter(c, outputs[j], inputs[j], opts.reduceOp);
  c.st->outputs = outputs;
  return Issue(c, c10d::OpType::COALESCED);
}

c10::intrusive_ptr<c10d::Work> TuttiBackend::alltoall_base(at::Tensor& output, at::Tensor& input,
                                                           std::vector<int64_t>& output_splits,
                                                           std::vector<int64_t>& input_splits,
                                                           const c10d::AllToAllOptions& opts) {
  Call c = Begin("all_to_all_single", opts.timeout);
  CheckCpuTensor(output, c.what);
  CheckCpuTensor(input, c.what);
  TORCH_CHECK(output.scalar_type() == input.scalar_type(), "tutti: ", c.what, ": output ", output.scalar_type(),
              " and input ", input.scalar_type(), " differ");
  const int n = getSize();
  c.st->outputs = {output};
  if (output_splits.empty() && input_splits.empty()) {
    TORCH_CHECK(input.numel() == output.numel() && input.numel() % n == 0, "tutti: ", c.what, ": input and output of ",
                input.numel(), " and ", output.numel(), " elements; without split sizes both must hold ", n,
                " equal blocks");
    at::Tensor in = c.Input(input), out = c.Output(output);
    Elements s = ForCopy(in), r = ForCopy(out);
    c.Add(comm_->IAllToAll(s.data, r.data, s.count / n, s.type, Options(c)));
    return Issue(c, c10d::OpType::ALLTOALL_BASE);
  }
  // Splits are counted in rows of dimension 0; an empty list means equal blocks.
  auto rows = [&](const at::Tensor& t, std::vector<int64_t>& splits, const char* which) {
    const int64_t total = t.dim() == 0 ? 1 : t.size(0);
    if (splits.empty()) {
      TORCH_CHECK(total % n == 0, "tutti: ", c.what, ": ", which, " of ", total, " rows splits into ", n,
                  " equal blocks only if divisible");
      return std::vector<int64_t>(n, total / n);
    }
    TORCH_CHECK(static_cast<int>(splits.size()) == n, "tutti: ", c.what, ": ", splits.size(), " ", which,
                " split sizes for ", n, " ranks");
    int64_t sum = 0;
    for (int64_t v : splits) {
      TORCH_CHECK(v >= 0, "tutti: ", c.what, ": negative ", which, " split size ", v);
      sum += v;
    }
    TORCH_CHECK(sum == total, "tutti: ", c.what, ": ", which, " split sizes add up to ", sum, " rows of ", total);
    return splits;
  };
  std::vector<int64_t> in_rows = rows(input, input_splits, "input");
  std::vector<int64_t> out_rows = rows(output, output_splits, "output");
  const size_t in_row_bytes = input.dim() == 0 ? input.element_size()
                                               : (input.size(0) ? input.nbytes() / input.size(0) : 0);
  const size_t out_row_bytes = output.dim() == 0 ? output.element_size()
                                                 : (output.size(0) ? output.nbytes() / output.size(0) : 0);
  // An input that shares memory with the output is copied first (all_to_all_v is not in place).
  at::Tensor in = input.is_contiguous() && !input.is_alias_of(output) ? input : input.clone(at::MemoryFormat::Contiguous);
  c.st->keep.push_back(in);
  at::Tensor out = c.Output(output);
  Communicator::Blocks sb, rb;
  uint64_t at = 0;
  for (int i = 0; i < n; ++i) {
    sb.counts.push_back(in_rows[i] * in_row_bytes);
    sb.displs.push_back(at);
    at += sb.counts.back();
  }
  at = 0;
  for (int i = 0; i < n; ++i) {
    rb.counts.push_back(out_rows[i] * out_row_bytes);
    rb.displs.push_back(at);
    at += rb.counts.back();
  }
  c.Add(comm_->IAllToAllV(in.data_ptr(), sb, out.data_ptr(), rb, DataType::kUint8, Options(c)));
  return Issue(c, c10d::OpType::ALLTOALL_BASE);
}

c10::intrusive_ptr<c10d::Work> TuttiBackend::alltoall(std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
                                                      const c10d::AllToAllOptions& opts) {
  Call c = Begin("all_to_all", opts.timeout);
  const int n = getSize();
  TORCH_CHECK(static_cast<int>(outputs.size()) == n && static_cast<int>(inputs.size()) == n, "tutti: ", c.what,
              " needs ", n, " input and ", n, " output tensors (got ", inputs.size(), " and ", outputs.size(), ")");
  // The pieces laid end to end (as bytes) on both sides, then tutti's all_to_all_v.
  std::vector<at::Tensor> parts;
  Communicator::Blocks sb, rb;
  for (int i = 0; i < n; ++i) {
    CheckCpuTensor(inputs[i], c.what);
    CheckCpuTensor(outputs[i], c.what);
    TORCH_CHECK(inputs[i].scalar_type() == inputs[0].scalar_type() && outputs[i].scalar_type() == inputs[0].scalar_type(),
                "tutti: ", c.what, ": tensors of different types");
    parts.push_back(inputs[i].reshape({-1}).view(at::kByte));
    sb.counts.push_back(inputs[i].nbytes());
    rb.counts.push_back(outputs[i].nbytes());
  }
  at::Tensor in = at::cat(parts);
  uint64_t total = 0;
  for (uint64_t v : rb.counts) total += v;
  at::Tensor out = at::empty({static_cast<int64_t>(total)}, at::kByte);
  c.st->keep.push_back(in);
  c.st->keep.push_back(out);
  c.Add(comm_->IAllToAllV(in.data_ptr(), sb, out.data_ptr(), rb, DataType::kUint8, Options(c)));
  std::vector<at::Tensor> targets = outputs;
  c.st->finish = [targets, out] {
    int64_t at = 0;
    for (const at::Tensor& t : targets) {
      at::Tensor dst = t;
      const int64_t nb = static_cast<int64_t>(t.nbytes());
      dst.copy_(out.narrow(0, at, nb).view(t.scalar_type()).view(t.sizes()));
      at += nb;
    }
  };
  c.st->outputs = outputs;
  return Issue(c, c10d::OpType::ALLTOALL);
}

c10::intrusive_ptr<c10d::Work> TuttiBackend::send(std::vector<at::Tensor>& tensors, int dst, int tag) {
  Call c = Begin("send", std::chrono::milliseconds(0));
  CheckOne(tensors, c.what);
  at::Tensor buf = c.Input(tensors[0]);
  c.Add(comm_->ISend(buf.data_ptr(), buf.nbytes(), dst, tag));
  c.st->outputs = tensors;
  return Issue(c, c10d::OpType::SEND);
}

c10::intrusive_ptr<c10d::Work> TuttiBackend::Receive(std::vector<at::Tensor>& tensors, int src, int tag,
                                                     const char* what, c10d::OpType type) {
  Call c = Begin(what, std::chrono::milliseconds(0));
  CheckOne(tensors, c.what);
  at::Tensor buf = c.Output(tensors[0]);
  c.Add(comm_->IRecv(buf.data_ptr(), buf.nbytes(), src, tag));
  c.st->outputs = tensors;
  return Issue(c, type);
}

c10::intrusive_ptr<c10d::Work> TuttiBackend::recv(std::vector<at::Tensor>& tensors, int src, int tag) {
  return Receive(tensors, src, tag, "recv", c10d::OpType::RECV);
}

c10::intrusive_ptr<c10d::Work> TuttiBackend::recvAnysource(std::vector<at::Tensor>& tensors, int tag) {
  return Receive(tensors, kAnySource, tag, "recv from any source", c10d::OpType::RECVANYSOURCE);
}

c10::intrusive_ptr<c10d::Work> TuttiBackend::barrier(const c10d::BarrierOptions& opts) {
  Call c = Begin("barrier", opts.timeout);
  c.Add(comm_->IBarrier(Options(c)));
  return Issue(c, c10d::OpType::BARRIER);
}

}  // namespace tutti::torch_backend
