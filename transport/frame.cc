#include "transport/frame.h"

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

Status ValidateFrameHeader(const FrameHeader& h, uint64_t max_payload) {
  if (h.magic != kFrameMagic) return ProtocolError("bad frame magic " + std::to_string(h.magic));
  switch (h.type) {
    case FrameType::kData:
    case FrameType::kPost:
      if (h.payload_len != h.arg)
        return ProtocolError(std::string(FrameTypeName(h.type)) + " frame length differs from its size");
      [[fallthrough]];
    case FrameType::kBulk:
      if (h.payload_len > max_payload)
        return ProtocolError(std::string(FrameTypeName(h.type)) + " frame of " +
                             std::to_string(h.payload_len) + " bytes exceeds the limit of " +
                             std::to_string(max_payload));
      return OkStatus();
    case FrameType::kRts:
    case FrameType::kCts:
      if (h.payload_len > kMaxDescriptorBytes)
        return ProtocolError(std::string(FrameTypeName(h.type)) + " descriptor too long");
      return OkStatus();
    case FrameType::kClose:
      if (h.payload_len > kMaxCloseReasonBytes) return ProtocolError("CLOSE reason too long");
      return OkStatus();
    case FrameType::kDone:
    case FrameType::kPing:
    case FrameType::kAck:
    case FrameType::kNack:
    case FrameType::kCredit:
      if (h.payload_len != 0)
        return ProtocolError(std::string(FrameTypeName(h.type)) + " frame with a payload");
      return OkStatus();
  }
  return ProtocolError("unknown frame type " + std::to_string(static_cast<int>(h.type)));
}

}  // namespace tutti
