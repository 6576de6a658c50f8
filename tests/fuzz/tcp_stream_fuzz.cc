// Fuzz target: the TCP connection's frame reader (transport/tcp/tcp_connection.cc ReadSome),
// fed through a local socketpair (no network): the input's bytes are what the peer wrote, then
// the peer closes. A checking FrameSink records what is delivered and may discard payloads or
// refuse a frame. Checked against a plain reading of the same bytes: the reader delivers exactly
// the complete, valid frames in order with their payloads, then fails with kProtocol at the
// first invalid header, the sink's error if it refused one, or kRemoteError at the end.
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_util.h"
#include "transport/tcp/tcp_connection.h"

namespace tutti {
namespace {

struct Frame {
  FrameHeader h;
  std::string payload;  // empty when discarded
};

class CheckingSink : public FrameSink {
 public:
  CheckingSink(uint64_t max_payload, uint8_t discard_mask, int refuse_at)
      : max_payload_(max_payload), discard_mask_(discard_mask), refuse_at_(refuse_at) {}

  Result<void*> OnHeader(int peer, const FrameHeader& h) override {
    FUZZ_CHECK(!open_, "a header before the previous frame ended");
    FUZZ_CHECK(ValidateEnvelope(h, max_payload_).ok(), "unvalidated header reached the sink");
    int index = static_cast<int>(frames.size());
    if (index == refuse_at_) return ProtocolError("sink refuses frame " + std::to_string(index));
    open_ = true;
    header_ = h;
    keep_ = !((discard_mask_ >> (index % 8)) & 1);
    if (!keep_) return static_cast<void*>(nullptr);
    buffer_.assign(h.payload_len, '\0');
    return static_cast<void*>(buffer_.data());
  }
  Status OnFrame(int peer, const FrameHeader& h) override {
    FUZZ_CHECK(open_ && std::memcmp(&h, &header_, sizeof(h)) == 0, "frame end without its header");
    open_ = false;
    frames.push_back({h, keep_ ? buffer_ : std::string()});
    return OkStatus();
  }
  void OnSent(int peer, uint64_t cookie) override { FUZZ_CHECK(false, "nothing was sent"); }
  void OnAccessDone(int peer, uint64_t cookie, const Status& st) override {
    FUZZ_CHECK(false, "no one-sided access was posted");
  }

  std::vector<Frame> frames;

 private:
  uint64_t max_payload_;
  uint8_t discard_mask_;
  int refuse_at_;
  bool open_ = false;
  bool keep_ = false;
  FrameHeader header_;
  std::string buffer_;
};

}  // namespace
}  // namespace tutti

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tutti;  // NOLINT: a fuzz entry point
  fuzz::Input in(data, size);
  uint64_t max_payload = 1 + in.U16();
  uint8_t discard_mask = in.U8();
  uint8_t refuse = in.U8();
  int refuse_at = refuse < 16 ? refuse : -1;
  std::string stream = in.Rest();
  if (stream.size() > (64 << 10)) return 0;  // must fit the socket buffer

  // The plain reading: complete valid frames, then how the stream ends.
  std::vector<Frame> want;
  Code want_end = Code::kRemoteError;
  size_t pos = 0;
  while (stream.size() - pos >= kFrameHeaderSize) {
    Frame f;
    std::memcpy(&f.h, stream.data() + pos, kFrameHeaderSize);
    if (!ValidateEnvelope(f.h, max_payload).ok()) {
      want_end = Code::kProtocol;
      break;
    }
    if (static_cast<int>(want.size()) == refuse_at) {
      want_end = Code::kProtocol;
      break;
    }
    if (stream.size() - pos - kFrameHeaderSize < f.h.payload_len) break;
    if (!((discard_mask >> (want.size() % 8)) & 1))
      f.payload = stream.substr(pos + kFrameHeaderSize, f.h.payload_len);
    want.push_back(f);
    pos += kFrameHeaderSize + f.h.payload_len;
  }

  int fds[2];
  FUZZ_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0, "socketpair");
  int buf = 256 << 10;
  setsockopt(fds[1], SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
  FUZZ_CHECK(write(fds[1], stream.data(), stream.size()) == static_cast<ssize_t>(stream.size()), "write");
  close(fds[1]);
  TcpOptions opts;
  opts.max_payload = max_payload;
  Result<std::unique_ptr<TcpConnection>> conn = TcpConnection::Make(1, {fds[0]}, opts);
  FUZZ_CHECK(conn.ok(), conn.status().ToString());
  CheckingSink sink(max_payload, discard_mask, refuse_at);
  Status end;
  for (int i = 0; i < 1000 && end.ok(); ++i) {
    Result<bool> r = (*conn)->Progress(sink);
    if (!r.ok()) end = r.status();
    else FUZZ_CHECK(*r, "no progress on a closed stream");
  }
  FUZZ_CHECK(!end.ok() && end.code() == want_end, "stream ended with " + end.ToString());
  FUZZ_CHECK(sink.frames.size() == want.size(), "delivered " + std::to_string(sink.frames.size()) +
                                                     " frames, expected " + std::to_string(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    FUZZ_CHECK(std::memcmp(&sink.frames[i].h, &want[i].h, sizeof(FrameHeader)) == 0, "header differs");
    FUZZ_CHECK(sink.frames[i].payload == want[i].payload, "payload differs");
  }
  return 0;
}
