#include "core/store/tcp_store_client.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "core/base/env.h"
#include "core/base/logging.h"
#include "core/base/socket_util.h"

namespace tutti {

using store_internal::DescribeKeys;
using store_internal::DescribeSeconds;
using store_wire::Reply;
using store_wire::Request;
using store_wire::Type;

namespace {
// A Get/Wait gives the server this long past the timeout to send its own kTimeout reply.
constexpr double kWaitGraceS = 0.25;
constexpr double kDefaultOpTimeoutS = 300;

// timeout_s from now: infinite (or NaN) never expires, negative has expired (where DeadlineIn
// would make it "never").
Clock::time_point DeadlineAfter(double timeout_s) {
  return DeadlineIn(timeout_s < 0 ? 0 : timeout_s);
}
}  // namespace

Result<std::unique_ptr<TcpStoreClient>> TcpStoreClient::Connect(const std::string& host,
                                                                int port,
                                                                const std::string& secret,
                                                                double timeout_s) {
  TUTTI_RETURN_IF_ERROR(store_internal::ValidateTimeout(timeout_s));
  if (port <= 0 || port > 65535)
    return InvalidArgument("store port " + std::to_string(port) + " is out of range");
  if (secret.size() > store_wire::kMaxSecretBytes)
    return InvalidArgument("store secret longer than " +
                           std::to_string(store_wire::kMaxSecretBytes) + " bytes");
  Result<double> env_timeout = EnvSeconds("TUTTI_STORE_TIMEOUT");
  double op_timeout = kDefaultOpTimeoutS;
  if (env_timeout.ok()) {
    op_timeout = *env_timeout;
  } else {
    TUTTI_LOG(Warn, Store, "%s; using %gs", env_timeout.status().message().c_str(), op_timeout);
  }
  std::string where = JoinHostPort(host, port);
  Clock::time_point d = DeadlineAfter(timeout_s);
  auto backoff = std::chrono::milliseconds(10);
  Status last;
  int attempts = 0;
  while (true) {
    ++attempts;
    Result<int> fd = ConnectTcpOnce(host, port, d);
    if (fd.ok()) {
      SetNoDelay(*fd).IgnoreError();
      std::unique_ptr<TcpStoreClient> client(new TcpStoreClient(where, *fd, op_timeout));
      Status st = client->Handshake(secret, d);
      if (st.ok()) {
        TUTTI_LOG(Info, Store, "connected to the store at %s", where.c_str());
        return client;
      }
      // Closed during the handshake (a server still starting up): try again; anything else
      // (refused, malformed reply, out of time) is final.
      if (st.code() != Code::kRemoteError) return st;
      last = st;
    } else {
      last = fd.status();
    }
    TUTTI_LOG(Trace, Store, "connecting to the store at %s: %s", where.c_str(),
              last.ToString().c_str());
    if (Clock::now() >= d)
      return TimeoutError("could not connect to the store at " + where + " within " +
                          DescribeSeconds(timeout_s) + " (" + std::to_string(attempts) +
                          " attempts; last: " + last.message() + ")");
    std::this_thread::sleep_for(std::min<Clock::duration>(backoff, d - Clock::now()));
    backoff = std::min(backoff * 2, std::chrono::milliseconds(500));
  }
}

TcpStoreClient::TcpStoreClient(std::string where, int fd, double op_timeout_s)
    : where_(std::move(where)), fd_(fd), op_timeout_s_(op_timeout_s) {}

TcpStoreClient::~TcpStoreClient() {
  if (fd_ >= 0) ::close(fd_);
}

void TcpStoreClient::set_op_timeout(double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  op_timeout_s_ = seconds;
}

TcpStoreClient::Deadline TcpStoreClient::WaitDeadline(double timeout_s) {
  return DeadlineAfter(timeout_s + kWaitGraceS);
}

Status TcpStoreClient::Handshake(const std::string& secret, Deadline d) {
  Request r;
  r.type = Type::kHello;
  r.version = store_wire::kVersion;
  r.secret = secret;
  std::lock_guard<std::mutex> lock(mu_);
  Result<Reply> reply = Call(std::move(r), Type::kHelloOk, d,
                             "no handshake reply from the store at " + where_);
  if (!reply.ok()) {
    const Status& st = reply.status();
    if (st.code() != Code::kInvalidUsage) return st;
    // The server's refusal ("secret mismatch", "protocol version mismatch").
    std::string msg = st.message();
    std::string prefix = "store at " + where_ + ": ";
    if (msg.compare(0, prefix.size(), prefix) == 0) msg.erase(0, prefix.size());
    return InvalidUsage("the store at " + where_ + " refused the connection: " + msg);
  }
  return OkStatus();
}

Status TcpStoreClient::Break(const Status& why) {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
    broken_ = RemoteError("the connection to the store at " + where_ + " is closed (" +
                          why.message() + ")");
  }
  return why;
}

Result<Reply> TcpStoreClient::Call(Request req, Type expect, Deadline d,
                                   const std::string& timeout_msg) {
  if (fd_ < 0) return broken_;
  req.id = next_id_++;
  std::string frame = store_wire::EncodeRequest(req);
  Status st = WriteFull(fd_, frame.data(), frame.size(), d);
  if (!st.ok()) {
    if (st.code() == Code::kRemoteError)
      return Break(RemoteError("store at " + where_ + " closed the connection"));
    if (st.code() == Code::kTimeout)
      return Break(TimeoutError("sending " + std::string(store_wire::TypeName(req.type)) +
                                " to the store at " + where_ + " timed out"));
    return Break(st.WithContext("sending to the store at " + where_));
  }
  TUTTI_ASSIGN_OR_RETURN(Reply reply, ReadReply(req.id, d, timeout_msg));
  if (reply.type == Type::kError)
    return Status(reply.error.code(), "store at " + where_ + ": " + reply.error.message());
  if (reply.type != expect)
    return Break(ProtocolError("store at " + where_ + " answered " +
                               store_wire::TypeName(req.type) + " with " +
                               store_wire::TypeName(reply.type)));
  return reply;
}

Result<Reply> TcpStoreClient::ReadReply(uint64_t id, Deadline d,
                                        const std::string& timeout_msg) {
  while (true) {
    // Until a reply starts, a timeout leaves the stream in sync (a late reply is skipped by id).
    Result<bool> readable = WaitReadable(fd_, d);
    if (!readable.ok()) return Break(readable.status());
    if (!*readable) return TimeoutError(timeout_msg);
    char hdr[store_wire::kHeaderBytes];
    Status st = ReadFull(fd_, hdr, sizeof(hdr), d);
    Result<store_wire::Header> h = st.ok() ? store_wire::DecodeHeader(hdr, /*expect_request=*/false)
                                           : Result<store_wire::Header>(st);
    std::string body;
    if (h.ok()) {
      body.resize(h->body_len);  // DecodeHeader bounded it by the type's limit
      st = ReadFull(fd_, body.data(), body.size(), d);
    }
    if (!st.ok()) {
      if (st.code() == Code::kRemoteError)
        return Break(RemoteError("store at " + where_ + " closed the connection"));
      if (st.code() == Code::kTimeout)
        return Break(TimeoutError("reply from the store at " + where_ + " stalled midway"));
      return Break(st.WithContext("receiving from the store at " + where_));
    }
    if (!h.ok())
      return Break(ProtocolError("bad reply from the store at " + where_ + ": " +
                                 h.status().message()));
    Result<Reply> reply = store_wire::DecodeReply(*h, body);
    if (!reply.ok())
      return Break(ProtocolError("bad reply from the store at " + where_ + ": " +
                                 reply.status().message()));
    if (reply->id == id) return reply;
    if (reply->id < id) {  // the late answer to a request that timed out here
      TUTTI_LOG(Trace, Store, "store %s: skipping the late reply to request %llu", where_.c_str(),
                static_cast<unsigned long long>(reply->id));
      continue;
    }
    return Break(ProtocolError("store at " + where_ + " answered request " +
                               std::to_string(reply->id) + ", expected " + std::to_string(id)));
  }
}

Status TcpStoreClient::Set(const std::string& key, const std::string& value) {
  TUTTI_RETURN_IF_ERROR(store_internal::ValidateValue(key, value));
  Request r;
  r.type = Type::kSet;
  r.key = key;
  r.value = value;
  std::lock_guard<std::mutex> lock(mu_);
  return Call(std::move(r), Type::kOk, DeadlineAfter(op_timeout_s_),
              "Set of store key " + DescribeKeys({key}) + " timed out (store at " + where_ + ")")
      .status();
}

Result<std::string> TcpStoreClient::Get(const std::string& key, double timeout_s) {
  TUTTI_RETURN_IF_ERROR(store_internal::ValidateKey(key));
  TUTTI_RETURN_IF_ERROR(store_internal::ValidateTimeout(timeout_s));
  Request r;
  r.type = Type::kGet;
  r.key = key;
  r.timeout_ms = store_wire::TimeoutToMs(timeout_s);
  std::lock_guard<std::mutex> lock(mu_);
  TUTTI_ASSIGN_OR_RETURN(
      Reply reply, Call(std::move(r), Type::kValue, WaitDeadline(timeout_s),
                        "timed out after " + DescribeSeconds(timeout_s) +
                            " waiting for store key " + DescribeKeys({key}) + " (store at " +
                            where_ + ")"));
  return std::move(reply.value);
}

Result<int64_t> TcpStoreClient::Add(const std::string& key, int64_t delta) {
  TUTTI_RETURN_IF_ERROR(store_internal::ValidateKey(key));
  Request r;
  r.type = Type::kAdd;
  r.key = key;
  r.delta = delta;
  std::lock_guard<std::mutex> lock(mu_);
  TUTTI_ASSIGN_OR_RETURN(
      Reply reply, Call(std::move(r), Type::kInt, DeadlineAfter(op_timeout_s_),
                        "Add to store key " + DescribeKeys({key}) + " timed out (store at " +
                            where_ + ")"));
  return reply.number;
}

Status TcpStoreClient::Wait(const std::vector<std::string>& keys, double timeout_s) {
  TUTTI_RETURN_IF_ERROR(store_internal::ValidateKeys(keys));
  TUTTI_RETURN_IF_ERROR(store_internal::ValidateTimeout(timeout_s));
  Request r;
  r.type = Type::kWait;
  r.keys = keys;
  r.timeout_ms = store_wire::TimeoutToMs(timeout_s);
  std::lock_guard<std::mutex> lock(mu_);
  return Call(std::move(r), Type::kOk, WaitDeadline(timeout_s),
              "timed out after " + DescribeSeconds(timeout_s) + " waiting for store keys " +
                  DescribeKeys(keys) + " (store at " + where_ + ")")
      .status();
}

Result<bool> TcpStoreClient::Check(const std::vector<std::string>& keys) {
  TUTTI_RETURN_IF_ERROR(store_internal::ValidateKeys(keys));
  Request r;
  r.type = Type::kCheck;
  r.keys = keys;
  std::lock_guard<std::mutex> lock(mu_);
  TUTTI_ASSIGN_OR_RETURN(
      Reply reply, Call(std::move(r), Type::kBool, DeadlineAfter(op_timeout_s_),
                        "Check of store keys timed out (store at " + where_ + ")"));
  return reply.flag;
}

Status TcpStoreClient::Delete(const std::string& key) {
  TUTTI_RETURN_IF_ERROR(store_internal::ValidateKey(key));
  Request r;
  r.type = Type::kDelete;
  r.key = key;
  std::lock_guard<std::mutex> lock(mu_);
  return Call(std::move(r), Type::kOk, DeadlineAfter(op_timeout_s_),
              "Delete of store key " + DescribeKeys({key}) + " timed out (store at " + where_ +
                  ")")
      .status();
}

}  // namespace tutti
