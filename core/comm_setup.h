// Building a communicator's connections through the store (internal to core/).
//
// 0. Every rank claims its rank number (a second claim fails both processes at once) and refuses
//    a store on which a communicator was already formed. Any rank that finds a problem (a claim
//    taken twice, world sizes that differ) publishes it as "init_error"; every wait of the init
//    polls that key, so all ranks fail within a fraction of a second naming the problem.
// 1. Every rank publishes a card: world size, host identity and pid.
// 2. Each pair gets the first transport, in order of preference (shm, tcp; TUTTI_TRANSPORT
//    leaves one), that can connect it judging by the two cards (transport/setup.h).
// 3. Each transport connects its peers, exchanging setup blobs through the store
//    (transport/shm/shm_setup.h: segment names; transport/tcp/tcp_setup.h: addresses, hellos
//    with the job secret).
// 5. All ranks wait for each other before returning, and rank 0 until all have left the store.
#pragma once

#include <memory>
#include <string>

#include "core/communicator.h"

namespace tutti {

// hostname + boot id + network namespace: ranks with equal ids can share memory.
std::string DefaultHostId();

struct PeerCard {
  int64_t world_size = 1;  // the size this rank was asked to form
  std::string host_id;
  int64_t pid = 0;
  std::string doorbell;  // shm name of the rank's doorbell ("" if it has none)
};
std::string EncodePeerCard(const PeerCard& c);
// Validates a card read from the store (untrusted).
Result<PeerCard> DecodePeerCard(const std::string& text);

class CommBuilder {
 public:
  static Result<std::unique_ptr<Communicator>> Build(std::shared_ptr<Store> store, int rank, int size,
                                                     const CommOptions& opts);
};

}  // namespace tutti
