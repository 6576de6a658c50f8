// Setting up the slot channel of a communicator whose ranks all share one host
// (core/coll/slot_channel.h): rank 0 creates the shared area and announces it through the
// store; every other rank maps it from the announcement. Rank 0's settings (TUTTI_SLOT_MAX,
// TUTTI_SLOT_BYTES, TUTTI_STRICT_CHECKS) hold for every rank, so that all ranks route each call
// the same way and give it the same rounds.
#pragma once

#include <memory>
#include <string>

#include "core/base/status.h"
#include "core/coll/slot_channel.h"

namespace tutti {

class ShmSegment;

// Which calls take the slots, and how (rank 0's, the same for every rank).
struct SlotRules {
  uint64_t max_bytes = 0;  // the largest call that takes them (0: none)
  bool strict = false;     // every call compares every rank's header (SlotCall::strict)
  // all_gather, gather, scatter and all_to_all whose blocks (one rank's bytes to one rank) exceed
  // this go as messages, which read them one-sidedly in one copy (faster than two copies through
  // the slots where each rank has a CPU; with more ranks than CPUs only for large blocks); 0: they
  // all take the slots.
  uint64_t copy_block_max = 0;
  // all_gather keeps the slots whatever its blocks (the ranks outnumber the CPUs: there its
  // messages, every rank reading n - 1 blocks at once, took 1.3x the slots' time).
  bool all_gather_stays = false;
  // all_gather (unless it stays) and all_to_all with blocks from this size up, and gather and
  // scatter from direct_rooted_min up (gather below kSplitCopyMin), take the slots as direct calls
  // (SlotCall::direct), before the two rules above, where every rank can read every other's
  // memory (found at setup); 0: never. (Set from kSlotDirectMin and its kin, core/coll/selector.h.)
  uint64_t direct_min = 0, direct_rooted_min = 0;
  uint64_t direct_broadcast_min = 0;  // broadcasts of this many bytes and more, the same way
};


struct SlotArea {
  std::shared_ptr<SlotChannel> channel;  // null: no slots
  SlotRules rules;
  std::shared_ptr<ShmSegment> segment;   // rank 0: to unlink once every rank mapped it
};

// Units per rank in the ring: small calls (one unit each) a rank may be ahead of the slowest,
// and 16 rounds of the largest size (64 units) in flight. (A ring of 256 units did as well for
// calls up to 4 KiB, but a broadcast's root of 16 KiB-1 MiB ran out of ring 2-4x sooner.)
constexpr int kSlotUnits = 1024;
// At least this many rounds of the largest size in flight (where slot bytes make units larger).
constexpr int kSlotRoundsInFlight = 4;

// The ring for rounds of up to `slot_bytes`: units of 1 KiB (or slot_bytes / 64 for larger
// slots, so that a round takes at most 64 units; slot_bytes itself if smaller), kSlotUnits of
// them, or more where kSlotRoundsInFlight largest rounds need more.
SlotChannel::Shape SlotShape(int nranks, uint64_t slot_bytes);

// Rank 0: the area for `nranks` ranks and its announcement ("off" when max_bytes is 0).
Result<SlotArea> CreateSlotArea(int nranks, uint64_t slot_bytes, const SlotRules& rules, std::string* announcement);
// Every other rank: maps the area an announcement names (untrusted text, checked).
Result<SlotArea> OpenSlotArea(const std::string& announcement, int nranks, int rank);

}  // namespace tutti
