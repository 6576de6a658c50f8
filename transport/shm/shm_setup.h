// Shared-memory transport setup: ranks on one host. The lower rank of a pair creates the
// segment and publishes its name; the higher rank maps it and confirms; the creator then
// unlinks the name (no leftover in /dev/shm once init is over). Each side maps the peer's
// doorbell, to ring it after every frame it writes.
#pragma once

#include "transport/setup.h"
#include "transport/shm/shm_connection.h"

namespace tutti {

class ShmSetup : public TransportSetup {
 public:
  explicit ShmSetup(const ShmOptions& opts) : opts_(opts) {}
  const char* name() const override { return "shm"; }
  bool CanConnect(const PeerInfo& me, const PeerInfo& peer) const override { return me.host_id == peer.host_id; }
  Result<std::map<int, std::unique_ptr<Connection>>> Connect(const std::vector<PeerInfo>& cards,
                                                              const std::set<int>& peers,
                                                              SetupExchange& ex) override;

 private:
  ShmOptions opts_;
};

}  // namespace tutti
