#include "algorithms/registry.h"

#include "algorithms/binomial.h"
#include "algorithms/bruck.h"
#include "algorithms/dissemination.h"
#include "algorithms/flat.h"
#include "algorithms/doubling.h"
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
  // InPlaceSafe(name, coll): checked by in_place_test over the whole in-place sweep, both ways
  // (every true entry passes it, every false one fails somewhere in it).
  bool in_place_safe;
};

constexpr Entry kEntries[] = {
    // ring all_reduce / reduce_scatter: partials are received into scratch; the output is written
    // by the reduction that reads the same storage's input (ring.cc, IN PLACE).
    {"ring", Collective::kAllReduce, RingAllReduce, true},
    {"ring", Collective::kReduceScatter, RingReduceScatter, true},
    {"ring", Collective::kAllGather, RingAllGather, true},
    {"ring", Collective::kBroadcast, ChainBroadcast, true},
    // chain reduce: the root receives into scratch and reduces it with its input into its output.
    {"ring", Collective::kReduce, ChainReduce, true},
    // tree all_reduce: a leaf sends its input up one step before receiving into its output.
    {"tree", Collective::kAllReduce, TreeAllReduce, true},
    {"binomial", Collective::kBroadcast, BinomialBroadcast, true},
    {"binomial", Collective::kReduce, BinomialReduce, true},
    {"binomial", Collective::kGather, BinomialGather, true},
    {"binomial", Collective::kScatter, BinomialScatter, true},
    {"flat", Collective::kBroadcast, FlatBroadcast, true},
    {"flat", Collective::kReduce, FlatReduce, true},
    {"flat", Collective::kGather, FlatGather, true},
    {"flat", Collective::kScatter, FlatScatter, true},
    {"flat", Collective::kAllGather, FlatAllGather, true},
    {"rhd", Collective::kAllReduce, RhdAllReduce, true},
    {"rhd", Collective::kReduceScatter, RhdReduceScatter, true},
    // doubling all_reduce: no step reduces into what it sends (partials alternate between
    // scratch and the output; the first goes to scratch, as the input may be the output).
    {"doubling", Collective::kAllReduce, DoublingAllReduce, true},
    {"bruck", Collective::kAllGather, BruckAllGather, true},
    // pairwise all_to_all: blocks arriving before their storage was sent are parked and copied
    // after the send (pairwise.cc, IN PLACE).
    {"pairwise", Collective::kAllToAll, PairwiseAllToAll, true},
    {"dissemination", Collective::kBarrier, DisseminationBarrier, true},
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

bool InPlaceSafe(const std::string& algorithm, Collective c) {
  for (const Entry& e : kEntries)
    if (algorithm == e.name && e.coll == c) return e.in_place_safe;
  return false;
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
