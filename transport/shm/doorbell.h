// A doorbell in shared memory: how a rank that sleeps while waiting is woken the moment a
// local peer writes to it, instead of after a timed nap. Each rank owns one (a small segment);
// its shm peers map it and Ring() after every frame they write. A waiter announces itself
// (Prepare), re-checks its rings, and then blocks in a futex on the bell until it rings.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "core/base/status.h"
#include "transport/shm/shm_segment.h"
#include "transport/transport.h"

namespace tutti {

class Doorbell : public WakeSource {
 public:
  static Result<std::unique_ptr<Doorbell>> Create();
  static Result<std::unique_ptr<Doorbell>> Open(const std::string& name);
  const std::string& name() const { return seg_->name(); }
  // Creator: remove the name once every peer has mapped it.
  void Unlink() { seg_->Unlink(); }

  // Called by a writer after it published a frame for the owner.
  void Ring();
  // Called by the owner before it goes to sleep: returns the value to wait on. Every Prepare
  // must be followed by Done.
  uint32_t Prepare() override;
  // Sleeps until the bell rings after Prepare returned `seen`, or timeout_us passes.
  void Wait(uint32_t seen, int timeout_us) override;
  void Done() override;

 private:
  struct Word {
    std::atomic<uint32_t> seq;
    std::atomic<uint32_t> sleepers;
  };
  explicit Doorbell(std::unique_ptr<ShmSegment> seg)
      : seg_(std::move(seg)), word_(static_cast<Word*>(seg_->data())) {}
  std::unique_ptr<ShmSegment> seg_;
  Word* word_;
};

}  // namespace tutti
