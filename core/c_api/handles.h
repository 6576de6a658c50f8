// What the C API's files share: the handle structs, the table of live handles, turning a Status
// into a result code (and the thread's last error), the exception guard every entry point runs
// its body through, and the step that runs or hands out a started call.
#pragma once

#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/c_api/tutti.h"
#include "core/communicator.h"

struct tuttiComm {
  std::shared_ptr<tutti::Communicator> comm;  // null once destroyed
};
struct tuttiWork {
  tutti::Work work;
  std::shared_ptr<tutti::Communicator> comm;  // whose call it is (tuttiWorkOnComplete)
};

namespace tutti::capi {

// Every communicator shell ever handed out, and every live work handle.
struct Handles {
  std::mutex mu;
  std::vector<std::unique_ptr<tuttiComm>> comms;
  std::unordered_set<const tuttiComm*> comm_set;
  std::unordered_set<const tuttiWork*> works;
  // Registration handles (tuttiCommRegister), so a stale or foreign one is an error.
  std::unordered_map<const void*, std::pair<const tuttiComm*, tutti::Communicator::MemHandle>> regs;
};
Handles& H();

// The result code of `st`; a failure's message becomes the thread's last error.
tuttiResult_t ToResult(const tutti::Status& st);
// The message of the thread's last failure.
const std::string& LastError();
tuttiResult_t Bad(const std::string& what);

template <typename F>
tuttiResult_t Guard(const char* fn, F&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    try {
      return ToResult(tutti::SystemError(std::string(fn) + ": out of memory"));
    } catch (...) {
      return tuttiSystemError;  // not even the message fits
    }
  } catch (const std::exception& e) {
    try {
      return ToResult(tutti::InternalError(std::string(fn) + ": unexpected exception: " + e.what()));
    } catch (...) {
      return tuttiInternalError;
    }
  } catch (...) {
    return tuttiInternalError;
  }
}

tuttiComm_t NewCommHandle(std::unique_ptr<tutti::Communicator> c);
// The communicator behind a handle, kept alive for the duration of the call even if another
// thread destroys the handle meanwhile.
tutti::Result<std::shared_ptr<tutti::Communicator>> Comm(const tuttiComm* c);
tuttiResult_t NewWork(std::shared_ptr<tutti::Communicator> comm, tutti::Work w, tuttiWork_t* out);
tutti::Status CheckWork(const tuttiWork* w);
// Runs a started operation of `comm`: blocking when work == NULL (inside a group: handed to the
// group, waited for by tuttiGroupEnd), else hands the Work out.
tuttiResult_t Finish(const std::shared_ptr<tutti::Communicator>& comm, const char* fn, tutti::Result<tutti::Work> w,
                     tuttiWork_t* work);

}  // namespace tutti::capi
