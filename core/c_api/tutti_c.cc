// The C API (tutti.h) over tutti::Communicator: communicators and calls (tutti_work.cc holds
// works and groups, handles.{h,cc} what they share).
//
// Two rules shape these files. No exception may cross into C: every entry point runs its body
// through Guard(), which turns std::bad_alloc into tuttiSystemError ("out of memory") and any
// other exception into tuttiInternalError. And a handle the caller already released must be
// an error, not memory corruption: communicator handles are small shells that stay allocated
// (and reachable) for the life of the process, so a second tuttiCommDestroy finds a shell
// marked destroyed; work handles live in a table, so freeing one twice finds no entry.
#include "core/c_api/handles.h"

using namespace tutti::capi;  // NOLINT: the entry points below are the C API's

namespace {
// The blocks of a v-collective from C arrays of one entry per rank (displs NULL: packed). A
// NULL counts array is an error where the call reads it (`read`), else empty blocks.
tutti::Result<tutti::Communicator::Blocks> BlocksOf(const size_t* counts, const size_t* displs, int n,
                                                    const char* what, bool read) {
  tutti::Communicator::Blocks b;
  if (!read) return b;
  if (counts == nullptr) return tutti::InvalidArgument(std::string("null ") + what + " counts");
  b.counts.assign(counts, counts + n);
  if (displs != nullptr) b.displs.assign(displs, displs + n);
  return b;
}

// An enum argument from C may hold any int (C does not restrict it, C++ does): read its bits
// as an int before looking at it.
template <typename E>
int Raw(const E& e) {
  static_assert(sizeof(E) == sizeof(int));
  int v;
  std::memcpy(&v, &e, sizeof(v));
  return v;
}

tutti::Result<tutti::DataType> T(const tuttiDataType_t& type) {
  using tutti::DataType;
  const int t = Raw(type);
  switch (t) {
    case tuttiInt8: return DataType::kInt8;
    case tuttiUint8: return DataType::kUint8;
    case tuttiInt32: return DataType::kInt32;
    case tuttiUint32: return DataType::kUint32;
    case tuttiInt64: return DataType::kInt64;
    case tuttiUint64: return DataType::kUint64;
    case tuttiFloat16: return DataType::kFloat16;
    case tuttiFloat32: return DataType::kFloat32;
    case tuttiFloat64: return DataType::kFloat64;
    case tuttiBfloat16: return DataType::kBfloat16;
    case tuttiFp8E4M3: return DataType::kFp8E4M3;
    case tuttiFp8E5M2: return DataType::kFp8E5M2;
    case tuttiNumTypes: break;
  }
  return tutti::InvalidArgument("unknown data type " + std::to_string(t));
}

tutti::Result<tutti::RedOp> O(const tuttiRedOp_t& op) {
  using tutti::RedOp;
  const int o = Raw(op);
  switch (o) {
    case tuttiSum: return RedOp::kSum;
    case tuttiProd: return RedOp::kProd;
    case tuttiMax: return RedOp::kMax;
    case tuttiMin: return RedOp::kMin;
    case tuttiAvg: return RedOp::kAvg;
    case tuttiPremulSum:
      return tutti::InvalidArgument("premul_sum needs a scalar: use tuttiAllReducePremulSum");
    case tuttiBand: return RedOp::kBand;
    case tuttiBor: return RedOp::kBor;
    case tuttiBxor: return RedOp::kBxor;
    case tuttiNumOps: break;
  }
  return tutti::InvalidArgument("unknown reduction op " + std::to_string(o));
}
}  // namespace

// Binds `c` to the communicator of handle `h`, `t` / `o` to the converted type / op, or returns
// the error code.
#define TUTTI_COMM(c, h)          \
  auto c##_r = Comm(h);           \
  if (!c##_r.ok()) return ToResult(c##_r.status()); \
  tutti::Communicator& c = **c##_r
#define TUTTI_TYPE(v, t)        \
  auto v##_r = T(t);            \
  if (!v##_r.ok()) return ToResult(v##_r.status()); \
  const tutti::DataType v = *v##_r
#define TUTTI_OP(v, o)          \
  auto v##_r = O(o);            \
  if (!v##_r.ok()) return ToResult(v##_r.status()); \
  const tutti::RedOp v = *v##_r

extern "C" {

const char* tuttiGetErrorString(tuttiResult_t r) {
  switch (r) {
    case tuttiSuccess: return "success";
    case tuttiUnhandledCudaError: return "unhandled CUDA error";
    case tuttiSystemError: return "system error";
    case tuttiInternalError: return "internal error";
    case tuttiInvalidArgument: return "invalid argument";
    case tuttiInvalidUsage: return "invalid usage";
    case tuttiRemoteError: return "remote error";
    case tuttiInProgress: return "in progress";
    case tuttiTimeout: return "timeout";
    case tuttiAborted: return "aborted";
    case tuttiMismatch: return "mismatch";
    case tuttiNotMember: return "not a member";
    case tuttiUnavailable: return "unavailable";
  }
  return "unknown result";
}

const char* tuttiGetLastError(void) { return LastError().c_str(); }

tuttiResult_t tuttiCommInitFromEnv(tuttiComm_t* comm) {
  return Guard(__func__, [&] {
    if (comm == nullptr) return Bad("null comm pointer");
    auto c = tutti::Communicator::InitFromEnv();
    if (!c.ok()) return ToResult(c.status());
    *comm = NewCommHandle(std::move(*c));
    return tuttiSuccess;
  });
}

tuttiResult_t tuttiCommInitRank(tuttiComm_t* comm, int nranks, int rank, const char* master_addr, int master_port,
                                const char* secret) {
  return Guard(__func__, [&] {
    if (comm == nullptr || master_addr == nullptr) return Bad("null argument");
    tutti::LaunchInfo info;
    info.rank = rank;
    info.world_size = nranks;
    info.master_addr = master_addr;
    info.master_port = master_port;
    info.secret = secret ? secret : "";
    info.source = "c-api";
    tutti::CommOptions o;
    o.secret = info.secret;
    o.secret_set = true;
    auto c = tutti::Communicator::Init(info, o);
    if (!c.ok()) return ToResult(c.status());
    *comm = NewCommHandle(std::move(*c));
    return tuttiSuccess;
  });
}

tuttiResult_t tuttiCommSplit(tuttiComm_t comm, int color, int key, tuttiComm_t* newcomm) {
  return Guard(__func__, [&] {
    TUTTI_COMM(c, comm);
    if (newcomm == nullptr) return Bad("null newcomm pointer");
    auto sub = c.Split(color, key);
    if (!sub.ok()) {
      if (sub.status().code() == tutti::Code::kNotMember && color < 0) {
        *newcomm = nullptr;
        return tuttiSuccess;
      }
      return ToResult(sub.status());
    }
    *newcomm = NewCommHandle(std::move(*sub));
    return tuttiSuccess;
  });
}

tuttiResult_t tuttiCommCount(const tuttiComm_t comm, int* count) {
  return Guard(__func__, [&] {
    TUTTI_COMM(c, comm);
    if (count == nullptr) return Bad("null count pointer");
    *count = c.size();
    return tuttiSuccess;
  });
}

tuttiResult_t tuttiCommUserRank(const tuttiComm_t comm, int* rank) {
  return Guard(__func__, [&] {
    TUTTI_COMM(c, comm);
    if (rank == nullptr) return Bad("null rank pointer");
    *rank = c.rank();
    return tuttiSuccess;
  });
}

tuttiResult_t tuttiCommRegister(const tuttiComm_t comm, void* buff, size_t size, void** handle) {
  return Guard(__func__, [&] {
    TUTTI_COMM(c, comm);
    if (handle == nullptr) return Bad("null handle pointer");
    auto reg = c.Register(buff, size);
    if (!reg.ok()) return ToResult(reg.status());
    auto key = std::make_unique<char>();  // a unique address per call, even for a shared registration
    Handles& h = H();
    std::lock_guard<std::mutex> lock(h.mu);
    h.regs.emplace(key.get(), std::make_pair(comm, std::move(*reg)));
    *handle = key.release();
    return tuttiSuccess;
  });
}

tuttiResult_t tuttiCommDeregister(const tuttiComm_t comm, void* handle) {
  return Guard(__func__, [&] {
    TUTTI_COMM(c, comm);
    tutti::Communicator::MemHandle reg;
    {
      Handles& h = H();
      std::lock_guard<std::mutex> lock(h.mu);
      auto it = h.regs.find(handle);
      if (it == h.regs.end())
        return ToResult(tutti::InvalidUsage("tuttiCommDeregister: unknown or already deregistered handle"));
      if (it->second.first != comm) return Bad("tuttiCommDeregister: the handle belongs to another communicator");
      reg = std::move(it->second.second);
      h.regs.erase(it);
    }
    delete static_cast<char*>(handle);
    return ToResult(c.Deregister(reg));
  });
}

tuttiResult_t tuttiCommAbort(tuttiComm_t comm) {
  return Guard(__func__, [&] {
    TUTTI_COMM(c, comm);
    c.Abort("tuttiCommAbort");
    return tuttiSuccess;
  });
}

tuttiResult_t tuttiCommDestroy(tuttiComm_t comm) {
  return Guard(__func__, [&] {
    std::shared_ptr<tutti::Communicator> c;
    {
      if (comm == nullptr) return Bad("null communicator");
      Handles& h = H();
      std::lock_guard<std::mutex> lock(h.mu);
      if (h.comm_set.count(comm) == 0) return Bad("not a communicator handle of this library");
      if (!comm->comm) return ToResult(tutti::InvalidUsage("tuttiCommDestroy: communicator already destroyed"));
      c = std::move(comm->comm);
      // Registrations end with their communicator.
      for (auto it = h.regs.begin(); it != h.regs.end();) {
        if (it->second.first == comm) {
          delete static_cast<const char*>(it->first);
          it = h.regs.erase(it);
        } else {
          ++it;
        }
      }
    }
    c->Destroy();  // the last reference (ours, unless a call is running in another thread)
    return tuttiSuccess;
  });
}

tuttiResult_t tuttiSend(const void* buf, size_t count, tuttiDataType_t t, int peer, int tag, tuttiComm_t comm,
                        tuttiWork_t* work) {
  return Guard(__func__, [&] {
    TUTTI_COMM(c, comm);
    TUTTI_TYPE(type, t);
    if (count > (~size_t{0}) / tutti::DataTypeSize(type)) return Bad("send count too large");
    return Finish(*c_r, "tuttiSend", c.ISend(buf, count * tutti::DataTypeSize(type), peer, tag), work);
  });
}

tuttiResult_t tuttiRecv(void* buf, size_t count, tuttiDataType_t t, int peer, int tag, tuttiComm_t comm,
                        tuttiWork_t* work) {
  return Guard(__func__, [&] {
    TUTTI_COMM(c, comm);
    TUTTI_TYPE(type, t);
    if (count > (~size_t{0}) / tutti::DataTypeSize(type)) return Bad("recv count too large");
    return Finish(*c_r, "tuttiRecv", c.IRecv(buf, count * tutti::DataTypeSize(type), peer, tag), work);
  });
}

tuttiResult_t tuttiBroadcast(const void* s, void* r, size_t n, tuttiDataType_t t, int root, tuttiComm_t comm,
                             tuttiWork_t* work) {
  return Guard(__func__, [&] {
    TUTTI_COMM(c, comm);
    TUTTI_TYPE(type, t);
    return Finish(*c_r, "tuttiBroadcast", c.IBroadcast(s, r, n, type, root), work);
  });
}

tuttiResult_t tuttiReduce(const void* s, void* r, size_t n, tuttiDataType_t t, tuttiRedOp_t op, int root,
                          tuttiComm_t comm, tuttiWork_t* work) {
  return Guard(__func__, [&] {
    TUTTI_COMM(c, comm);
    TUTTI_TYPE(type, t);
    TUTTI_OP(rop, op);
    return Finish(*c_r, "tuttiReduce", c.IReduce(s, r, n, type, rop, root), work);
  });
}

tuttiResult_t tuttiScatter(const void* s, void* r, size_t n, tuttiDataType_t t, int root, tuttiComm_t comm,
                           tuttiWork_t* work) {
  return Guard(__func__, [&] {
    TUTTI_COMM(c, comm);
    TUTTI_TYPE(type, t);
    return Finish(*c_r, "tuttiScatter", c.IScatter(s, r, n, type, root), work);
  });
}

tuttiResult_t tuttiGather(const void* s, void* r, size_t n, tuttiDataType_t t, int root, tuttiComm_t comm,
                          tuttiWork_t* work) {
  return Guard(__func__, [&] {
    TUTTI_COMM(c, comm);
    TUTTI_TYPE(type, t);
    return Finish(*c_r, "tuttiGather", c.IGather(s, r, n, type, root), work);
  });
}

tuttiResult_t tuttiAllReduce(const void* s, void* r, size_t n, tuttiDataType_t t, tuttiRedOp_t op, tuttiComm_t comm,
                             tuttiWork_t* work) {
  return Guard(__func__, [&] {
    TUTTI_COMM(c, comm);
    TUTTI_TYPE(type, t);
    TUTTI_OP(rop, op);
    return Finish(*c_r, "tuttiAllReduce", c.IAllReduce(s, r, n, type, rop), work);
  });
}

tuttiResult_t tuttiAllReducePremulSum(const void* s, void* r, size_t n, tuttiDataType_t t, double scalar,
                                      tuttiComm_t comm, tuttiWork_t* work) {
  return Guard(__func__, [&] {
    TUTTI_COMM(c, comm);
    TUTTI_TYPE(type, t);
    tutti::CollOptions o;
    o.premul_scalar = scalar;
    return Finish(*c_r, "tuttiAllReducePremulSum", c.IAllReduce(s, r, n, type, tutti::RedOp::kPremulSum, o), work);
  });
}

tuttiResult_t tuttiAllGather(const void* s, void* r, size_t n, tuttiDataType_t t, tuttiComm_t comm, tuttiWork_t* work) {
  return Guard(__func__, [&] {
    TUTTI_COMM(c, comm);
    TUTTI_TYPE(type, t);
    return Finish(*c_r, "tuttiAllGather", c.IAllGather(s, r, n, type), work);
  });
}

tuttiResult_t tuttiReduceScatter(const void* s, void* r, size_t n, tuttiDataType_t t, tuttiRedOp_t op,
                                 tuttiComm_t comm, tuttiWork_t* work) {
  return Guard(__func__, [&] {
    TUTTI_COMM(c, comm);
    TUTTI_TYPE(type, t);
    TUTTI_OP(rop, op);
    return Finish(*c_r, "tuttiReduceScatter", c.IReduceScatter(s, r, n, type, rop), work);
  });
}

tuttiResult_t tuttiAllToAll(const void* s, void* r, size_t n, tuttiDataType_t t, tuttiComm_t comm, tuttiWork_t* work) {
  return Guard(__func__, [&] {
    TUTTI_COMM(c, comm);
    TUTTI_TYPE(type, t);
    return Finish(*c_r, "tuttiAllToAll", c.IAllToAll(s, r, n, type), work);
  });
}

#define TUTTI_BLOCKS(v, counts, displs, what, read)                   \
  auto v##_r = BlocksOf(counts, displs, c.size(), what, read);         \
  if (!v##_r.ok()) return ToResult(v##_r.status());                    \
  const tutti::Communicator::Blocks& v = *v##_r

tuttiResult_t tuttiAllGatherV(const void* s, size_t n, void* r, const size_t* rcounts, const size_t* rdispls,
                              tuttiDataType_t t, tuttiComm_t comm, tuttiWork_t* work) {
  return Guard(__func__, [&] {
    TUTTI_COMM(c, comm);
    TUTTI_TYPE(type, t);
    TUTTI_BLOCKS(rb, rcounts, rdispls, "receive", true);
    return Finish(*c_r, "tuttiAllGatherV", c.IAllGatherV(s, n, r, rb, type), work);
  });
}

tuttiResult_t tuttiGatherV(const void* s, size_t n, void* r, const size_t* rcounts, const size_t* rdispls,
                           tuttiDataType_t t, int root, tuttiComm_t comm, tuttiWork_t* work) {
  return Guard(__func__, [&] {
    TUTTI_COMM(c, comm);
    TUTTI_TYPE(type, t);
    TUTTI_BLOCKS(rb, rcounts, rdispls, "receive", c.rank() == root);
    return Finish(*c_r, "tuttiGatherV", c.IGatherV(s, n, r, rb, type, root), work);
  });
}

tuttiResult_t tuttiScatterV(const void* s, const size_t* scounts, const size_t* sdispls, void* r, size_t n,
                            tuttiDataType_t t, int root, tuttiComm_t comm, tuttiWork_t* work) {
  return Guard(__func__, [&] {
    TUTTI_COMM(c, comm);
    TUTTI_TYPE(type, t);
    TUTTI_BLOCKS(sb, scounts, sdispls, "send", c.rank() == root);
    return Finish(*c_r, "tuttiScatterV", c.IScatterV(s, sb, r, n, type, root), work);
  });
}

tuttiResult_t tuttiAllToAllV(const void* s, const size_t* scounts, const size_t* sdispls, void* r,
                             const size_t* rcounts, const size_t* rdispls, tuttiDataType_t t, tuttiComm_t comm,
                             tuttiWork_t* work) {
  return Guard(__func__, [&] {
    TUTTI_COMM(c, comm);
    TUTTI_TYPE(type, t);
    TUTTI_BLOCKS(sb, scounts, sdispls, "send", true);
    TUTTI_BLOCKS(rb, rcounts, rdispls, "receive", true);
    return Finish(*c_r, "tuttiAllToAllV", c.IAllToAllV(s, sb, r, rb, type), work);
  });
}

tuttiResult_t tuttiReduceScatterV(const void* s, void* r, const size_t* rcounts, tuttiDataType_t t, tuttiRedOp_t op,
                                  tuttiComm_t comm, tuttiWork_t* work) {
  return Guard(__func__, [&] {
    TUTTI_COMM(c, comm);
    TUTTI_TYPE(type, t);
    TUTTI_OP(rop, op);
    TUTTI_BLOCKS(blocks, rcounts, nullptr, "receive", true);
    return Finish(*c_r, "tuttiReduceScatterV", c.IReduceScatterV(s, r, blocks.counts, type, rop), work);
  });
}

tuttiResult_t tuttiBarrier(tuttiComm_t comm, tuttiWork_t* work) {
  return Guard(__func__, [&] {
    TUTTI_COMM(c, comm);
    return Finish(*c_r, "tuttiBarrier", c.IBarrier(), work);
  });
}

}  // extern "C"
