#include "algorithms/registry.h"

#include "algorithms/binomial.h"
#include "algorithms/bruck.h"
#include "algorithms/dissemination.h"
#include "algorithms/pairwise.h"
#include "algorithms/rhd.h"
#include "algorithms/ring.h"
#include "algorithms/tree.h"

namespace tutti::algo {
namespace {

struct Entry {
  const char* name;
  Collective coll;
  Schedule (*build)(const CollArgs&);
};

constexpr Entry kEntries[] = {
    {"ring", Collective::kAllReduce, RingAllReduce},
    {"ring", Collective::kReduceScatter, RingReduceScatter},
    {"ring", Collective::kAllGather, RingAllGather},
    {"ring", Collective::kBroadcast, ChainBroadcast},
    {"ring", Collective::kReduce, ChainReduce},
    {"tree", Collective::kAllReduce, TreeAllReduce},
    {"binomial", Collective::kBroadcast, BinomialBroadcast},
    {"binomial", Collective::kReduce, BinomialReduce},
    {"binomial", Collective::kGather, BinomialGather},
    {"binomial", Collective::kScatter, BinomialScatter},
    {"rhd", Collective::kAllReduce, RhdAllReduce},
    {"rhd", Collective::kReduceScatter, RhdReduceScatter},
    {"bruck", Collective::kAllGather, BruckAllGather},
    {"pairwise", Collective::kAllToAll, PairwiseAllToAll},
    {"dissemination", Collective::kBarrier, DisseminationBarrier},
};

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s.empty() ? "none" : s;
}

}  // namespace

std::vector<std::string> AlgorithmNames() {
  std::vector<std::string> names;
  for (const Entry& e : kEntries) {
    bool seen = false;
    for (const auto& n : names) seen = seen || n == e.name;
    if (!seen) names.push_back(e.name);
  }
  return names;
}

std::vector<std::string> AlgorithmsFor(Collective c) {
  std::vector<std::string> names;
  for (const Entry& e : kEntries)
    if (e.coll == c) names.push_back(e.name);
  return names;
}

std::vector<Collective> CollectivesOf(const std::string& algorithm) {
  std::vector<Collective> cs;
  for (const Entry& e : kEntries)
    if (algorithm == e.name) cs.push_back(e.coll);
  return cs;
}

Result<Schedule> BuildSchedule(const std::string& algorithm, const CollArgs& args) {
  TUTTI_RETURN_IF_ERROR(ValidateArgs(args));
  for (const Entry& e : kEntries)
    if (algorithm == e.name && e.coll == args.coll) return e.build(args);
  const std::vector<Collective> cs = CollectivesOf(algorithm);
  if (cs.empty())
    return InvalidArgument("unknown algorithm \"" + algorithm + "\"; algorithms: " + Join(AlgorithmNames()));
  std::vector<std::string> implemented;
  for (Collective c : cs) implemented.push_back(CollectiveName(c));
  return InvalidArgument("algorithm \"" + algorithm + "\" does not implement " + CollectiveName(args.coll) +
                         " (it implements " + Join(implemented) + "); algorithms for " +
                         CollectiveName(args.coll) + ": " + Join(AlgorithmsFor(args.coll)));
}

}  // namespace tutti::algo
