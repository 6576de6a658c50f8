// What tutti's libnccl.so.2 keeps: the communicator behind an ncclComm_t, the calls of an open
// group (per thread), and the last error message (per thread).
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "core/communicator.h"
#include "tools/nccl/abi.h"

struct ncclComm {
  std::unique_ptr<tutti::Communicator> comm;
  std::shared_ptr<tutti::Store> store;
  int device = -1;  // the CUDA device the program had current at init (-1: none)
  std::mutex mu;    // ops and async_error
  // Ops made by ncclRedOpCreatePreMulSum: handle kNumOps + i.
  struct PremulOp {
    bool live = false;
    int type = 0;           // ncclDataType_t it was made for
    int residence = 0;      // ncclScalarResidence_t
    double value = 0;       // host-immediate scalar
    const void* scalar = nullptr;  // read at each call (ncclScalarDevice)
  };
  std::vector<PremulOp> ops;
  tutti::Status async_error;  // the first failure of a call on this communicator
};

namespace tutti::nccl {

// Every entry point runs inside Guard: no exception crosses the C ABI; failures set the
// thread's last error and map to an ncclResult_t.
int Guard(const char* fn, const std::function<Status()>& body);
int ToResult(const Status& st);
void SetLastError(const std::string& msg);
const std::string& LastError();

// The communicator behind a handle, or kInvalidArgument for null / unknown / destroyed handles.
Result<ncclComm*> Lookup(ncclComm_t comm, const char* fn);
void Track(ncclComm* c);
void Untrack(ncclComm* c);

// Group state of the calling thread (ncclGroupStart / End nest).
struct Group {
  int depth = 0;
  // Communicator creation and splits, run side by side at the end (each waits for its peers).
  std::vector<std::function<Status()>> inits;
  // Calls, issued in order at the end, then waited for together.
  struct Call {
    ncclComm* comm;
    std::function<Result<Work>()> issue;
  };
  std::vector<Call> calls;
};
Group& ThreadGroup();

// Runs `issue` now and waits (outside a group), or queues it for ncclGroupEnd.
Status RunOrQueue(ncclComm* c, std::function<Result<Work>()> issue);
Status RunOrQueueInit(std::function<Status()> init);

DataType TypeOf(int nccl_type, bool* ok);

}  // namespace tutti::nccl
