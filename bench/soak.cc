// soak: N forked ranks run a long seeded random mix of collectives (every kind, type and op; sizes
// log-uniform in 1 B..64 KiB and 2% (--large-percent) up to 1 MiB; some in place), check every
// result, and print at intervals what rank 0 holds: RSS, open fds, threads and the
// communicator's stats(). At a checkpoint a peer may already have sent its next call's messages,
// so tracked_messages / tag_queues of 1 there are not a leak; after the last call all must be 0.
// Inputs are small non-negative integers sized so that every result, and every partial result
// in any reduction order, is exact in the call's type. All ranks draw the same calls from --seed.
// Exits non-zero on a wrong result, a failed call, or per-call state left after the last call.
//
//   bazel run -c opt //bench:soak -- --ranks 2 --calls 100000 --transport shm
//   bazel run -c opt //bench:soak -- --ranks 4 --seconds 60 --transport tcp --report-every 5000
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench/proc_stats.h"
#include "core/communicator.h"
#include "core/launch/spawn.h"
#include "core/base/dtype.h"
#include "kernels/narrow_float.h"

namespace tutti::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Flags {
  int ranks = 2;
  long long calls = -1;  // -1: --seconds, or 10000 if neither is given
  double seconds = 0;
  long long report_every = 10000;
  std::string transport = "shm";
  uint64_t seed = 1;
  double timeout_s = 300;
  int large_percent = 2;  // calls of 64 KiB..1 MiB per rank; the others are 1 B..64 KiB
};

enum Coll { kAllReduce, kBroadcast, kReduce, kAllGather, kReduceScatter, kAllToAll, kGather, kScatter, kBarrier };
const char* const kCollNames[] = {"all_reduce", "broadcast",  "reduce", "all_gather", "reduce_scatter",
                                  "all_to_all", "gather", "scatter", "barrier"};
const int kCollWeights[] = {30, 10, 10, 10, 10, 10, 8, 8, 4};  // percent
constexpr size_t kMaxBytes = size_t{1} << 20;                  // per rank

// ---- Process figures ---------------------------------------------------------------------------
// What this rank holds now: RSS, fds, threads and the communicator's per-call state.
std::string Figures(const Communicator& comm) {
  const Communicator::Stats s = comm.stats();
  char buf[320];
  snprintf(buf, sizeof(buf),
           "rss_kb=%ld peak_rss_kb=%ld fds=%ld threads=%ld pending_ops=%zu tracked_messages=%zu tag_queues=%zu "
           "collectives_in_flight=%zu pooled_bytes=%zu",
           ProcStatusField("VmRSS:"), ProcStatusField("VmHWM:"), ProcOpenFds(), ProcStatusField("Threads:"),
           s.pending_ops, s.tracked_messages, s.tag_queues, s.collectives_in_flight, s.pooled_bytes);
  return buf;
}

// ---- Values --------------------------------------------------------------------------------------
uint64_t Mix(uint64_t x) {  // a cheap 64-bit mixer (xorshift-multiply)
  x ^= x >> 31;
  x *= 0xbf58476d1ce4e5b9ull;
  return x ^ (x >> 29);
}

// Largest integer every partial result must stay within: exact in the type (int8: 127, fp8 e4m3:
// 16, fp8 e5m2: 8, bfloat16: 256) and small in the others.
double Limit(DataType t) {
  return t == DataType::kFp8E4M3 ? 16 : t == DataType::kFp8E5M2 ? 8 : 100;
}

struct Call {  // key seeds the input values
  Coll coll; DataType type; RedOp op; size_t count; int root; bool in_place; uint64_t key;
};

bool Reduces(Coll c) { return c == kAllReduce || c == kReduce || c == kReduceScatter; }
double PremulScalar(int rank) { return 1 + rank % 2; }

// Rank r's input element i: ranges chosen per op so the reduced result is exact (see Limit).
double Input(const Call& c, int nranks, int r, size_t i) {
  const uint64_t h = Mix(c.key + static_cast<uint64_t>(r) * 0x9e3779b97f4a7c15ull + i * 0xd6e8feb86659fd93ull);
  const int lim = static_cast<int>(Limit(c.type));
  auto upto = [h](int hi) { return static_cast<double>(((h >> 32) * static_cast<uint64_t>(hi + 1)) >> 32); };
  if (!Reduces(c.coll)) return upto(lim);
  switch (c.op) {
    case RedOp::kSum: return upto(lim / nranks);
    case RedOp::kProd: return (r < 31 - __builtin_clz(lim) && (h & 1)) ? 2 : 1;
    case RedOp::kMin:
    case RedOp::kMax:
    case RedOp::kBand:
    case RedOp::kBor:
    case RedOp::kBxor: return upto(lim);
    case RedOp::kAvg: return nranks * upto(lim / (nranks * nranks));
    case RedOp::kPremulSum: return upto(lim / (2 * nranks));
  }
  return 0;
}

// Calls f with a value of the C++ type that stores `t`.
template <class F>
void WithType(DataType t, F&& f) {
  switch (t) {
    case DataType::kInt8: f(int8_t{}); break;
    case DataType::kUint8: f(uint8_t{}); break;
    case DataType::kInt32: f(int32_t{}); break;
    case DataType::kUint32: f(uint32_t{}); break;
    case DataType::kInt64: f(int64_t{}); break;
    case DataType::kUint64: f(uint64_t{}); break;
    case DataType::kFloat16: f(kernels::Float16{}); break;
    case DataType::kBfloat16: f(kernels::BFloat16{}); break;
    case DataType::kFloat32: f(float{}); break;
    case DataType::kFloat64: f(double{}); break;
    case DataType::kFp8E4M3: f(kernels::Fp8E4M3{}); break;
    case DataType::kFp8E5M2: f(kernels::Fp8E5M2{}); break;
  }
}
template <class T>
T Encode(double v) { if constexpr (std::is_arithmetic_v<T>) return static_cast<T>(v); else return T::FromDouble(v); }
template <class T>
double Decode(T x) { if constexpr (std::is_arithmetic_v<T>) return static_cast<double>(x); else return x.ToFloat(); }

double Reduced(const Call& c, int n, size_t i) {
  double acc = Input(c, n, 0, i) * (c.op == RedOp::kPremulSum ? PremulScalar(0) : 1);
  for (int r = 1; r < n; ++r) {
    const double v = Input(c, n, r, i);
    switch (c.op) {
      case RedOp::kSum: case RedOp::kAvg: acc += v; break;
      case RedOp::kProd: acc *= v; break;
      case RedOp::kMin: acc = std::min(acc, v); break;
      case RedOp::kMax: acc = std::max(acc, v); break;
      case RedOp::kPremulSum: acc += v * PremulScalar(r); break;
      case RedOp::kBand: acc = static_cast<double>(static_cast<int64_t>(acc) & static_cast<int64_t>(v)); break;
      case RedOp::kBor: acc = static_cast<double>(static_cast<int64_t>(acc) | static_cast<int64_t>(v)); break;
      case RedOp::kBxor: acc = static_cast<double>(static_cast<int64_t>(acc) ^ static_cast<int64_t>(v)); break;
    }
  }
  return c.op == RedOp::kAvg ? acc / n : acc;
}

// Output element i on rank `me` (defined only where the rank receives output).
double Expected(const Call& c, int n, int me, size_t i) {
  const size_t k = c.count;
  switch (c.coll) {
    case kAllReduce: case kReduce: return Reduced(c, n, i);
    case kReduceScatter: return Reduced(c, n, me * k + i);
    case kBroadcast: return Input(c, n, c.root, i);
    case kAllGather: case kGather: return Input(c, n, static_cast<int>(i / k), i % k);
    case kAllToAll: return Input(c, n, static_cast<int>(i / k), me * k + i % k);
    case kScatter: return Input(c, n, c.root, me * k + i);
    case kBarrier: return 0;
  }
  return 0;
}

Call Draw(std::mt19937_64& rng, int n, int large_percent) {  // the same on every rank
  Call c{};
  int w = static_cast<int>(rng() % 100), i = 0;
  while (w >= kCollWeights[i]) w -= kCollWeights[i++];
  c.coll = static_cast<Coll>(i);
  c.type = static_cast<DataType>(rng() % kNumDataTypes);
  c.op = static_cast<RedOp>(rng() % kNumRedOps);
  if (!OpTakesType(c.op, c.type)) c.op = RedOp::kMax;  // bitwise: integer types only
  const double u = std::uniform_real_distribution<double>(0, 1)(rng);
  const bool large = static_cast<int>(rng() % 100) < large_percent;
  const size_t bytes =
      large ? 65536 + rng() % (kMaxBytes - 65535) : static_cast<size_t>(std::exp(u * std::log(65536.0)));
  c.count = std::max<size_t>(1, std::min(bytes, kMaxBytes) / DataTypeSize(c.type));
  c.root = static_cast<int>(rng() % n);
  c.in_place = (c.coll == kAllReduce || c.coll == kBroadcast) && rng() % 4 == 0;
  c.key = rng();
  return c;
}

int Fail(int rank, long long call, const Call& c, const std::string& what) {
  fprintf(stderr, "soak: rank %d call %lld %s (count %zu, %s, %s, root %d%s): %s\n", rank, call, kCollNames[c.coll],
          c.count, DataTypeName(c.type), RedOpName(c.op), c.root, c.in_place ? ", in place" : "", what.c_str());
  return 1;
}

int RankMain(int rank, const Flags& fl) {
  CommOptions o;
  o.transport = fl.transport;
  o.timeout_s = fl.timeout_s;
  auto made = Communicator::InitFromEnv(o);
  if (!made.ok()) {
    fprintf(stderr, "soak: rank %d: %s\n", rank, made.status().ToString().c_str());
    return 1;
  }
  Communicator& comm = **made;
  const int n = comm.size();
  if (n > 1 && comm.TransportTo((rank + 1) % n) != fl.transport) {
    fprintf(stderr, "soak: rank %d reaches its peer by %s, not %s\n", rank, comm.TransportTo((rank + 1) % n).c_str(),
            fl.transport.c_str());
    return 1;
  }
  // Buffers for the largest call, touched up front so that they do not count as growth.
  std::vector<uint64_t> send(n * kMaxBytes / 8 + 1, 0), recv(n * kMaxBytes / 8 + 1, 0);
  std::mt19937_64 rng(fl.seed);
  const long long calls = fl.calls >= 0 ? fl.calls : fl.seconds > 0 ? -1 : 10000;
  const auto start = Clock::now();
  auto last = start;
  long long done = 0, last_done = 0;
  double comm_s = 0;  // time inside the collective calls (the rest is filling and checking)
  for (int stop = 0; !stop;) {
    const Call c = Draw(rng, n, fl.large_percent);
    const size_t k = c.count, elem = DataTypeSize(c.type);
    const bool root = rank == c.root;
    size_t in_n = k, out_n = k;
    if (c.coll == kReduceScatter || c.coll == kAllToAll || c.coll == kScatter) in_n = n * k;
    if (c.coll == kAllGather || c.coll == kGather || c.coll == kAllToAll) out_n = n * k;
    const bool has_in = !((c.coll == kBroadcast || c.coll == kScatter) && !root) && c.coll != kBarrier;
    const bool has_out = !((c.coll == kReduce || c.coll == kGather) && !root) && c.coll != kBarrier;
    char* in = reinterpret_cast<char*>(send.data());
    char* out = reinterpret_cast<char*>(recv.data());
    memset(out, 0xA5, out_n * elem);  // not a value any call produces
    void* in_buf = c.in_place ? static_cast<void*>(out) : in;
    if (has_in) WithType(c.type, [&](auto x) {
      auto* p = static_cast<decltype(x)*>(in_buf);
      for (size_t i = 0; i < in_n; ++i) p[i] = Encode<decltype(x)>(Input(c, n, rank, i));
    });
    CollOptions co;
    co.premul_scalar = PremulScalar(rank);
    Status st;
    const auto t0 = Clock::now();
    switch (c.coll) {
      case kAllReduce: st = comm.AllReduce(in_buf, out, k, c.type, c.op, co); break;
      case kBroadcast: st = comm.Broadcast(in_buf, out, k, c.type, c.root, co); break;
      case kReduce: st = comm.Reduce(in, out, k, c.type, c.op, c.root, co); break;
      case kAllGather: st = comm.AllGather(in, out, k, c.type, co); break;
      case kReduceScatter: st = comm.ReduceScatter(in, out, k, c.type, c.op, co); break;
      case kAllToAll: st = comm.AllToAll(in, out, k, c.type, co); break;
      case kGather: st = comm.Gather(in, out, k, c.type, c.root, co); break;
      case kScatter: st = comm.Scatter(in, out, k, c.type, c.root, co); break;
      case kBarrier: st = comm.Barrier(co); break;
    }
    comm_s += std::chrono::duration<double>(Clock::now() - t0).count();
    if (!st.ok()) return Fail(rank, done, c, st.ToString());
    int64_t bad = -1;
    double got = 0, want = 0;
    if (has_out) WithType(c.type, [&](auto x) {
      const auto* p = reinterpret_cast<const decltype(x)*>(out);
      for (size_t i = 0; i < out_n && bad < 0; ++i)
        if ((got = Decode(p[i])) != (want = Expected(c, n, rank, i))) bad = static_cast<int64_t>(i);
    });
    if (bad >= 0)
      return Fail(rank, done, c, "element " + std::to_string(bad) + " is " + std::to_string(got) + ", expected " +
                                     std::to_string(want));
    ++done;
    const bool end = calls >= 0 && done >= calls;
    if (done % fl.report_every != 0 && !end) continue;
    // Checkpoint: rank 0 decides whether to stop (--seconds) and prints what it holds.
    const auto now = Clock::now();
    const double t = std::chrono::duration<double>(now - start).count();
    stop = end || (calls < 0 && t >= fl.seconds);
    if (Status b = comm.Broadcast(&stop, &stop, 1, DataType::kInt32, 0); !b.ok())
      return Fail(rank, done, c, b.ToString());
    if (rank != 0) continue;
    const double dt = std::chrono::duration<double>(now - last).count();
    printf("soak: calls=%lld t_s=%.1f in_calls_s=%.1f calls_per_s=%.0f %s\n", done, t, comm_s,
           dt > 0 ? (done - last_done) / dt : 0.0, Figures(comm).c_str());
    fflush(stdout);
    last = now;
    last_done = done;
  }
  // After the last call every rank must hold no per-call state.
  if (Status b = comm.Barrier(); !b.ok()) {
    fprintf(stderr, "soak: rank %d final barrier: %s\n", rank, b.ToString().c_str());
    return 1;
  }
  const Communicator::Stats s = comm.stats();
  const double t = std::chrono::duration<double>(Clock::now() - start).count();
  printf("soak: rank %d done: calls=%lld t_s=%.1f calls_per_s=%.0f %s\n", rank, done, t, done / t,
         Figures(comm).c_str());
  fflush(stdout);
  comm.Destroy();
  if (s.pending_ops || s.tracked_messages || s.tag_queues || s.collectives_in_flight) {
    fprintf(stderr, "soak: rank %d holds per-call state after its last call\n", rank);
    return 1;
  }
  return 0;
}

int Main(int argc, char** argv) {
  Flags fl;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (!v) a = "";  // every flag takes a value
    if (!strcmp(a, "--ranks")) fl.ranks = atoi(v);
    else if (!strcmp(a, "--calls")) fl.calls = atoll(v);
    else if (!strcmp(a, "--seconds")) fl.seconds = atof(v);
    else if (!strcmp(a, "--report-every")) fl.report_every = atoll(v);
    else if (!strcmp(a, "--transport")) fl.transport = v;
    else if (!strcmp(a, "--seed")) fl.seed = strtoull(v, nullptr, 10);
    else if (!strcmp(a, "--timeout")) fl.timeout_s = atof(v);
    else if (!strcmp(a, "--large-percent")) fl.large_percent = atoi(v);
    else {
      fprintf(stderr,
              "usage: soak [--ranks N] [--calls C | --seconds S] [--report-every K] [--transport shm|tcp]\n"
              "            [--seed X] [--timeout SECONDS] [--large-percent P (default 2)]\n");
      return 2;
    }
    ++i;
  }
  if (fl.ranks < 1 || fl.report_every < 1 || fl.large_percent < 0 || fl.large_percent > 100 ||
      (fl.transport != "shm" && fl.transport != "tcp")) {
    fprintf(stderr, "soak: bad flags\n");
    return 2;
  }
  printf("soak: ranks=%d transport=%s seed=%llu calls=%lld seconds=%g report_every=%lld large_percent=%d\n",
         fl.ranks, fl.transport.c_str(), static_cast<unsigned long long>(fl.seed), fl.calls, fl.seconds,
         fl.report_every, fl.large_percent);
  fflush(stdout);
  Status st = Spawn(fl.ranks, [&](int rank) { return RankMain(rank, fl); });
  if (!st.ok()) {
    fprintf(stderr, "soak: FAILED: %s\n", st.ToString().c_str());
    return 1;
  }
  printf("soak: OK\n");
  return 0;
}

}  // namespace
}  // namespace tutti::bench

int main(int argc, char** argv) { return tutti::bench::Main(argc, argv); }
