// Fuzz target: the store client's side of the wire (core/store/store_wire.h replies). The input
// is a stream of reply frames as a client reads them (header, then the body it announces), with
// a few replies built from fields mixed in. Checked: a header that decodes never announces more
// than its type allows; a reply that decodes re-encodes to the exact bytes and keeps its fields
// within limits (an error reply never carries OK or an unknown code); built replies round-trip.
#include <string>

#include "core/store/store.h"
#include "core/store/store_wire.h"
#include "tests/fuzz/fuzz_util.h"

namespace tutti {
namespace {

using store_wire::Reply;
using store_wire::Type;

Result<Reply> DecodeFrame(const std::string& f) {
  TUTTI_ASSIGN_OR_RETURN(store_wire::Header h, store_wire::DecodeHeader(f.data(), false));
  FUZZ_CHECK(f.size() == store_wire::kHeaderBytes + h.body_len, "frame length");
  return store_wire::DecodeReply(h, std::string_view(f).substr(store_wire::kHeaderBytes));
}

void CheckReply(const Reply& r) {
  FUZZ_CHECK(r.value.size() <= kStoreMaxValueBytes, "value over its limit");
  if (r.type == Type::kError) {
    FUZZ_CHECK(!r.error.ok() && r.error.code() <= Code::kInternal, r.error.ToString());
    FUZZ_CHECK(r.error.message().size() <= store_wire::kMaxErrorMessageBytes, "long message");
  }
}

// A frame as the client reads it off the socket.
void ReadOne(fuzz::Input& in) {
  std::string hdr = in.Bytes(store_wire::kHeaderBytes);
  if (hdr.size() < store_wire::kHeaderBytes) return;
  Result<store_wire::Header> h = store_wire::DecodeHeader(hdr.data(), false);
  if (!h.ok()) {
    FUZZ_CHECK(h.status().code() == Code::kProtocol, h.status().ToString());
    // A request header is never taken for a reply, and vice versa.
    return;
  }
  FUZZ_CHECK(static_cast<uint16_t>(h->type) >= 0x81 && h->body_len <= store_wire::MaxBodyBytes(h->type),
             "reply header beyond its limits");
  FUZZ_CHECK(!store_wire::DecodeHeader(hdr.data(), true).ok(), "a reply header taken as a request");
  std::string body = in.Bytes(h->body_len);
  if (body.size() < h->body_len) return;
  Result<Reply> r = store_wire::DecodeReply(*h, body);
  if (!r.ok()) {
    FUZZ_CHECK(r.status().code() == Code::kProtocol, r.status().ToString());
    return;
  }
  FUZZ_CHECK(r->id == h->id && r->type == h->type, "header fields lost");
  CheckReply(*r);
  FUZZ_CHECK(store_wire::EncodeReply(*r) == hdr + body, "reply does not re-encode to itself");
}

// A reply built from fields must survive encoding and decoding.
void BuildOne(fuzz::Input& in) {
  Reply r;
  r.type = static_cast<Type>(0x81 + in.U8() % 6);
  r.id = in.U64();
  r.version = in.U32();
  r.number = static_cast<int64_t>(in.U64());
  r.flag = in.Bool();
  r.value = in.Bytes(in.U8());
  Code code = static_cast<Code>(in.U8() % 12);
  std::string msg = in.Bytes(in.U8());
  if (r.type == Type::kError) r = store_wire::ErrorReply(r.id, Status(code, msg));
  Result<Reply> d = DecodeFrame(store_wire::EncodeReply(r));
  FUZZ_CHECK(d.ok(), d.status().ToString());
  CheckReply(*d);
  FUZZ_CHECK(d->type == r.type && d->id == r.id, "type or id changed");
  switch (r.type) {
    case Type::kHelloOk: FUZZ_CHECK(d->version == r.version, "version changed"); break;
    case Type::kValue: FUZZ_CHECK(d->value == r.value, "value changed"); break;
    case Type::kInt: FUZZ_CHECK(d->number == r.number, "number changed"); break;
    case Type::kBool: FUZZ_CHECK(d->flag == r.flag, "flag changed"); break;
    case Type::kError:
      FUZZ_CHECK(d->error.code() == (code == Code::kOk ? Code::kInternal : code), "code changed");
      if (code != Code::kOk) FUZZ_CHECK(d->error.message() == msg, "message changed");
      break;
    default: break;
  }
}

}  // namespace
}  // namespace tutti

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tutti::fuzz::Input in(data, size);
  while (!in.empty()) {
    if (in.U8() == 0xB5) tutti::BuildOne(in);
    else tutti::ReadOne(in);
  }
  return 0;
}
