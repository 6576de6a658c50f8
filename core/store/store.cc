#include "core/store/store.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace tutti {
namespace store_internal {

namespace {
// Keys are printed in errors; keep a hostile 4 KiB key from flooding a log line.
std::string Quote(const std::string& key) {
  constexpr size_t kShown = 64;
  if (key.size() <= kShown) return "\"" + key + "\"";
  return "\"" + key.substr(0, kShown) + "...\"";
}
}  // namespace

Status ValidateKey(const std::string& key) {
  if (key.size() > kStoreMaxKeyBytes)
    return InvalidArgument("store key of " + std::to_string(key.size()) + " bytes exceeds the " +
                           std::to_string(kStoreMaxKeyBytes) + "-byte limit");
  return OkStatus();
}

Status ValidateValue(const std::string& key, const std::string& value) {
  TUTTI_RETURN_IF_ERROR(ValidateKey(key));
  if (value.size() > kStoreMaxValueBytes)
    return InvalidArgument("value of store key " + Quote(key) + " has " +
                           std::to_string(value.size()) + " bytes, more than the limit of " +
                           std::to_string(kStoreMaxValueBytes));
  return OkStatus();
}

Status ValidateKeys(const std::vector<std::string>& keys) {
  if (keys.size() > kStoreMaxWaitKeys)
    return InvalidArgument("waiting for " + std::to_string(keys.size()) +
                           " store keys at once; the limit is " +
                           std::to_string(kStoreMaxWaitKeys));
  for (const std::string& k : keys) TUTTI_RETURN_IF_ERROR(ValidateKey(k));
  return OkStatus();
}

Status ValidateTimeout(double timeout_s) {
  if (std::isnan(timeout_s) || timeout_s < 0)
    return InvalidArgument("store timeout must be >= 0 seconds, got " + std::to_string(timeout_s));
  return OkStatus();
}

Result<int64_t> AddToValue(const std::string& key, const std::string* stored, int64_t delta) {
  int64_t old = 0;
  if (stored != nullptr) {
    const char* begin = stored->data();
    const char* end = begin + stored->size();
    auto [ptr, ec] = std::from_chars(begin, end, old);
    if (stored->empty() || ec != std::errc() || ptr != end)
      return InvalidArgument("store key " + Quote(key) + " holds " +
                             Quote(stored->substr(0, 64)) + ", not an integer; cannot Add to it");
  }
  int64_t sum = 0;
  if (__builtin_add_overflow(old, delta, &sum))
    return InvalidArgument("Add(" + std::to_string(delta) + ") to store key " + Quote(key) +
                           " (" + std::to_string(old) + ") overflows int64");
  return sum;
}

std::string DescribeKeys(const std::vector<std::string>& keys) {
  constexpr size_t kShown = 4;
  std::string out;
  for (size_t i = 0; i < keys.size() && i < kShown; ++i) {
    if (i > 0) out += ", ";
    out += Quote(keys[i]);
  }
  if (keys.size() > kShown) out += " and " + std::to_string(keys.size() - kShown) + " more";
  return out;
}

std::string DescribeSeconds(double s) {
  if (std::isinf(s)) return "forever";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%gs", s);
  return buf;
}

}  // namespace store_internal
}  // namespace tutti
