// The engine's eager messages that want no answer (POST: collectives' and small point-to-point
// sends): a send completes once it is out, without the receiver's answer; the receiver returns the
// eager budget in batches (CREDIT); a collective's mismatch still reaches the sender, whose
// communicator fails. Two engines in one process, over each transport.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <cstring>
#include <memory>
#include <vector>

#include "core/p2p/engine.h"
#include "transport/context.h"
#include "transport/conformance/pairs.h"

namespace tutti {
namespace {

using conformance::PairFactory;

constexpr int kTag = -7;     // a collective's tag
constexpr uint32_t kSig = 0x1234567;

// Names every connection, counting how often it was asked.
class CountingContext : public TransportContext {
 public:
  explicit CountingContext(int* asked) : asked_(asked) {}
  void Attach(Connection* c) override { conns_.push_back(c); }
  void Ready(std::vector<Connection*>* out) override {
    ++*asked_;
    out->insert(out->end(), conns_.begin(), conns_.end());
  }

 private:
  int* asked_;
  std::vector<Connection*> conns_;
};

class EnginePost : public ::testing::TestWithParam<PairFactory> {
 protected:
  // `asked` (optional): rank 0's transport context counts its Ready calls there.
  void Start(size_t eager_budget = 4 << 20, int* asked = nullptr) {
    conformance::Pair pair = GetParam().make();
    ASSERT_TRUE(pair.a && pair.b);
    keep_ = pair.keep;
    for (int r = 0; r < 2; ++r) {
      EngineOptions o;
      o.rank = r;
      o.size = 2;
      o.timeout_s = 5;
      o.eager_budget = eager_budget;
      (r == 0 ? a_ : b_) = std::make_unique<P2PEngine>(o);
    }
    if (asked != nullptr) a_->AddContext(pair.a->name(), std::make_unique<CountingContext>(asked));
    a_->SetConnection(1, std::move(pair.a));
    b_->SetConnection(0, std::move(pair.b));
  }
  // Drives only `e` (the other engine stays idle) until done() or `ms` have passed.
  static bool DriveUntil(P2PEngine& e, const std::function<bool()>& done, int ms = 2000) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (!done() && std::chrono::steady_clock::now() < end) e.Poll();
    return done();
  }
  bool DriveBothUntil(const std::function<bool()>& done) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!done() && std::chrono::steady_clock::now() < end) {
      a_->Poll();
      b_->Poll();
    }
    return done();
  }
  std::shared_ptr<Op> Send(const std::vector<char>& buf, int tag = kTag, uint32_t sig = kSig) {
    auto op = a_->PostSend(buf.data(), buf.size(), 1, tag, sig);
    EXPECT_TRUE(op.ok()) << op.status().ToString();
    return op.ok() ? *op : nullptr;
  }
  std::shared_ptr<void> keep_;
  std::unique_ptr<P2PEngine> a_, b_;
};

bool Done(const std::shared_ptr<Op>& op) { return op->done.load(); }

TEST_P(EnginePost, ACollectiveSendCompletesWithoutTheReceiver) {
  Start();
  std::vector<char> data(100);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7);
  auto send = Send(data);
  ASSERT_TRUE(DriveUntil(*a_, [&] { return Done(send); })) << "the send waited for the idle receiver";
  EXPECT_TRUE(send->status.ok()) << send->status.ToString();
  std::fill(data.begin(), data.end(), 0);  // the buffer is the caller's again
  std::vector<char> got(100, 1);
  auto recv = *b_->PostRecv(got.data(), got.size(), 0, kTag, kSig);
  ASSERT_TRUE(DriveBothUntil([&] { return Done(recv); }));
  ASSERT_TRUE(recv->status.ok()) << recv->status.ToString();
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], static_cast<char>(i * 7)) << i;
}

// Posting drives the connection posted to, not a pass over every connection (for tcp an
// epoll_wait per posted message): an eager send is out, and complete, when its post returns.
TEST_P(EnginePost, AnEagerSendIsOutAtItsPostWithoutAPassOverEveryConnection) {
  int asked = 0;
  Start(4 << 20, &asked);
  asked = 0;
  std::vector<char> data(48, 5), got(48);
  auto send = Send(data);
  ASSERT_NE(send, nullptr);
  EXPECT_EQ(asked, 0) << "the post asked the transport's context for connections with work";
  EXPECT_TRUE(Done(send)) << "the eager send was not complete when its post returned";
  auto recv = *b_->PostRecv(got.data(), got.size(), 0, kTag, kSig);
  ASSERT_TRUE(DriveBothUntil([&] { return Done(recv) && Done(send); }));
  ASSERT_TRUE(recv->status.ok()) << recv->status.ToString();
  EXPECT_EQ(got, data);
}

// Point-to-point sends of up to kBufferedSendMax go as POST too; larger ones wait for their receive.
TEST_P(EnginePost, APointToPointSendWaitsForItsReceiveOnlyAboveTheBufferedSize) {
  Start();
  std::vector<char> small(kBufferedSendMax, 2), data(kBufferedSendMax + 1, 3);
  std::vector<char> got_small(small.size()), got(data.size());
  auto buffered = Send(small, /*tag=*/4, /*sig=*/0);
  ASSERT_TRUE(DriveUntil(*a_, [&] { return Done(buffered); })) << "a small send waited for its receive";
  EXPECT_TRUE(buffered->status.ok()) << buffered->status.ToString();
  auto send = Send(data, /*tag=*/4, /*sig=*/0);
  EXPECT_FALSE(DriveUntil(*a_, [&] { return Done(send); }, 200)) << "a large send completed unmatched";
  auto recv_small = *b_->PostRecv(got_small.data(), got_small.size(), 0, 4);
  auto recv = *b_->PostRecv(got.data(), got.size(), 0, 4);
  ASSERT_TRUE(DriveBothUntil([&] { return Done(send) && Done(recv) && Done(recv_small); }));
  EXPECT_TRUE(send->status.ok() && recv->status.ok() && recv_small->status.ok());
  EXPECT_EQ(got_small, small);
  EXPECT_EQ(got, data);
}

// A buffered send whose receive refuses it (sizes differ) fails only that receive: the sender's
// communicator goes on, and the budget the message took comes back as credit.
TEST_P(EnginePost, ARefusedBufferedSendFailsOnlyItsReceiveAndItsBudgetComesBack) {
  const uint64_t c = 100 + kPostOverhead;
  Start(/*eager_budget=*/3 * c + 50);
  std::vector<char> data(100, 9), got(50);
  for (int i = 0; i < 12; ++i) {  // 4 budgets' worth
    auto send = Send(data, /*tag=*/4, /*sig=*/0);
    auto recv = *b_->PostRecv(got.data(), got.size(), 0, 4);
    ASSERT_TRUE(DriveBothUntil([&] { return Done(send) && Done(recv); })) << i;
    EXPECT_TRUE(send->status.ok()) << i << ": " << send->status.ToString();
    EXPECT_EQ(recv->status.code(), Code::kMismatch) << i << ": " << recv->status.ToString();
  }
  EXPECT_TRUE(a_->failure().ok()) << a_->failure().ToString();
  EXPECT_TRUE(b_->failure().ok()) << b_->failure().ToString();
  // The budget is whole again: three more go out without a receive.
  for (int i = 0; i < 3; ++i) {
    auto send = Send(data, /*tag=*/5, /*sig=*/0);
    EXPECT_TRUE(DriveBothUntil([&] { return Done(send); })) << i;
  }
}

TEST_P(EnginePost, TheBudgetBoundsWhatTheReceiverHoldsAndComesBackAsCredit) {
  // A 100-byte POST costs c = 100 + kPostOverhead; a budget of 7c + 50 lets 7 go. The 8th goes
  // as RTS and waits for its receive; once the receiver took the messages, the credit it
  // returned (in batches of a quarter of the budget, 2c each) makes room for 6 more.
  const uint64_t c = 100 + kPostOverhead;
  Start(/*eager_budget=*/7 * c + 50);
  std::vector<char> data(100, 5);
  std::vector<std::shared_ptr<Op>> sends;
  for (int i = 0; i < 8; ++i) sends.push_back(Send(data));
  EXPECT_TRUE(DriveUntil(*a_, [&] {
    for (int i = 0; i < 7; ++i)
      if (!Done(sends[i])) return false;
    return true;
  }));
  EXPECT_FALSE(DriveUntil(*a_, [&] { return Done(sends[7]); }, 200)) << "the receiver was made to hold over budget";
  std::vector<std::vector<char>> got(8, std::vector<char>(100));
  std::vector<std::shared_ptr<Op>> recvs;
  for (auto& g : got) recvs.push_back(*b_->PostRecv(g.data(), g.size(), 0, kTag, kSig));
  ASSERT_TRUE(DriveBothUntil([&] {
    for (int i = 0; i < 8; ++i)
      if (!Done(sends[i]) || !Done(recvs[i])) return false;
    return true;
  }));
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(recvs[i]->status.ok() && got[i] == data) << i;
  // Credit back: 7c taken, 6c returned, c still owed, so 6c + 50 free.
  std::vector<std::shared_ptr<Op>> more;
  for (int i = 0; i < 6; ++i) more.push_back(Send(data));
  EXPECT_TRUE(DriveUntil(*a_, [&] {
    for (auto& op : more)
      if (!Done(op)) return false;
    return true;
  })) << "the credit did not come back";
  auto over = Send(data);
  EXPECT_FALSE(DriveUntil(*a_, [&] { return Done(over); }, 200));
  EXPECT_TRUE(a_->failure().ok() && b_->failure().ok());
}

TEST_P(EnginePost, AMismatchReachesTheSenderAfterItsSendCompleted) {
  Start();
  std::vector<char> data(64, 1), got(64);
  auto send = Send(data);
  ASSERT_TRUE(DriveUntil(*a_, [&] { return Done(send); }));
  auto recv = *b_->PostRecv(got.data(), got.size(), 0, kTag, kSig + 2);  // another call's signature
  ASSERT_TRUE(DriveBothUntil([&] { return Done(recv) && !a_->failure().ok(); }));
  EXPECT_EQ(recv->status.code(), Code::kMismatch) << recv->status.ToString();
  const Status st = a_->failure();
  EXPECT_EQ(st.code(), Code::kMismatch) << st.ToString();
  EXPECT_NE(st.message().find("rank 0"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("rank 1"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("different collective"), std::string::npos) << st.ToString();
  // And nothing more goes out as if all were well.
  auto later = a_->PostSend(data.data(), data.size(), 1, kTag - 1, kSig);
  EXPECT_TRUE(!later.ok() || (DriveUntil(*a_, [&] { return Done(*later); }) && !(*later)->status.ok()));
}

INSTANTIATE_TEST_SUITE_P(AllTransports, EnginePost, ::testing::ValuesIn(conformance::AllTransports()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace tutti
