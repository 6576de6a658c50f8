#include "core/group.h"

#include <chrono>
#include <vector>

#include "core/base/deadline.h"
#include "core/base/logging.h"
#include "core/p2p/waiter.h"

namespace tutti {
namespace {

using Clock = std::chrono::steady_clock;

// A call still pending at its deadline gets this last wait, which fails it the way a timed-out
// wait of its own would (a collective then fails its communicator).
constexpr double kLastWaitS = 0.05;

struct Pending {
  Work work;
  internal::GroupWait how;
};

struct ThreadGroup {
  int depth = 0;
  std::vector<Pending> calls;
  Status first_error;  // a call refused at issue
};

ThreadGroup& Current() {
  thread_local ThreadGroup group;
  return group;
}

// Waits for every call together: a call that waits on its peers' calls of another communicator
// must not sit behind one of them.
Status WaitAll(std::vector<Pending> calls) {
  Status first;
  const Clock::time_point start = Clock::now();
  std::vector<Clock::time_point> deadlines;
  deadlines.reserve(calls.size());
  for (const Pending& p : calls) deadlines.push_back(start + WaitDuration(p.how.timeout_s));
  std::vector<bool> done(calls.size(), false);
  size_t left = calls.size();
  if (left == 0) return first;
  // Pauses as the first call's communicator does (the common group has one communicator).
  Waiter waiter(calls[0].how.spin_us, calls[0].how.yield_us, calls[0].how.block);
  while (left > 0) {
    bool moved = false;
    for (size_t i = 0; i < calls.size(); ++i) {
      if (done[i]) continue;
      Status st;
      if (calls[i].work.Test()) {
        st = calls[i].work.status();
      } else if (Clock::now() >= deadlines[i]) {
        st = calls[i].work.Wait(kLastWaitS);
        if (!st.ok()) st = st.WithContext(calls[i].how.who + " in a group: not complete within its timeout after GroupEnd");
      } else {
        continue;
      }
      done[i] = true;
      --left;
      moved = true;
      if (!st.ok() && first.ok()) first = st;
    }
    if (left > 0) waiter.Pause(moved);
  }
  return first;
}

}  // namespace

void GroupStart() { ++Current().depth; }

bool InGroup() { return Current().depth > 0; }

Status GroupEnd() {
  ThreadGroup& g = Current();
  if (g.depth == 0) return InvalidUsage("GroupEnd without GroupStart on this thread");
  if (--g.depth > 0) return OkStatus();
  std::vector<Pending> calls = std::move(g.calls);
  g.calls.clear();
  Status refused = g.first_error;
  g.first_error = OkStatus();
  Status waited = WaitAll(std::move(calls));
  return refused.ok() ? waited : refused;
}

CallGroup::~CallGroup() {
  if (ended_) return;
  Status st = End();
  if (!st.ok()) TUTTI_LOG(Error, Coll, "a group of calls ended by its scope failed: %s", st.ToString().c_str());
}

Status CallGroup::End() {
  if (ended_) return InvalidUsage("CallGroup::End called twice");
  ended_ = true;
  return GroupEnd();
}

namespace internal {

Status GroupAdd(Result<Work> started, GroupWait how) {
  ThreadGroup& g = Current();
  if (!started.ok()) {
    if (g.first_error.ok()) g.first_error = started.status();
    return started.status();
  }
  g.calls.push_back({std::move(*started), std::move(how)});
  return OkStatus();
}

}  // namespace internal
}  // namespace tutti
