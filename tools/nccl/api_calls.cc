// libnccl.so.2, calls: collectives, send / recv, groups, premul_sum ops.
//
// On host memory a call is complete when it returns (outside a group) or when ncclGroupEnd
// returns (inside one): that keeps NCCL's stream order for any stream, with nothing left for the
// stream to wait for. Calls inside a group are issued together at ncclGroupEnd, so a rank may
// send to and receive from a peer in one group, and one thread may drive several communicators.
#include <cmath>
#include <cstring>
#include <thread>

#include "kernels/narrow_float.h"
#include "tools/nccl/state.h"

using namespace tutti;
using namespace tutti::nccl;

#define NCCL_API extern "C" __attribute__((visibility("default")))

namespace {

// A scalar of NCCL type `t` at p, as a double.
Result<double> ReadScalar(const void* p, int t) {
  if (p == nullptr) return InvalidArgument("null scalar");
  switch (t) {
    case 0: return static_cast<double>(*static_cast<const int8_t*>(p));
    case 1: return static_cast<double>(*static_cast<const uint8_t*>(p));
    case 2: return static_cast<double>(*static_cast<const int32_t*>(p));
    case 3: return static_cast<double>(*static_cast<const uint32_t*>(p));
    case 4: return static_cast<double>(*static_cast<const int64_t*>(p));
    case 5: return static_cast<double>(*static_cast<const uint64_t*>(p));
    case 6: return static_cast<double>(kernels::Float16::FromBits(*static_cast<const uint16_t*>(p)).ToFloat());
    case 7: return static_cast<double>(*static_cast<const float*>(p));
    case 8: return *static_cast<const double*>(p);
    case 9: return static_cast<double>(kernels::BFloat16::FromBits(*static_cast<const uint16_t*>(p)).ToFloat());
    case 10: return static_cast<double>(kernels::Fp8E4M3::FromBits(*static_cast<const uint8_t*>(p)).ToFloat());
    case 11: return static_cast<double>(kernels::Fp8E5M2::FromBits(*static_cast<const uint8_t*>(p)).ToFloat());
  }
  return InvalidArgument("unknown data type " + std::to_string(t));
}

// The tutti op (and premul_sum scalar) for NCCL op `op` on `c`, for data of NCCL type `t`.
Status ResolveOp(ncclComm* c, int op, int t, RedOp* out, CollOptions* o) {
  switch (op) {
    case kSum: *out = RedOp::kSum; return OkStatus();
    case kProd: *out = RedOp::kProd; return OkStatus();
    case kMax: *out = RedOp::kMax; return OkStatus();
    case kMin: *out = RedOp::kMin; return OkStatus();
    case kAvg: *out = RedOp::kAvg; return OkStatus();
    default: break;
  }
  std::lock_guard<std::mutex> lock(c->mu);
  const int i = op - kNumOps;
  if (i < 0 || i >= static_cast<int>(c->ops.size()) || !c->ops[i].live)
    return InvalidArgument("unknown reduction op " + std::to_string(op) + " (not built in, not made by "
                           "ncclRedOpCreatePreMulSum on this communicator, or destroyed)");
  const ncclComm::PremulOp& p = c->ops[i];
  if (p.type != t)
    return InvalidArgument("op " + std::to_string(op) + " was made for data type " + std::to_string(p.type) +
                           ", used with " + std::to_string(t));
  *out = RedOp::kPremulSum;
  if (p.residence == kScalarHostImmediate) {
    o->premul_scalar = p.value;
  } else {
    // ncclScalarDevice: read when the call runs (host-visible memory here).
    TUTTI_ASSIGN_OR_RETURN(o->premul_scalar, ReadScalar(p.scalar, t));
  }
  return OkStatus();
}

struct Args {
  ncclComm* comm;
  DataType type;
};

Result<Args> Begin(ncclComm_t comm, int t, const char* fn) {
  TUTTI_ASSIGN_OR_RETURN(ncclComm * c, Lookup(comm, fn));
  bool ok = false;
  DataType type = TypeOf(t, &ok);
  if (!ok) return InvalidArgument("unknown data type " + std::to_string(t));
  return Args{c, type};
}

// A reduction call: its op resolved (premul_sum's scalar read), then issued now or in the group.
using Reducer = std::function<Result<Work>(Communicator*, DataType, RedOp, const CollOptions&)>;
Status Reducing(ncclComm_t comm, int t, int op, const char* fn, const Reducer& call) {
  TUTTI_ASSIGN_OR_RETURN(Args a, Begin(comm, t, fn));
  CollOptions o;
  RedOp r;
  TUTTI_RETURN_IF_ERROR(ResolveOp(a.comm, op, t, &r, &o));
  Communicator* c = a.comm->comm.get();
  return RunOrQueue(a.comm, [=] { return call(c, a.type, r, o); });
}

}  // namespace

NCCL_API int ncclAllReduce(const void* send, void* recv, size_t count, int t, int op, ncclComm_t comm,
                           ncclCudaStream stream) {
  return Guard(__func__, [&] {
    return Reducing(comm, t, op, "ncclAllReduce", [=](Communicator* c, DataType type, RedOp r, const CollOptions& o) {
      return c->IAllReduce(send, recv, count, type, r, o);
    });
  });
}

NCCL_API int ncclReduce(const void* send, void* recv, size_t count, int t, int op, int root, ncclComm_t comm,
                        ncclCudaStream stream) {
  return Guard(__func__, [&] {
    return Reducing(comm, t, op, "ncclReduce", [=](Communicator* c, DataType type, RedOp r, const CollOptions& o) {
      return c->IReduce(send, recv, count, type, r, root, o);
    });
  });
}

NCCL_API int ncclReduceScatter(const void* send, void* recv, size_t recvcount, int t, int op, ncclComm_t comm,
                               ncclCudaStream stream) {
  return Guard(__func__, [&] {
    return Reducing(comm, t, op, "ncclReduceScatter", [=](Communicator* c, DataType type, RedOp r, const CollOptions& o) {
      return c->IReduceScatter(send, recv, recvcount, type, r, o);
    });
  });
}

NCCL_API int ncclBroadcast(const void* send, void* recv, size_t count, int t, int root, ncclComm_t comm,
                           ncclCudaStream stream) {
  return Guard(__func__, [&] {
    TUTTI_ASSIGN_OR_RETURN(Args a, Begin(comm, t, "ncclBroadcast"));
    Communicator* c = a.comm->comm.get();
    return RunOrQueue(a.comm, [=] { return c->IBroadcast(send, recv, count, a.type, root); });
  });
}

NCCL_API int ncclBcast(void* buff, size_t count, int t, int root, ncclComm_t comm, ncclCudaStream stream) {
  return Guard(__func__, [&] {
    TUTTI_ASSIGN_OR_RETURN(Args a, Begin(comm, t, "ncclBcast"));
    Communicator* c = a.comm->comm.get();
    return RunOrQueue(a.comm, [=] { return c->IBroadcast(buff, buff, count, a.type, root); });
  });
}

NCCL_API int ncclAllGather(const void* send, void* recv, size_t sendcount, int t, ncclComm_t comm,
                           ncclCudaStream stream) {
  return Guard(__func__, [&] {
    TUTTI_ASSIGN_OR_RETURN(Args a, Begin(comm, t, "ncclAllGather"));
    Communicator* c = a.comm->comm.get();
    return RunOrQueue(a.comm, [=] { return c->IAllGather(send, recv, sendcount, a.type); });
  });
}

NCCL_API int ncclAlltoAll(const void* send, void* recv, size_t count, int t, ncclComm_t comm, ncclCudaStream stream) {
  return Guard(__func__, [&] {
    TUTTI_ASSIGN_OR_RETURN(Args a, Begin(comm, t, "ncclAlltoAll"));
    Communicator* c = a.comm->comm.get();
    return RunOrQueue(a.comm, [=] { return c->IAllToAll(send, recv, count, a.type); });
  });
}

NCCL_API int ncclGather(const void* send, void* recv, size_t count, int t, int root, ncclComm_t comm,
                        ncclCudaStream stream) {
  return Guard(__func__, [&] {
    TUTTI_ASSIGN_OR_RETURN(Args a, Begin(comm, t, "ncclGather"));
    Communicator* c = a.comm->comm.get();
    return RunOrQueue(a.comm, [=] { return c->IGather(send, recv, count, a.type, root); });
  });
}

NCCL_API int ncclScatter(const void* send, void* recv, size_t count, int t, int root, ncclComm_t comm,
                         ncclCudaStream stream) {
  return Guard(__func__, [&] {
    TUTTI_ASSIGN_OR_RETURN(Args a, Begin(comm, t, "ncclScatter"));
    Communicator* c = a.comm->comm.get();
    return RunOrQueue(a.comm, [=] { return c->IScatter(send, recv, count, a.type, root); });
  });
}

// NCCL's point-to-point calls have no tag: messages between two ranks arrive in order.
NCCL_API int ncclSend(const void* send, size_t count, int t, int peer, ncclComm_t comm, ncclCudaStream stream) {
  return Guard(__func__, [&] {
    TUTTI_ASSIGN_OR_RETURN(Args a, Begin(comm, t, "ncclSend"));
    const size_t bytes = count * DataTypeSize(a.type);
    if (bytes / DataTypeSize(a.type) != count) return InvalidArgument("count too large");
    Communicator* c = a.comm->comm.get();
    return RunOrQueue(a.comm, [=] { return c->ISend(send, bytes, peer, 0); });
  });
}

NCCL_API int ncclRecv(void* recv, size_t count, int t, int peer, ncclComm_t comm, ncclCudaStream stream) {
  return Guard(__func__, [&] {
    TUTTI_ASSIGN_OR_RETURN(Args a, Begin(comm, t, "ncclRecv"));
    const size_t bytes = count * DataTypeSize(a.type);
    if (bytes / DataTypeSize(a.type) != count) return InvalidArgument("count too large");
    Communicator* c = a.comm->comm.get();
    return RunOrQueue(a.comm, [=] { return c->IRecv(recv, bytes, peer, 0); });
  });
}

NCCL_API int ncclGroupStart() {
  return Guard(__func__, [&] {
    ++ThreadGroup().depth;
    return OkStatus();
  });
}

namespace {

// Ends the outermost group: communicator inits side by side, then the calls issued in order and
// waited for together. Returns the first failure.
Status EndGroup(bool run) {
  Group& g = ThreadGroup();
  std::vector<std::function<Status()>> inits = std::move(g.inits);
  std::vector<Group::Call> calls = std::move(g.calls);
  g.inits.clear();
  g.calls.clear();
  if (!run) return OkStatus();
  Status first;
  if (inits.size() == 1) {
    first = inits[0]();
  } else if (!inits.empty()) {
    std::vector<Status> results(inits.size());
    std::vector<std::thread> threads;
    for (size_t i = 0; i < inits.size(); ++i) threads.emplace_back([&, i] { results[i] = inits[i](); });
    for (auto& t : threads) t.join();
    for (const Status& st : results)
      if (!st.ok() && first.ok()) first = st;
  }
  std::vector<std::pair<ncclComm*, Work>> works;
  for (Group::Call& call : calls) {
    Result<Work> w = call.issue();
    if (!w.ok()) {  // refused (arguments): reported by ncclGroupEnd, not an asynchronous error
      if (first.ok()) first = w.status();
      continue;
    }
    works.emplace_back(call.comm, std::move(w).value());
  }
  for (auto& [comm, w] : works) {
    Status st = w.Wait();
    if (st.ok()) continue;
    if (first.ok()) first = st;
    std::lock_guard<std::mutex> lock(comm->mu);
    if (comm->async_error.ok()) comm->async_error = st;
  }
  return first;
}

}  // namespace

NCCL_API int ncclGroupEnd() {
  return Guard(__func__, [&] {
    Group& g = ThreadGroup();
    if (g.depth == 0) return InvalidUsage("ncclGroupEnd without ncclGroupStart");
    if (--g.depth > 0) return OkStatus();
    return EndGroup(true);
  });
}

NCCL_API int ncclGroupSimulateEnd(ncclSimInfoAbi* info) {
  return Guard(__func__, [&] {
    Group& g = ThreadGroup();
    if (g.depth == 0) return InvalidUsage("ncclGroupSimulateEnd without ncclGroupStart");
    if (info != nullptr && info->magic != kSimInfoMagic)
      return InvalidArgument("the sim info was not initialized with NCCL_SIM_INFO_INITIALIZER");
    if (--g.depth > 0) return OkStatus();
    EndGroup(false).IgnoreError();  // the group's calls are dropped, as simulation does not run them
    return InvalidUsage("time estimates are not supported by tutti yet (the group's calls were not run)");
  });
}

NCCL_API int ncclRedOpCreatePreMulSum(int* op, void* scalar, int t, int residence, ncclComm_t comm) {
  return Guard(__func__, [&] {
    TUTTI_ASSIGN_OR_RETURN(Args a, Begin(comm, t, "ncclRedOpCreatePreMulSum"));
    if (op == nullptr) return InvalidArgument("null op pointer");
    if (residence != kScalarHostImmediate && residence != kScalarDevice)
      return InvalidArgument("unknown scalar residence " + std::to_string(residence));
    ncclComm::PremulOp p;
    p.live = true;
    p.type = t;
    p.residence = residence;
    if (residence == kScalarHostImmediate) {
      TUTTI_ASSIGN_OR_RETURN(p.value, ReadScalar(scalar, t));
    } else {
      if (scalar == nullptr) return InvalidArgument("null scalar");
      if (!a.comm->comm->MemoryOf(scalar, DataTypeSize(a.type)).host_accessible())
        return InvalidUsage("a scalar in device memory is not supported by tutti yet");
      p.scalar = scalar;
    }
    std::lock_guard<std::mutex> lock(a.comm->mu);
    for (size_t i = 0; i < a.comm->ops.size(); ++i)
      if (!a.comm->ops[i].live) {
        a.comm->ops[i] = p;
        *op = kNumOps + static_cast<int>(i);
        return OkStatus();
      }
    if (a.comm->ops.size() >= 1000) return InvalidUsage("too many premul_sum ops alive on this communicator");
    a.comm->ops.push_back(p);
    *op = kNumOps + static_cast<int>(a.comm->ops.size() - 1);
    return OkStatus();
  });
}

NCCL_API int ncclRedOpDestroy(int op, ncclComm_t comm) {
  return Guard(__func__, [&] {
    TUTTI_ASSIGN_OR_RETURN(ncclComm * c, Lookup(comm, "ncclRedOpDestroy"));
    std::lock_guard<std::mutex> lock(c->mu);
    const int i = op - kNumOps;
    if (i < 0 || i >= static_cast<int>(c->ops.size()) || !c->ops[i].live)
      return InvalidArgument("op " + std::to_string(op) + " is not a live op made by ncclRedOpCreatePreMulSum");
    c->ops[i].live = false;
    return OkStatus();
  });
}
