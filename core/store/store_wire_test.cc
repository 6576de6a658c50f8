// store_wire: frames round-trip, and every malformed header or body is a kProtocol error.
// StoreServerState: waiters are answered, expire and are dropped with their connection.
#include "core/store/store_wire.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "core/store/store_server_state.h"

namespace tutti {
namespace {

using namespace store_wire;  // NOLINT: test of this namespace

Result<Request> DecodeRequestFrame(const std::string& frame) {
  if (frame.size() < kHeaderBytes) return ProtocolError("short");
  TUTTI_ASSIGN_OR_RETURN(Header h, DecodeHeader(frame.data(), true));
  if (frame.size() != kHeaderBytes + h.body_len) return ProtocolError("length");
  return DecodeRequest(h, std::string_view(frame).substr(kHeaderBytes));
}

Result<Reply> DecodeReplyFrame(const std::string& frame) {
  if (frame.size() < kHeaderBytes) return ProtocolError("short");
  TUTTI_ASSIGN_OR_RETURN(Header h, DecodeHeader(frame.data(), false));
  if (frame.size() != kHeaderBytes + h.body_len) return ProtocolError("length");
  return DecodeReply(h, std::string_view(frame).substr(kHeaderBytes));
}

std::vector<Request> SampleRequests() {
  std::vector<Request> out;
  Request r;
  r.id = 42;
  r.type = Type::kHello, r.version = kVersion, r.secret = "abc";
  out.push_back(r);
  r = Request{};
  r.id = 43, r.type = Type::kSet, r.key = std::string("k\0y", 3), r.value = "value";
  out.push_back(r);
  r = Request{};
  r.id = 44, r.type = Type::kGet, r.key = "g", r.timeout_ms = 1500;
  out.push_back(r);
  r = Request{};
  r.id = 45, r.type = Type::kAdd, r.key = "n", r.delta = -9;
  out.push_back(r);
  r = Request{};
  r.id = 46, r.type = Type::kWait, r.keys = {"a", "", "c"}, r.timeout_ms = kNoTimeout;
  out.push_back(r);
  r = Request{};
  r.id = 47, r.type = Type::kCheck, r.keys = {"x"};
  out.push_back(r);
  r = Request{};
  r.id = 48, r.type = Type::kDelete, r.key = "d";
  out.push_back(r);
  return out;
}

TEST(StoreWire, RequestsRoundTrip) {
  for (const Request& r : SampleRequests()) {
    Result<Request> d = DecodeRequestFrame(EncodeRequest(r));
    ASSERT_TRUE(d.ok()) << TypeName(r.type) << ": " << d.status().ToString();
    EXPECT_EQ(d->type, r.type);
    EXPECT_EQ(d->id, r.id);
    EXPECT_EQ(d->version, r.version);
    EXPECT_EQ(d->secret, r.secret);
    EXPECT_EQ(d->key, r.key);
    EXPECT_EQ(d->value, r.value);
    EXPECT_EQ(d->delta, r.delta);
    EXPECT_EQ(d->timeout_ms, r.timeout_ms);
    EXPECT_EQ(d->keys, r.keys);
  }
}

TEST(StoreWire, RepliesRoundTrip) {
  Reply v;
  v.type = Type::kValue, v.id = 7, v.value = std::string("\0\1\2", 3);
  Result<Reply> d = DecodeReplyFrame(EncodeReply(v));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->value, v.value);
  EXPECT_EQ(d->id, 7u);
  Reply n;
  n.type = Type::kInt, n.number = INT64_MIN;
  EXPECT_EQ(DecodeReplyFrame(EncodeReply(n))->number, INT64_MIN);
  Reply b;
  b.type = Type::kBool, b.flag = true;
  EXPECT_TRUE(DecodeReplyFrame(EncodeReply(b))->flag);
  Result<Reply> e = DecodeReplyFrame(EncodeReply(ErrorReply(9, TimeoutError("late"))));
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->error.code(), Code::kTimeout);
  EXPECT_EQ(e->error.message(), "late");
  Reply h;
  h.type = Type::kHelloOk, h.version = kVersion;
  EXPECT_EQ(DecodeReplyFrame(EncodeReply(h))->version, kVersion);
}

TEST(StoreWire, HeaderChecks) {
  std::string frame = EncodeRequest(SampleRequests()[1]);
  EXPECT_TRUE(DecodeHeader(frame.data(), true).ok());
  EXPECT_EQ(DecodeHeader(frame.data(), false).status().code(), Code::kProtocol);  // not a reply
  std::string bad = frame;
  bad[1] ^= 1;  // magic
  EXPECT_EQ(DecodeHeader(bad.data(), true).status().code(), Code::kProtocol);
  bad = frame;
  bad[7] = 1;  // flags
  EXPECT_EQ(DecodeHeader(bad.data(), true).status().code(), Code::kProtocol);
  bad = frame;
  bad[4] = 99;  // type
  EXPECT_EQ(DecodeHeader(bad.data(), true).status().code(), Code::kProtocol);
  bad = frame;
  for (int i = 16; i < 20; ++i) bad[i] = '\xff';  // 4 GiB body
  Result<Header> h = DecodeHeader(bad.data(), true);
  EXPECT_EQ(h.status().code(), Code::kProtocol);
  EXPECT_NE(h.status().message().find("limit"), std::string::npos);
}

TEST(StoreWire, EveryTruncationAndExtensionIsRejected) {
  for (const Request& r : SampleRequests()) {
    std::string frame = EncodeRequest(r);
    Header h = *DecodeHeader(frame.data(), true);
    std::string body = frame.substr(kHeaderBytes);
    for (size_t n = 0; n < body.size(); ++n) {
      Header cut = h;
      cut.body_len = static_cast<uint32_t>(n);
      EXPECT_FALSE(DecodeRequest(cut, std::string_view(body).substr(0, n)).ok())
          << TypeName(r.type) << " cut to " << n;
    }
    EXPECT_FALSE(DecodeRequest(h, body + "x").ok()) << TypeName(r.type);
  }
}

TEST(StoreWire, FieldLimits) {
  Request r;
  r.type = Type::kSet;
  r.key = std::string(kStoreMaxKeyBytes + 1, 'k');
  EXPECT_FALSE(DecodeRequestFrame(EncodeRequest(r)).ok());
  r = Request{};
  r.type = Type::kCheck;
  r.keys.assign(kStoreMaxWaitKeys + 1, "k");
  EXPECT_FALSE(DecodeRequestFrame(EncodeRequest(r)).ok());
  r.keys.resize(kStoreMaxWaitKeys);
  EXPECT_TRUE(DecodeRequestFrame(EncodeRequest(r)).ok());
  Reply b;
  b.type = Type::kBool;
  std::string bool2 = EncodeReply(b);
  bool2.back() = 2;
  EXPECT_FALSE(DecodeReplyFrame(bool2).ok());
}

TEST(StoreWire, RandomBytesNeverCrash) {
  std::mt19937 rng(1234);
  int accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    Type types[] = {Type::kHello, Type::kSet,  Type::kGet,   Type::kAdd,  Type::kWait,
                    Type::kCheck, Type::kDelete, Type::kValue, Type::kError, Type::kBool};
    Header h;
    h.type = types[rng() % 10];
    std::string body(rng() % 64, '\0');
    for (char& c : body) c = static_cast<char>(rng() % 4 == 0 ? rng() : rng() % 3);
    h.body_len = static_cast<uint32_t>(body.size());
    bool is_reply = static_cast<uint16_t>(h.type) > 0x80;
    accepted += is_reply ? DecodeReply(h, body).ok() : DecodeRequest(h, body).ok();
  }
  EXPECT_GT(accepted, 0);  // some random bodies are valid, which is fine
}

TEST(StoreWire, ConstantTimeEquals) {
  EXPECT_TRUE(ConstantTimeEquals("", ""));
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "ab"));
  EXPECT_FALSE(ConstantTimeEquals("", "a"));
  EXPECT_FALSE(ConstantTimeEquals(std::string("a\0", 2), "a"));
}

TEST(StoreWire, TimeoutToMs) {
  EXPECT_EQ(TimeoutToMs(0), 0u);
  EXPECT_EQ(TimeoutToMs(0.0011), 2u);
  EXPECT_EQ(TimeoutToMs(1.5), 1500u);
  EXPECT_EQ(TimeoutToMs(std::numeric_limits<double>::infinity()), kNoTimeout);
}

// --- StoreServerState ---

Reply Decoded(const StoreServerState::Outgoing& o) { return *DecodeReplyFrame(o.frame); }

TEST(StoreServerState, WaitersAreAnsweredExpiredAndDropped) {
  StoreServerState s;
  auto now = StoreServerState::Clock::now();
  std::vector<StoreServerState::Outgoing> out;
  Request get;
  get.type = Type::kGet, get.id = 1, get.key = "k", get.timeout_ms = kNoTimeout;
  s.Handle(/*conn=*/10, get, now, &out);
  EXPECT_TRUE(out.empty());
  Request wait;
  wait.type = Type::kWait, wait.id = 2, wait.keys = {"k", "j", "k"}, wait.timeout_ms = 100;
  s.Handle(11, wait, now, &out);
  Request gone = get;
  gone.id = 3;
  s.Handle(12, gone, now, &out);
  EXPECT_EQ(s.num_waiters(), 3u);
  s.DropConnection(12);
  EXPECT_EQ(s.num_waiters(), 2u);

  Request set;
  set.type = Type::kSet, set.id = 5, set.key = "k", set.value = "v";
  s.Handle(13, set, now, &out);
  ASSERT_EQ(out.size(), 2u);  // the Set's Ok and the Get's value; the Wait still needs j
  EXPECT_EQ(out[0].conn, 13u);
  EXPECT_EQ(Decoded(out[0]).type, Type::kOk);
  EXPECT_EQ(out[1].conn, 10u);
  EXPECT_EQ(Decoded(out[1]).value, "v");
  EXPECT_EQ(Decoded(out[1]).id, 1u);
  EXPECT_EQ(s.num_waiters(), 1u);
  ASSERT_TRUE(s.NextDeadline().has_value());

  out.clear();
  s.ExpireWaiters(now + std::chrono::milliseconds(99), &out);
  EXPECT_TRUE(out.empty());
  s.ExpireWaiters(now + std::chrono::milliseconds(100), &out);
  ASSERT_EQ(out.size(), 1u);
  Reply timeout = Decoded(out[0]);
  EXPECT_EQ(out[0].conn, 11u);
  EXPECT_EQ(timeout.error.code(), Code::kTimeout);
  EXPECT_NE(timeout.error.message().find("\"j\""), std::string::npos);
  EXPECT_EQ(s.num_waiters(), 0u);
  EXPECT_FALSE(s.NextDeadline().has_value());
}

TEST(StoreServerState, ZeroTimeoutAnswersAtOnceAndAddWakes) {
  StoreServerState s;
  auto now = StoreServerState::Clock::now();
  std::vector<StoreServerState::Outgoing> out;
  Request get;
  get.type = Type::kGet, get.id = 1, get.key = "n", get.timeout_ms = 0;
  s.Handle(1, get, now, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Decoded(out[0]).error.code(), Code::kTimeout);
  out.clear();
  get.timeout_ms = 5000;
  s.Handle(1, get, now, &out);
  Request add;
  add.type = Type::kAdd, add.id = 2, add.key = "n", add.delta = 4;
  s.Handle(2, add, now, &out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(Decoded(out[0]).number, 4);
  EXPECT_EQ(Decoded(out[1]).value, "4");
  EXPECT_EQ(s.num_waiters(), 0u);
}

}  // namespace
}  // namespace tutti
