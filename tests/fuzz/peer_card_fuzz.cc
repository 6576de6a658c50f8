// Fuzz target: peer cards read from the store (core/comm_setup.h DecodePeerCard), which any
// rank of the job may have written. Checked: a decoded card has a world size that is a positive
// int, a pid that is a valid pid_t
// (it becomes one for liveness checks and process_vm_readv), a doorbell name of at most 200
// bytes without a newline and a host id of at most 1024 bytes, and encoding it decodes to the
// same card; a card built within those limits round-trips.
#include <sys/types.h>

#include <limits>
#include <string>

#include "core/comm_setup.h"
#include "tests/fuzz/fuzz_util.h"

namespace tutti {
namespace {

bool Same(const PeerCard& a, const PeerCard& b) {
  return a.world_size == b.world_size && a.pid == b.pid && a.doorbell == b.doorbell && a.host_id == b.host_id;
}

void CheckCard(const PeerCard& c) {
  FUZZ_CHECK(c.world_size > 0 && c.world_size <= std::numeric_limits<int>::max(),
             "world size " + std::to_string(c.world_size) + " is not a positive int");
  FUZZ_CHECK(c.pid > 0 && c.pid <= std::numeric_limits<pid_t>::max(),
             "pid " + std::to_string(c.pid) + " is not a pid_t");
  FUZZ_CHECK(c.doorbell.size() <= 200 && c.doorbell.find('\n') == std::string::npos, "doorbell");
  FUZZ_CHECK(c.host_id.size() <= 1024, "host id too long");
}

}  // namespace
}  // namespace tutti

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tutti;  // NOLINT: a fuzz entry point
  std::string text(reinterpret_cast<const char*>(data), size);
  Result<PeerCard> c = DecodePeerCard(text);
  if (c.ok()) {
    CheckCard(*c);
    Result<PeerCard> again = DecodePeerCard(EncodePeerCard(*c));
    FUZZ_CHECK(again.ok() && Same(*again, *c), "a decoded card does not round-trip");
  } else {
    FUZZ_CHECK(c.status().code() == Code::kProtocol, c.status().ToString());
  }

  // A card built from the input within the limits round-trips.
  fuzz::Input in(data, size);
  PeerCard b;
  b.world_size = 1 + static_cast<int64_t>(in.U32() % std::numeric_limits<int>::max());
  b.pid = 1 + static_cast<int64_t>(in.U32() % std::numeric_limits<pid_t>::max());
  b.doorbell = in.Field('\n').substr(0, 200);
  b.host_id = in.Rest().substr(0, 1024);
  Result<PeerCard> d = DecodePeerCard(EncodePeerCard(b));
  FUZZ_CHECK(d.ok() && Same(*d, b), "a built card does not round-trip");
  return 0;
}
