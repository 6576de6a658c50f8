// How transports connect ranks: the transport contract's setup half.
//
// The communicator decodes every rank's card and, for each peer, asks the transports in order
// of preference whether they can connect the pair (CanConnect, from the cards alone: same host
// for shm, anything for tcp; CUDA IPC and RDMA will ask for GPUs and NICs). Each transport then
// connects its peers through a SetupExchange, a rendezvous the communicator provides (its store,
// namespaced per communicator): setup blobs (a segment name, a listening address, later IPC
// handles or RDMA queue-pair numbers) are published under keys and read by the peer, every read
// bounded by the init deadline and failing with the peer's name. Connect takes the set of peers
// to connect, so a transport is asked only for the pairs that use it.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/base/status.h"
#include "transport/context.h"
#include "transport/transport.h"

namespace tutti {

// What a rank tells the others about itself (decoded and validated by the communicator).
struct PeerInfo {
  std::string host_id;   // hostname + boot id + network namespace, or TUTTI_HOST_ID
  int64_t pid = 0;
  std::string doorbell;  // shm name of the rank's doorbell ("" if none)
};

class SetupExchange {
 public:
  virtual ~SetupExchange() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Publishes a blob under `key` for the other ranks.
  virtual Status Put(const std::string& key, const std::string& blob) = 0;
  // The blob rank `from` published under `key`; waits up to the deadline. `what` names the wait
  // in the error ("shared memory from rank 3").
  virtual Result<std::string> Get(int from, const std::string& key, const std::string& what) = 0;
  virtual std::chrono::steady_clock::time_point deadline() const = 0;
  // An id of this communicator, the same on every rank (for handshakes: connections cannot
  // cross communicators).
  virtual Result<uint64_t> CommId() = 0;
};

class TransportSetup {
 public:
  virtual ~TransportSetup() = default;
  virtual const char* name() const = 0;
  // The context that drives progress for this transport's connections of one communicator.
  virtual std::unique_ptr<TransportContext> MakeContext() const { return std::make_unique<PollEveryConnection>(); }
  // Whether this transport can connect `me` and `peer`, judged from their cards.
  virtual bool CanConnect(const PeerInfo& me, const PeerInfo& peer) const = 0;
  // Connects to every rank in `peers` (each of them calls Connect with this rank among its
  // peers); `cards` are every rank's, by rank. Returns the connections by peer rank.
  virtual Result<std::map<int, std::unique_ptr<Connection>>> Connect(const std::vector<PeerInfo>& cards,
                                                                      const std::set<int>& peers,
                                                                      SetupExchange& ex) = 0;
};

}  // namespace tutti
