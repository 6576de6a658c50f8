#include "bench/perf/mpi_backend.h"

#include <mpi.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstring>

namespace tutti::perf {
namespace {

constexpr int kSendRecvTag = 7;

// The MPI type of `type` for moving data (fp16/bf16/fp8 as same-sized integers).
MPI_Datatype MoveType(DataType type) {
  switch (type) {
    case DataType::kInt8: return MPI_INT8_T;
    case DataType::kUint8: return MPI_UINT8_T;
    case DataType::kInt32: return MPI_INT32_T;
    case DataType::kUint32: return MPI_UINT32_T;
    case DataType::kInt64: return MPI_INT64_T;
    case DataType::kUint64: return MPI_UINT64_T;
    case DataType::kFloat16:
    case DataType::kBfloat16: return MPI_UINT16_T;
    case DataType::kFloat32: return MPI_FLOAT;
    case DataType::kFloat64: return MPI_DOUBLE;
    case DataType::kFp8E4M3:
    case DataType::kFp8E5M2: return MPI_UINT8_T;
  }
  return MPI_DATATYPE_NULL;
}

// Whether MPI can reduce `type` (it has a type whose arithmetic is this type's).
bool ReducibleType(DataType type) {
  switch (type) {
    case DataType::kFloat16:
    case DataType::kBfloat16:
    case DataType::kFp8E4M3:
    case DataType::kFp8E5M2: return false;
    default: return true;
  }
}

bool ToMpiOp(RedOp op, MPI_Op* out) {
  switch (op) {
    case RedOp::kSum: *out = MPI_SUM; return true;
    case RedOp::kProd: *out = MPI_PROD; return true;
    case RedOp::kMin: *out = MPI_MIN; return true;
    case RedOp::kMax: *out = MPI_MAX; return true;
    case RedOp::kBand: *out = MPI_BAND; return true;
    case RedOp::kBor: *out = MPI_BOR; return true;
    case RedOp::kBxor: *out = MPI_BXOR; return true;
    default: return false;
  }
}

Status Check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return OkStatus();
  char msg[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  return RemoteError(std::string(what) + " failed: " + msg);
}

// MPI counts are ints.
Status CheckCount(size_t count, const char* what) {
  if (count <= static_cast<size_t>(INT_MAX)) return OkStatus();
  return InvalidArgument(std::string(what) + ": count " + std::to_string(count) + " exceeds MPI's int counts");
}

Status Reducing(DataType type, const Reduction& red, const char* what, MPI_Op* op) {
  if (!ReducibleType(type) || !ToMpiOp(red.op, op))
    return InvalidArgument(std::string(what) + ": MPI cannot reduce " + DataTypeName(type) + " with " +
                           RedOpName(red.op));
  return OkStatus();
}

char* At(const void* base, size_t elems, DataType type) {
  return static_cast<char*>(const_cast<void*>(base)) + elems * DataTypeSize(type);
}

}  // namespace

Result<std::unique_ptr<PerfBackend>> MpiBackend::Create(const PerfOptions& o) {
  if (Status st = CheckAlgorithm(o.coll, o.algo); !st.ok()) return st;  // no breadcrumb: for the user
  std::unique_ptr<MpiBackend> b(new MpiBackend());
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int argc = 0;
    char** argv = nullptr;
    TUTTI_RETURN_IF_ERROR(Check(MPI_Init(&argc, &argv), "MPI_Init"));
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &b->rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &b->size_);
  MPI_Comm local;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, b->rank_, MPI_INFO_NULL, &local) == MPI_SUCCESS) {
    MPI_Comm_rank(local, &b->local_rank_);
    MPI_Comm_size(local, &b->local_size_);
    MPI_Comm_free(&local);
  }
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(version, &len);
  b->library_ = std::string(version, strnlen(version, sizeof(version)));
  size_t cut = b->library_.find_first_of(",\n");
  if (cut != std::string::npos) b->library_.resize(cut);
  std::unique_ptr<PerfBackend> out = std::move(b);
  return out;
}

MpiBackend::~MpiBackend() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Finalize();
}

std::string MpiBackend::Describe() const {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  return "pid " + std::to_string(getpid()) + " on " + host + " (local rank " + std::to_string(local_rank_) + " of " +
         std::to_string(local_size_) + "), " + library_;
}

Status MpiBackend::SetAlgorithm(Coll coll, const std::string& algorithm) { return CheckAlgorithm(coll, algorithm); }

Status MpiBackend::CheckAlgorithm(Coll coll, const std::string& algorithm) {
  if (algorithm.empty()) return OkStatus();
  return InvalidArgument("--algo " + algorithm + ": mpi_perf leaves the algorithm of " + CollName(coll) +
                         " to the MPI library (Open MPI: OMPI_MCA_coll_tuned_use_dynamic_rules=1 and "
                         "OMPI_MCA_coll_tuned_<collective>_algorithm=N choose one)");
}

bool MpiBackend::Supports(Coll coll, DataType type, RedOp op) const {
  if (!CollReduces(coll)) return true;
  MPI_Op mop;
  return ReducibleType(type) && ToMpiOp(op, &mop);
}

Status MpiBackend::AllReduce(const void* send, void* recv, size_t count, DataType type, const Reduction& red) {
  MPI_Op op;
  TUTTI_RETURN_IF_ERROR(Reducing(type, red, "all_reduce", &op));
  TUTTI_RETURN_IF_ERROR(CheckCount(count, "all_reduce"));
  const void* s = send == recv ? MPI_IN_PLACE : send;
  return Check(MPI_Allreduce(s, recv, static_cast<int>(count), MoveType(type), op, MPI_COMM_WORLD), "MPI_Allreduce");
}

Status MpiBackend::AllGather(const void* send, void* recv, size_t count, DataType type) {
  TUTTI_RETURN_IF_ERROR(CheckCount(count, "all_gather"));
  const int n = static_cast<int>(count);
  const MPI_Datatype t = MoveType(type);
  if (send == At(recv, rank_ * count, type))  // in place: own block already in its slot
    return Check(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, n, t, MPI_COMM_WORLD), "MPI_Allgather");
  return Check(MPI_Allgather(send, n, t, recv, n, t, MPI_COMM_WORLD), "MPI_Allgather");
}

Status MpiBackend::ReduceScatter(const void* send, void* recv, size_t count, DataType type, const Reduction& red) {
  MPI_Op op;
  TUTTI_RETURN_IF_ERROR(Reducing(type, red, "reduce_scatter", &op));
  TUTTI_RETURN_IF_ERROR(CheckCount(count, "reduce_scatter"));
  const int n = static_cast<int>(count);
  const MPI_Datatype t = MoveType(type);
  if (recv == At(send, rank_ * count, type)) {
    // MPI's in-place form reads the whole input from the buffer and leaves this rank's block at
    // its start; NCCL's layout wants it at send + rank x count.
    void* buf = const_cast<void*>(send);
    TUTTI_RETURN_IF_ERROR(
        Check(MPI_Reduce_scatter_block(MPI_IN_PLACE, buf, n, t, op, MPI_COMM_WORLD), "MPI_Reduce_scatter_block"));
    if (rank_ != 0 && count > 0) memmove(recv, buf, count * DataTypeSize(type));
    return OkStatus();
  }
  return Check(MPI_Reduce_scatter_block(send, recv, n, t, op, MPI_COMM_WORLD), "MPI_Reduce_scatter_block");
}

Status MpiBackend::Broadcast(const void* send, void* recv, size_t count, DataType type, int root) {
  TUTTI_RETURN_IF_ERROR(CheckCount(count, "broadcast"));
  if (rank_ == root && send != recv && count > 0) memcpy(recv, send, count * DataTypeSize(type));
  return Check(MPI_Bcast(recv, static_cast<int>(count), MoveType(type), root, MPI_COMM_WORLD), "MPI_Bcast");
}

Status MpiBackend::Reduce(const void* send, void* recv, size_t count, DataType type, const Reduction& red, int root) {
  MPI_Op op;
  TUTTI_RETURN_IF_ERROR(Reducing(type, red, "reduce", &op));
  TUTTI_RETURN_IF_ERROR(CheckCount(count, "reduce"));
  const void* s = rank_ == root && send == recv ? MPI_IN_PLACE : send;
  return Check(MPI_Reduce(s, recv, static_cast<int>(count), MoveType(type), op, root, MPI_COMM_WORLD), "MPI_Reduce");
}

Status MpiBackend::Scatter(const void* send, void* recv, size_t count, DataType type, int root) {
  TUTTI_RETURN_IF_ERROR(CheckCount(count, "scatter"));
  const int n = static_cast<int>(count);
  const MPI_Datatype t = MoveType(type);
  void* r = rank_ == root && recv == At(send, rank_ * count, type) ? MPI_IN_PLACE : recv;
  return Check(MPI_Scatter(send, n, t, r, n, t, root, MPI_COMM_WORLD), "MPI_Scatter");
}

Status MpiBackend::Gather(const void* send, void* recv, size_t count, DataType type, int root) {
  TUTTI_RETURN_IF_ERROR(CheckCount(count, "gather"));
  const int n = static_cast<int>(count);
  const MPI_Datatype t = MoveType(type);
  const void* s = rank_ == root && send == At(recv, rank_ * count, type) ? MPI_IN_PLACE : send;
  return Check(MPI_Gather(s, n, t, recv, n, t, root, MPI_COMM_WORLD), "MPI_Gather");
}

Status MpiBackend::AllToAll(const void* send, void* recv, size_t count, DataType type) {
  TUTTI_RETURN_IF_ERROR(CheckCount(count, "all_to_all"));
  const int n = static_cast<int>(count);
  const MPI_Datatype t = MoveType(type);
  if (send == recv)
    return Check(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, n, t, MPI_COMM_WORLD), "MPI_Alltoall");
  return Check(MPI_Alltoall(send, n, t, recv, n, t, MPI_COMM_WORLD), "MPI_Alltoall");
}

Status MpiBackend::SendRecv(const void* send, int send_peer, void* recv, int recv_peer, size_t count,
                            DataType type) {
  TUTTI_RETURN_IF_ERROR(CheckCount(count, "send_recv"));
  const int n = static_cast<int>(count);
  const MPI_Datatype t = MoveType(type);
  return Check(MPI_Sendrecv(send, n, t, send_peer, kSendRecvTag, recv, n, t, recv_peer, kSendRecvTag, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE),
               "MPI_Sendrecv");
}

Status MpiBackend::Barrier() { return Check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }

Result<double> MpiBackend::AllReduceDouble(double value, Agg agg) {
  MPI_Op op = agg == Agg::kSum ? MPI_SUM : agg == Agg::kMin ? MPI_MIN : MPI_MAX;
  double out = 0;
  TUTTI_RETURN_IF_ERROR(Check(MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, op, MPI_COMM_WORLD), "MPI_Allreduce"));
  return out;
}

void MpiBackend::Abort(const std::string& why) {
  // Ranks blocked in a collective with this one would wait forever: MPI_Abort ends them all.
  fflush(stdout);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

}  // namespace tutti::perf
