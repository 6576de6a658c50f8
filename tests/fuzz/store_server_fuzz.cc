// Fuzz target: the store server's side of the wire (core/store/store_wire.h requests) driving a
// StoreServerState the way the server loop does. The input is a script of records: raw request
// frames from one of four connections, valid requests built from fields, connection drops and
// clock ticks. Checked: decoded requests re-encode to the exact bytes; every frame the state
// sends decodes as a reply; replies agree with a model of the keys and of the waiting requests
// (a waiter is answered once, with the value set, or with a timeout once its deadline passed).
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "core/store/store.h"
#include "core/store/store_server_state.h"
#include "core/store/store_wire.h"
#include "tests/fuzz/fuzz_util.h"

namespace tutti {
namespace {

using store_wire::Reply;
using store_wire::Request;
using store_wire::Type;
using Clock = StoreServerState::Clock;

struct ModelWaiter {
  uint64_t conn, id;
  Type type;
  std::vector<std::string> keys;
  uint64_t timeout_ms;
  int64_t since_ms;
};

class Model {
 public:
  void Step(fuzz::Input& in);
  void Finish();

 private:
  void HandleFrame(uint64_t conn, fuzz::Input& in);
  void HandleRequest(uint64_t conn, const Request& req);
  void Built(uint64_t conn, fuzz::Input& in);
  // Matches the state's output after one call; req: the request just handled, if any.
  void Match(uint64_t conn, const std::vector<StoreServerState::Outgoing>& out, const Request* req);
  void CheckDirect(const Reply& r, const Request& req);
  void AnswerWaiter(uint64_t conn, const Reply& r);
  bool AllPresent(const std::vector<std::string>& keys) const {
    for (const auto& k : keys)
      if (!data_.count(k)) return false;
    return true;
  }
  Clock::time_point Now() const { return Clock::time_point(std::chrono::milliseconds(now_ms_)); }

  StoreServerState state_;
  std::map<std::string, std::string> data_;
  std::vector<ModelWaiter> waiters_;
  int64_t now_ms_ = 1000;
};

Reply DecodeReplyFrame(const std::string& f) {
  FUZZ_CHECK(f.size() >= store_wire::kHeaderBytes, "short reply frame");
  Result<store_wire::Header> h = store_wire::DecodeHeader(f.data(), false);
  FUZZ_CHECK(h.ok(), h.status().ToString());
  FUZZ_CHECK(f.size() == store_wire::kHeaderBytes + h->body_len, "reply length");
  Result<Reply> r =
      store_wire::DecodeReply(*h, std::string_view(f).substr(store_wire::kHeaderBytes));
  FUZZ_CHECK(r.ok(), r.status().ToString());
  FUZZ_CHECK(store_wire::EncodeReply(*r) == f, "reply does not re-encode to itself");
  return *r;
}

// The keys a Get or Wait waits for.
std::vector<std::string> WaitKeys(const Request& r) {
  return r.type == Type::kGet ? std::vector<std::string>{r.key} : r.keys;
}

bool Waits(const Request& r) { return r.type == Type::kGet || r.type == Type::kWait; }

void Model::CheckDirect(const Reply& r, const Request& req) {
  FUZZ_CHECK(r.id == req.id, "first reply is not the request's");
  switch (req.type) {
    case Type::kSet:
      FUZZ_CHECK(r.type == Type::kOk, "Set not answered Ok");
      data_[req.key] = req.value;
      return;
    case Type::kDelete:
      FUZZ_CHECK(r.type == Type::kOk, "Delete not answered Ok");
      data_.erase(req.key);
      return;
    case Type::kAdd:
      FUZZ_CHECK(r.type == Type::kInt || r.type == Type::kError, "Add answer");
      if (r.type == Type::kError) {
        FUZZ_CHECK(r.error.code() == Code::kInvalidArgument, r.error.ToString());
        return;
      }
      if (!data_.count(req.key)) FUZZ_CHECK(r.number == req.delta, "Add to a new key");
      data_[req.key] = std::to_string(r.number);
      return;
    case Type::kCheck:
      FUZZ_CHECK(r.type == Type::kBool && r.flag == AllPresent(req.keys), "Check answer");
      return;
    case Type::kGet:
      FUZZ_CHECK(r.type == Type::kValue && r.value == data_.at(req.key), "Get value");
      return;
    case Type::kWait:
      FUZZ_CHECK(r.type == Type::kOk, "Wait answer");
      return;
    default:
      FUZZ_CHECK(r.type == Type::kError && r.error.code() == Code::kProtocol, "Hello answer");
  }
}

// A reply that is not a request's own answers exactly one waiter: with its value or Ok once its
// keys are all there, or with a timeout once its deadline has passed.
void Model::AnswerWaiter(uint64_t conn, const Reply& r) {
  for (size_t i = 0; i < waiters_.size(); ++i) {
    const ModelWaiter& w = waiters_[i];
    if (w.conn != conn || w.id != r.id) continue;
    bool fits;
    if (r.type == Type::kError)
      fits = r.error.code() == Code::kTimeout && static_cast<uint64_t>(now_ms_ - w.since_ms) >= w.timeout_ms;
    else if (w.type == Type::kGet)
      fits = AllPresent(w.keys) && r.type == Type::kValue && r.value == data_.at(w.keys[0]);
    else
      fits = AllPresent(w.keys) && r.type == Type::kOk;
    if (!fits) continue;
    waiters_.erase(waiters_.begin() + static_cast<long>(i));
    return;
  }
  FUZZ_CHECK(false, "a reply that answers no waiting request");
}

void Model::Match(uint64_t conn, const std::vector<StoreServerState::Outgoing>& out,
                  const Request* req) {
  size_t i = 0;
  if (req != nullptr) {
    if (Waits(*req) && !AllPresent(WaitKeys(*req))) {
      waiters_.push_back({conn, req->id, req->type, WaitKeys(*req), req->timeout_ms, now_ms_});
    } else {
      FUZZ_CHECK(!out.empty() && out[0].conn == conn, "request got no reply");
      CheckDirect(DecodeReplyFrame(out[0].frame), *req);
      i = 1;
    }
  }
  for (; i < out.size(); ++i) {
    FUZZ_CHECK(out[i].conn < 4, "reply to an unknown connection");
    AnswerWaiter(out[i].conn, DecodeReplyFrame(out[i].frame));
  }
}

void Model::HandleRequest(uint64_t conn, const Request& req) {
  std::vector<StoreServerState::Outgoing> out;
  state_.Handle(conn, req, Now(), &out);
  Match(conn, out, &req);
  for (const auto& w : waiters_) FUZZ_CHECK(!AllPresent(w.keys), "a waiter's keys are all there");
  FUZZ_CHECK(state_.num_waiters() == waiters_.size(), "waiter count");
  FUZZ_CHECK(state_.num_keys() == data_.size(), "key count");
}

void Model::HandleFrame(uint64_t conn, fuzz::Input& in) {
  std::string hdr = in.Bytes(store_wire::kHeaderBytes);
  if (hdr.size() < store_wire::kHeaderBytes) return;
  Result<store_wire::Header> h = store_wire::DecodeHeader(hdr.data(), true);
  if (!h.ok()) {
    FUZZ_CHECK(h.status().code() == Code::kProtocol, h.status().ToString());
    return;
  }
  FUZZ_CHECK(h->body_len <= store_wire::MaxBodyBytes(h->type), "body over the type's limit");
  std::string body = in.Bytes(h->body_len);
  if (body.size() < h->body_len) return;
  Result<Request> req = store_wire::DecodeRequest(*h, body);
  if (!req.ok()) {
    FUZZ_CHECK(req.status().code() == Code::kProtocol, req.status().ToString());
    return;
  }
  FUZZ_CHECK(store_wire::EncodeRequest(*req) == hdr + body, "request does not re-encode to itself");
  FUZZ_CHECK(req->key.size() <= kStoreMaxKeyBytes && req->value.size() <= kStoreMaxValueBytes &&
                 req->keys.size() <= kStoreMaxWaitKeys && req->secret.size() <= store_wire::kMaxSecretBytes,
             "decoded field over its limit");
  HandleRequest(conn, *req);
}

// A valid request from a few fields (short keys from a small alphabet, so they collide).
void Model::Built(uint64_t conn, fuzz::Input& in) {
  Request r;
  r.type = static_cast<Type>(2 + in.U8() % 6);
  r.id = in.U8();
  r.key = in.Bytes(in.U8() % 3);
  uint8_t n = in.U8() % 4;
  for (uint8_t i = 0; i < n; ++i) r.keys.push_back(in.Bytes(in.U8() % 3));
  r.value = in.Bytes(in.U8() % 4);
  r.delta = static_cast<int8_t>(in.U8());
  uint8_t t = in.U8();
  r.timeout_ms = t == 255 ? store_wire::kNoTimeout : t * 100u;
  std::string f = store_wire::EncodeRequest(r);
  Result<store_wire::Header> h = store_wire::DecodeHeader(f.data(), true);
  FUZZ_CHECK(h.ok(), h.status().ToString());
  Result<Request> d = store_wire::DecodeRequest(*h, std::string_view(f).substr(store_wire::kHeaderBytes));
  FUZZ_CHECK(d.ok(), d.status().ToString());
  FUZZ_CHECK(store_wire::EncodeRequest(*d) == f, "built request does not round-trip");
  HandleRequest(conn, *d);
}

void Model::Step(fuzz::Input& in) {
  uint8_t op = in.U8();
  uint64_t conn = (op >> 4) & 3;
  switch (op & 15) {
    case 0: case 1: case 2: case 3:
      HandleFrame(conn, in);
      break;
    case 4: {
      state_.DropConnection(conn);
      std::vector<ModelWaiter> kept;
      for (auto& w : waiters_)
        if (w.conn != conn) kept.push_back(w);
      waiters_ = kept;
      FUZZ_CHECK(state_.num_waiters() == waiters_.size(), "waiters left after a drop");
      break;
    }
    case 5: {
      now_ms_ += in.U16();
      std::vector<StoreServerState::Outgoing> out;
      state_.ExpireWaiters(Now(), &out);
      Match(0, out, nullptr);
      for (const auto& w : waiters_)
        FUZZ_CHECK(w.timeout_ms > static_cast<uint64_t>(now_ms_ - w.since_ms), "a due waiter was not answered");
      FUZZ_CHECK(state_.num_waiters() == waiters_.size(), "waiter count after expiry");
      if (auto d = state_.NextDeadline()) FUZZ_CHECK(*d > Now(), "deadline in the past");
      break;
    }
    default:
      Built(conn, in);
  }
}

void Model::Finish() {
  for (uint64_t c = 0; c < 4; ++c) state_.DropConnection(c);
  FUZZ_CHECK(state_.num_waiters() == 0 && !state_.NextDeadline(), "waiters after every drop");
}

}  // namespace
}  // namespace tutti

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tutti::fuzz::Input in(data, size);
  tutti::Model m;
  while (!in.empty()) m.Step(in);
  m.Finish();
  return 0;
}
