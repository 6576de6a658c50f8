// Schedules: what an algorithm does, as data. An algorithm (ring, tree, ...) is a pure function
// from (collective, world size, rank, count, root, ...) to a Schedule for one rank; an executor
// (core/) runs it over the communicator's point-to-point engine with the reduction kernels, and
// a simulator (algorithms/simulator) runs all ranks' schedules in one thread to check them.
//
// A Schedule is a set of independent streams (channels / pipelined chunks). Each stream is a
// sequence of steps; a step posts all its receives and sends, waits for all of them, then runs
// its local operations in order. Streams progress independently of each other, so a stream per
// chunk gives pipelining and a stream per channel gives parallel rings.
//
// Regions are in ELEMENTS of the collective's data type; the executor multiplies by the element
// size. Reductions combine their sources left to right, in the order listed, which fixes the
// reduction order (and so the bits) for a given (algorithm, world size, count, options).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/status.h"

namespace tutti::algo {

enum class Collective : uint8_t {
  kBroadcast = 0,
  kReduce,
  kScatter,
  kGather,
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kBarrier,
};
const char* CollectiveName(Collective c);

// Buffers a schedule refers to. Sizes (in elements), with n ranks and count as in CollArgs:
//   broadcast:      input = output = count (the root's input is the data; others' input unused)
//   reduce:         input count; output count (root only meaningful)
//   scatter:        input n*count (root); output count
//   gather:         input count; output n*count (root)
//   all_reduce:     input count; output count
//   all_gather:     input count; output n*count
//   reduce_scatter: input n*count; output count
//   all_to_all:     input n*count; output n*count (block j of the input goes to rank j)
//   barrier:        none (count 0; messages of 0 elements)
// A schedule may assume input and output are distinct, and must never write `input`; in-place
// calls (see Aliasing below) are the executor's business.
enum class Buf : uint8_t { kInput = 0, kOutput, kScratch };

struct Region {
  Buf buf = Buf::kOutput;
  uint64_t offset = 0;  // elements
  uint64_t count = 0;   // elements
};

struct Transfer {
  int peer = 0;
  Region region;  // what is sent / where it is received
};

// kCopy: dst = srcs[0].  kReduce: dst = srcs[0] op srcs[1] op ... (left to right, in one pass
// of the kernel). All regions have the same count; dst may be one of the srcs (exactly the same
// region), but must not otherwise overlap them.
struct LocalOp {
  enum class Kind : uint8_t { kCopy, kReduce };
  Kind kind = Kind::kCopy;
  Region dst;
  std::vector<Region> srcs;
};

struct Step {
  std::vector<Transfer> recvs;
  std::vector<Transfer> sends;
  std::vector<LocalOp> locals;  // after all of this step's transfers completed
};

struct Stream {
  std::vector<Step> steps;
};

struct Schedule {
  std::vector<Stream> streams;
  uint64_t scratch_count = 0;  // elements of scratch the executor must provide
};

struct CollArgs {
  Collective coll = Collective::kAllReduce;
  int nranks = 1;
  int rank = 0;
  int root = 0;          // broadcast, reduce, scatter, gather
  uint64_t count = 0;    // per-rank count as in the table above
  int nchannels = 1;     // parallel streams the algorithm may use (>= 1)
  uint64_t chunk = 0;    // pipelining piece in elements (0: algorithm's choice)
  // The call's input and output never overlap (known to the caller): a schedule may then skip
  // what only in-place storage needs (pairwise all_to_all receives every block straight into
  // its place). Such a schedule must not run in place (registry.h's InPlaceSafe is about
  // schedules built without it).
  bool distinct = false;
};

std::string DescribeArgs(const CollArgs& a);

// ---- Added with the schedule generators (implemented in schedule.cc) ----
//
// Matching: a send and a receive of the same stream between the same two ranks are paired in
// the order they are posted (steps in order; within a step, the order of `sends` / `recvs`),
// as the executor does with one tag per stream. Stream i of one rank talks only to stream i of
// the others, so every rank's schedule has the same streams (some possibly empty).
// Within a step, a received region must not overlap any other transfer's region of that step;
// streams of one rank never touch overlapping regions where one of them writes.
// The generators (algorithms/registry.h) never send a message of 0 elements except in the
// barrier, and never write Buf::kInput.

const char* BufName(Buf b);  // "input", "output", "scratch"
bool IsRooted(Collective c);     // broadcast, reduce, scatter, gather
bool IsReduction(Collective c);  // reduce, all_reduce, reduce_scatter

// Elements of `b` that a rank provides, per the table above. Buffers the table marks as the
// root's (scatter's input, gather's and reduce's output, broadcast's input) count 0 on the
// other ranks; kScratch counts 0 here (its size is Schedule::scratch_count).
uint64_t BufferCount(const CollArgs& a, Buf b);

// In-place calls. A schedule is written for distinct input and output; an executor may run it
// with both in ONE storage (no private copy of the input) only where registry.h's InPlaceSafe()
// says so, and only in the layout of NCCL's in-place calls:
//   all_reduce, broadcast, reduce, all_to_all: input == output (the same offsets);
//   all_gather:      the input is the rank's block of the output (input[i] == output[rank*count + i]);
//   reduce_scatter:  the output is the rank's block of the input (output[i] == input[rank*count + i]);
//   scatter (root):  the root's output is its block of its input (output[i] == input[root*count + i]);
//   gather (root):   the root's input is its block of its output (input[i] == output[root*count + i]).
// Buffers a rank does not provide (BufferCount 0: non-roots' scatter input, gather/reduce output,
// broadcast input) alias nothing.
enum class Aliasing : uint8_t { kDistinct = 0, kInPlace };
// Where element 0 of `b` (kInput or kOutput) lies in rank a.rank's one storage of an in-place
// call; the storage has max over both buffers of InPlaceBase + BufferCount elements.
uint64_t InPlaceBase(const CollArgs& a, Buf b);

// nranks >= 1, 0 <= rank < nranks, root in range for rooted collectives, nchannels >= 1,
// n * count representable. InvalidArgument naming the field otherwise.
Status ValidateArgs(const CollArgs& a);

}  // namespace tutti::algo
