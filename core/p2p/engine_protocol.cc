// P2PEngine: the wire protocol. Everything here runs with mu_ held, from Post() or from a
// connection's Progress(). Frames come from another process: ids, offsets and sizes are checked
// against what this side expects before any byte is placed.
#include <cstring>

#include "core/base/deadline.h"
#include "core/base/logging.h"
#include "core/p2p/engine.h"

namespace tutti {

namespace {
std::string R(int rank) { return "rank " + std::to_string(rank); }
}  // namespace

void P2PEngine::SendControlLocked(Peer& p, FrameType type, uint64_t id, uint64_t arg, const std::string* payload) {
  FrameHeader h = FrameOf(type);
  h.id = id;
  h.arg = arg;
  h.payload_len = payload ? payload->size() : 0;
  // (A CLOSE's reason is cut to what the connection takes; descriptors always fit.)
  if (type == FrameType::kClose) h.payload_len = std::min<uint64_t>(h.payload_len, p.conn->max_payload());
  Status st = p.conn->Enqueue(h, payload ? payload->data() : nullptr, 0);
  if (!st.ok()) TUTTI_LOG(Warn, P2P, "rank %d: could not send %s: %s", opts_.rank, FrameTypeName(type), st.ToString().c_str());
}

void P2PEngine::StartSendLocked(Peer& p, const std::shared_ptr<Op>& op) {
  op->msg_id = p.next_id++;
  FrameHeader h;
  h.tag = op->tag;
  h.sig = op->sig;
  h.id = op->msg_id;
  h.arg = op->size;
  size_t eager_max = std::min(opts_.eager_limit, p.conn->max_payload());
  // Collective messages and small point-to-point ones go without ACK (and cost the budget their
  // bookkeeping too).
  const bool post = op->sig != 0 || op->size <= kBufferedSendMax;
  const uint64_t cost = post ? op->size + kPostOverhead : op->size;
  // A point-to-point send too large to buffer waits for its receive in any case. Where the
  // receiver can read it straight from this buffer (shm: cross-memory attach) it goes as RTS: one
  // copy, by the receiver, instead of two through the FIFO.
  if (!post && op->size > 0 && !p.reads_declined) op->exposed = p.conn->Expose(op->buf, op->size);
  Status st;
  if (!op->exposed && op->size <= eager_max && p.eager_inflight + cost <= opts_.eager_budget) {
    op->eager = true;
    op->post = post;
    p.eager_inflight += cost;
    h.type = static_cast<uint8_t>(post ? FrameType::kPost : FrameType::kData);
    h.payload_len = op->size;
    p.sends[op->msg_id] = op;  // until OnSent (POST: the cookie is the id) or the ACK
    st = p.conn->Enqueue(h, op->buf, post ? op->msg_id : 0);
  } else {
    if (!op->exposed && op->size > 0) op->exposed = p.conn->Expose(op->buf, op->size);
    const std::string* desc = op->exposed ? &op->exposed->descriptor() : nullptr;
    h.type = static_cast<uint8_t>(FrameType::kRts);
    h.payload_len = desc ? desc->size() : 0;
    p.sends[op->msg_id] = op;
    st = p.conn->Enqueue(h, desc ? desc->data() : nullptr, 0);
  }
  if (!st.ok()) FailPeerLocked(op->peer, st, true);
}

bool P2PEngine::CheckMatchLocked(Peer& p, const std::shared_ptr<Op>& op, FrameType type, uint64_t id, uint64_t size,
                                 uint32_t sig) {
  op->matched = true;
  op->msg_id = id;
  if (sig == op->sig && size == op->size) return true;
  std::string what = sig != op->sig
                         ? " matched a message of a different collective call on rank " + std::to_string(op->peer) +
                               " (signature " + std::to_string(sig) + ", expected " + std::to_string(op->sig) +
                               "): ranks called different collectives, counts, types, ops or roots in this call "
                               "or an earlier one"
                         : " matched a send of " + std::to_string(size) + " bytes: sizes differ";
  Complete(op, MismatchError(R(opts_.rank) + ": " + op->Describe() + what));
  if (p.closed.ok()) {
    FrameHeader h = FrameOf(FrameType::kNack);
    h.id = id;
    h.arg = op->size;
    h.sig = op->sig;
    h.tag = op->tag;
    Status st = p.conn->Enqueue(h, nullptr, 0);
    if (!st.ok()) TUTTI_LOG(Warn, P2P, "rank %d: could not send NACK: %s", opts_.rank, st.ToString().c_str());
  }
  // A refused POST is not held either: its budget goes back as credit.
  if (type == FrameType::kPost) ConsumedEagerLocked(p, type, id, size);
  return false;
}

void P2PEngine::MatchLocked(Peer& p, const std::shared_ptr<Op>& op, const std::shared_ptr<Incoming>& in) {
  if (!CheckMatchLocked(p, op, in->type, in->id, in->size, in->sig)) return;
  if (in->type == FrameType::kRts) {
    HandleRtsLocked(p, op, in->size, in->descriptor);
    return;
  }
  if (!in->complete) {
    in->waiting = op;  // finished when the payload is in (OnFrame)
    return;
  }
  if (op->size > 0) std::memcpy(op->buf, in->data.data(), op->size);
  Complete(op, OkStatus());
  ConsumedEagerLocked(p, in->type, in->id, in->size);
}

void P2PEngine::ConsumedEagerLocked(Peer& p, FrameType type, uint64_t id, uint64_t bytes) {
  if (!p.closed.ok()) return;
  if (type != FrameType::kPost) {
    SendControlLocked(p, FrameType::kAck, id, 0);
    return;
  }
  // Credit goes back in batches, a quarter of the budget at a time: the sender's room never
  // falls below three quarters of it for messages this rank has taken.
  p.credit_owed += bytes + kPostOverhead;
  if (p.credit_owed < std::max<size_t>(opts_.eager_budget / 4, 1)) return;
  SendControlLocked(p, FrameType::kCredit, 0, p.credit_owed);
  p.credit_owed = 0;
}

void P2PEngine::HandleRtsLocked(Peer& p, const std::shared_ptr<Op>& op, uint64_t size, const std::string& desc) {
  if (!p.closed.ok()) {
    Complete(op, p.closed.WithContext(R(opts_.rank) + ": " + op->Describe()));
    return;
  }
  if (!desc.empty() && !p.one_sided_off && (opts_.one_sided_all || (op->copy && size <= kCopyReadMax))) {
    // Once one-sided access has worked with this peer, large messages are copied by both sides
    // at once: we read the head while the sender writes the tail into our buffer.
    std::shared_ptr<const ExposedRegion> mine =
        p.one_sided_ok && size >= kSplitCopyMin ? p.conn->Expose(op->buf, size) : nullptr;
    if (mine) {
      const uint64_t split = (size / 2) & ~uint64_t{4095};
      op->exposed = std::move(mine);
      op->bytes_done = 0;
      p.bulk_recvs[op->msg_id] = op;
      SendControlLocked(p, FrameType::kCts, op->msg_id, split, &op->exposed->descriptor());
      Status st = PostAccessLocked(p, op, AccessRole::kHeadRead, desc, 0, split);
      if (!st.ok()) FailAllLocked(st.WithContext(R(opts_.rank) + ": " + op->Describe()));
      return;  // the head arrives in OnAccessDone, the tail with DONE
    }
    Status st = PostAccessLocked(p, op, AccessRole::kWholeRead, desc, 0, size);
    if (st.ok()) return;  // finished in OnAccessDone
    TUTTI_LOG(Info, P2P, "rank %d: one-sided read from rank %d not possible (%s); asking for the data",
              opts_.rank, op->peer, st.ToString().c_str());
    if (st.code() == Code::kUnavailable) p.one_sided_off = true;
  }
  if (size == 0) {
    Complete(op, OkStatus());
  } else {
    op->bytes_done = 0;
    p.bulk_recvs[op->msg_id] = op;
  }
  p.conn->ExpectBulk(size);  // the BULK frames the CTS asks for
  SendControlLocked(p, FrameType::kCts, op->msg_id, 0);
}

// `op` is taken by value: callers pass the map entry that this function erases.
void P2PEngine::AddReceivedLocked(Peer& p, std::shared_ptr<Op> op, uint64_t bytes) {
  op->bytes_done += bytes;
  if (op->bytes_done < op->size) return;
  p.bulk_recvs.erase(op->msg_id);
  Complete(op, OkStatus());
  SendControlLocked(p, FrameType::kAck, op->msg_id, 0);
}

void P2PEngine::StartBulkLocked(Peer& p, const std::shared_ptr<Op>& op, uint64_t from, const std::string& desc) {
  op->bytes_done = from;
  if (!desc.empty() && from < op->size) {
    Status st = PostAccessLocked(p, op, AccessRole::kTailWrite, desc, from, op->size - from);
    if (st.ok()) return;  // DONE goes out in OnAccessDone
    TUTTI_LOG(Info, P2P, "rank %d: one-sided write to rank %d not possible (%s); streaming", opts_.rank,
              op->peer, st.ToString().c_str());
  }
  p.streaming.push_back(op);
  PumpStreamingLocked(p);
}

Status P2PEngine::PostAccessLocked(Peer& p, const std::shared_ptr<Op>& op, AccessRole role,
                                   const std::string& desc, uint64_t offset, uint64_t len) {
  const uint64_t cookie = next_cookie_++;
  Status st = role == AccessRole::kTailWrite ? p.conn->PostWrite(op->buf + offset, desc, offset, len, cookie)
                                             : p.conn->PostRead(desc, offset, op->buf + offset, len, cookie);
  if (!st.ok()) return st;
  p.accesses[cookie] = PendingAccess{op, role, len};
  accesses_posted_.fetch_add(1);
  return OkStatus();
}

void P2PEngine::OnAccessDone(int peer, uint64_t cookie, const Status& st) {
  Peer& p = peers_[peer];
  auto it = p.accesses.find(cookie);
  if (it == p.accesses.end()) return;  // its operation failed meanwhile
  const PendingAccess a = std::move(it->second);
  p.accesses.erase(it);
  accesses_posted_.fetch_sub(1);
  const std::shared_ptr<Op>& op = a.op;
  if (op->done.load(std::memory_order_relaxed)) return;
  const bool unavailable = st.code() == Code::kUnavailable;
  switch (a.role) {
    case AccessRole::kWholeRead:
      if (st.ok()) {
        p.one_sided_ok = true;
        Complete(op, OkStatus());
        SendControlLocked(p, FrameType::kAck, op->msg_id, 0);
        return;
      }
      if (unavailable) {  // the sender streams it instead
        TUTTI_LOG(Info, P2P, "rank %d: one-sided read from rank %d failed (%s); asking for the data from now on",
                  opts_.rank, peer, st.ToString().c_str());
        p.one_sided_off = true;
        op->bytes_done = 0;
        p.bulk_recvs[op->msg_id] = op;
        p.conn->ExpectBulk(op->size);
        SendControlLocked(p, FrameType::kCts, op->msg_id, 0);
        return;
      }
      break;
    case AccessRole::kHeadRead:
      if (st.ok()) {
        if (p.bulk_recvs.count(op->msg_id)) AddReceivedLocked(p, op, a.len);
        return;
      }
      break;  // the sender is writing the tail already: no way back to streaming
    case AccessRole::kTailWrite:
      if (st.ok()) {
        SendControlLocked(p, FrameType::kDone, op->msg_id, a.len);
        return;
      }
      if (unavailable) {
        TUTTI_LOG(Info, P2P, "rank %d: one-sided write to rank %d failed (%s); streaming", opts_.rank, peer,
                  st.ToString().c_str());
        p.streaming.push_back(op);
        PumpStreamingLocked(p);
        return;
      }
      break;
  }
  FailAllLocked(st.WithContext(R(opts_.rank) + ": " + op->Describe()));
}

void P2PEngine::PumpStreamingLocked(Peer& p) {
  const size_t piece = p.conn->max_payload();
  const size_t window = 4 * piece;
  while (!p.streaming.empty() && p.conn->queued_bytes() < window) {
    std::shared_ptr<Op> op = p.streaming.front();
    size_t n = std::min(piece, op->size - op->bytes_done);
    bool last = op->bytes_done + n == op->size;
    FrameHeader h = FrameOf(FrameType::kBulk);
    h.id = op->msg_id;
    h.arg = op->bytes_done;
    h.payload_len = n;
    Status st = p.conn->Enqueue(h, op->buf + op->bytes_done, 0);
    if (!st.ok()) {
      FailPeerLocked(op->peer, st, true);
      return;
    }
    op->bytes_done += n;
    if (last) p.streaming.pop_front();  // completes on the receiver's ACK
  }
}

Result<void*> P2PEngine::OnHeader(int peer, const FrameHeader& h) {
  Peer& p = peers_[peer];
  // (The transport checked the envelope, the payload within its limit; the rest is ours to check.)
  if (Status st = ValidateFrame(h, ~uint64_t{0}); !st.ok()) return st.WithContext("a frame from " + R(peer));
  p.last_heard = CoarseNow();  // per frame: the cheap clock (heartbeats count in seconds)
  switch (TypeOf(h)) {
    case FrameType::kData:
    case FrameType::kPost: {
      if (std::shared_ptr<Op> op = TakePostedLocked(p, peer, h.tag)) {
        if (!CheckMatchLocked(p, op, TypeOf(h), h.id, h.arg, h.sig)) return static_cast<void*>(nullptr);
        p.cur_op = op;
        return static_cast<void*>(op->buf);
      }
      auto in = std::make_shared<Incoming>();
      in->type = TypeOf(h);
      in->id = h.id;
      in->tag = h.tag;
      in->sig = h.sig;
      in->size = h.arg;
      in->data.Allocate(h.payload_len);  // bounded: validated above
      AddUnexpectedLocked(p, in);
      p.cur_in = in;
      return static_cast<void*>(in->data.data());
    }
    case FrameType::kRts:
    case FrameType::kCts:
    case FrameType::kClose:
      p.cur_descriptor.resize(h.payload_len);
      return static_cast<void*>(p.cur_descriptor.data());
    case FrameType::kBulk: {
      auto it = p.bulk_recvs.find(h.id);
      if (it == p.bulk_recvs.end()) {
        // After a failure the message was forgotten while the peer may still be sending it.
        if (!failed_.ok()) return static_cast<void*>(nullptr);
        return ProtocolError("BULK frame for unknown message " + std::to_string(h.id) + " from " + R(peer));
      }
      const Op& op = *it->second;
      if (h.arg > op.size || h.payload_len > op.size - h.arg)
        return ProtocolError("BULK frame [" + std::to_string(h.arg) + ", +" + std::to_string(h.payload_len) +
                             ") outside the " + std::to_string(op.size) + "-byte message from " + R(peer));
      return static_cast<void*>(op.buf + h.arg);
    }
    default:
      return static_cast<void*>(nullptr);
  }
}

// A frame whose payload is in place, by type. Runs with mu_ held, inside the connection's
// Progress().
Status P2PEngine::OnFrame(int peer, const FrameHeader& h) {
  Peer& p = peers_[peer];
  switch (TypeOf(h)) {
    case FrameType::kData:
    case FrameType::kPost: return OnDataLocked(p, peer, h);
    case FrameType::kCredit: return OnCreditLocked(p, peer, h);
    case FrameType::kRts: return OnRtsLocked(p, peer, h);
    case FrameType::kBulk: return OnBulkLocked(p, peer, h);
    case FrameType::kDone: return OnDoneLocked(p, peer, h);
    case FrameType::kAck:
    case FrameType::kNack:
    case FrameType::kCts: return OnReplyLocked(p, peer, h);
    case FrameType::kPing: return OkStatus();  // OnHeader noted that the peer is alive
    case FrameType::kClose: return OnCloseLocked(p, peer, h);
  }
  return ProtocolError("unknown frame type from " + R(peer));
}

Status P2PEngine::OnDataLocked(Peer& p, int peer, const FrameHeader& h) {
  if (p.cur_op) {
    Complete(p.cur_op, OkStatus());
    p.cur_op.reset();
    ConsumedEagerLocked(p, TypeOf(h), h.id, h.payload_len);
  } else if (p.cur_in) {
    std::shared_ptr<Incoming> in = std::move(p.cur_in);
    in->complete = true;
    if (in->waiting) {
      std::shared_ptr<Op> op = std::move(in->waiting);
      if (op->size > 0) std::memcpy(op->buf, in->data.data(), op->size);
      Complete(op, OkStatus());
      ConsumedEagerLocked(p, TypeOf(h), h.id, h.payload_len);
    }
  }
  return OkStatus();
}

Status P2PEngine::OnCreditLocked(Peer& p, int peer, const FrameHeader& h) {
  if (h.arg > p.eager_inflight) {
    if (!failed_.ok()) return OkStatus();  // the budget was reset at the failure
    return ProtocolError("CREDIT for " + std::to_string(h.arg) + " bytes from " + R(peer) + ", but only " +
                         std::to_string(p.eager_inflight) + " are in flight to it");
  }
  p.eager_inflight -= h.arg;
  return OkStatus();
}

Status P2PEngine::OnRtsLocked(Peer& p, int peer, const FrameHeader& h) {
  auto in = std::make_shared<Incoming>();
  in->type = FrameType::kRts;
  in->id = h.id;
  in->tag = h.tag;
  in->sig = h.sig;
  in->size = h.arg;
  in->descriptor = p.cur_descriptor;
  in->complete = true;
  if (std::shared_ptr<Op> op = TakePostedLocked(p, peer, h.tag)) {
    MatchLocked(p, op, in);
  } else {
    AddUnexpectedLocked(p, std::move(in));
  }
  return OkStatus();
}

Status P2PEngine::OnBulkLocked(Peer& p, int peer, const FrameHeader& h) {
  auto it = p.bulk_recvs.find(h.id);
  if (it == p.bulk_recvs.end()) return OkStatus();  // failed meanwhile
  AddReceivedLocked(p, it->second, h.payload_len);
  return OkStatus();
}

Status P2PEngine::OnDoneLocked(Peer& p, int peer, const FrameHeader& h) {
  auto it = p.bulk_recvs.find(h.id);
  if (it == p.bulk_recvs.end()) {
    if (!failed_.ok()) return OkStatus();  // forgotten at the failure
    return ProtocolError("DONE for unknown message " + std::to_string(h.id) + " from " + R(peer));
  }
  if (h.arg > it->second->size - it->second->bytes_done)
    return ProtocolError("DONE for more bytes than message " + std::to_string(h.id) + " has left");
  AddReceivedLocked(p, it->second, h.arg);
  return OkStatus();
}

// ACK, NACK or CTS: the receiver's answer to one of our sends.
Status P2PEngine::OnReplyLocked(Peer& p, int peer, const FrameHeader& h) {
  auto it = p.sends.find(h.id);
  if (it == p.sends.end() && !failed_.ok()) return OkStatus();  // forgotten at the failure
  if (it == p.sends.end() && TypeOf(h) == FrameType::kNack && h.id > 0 && h.id < p.next_id) {
    // A POST whose send completed when it was sent, refused by the receive it met.
    if (h.sig == 0) {
      // A buffered point-to-point send: that receive failed with the sizes; the send's caller
      // has moved on, as after MPI_Send.
      TUTTI_LOG(Warn, P2P,
                "rank %d: a send to rank %d (tag %d, message %llu) completed when buffered, then met a receive "
                "of %llu bytes there that refused it: sizes differ (the receive failed with kMismatch)",
                opts_.rank, peer, static_cast<int>(h.tag), static_cast<unsigned long long>(h.id),
                static_cast<unsigned long long>(h.arg));
      return OkStatus();
    }
    // A collective's: the call it belonged to (maybe finished) did not match the peer's, so
    // nothing this communicator does from here can be trusted.
    FailAllLocked(MismatchError(R(opts_.rank) + ": a collective message sent to rank " + std::to_string(peer) +
                                " was matched by a receive of a different collective call there: ranks called "
                                "different collectives, counts, types, ops or roots in this call or an earlier one"));
    return OkStatus();
  }
  if (it == p.sends.end())
    return ProtocolError(std::string(FrameTypeName(TypeOf(h))) + " for unknown message " +
                         std::to_string(h.id) + " from " + R(peer));
  std::shared_ptr<Op> op = it->second;
  if (TypeOf(h) == FrameType::kCts && op->matched)
    return ProtocolError("second CTS for message " + std::to_string(h.id) + " from " + R(peer));
  if (TypeOf(h) != FrameType::kCts || op->size == 0) p.sends.erase(it);  // else: ACK after the data
  op->matched = true;
  if (op->eager && !op->post && TypeOf(h) != FrameType::kCts) p.eager_inflight -= op->size;
  if (TypeOf(h) == FrameType::kAck) {
    Complete(op, OkStatus());
  } else if (TypeOf(h) == FrameType::kNack) {
    Complete(op, MismatchError(
                     R(opts_.rank) + ": " + op->Describe() +
                     (h.sig != op->sig ? " was matched by a receive of a different collective call on rank " +
                                             std::to_string(peer) +
                                             ": ranks called different collectives, counts, types, ops or "
                                             "roots in this call or an earlier one"
                                       : " was matched by a recv of " + std::to_string(h.arg) + " bytes on rank " +
                                             std::to_string(peer) + ": sizes differ")));
  } else if (op->eager) {
    return ProtocolError("CTS for an eager message from " + R(peer));
  } else if (op->size == 0) {
    Complete(op, OkStatus());
  } else if (h.arg > op->size) {
    return ProtocolError("CTS from " + R(peer) + " starts past the end of message " + std::to_string(h.id));
  } else {
    // A CTS from the start: the receiver asks for the data instead of reading it (it cannot, or
    // its receive is not a copy); from now on the point-to-point sends to it that fit a DATA
    // frame go as one again.
    if (h.arg == 0 && op->exposed && op->sig == 0 && op->size <= std::min(opts_.eager_limit, p.conn->max_payload()))
      p.reads_declined = true;
    StartBulkLocked(p, op, h.arg, p.cur_descriptor);
  }
  return OkStatus();
}

Status P2PEngine::OnCloseLocked(Peer& p, int peer, const FrameHeader& h) {
  TUTTI_LOG(Info, P2P, "rank %d: rank %d closed its communicator", opts_.rank, peer);
  if (!p.cur_descriptor.empty()) {
    // The peer gave up because of an error: this communicator cannot go on either, and
    // every rank should hear the original cause (which names the rank that failed first).
    Status why = RemoteError(R(peer) + " left after an error: " + p.cur_descriptor);
    p.closed = why;
    FailAllLocked(why);
    return OkStatus();
  }
  p.closed = RemoteError(R(peer) + " closed its communicator (destroyed or exited)");
  // Messages that already arrived stay receivable; everything else with this peer fails.
  TagQueues<Incoming> unexpected = p.unexpected.Take();
  FailPeerOpsLocked(p, p.closed);
  unexpected.ForEach([&](int tag, const std::shared_ptr<Incoming>& in) {
    if (in->type != FrameType::kRts && in->complete) p.unexpected.Push(tag, in);
  });
  // An any-source receive can still match what arrived, or a rank that is still here.
  bool open = false;
  for (int i = 0; i < opts_.size; ++i)
    if (i != opts_.rank && peers_[i].closed.ok()) open = true;
  if (!open) FailAnySourceLocked(RemoteError("every other rank has closed its communicator"));
  return OkStatus();
}

// Only POST frames carry a cookie (their message id); every other send completes on the
// receiver's answer, which also proves the bytes arrived.
void P2PEngine::OnSent(int peer, uint64_t cookie) {
  Peer& p = peers_[peer];
  auto it = p.sends.find(cookie);
  if (it == p.sends.end() || !it->second->post) return;  // answered by a NACK, or failed meanwhile
  std::shared_ptr<Op> op = std::move(it->second);
  p.sends.erase(it);
  Complete(op, OkStatus());
}

}  // namespace tutti
