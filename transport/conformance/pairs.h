// Connected pairs of every transport, in one process, for the conformance suite: `a` stands
// for rank 0 and `b` for rank 1. Each pair can also inject a malformed frame travelling from b
// to a, the way a hostile or broken peer would.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "transport/transport.h"

namespace tutti::conformance {

struct Pair {
  std::unique_ptr<Connection> a, b;
  // Writes a frame with a wrong magic number on the wire from b to a.
  std::function<void()> inject_garbage_to_a;
  std::shared_ptr<void> keep;  // whatever the injector needs
};

struct PairFactory {
  std::string name;  // "shm", "shm_cma", "tcp_1sock", "tcp_3socks"
  std::function<Pair()> make;
};

std::vector<PairFactory> AllTransports();

// gtest prints a factory by its name.
inline void PrintTo(const PairFactory& f, std::ostream* os) { *os << f.name; }

}  // namespace tutti::conformance
