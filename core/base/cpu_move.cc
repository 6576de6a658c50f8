#include "core/base/cpu_move.h"

#include <sched.h>

namespace tutti {

int AllowedCpus() {
  cpu_set_t cpus;
  if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0) return 1;
  const int n = CPU_COUNT(&cpus);
  return n > 0 ? n : 1;
}

int MoveOffCpu(int from, const std::function<bool(int)>& avoid) {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return -1;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (cpu == from || !CPU_ISSET(cpu, &allowed) || avoid(cpu)) continue;
    cpu_set_t only;
    CPU_ZERO(&only);
    CPU_SET(cpu, &only);
    // Allowed only there, the thread runs there when the call returns; then everything again.
    if (sched_setaffinity(0, sizeof(only), &only) != 0) return -1;
    if (sched_setaffinity(0, sizeof(allowed), &allowed) != 0) {
      // (Cannot happen for a set the thread had; if it does, the thread stays pinned to `cpu`,
      // one of its allowed CPUs, which is still correct.)
    }
    return cpu;
  }
  return -1;
}

}  // namespace tutti
