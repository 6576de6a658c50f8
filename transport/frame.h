// The frame: the unit every transport carries between two ranks.
//
// A frame is a 40-byte header followed by payload_len bytes. Transports move frames in order
// (bulk frames excepted, below) and never look inside the payload; what `type`, `tag`, `sig`,
// `id` and `arg` mean is the point-to-point protocol's (core/p2p/frame_types.h), and it checks
// them. A transport checks the envelope (ValidateEnvelope) before it hands a header on: every
// header arrives from another process.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/base/status.h"

namespace tutti {

constexpr uint32_t kFrameMagic = 0x54555454;  // "TUTT"
constexpr size_t kFrameHeaderSize = 40;
// The longest descriptor a transport's ExposedRegion may have (the protocol sends descriptors
// as payloads of its own frames, and bounds them by this).
constexpr size_t kMaxDescriptorBytes = 256;

// FrameHeader::flags.
// A piece of a payload the receiver asked for (it said how many such bytes it expects through
// Connection::ExpectBulk): it may travel on a lane of its own (another socket), so it is not
// ordered with the connection's other frames; the protocol places it by its header alone.
constexpr uint8_t kFrameBulk = 1;
constexpr uint8_t kKnownFrameFlags = kFrameBulk;

struct FrameHeader {
  uint32_t magic = kFrameMagic;
  uint8_t type = 0;   // the protocol's (never 0 on the wire)
  uint8_t flags = 0;  // kFrameBulk
  uint8_t reserved[2] = {0, 0};
  int32_t tag = 0;
  uint32_t sig = 0;
  uint64_t id = 0;
  uint64_t arg = 0;
  uint64_t payload_len = 0;  // bytes that follow the header
};
static_assert(sizeof(FrameHeader) == kFrameHeaderSize, "frame header must be 40 bytes");

// What a transport checks before it hands a header on: the magic, flags it knows, and a payload
// of at most max_payload bytes (the transport's limit: nothing longer is ever sent).
Status ValidateEnvelope(const FrameHeader& h, uint64_t max_payload);

}  // namespace tutti
