#include "core/coll/selector.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <mutex>
#include <set>

#include "algorithms/registry.h"
#include "core/base/env.h"
#include "core/base/logging.h"

namespace tutti {

namespace {
using algo::Collective;

std::string Normalize(const std::string& s) {
  std::string out;
  for (char c : s)
    if (c != '_' && c != '-') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

double Log2Ceil(int p) { return p <= 1 ? 0 : std::ceil(std::log2(static_cast<double>(p))); }

// Blocks (bytes per rank) moved straight between their source and destination in one step, by
// every rank at once (flat all_gather, gather, scatter): within a host each is then read
// one-sidedly by its receiver while no rank waits for one that forwards. From kDirectBlockMin; not between
// hosts (unmeasured: n - 1 streams at once into each rank's link) nor in device kernels
// (unmeasured on a GPU).
bool DirectBlocks(double block_bytes, const CostParams& c) {
  return !c.network && !c.device && block_bytes >= kDirectBlockMin;
}

// One step in which the root posts p - 1 transfers at once (flat): the latency of one message,
// plus the root's time for each further one, as a share of alpha. Receives overlap (the
// messages arrive together and are read in one progress pass): a quarter of alpha over tcp,
// half over shm. Sends do not: each is the root's own system call or copy, on a core it shares
// (4 ranks on 2 cores over tcp: flat broadcast and scatter were up to 1.5x binomial's time back
// to back, while flat reduce and gather beat binomial by 20-40% both back to back and after a
// barrier), so a send counts a whole alpha and a flat broadcast or scatter is never cheaper than
// binomial by the model; it runs when asked for.
double FlatSteps(int p, const CostParams& c, bool root_sends) {
  return 1 + (p - 2) * (root_sends ? 1.0 : c.network ? 0.25 : 0.5);
}
}  // namespace

bool ParseCollective(const std::string& name, Collective* out) {
  static const std::pair<const char*, Collective> kNames[] = {
      {"broadcast", Collective::kBroadcast},     {"bcast", Collective::kBroadcast},
      {"reduce", Collective::kReduce},           {"scatter", Collective::kScatter},
      {"gather", Collective::kGather},           {"allreduce", Collective::kAllReduce},
      {"allgather", Collective::kAllGather},     {"reducescatter", Collective::kReduceScatter},
      {"alltoall", Collective::kAllToAll},       {"barrier", Collective::kBarrier},
  };
  std::string n = Normalize(name);
  for (const auto& [k, v] : kNames)
    if (n == k) {
      *out = v;
      return true;
    }
  return false;
}

Result<CostParams> CostParamsFor(const std::string& transport) {
  // alpha: one message step; beta: 1 / bandwidth; gamma: 1 / reduction bandwidth.
  CostParams c = transport == "tcp" ? CostParams{20e-6, 1 / 2.5e9, 1 / 8e9, true} : CostParams{1.5e-6, 1 / 10e9, 1 / 8e9};
  const char* var = transport == "tcp" ? "TUTTI_COST_TCP" : "TUTTI_COST_SHM";
  if (auto raw = EnvRaw(var)) {
    double a, b, g;
    // NaN, infinite, zero or denormal numbers would turn model times into 0, inf or NaN.
    if (sscanf(raw->c_str(), "%lf,%lf,%lf", &a, &b, &g) != 3 || !(a >= 0) || !(b > 0) || !(g > 0) ||
        !std::isfinite(a * 1e-6 + 1 / (b * 1e9) + 1 / (g * 1e9)) || 1 / (b * 1e9) == 0 || 1 / (g * 1e9) == 0)
      return InvalidArgument(std::string(var) + "=\"" + *raw + "\" is not \"alpha_us,GBps,reduce_GBps\"");
    c = {a * 1e-6, 1 / (b * 1e9), 1 / (g * 1e9), c.network};
  }
  return c;
}

bool ReadsReducedPieces(Collective coll, uint64_t call_bytes, int local_ranks, int host_cpus) {
  return (coll == Collective::kAllReduce || coll == Collective::kReduceScatter) && host_cpus > 0 &&
         local_ranks <= host_cpus && call_bytes >= kReducedReadMin && call_bytes <= kReducedReadMax;
}

double ModelTime(const std::string& a, Collective coll, int p, double n, const CostParams& c) {
  const double inf = std::numeric_limits<double>::infinity();
  if (p <= 1) return 0;
  const double al = c.alpha_s, be = c.beta_s_per_byte, ga = c.gamma_s_per_byte;
  const double lg = Log2Ceil(p), f = (p - 1.0) / p;
  const bool pow2 = (p & (p - 1)) == 0;
  switch (coll) {
    case Collective::kAllReduce:
      if (a == "ring") return 2 * (p - 1) * al + 2 * f * n * be + f * n * ga;
      if (a == "rhd") return (2 * lg + (pow2 ? 0 : 2)) * al + (2 * f + (pow2 ? 1 : 0)) * n * be + f * n * ga;
      if (a == "doubling") {
        // log2 p' exchanges of the whole vector (p' the largest power of two <= p), each
        // reduced; a fold before and after when p is not a power of two.
        const double steps = std::floor(std::log2(p));
        return (steps + (pow2 ? 0 : 2)) * al + (steps + (pow2 ? 0 : 2)) * n * be + (steps + (pow2 ? 0 : 1)) * n * ga;
      }
      if (a == "tree") {
        // Two trees, each reducing half the data up and broadcasting it down in k pipelined
        // chunks. A rank is interior in one tree (2 children) and a leaf in the other, so it
        // sends about 2n bytes and reduces about n; filling the pipeline costs 2 lg p chunks.
        double k = std::max(1.0, std::min(64.0, n / (512.0 * 1024)));
        return 2 * (lg + k) * al + 2 * n * be + n * ga + 2 * lg * (n / (2 * k)) * (be + ga);
      }
      return inf;
    case Collective::kReduceScatter:
      // (Between hosts ring's pieces reduce while the link carries the next ones: 4 hosts on
      // 1 Gbit/s, 4-16 MiB, ring 94-95% of the raw TCP rate, rhd 43-56%; bench/link_bench.sh.)
      if (a == "ring") return (p - 1) * al + f * n * be + (c.network ? 0 : f * n * ga);
      if (a == "rhd") return (lg + (pow2 ? 0 : 2)) * al + f * n * be * (pow2 ? 1 : 2) + f * n * ga;
      return inf;
    case Collective::kAllGather:
      if (a == "ring") return (p - 1) * al + f * n * be;
      // Flat: one step, each block read straight from its source (DirectBlocks). Within a host
      // it beats ring, where every step waits on the rank before it (2-vCPU VM, 4-16 MiB: 3 ranks
      // 1.1-1.25x, 4 ranks 2.4-3x, 8 ranks 2.3-2.6x; 2 ranks: the same messages); with blocks of
      // 4-64 KiB (4 ranks forced off the slots) ring or bruck took 0.35-0.8x flat's time.
      if (a == "flat") return DirectBlocks(n / p, c) ? al + f * n * be : inf;
      if (a == "bruck" || a == "recursive_doubling") return lg * al + f * n * be;
      return inf;
    case Collective::kBroadcast:
    case Collective::kReduce: {
      double g = coll == Collective::kReduce ? ga : 0;
      if (a == "binomial") return lg * (al + n * (be + g));
      if (a == "flat") return FlatSteps(p, c, coll == Collective::kBroadcast) * al + (p - 1) * n * (be + g);
      if (a == "ring") {
        double k = std::max(1.0, std::min(64.0, n / (256.0 * 1024)));
        return (p - 2 + k) * (al + n * (be + g) / k);
      }
      return inf;
    }
    case Collective::kGather:
    case Collective::kScatter:
      if (a == "binomial") return lg * al + f * n * be;
      // Large blocks within a host: flat as for all_gather (DirectBlocks), the receivers reading
      // at once, nothing forwarded (4 ranks on 2 CPUs, 4 / 16 MiB: scatter 452 / 1598 us vs
      // binomial's 514 / 2433, gather 419 / 1758 vs 767 / 2122).
      if (a == "flat" && DirectBlocks(n / p, c)) return al + f * n * be;
      if (a == "flat") return FlatSteps(p, c, coll == Collective::kScatter) * al + f * n * be;
      return inf;
    case Collective::kAllToAll:
      if (a == "pairwise") return (p - 1) * (al + n / p * be);
      return inf;
    case Collective::kBarrier:
      if (a == "dissemination") return lg * al;
      return inf;
  }
  return inf;
}

Result<CollConfig> CollConfig::FromEnv() {
  CollConfig c;
  TUTTI_ASSIGN_OR_RETURN(c.selector, Selector::FromEnv());
  TUTTI_ASSIGN_OR_RETURN(int64_t ch, EnvInt("TUTTI_NCHANNELS"));
  if (ch < 1 || ch > 64) return InvalidArgument("TUTTI_NCHANNELS must be 1..64");
  c.nchannels = static_cast<int>(ch);
  TUTTI_ASSIGN_OR_RETURN(c.chunk_bytes, EnvInt("TUTTI_CHUNK_BYTES"));
  if (c.chunk_bytes < 0) return InvalidArgument("TUTTI_CHUNK_BYTES must be >= 0");
  return c;
}

Result<Selector> Selector::FromEnv() { return Parse(EnvRaw("TUTTI_ALGO").value_or("")); }

Result<Selector> Selector::Parse(const std::string& spec) {
  Selector s;
  size_t pos = 0;
  while (pos < spec.size()) {
    size_t comma = spec.find(',', pos);
    std::string item = spec.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    pos = comma == std::string::npos ? spec.size() : comma + 1;
    if (item.empty()) continue;
    size_t colon = item.find(':');
    if (colon == std::string::npos) {
      if (!s.global_.empty()) return InvalidArgument("TUTTI_ALGO=\"" + spec + "\" names two default algorithms");
      bool known = false;
      for (int c = 0; c <= static_cast<int>(Collective::kBarrier); ++c)
        for (const auto& name : algo::AlgorithmsFor(static_cast<Collective>(c))) known = known || name == item;
      if (!known) return InvalidArgument("TUTTI_ALGO: unknown algorithm \"" + item + "\"");
      s.global_ = item;
      continue;
    }
    Collective coll;
    std::string cname = item.substr(0, colon), aname = item.substr(colon + 1);
    if (!ParseCollective(cname, &coll)) return InvalidArgument("TUTTI_ALGO: unknown collective \"" + cname + "\"");
    auto names = algo::AlgorithmsFor(coll);
    if (std::find(names.begin(), names.end(), aname) == names.end()) {
      std::string have;
      for (const auto& n : names) have += (have.empty() ? "" : ", ") + n;
      return InvalidArgument("TUTTI_ALGO: " + std::string(algo::CollectiveName(coll)) + " has no algorithm \"" + aname +
                             "\" (it has: " + have + ")");
    }
    s.per_coll_[coll] = aname;
  }
  return s;
}

bool Selector::Forces(Collective coll) const {
  if (per_coll_.count(coll) != 0) return true;
  if (global_.empty()) return false;
  auto names = algo::AlgorithmsFor(coll);
  return !global_.empty() && std::find(names.begin(), names.end(), global_) != names.end();
}

Result<std::string> Selector::Choose(Collective coll, int p, uint64_t bytes, const std::string& transport,
                                     const std::string& per_call, bool device) const {
  auto names = algo::AlgorithmsFor(coll);
  auto has = [&](const std::string& a) { return std::find(names.begin(), names.end(), a) != names.end(); };
  if (!per_call.empty()) {
    if (!has(per_call))
      return InvalidArgument(std::string(algo::CollectiveName(coll)) + " has no algorithm \"" + per_call + "\"");
    return per_call;
  }
  if (auto it = per_coll_.find(coll); it != per_coll_.end()) return it->second;
  if (!global_.empty() && has(global_)) return global_;
  TUTTI_ASSIGN_OR_RETURN(CostParams c, CostParamsFor(transport));
  c.device = device;
  std::string best;
  double best_t = std::numeric_limits<double>::infinity();
  for (const auto& a : names) {
    double t = ModelTime(a, coll, p, static_cast<double>(bytes), c);
    if (t < best_t || best.empty()) {
      best = a;
      best_t = t;
    }
  }
  if (best.empty()) return InternalError(std::string("no algorithm for ") + algo::CollectiveName(coll));
  if (LogEnabled(LogLevel::kInfo, kLogColl)) {
    // Once per (collective, ranks, size class, choice).
    static std::mutex mu;
    static std::set<std::string> seen;
    int size_class = bytes == 0 ? 0 : 64 - __builtin_clzll(bytes);
    std::string key = std::string(algo::CollectiveName(coll)) + "/" + std::to_string(p) + "/" + std::to_string(size_class) + "/" + best;
    std::lock_guard<std::mutex> lock(mu);
    if (seen.insert(key).second)
      TUTTI_LOG(Info, Coll, "%s on %d ranks, %llu bytes over %s: algorithm %s (model %.1f us)", algo::CollectiveName(coll), p,
                static_cast<unsigned long long>(bytes), transport.c_str(), best.c_str(), best_t * 1e6);
  }
  return best;
}

}  // namespace tutti
