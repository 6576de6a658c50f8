// Where the store's host (rank 0) listens, from what the job says the store's address is.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/base/status.h"

namespace tutti {

struct StoreBind {
  std::string host;    // what to bind: an address, or "" for every interface
  std::string reason;  // why, for the log and for error messages
};

// Chooses the listening address for a store that clients reach at master_addr:
//   TUTTI_STORE_BIND set        -> that value ("" / "0.0.0.0" / "::" = every interface)
//   "localhost"                 -> 127.0.0.1
//   a loopback address          -> that address (every rank is on this host)
//   an address of this host     -> that address (a host name: the first local address it has)
//   a host name that resolves only to loopback here (Debian's 127.0.1.1 for the host's own
//     name) or to no address of this host (NAT, a service address) -> every interface, because
//     other hosts may reach us by an address we cannot see; the reason says so.
// local_addrs is the host's interface addresses (ListInterfaces) and resolve a name's numeric
// addresses (getaddrinfo when null); parameters for tests.
using Resolver = std::function<std::vector<std::string>(const std::string&)>;
Result<StoreBind> ChooseStoreBind(const std::string& master_addr, const std::vector<std::string>& local_addrs,
                                  const Resolver& resolve = nullptr);

// The same with this host's interfaces.
Result<StoreBind> ChooseStoreBind(const std::string& master_addr);

}  // namespace tutti
