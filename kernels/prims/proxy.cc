#include "kernels/prims/proxy.h"

#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "core/base/socket_util.h"

namespace tutti::prims {
namespace {

// Forwarding stops while this many bytes wait to be written (the link is the bottleneck).
constexpr size_t kMaxQueued = 1 << 20;

}  // namespace

FifoProxy::FifoProxy(int fd, const FifoGeom& geom, std::string name) : fd_(fd), geom_(geom), name_(std::move(name)) {
  SetNonBlocking(fd_, true).IgnoreError();  // a blocking fd still works, only less well
  scratch_.resize(geom_.slot_bytes);
}

FifoProxy::~FifoProxy() {
  if (fd_ >= 0) close(fd_);
}

void FifoProxy::AddOutbound(uint32_t id, ConnCtl* local) { outs_.push_back(Out{id, local, LoadAcquire(&local->tail)}); }

void FifoProxy::AddInbound(uint32_t id, ConnCtl* local) {
  const uint64_t head = LoadAcquire(&local->head);
  ins_.push_back(In{id, local, head, head});
}

Status FifoProxy::Poll(bool* moved) {
  *moved = false;
  if (Status st = Receive(moved); !st.ok()) return Fail(st);
  if (Status st = Collect(moved); !st.ok()) return Fail(st);
  if (Status st = Flush(moved); !st.ok()) return Fail(st);
  return OkStatus();
}

// Published pieces of outbound connections and consumed pieces of inbound ones, queued.
Status FifoProxy::Collect(bool* moved) {
  const Team team;
  auto queue = [&](uint32_t kind, uint32_t id, uint32_t tag, uint64_t seq, uint64_t value, const void* data,
                   size_t bytes) {
    const ProxyHeader h{kProxyMagic, kind, id, tag, seq, value};
    const size_t at = tx_.size();
    tx_.resize(at + sizeof h + bytes);
    std::memcpy(tx_.data() + at, &h, sizeof h);
    if (bytes > 0) std::memcpy(tx_.data() + at + sizeof h, data, bytes);
    *moved = true;
  };
  for (In& in : ins_) {
    const uint64_t head = LoadAcquire(&in.conn->head);
    if (head != in.credited) {
      queue(kProxyCredit, in.id, 0, 0, head, nullptr, 0);
      in.credited = head;
    }
  }
  for (Out& out : outs_) {
    while (tx_.size() - tx_at_ < kMaxQueued && LoadAcquire(&out.conn->tail) > out.next) {
      // Simple: the size word beside the slot; LL: the piece's size and tag words (the flags
      // make the words valid, whatever order the sender's stores became visible in).
      uint64_t bytes = 0;
      uint32_t tag = 0;
      const uint8_t* data = Slot(out.conn, geom_, out.next);
      if (geom_.proto == Proto::kLL) {
        uint32_t ll_bytes = 0;
        if (!LLHeader(out.conn, geom_, out.next, &ll_bytes, &tag)) break;
        bytes = ll_bytes;
      } else {
        const uint64_t w = SlotSizes(out.conn)[out.next % geom_.nslots];
        bytes = SizeOf(w);
        tag = TagOf(w);
      }
      if (bytes > PieceCapacity(geom_)) {
        return ProtocolError("connection " + std::to_string(out.id) + " piece " + std::to_string(out.next) + " claims " +
                             std::to_string(bytes) + " bytes");
      }
      if (geom_.proto == Proto::kLL) {
        if (!LLArrivedPart(team, out.conn, geom_, out.next, static_cast<uint32_t>(bytes))) break;
        LLUnpackPart(team, out.conn, geom_, out.next, static_cast<uint32_t>(bytes), scratch_.data());
        data = scratch_.data();
      }
      queue(kProxyData, out.id, tag, out.next, bytes, data, bytes);
      ++out.next;
    }
  }
  return OkStatus();
}

Status FifoProxy::Flush(bool* moved) {
  while (tx_at_ < tx_.size()) {
    const ssize_t n = send(fd_, tx_.data() + tx_at_, tx_.size() - tx_at_, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      if (errno == EPIPE || errno == ECONNRESET) return RemoteError("the link to the other host closed");
      return SystemError("send");
    }
    tx_at_ += static_cast<size_t>(n);
    *moved = true;
  }
  if (tx_at_ == tx_.size()) {
    tx_.clear();
    tx_at_ = 0;
  } else if (tx_at_ > kMaxQueued) {
    tx_.erase(tx_.begin(), tx_.begin() + static_cast<long>(tx_at_));
    tx_at_ = 0;
  }
  return OkStatus();
}

Status FifoProxy::Receive(bool* moved) {
  uint8_t buf[65536];
  bool closed = false;
  for (;;) {
    const ssize_t n = recv(fd_, buf, sizeof buf, 0);
    if (n == 0) {
      closed = true;  // what came before is still delivered
      break;
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      if (errno == ECONNRESET) return RemoteError("the link to the other host was reset");
      return SystemError("recv");
    }
    rx_.insert(rx_.end(), buf, buf + n);
    *moved = true;
    if (static_cast<size_t>(n) < sizeof buf) break;
  }
  size_t at = 0;
  while (rx_.size() - at >= sizeof(ProxyHeader)) {
    size_t used = 0;
    if (Status st = Deliver(rx_.data() + at, &used); !st.ok()) return st;
    if (used == 0) break;  // the rest of a piece is still on its way
    at += used;
  }
  rx_.erase(rx_.begin(), rx_.begin() + static_cast<long>(at));
  if (closed) return RemoteError("the link to the other host closed");
  return OkStatus();
}

// One message at msg (a whole header is there); *used = its length, 0 if incomplete.
Status FifoProxy::Deliver(const uint8_t* msg, size_t* used) {
  ProxyHeader h;
  std::memcpy(&h, msg, sizeof h);
  if (h.magic != kProxyMagic) return ProtocolError("a message without the proxy's magic number (another program?)");
  const std::string conn = "connection " + std::to_string(h.id);
  if (h.kind == kProxyCredit) {
    auto it = std::find_if(outs_.begin(), outs_.end(), [&](const Out& o) { return o.id == h.id; });
    if (it == outs_.end()) return ProtocolError("a credit for unknown " + conn);
    if (h.value > it->next || h.value < LoadAcquire(&it->conn->head)) {
      return ProtocolError("a credit of " + std::to_string(h.value) + " on " + conn + ", which has sent " +
                           std::to_string(it->next));
    }
    StoreRelease(&it->conn->head, h.value);
    *used = sizeof h;
    return OkStatus();
  }
  if (h.kind != kProxyData) return ProtocolError("a message of unknown kind " + std::to_string(h.kind));
  auto it = std::find_if(ins_.begin(), ins_.end(), [&](const In& i) { return i.id == h.id; });
  if (it == ins_.end()) return ProtocolError("a piece for unknown " + conn);
  if (h.value > PieceCapacity(geom_)) {
    return ProtocolError("a piece of " + std::to_string(h.value) + " bytes on " + conn + " (slots carry " +
                         std::to_string(PieceCapacity(geom_)) + ")");
  }
  if (h.seq != it->expect) {
    return ProtocolError("piece " + std::to_string(h.seq) + " on " + conn + " where piece " +
                         std::to_string(it->expect) + " was next");
  }
  // A sender keeps to the credits this side returned, so the slot is free; one that does not
  // would overwrite a piece the receiver has not read.
  if (h.seq >= LoadAcquire(&it->conn->head) + geom_.nslots) {
    return ProtocolError("piece " + std::to_string(h.seq) + " on " + conn + " beyond the credits returned");
  }
  if (sizeof h + h.value > static_cast<size_t>(rx_.data() + rx_.size() - msg)) return OkStatus();
  const uint8_t* data = msg + sizeof h;
  const uint32_t bytes = static_cast<uint32_t>(h.value);
  if (geom_.proto == Proto::kLL) {
    // LLPackPart reads whole 4-byte words.
    std::memset(scratch_.data(), 0, LLDataWords(bytes) * 4);
    std::memcpy(scratch_.data(), data, bytes);
    LLPackPart(Team{}, it->conn, geom_, h.seq, bytes, h.tag, scratch_.data());
    StoreRelease(&it->conn->tail, h.seq + 1);
  } else {
    if (bytes > 0) std::memcpy(Slot(it->conn, geom_, h.seq), data, bytes);
    SlotSizes(it->conn)[h.seq % geom_.nslots] = SizeWord(bytes, h.tag);
    StoreRelease(&it->conn->tail, h.seq + 1);
  }
  ++it->expect;
  *used = sizeof h + bytes;
  return OkStatus();
}

}  // namespace tutti::prims
