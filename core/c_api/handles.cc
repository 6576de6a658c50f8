#include "core/c_api/handles.h"
#include "core/group.h"

namespace tutti::capi {
namespace {
thread_local std::string g_last_error;
}  // namespace

const std::string& LastError() { return g_last_error; }

Handles& H() {
  static Handles* h = new Handles();  // never destroyed: handles may be used from atexit code
  return *h;
}

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

tuttiResult_t Bad(const std::string& what) { return ToResult(tutti::InvalidArgument(what)); }


tuttiComm_t NewCommHandle(std::unique_ptr<tutti::Communicator> c) {
  auto shell = std::make_unique<tuttiComm>();
  shell->comm = std::move(c);
  Handles& h = H();
  std::lock_guard<std::mutex> lock(h.mu);
  tuttiComm_t out = shell.get();
  h.comm_set.insert(out);
  h.comms.push_back(std::move(shell));
  return out;
}

// The communicator behind a handle, kept alive for the duration of the call even if another
// thread destroys the handle meanwhile.
tutti::Result<std::shared_ptr<tutti::Communicator>> Comm(const tuttiComm* c) {
  if (c == nullptr) return tutti::InvalidArgument("null communicator");
  Handles& h = H();
  std::lock_guard<std::mutex> lock(h.mu);
  if (h.comm_set.count(c) == 0) return tutti::InvalidArgument("not a communicator handle of this library");
  if (!c->comm) return tutti::InvalidUsage("communicator already destroyed");
  return c->comm;
}

tuttiResult_t NewWork(std::shared_ptr<tutti::Communicator> comm, tutti::Work w, tuttiWork_t* out) {
  auto* handle = new tuttiWork{std::move(w), std::move(comm)};
  Handles& h = H();
  std::lock_guard<std::mutex> lock(h.mu);
  h.works.insert(handle);
  *out = handle;
  return tuttiSuccess;
}

tutti::Status CheckWork(const tuttiWork* w) {
  if (w == nullptr) return tutti::InvalidArgument("null work");
  Handles& h = H();
  std::lock_guard<std::mutex> lock(h.mu);
  if (h.works.count(w) == 0) return tutti::InvalidUsage("work handle unknown or already freed");
  return tutti::OkStatus();
}

// Runs a started operation of `comm`: blocking when work == NULL (inside a group: handed to the
// group, waited for by tuttiGroupEnd), else hands the Work out.
tuttiResult_t Finish(const std::shared_ptr<tutti::Communicator>& comm, const char* fn, tutti::Result<tutti::Work> w,
                     tuttiWork_t* work) {
  if (work == nullptr && tutti::InGroup()) return ToResult(comm->AddToGroup(std::move(w), -1, fn));
  if (!w.ok()) return ToResult(w.status());
  if (work == nullptr) return ToResult(w->Wait());
  return NewWork(comm, std::move(*w), work);
}

}  // namespace tutti::capi
