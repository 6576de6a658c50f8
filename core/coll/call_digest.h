// Digests of collective calls: what two ranks compare to find that they called different
// collectives (or the same with different counts, types, ops or roots) in the same position.
//
// A call's signature (CallSignature) names the call itself. A trail (ChainDigest) folds every
// call a rank issued before into one word, so a call whose messages nobody took (both ranks
// the root of a broadcast, say) still shows up: the next call that moves data between the two
// ranks carries different trails and fails on both instead of completing silently.
#pragma once

#include <cstdint>
#include <string_view>

namespace tutti {

// FNV-1a of a call's description; never 0 (0 marks point-to-point messages).
inline uint32_t CallSignature(std::string_view s) {
  uint32_t h = 2166136261u;
  for (unsigned char ch : s) h = (h ^ ch) * 16777619u;
  return h | 1u;
}

// The trail after a call described by `fields` (integers), from the trail `before`: each field
// folded in by a multiply-xorshift step, cheap, and every field moves every bit of the result.
// (A parameter pack rather than a list, so that the fields stay in registers.)
template <typename... Fields>
inline uint32_t ChainDigest(uint32_t before, Fields... fields) {
  uint64_t h = (uint64_t{before} << 32) ^ 0x9e3779b97f4a7c15ull;
  auto fold = [&h](uint64_t v) {
    h = (h ^ v) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
  };
  (fold(static_cast<uint64_t>(fields)), ...);
  return static_cast<uint32_t>(h ^ (h >> 32));
}

// The message trail of a communicator: every collective call joins it in issue order (one
// issuing thread at a time), and the messages of a call carry Next's result as their signature,
// which therefore differs between two ranks when this call or any earlier one differed.
class CallTrail {
 public:
  // The signature the messages of a call with signature `call_sig` carry (never 0); advances the
  // trail past the call.
  uint32_t Next(uint32_t call_sig) {
    trail_ = ChainDigest(trail_, call_sig);
    return trail_ | 1u;
  }

 private:
  uint32_t trail_ = 0;
};

}  // namespace tutti
