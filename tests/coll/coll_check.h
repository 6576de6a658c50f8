// Checks every collective on a communicator: each type x op x count with exact inputs (compared
// bitwise), in-place against out-of-place, random inputs against a float64 reference, every
// algorithm, many operations in flight, sub-communicators beside the parent, and identical bits
// on every rank. All ranks of `comm` call it together. Failures are printed to stderr (naming
// the rank and the case).
#pragma once

#include <cstdint>
#include <vector>

#include "core/communicator.h"

namespace tutti::testing {

struct CollCheckConfig {
  std::vector<uint64_t> counts = {0, 1, 7, 1000};  // plus n - 1 (smaller than the world)
  bool all_types = true;
  bool algorithms = true;   // every algorithm of every collective (float32 sum)
  bool async = true;        // many in flight, sub-communicators beside the parent
  bool random = true;       // random floats against float64
};

struct CollCheckResult {
  int cases = 0;     // collective calls checked
  int failures = 0;  // of which failed
};
CollCheckResult CheckCollectives(Communicator& comm, const CollCheckConfig& cfg);

}  // namespace tutti::testing
