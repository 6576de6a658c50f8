#include "core/p2p/frame_types.h"

#include <string>

namespace tutti {

const char* FrameTypeName(FrameType t) {
  switch (t) {
    case FrameType::kData: return "DATA";
    case FrameType::kRts: return "RTS";
    case FrameType::kCts: return "CTS";
    case FrameType::kBulk: return "BULK";
    case FrameType::kAck: return "ACK";
    case FrameType::kNack: return "NACK";
    case FrameType::kClose: return "CLOSE";
    case FrameType::kDone: return "DONE";
    case FrameType::kPing: return "PING";
    case FrameType::kPost: return "POST";
    case FrameType::kCredit: return "CREDIT";
  }
  return "?";
}

Status ValidateFrame(const FrameHeader& h, uint64_t max_payload) {
  TUTTI_RETURN_IF_ERROR(ValidateEnvelope(h, max_payload));
  const FrameType t = TypeOf(h);
  const char* name = FrameTypeName(t);
  if (name[0] == '?') return ProtocolError("unknown frame type " + std::to_string(static_cast<int>(h.type)));
  if (h.flags != FrameOf(t).flags)
    return ProtocolError(std::string(name) + " frame with flags " + std::to_string(static_cast<int>(h.flags)));
  switch (t) {
    case FrameType::kData:
    case FrameType::kPost:
      if (h.payload_len != h.arg) return ProtocolError(std::string(name) + " frame length differs from its size");
      return OkStatus();
    case FrameType::kBulk: return OkStatus();
    case FrameType::kRts:
    case FrameType::kCts:
      if (h.payload_len > kMaxDescriptorBytes) return ProtocolError(std::string(name) + " descriptor too long");
      return OkStatus();
    case FrameType::kClose:
      if (h.payload_len > kMaxCloseReasonBytes) return ProtocolError("CLOSE reason too long");
      return OkStatus();
    case FrameType::kDone:
    case FrameType::kPing:
    case FrameType::kAck:
    case FrameType::kNack:
    case FrameType::kCredit:
      if (h.payload_len != 0) return ProtocolError(std::string(name) + " frame with a payload");
      return OkStatus();
  }
  return OkStatus();
}

}  // namespace tutti
