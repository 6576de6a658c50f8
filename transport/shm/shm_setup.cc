#include "transport/shm/shm_setup.h"

#include "transport/shm/doorbell.h"
#include "transport/shm/shm_segment.h"

namespace tutti {

namespace {

std::string R(int r) { return "rank " + std::to_string(r); }
std::string PairKey(const char* what, int lower, int higher) {
  return std::string("shm/") + what + "/" + std::to_string(lower) + "-" + std::to_string(higher);
}

// Maps the peer's doorbell into `conn`, which rings it after every frame it writes.
Status AttachDoorbell(ShmConnection& conn, const PeerInfo& card, int peer) {
  if (card.doorbell.empty()) return OkStatus();  // the peer sleeps without one
  auto bell = Doorbell::Open(card.doorbell);
  if (!bell.ok()) return bell.status().WithContext("doorbell of " + R(peer));
  conn.SetPeerDoorbell(std::move(*bell));
  return OkStatus();
}

}  // namespace

Result<std::map<int, std::unique_ptr<Connection>>> ShmSetup::Connect(const std::vector<PeerInfo>& cards,
                                                                      const std::set<int>& peers,
                                                                      SetupExchange& ex) {
  const int me = ex.rank();
  std::map<int, std::unique_ptr<Connection>> out;
  std::map<int, std::unique_ptr<ShmConnection>> created;
  // Create where we are the lower rank, attach where the higher, then unlink once attached.
  for (int r : peers) {
    if (r <= me) continue;
    TUTTI_ASSIGN_OR_RETURN(auto seg, ShmSegment::Create(ShmConnection::SegmentBytes(opts_)));
    const std::string name = seg->name();
    TUTTI_ASSIGN_OR_RETURN(auto conn, ShmConnection::Make(r, cards[r].pid, std::move(seg), true, true, opts_));
    TUTTI_RETURN_IF_ERROR(AttachDoorbell(*conn, cards[r], r));
    TUTTI_RETURN_IF_ERROR(ex.Put(PairKey("segment", me, r), name));
    created[r] = std::move(conn);
  }
  for (int r : peers) {
    if (r >= me) continue;
    TUTTI_ASSIGN_OR_RETURN(std::string name, ex.Get(r, PairKey("segment", r, me), "shared memory from " + R(r)));
    auto seg = ShmSegment::Open(name, ShmConnection::SegmentBytes(opts_));
    if (!seg.ok()) return seg.status().WithContext("shared memory from " + R(r));
    TUTTI_ASSIGN_OR_RETURN(auto conn, ShmConnection::Make(r, cards[r].pid, std::move(*seg), false, false, opts_));
    TUTTI_RETURN_IF_ERROR(AttachDoorbell(*conn, cards[r], r));
    TUTTI_RETURN_IF_ERROR(ex.Put(PairKey("attached", r, me), "1"));
    out[r] = std::move(conn);
  }
  for (auto& [r, conn] : created) {
    TUTTI_RETURN_IF_ERROR(ex.Get(r, PairKey("attached", me, r), R(r) + " did not attach to shared memory").status());
    conn->UnlinkName();
    out[r] = std::move(conn);
  }
  return out;
}

}  // namespace tutti
