#include "transport/frame.h"

#include <string>

namespace tutti {

Status ValidateEnvelope(const FrameHeader& h, uint64_t max_payload) {
  if (h.magic != kFrameMagic) return ProtocolError("bad frame magic " + std::to_string(h.magic));
  if ((h.flags & ~kKnownFrameFlags) != 0)
    return ProtocolError("frame with unknown flags " + std::to_string(static_cast<int>(h.flags)));
  if (h.payload_len > max_payload)
    return ProtocolError("frame of " + std::to_string(h.payload_len) + " bytes exceeds the limit of " +
                         std::to_string(max_payload));
  return OkStatus();
}

}  // namespace tutti
