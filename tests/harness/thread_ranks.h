// Test harness: N ranks as threads of one process over an in-memory store.
//
//   RunThreadRanks(4, [](Communicator& c) { ... gtest assertions ... });
//
// Each thread forms its communicator with Communicator::Create and runs the body; a failed init
// is reported as a test failure naming the rank.
#pragma once

#include <functional>

#include "core/communicator.h"

namespace tutti::testing {

void RunThreadRanks(int n, const std::function<void(Communicator&)>& body, const CommOptions& opts = {});
// The same with each rank's options of its own (options_of(rank)).
void RunThreadRanks(int n, const std::function<void(Communicator&)>& body,
                    const std::function<CommOptions(int rank)>& options_of);

// Fills / checks a buffer with a pattern that depends on (seed, index), so misplaced or stale
// bytes are caught.
void FillPattern(void* buf, size_t n, uint64_t seed);
// Index of the first wrong byte, or -1.
int64_t FirstMismatch(const void* buf, size_t n, uint64_t seed);

}  // namespace tutti::testing
