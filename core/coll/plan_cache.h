// Plans of collective calls, computed once per distinct call and reused: the algorithm the
// selector chose, the call's description and signature, and the rank's schedule. A training
// loop repeats a handful of call shapes, so after the first call of each shape a collective
// starts without consulting the cost model, building strings or building a schedule.
//
// The environment (TUTTI_ALGO, ...) is read when a shape is first planned, as NCCL reads its
// settings once.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "algorithms/prim_program.h"
#include "algorithms/schedule.h"
#include "core/base/dtype.h"
#include "core/base/status.h"

namespace tutti {

struct CollPlanKey {
  algo::Collective coll;
  uint64_t count;
  DataType type;
  RedOp op;
  int root;
  int nchannels;
  std::string algorithm;  // the call's explicit choice ("" for automatic)
  bool fused = false;     // planned for the fused kernels (no pipelining across streams)
  bool distinct = false;  // input and output do not overlap (algo::CollArgs::distinct)
  bool operator==(const CollPlanKey& o) const {
    return coll == o.coll && count == o.count && type == o.type && op == o.op && root == o.root &&
           nchannels == o.nchannels && algorithm == o.algorithm && fused == o.fused && distinct == o.distinct;
  }
};

struct CollPlanKeyHash {
  size_t operator()(const CollPlanKey& k) const;
};

struct CollPlan {
  const char* name = "";   // "all_reduce"
  std::string algorithm;   // "ring"
  std::string desc;        // "ring, count 2, float32, sum"
  uint32_t sig = 0;        // what every rank's call must agree on (non-zero)
  std::shared_ptr<const algo::Schedule> schedule;
  bool fused = false;  // planned for the fused kernels (core/coll/fused_path.h)
  // The schedule lowered for the fused kernels (core/coll/fused_path.h), made by the first call
  // on device memory that takes that path.
  mutable std::once_flag lower_once;
  mutable std::shared_ptr<const algo::PrimProgram> lowered;
  mutable Status lower_status;
};

class PlanCache {
 public:
  static constexpr size_t kMaxPlans = 256;  // beyond it the cache starts over
  std::shared_ptr<const CollPlan> Find(const CollPlanKey& key) const;
  void Insert(const CollPlanKey& key, std::shared_ptr<const CollPlan> plan);
  size_t size() const;

 private:
  mutable std::mutex mu_;
  std::unordered_map<CollPlanKey, std::shared_ptr<const CollPlan>, CollPlanKeyHash> plans_;
};

}  // namespace tutti
