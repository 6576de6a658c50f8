// What a transport shares among its connections of one communicator: progress. One call finds
// the connections that may have work (data arrived, output queued, an access finished), as a
// shared completion queue would for RDMA or an epoll set does for sockets, so the protocol
// layer does not ask every connection in turn.
#pragma once

#include <vector>

#include "transport/transport.h"

namespace tutti {

class TransportContext {
 public:
  virtual ~TransportContext() = default;
  // A connection this context drives (owned by the protocol layer, which keeps it until the
  // context is gone; a closed connection may stay attached).
  virtual void Attach(Connection* c) = 0;
  // Appends the attached connections that may have work now. Never blocks; may name a
  // connection that has none (a spurious entry costs one Progress call), never omits one
  // that has.
  virtual void Ready(std::vector<Connection*>* out) = 0;
};

// Names every attached connection: for transports where checking a connection is as cheap as
// any poll could be (a shared-memory ring is checked by reading its index).
class PollEveryConnection : public TransportContext {
 public:
  void Attach(Connection* c) override { conns_.push_back(c); }
  void Ready(std::vector<Connection*>* out) override { out->insert(out->end(), conns_.begin(), conns_.end()); }

 private:
  std::vector<Connection*> conns_;
};

}  // namespace tutti
