// The algorithm registry: schedules by algorithm name.
//
//   algorithm        collectives
//   "ring"           all_reduce, reduce_scatter, all_gather, broadcast, reduce (chains)
//   "tree"           all_reduce (double binary tree)
//   "binomial"       broadcast, reduce, gather, scatter
//   "flat"           broadcast, reduce, gather, scatter (root and every rank in one step)
//   "rhd"            all_reduce, reduce_scatter (recursive halving-doubling, any n)
//   "doubling"       all_reduce (recursive doubling, any n: log2 n steps, small messages)
//   "bruck"          all_gather
//   "pairwise"       all_to_all
//   "dissemination"  barrier
//
// Every algorithm handles every n >= 1 and every count >= 0 (n == 1: a local copy).
#pragma once

#include <string>
#include <vector>

#include "algorithms/schedule.h"
#include "core/base/status.h"

namespace tutti::algo {

// The schedule of rank args.rank. InvalidArgument for bad arguments (ValidateArgs), an unknown
// algorithm, or an algorithm that does not implement args.coll (the message lists what exists).
Result<Schedule> BuildSchedule(const std::string& algorithm, const CollArgs& args);

// Names of the algorithms implementing `c`, in the order of the table above.
std::vector<std::string> AlgorithmsFor(Collective c);
// Every algorithm name, and the collectives one implements (empty if unknown).
std::vector<std::string> AlgorithmNames();
std::vector<Collective> CollectivesOf(const std::string& algorithm);

// Whether `algorithm`'s schedules for `c` may run in place: with input and output in one storage
// laid out as NCCL's in-place calls (schedule.h, Aliasing), skipping the private copy of the
// input. True only where the in-place simulation (simulator.h, Aliasing::kInPlace) is correct
// over the whole sweep of testing.h's InPlaceSweep (n 1..33 and 64, counts 0, 1, 2, 7, 13, n-1,
// n+1, 1000, roots 0, n/2, n-1, nchannels 1-2, chunk 0 and 3): no input element is read after its
// storage was overwritten, no stream races another on the shared storage, results as usual.
// false for unknown pairs, and for any other overlap of input and output than that layout.
//
//   safe:    every pair in the table above: ring all_reduce/reduce_scatter/all_gather/broadcast/
//            reduce, tree all_reduce, binomial and flat broadcast/reduce/gather/scatter, rhd all_reduce/
//            reduce_scatter, doubling all_reduce, bruck all_gather, pairwise all_to_all,
//            dissemination barrier
//   unsafe:  none (in_place_test keeps deliberately unsafe schedules to show the check can fail)
bool InPlaceSafe(const std::string& algorithm, Collective c);

}  // namespace tutti::algo
