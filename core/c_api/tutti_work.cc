// The C API's asynchronous operations (tuttiWork*) and groups (tuttiGroupStart / End).
#include "core/c_api/handles.h"
#include "core/group.h"

using namespace tutti::capi;  // NOLINT: the entry points below are the C API's

extern "C" {

tuttiResult_t tuttiWorkWait(tuttiWork_t work, double timeout_s) {
  return Guard(__func__, [&] {
    if (tutti::Status st = CheckWork(work); !st.ok()) return ToResult(st);
    return ToResult(work->work.Wait(timeout_s));
  });
}

tuttiResult_t tuttiWorkTest(tuttiWork_t work, int* done) {
  return Guard(__func__, [&] {
    if (done == nullptr) return Bad("null done pointer");
    if (tutti::Status st = CheckWork(work); !st.ok()) return ToResult(st);
    *done = work->work.Test() ? 1 : 0;
    return *done ? ToResult(work->work.status()) : tuttiSuccess;
  });
}

tuttiResult_t tuttiWorkGetSource(tuttiWork_t work, int* source) {
  return Guard(__func__, [&] {
    if (source == nullptr) return Bad("null source pointer");
    if (tutti::Status st = CheckWork(work); !st.ok()) return ToResult(st);
    if (!work->work.IsCompleted()) return ToResult(tutti::InvalidUsage("tuttiWorkGetSource: the work has not finished"));
    *source = work->work.source();
    return tuttiSuccess;
  });
}

tuttiResult_t tuttiWorkFree(tuttiWork_t work) {
  return Guard(__func__, [&] {
    if (work == nullptr) return Bad("null work");
    {
      Handles& h = H();
      std::lock_guard<std::mutex> lock(h.mu);
      if (h.works.erase(work) == 0) return ToResult(tutti::InvalidUsage("tuttiWorkFree: work unknown or already freed"));
    }
    delete work;
    return tuttiSuccess;
  });
}

tuttiResult_t tuttiWorkOnComplete(tuttiWork_t work, tuttiWorkCallback_t fn, void* user) {
  return Guard(__func__, [&] {
    if (fn == nullptr) return Bad("tuttiWorkOnComplete: null function");
    if (tutti::Status st = CheckWork(work); !st.ok()) return ToResult(st);
    return ToResult(work->comm->OnComplete(work->work, [fn, user](const tutti::Status& st) {
      fn(ToResult(st), user);  // ToResult leaves the message for tuttiGetLastError on this thread
    }));
  });
}

tuttiResult_t tuttiGroupStart(void) {
  return Guard(__func__, [&] {
    tutti::GroupStart();
    return tuttiSuccess;
  });
}

tuttiResult_t tuttiGroupEnd(void) {
  return Guard(__func__, [&] { return ToResult(tutti::GroupEnd()); });
}

}  // extern "C"
