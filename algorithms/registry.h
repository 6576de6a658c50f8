// The algorithm registry: schedules by algorithm name.
//
//   algorithm        collectives
//   "ring"           all_reduce, reduce_scatter, all_gather, broadcast, reduce (chains)
//   "tree"           all_reduce (double binary tree)
//   "binomial"       broadcast, reduce, gather, scatter
//   "rhd"            all_reduce, reduce_scatter (recursive halving-doubling, any n)
//   "bruck"          all_gather
//   "pairwise"       all_to_all
//   "dissemination"  barrier
//
// Every algorithm handles every n >= 1 and every count >= 0 (n == 1: a local copy).
#pragma once

#include <string>
#include <vector>

#include "algorithms/schedule.h"
#include "core/status.h"

namespace tutti::algo {

// The schedule of rank args.rank. InvalidArgument for bad arguments (ValidateArgs), an unknown
// algorithm, or an algorithm that does not implement args.coll (the message lists what exists).
Result<Schedule> BuildSchedule(const std::string& algorithm, const CollArgs& args);

// Names of the algorithms implementing `c`, in the order of the table above.
std::vector<std::string> AlgorithmsFor(Collective c);
// Every algorithm name, and the collectives one implements (empty if unknown).
std::vector<std::string> AlgorithmNames();
std::vector<Collective> CollectivesOf(const std::string& algorithm);

}  // namespace tutti::algo
