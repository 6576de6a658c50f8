// Fuzz target: the shared-memory frame ring's reader (transport/shm/shm_ring.h), which treats
// the ring as untrusted: a peer may write anything into it, positions included. Two modes, by
// the first input byte:
//  - hostile: the ring's data, tail and salt come from the input, and before each read the input
//    says whether the "writer" stamps the frame at the reader's position (its header and payload
//    are whatever the data holds); the reader peeks and consumes frames until it stops. Checked:
//    an accepted frame passes ValidateEnvelope with the ring's limits, consuming it moves tail by
//    its padded size, and the reader stops exactly where no stamp is (payloads go into buffers of
//    exactly their length, so ASan sees any overrun).
//  - round trip: a writer and a reader share one ring; frames from the input are written and
//    read back interleaved. Checked: the reader gets exactly the frames written, in order, with
//    their payloads; a write fails only when the ring lacks room.
#include <cstring>
#include <deque>
#include <memory>
#include <string>

#include "tests/fuzz/fuzz_util.h"
#include "transport/shm/shm_ring.h"

namespace tutti {
namespace {

struct RingMemory {
  explicit RingMemory(size_t capacity)
      : bytes(ShmRing::BytesFor(capacity)),
        mem(static_cast<char*>(::operator new(bytes, std::align_val_t{64}))) {
    ShmRing::Format(mem, capacity);
  }
  ~RingMemory() { ::operator delete(mem, std::align_val_t{64}); }
  ShmRingHeader* header() { return reinterpret_cast<ShmRingHeader*>(mem); }
  char* data() { return mem + sizeof(ShmRingHeader); }
  size_t bytes;
  char* mem;
};

void Hostile(fuzz::Input& in, size_t capacity) {
  RingMemory m(capacity);
  uint64_t tail = in.U64() & ~uint64_t{7};  // frames start on 8 bytes
  if (in.Bool()) tail &= 0xffff;  // small positions are the common case
  std::string fill = in.Bytes(capacity);
  std::memcpy(m.data(), fill.data(), fill.size());
  m.header()->tail.store(tail);
  m.header()->salt = in.U64();
  if (in.Bool()) m.header()->capacity = in.U64();  // a corrupt header must fail Attach
  ShmRing r;
  Status st = r.Attach(m.mem, capacity);
  if (!st.ok()) {
    FUZZ_CHECK(m.header()->capacity != capacity, st.ToString());
    return;
  }
  uint64_t max_payload = in.Bool() ? r.max_payload() : in.U32();
  for (int i = 0; i < 256; ++i) {
    const uint64_t t = m.header()->tail.load();
    uint64_t* stamp = reinterpret_cast<uint64_t*>(m.data() + (t & (capacity - 1)));
    const bool stamped = in.Bool();
    if (stamped) *stamp = r.StampFor(t);
    FrameHeader h;
    Result<bool> got = r.Peek(&h, max_payload);
    if (!got.ok()) {
      FUZZ_CHECK(got.status().code() == Code::kProtocol, got.status().ToString());
      return;
    }
    if (!*got) {
      FUZZ_CHECK(*stamp != r.StampFor(t), "a stamped frame was not seen");
      return;
    }
    const uint64_t limit = std::min<uint64_t>(max_payload, r.max_payload());
    FUZZ_CHECK(ValidateEnvelope(h, limit).ok(), "accepted a header over the ring's limits");
    FUZZ_CHECK(ShmFrameBytes(h.payload_len) <= capacity / 2, "frame longer than half the ring");
    std::string payload(h.payload_len, '\0');
    r.Consume(h, in.Bool() ? nullptr : payload.data());
    FUZZ_CHECK(m.header()->tail.load() == t + ShmFrameBytes(h.payload_len), "tail moved wrongly");
  }
}

struct Sent {
  FrameHeader h;
  std::string payload;
};

void RoundTrip(fuzz::Input& in, size_t capacity) {
  RingMemory m(capacity);
  ShmRing writer, reader;
  FUZZ_CHECK(writer.Attach(m.mem, capacity).ok() && reader.Attach(m.mem, capacity).ok(), "attach");
  std::deque<Sent> queued;
  uint64_t written = 0;  // bytes of frames written (the writer's position)
  while (!in.empty()) {
    uint8_t op = in.U8();
    if (op & 1) {  // write one frame
      FrameHeader h;
      // (The ring carries any type and the bulk flag as they are: the protocol gives them meaning.)
      h.type = static_cast<uint8_t>(1 + (op >> 1) % 8);
      h.flags = (op >> 4) & kFrameBulk;
      h.tag = static_cast<int32_t>(in.U32());
      h.sig = in.U32();
      h.id = in.U64();
      const uint64_t limit = writer.max_payload();
      const bool empty = (op >> 5) & 1;
      size_t n = empty ? 0 : in.U16() % (limit + 1);
      std::string payload(n, static_cast<char>(in.U8()));
      h.payload_len = n;
      h.arg = in.U64();
      uint64_t used = written - m.header()->tail.load();
      bool room = used + ShmFrameBytes(n) <= capacity;
      bool wrote = writer.TryWrite(h, payload.data());
      FUZZ_CHECK(wrote == room, wrote ? "wrote into a full ring" : "refused a frame that fits");
      if (wrote) {
        queued.push_back({h, payload});
        written += ShmFrameBytes(n);
      }
    } else {  // read up to op/2 frames
      for (int k = 0; k < (op >> 1) % 8; ++k) {
        FrameHeader h;
        Result<bool> got = reader.Peek(&h, reader.max_payload());
        FUZZ_CHECK(got.ok(), got.status().ToString());
        FUZZ_CHECK(*got == !queued.empty(), "reader and writer disagree on what is queued");
        if (!*got) break;
        std::string payload(h.payload_len, '\0');
        reader.Consume(h, payload.data());
        const Sent& s = queued.front();
        FUZZ_CHECK(std::memcmp(&h, &s.h, sizeof(h)) == 0 && payload == s.payload, "frame changed in the ring");
        queued.pop_front();
      }
    }
  }
}

}  // namespace
}  // namespace tutti

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tutti::fuzz::Input in(data, size);
  uint8_t mode = in.U8();
  size_t capacity = size_t{1} << (7 + (mode >> 1) % 8);  // 128 B .. 16 KiB
  if (mode & 1) tutti::RoundTrip(in, capacity);
  else tutti::Hostile(in, capacity);
  return 0;
}
