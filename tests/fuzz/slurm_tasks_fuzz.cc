// Fuzz target: Slurm tasks-per-node text (SLURM_NTASKS_PER_NODE, "4(x2),3"; core/launch/
// launch_env.h SlurmTasksOnNode). Input: a node index (4 bytes), then the text. Checked: a
// result is a task count of at least 1 that appears in the text; a single number is that number
// for every node; a list built from (tasks, repeat) pairs gives each node its own entry and
// nodes past the end the first; errors are kInvalidArgument.
#include <string>
#include <utility>
#include <vector>

#include "core/launch/launch_env.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tutti;  // NOLINT: a fuzz entry point
  fuzz::Input in(data, size);
  int node = static_cast<int>(in.U32());
  std::string text = in.Rest();
  Result<int> n = SlurmTasksOnNode(text, node);
  if (n.ok()) {
    FUZZ_CHECK(*n >= 1, "task count " + std::to_string(*n));
    FUZZ_CHECK(text.find(std::to_string(*n)) != std::string::npos, "a count not in the text");
    if (text.find_first_not_of("0123456789") == std::string::npos && text.size() < 10)
      FUZZ_CHECK(*n == std::stoi(text), "a single number changed");
  } else {
    FUZZ_CHECK(n.status().code() == Code::kInvalidArgument, n.status().ToString());
  }

  // Built from the same bytes: up to 8 (tasks, repeat) pairs.
  fuzz::Input b(data, size);
  std::vector<std::pair<int, int>> entries;
  std::string built;
  for (int i = 0; i < 8 && !b.empty(); ++i) {
    int tasks = 1 + static_cast<int>(b.U32() % 0x7fffffffu), count = 1 + b.U8() % 4;
    if (b.Bool()) tasks = 1 + tasks % 16;
    entries.emplace_back(tasks, count);
    built += (built.empty() ? "" : ",") + std::to_string(tasks);
    if (count > 1 || b.Bool()) built += "(x" + std::to_string(count) + ")";
  }
  if (entries.empty()) return 0;
  int index = 0;
  for (const auto& [tasks, count] : entries)
    for (int k = 0; k < count; ++k, ++index) {
      Result<int> got = SlurmTasksOnNode(built, index);
      FUZZ_CHECK(got.ok() && *got == tasks, "node " + std::to_string(index) + " of \"" + built + "\"");
    }
  for (int past : {index, index + 1, 1 << 30, -1}) {
    Result<int> got = SlurmTasksOnNode(built, past);
    FUZZ_CHECK(got.ok() && *got == entries[0].first, "a node past the end of \"" + built + "\"");
  }
  return 0;
}
