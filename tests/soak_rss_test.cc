// Memory after long use (2 ranks, real processes): once warmed up, many more small collectives
// must not grow a rank's RSS, open fds or threads, and must leave no per-call state behind.
// Each rank warms up (1k small all_reduces with other collectives mixed in, plus a few large
// broadcasts that wrap the shm rings so that their pages are resident), reads its figures, runs
// many more of the same calls, reads them again and reports both to the test process.
// No time bounds: on a loaded machine it is only slower.
//
// Sensitivity: SOAK_RSS_TEST_LEAK_BYTES=N makes every measured call leak N touched bytes, e.g.
//   bazel test //tests:soak_rss_test --test_env=SOAK_RSS_TEST_LEAK_BYTES=100   # must fail
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench/proc_stats.h"
#include "core/communicator.h"
#include "tests/harness/proc_ranks.h"

namespace tutti::testing {
namespace {

constexpr int kRanks = 2;
constexpr int kWarmupCalls = 1000;
constexpr long kMaxGrowthKb = 4 * 1024;

struct Figures {
  long rss_kb = -1, fds = -1, threads = -1;
};

Figures Read() { return {ProcStatusField("VmRSS:"), ProcOpenFds(), ProcStatusField("Threads:")}; }

// Call i of the mix: mostly an all_reduce of 8..256 floats, every 10th another small collective.
// Rank r's input element x is (i + x + r) % 7, so every expected value is exact.
Status OneCall(Communicator& c, long i, std::vector<float>& in, std::vector<float>& out) {
  const int n = c.size(), me = c.rank();
  const size_t count = 8 + (i * 37) % 249;
  const int root = static_cast<int>(i / 10 % n);
  auto val = [&](int r, size_t x) { return static_cast<float>((i + x + r) % 7); };
  for (size_t x = 0; x < count * n; ++x) in[x] = val(me, x);
  std::fill(out.begin(), out.begin() + count * n, -1.0f);
  auto sum = [&](size_t x) {
    float s = 0;
    for (int r = 0; r < n; ++r) s += val(r, x);
    return s;
  };
  const char* name = "all_reduce";
  size_t check = count;                    // elements of `out` to check
  std::function<float(size_t)> want = sum;  // out[x]
  Status st;
  switch (i % 10 == 9 ? i / 10 % 6 : 6) {
    case 0:
      name = "all_gather";
      st = c.AllGather(in.data(), out.data(), count, DataType::kFloat32);
      check = count * n;
      want = [&](size_t x) { return val(static_cast<int>(x / count), x % count); };
      break;
    case 1:
      name = "broadcast";
      st = c.Broadcast(in.data(), out.data(), count, DataType::kFloat32, root);
      want = [&](size_t x) { return val(root, x); };
      break;
    case 2:
      name = "reduce_scatter";
      st = c.ReduceScatter(in.data(), out.data(), count, DataType::kFloat32, RedOp::kSum);
      want = [&](size_t x) { return sum(me * count + x); };
      break;
    case 3:
      name = "all_to_all";
      st = c.AllToAll(in.data(), out.data(), count, DataType::kFloat32);
      check = count * n;
      want = [&](size_t x) { return val(static_cast<int>(x / count), me * count + x % count); };
      break;
    case 4:
      name = "reduce";
      st = c.Reduce(in.data(), out.data(), count, DataType::kFloat32, RedOp::kSum, root);
      check = me == root ? count : 0;
      break;
    case 5:
      name = "barrier";
      st = c.Barrier();
      check = 0;
      break;
    default:
      st = c.AllReduce(in.data(), out.data(), count, DataType::kFloat32, RedOp::kSum);
  }
  if (!st.ok()) return st;
  for (size_t x = 0; x < check; ++x)
    if (out[x] != want(x))
      return InternalError(std::string(name) + " #" + std::to_string(i) + " element " + std::to_string(x) + " is " +
                           std::to_string(out[x]) + ", expected " + std::to_string(want(x)));
  return OkStatus();
}

// Writes "rank rss0 fds0 threads0 rss1 fds1 threads1 pending tracked queues in_flight pooled" to
// out_fd. Exit codes: 0 figures written; 10 init; 11 a call failed or was wrong; 12 write failed.
int RankBody(int rank, const std::string& transport, long more_calls, int out_fd) {
  CommOptions o;
  o.transport = transport;
  o.timeout_s = 600;  // a loaded machine is slow, not broken
  auto made = Communicator::InitFromEnv(o);
  if (!made.ok()) {
    fprintf(stderr, "rank %d init: %s\n", rank, made.status().ToString().c_str());
    return 10;
  }
  Communicator& c = **made;
  const char* leak_env = getenv("SOAK_RSS_TEST_LEAK_BYTES");
  const size_t leak = leak_env ? strtoul(leak_env, nullptr, 10) : 0;
  std::vector<float> in(256 * kRanks), out(256 * kRanks);
  std::vector<char> big(2 << 20, 1);
  auto fail = [&](const Status& st) {
    fprintf(stderr, "rank %d (%s): %s\n", rank, transport.c_str(), st.ToString().c_str());
    return 11;
  };
  long i = 0;
  for (; i < kWarmupCalls; ++i)
    if (Status st = OneCall(c, i, in, out); !st.ok()) return fail(st);
  // 2 MiB broadcasts, 4 from each root: 8 MiB, more than a shm ring (4 MiB), each way.
  for (int k = 0; k < 4 * kRanks; ++k)
    if (Status st = c.Broadcast(big.data(), big.data(), big.size(), DataType::kUint8, k % kRanks); !st.ok())
      return fail(st);
  if (Status st = c.Barrier(); !st.ok()) return fail(st);
  const Figures before = Read();
  for (long end = i + more_calls; i < end; ++i) {
    if (Status st = OneCall(c, i, in, out); !st.ok()) return fail(st);
    if (leak) memset(malloc(leak), 1, leak);  // deliberate leak (sensitivity check only)
  }
  if (Status st = c.Barrier(); !st.ok()) return fail(st);
  const Figures after = Read();
  const Communicator::Stats s = c.stats();
  char line[256];
  int len = snprintf(line, sizeof(line), "%d %ld %ld %ld %ld %ld %ld %zu %zu %zu %zu %zu\n", rank, before.rss_kb,
                     before.fds, before.threads, after.rss_kb, after.fds, after.threads, s.pending_ops,
                     s.tracked_messages, s.tag_queues, s.collectives_in_flight, s.pooled_bytes);
  if (write(out_fd, line, len) != len) return 12;
  c.Destroy();
  return 0;
}

struct Case {
  const char* transport;
  long more_calls;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.transport << ", " << c.more_calls << " calls"; }

class SoakRss : public ::testing::TestWithParam<Case> {};

TEST_P(SoakRss, RepeatedCallsDoNotGrowTheProcess) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // The sanitizers keep freed memory in quarantine and map shadow memory: RSS measures them.
  GTEST_SKIP() << "RSS is not meaningful under a sanitizer";
#endif
  const Case cs = GetParam();
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::vector<RankEnd> ends = RunProcRanks(
      kRanks, [&](int rank) { close(fds[0]); return RankBody(rank, cs.transport, cs.more_calls, fds[1]); }, {},
      /*timeout_s=*/24 * 3600);  // bazel's test timeout is the limit
  close(fds[1]);
  std::string text;
  char buf[1024];
  for (ssize_t n; (n = read(fds[0], buf, sizeof(buf))) > 0;) text.append(buf, n);
  close(fds[0]);
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_TRUE(ends[r].exited) << "rank " << r << " killed by signal " << ends[r].signal;
    EXPECT_EQ(ends[r].code, 0) << "rank " << r;
  }
  int seen = 0;
  const char* p = text.c_str();
  int rank, used;
  long rss0, fds0, thr0, rss1, fds1, thr1;
  size_t pending, tracked, queues, in_flight, pooled;
  while (sscanf(p, "%d %ld %ld %ld %ld %ld %ld %zu %zu %zu %zu %zu\n%n", &rank, &rss0, &fds0, &thr0, &rss1, &fds1,
                &thr1, &pending, &tracked, &queues, &in_flight, &pooled, &used) == 12) {
    p += used;
    ++seen;
    const std::string who = "rank " + std::to_string(rank) + " over " + cs.transport + ", " +
                            std::to_string(kWarmupCalls) + " calls then " + std::to_string(cs.more_calls) + " more";
    printf("%s: rss %ld -> %ld kB (%+ld), fds %ld -> %ld, threads %ld -> %ld, pooled %zu B\n", who.c_str(), rss0,
           rss1, rss1 - rss0, fds0, fds1, thr0, thr1, pooled);
    EXPECT_GT(rss0, 0) << who;
    EXPECT_LE(rss1 - rss0, kMaxGrowthKb) << who << ": RSS grew from " << rss0 << " kB to " << rss1 << " kB";
    EXPECT_LE(fds1, fds0) << who;
    EXPECT_LE(thr1, thr0) << who;
    EXPECT_EQ(pending, 0u) << who;
    EXPECT_EQ(tracked, 0u) << who;
    EXPECT_EQ(queues, 0u) << who;
    EXPECT_EQ(in_flight, 0u) << who;
  }
  EXPECT_EQ(seen, kRanks) << "figures from the ranks: \"" << text << "\"";
}

// 100k calls: a leak of 100 bytes per call would add 10 MB. About 2 s per case unloaded.
INSTANTIATE_TEST_SUITE_P(Transports, SoakRss, ::testing::Values(Case{"shm", 100000}, Case{"tcp", 100000}),
                         [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.transport); });

}  // namespace
}  // namespace tutti::testing
