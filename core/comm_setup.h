// Building a communicator's connections through the store (internal to core/).
//
// 0. Every rank claims its rank number (a second claim fails both processes at once) and refuses
//    a store on which a communicator was already formed. Any rank that finds a problem (a claim
//    taken twice, world sizes that differ) publishes it as "init_error"; every wait of the init
//    polls that key, so all ranks fail within a fraction of a second naming the problem.
// 1. Every rank publishes a card: world size, host identity and pid.
// 2. Each pair picks a transport (shm on one host, else tcp; TUTTI_TRANSPORT forces one).
// 3. shm: the lower rank creates the pair's segment and publishes its name; the higher rank
//    maps it and confirms; the creator then unlinks the name.
// 4. tcp: ranks that need TCP listen and publish an address; the higher rank of each pair
//    connects (TUTTI_SOCKET_NSOCKS sockets) and the lower accepts, checking the job secret.
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
