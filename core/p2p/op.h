// One point-to-point operation (a send or a receive) as the engine tracks it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/base/status.h"

namespace tutti {

class ExposedRegion;  // transport/transport.h

struct Op {
  enum class Kind { kSend, kRecv };
  Kind kind = Kind::kSend;
  int peer = 0;           // kAnySource (-1) for an any-source receive until it matched
  bool any_source = false;  // posted as an any-source receive
  int tag = 0;
  uint64_t seq = 0;       // the communicator's operation number, for messages
  uint32_t sig = 0;       // collective signature that the matching message must carry
  char* buf = nullptr;    // the user's buffer (const for sends)
  size_t size = 0;
  uint64_t msg_id = 0;    // the sender's message id (sends: ours; recvs: once matched)
  bool eager = false;     // send: went as DATA or POST (counts against the eager budget)
  bool post = false;      // send: went as POST (done when sent; the budget comes back as CREDIT)
  bool matched = false;   // recv: paired with a message; send: the receiver answered
  // recv: the message is a copy to its place (nothing is combined into it afterwards), which a
  // one-sided read serves in one copy (EngineOptions::one_sided_all reads for every receive).
  bool copy = true;
  size_t bytes_done = 0;  // recv: bulk bytes arrived; send: bulk bytes enqueued
  // The buffer as exposed to the peer for one-sided access (send: for the receiver to read;
  // recv: for the sender to write the tail); kept while the peer may access it.
  std::shared_ptr<const ExposedRegion> exposed;

  std::atomic<bool> done{false};
  Status status;          // set before `done` becomes true

  // "send of 8 bytes to rank 1 (tag 0, op #3)"; internal (collective) messages have tag < 0.
  std::string Describe() const {
    const std::string who = peer < 0 ? "any rank" : "rank " + std::to_string(peer) + (any_source ? " (any source)" : "");
    return std::string(kind == Kind::kSend ? "send of " : "recv of ") + std::to_string(size) +
           " bytes " + (kind == Kind::kSend ? "to " : "from ") + who +
           (tag >= 0 ? " (tag " + std::to_string(tag) + ", op #" + std::to_string(seq) + ")"
                     : " (collective message, op #" + std::to_string(seq) + ")");
  }
};

}  // namespace tutti
