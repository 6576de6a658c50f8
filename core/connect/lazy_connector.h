// Lazy connection (TUTTI_CONNECT=lazy): a pair of ranks is connected the first time one of them
// posts a message to, or a receive from, the other, as NCCL's runtime connection does, so a
// job whose schedules use few pairs (rings, trees) sets up only those.
//
// The P2P engine asks for a peer (Request: never blocks; operations for the peer wait in the
// engine meanwhile). A thread of this rank then connects the pair through the transport that
// init chose for it, with the pair's setup blobs in the store; the peer learns of it through its
// inbox in the store (a numbered slot per request), which a watcher thread of every rank polls,
// and does its half on its own thread. Each pair is connected once, whichever side asks first,
// and every connection works on its own thread, so first messages in a cycle (0 -> 1 -> 2 -> 0)
// cannot wait on each other. The connection, or the error (the peer never answered within the
// timeout, or the transport failed), goes to `deliver`.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/base/status.h"
#include "core/store/store.h"
#include "transport/setup.h"

namespace tutti {

class LazyConnector {
 public:
  using Deliver = std::function<void(int peer, Result<std::unique_ptr<Connection>> conn)>;
  struct Options {
    int rank = 0;
    int size = 1;
    double timeout_s = 300;  // for one pair to connect, counted from the request
    uint64_t comm_id = 0;    // checked in TCP handshakes
  };
  // transport_of[r]: the setup that connects this rank to r (null for this rank itself).
  LazyConnector(std::shared_ptr<Store> store, const Options& opts, std::vector<PeerInfo> cards,
                std::vector<std::shared_ptr<TransportSetup>> transport_of, Deliver deliver);
  ~LazyConnector();
  LazyConnector(const LazyConnector&) = delete;
  LazyConnector& operator=(const LazyConnector&) = delete;

  void Start();  // starts the inbox watcher
  // Connects to `peer` if nobody has begun to (idempotent, never blocks).
  void Request(int peer);
  // Stops the watcher; connections under way end at their next wait and deliver nothing.
  void Stop();

 private:
  struct Shared;
  void Begin(int peer, bool tell_peer);  // Shared::mu held
  void WatchInbox();
  // One pair's connection, on its own (detached) thread: it holds the shared state, so it may
  // outlive the connector (a TCP accept waits until its deadline), and delivers nothing once
  // stopped.
  static void ConnectPair(std::shared_ptr<Shared> s, int peer, bool tell_peer);

  std::shared_ptr<Shared> shared_;
  std::thread watcher_;
};

}  // namespace tutti
