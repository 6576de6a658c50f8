#include "core/p2p/cpu_board.h"

#include <sched.h>

#include <chrono>

#include "core/base/cpu_move.h"

namespace tutti {

int SpinUsBeside(CpuBoard& board, int lo, int hi, int spin_us, bool spread) {
  if (spin_us <= 0) return spin_us;
  const int cpu = sched_getcpu();
  if (cpu < 0) return spin_us;
  board.NoteCpu(cpu);
  const int p = board.RankOnCpu(lo, hi, cpu);
  if (p < 0) return spin_us;
  if (p > board.rank() || !spread) return 0;
  thread_local std::chrono::steady_clock::time_point last_move;
  const auto now = std::chrono::steady_clock::now();
  if (last_move.time_since_epoch().count() != 0 && now - last_move < std::chrono::milliseconds(100)) return 0;
  last_move = now;
  const int to = MoveOffCpu(cpu, [&board](int c) { return board.RankOnCpu(0, board.nranks(), c) >= 0; });
  if (to < 0) return 0;
  board.NoteCpu(to);
  return spin_us;
}

}  // namespace tutti
