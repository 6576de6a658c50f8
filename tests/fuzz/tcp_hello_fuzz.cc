// Fuzz target: the TCP connection handshake (transport/tcp/tcp_bootstrap.h TcpHello checks) as
// the accepting rank sees it. Input: the acceptor's setup (communicator id, rank, secret, socket
// count, peers and sockets already connected), then the bytes a connecting socket sends: the
// fixed hello and the secret it announces. Checked: an accepted hello names this rank, a peer
// still expected on a free socket index, the same socket count, communicator and secret; the
// hello a correct peer encodes (EncodeTcpHello) is accepted, and changing any of its fields
// gets it refused.
#include <cstddef>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_util.h"
#include "transport/tcp/tcp_bootstrap.h"

namespace tutti {
namespace {

constexpr size_t kHelloBytes = sizeof(TcpHello);

// Decodes and checks bytes as the acceptor does: fixed part, then the announced secret.
Status Accept(const std::string& bytes, const TcpHandshake& hs, const std::map<int, std::vector<int>>& got,
              TcpHello* h) {
  if (bytes.size() < kHelloBytes) return RemoteError("short hello");
  std::memcpy(h, bytes.data(), kHelloBytes);
  TUTTI_RETURN_IF_ERROR(CheckTcpHelloHeader(*h));
  if (bytes.size() - kHelloBytes < h->secret_len) return RemoteError("short secret");
  return CheckTcpHello(*h, bytes.substr(kHelloBytes, h->secret_len), hs, got);
}

}  // namespace
}  // namespace tutti

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tutti;  // NOLINT: a fuzz entry point
  fuzz::Input in(data, size);
  TcpHandshake hs;
  hs.comm_id = in.U8() == 0 ? in.U64() : 7;
  hs.my_rank = in.U8() % 8;
  hs.nsocks = 1 + in.U8() % 4;
  hs.secret = in.Bytes(in.U8() % 20);
  std::map<int, std::vector<int>> got;
  uint8_t peers = in.U8(), taken = in.U8();
  for (int p = 0; p < 8; ++p)
    if (((peers >> p) & 1) && p != hs.my_rank) got[p].assign(hs.nsocks, -1);
  for (auto& [p, fds] : got)
    if ((taken >> p) & 1) fds[taken % hs.nsocks] = 100 + p;
  std::string bytes = in.Rest();

  TcpHello h;
  Status st = Accept(bytes, hs, got, &h);
  if (st.ok()) {
    FUZZ_CHECK(h.to_rank == hs.my_rank && got.count(h.from_rank), "hello for another rank");
    FUZZ_CHECK(h.sock_index < static_cast<uint32_t>(hs.nsocks) && h.nsocks == static_cast<uint32_t>(hs.nsocks),
               "socket index or count");
    FUZZ_CHECK(got.at(h.from_rank)[h.sock_index] < 0, "a socket accepted twice");
    FUZZ_CHECK(h.comm_id == hs.comm_id && bytes.substr(kHelloBytes, h.secret_len) == hs.secret,
               "wrong communicator or secret accepted");
  } else {
    Code c = st.code();
    FUZZ_CHECK(c == Code::kProtocol || c == Code::kInvalidUsage || c == Code::kRemoteError, st.ToString());
  }

  // A correct peer's hello for every free socket is accepted; any changed field is refused.
  for (const auto& [p, fds] : got) {
    TcpHandshake peer = hs;
    peer.my_rank = p;
    for (int i = 0; i < hs.nsocks; ++i) {
      std::string good = EncodeTcpHello(peer, hs.my_rank, i);
      FUZZ_CHECK(good.size() == kHelloBytes + hs.secret.size(), "encoded size");
      Status gs = Accept(good, hs, got, &h);
      FUZZ_CHECK(gs.ok() == (fds[i] < 0), "a correct hello: " + gs.ToString());
      if (fds[i] >= 0 || bytes.empty()) continue;
      std::string bad = good;
      size_t at = bytes[0] % bad.size();
      bad[at] = static_cast<char>(bad[at] ^ (bytes.size() > 1 && bytes[1] ? bytes[1] : 1));
      // The reserved word is not checked; a changed rank or socket index may name another
      // free socket; every other byte matters.
      TcpHello b;
      std::memcpy(&b, bad.data(), kHelloBytes);
      auto in_field = [&](size_t off, size_t len) { return at >= off && at < off + len; };
      auto from = got.find(b.from_rank);
      bool other_free = from != got.end() && b.sock_index < static_cast<uint32_t>(hs.nsocks) &&
                        from->second[b.sock_index] < 0;
      bool may_pass = in_field(offsetof(TcpHello, reserved), 4) ||
                      ((in_field(offsetof(TcpHello, from_rank), 4) ||
                        in_field(offsetof(TcpHello, sock_index), 4)) && other_free);
      FUZZ_CHECK(Accept(bad, hs, got, &h).ok() == may_pass, "a changed hello: byte " + std::to_string(at));
    }
  }
  return 0;
}
