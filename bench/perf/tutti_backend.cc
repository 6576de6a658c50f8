#include "bench/perf/tutti_backend.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "algorithms/registry.h"

namespace tutti::perf {
namespace {

constexpr int kSendRecvTag = 7;

bool ToAlgoCollective(Coll c, algo::Collective* out) {
  switch (c) {
    case Coll::kAllReduce: *out = algo::Collective::kAllReduce; return true;
    case Coll::kAllGather: *out = algo::Collective::kAllGather; return true;
    case Coll::kReduceScatter: *out = algo::Collective::kReduceScatter; return true;
    case Coll::kBroadcast: *out = algo::Collective::kBroadcast; return true;
    case Coll::kReduce: *out = algo::Collective::kReduce; return true;
    case Coll::kScatter: *out = algo::Collective::kScatter; return true;
    case Coll::kGather: *out = algo::Collective::kGather; return true;
    case Coll::kAllToAll: *out = algo::Collective::kAllToAll; return true;
    case Coll::kSendRecv: return false;
  }
  return false;
}

}  // namespace

Status TuttiBackend::CheckAlgorithm(Coll coll, const std::string& algorithm) {
  if (algorithm.empty()) return OkStatus();
  algo::Collective c;
  if (!ToAlgoCollective(coll, &c))
    return InvalidArgument("--algo " + algorithm + ": " + CollName(coll) +
                           " is point-to-point (ISend/IRecv) and has no algorithms");
  std::vector<std::string> names = algo::AlgorithmsFor(c);
  if (std::find(names.begin(), names.end(), algorithm) != names.end()) return OkStatus();
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  return InvalidArgument("--algo " + algorithm + ": " + CollName(coll) + " has no algorithm \"" + algorithm +
                         "\" (it has: " + list + ")");
}

Result<std::unique_ptr<PerfBackend>> TuttiBackend::Create(const PerfOptions& o) {
  if (Status st = CheckAlgorithm(o.coll, o.algo); !st.ok()) return st;  // no breadcrumb: for the user
  CommOptions co;
  if (o.timeout_s > 0) co.timeout_s = o.timeout_s;
  TUTTI_ASSIGN_OR_RETURN(std::unique_ptr<Communicator> comm, Communicator::InitFromEnv(co));
  std::unique_ptr<PerfBackend> b = std::make_unique<TuttiBackend>(std::move(comm), o.timeout_s > 0 ? o.timeout_s : -1);
  return b;
}

TuttiBackend::TuttiBackend(std::unique_ptr<Communicator> comm, double timeout_s)
    : comm_(std::move(comm)), timeout_s_(timeout_s) {}

TuttiBackend::~TuttiBackend() { comm_->Destroy(); }

std::string TuttiBackend::Describe() const {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  std::set<std::string> transports;
  for (int p = 0; p < comm_->size(); ++p)
    if (p != comm_->rank()) transports.insert(comm_->TransportTo(p));
  std::string t;
  for (const auto& s : transports) t += (t.empty() ? "" : "+") + s;
  if (t.empty()) t = "none";
  return "pid " + std::to_string(getpid()) + " on " + host + " (local rank " + std::to_string(comm_->local_rank()) +
         " of " + std::to_string(comm_->local_size()) + "), transport " + t;
}

Status TuttiBackend::SetAlgorithm(Coll coll, const std::string& algorithm) {
  if (Status st = CheckAlgorithm(coll, algorithm); !st.ok()) return st;
  has_algo_ = !algorithm.empty();
  algo_coll_ = coll;
  algo_ = algorithm;
  return OkStatus();
}

CollOptions TuttiBackend::Options(Coll coll, double premul_scalar) const {
  CollOptions o;
  if (has_algo_ && coll == algo_coll_) o.algorithm = algo_;
  o.timeout_s = timeout_s_;
  o.premul_scalar = premul_scalar;
  return o;
}

Status TuttiBackend::AllReduce(const void* send, void* recv, size_t count, DataType type, const Reduction& red) {
  return comm_->AllReduce(send, recv, count, type, red.op, Options(Coll::kAllReduce, red.premul_scalar));
}
Status TuttiBackend::AllGather(const void* send, void* recv, size_t count, DataType type) {
  return comm_->AllGather(send, recv, count, type, Options(Coll::kAllGather));
}
Status TuttiBackend::ReduceScatter(const void* send, void* recv, size_t count, DataType type, const Reduction& red) {
  return comm_->ReduceScatter(send, recv, count, type, red.op, Options(Coll::kReduceScatter, red.premul_scalar));
}
Status TuttiBackend::Broadcast(const void* send, void* recv, size_t count, DataType type, int root) {
  return comm_->Broadcast(send, recv, count, type, root, Options(Coll::kBroadcast));
}
Status TuttiBackend::Reduce(const void* send, void* recv, size_t count, DataType type, const Reduction& red,
                            int root) {
  return comm_->Reduce(send, recv, count, type, red.op, root, Options(Coll::kReduce, red.premul_scalar));
}
Status TuttiBackend::Scatter(const void* send, void* recv, size_t count, DataType type, int root) {
  return comm_->Scatter(send, recv, count, type, root, Options(Coll::kScatter));
}
Status TuttiBackend::Gather(const void* send, void* recv, size_t count, DataType type, int root) {
  return comm_->Gather(send, recv, count, type, root, Options(Coll::kGather));
}
Status TuttiBackend::AllToAll(const void* send, void* recv, size_t count, DataType type) {
  return comm_->AllToAll(send, recv, count, type, Options(Coll::kAllToAll));
}

Status TuttiBackend::SendRecv(const void* send, int send_peer, void* recv, int recv_peer, size_t count,
                              DataType type) {
  const size_t bytes = count * DataTypeSize(type);
  if (send_peer == comm_->rank() && recv_peer == comm_->rank()) {  // one rank: tutti has no self-messages
    if (bytes > 0 && send != recv) memmove(recv, send, bytes);
    return OkStatus();
  }
  TUTTI_ASSIGN_OR_RETURN(Work r, comm_->IRecv(recv, bytes, recv_peer, kSendRecvTag));
  TUTTI_ASSIGN_OR_RETURN(Work s, comm_->ISend(send, bytes, send_peer, kSendRecvTag));
  Status rs = r.Wait(timeout_s_);
  Status ss = s.Wait(timeout_s_);
  return rs.ok() ? ss : rs;
}

Status TuttiBackend::Barrier() {
  CollOptions o;
  o.timeout_s = timeout_s_;
  return comm_->Barrier(o);
}

Result<double> TuttiBackend::AllReduceDouble(double value, Agg agg) {
  RedOp op = agg == Agg::kSum ? RedOp::kSum : agg == Agg::kMin ? RedOp::kMin : RedOp::kMax;
  CollOptions o;  // the library's own algorithm, whatever --algo says
  o.timeout_s = timeout_s_;
  double out = 0;
  TUTTI_RETURN_IF_ERROR(comm_->AllReduce(&value, &out, 1, DataType::kFloat64, op, o));
  return out;
}

}  // namespace tutti::perf
