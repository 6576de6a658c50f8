// The point-to-point protocol's frames: what FrameHeader::type means (transports carry it
// without looking), what each type's fields hold, and the checks a received header must pass
// before the protocol acts on it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/base/status.h"
#include "transport/frame.h"

namespace tutti {

enum class FrameType : uint8_t {
  kData = 1,   // eager message: tag, id, arg = size; payload = the bytes
  kRts = 2,    // ready to send: tag, id, arg = size; payload = a buffer descriptor (maybe empty)
  kCts = 3,    // clear to send: id (of the sender's message), arg = first byte the sender
               // provides; payload = the receive buffer's descriptor (may be empty)
  kBulk = 4,   // a piece of a message after CTS: id, arg = offset; payload = the bytes (flag
               // kFrameBulk: it may overtake other frames)
  kAck = 5,    // receiver matched and holds message id
  kNack = 6,   // receiver matched message id but sizes differ: arg = receiver's size, tag = its tag
  kClose = 7,  // the peer is closing its communicator; payload = why, if it failed (text)
  kDone = 8,   // the sender wrote arg bytes of message id into the receiver's memory itself
  kPing = 9,   // heartbeat: "I am alive and progressing"; no payload
  kPost = 10,  // eager message that wants no ACK (collectives, small sends): as DATA; the receiver answers
               // only a mismatch (NACK) and returns the bytes it held through CREDIT
  kCredit = 11,  // arg = bytes of POST frames (payload + header) the receiver no longer holds
};
// (FrameHeader::sig: DATA/RTS/POST: the collective call's signature, 0 for point-to-point;
// NACK: the receiver's signature.)

// A CLOSE frame may say why the peer gave up (its error message), up to this long.
constexpr size_t kMaxCloseReasonBytes = 2048;

inline FrameType TypeOf(const FrameHeader& h) { return static_cast<FrameType>(h.type); }
// A header of type t (flags as the type needs: kFrameBulk for BULK).
inline FrameHeader FrameOf(FrameType t) {
  FrameHeader h;
  h.type = static_cast<uint8_t>(t);
  h.flags = t == FrameType::kBulk ? kFrameBulk : 0;
  return h;
}

const char* FrameTypeName(FrameType t);

// Checks what can be checked without protocol state: the envelope (ValidateEnvelope), a known
// type with the flags it takes, and that payload_len fits the type (control frames carry none,
// RTS and CTS a descriptor, CLOSE a reason, data at most max_payload, DATA and POST as many bytes
// as they say).
Status ValidateFrame(const FrameHeader& h, uint64_t max_payload);

}  // namespace tutti
