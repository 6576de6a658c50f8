// The engine checks what a peer's frames say: the transports hand on any frame whose envelope is
// sound (magic, flags, length within their limit), and what its type and fields must be is the
// protocol's to check. A frame it refuses fails the receiver with kProtocol naming the sender.
// One engine over each transport; the other end is the bare connection, writing what it likes.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "core/p2p/engine.h"
#include "core/p2p/frame_types.h"
#include "transport/conformance/pairs.h"
#include "transport/test_sink.h"

namespace tutti {
namespace {

using conformance::PairFactory;

class EngineFrames : public ::testing::TestWithParam<PairFactory> {
 protected:
  // Sends `before` (if given: a payload-less frame) and `h` (with `payload`) from the bare end to
  // an engine of rank 1 and returns the engine's failure once it has one (OK if none came within
  // 5 s).
  Status Deliver(FrameHeader h, const std::string& payload = "", const FrameHeader* before = nullptr) {
    conformance::Pair pair = GetParam().make();
    EXPECT_TRUE(pair.a && pair.b);
    if (!pair.a || !pair.b) return InternalError("no pair");
    EngineOptions o;
    o.rank = 1;
    o.size = 2;
    o.timeout_s = 5;
    P2PEngine engine(o);
    engine.SetConnection(0, std::move(pair.b));
    if (before != nullptr) EXPECT_TRUE(pair.a->Enqueue(*before, nullptr, 0).ok());
    h.payload_len = payload.size();
    EXPECT_TRUE(pair.a->Enqueue(h, payload.data(), 0).ok());
    RecordingSink sink;
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (engine.failure().ok() && std::chrono::steady_clock::now() < end) {
      (void)pair.a->Progress(sink);
      engine.Poll();
    }
    Status st = engine.failure();
    pair.a->Close();
    return st;
  }
};

void ExpectRefused(const Status& st, const std::string& what) {
  EXPECT_EQ(st.code(), Code::kProtocol) << st.ToString();
  EXPECT_NE(st.message().find(what), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("from rank 0"), std::string::npos) << st.ToString();
}

TEST_P(EngineFrames, AnUnknownTypeIsRefused) {
  FrameHeader h;
  h.type = 99;
  ExpectRefused(Deliver(h), "unknown frame type 99");
}

TEST_P(EngineFrames, AControlFrameWithAPayloadIsRefused) {
  FrameHeader h = FrameOf(FrameType::kAck);
  h.id = 1;
  ExpectRefused(Deliver(h, "surprise"), "ACK frame with a payload");
}

TEST_P(EngineFrames, ABulkPieceWithoutTheBulkFlagIsRefused) {
  // (It could overtake other frames on a bulk lane only if flagged; unflagged it is malformed.)
  FrameHeader h = FrameOf(FrameType::kBulk);
  h.flags = 0;
  h.id = 1;
  ExpectRefused(Deliver(h, "piece"), "BULK frame with flags 0");
}

TEST_P(EngineFrames, ADataFrameLongerThanItSaysIsRefused) {
  FrameHeader h = FrameOf(FrameType::kData);
  h.tag = 3;
  h.id = 1;
  h.arg = 2;
  ExpectRefused(Deliver(h, "four"), "DATA frame length differs from its size");
}

TEST_P(EngineFrames, AWellFormedFrameIsTaken) {
  // The PING passes; the failure is the frame after it.
  const FrameHeader ping = FrameOf(FrameType::kPing);
  FrameHeader h;
  h.type = 42;
  ExpectRefused(Deliver(h, "", &ping), "unknown frame type 42");
}

INSTANTIATE_TEST_SUITE_P(AllTransports, EngineFrames, ::testing::ValuesIn(conformance::AllTransports()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace tutti
