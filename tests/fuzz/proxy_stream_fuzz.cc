// Fuzz target: what the proxy on the other host sends (kernels/prims/proxy.h), fed to a proxy
// through a local socketpair: byte 0 picks the geometry (bit 0: LL, bits 1-2: 1 to 4 slots), the
// rest is the stream, after which the other side stops writing. The proxy has one inbound
// connection (9) and one outbound (7, nothing sent yet). Checked against a plain reading of the
// same bytes: the proxy publishes exactly the valid pieces before the first invalid message, with
// their bytes, then fails with kProtocol there; with no invalid message it publishes them all and
// the next poll reports the closed link (kRemoteError). Never a crash, never a piece beyond the
// slots the receiver has freed.
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/prims/proxy.h"
#include "tests/fuzz/fuzz_util.h"

namespace tutti::prims {
namespace {

struct Reference {
  std::vector<std::string> pieces;  // the valid pieces, in order
  std::vector<uint32_t> tags;       // their call tags
  bool invalid = false;             // an invalid message follows them
};

Reference Read(const uint8_t* p, size_t n, const FifoGeom& g) {
  Reference ref;
  size_t at = 0;
  while (n - at >= sizeof(ProxyHeader)) {
    ProxyHeader h;
    std::memcpy(&h, p + at, sizeof h);
    const bool bad = h.magic != kProxyMagic ||
                     (h.kind == kProxyCredit ? h.id != 7 || h.value != 0
                                             : h.kind != kProxyData || h.id != 9 || h.value > PieceCapacity(g) ||
                                                   h.seq != ref.pieces.size() || h.seq >= g.nslots);
    if (bad) {
      ref.invalid = true;
      return ref;
    }
    if (h.kind == kProxyCredit) {
      at += sizeof h;
      continue;
    }
    if (n - at - sizeof h < h.value) return ref;  // the rest never comes
    ref.pieces.emplace_back(reinterpret_cast<const char*>(p + at + sizeof h), h.value);
    ref.tags.push_back(h.tag);
    at += sizeof h + h.value;
  }
  return ref;
}

// The pieces the proxy published into the inbound connection.
std::vector<std::string> Published(ConnCtl* c, const FifoGeom& g, std::vector<uint32_t>* tags) {
  std::vector<std::string> out;
  const uint64_t tail = LoadAcquire(&c->tail);
  FUZZ_CHECK(tail <= g.nslots, "published beyond the free slots");
  for (uint64_t seq = 0; seq < tail; ++seq) {
    uint64_t bytes = SizeOf(SlotSizes(c)[seq % g.nslots]);
    uint32_t tag = TagOf(SlotSizes(c)[seq % g.nslots]);
    if (g.proto == Proto::kLL) {
      uint32_t ll_bytes = 0;
      FUZZ_CHECK(LLHeader(c, g, seq, &ll_bytes, &tag), "an LL piece without its size and tag words");
      bytes = ll_bytes;
    }
    tags->push_back(tag);
    FUZZ_CHECK(bytes <= PieceCapacity(g), "a published piece larger than a slot");
    if (g.proto == Proto::kLL) {
      FUZZ_CHECK(LLArrivedPart(Team{}, c, g, seq, static_cast<uint32_t>(bytes)), "LL words without their flag");
      std::vector<uint8_t> words(LLDataWords(static_cast<uint32_t>(bytes)) * 4 + 4);
      LLUnpackPart(Team{}, c, g, seq, static_cast<uint32_t>(bytes), words.data());
      out.emplace_back(reinterpret_cast<const char*>(words.data()), bytes);
    } else {
      out.emplace_back(reinterpret_cast<const char*>(Slot(c, g, seq)), bytes);
    }
  }
  return out;
}

}  // namespace
}  // namespace tutti::prims

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tutti;
  using namespace tutti::prims;
  if (size == 0) return 0;
  const FifoGeom g{static_cast<uint32_t>(((data[0] >> 1) & 3) + 1), 64, (data[0] & 1) ? Proto::kLL : Proto::kSimple};
  const uint8_t* stream = data + 1;
  const size_t n = std::min<size_t>(size - 1, 65535);  // one read takes it all
  int fds[2];
  FUZZ_CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0, "socketpair");
  for (size_t at = 0; at < n;) {
    const ssize_t w = write(fds[1], stream + at, n - at);
    FUZZ_CHECK(w > 0, "write to the socketpair");
    at += static_cast<size_t>(w);
  }
  shutdown(fds[1], SHUT_WR);
  const size_t conn_bytes = (ConnBytes(g) + 63) / 64 * 64;
  auto* in = static_cast<uint8_t*>(std::aligned_alloc(64, conn_bytes));
  auto* out = static_cast<uint8_t*>(std::aligned_alloc(64, conn_bytes));
  std::memset(in, 0, conn_bytes);
  std::memset(out, 0, conn_bytes);
  {
    FifoProxy proxy(fds[0], g, "fuzz");
    proxy.AddInbound(9, reinterpret_cast<ConnCtl*>(in));
    proxy.AddOutbound(7, reinterpret_cast<ConnCtl*>(out));
    const Reference ref = Read(stream, n, g);
    bool moved = false;
    const Status first = proxy.Poll(&moved);
    std::vector<uint32_t> got_tags;
    const std::vector<std::string> got = Published(reinterpret_cast<ConnCtl*>(in), g, &got_tags);
    FUZZ_CHECK(got == ref.pieces, "published pieces differ from the stream's valid pieces");
    FUZZ_CHECK(got_tags == ref.tags, "published pieces carry other call tags than the stream's");
    if (n == 0) {
      FUZZ_CHECK(first.code() == Code::kRemoteError, "an empty stream: " + first.ToString());
    } else if (ref.invalid) {
      FUZZ_CHECK(first.code() == Code::kProtocol, "an invalid message: " + first.ToString());
    } else {
      FUZZ_CHECK(first.ok(), "valid messages: " + first.ToString());
      const Status second = proxy.Poll(&moved);
      FUZZ_CHECK(second.code() == Code::kRemoteError, "after the end: " + second.ToString());
    }
    FUZZ_CHECK(LoadAcquire(&reinterpret_cast<ConnCtl*>(out)->head) == 0, "a credit for nothing sent was applied");
  }
  close(fds[1]);
  std::free(in);
  std::free(out);
  return 0;
}
