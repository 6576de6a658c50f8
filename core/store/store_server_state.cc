#include "core/store/store_server_state.h"

#include <algorithm>

#include "core/store/store.h"

namespace tutti {

using store_wire::Reply;
using store_wire::Request;
using store_wire::Type;

namespace {

// Timeouts beyond ~30 years are treated as none (and cannot overflow the clock).
constexpr uint64_t kMaxTimeoutMs = uint64_t{1} << 40;

std::string Frame(Type type, uint64_t id) {
  Reply r;
  r.type = type;
  r.id = id;
  return store_wire::EncodeReply(r);
}

void EraseId(std::vector<uint64_t>* ids, uint64_t id) {
  ids->erase(std::remove(ids->begin(), ids->end(), id), ids->end());
}

}  // namespace

void StoreServerState::Handle(uint64_t conn, const Request& req, Clock::time_point now,
                              std::vector<Outgoing>* out) {
  switch (req.type) {
    case Type::kSet:
      data_[req.key] = req.value;
      out->push_back({conn, Frame(Type::kOk, req.id)});
      KeyChanged(req.key, out);
      return;
    case Type::kAdd: {
      auto it = data_.find(req.key);
      Result<int64_t> sum = store_internal::AddToValue(
          req.key, it == data_.end() ? nullptr : &it->second, req.delta);
      if (!sum.ok()) {
        out->push_back({conn, store_wire::EncodeReply(store_wire::ErrorReply(req.id, sum.status()))});
        return;
      }
      data_[req.key] = std::to_string(*sum);
      Reply r;
      r.type = Type::kInt;
      r.id = req.id;
      r.number = *sum;
      out->push_back({conn, store_wire::EncodeReply(r)});
      KeyChanged(req.key, out);
      return;
    }
    case Type::kGet:
    case Type::kWait: {
      std::vector<std::string> keys = req.type == Type::kGet ? std::vector<std::string>{req.key}
                                                             : req.keys;
      std::sort(keys.begin(), keys.end());
      keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
      Waiter probe;
      probe.conn = conn;
      probe.request_id = req.id;
      probe.type = req.type;
      probe.keys = keys;
      if (AllPresent(keys)) {
        out->push_back({conn, CompletionFrame(probe)});
        return;
      }
      Register(conn, req, std::move(keys), now);
      ExpireWaiters(now, out);  // a zero timeout answers at once
      return;
    }
    case Type::kCheck: {
      Reply r;
      r.type = Type::kBool;
      r.id = req.id;
      r.flag = AllPresent(req.keys);
      out->push_back({conn, store_wire::EncodeReply(r)});
      return;
    }
    case Type::kDelete:
      data_.erase(req.key);
      out->push_back({conn, Frame(Type::kOk, req.id)});
      return;
    default:
      out->push_back({conn, store_wire::EncodeReply(store_wire::ErrorReply(
                                req.id, ProtocolError("unexpected request")))});
      return;
  }
}

void StoreServerState::Register(uint64_t conn, const Request& req, std::vector<std::string> keys,
                                Clock::time_point now) {
  uint64_t id = next_waiter_id_++;
  Waiter& w = waiters_[id];
  w.conn = conn;
  w.request_id = req.id;
  w.type = req.type;
  w.keys = std::move(keys);
  w.timeout_ms = req.timeout_ms;
  if (req.timeout_ms <= kMaxTimeoutMs) {
    w.deadline = now + std::chrono::milliseconds(req.timeout_ms);
    deadlines_.insert({*w.deadline, id});
  }
  for (const std::string& k : w.keys) by_key_[k].push_back(id);
  by_conn_[conn].push_back(id);
}

void StoreServerState::KeyChanged(const std::string& key, std::vector<Outgoing>* out) {
  auto it = by_key_.find(key);
  if (it == by_key_.end()) return;
  std::vector<uint64_t> ids = it->second;  // Remove() edits the index
  for (uint64_t id : ids) {
    auto w = waiters_.find(id);
    if (w == waiters_.end() || !AllPresent(w->second.keys)) continue;
    out->push_back({w->second.conn, CompletionFrame(w->second)});
    Remove(id);
  }
}

bool StoreServerState::AllPresent(const std::vector<std::string>& keys) const {
  for (const std::string& k : keys)
    if (data_.count(k) == 0) return false;
  return true;
}

std::string StoreServerState::CompletionFrame(const Waiter& w) const {
  if (w.type == Type::kWait) return Frame(Type::kOk, w.request_id);
  Reply r;
  r.type = Type::kValue;
  r.id = w.request_id;
  r.value = data_.at(w.keys[0]);
  return store_wire::EncodeReply(r);
}

void StoreServerState::Remove(uint64_t waiter_id) {
  auto it = waiters_.find(waiter_id);
  if (it == waiters_.end()) return;
  const Waiter& w = it->second;
  for (const std::string& k : w.keys) {
    auto bk = by_key_.find(k);
    if (bk == by_key_.end()) continue;
    EraseId(&bk->second, waiter_id);
    if (bk->second.empty()) by_key_.erase(bk);
  }
  auto bc = by_conn_.find(w.conn);
  if (bc != by_conn_.end()) {
    EraseId(&bc->second, waiter_id);
    if (bc->second.empty()) by_conn_.erase(bc);
  }
  if (w.deadline) deadlines_.erase({*w.deadline, waiter_id});
  waiters_.erase(it);
}

void StoreServerState::DropConnection(uint64_t conn) {
  auto it = by_conn_.find(conn);
  if (it == by_conn_.end()) return;
  std::vector<uint64_t> ids = it->second;
  for (uint64_t id : ids) Remove(id);
}

void StoreServerState::ExpireWaiters(Clock::time_point now, std::vector<Outgoing>* out) {
  while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
    uint64_t id = deadlines_.begin()->second;
    const Waiter& w = waiters_.at(id);
    std::vector<std::string> missing;
    for (const std::string& k : w.keys)
      if (data_.count(k) == 0) missing.push_back(k);
    Status st = TimeoutError(
        "timed out after " + store_internal::DescribeSeconds(w.timeout_ms / 1000.0) +
        " waiting for store key" + (missing.size() == 1 ? " " : "s ") +
        store_internal::DescribeKeys(missing));
    out->push_back({w.conn, store_wire::EncodeReply(store_wire::ErrorReply(w.request_id, st))});
    Remove(id);
  }
}

std::optional<StoreServerState::Clock::time_point> StoreServerState::NextDeadline() const {
  if (deadlines_.empty()) return std::nullopt;
  return deadlines_.begin()->first;
}

}  // namespace tutti
