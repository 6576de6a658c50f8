#include "core/coll/slot_setup.h"

#include <algorithm>
#include <sstream>

#include "transport/shm/shm_segment.h"

namespace tutti {

SlotChannel::Shape SlotShape(int nranks, uint64_t slot_bytes) {
  auto round_up = [](uint64_t x, uint64_t a) { return (std::max<uint64_t>(x, 1) + a - 1) / a * a; };
  SlotChannel::Shape s;
  s.nranks = nranks;
  s.unit_bytes = round_up(std::max(std::min<uint64_t>(slot_bytes, 1024), (slot_bytes + 63) / 64), 64);
  s.round_units = static_cast<int>((slot_bytes + s.unit_bytes - 1) / s.unit_bytes);
  s.units = std::max(kSlotUnits, kSlotRoundsInFlight * s.round_units);
  return s;
}

Result<SlotArea> CreateSlotArea(int nranks, uint64_t slot_bytes, const SlotRules& rules, std::string* announcement) {
  *announcement = "off";
  if (rules.max_bytes == 0) return SlotArea{};
  const SlotChannel::Shape shape = SlotShape(nranks, slot_bytes);
  const uint64_t bytes = SlotChannel::AreaBytes(shape);
  TUTTI_ASSIGN_OR_RETURN(std::unique_ptr<ShmSegment> seg, ShmSegment::Create(bytes));
  SlotChannel::Format(seg->data(), shape);
  // (Every page mapped now, rather than a fault per page in the first lap of calls: a fault costs
  // about as much as a small call.)
  seg->Populate();
  SlotArea a;
  a.segment = std::move(seg);
  a.channel = std::make_shared<SlotChannel>(a.segment->data(), shape, 0, a.segment);
  a.rules = rules;
  *announcement = a.segment->name() + " " + std::to_string(bytes) + " " + std::to_string(rules.max_bytes) + " " +
                  (rules.strict ? "1" : "0") + " " + std::to_string(rules.copy_block_max) + " " +
                  (rules.all_gather_stays ? "1" : "0") + " " + std::to_string(rules.direct_min) + " " +
                  std::to_string(rules.direct_rooted_min) + " " + std::to_string(rules.direct_broadcast_min);
  return a;
}

Result<SlotArea> OpenSlotArea(const std::string& announcement, int nranks, int rank) {
  if (announcement == "off") return SlotArea{};
  std::istringstream in(announcement);
  std::string name;
  uint64_t bytes = 0;
  SlotRules rules;
  int strict = -1, all_gather_stays = -1;
  if (!(in >> name >> bytes >> rules.max_bytes >> strict >> rules.copy_block_max >> all_gather_stays >>
        rules.direct_min >> rules.direct_rooted_min >> rules.direct_broadcast_min) ||
      bytes > (uint64_t{1} << 36) || (strict != 0 && strict != 1) || (all_gather_stays != 0 && all_gather_stays != 1))
    return ProtocolError("malformed slot area announcement \"" + announcement + "\"");
  rules.strict = strict == 1;
  rules.all_gather_stays = all_gather_stays == 1;
  TUTTI_ASSIGN_OR_RETURN(std::unique_ptr<ShmSegment> seg, ShmSegment::Open(name, bytes));
  TUTTI_ASSIGN_OR_RETURN(SlotChannel::Shape shape, SlotChannel::ReadShape(seg->data(), bytes));
  if (shape.nranks != nranks)
    return ProtocolError("slot area " + name + " is for " + std::to_string(shape.nranks) + " ranks, not " +
                         std::to_string(nranks));
  seg->Populate();
  SlotArea a;
  std::shared_ptr<ShmSegment> keep = std::move(seg);
  a.channel = std::make_shared<SlotChannel>(keep->data(), shape, rank, keep);
  a.rules = rules;
  return a;
}

}  // namespace tutti
