// The frame: the unit every transport carries between two ranks.
//
// A frame is a 40-byte header followed by payload_len bytes. The point-to-point protocol
// (core/p2p) defines what the types mean; transports only move frames in order and never look
// inside the payload. Everything here arrives from another process and is validated before use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/base/status.h"

namespace tutti {

enum class FrameType : uint8_t {
  kData = 1,   // eager message: tag, id, arg = size; payload = the bytes
  kRts = 2,    // ready to send: tag, id, arg = size; payload = a buffer descriptor (maybe empty)
  kCts = 3,    // clear to send: id (of the sender's message), arg = first byte the sender
               // provides; payload = the receive buffer's descriptor (may be empty)
  kBulk = 4,   // a piece of a message after CTS: id, arg = offset; payload = the bytes
  kAck = 5,    // receiver matched and holds message id
  kNack = 6,   // receiver matched message id but sizes differ: arg = receiver's size
  kClose = 7,  // the peer is closing its communicator; payload = why, if it failed (text)
  kDone = 8,   // the sender wrote arg bytes of message id into the receiver's memory itself
  kPing = 9,   // heartbeat: "I am alive and progressing"; no payload
  kPost = 10,  // eager message that wants no ACK (collectives): as DATA; the receiver answers
               // only a mismatch (NACK) and returns the bytes it held through CREDIT
  kCredit = 11,  // arg = bytes of POST frames (payload + header) the receiver no longer holds
};

constexpr uint32_t kFrameMagic = 0x54555454;  // "TUTT"
constexpr size_t kFrameHeaderSize = 40;
// A descriptor (RTS payload) is small: pid + address today, a memory key tomorrow.
constexpr size_t kMaxDescriptorBytes = 256;
// A CLOSE frame may say why the peer gave up (its error message), up to this long.
constexpr size_t kMaxCloseReasonBytes = 2048;

struct FrameHeader {
  uint32_t magic = kFrameMagic;
  FrameType type = FrameType::kData;
  uint8_t reserved[3] = {0, 0, 0};
  int32_t tag = 0;
  uint32_t sig = 0;          // DATA/RTS: the collective call's signature (0: point-to-point);
                             // NACK: the receiver's signature
  uint64_t id = 0;           // message id, chosen by the sender of the message
  uint64_t arg = 0;          // size / offset / receiver's size, by type
  uint64_t payload_len = 0;  // bytes that follow the header
};
static_assert(sizeof(FrameHeader) == kFrameHeaderSize, "frame header must be 40 bytes");

const char* FrameTypeName(FrameType t);

// Checks what can be checked without protocol state: magic, type, and that payload_len fits
// the type (control frames carry none, RTS carries a descriptor, data/bulk at most max_payload).
Status ValidateFrameHeader(const FrameHeader& h, uint64_t max_payload);

}  // namespace tutti
