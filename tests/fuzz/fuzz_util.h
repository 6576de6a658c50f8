// Helpers shared by the fuzz targets of tests/fuzz: an invariant check that aborts (so both
// libFuzzer and the replay tests report it as a crash) and a reader that splits fuzz input
// into integers, byte strings and text fields without ever reading past its end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

// Aborts with the failed condition and a message when an invariant does not hold.
#define FUZZ_CHECK(cond, msg)                                                          \
  do {                                                                                 \
    if (!(cond)) {                                                                     \
      std::fprintf(stderr, "%s:%d: invariant failed: %s: %s\n", __FILE__, __LINE__,    \
                   #cond, std::string(msg).c_str());                                   \
      std::abort();                                                                    \
    }                                                                                  \
  } while (0)

namespace tutti::fuzz {

// Consumes fuzz input from the front; once it runs out every read returns zeros / "".
class Input {
 public:
  Input(const uint8_t* data, size_t size) : p_(data), n_(size) {}

  size_t left() const { return n_; }
  bool empty() const { return n_ == 0; }

  // A little-endian integer of `bytes` bytes (missing bytes are zero).
  uint64_t Uint(int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes && n_ > 0; ++i, ++p_, --n_) v |= uint64_t{*p_} << (8 * i);
    return v;
  }
  uint8_t U8() { return static_cast<uint8_t>(Uint(1)); }
  uint16_t U16() { return static_cast<uint16_t>(Uint(2)); }
  uint32_t U32() { return static_cast<uint32_t>(Uint(4)); }
  uint64_t U64() { return Uint(8); }
  bool Bool() { return (U8() & 1) != 0; }

  // Up to n bytes (fewer at the end of the input).
  std::string Bytes(size_t n) {
    if (n > n_) n = n_;
    std::string s(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    n_ -= n;
    return s;
  }
  // The bytes up to the next `sep` (consumed, not returned) or the end of the input.
  std::string Field(char sep) {
    size_t i = 0;
    while (i < n_ && p_[i] != static_cast<uint8_t>(sep)) ++i;
    std::string s(reinterpret_cast<const char*>(p_), i);
    size_t used = i < n_ ? i + 1 : i;
    p_ += used;
    n_ -= used;
    return s;
  }
  std::string Rest() { return Bytes(n_); }

 private:
  const uint8_t* p_;
  size_t n_;
};

// Every `sep`-separated field of the whole text (an empty text gives one empty field).
inline std::vector<std::string> Split(std::string_view text, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t at = text.find(sep, start);
    out.emplace_back(text.substr(start, at == std::string_view::npos ? std::string_view::npos
                                                                      : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

// An upper bound on the hosts a Slurm node list expands to, from its text alone: (top-level
// commas + 1) times, for each bracket group, (commas in it + 1) * 10^(its longest digit run).
// libFuzzer builds skip lists over a few thousand hosts: the parser accepts up to 2^20 hosts
// and 64 MiB, and inputs near those limits run at a few per second under ASan, so the fuzzer
// would spend its time there. The replay tests (and the crash_* seeds) still run them.
inline double SlurmListBound(std::string_view list) {
  double hosts = 1, product = 1, group = 1;
  int depth = 0, digits = 0, longest = 0;
  for (char c : list) {
    digits = c >= '0' && c <= '9' ? digits + 1 : 0;
    if (depth > 0 && digits > longest) longest = digits;
    if (c == '[') {
      ++depth;
      group = 1;
      longest = 0;
    } else if (c == ']' && depth > 0) {
      --depth;
      for (int i = 0; i < longest && i < 12; ++i) group *= 10;
      product *= group;
    } else if (c == ',') {
      if (depth > 0) group += 1;
      else hosts += 1;
    }
  }
  return hosts * product;
}

#ifdef TUTTI_LIBFUZZER
inline bool SlurmListTooCostly(std::string_view list) { return SlurmListBound(list) > 4096; }
#else
inline bool SlurmListTooCostly(std::string_view) { return false; }
#endif

}  // namespace tutti::fuzz
