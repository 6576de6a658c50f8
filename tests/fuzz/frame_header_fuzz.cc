// Fuzz target: frame headers as the protocol checks them (core/p2p/frame_types.h ValidateFrame,
// which begins with the transports' transport/frame.h ValidateEnvelope). Input: a limit (8 bytes)
// and then 40-byte headers as they arrive off the wire. Checked: an accepted header passes the
// envelope check, has the magic, a known type with its flags and a payload its type allows (DATA, POST: exactly its size, within
// the limit; RTS/CTS: a descriptor; CLOSE: a short reason; ACK/NACK/DONE/PING/CREDIT: none);
// acceptance only grows with the limit; a header built by a sender with a fitting payload is always accepted.
#include <algorithm>
#include <cstring>
#include <string>

#include "tests/fuzz/fuzz_util.h"
#include "core/p2p/frame_types.h"
#include "transport/frame.h"

namespace tutti {
namespace {

void CheckAccepted(const FrameHeader& h, uint64_t max_payload) {
  FUZZ_CHECK(h.magic == kFrameMagic, "accepted a bad magic");
  FUZZ_CHECK(ValidateEnvelope(h, max_payload).ok(), "accepted what the envelope check refuses");
  FUZZ_CHECK(h.flags == (TypeOf(h) == FrameType::kBulk ? kFrameBulk : 0), "accepted wrong flags");
  uint64_t n = h.payload_len;
  switch (TypeOf(h)) {
    case FrameType::kData:
    case FrameType::kPost:
      FUZZ_CHECK(n == h.arg && n <= max_payload, "DATA/POST length");
      break;
    case FrameType::kBulk:
      FUZZ_CHECK(n <= max_payload, "BULK length");
      break;
    case FrameType::kRts:
    case FrameType::kCts:
      FUZZ_CHECK(n <= kMaxDescriptorBytes, "descriptor length");
      break;
    case FrameType::kClose:
      FUZZ_CHECK(n <= kMaxCloseReasonBytes, "CLOSE reason length");
      break;
    case FrameType::kAck:
    case FrameType::kNack:
    case FrameType::kDone:
    case FrameType::kPing:
    case FrameType::kCredit:
      FUZZ_CHECK(n == 0, "control frame with a payload");
      break;
    default:
      FUZZ_CHECK(false, "accepted an unknown type " + std::to_string(static_cast<int>(h.type)));
  }
  FUZZ_CHECK(std::string(FrameTypeName(TypeOf(h))) != "?", "accepted type has no name");
}

}  // namespace
}  // namespace tutti

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tutti;  // NOLINT: a fuzz entry point
  fuzz::Input in(data, size);
  uint64_t limit = in.U64();
  // Small limits are where the boundaries are; keep some of the huge ones too.
  if ((limit >> 63) == 0) limit &= 0xfffff;
  while (in.left() >= kFrameHeaderSize) {
    std::string raw = in.Bytes(kFrameHeaderSize);
    FrameHeader h;
    std::memcpy(&h, raw.data(), kFrameHeaderSize);
    Status st = ValidateFrame(h, limit);
    if (st.ok()) {
      CheckAccepted(h, limit);
      FUZZ_CHECK(ValidateFrame(h, limit == ~0ull ? limit : limit + 1).ok() && ValidateFrame(h, ~0ull).ok(),
                 "a larger limit refused what a smaller one accepted");
    } else {
      FUZZ_CHECK(st.code() == Code::kProtocol && !st.message().empty(), st.ToString());
    }
    // The sender's view: a known type with a payload that fits is accepted.
    auto fit = [](uint64_t v, uint64_t lim) { return lim == ~0ull ? v : v % (lim + 1); };
    FrameHeader s = FrameOf(static_cast<FrameType>(1 + h.type % 11));
    s.tag = h.tag;
    s.sig = h.sig;
    s.id = h.id;
    s.arg = h.arg;
    switch (TypeOf(s)) {
      case FrameType::kData:
      case FrameType::kPost: s.payload_len = s.arg = fit(h.payload_len, limit); break;
      case FrameType::kBulk: s.payload_len = fit(h.payload_len, limit); break;
      case FrameType::kRts:
      case FrameType::kCts: s.payload_len = fit(h.payload_len, std::min<uint64_t>(kMaxDescriptorBytes, limit)); break;
      case FrameType::kClose: s.payload_len = fit(h.payload_len, std::min<uint64_t>(kMaxCloseReasonBytes, limit)); break;
      default: s.payload_len = 0;
    }
    Status ss = ValidateFrame(s, limit);
    FUZZ_CHECK(ss.ok(), "a well-formed header was refused: " + ss.ToString());
  }
  return 0;
}
