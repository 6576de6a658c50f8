#include "tools/nccl/state.h"

#include <new>
#include <set>
#include <thread>

namespace tutti::nccl {
namespace {

std::mutex& HandlesMu() {
  static std::mutex mu;
  return mu;
}
std::set<ncclComm*>& Handles() {
  static auto* handles = new std::set<ncclComm*>;  // never destroyed: used during exit
  return *handles;
}

std::string& Last() {
  thread_local std::string last;
  return last;
}

}  // namespace

void SetLastError(const std::string& msg) { Last() = msg; }

const std::string& LastError() { return Last(); }

int ToResult(const Status& st) {
  switch (st.code()) {
    case Code::kOk: return kSuccess;
    case Code::kInvalidArgument:
    case Code::kNotMember: return kInvalidArgument;
    case Code::kInvalidUsage:
    case Code::kMismatch:
    case Code::kAborted: return kInvalidUsage;
    case Code::kTimeout:
    case Code::kRemoteError:
    case Code::kProtocol: return kRemoteError;
    case Code::kSystemError:
    case Code::kUnavailable: return kSystemError;
    case Code::kInternal: return kInternalError;
  }
  return kInternalError;
}

int Guard(const char* fn, const std::function<Status()>& body) {
  Status st;
  try {
    st = body();
  } catch (const std::bad_alloc&) {
    st = SystemError(std::string(fn) + ": out of memory");
  } catch (const std::exception& e) {
    st = InternalError(std::string(fn) + ": " + e.what());
  } catch (...) {
    st = InternalError(std::string(fn) + ": unknown exception");
  }
  if (st.ok()) return kSuccess;
  SetLastError(std::string(fn) + ": " + st.ToString());
  return ToResult(st);
}

void Track(ncclComm* c) {
  std::lock_guard<std::mutex> lock(HandlesMu());
  Handles().insert(c);
}

void Untrack(ncclComm* c) {
  std::lock_guard<std::mutex> lock(HandlesMu());
  Handles().erase(c);
}

Result<ncclComm*> Lookup(ncclComm_t comm, const char* fn) {
  if (comm == nullptr) return InvalidArgument(std::string(fn) + ": null communicator");
  std::lock_guard<std::mutex> lock(HandlesMu());
  if (Handles().count(comm) == 0)
    return InvalidArgument(std::string(fn) + ": not a live communicator (destroyed, or never made)");
  return comm;
}

Group& ThreadGroup() {
  thread_local Group group;
  return group;
}

Status RunOrQueue(ncclComm* c, std::function<Result<Work>()> issue) {
  Group& g = ThreadGroup();
  if (g.depth > 0) {
    g.calls.push_back({c, std::move(issue)});
    return OkStatus();
  }
  // Outside a group the call is complete when it returns: on host memory that is stream order
  // for any stream (nothing after it on the stream can see it unfinished).
  Result<Work> w = issue();
  if (!w.ok()) return w.status();  // refused (arguments): reported now, not an asynchronous error
  Status st = w->Wait();
  if (!st.ok()) {
    std::lock_guard<std::mutex> lock(c->mu);
    if (c->async_error.ok()) c->async_error = st;
  }
  return st;
}

Status RunOrQueueInit(std::function<Status()> init) {
  Group& g = ThreadGroup();
  if (g.depth > 0) {
    g.inits.push_back(std::move(init));
    return OkStatus();
  }
  return init();
}

DataType TypeOf(int t, bool* ok) {
  static constexpr DataType kTypes[kNumTypes] = {
      DataType::kInt8,    DataType::kUint8,   DataType::kInt32,   DataType::kUint32,
      DataType::kInt64,   DataType::kUint64,  DataType::kFloat16, DataType::kFloat32,
      DataType::kFloat64, DataType::kBfloat16, DataType::kFp8E4M3, DataType::kFp8E5M2};
  *ok = t >= 0 && t < kNumTypes;
  return *ok ? kTypes[t] : DataType::kUint8;
}

}  // namespace tutti::nccl
