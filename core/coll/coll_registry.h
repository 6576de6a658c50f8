// The collectives in flight on one communicator, and the Work handle that waits for one.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/coll/executor.h"
#include "core/work.h"

namespace tutti {

class CollRegistry {
 public:
  // Collectives are matched across ranks by the order in which they are issued, so one thread
  // at a time may issue them. BeginIssue claims issuing for the calling thread; it fails with
  // kInvalidUsage naming both calls when another thread is issuing one now or has one in
  // flight. Every successful BeginIssue is paired with EndIssue (with the run it started, or
  // nullptr). A thread may take over once the previous thread's collectives have completed.
  // `in_flight` (optional) gets InFlight() as of the claim.
  Status BeginIssue(int rank, const CollLabel& call, size_t* in_flight = nullptr);
  void EndIssue(std::shared_ptr<CollRun> run);
  // Collectives in flight (not yet finished).
  size_t InFlight();
  // Advances every collective in flight, and `also` (if given) when it is not among them; true
  // if any completed a step or finished.
  bool AdvanceAll(CollRun* also = nullptr);
  // True while any collective is in flight.
  bool Active();

 private:
  void DropFinishedLocked();

  std::mutex mu_;
  std::vector<std::shared_ptr<CollRun>> active_;
  bool issuing_ = false;
  CollLabel issuing_call_;
  std::thread::id issuer_;  // the thread that issued the runs in active_
};

class CollWork : public WorkImpl {
 public:
  CollWork(std::shared_ptr<CollRun> run, std::shared_ptr<P2PEngine> engine, std::shared_ptr<CollRegistry> registry,
           int rank, double default_timeout_s, int spin_us, int yield_us)
      : run_(std::move(run)), engine_(std::move(engine)), registry_(std::move(registry)), rank_(rank),
        default_timeout_s_(default_timeout_s), spin_us_(spin_us), yield_us_(yield_us) {}
  Status Wait(double timeout_s) override;
  bool Test() override {
    registry_->AdvanceAll(run_.get());
    return run_->done();
  }
  bool IsCompleted() const override { return run_->done(); }
  Status status() const override { return run_->status(); }

 private:
  std::shared_ptr<CollRun> run_;
  std::shared_ptr<P2PEngine> engine_;
  std::shared_ptr<CollRegistry> registry_;
  int rank_;
  double default_timeout_s_;
  int spin_us_;
  int yield_us_;
};

}  // namespace tutti
