#include "core/p2p/cpu_board.h"

#include <sched.h>

#include <chrono>

#include "core/base/cpu_move.h"

namespace tutti {

int SpinUsOnCpu(CpuBoard& board, int cpu, int lo, int hi, int spin_us, bool spread, CpuClock clock,
                std::chrono::steady_clock::time_point* last_move, const CpuMover& move) {
  if (spin_us <= 0) return spin_us;
  if (cpu < 0) return spin_us;
  board.NoteCpu(cpu);
  const int p = board.RankOnCpu(lo, hi, cpu);
  if (p < 0) return spin_us;
  if (p > board.rank() || !spread) return 0;
  const auto now = clock();
  if (last_move->time_since_epoch().count() != 0 && now - *last_move < std::chrono::milliseconds(100)) return 0;
  *last_move = now;
  const int to = move(cpu, [&board](int c) { return board.RankOnCpu(0, board.nranks(), c) >= 0; });
  if (to < 0) return 0;
  board.NoteCpu(to);
  return spin_us;
}

int SpinUsBeside(CpuBoard& board, int lo, int hi, int spin_us, bool spread) {
  if (spin_us <= 0) return spin_us;
  thread_local std::chrono::steady_clock::time_point last_move;
  static const CpuMover mover = MoveOffCpu;  // made once
  return SpinUsOnCpu(board, sched_getcpu(), lo, hi, spin_us, spread,
                     [] { return std::chrono::steady_clock::now(); }, &last_move, mover);
}

}  // namespace tutti
