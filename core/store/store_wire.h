// The TCP store's wire format: frame encoding and decoding, with every check a receiver needs.
//
// A frame is a 20-byte header followed by a body; all integers little-endian:
//   u32 magic "TSTR" | u16 type | u16 flags (0) | u64 request id | u32 body length
// A string in a body is u32 length + bytes. Bodies by type:
//   Hello   u32 version, str secret        HelloOk u32 version
//   Set     str key, str value             Ok      (empty)
//   Get     u64 timeout_ms, str key        Value   str value
//   Add     str key, i64 delta             Int     i64
//   Wait    u64 timeout_ms, u32 n, n*str   Bool    u8 (0 or 1)
//   Check   u32 n, n*str                   Error   u32 code (tutti::Code), str message
//   Delete  str key
// timeout_ms = UINT64_MAX means no timeout. A reply carries its request's id. The first frame of
// a connection must be Hello; its body layout never changes between versions.
//
// Decoding checks the header (magic, flags, type, body length against the type's limit) before
// anything is allocated, then the body field by field; any violation is Code::kProtocol.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/status.h"
#include "core/store/store.h"

namespace tutti::store_wire {

inline constexpr uint32_t kMagic = 0x52545354;  // bytes "TSTR"
inline constexpr uint32_t kVersion = 1;
inline constexpr size_t kHeaderBytes = 20;
inline constexpr size_t kMaxSecretBytes = 4096;
inline constexpr size_t kMaxErrorMessageBytes = 64 << 10;
inline constexpr uint64_t kNoTimeout = UINT64_MAX;

enum class Type : uint16_t {
  // Requests (client -> server).
  kHello = 1,
  kSet = 2,
  kGet = 3,
  kAdd = 4,
  kWait = 5,
  kCheck = 6,
  kDelete = 7,
  // Replies (server -> client).
  kHelloOk = 0x81,
  kOk = 0x82,
  kValue = 0x83,
  kInt = 0x84,
  kBool = 0x85,
  kError = 0x86,
};

const char* TypeName(Type t);
// The largest body a valid frame of this type can have.
size_t MaxBodyBytes(Type t);

struct Header {
  Type type = Type::kOk;
  uint64_t id = 0;
  uint32_t body_len = 0;
};

// Decodes and validates kHeaderBytes bytes at p. expect_request: only request types are valid
// (else only reply types).
Result<Header> DecodeHeader(const char* p, bool expect_request);

struct Request {
  Type type = Type::kSet;
  uint64_t id = 0;
  uint32_t version = 0;   // Hello
  std::string secret;     // Hello
  std::string key;        // Set, Get, Add, Delete
  std::string value;      // Set
  int64_t delta = 0;      // Add
  uint64_t timeout_ms = 0;  // Get, Wait
  std::vector<std::string> keys;  // Wait, Check
};

struct Reply {
  Type type = Type::kOk;
  uint64_t id = 0;
  uint32_t version = 0;  // HelloOk
  std::string value;     // Value
  int64_t number = 0;    // Int
  bool flag = false;     // Bool
  Status error;          // Error (never OK there)
};

// A whole frame (header + body). The fields must be within the limits (callers validate).
std::string EncodeRequest(const Request& r);
std::string EncodeReply(const Reply& r);  // an Error message is cut to kMaxErrorMessageBytes

// Decodes a body whose header h was already validated by DecodeHeader.
Result<Request> DecodeRequest(const Header& h, std::string_view body);
Result<Reply> DecodeReply(const Header& h, std::string_view body);

Reply ErrorReply(uint64_t id, const Status& error);

// Seconds <-> wire milliseconds (infinity and huge values <-> kNoTimeout).
uint64_t TimeoutToMs(double timeout_s);

// Constant-time comparison (for secrets): the time depends on the lengths only.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace tutti::store_wire
