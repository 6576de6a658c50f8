// ncclUniqueIdAbi as tutti makes it: ncclGetUniqueId starts a TCP store server in the calling
// process (kept until the process exits) and writes its address, port and a fresh secret into
// the id's 128 bytes; every rank's ncclCommInitRank connects to that store and forms the
// communicator through it.
#pragma once

#include <string>

#include "core/base/status.h"
#include "tools/nccl/abi.h"

namespace tutti::nccl {

struct IdContents {
  std::string host;
  int port = 0;
  std::string secret;
};

// Starts the store server and returns the id naming it. The address is the first interface
// NCCL_SOCKET_IFNAME (else TUTTI_SOCKET_IFNAME) selects, non-loopback first.
Result<ncclUniqueIdAbi> MakeUniqueId();
// kInvalidArgument for an id that tutti did not make (all zeros, another library's, corrupted).
Result<IdContents> ReadUniqueId(const ncclUniqueIdAbi& id);

}  // namespace tutti::nccl
