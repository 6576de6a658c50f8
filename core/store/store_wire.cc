#include "core/store/store_wire.h"

#include <cmath>
#include <cstdio>
#include <cstring>

namespace tutti::store_wire {

namespace {

constexpr size_t kStrOverhead = 4;
constexpr size_t kMaxKeyField = kStrOverhead + kStoreMaxKeyBytes;

void PutU16(std::string* s, uint16_t v) {
  for (int i = 0; i < 2; ++i) s->push_back(static_cast<char>(v >> (8 * i)));
}
void PutU32(std::string* s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s->push_back(static_cast<char>(v >> (8 * i)));
}
void PutU64(std::string* s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s->push_back(static_cast<char>(v >> (8 * i)));
}
void PutStr(std::string* s, std::string_view v) {
  PutU32(s, static_cast<uint32_t>(v.size()));
  s->append(v.data(), v.size());
}

uint64_t LoadLe(const char* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}

// Reads fields from a body; every read checks the bytes that remain.
class Reader {
 public:
  explicit Reader(std::string_view b) : b_(b) {}
  bool U8(uint8_t* v) { return Fixed(v, 1); }
  bool U32(uint32_t* v) { return Fixed(v, 4); }
  bool U64(uint64_t* v) { return Fixed(v, 8); }
  // Fails if the length exceeds limit or the bytes left.
  bool Str(std::string* out, size_t limit) {
    uint32_t n = 0;
    if (!U32(&n) || n > limit || n > b_.size() - pos_) return false;
    out->assign(b_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  bool AtEnd() const { return pos_ == b_.size(); }

 private:
  template <typename T>
  bool Fixed(T* v, int n) {
    if (b_.size() - pos_ < static_cast<size_t>(n)) return false;
    *v = static_cast<T>(LoadLe(b_.data() + pos_, n));
    pos_ += n;
    return true;
  }
  std::string_view b_;
  size_t pos_ = 0;
};

std::string Frame(Type type, uint64_t id, const std::string& body) {
  std::string f;
  f.reserve(kHeaderBytes + body.size());
  PutU32(&f, kMagic);
  PutU16(&f, static_cast<uint16_t>(type));
  PutU16(&f, 0);
  PutU64(&f, id);
  PutU32(&f, static_cast<uint32_t>(body.size()));
  f += body;
  return f;
}

bool IsRequestType(uint16_t t) { return t >= 1 && t <= 7; }
bool IsReplyType(uint16_t t) { return t >= 0x81 && t <= 0x86; }

Status Malformed(Type t, const char* what) {
  return ProtocolError(std::string("malformed ") + TypeName(t) + " frame: " + what);
}

bool ReadKeys(Reader* r, std::vector<std::string>* keys) {
  uint32_t n = 0;
  if (!r->U32(&n) || n > kStoreMaxWaitKeys) return false;
  keys->resize(n);  // n <= 1024 was checked first
  for (std::string& k : *keys)
    if (!r->Str(&k, kStoreMaxKeyBytes)) return false;
  return true;
}

}  // namespace

const char* TypeName(Type t) {
  switch (t) {
    case Type::kHello: return "Hello";
    case Type::kSet: return "Set";
    case Type::kGet: return "Get";
    case Type::kAdd: return "Add";
    case Type::kWait: return "Wait";
    case Type::kCheck: return "Check";
    case Type::kDelete: return "Delete";
    case Type::kHelloOk: return "HelloOk";
    case Type::kOk: return "Ok";
    case Type::kValue: return "Value";
    case Type::kInt: return "Int";
    case Type::kBool: return "Bool";
    case Type::kError: return "Error";
  }
  return "unknown";
}

size_t MaxBodyBytes(Type t) {
  switch (t) {
    case Type::kHello: return 4 + kStrOverhead + kMaxSecretBytes;
    case Type::kSet: return kMaxKeyField + kStrOverhead + kStoreMaxValueBytes;
    case Type::kGet: return 8 + kMaxKeyField;
    case Type::kAdd: return kMaxKeyField + 8;
    case Type::kWait: return 8 + 4 + kStoreMaxWaitKeys * kMaxKeyField;
    case Type::kCheck: return 4 + kStoreMaxWaitKeys * kMaxKeyField;
    case Type::kDelete: return kMaxKeyField;
    case Type::kHelloOk: return 4;
    case Type::kOk: return 0;
    case Type::kValue: return kStrOverhead + kStoreMaxValueBytes;
    case Type::kInt: return 8;
    case Type::kBool: return 1;
    case Type::kError: return 4 + kStrOverhead + kMaxErrorMessageBytes;
  }
  return 0;
}

Result<Header> DecodeHeader(const char* p, bool expect_request) {
  uint32_t magic = static_cast<uint32_t>(LoadLe(p, 4));
  if (magic != kMagic) {
    char buf[80];
    std::snprintf(buf, sizeof(buf), "bad frame magic 0x%08x (not a tutti store peer?)", magic);
    return ProtocolError(buf);
  }
  uint16_t type = static_cast<uint16_t>(LoadLe(p + 4, 2));
  uint16_t flags = static_cast<uint16_t>(LoadLe(p + 6, 2));
  if (expect_request ? !IsRequestType(type) : !IsReplyType(type))
    return ProtocolError("unexpected frame type " + std::to_string(type) +
                         (expect_request ? " (expected a request)" : " (expected a reply)"));
  Header h;
  h.type = static_cast<Type>(type);
  if (flags != 0)
    return ProtocolError(std::string(TypeName(h.type)) + " frame has unknown flags " +
                         std::to_string(flags));
  h.id = LoadLe(p + 8, 8);
  h.body_len = static_cast<uint32_t>(LoadLe(p + 16, 4));
  if (h.body_len > MaxBodyBytes(h.type))
    return ProtocolError(std::string(TypeName(h.type)) + " frame claims a body of " +
                         std::to_string(h.body_len) + " bytes; the limit is " +
                         std::to_string(MaxBodyBytes(h.type)));
  return h;
}

std::string EncodeRequest(const Request& r) {
  std::string b;
  switch (r.type) {
    case Type::kHello: PutU32(&b, r.version); PutStr(&b, r.secret); break;
    case Type::kSet:
      b.reserve(2 * kStrOverhead + r.key.size() + r.value.size());
      PutStr(&b, r.key);
      PutStr(&b, r.value);
      break;
    case Type::kGet: PutU64(&b, r.timeout_ms); PutStr(&b, r.key); break;
    case Type::kAdd: PutStr(&b, r.key); PutU64(&b, static_cast<uint64_t>(r.delta)); break;
    case Type::kWait: PutU64(&b, r.timeout_ms); [[fallthrough]];
    case Type::kCheck:
      PutU32(&b, static_cast<uint32_t>(r.keys.size()));
      for (const std::string& k : r.keys) PutStr(&b, k);
      break;
    case Type::kDelete: PutStr(&b, r.key); break;
    default: break;  // not a request: an empty body the receiver rejects
  }
  return Frame(r.type, r.id, b);
}

std::string EncodeReply(const Reply& r) {
  std::string b;
  switch (r.type) {
    case Type::kHelloOk: PutU32(&b, r.version); break;
    case Type::kValue: PutStr(&b, r.value); break;
    case Type::kInt: PutU64(&b, static_cast<uint64_t>(r.number)); break;
    case Type::kBool: b.push_back(r.flag ? 1 : 0); break;
    case Type::kError: {
      PutU32(&b, static_cast<uint32_t>(r.error.code()));
      const std::string& m = r.error.message();
      PutStr(&b, std::string_view(m).substr(0, kMaxErrorMessageBytes));
      break;
    }
    default: break;  // kOk: empty
  }
  return Frame(r.type, r.id, b);
}

Result<Request> DecodeRequest(const Header& h, std::string_view body) {
  Request r;
  r.type = h.type;
  r.id = h.id;
  Reader rd(body);
  uint64_t delta = 0;
  bool ok = false;
  switch (h.type) {
    case Type::kHello: ok = rd.U32(&r.version) && rd.Str(&r.secret, kMaxSecretBytes); break;
    case Type::kSet:
      ok = rd.Str(&r.key, kStoreMaxKeyBytes) && rd.Str(&r.value, kStoreMaxValueBytes);
      break;
    case Type::kGet: ok = rd.U64(&r.timeout_ms) && rd.Str(&r.key, kStoreMaxKeyBytes); break;
    case Type::kAdd: ok = rd.Str(&r.key, kStoreMaxKeyBytes) && rd.U64(&delta); break;
    case Type::kWait: ok = rd.U64(&r.timeout_ms) && ReadKeys(&rd, &r.keys); break;
    case Type::kCheck: ok = ReadKeys(&rd, &r.keys); break;
    case Type::kDelete: ok = rd.Str(&r.key, kStoreMaxKeyBytes); break;
    default: return Malformed(h.type, "not a request");
  }
  if (!ok) return Malformed(h.type, "truncated body or a field over its limit");
  if (!rd.AtEnd()) return Malformed(h.type, "trailing bytes after the last field");
  r.delta = static_cast<int64_t>(delta);
  return r;
}

Result<Reply> DecodeReply(const Header& h, std::string_view body) {
  Reply r;
  r.type = h.type;
  r.id = h.id;
  Reader rd(body);
  bool ok = false;
  switch (h.type) {
    case Type::kHelloOk: ok = rd.U32(&r.version); break;
    case Type::kOk: ok = true; break;
    case Type::kValue: ok = rd.Str(&r.value, kStoreMaxValueBytes); break;
    case Type::kInt: {
      uint64_t v = 0;
      ok = rd.U64(&v);
      r.number = static_cast<int64_t>(v);
      break;
    }
    case Type::kBool: {
      uint8_t v = 0;
      ok = rd.U8(&v) && v <= 1;
      r.flag = v == 1;
      break;
    }
    case Type::kError: {
      uint32_t code = 0;
      std::string msg;
      ok = rd.U32(&code) && code > static_cast<uint32_t>(Code::kOk) &&
           code <= static_cast<uint32_t>(Code::kInternal) && rd.Str(&msg, kMaxErrorMessageBytes);
      if (ok) r.error = Status(static_cast<Code>(code), std::move(msg));
      break;
    }
    default: return Malformed(h.type, "not a reply");
  }
  if (!ok) return Malformed(h.type, "truncated body or a field out of range");
  if (!rd.AtEnd()) return Malformed(h.type, "trailing bytes after the last field");
  return r;
}

Reply ErrorReply(uint64_t id, const Status& error) {
  Reply r;
  r.type = Type::kError;
  r.id = id;
  r.error = error.ok() ? InternalError("error reply without an error") : error;
  return r;
}

uint64_t TimeoutToMs(double timeout_s) {
  // Beyond ~30 years a timeout is as good as none (and avoids overflowing clocks).
  if (std::isnan(timeout_s) || timeout_s > 1e9) return kNoTimeout;
  if (timeout_s <= 0) return 0;
  return static_cast<uint64_t>(std::ceil(timeout_s * 1000));
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  size_t n = a.size() > b.size() ? a.size() : b.size();
  volatile unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < n; ++i) {
    unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff = diff | (x ^ y);
  }
  return diff == 0;
}

}  // namespace tutti::store_wire
