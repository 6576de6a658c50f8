// The proxy between hosts: FIFO connections whose two ends live on different hosts are two
// copies of the connection memory (fifo.h), one on each host, and a proxy on each host moves
// pieces and credits between them over a byte stream (a TCP socket; a socketpair in tests).
//
//   sender's host:   the kernel (or stream thread) writes pieces into its copy as usual; the
//                    proxy forwards each published piece (Simple: after its tail; LL: once every
//                    word carries the piece's flag) and sets the copy's head from the credits
//                    that come back, so slots are reused only once the far receiver is done;
//   receiver's host: the proxy writes each piece into the same slot of its copy (Simple: bytes,
//                    size, then tail; LL: the words with their flags), and sends the copy's head
//                    back as credits whenever the receiver consumed more.
//
// So the primitives do not know whether a peer is on their host. Poll() never blocks; one
// thread (or the host world's scheduler) calls it. Wire format, per message: a 32-byte header
// (magic, kind, connection, sequence number, size or head) and, for data, the piece's bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "kernels/prims/fifo.h"

namespace tutti::prims {

// The wire format: every message starts with this header, in the host's byte order (proxies
// talk to proxies of the same build); a kProxyData header is followed by `value` bytes.
constexpr uint32_t kProxyMagic = 0x74504659;
constexpr uint32_t kProxyData = 1;    // seq: the piece; value: its bytes; tag: its call tag
constexpr uint32_t kProxyCredit = 2;  // value: the receiver's head
struct ProxyHeader {
  uint32_t magic;
  uint32_t kind;
  uint32_t id;   // the connection
  uint32_t tag;  // kProxyData: the piece's call tag (fifo.h), 0 otherwise
  uint64_t seq;
  uint64_t value;
};
static_assert(sizeof(ProxyHeader) == 32);

class FifoProxy {
 public:
  // `fd`: a connected stream socket to the proxy on the other host (owned, made non-blocking);
  // `name` appears in errors ("proxy host 0 <-> host 1").
  FifoProxy(int fd, const FifoGeom& geom, std::string name);
  ~FifoProxy();
  FifoProxy(const FifoProxy&) = delete;
  FifoProxy& operator=(const FifoProxy&) = delete;

  // A connection this host sends on (`local`: this host's copy); `id` names it on both hosts.
  void AddOutbound(uint32_t id, ConnCtl* local);
  // A connection this host receives on.
  void AddInbound(uint32_t id, ConnCtl* local);

  // Moves what it can: true in *moved if anything moved. Errors: the link closed or failed
  // (kRemoteError / kSystemError), a malformed message (kProtocol: unknown connection, piece out
  // of order or too large, credit beyond what was sent).
  Status Poll(bool* moved);

 private:
  struct Out {
    uint32_t id;
    ConnCtl* conn;
    uint64_t next;  // next piece to forward
  };
  struct In {
    uint32_t id;
    ConnCtl* conn;
    uint64_t expect;    // next piece to arrive
    uint64_t credited;  // head last sent back
  };
  Status Collect(bool* moved);
  Status Flush(bool* moved);
  Status Receive(bool* moved);
  Status Deliver(const uint8_t* msg, size_t* used);
  Status Fail(Status st) const { return st.WithContext(name_); }

  int fd_;
  FifoGeom geom_;
  std::string name_;
  std::vector<Out> outs_;
  std::vector<In> ins_;
  std::vector<uint8_t> tx_;  // bytes not yet written
  size_t tx_at_ = 0;
  std::vector<uint8_t> rx_;  // bytes read, not yet delivered
  std::vector<uint8_t> scratch_;
};

}  // namespace tutti::prims
