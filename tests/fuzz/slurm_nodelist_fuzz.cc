// Fuzz target: Slurm host lists (SLURM_NODELIST, core/launch/launch_env.h ExpandSlurmNodeList).
// Checked: an expanded list is non-empty, has at most 2^20 hosts, none of them empty or holding
// a bracket, comma or white space; a list without brackets expands to its comma-separated
// names; joining the hosts with commas expands to the same hosts; errors are kInvalidArgument.
// The output is also bounded in bytes (a short list must not expand into gigabytes). libFuzzer
// builds skip lists of more than a few thousand hosts (fuzz_util.h SlurmListTooCostly).
#include <string>
#include <vector>

#include "core/launch/launch_env.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tutti;  // NOLINT: a fuzz entry point
  std::string list(reinterpret_cast<const char*>(data), size);
  if (fuzz::SlurmListTooCostly(list)) return 0;
  Result<std::vector<std::string>> hosts = ExpandSlurmNodeList(list);
  if (!hosts.ok()) {
    FUZZ_CHECK(hosts.status().code() == Code::kInvalidArgument, hosts.status().ToString());
    return 0;
  }
  FUZZ_CHECK(!hosts->empty() && hosts->size() <= (size_t{1} << 20), "host count");
  size_t bytes = 0;
  std::string joined;
  for (const std::string& h : *hosts) {
    FUZZ_CHECK(!h.empty() && h.find_first_of("[], \t\n") == std::string::npos, "bad host \"" + h + "\"");
    bytes += h.size();
    if (hosts->size() <= 4096) joined += (joined.empty() ? "" : ",") + h;
  }
  FUZZ_CHECK(bytes <= (size_t{64} << 20), "expanded to " + std::to_string(bytes) + " bytes");
  if (list.find_first_of("[]") == std::string::npos)
    FUZZ_CHECK(*hosts == fuzz::Split(list, ','), "a plain list changed");
  if (hosts->size() > 4096) return 0;  // big lists: the round trip below only costs time
  Result<std::vector<std::string>> again = ExpandSlurmNodeList(joined);
  FUZZ_CHECK(again.ok() && *again == *hosts, "the expanded hosts do not expand to themselves");
  return 0;
}
