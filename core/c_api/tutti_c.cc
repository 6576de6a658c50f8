// The C API (tutti.h) over tutti::Communicator.
#include <string>

#include "core/c_api/tutti.h"
#include "core/communicator.h"

struct tuttiComm {
  std::unique_ptr<tutti::Communicator> comm;
};
struct tuttiWork {
  tutti::Work work;
};

namespace {
thread_local std::string g_last_error;

tuttiResult_t ToResult(const tutti::Status& st) {
  using tutti::Code;
  if (st.ok()) return tuttiSuccess;
  g_last_error = st.ToString();
  switch (st.code()) {
    case Code::kOk: return tuttiSuccess;
    case Code::kInvalidArgument: return tuttiInvalidArgument;
    case Code::kInvalidUsage: return tuttiInvalidUsage;
    case Code::kTimeout: return tuttiTimeout;
    case Code::kRemoteError: return tuttiRemoteError;
    case Code::kSystemError: return tuttiSystemError;
    case Code::kProtocol: return tuttiRemoteError;
    case Code::kAborted: return tuttiAborted;
    case Code::kMismatch: return tuttiMismatch;
    case Code::kUnavailable: return tuttiUnavailable;
    case Code::kNotMember: return tuttiNotMember;
    case Code::kInternal: return tuttiInternalError;
  }
  return tuttiInternalError;
}

tuttiResult_t Bad(const char* what) { return ToResult(tutti::InvalidArgument(what)); }

// Runs a started operation: blocking when work == NULL, else hands the Work out.
tuttiResult_t Finish(tutti::Result<tutti::Work> w, tuttiWork_t* work) {
  if (!w.ok()) return ToResult(w.status());
  if (work == nullptr) return ToResult(w->Wait());
  *work = new tuttiWork{std::move(*w)};
  return tuttiSuccess;
}

tutti::DataType T(tuttiDataType_t t) { return static_cast<tutti::DataType>(t); }
tutti::RedOp O(tuttiRedOp_t o) { return static_cast<tutti::RedOp>(o); }
bool ValidType(tuttiDataType_t t) { return t >= 0 && t < tutti::kNumDataTypes; }
bool ValidOp(tuttiRedOp_t o) { return o >= 0 && o < tutti::kNumRedOps; }
}  // namespace

#define TUTTI_CHECK_COMM(c) \
  if ((c) == nullptr || !(c)->comm) return Bad("null or destroyed communicator")
#define TUTTI_CHECK_TYPE(t) \
  if (!ValidType(t)) return Bad("unknown data type")
#define TUTTI_CHECK_OP(o) \
  if (!ValidOp(o)) return Bad("unknown reduction op")

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

const char* tuttiGetLastError(void) { return g_last_error.c_str(); }

tuttiResult_t tuttiCommInitFromEnv(tuttiComm_t* comm) {
  if (comm == nullptr) return Bad("null comm pointer");
  auto c = tutti::Communicator::InitFromEnv();
  if (!c.ok()) return ToResult(c.status());
  *comm = new tuttiComm{std::move(*c)};
  return tuttiSuccess;
}

tuttiResult_t tuttiCommInitRank(tuttiComm_t* comm, int nranks, int rank, const char* master_addr, int master_port,
                                const char* secret) {
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
  *comm = new tuttiComm{std::move(*c)};
  return tuttiSuccess;
}

tuttiResult_t tuttiCommSplit(tuttiComm_t comm, int color, int key, tuttiComm_t* newcomm) {
  TUTTI_CHECK_COMM(comm);
  if (newcomm == nullptr) return Bad("null newcomm pointer");
  auto c = comm->comm->Split(color, key);
  if (!c.ok()) {
    if (c.status().code() == tutti::Code::kNotMember && color < 0) {
      *newcomm = nullptr;
      return tuttiSuccess;
    }
    return ToResult(c.status());
  }
  *newcomm = new tuttiComm{std::move(*c)};
  return tuttiSuccess;
}

tuttiResult_t tuttiCommCount(const tuttiComm_t comm, int* count) {
  TUTTI_CHECK_COMM(comm);
  if (count == nullptr) return Bad("null count pointer");
  *count = comm->comm->size();
  return tuttiSuccess;
}

tuttiResult_t tuttiCommUserRank(const tuttiComm_t comm, int* rank) {
  TUTTI_CHECK_COMM(comm);
  if (rank == nullptr) return Bad("null rank pointer");
  *rank = comm->comm->rank();
  return tuttiSuccess;
}

tuttiResult_t tuttiCommAbort(tuttiComm_t comm) {
  TUTTI_CHECK_COMM(comm);
  comm->comm->Abort("tuttiCommAbort");
  return tuttiSuccess;
}

tuttiResult_t tuttiCommDestroy(tuttiComm_t comm) {
  if (comm == nullptr) return Bad("null communicator");
  delete comm;
  return tuttiSuccess;
}

tuttiResult_t tuttiSend(const void* buf, size_t count, tuttiDataType_t t, int peer, int tag, tuttiComm_t comm,
                        tuttiWork_t* work) {
  TUTTI_CHECK_COMM(comm);
  TUTTI_CHECK_TYPE(t);
  return Finish(comm->comm->ISend(buf, count * tutti::DataTypeSize(T(t)), peer, tag), work);
}

tuttiResult_t tuttiRecv(void* buf, size_t count, tuttiDataType_t t, int peer, int tag, tuttiComm_t comm,
                        tuttiWork_t* work) {
  TUTTI_CHECK_COMM(comm);
  TUTTI_CHECK_TYPE(t);
  return Finish(comm->comm->IRecv(buf, count * tutti::DataTypeSize(T(t)), peer, tag), work);
}

tuttiResult_t tuttiBroadcast(const void* s, void* r, size_t n, tuttiDataType_t t, int root, tuttiComm_t comm,
                             tuttiWork_t* work) {
  TUTTI_CHECK_COMM(comm);
  TUTTI_CHECK_TYPE(t);
  return Finish(comm->comm->IBroadcast(s, r, n, T(t), root), work);
}

tuttiResult_t tuttiReduce(const void* s, void* r, size_t n, tuttiDataType_t t, tuttiRedOp_t op, int root,
                          tuttiComm_t comm, tuttiWork_t* work) {
  TUTTI_CHECK_COMM(comm);
  TUTTI_CHECK_TYPE(t);
  TUTTI_CHECK_OP(op);
  return Finish(comm->comm->IReduce(s, r, n, T(t), O(op), root), work);
}

tuttiResult_t tuttiScatter(const void* s, void* r, size_t n, tuttiDataType_t t, int root, tuttiComm_t comm,
                           tuttiWork_t* work) {
  TUTTI_CHECK_COMM(comm);
  TUTTI_CHECK_TYPE(t);
  return Finish(comm->comm->IScatter(s, r, n, T(t), root), work);
}

tuttiResult_t tuttiGather(const void* s, void* r, size_t n, tuttiDataType_t t, int root, tuttiComm_t comm,
                          tuttiWork_t* work) {
  TUTTI_CHECK_COMM(comm);
  TUTTI_CHECK_TYPE(t);
  return Finish(comm->comm->IGather(s, r, n, T(t), root), work);
}

tuttiResult_t tuttiAllReduce(const void* s, void* r, size_t n, tuttiDataType_t t, tuttiRedOp_t op, tuttiComm_t comm,
                             tuttiWork_t* work) {
  TUTTI_CHECK_COMM(comm);
  TUTTI_CHECK_TYPE(t);
  TUTTI_CHECK_OP(op);
  return Finish(comm->comm->IAllReduce(s, r, n, T(t), O(op)), work);
}

tuttiResult_t tuttiAllReducePremulSum(const void* s, void* r, size_t n, tuttiDataType_t t, double scalar,
                                      tuttiComm_t comm, tuttiWork_t* work) {
  TUTTI_CHECK_COMM(comm);
  TUTTI_CHECK_TYPE(t);
  tutti::CollOptions o;
  o.premul_scalar = scalar;
  return Finish(comm->comm->IAllReduce(s, r, n, T(t), tutti::RedOp::kPremulSum, o), work);
}

tuttiResult_t tuttiAllGather(const void* s, void* r, size_t n, tuttiDataType_t t, tuttiComm_t comm, tuttiWork_t* work) {
  TUTTI_CHECK_COMM(comm);
  TUTTI_CHECK_TYPE(t);
  return Finish(comm->comm->IAllGather(s, r, n, T(t)), work);
}

tuttiResult_t tuttiReduceScatter(const void* s, void* r, size_t n, tuttiDataType_t t, tuttiRedOp_t op,
                                 tuttiComm_t comm, tuttiWork_t* work) {
  TUTTI_CHECK_COMM(comm);
  TUTTI_CHECK_TYPE(t);
  TUTTI_CHECK_OP(op);
  return Finish(comm->comm->IReduceScatter(s, r, n, T(t), O(op)), work);
}

tuttiResult_t tuttiAllToAll(const void* s, void* r, size_t n, tuttiDataType_t t, tuttiComm_t comm, tuttiWork_t* work) {
  TUTTI_CHECK_COMM(comm);
  TUTTI_CHECK_TYPE(t);
  return Finish(comm->comm->IAllToAll(s, r, n, T(t)), work);
}

tuttiResult_t tuttiBarrier(tuttiComm_t comm, tuttiWork_t* work) {
  TUTTI_CHECK_COMM(comm);
  return Finish(comm->comm->IBarrier(), work);
}

tuttiResult_t tuttiWorkWait(tuttiWork_t work, double timeout_s) {
  if (work == nullptr) return Bad("null work");
  return ToResult(work->work.Wait(timeout_s));
}

tuttiResult_t tuttiWorkTest(tuttiWork_t work, int* done) {
  if (work == nullptr || done == nullptr) return Bad("null argument");
  *done = work->work.Test() ? 1 : 0;
  return *done ? ToResult(work->work.status()) : tuttiSuccess;
}

tuttiResult_t tuttiWorkFree(tuttiWork_t work) {
  delete work;
  return tuttiSuccess;
}

}  // extern "C"
