// Groups of calls, as ncclGroupStart / ncclGroupEnd: between GroupStart() and GroupEnd() on a
// thread, the blocking point-to-point calls and collectives of every communicator start without
// waiting, and GroupEnd() waits for all of them together. So one rank may send to and receive
// from the same peer in a group (a halo exchange, a ring shift) without ordering the two calls
// against the peer's, and several communicators' calls overlap.
//
//   tutti::GroupStart();
//   comm.Send(out, n, right, 0);
//   comm.Recv(in, n, left, 0);
//   TUTTI_RETURN_IF_ERROR(tutti::GroupEnd());
//
// Details:
// - Groups nest; only the outermost GroupEnd() waits. They are per thread.
// - A call in a group is issued at once (as its I-form would be) and returns its argument errors
//   at once; its buffers must stay as they are until GroupEnd() returns. GroupEnd() returns the
//   first failure among the group's calls (one refused at issue included), after waiting for
//   every call that started. Each call keeps its own timeout, counted from GroupEnd().
// - Calls given a stream (CollOptions::stream, a HostStream) are ordered by their stream, not by
//   the group. RecvAny, which returns the sender, is refused in a group (use IRecv with
//   kAnySource). I-forms, Split and the other calls behave as outside a group.
// - Calls of a communicator still come in the same order on every rank, group or not.
#pragma once

#include <functional>
#include <string>

#include "core/base/status.h"
#include "core/work.h"

namespace tutti {

void GroupStart();
// Waits for the calls of the group (only at the outermost end). kInvalidUsage without a
// GroupStart on this thread.
Status GroupEnd();
// True between GroupStart and its GroupEnd on this thread.
bool InGroup();

// A group for the scope: GroupStart now; End() ends it and waits, else the destructor does (and
// logs a failure, which nobody could see otherwise).
class CallGroup {
 public:
  CallGroup() { GroupStart(); }
  ~CallGroup();
  CallGroup(const CallGroup&) = delete;
  CallGroup& operator=(const CallGroup&) = delete;
  Status End();

 private:
  bool ended_ = false;
};

namespace internal {

// How GroupEnd waits for a call: its timeout (seconds from GroupEnd; < 0 none) and how its
// communicator pauses (Waiter's spin and yield phases; `block` sleeps until its engine sees
// activity or `us` pass).
struct GroupWait {
  double timeout_s = 300;
  int spin_us = 0, yield_us = 0;
  std::function<void(int us)> block;
  std::string who;  // "rank R: all_reduce", names the call in a timeout
};
// Hands a call of the current group to GroupEnd: its Work once started, or the failure that kept
// it from starting (returned as is, so the call returns it too).
Status GroupAdd(Result<Work> started, GroupWait how);

}  // namespace internal
}  // namespace tutti
