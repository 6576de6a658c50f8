// Where a host has two ranks or more per CPU, large broadcasts are direct slot calls (readers copy
// from the root's buffer), or where those are off, their pieces are read one-sidedly from the rank
// that forwards them (core/coll/collectives.cc): every root's data arrives intact, at sizes around
// the pieces and above the slots.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <vector>

#include "core/communicator.h"
#include "tests/harness/thread_ranks.h"

namespace tutti::testing {
namespace {

// (Both ways: as direct slot calls, which read the root's buffer, and, with direct calls refused
// by the last rank's TUTTI_SHM_CMA=0, as messages whose pieces the other ranks read.)
void EveryRootsDataArrivesIntact(bool direct) {
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus < 1 || cpus > 4) GTEST_SKIP() << "two ranks per CPU are too many threads here (" << cpus << " CPUs)";
  const int n = static_cast<int>(2 * cpus);
  auto options_of = [&](int r) {
    CommOptions o;
    o.transport = "shm";
    o.timeout_s = 60;
    o.shm_cma = direct || r < n - 1;
    return o;
  };
  RunThreadRanks(n, [&](Communicator& c) {
    for (uint64_t count : {uint64_t{(2 << 20) + 3}, uint64_t{1} << 20}) {  // int32: 8 MiB + 12 B, 4 MiB
      for (int root = 0; root < n; root += n - 1) {
        std::vector<int32_t> buf(count, -1);
        if (c.rank() == root)
          for (uint64_t i = 0; i < count; ++i) buf[i] = static_cast<int32_t>(i * 2654435761u + root);
        Status st = c.Broadcast(buf.data(), buf.data(), count, DataType::kInt32, root);
        ASSERT_TRUE(st.ok()) << "rank " << c.rank() << ": " << st.ToString();
        uint64_t wrong = 0;
        for (uint64_t i = 0; i < count; ++i) wrong += buf[i] != static_cast<int32_t>(i * 2654435761u + root);
        EXPECT_EQ(wrong, 0u) << "rank " << c.rank() << ", root " << root << ", count " << count;
      }
    }
    EXPECT_EQ(c.stats().direct_slot_calls, direct ? 4u : 0u) << "rank " << c.rank();
    c.Destroy();
  }, options_of);
}

TEST(BroadcastReads, EveryRootsDataArrivesIntactAsDirectSlotCalls) { EveryRootsDataArrivesIntact(true); }
TEST(BroadcastReads, EveryRootsDataArrivesIntactAsMessagesWhosePiecesAreRead) { EveryRootsDataArrivesIntact(false); }

}  // namespace
}  // namespace tutti::testing
