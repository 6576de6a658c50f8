// Small helpers shared by the benchmarks.
#pragma once

#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace tutti::bench {

inline double NowSeconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// "64", "4K", "16M", "1G" -> bytes.
inline uint64_t ParseSize(const std::string& s) {
  const char last = s.empty() ? '0' : s.back();
  const uint64_t mult = last == 'K' ? 1 << 10 : last == 'M' ? 1 << 20 : last == 'G' ? uint64_t{1} << 30 : 1;
  return std::strtoull(s.c_str(), nullptr, 10) * mult;
}

// "2,4,8" -> {2, 4, 8}.
inline std::vector<int> ParseInts(const std::string& v) {
  std::vector<int> out;
  for (size_t at = 0; at < v.size();) {
    const size_t comma = v.find(',', at);
    out.push_back(std::atoi(v.substr(at, comma - at).c_str()));
    at = comma == std::string::npos ? v.size() : comma + 1;
  }
  return out;
}

inline double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace tutti::bench
