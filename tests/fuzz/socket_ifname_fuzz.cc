// Fuzz target: TUTTI_SOCKET_IFNAME matching (core/base/socket_util.h SelectInterfaces, the
// NCCL_SOCKET_IFNAME syntax: "eth,ib" prefixes, "^" excludes, "=" exact names). Input: up to 8
// interfaces (name, loopback flag), then the spec. Checked: the result keeps the interfaces'
// order and never invents one; an empty spec lists every interface, non-loopback ones first;
// each selected interface matches an item of the spec (by prefix, or exactly with "="), and
// "^spec" selects exactly the interfaces "spec" does not.
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_util.h"
#include "core/base/socket_util.h"

namespace tutti {
namespace {

std::vector<std::string> Names(const std::vector<Interface>& v) {
  std::vector<std::string> out;
  for (const auto& i : v) out.push_back(i.name + (i.loopback ? "/lo" : "") + "@" + i.address);
  return out;
}

// Whether `sub` is `all` with some entries left out (order kept).
bool Subsequence(const std::vector<std::string>& sub, const std::vector<std::string>& all) {
  size_t j = 0;
  for (const auto& s : sub) {
    while (j < all.size() && all[j] != s) ++j;
    if (j == all.size()) return false;
    ++j;
  }
  return true;
}

bool Matches(const std::string& name, const std::string& items, bool exact) {
  for (const std::string& item : fuzz::Split(items, ','))
    if (!item.empty() && (exact ? name == item : name.compare(0, item.size(), item) == 0)) return true;
  return false;
}

}  // namespace
}  // namespace tutti

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tutti;  // NOLINT: a fuzz entry point
  fuzz::Input in(data, size);
  std::vector<Interface> all;
  int n = in.U8() % 9;
  for (int k = 0; k < n; ++k) {
    uint8_t flags = in.U8();
    all.push_back({in.Bytes(flags % 6), "10.0.0." + std::to_string(k), (flags & 0x80) != 0});
  }
  std::string spec = in.Rest();
  std::vector<std::string> names = Names(all);
  std::vector<std::string> got = Names(SelectInterfaces(all, spec));
  FUZZ_CHECK(got.size() <= all.size(), "more interfaces than there are");

  if (spec.empty()) {
    std::vector<std::string> want;
    for (bool lo : {false, true})
      for (const auto& i : all)
        if (i.loopback == lo) want.push_back(Names({i})[0]);
    FUZZ_CHECK(got == want, "empty spec");
    return 0;
  }
  FUZZ_CHECK(Subsequence(got, names), "order changed or an interface invented");
  bool exclude = spec[0] == '^';
  std::string s = exclude ? spec.substr(1) : spec;
  bool exact = !s.empty() && s[0] == '=';
  if (exact) s = s.substr(1);
  for (const auto& i : all) {
    bool selected = false;
    for (const auto& g : got) selected = selected || g == Names({i})[0];
    FUZZ_CHECK(selected == (Matches(i.name, s, exact) != exclude), "interface " + i.name);
  }
  if (!exclude) {
    std::vector<std::string> inverse = Names(SelectInterfaces(all, "^" + spec));
    FUZZ_CHECK(inverse.size() + got.size() == all.size() && Subsequence(inverse, names), "^spec");
    for (const auto& x : inverse)
      for (const auto& g : got) FUZZ_CHECK(x != g, "^spec overlaps spec");
  }
  return 0;
}
