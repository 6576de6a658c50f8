// A FrameSink for transport tests: gives each frame its own buffer and records what arrived.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "transport/transport.h"

namespace tutti {

class RecordingSink : public FrameSink {
 public:
  struct Got {
    FrameHeader h;
    std::string payload;
  };
  std::vector<Got> frames;
  std::vector<uint64_t> sent;
  std::vector<std::pair<uint64_t, Status>> accesses;  // OnAccessDone: cookie, outcome

  Result<void*> OnHeader(int peer, const FrameHeader& h) override {
    auto& buf = open_[Key(h)];
    buf.assign(h.payload_len, '\0');
    return static_cast<void*>(buf.data());
  }
  Status OnFrame(int peer, const FrameHeader& h) override {
    auto it = open_.find(Key(h));
    frames.push_back({h, it->second});
    open_.erase(it);
    return OkStatus();
  }
  void OnSent(int peer, uint64_t cookie) override { sent.push_back(cookie); }
  void OnAccessDone(int peer, uint64_t cookie, const Status& st) override { accesses.emplace_back(cookie, st); }

 private:
  static std::tuple<int, uint64_t, uint64_t> Key(const FrameHeader& h) {
    return {static_cast<int>(h.type), h.id, h.arg};
  }
  std::map<std::tuple<int, uint64_t, uint64_t>, std::string> open_;
};

// Frame types for transport tests. A transport carries the type without looking at it (the
// protocol's are in core/p2p/frame_types.h); of a header it heeds only the bulk flag.
struct TestFrame {
  enum : uint8_t { kData = 1, kBulk = 4, kAck = 5, kClose = 7, kPing = 9, kPost = 10 };
};

// A header of type t (TestFrame::kBulk: flagged kFrameBulk).
inline FrameHeader MakeHeader(uint8_t t, uint64_t id, uint64_t arg, uint64_t len, int tag = 0) {
  FrameHeader h;
  h.type = t;
  h.flags = t == TestFrame::kBulk ? kFrameBulk : 0;
  h.id = id;
  h.arg = arg;
  h.payload_len = len;
  h.tag = tag;
  return h;
}

}  // namespace tutti
