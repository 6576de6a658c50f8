// Where the ranks of a communicator that share a host wait, and what a waiter makes of it.
//
// A rank that begins to wait notes the CPU it runs on in shared memory (the board: the slot
// area's per-rank lines). Spinning for a rank that runs on the waiter's own CPU only keeps that
// rank off it, and the scheduler does put two ranks on one CPU though the host has a CPU for
// each (beside a third busy process, a 2+1 split is balanced in its eyes): there the pair's
// calls took 50-60 us each, every one a spin out to its limit before a yield. So a waiter does
// not spin while a rank it waits for shares its CPU, and the higher rank of such a pair moves to
// an allowed CPU no rank of the board noted (MoveOffCpu), then spins again.
#pragma once

#include <chrono>
#include <functional>

namespace tutti {

class CpuBoard {
 public:
  virtual ~CpuBoard() = default;
  virtual int rank() const = 0;    // this rank's index on the board
  virtual int nranks() const = 0;  // the board's ranks (0..nranks-1)
  // Notes that this rank waits on `cpu` (implementations store only when it changed). A note
  // stays until the next: a rank that computes elsewhere now still counts where it last waited
  // (which costs a waiter a spin or a move at worst, never a result).
  virtual void NoteCpu(int cpu) = 0;
  // The lowest rank of [lo, hi) but this one whose last note is `cpu`, or -1.
  virtual int RankOnCpu(int lo, int hi, int cpu) const = 0;
};

// How long a waiter for ranks [lo, hi) of `board` spins before it yields: `spin_us`, but 0 while
// one of them runs on the calling thread's CPU -- unless the thread moved to a CPU no rank of the
// board noted: the higher rank of such a pair moves, when `spread`, at most every 100 ms per
// thread. Only where spin_us > 0 (where ranks outnumber the cores nobody spins anyway). Notes the
// thread's CPU on the board.
int SpinUsBeside(CpuBoard& board, int lo, int hi, int spin_us, bool spread);

// The same decision for a thread on `cpu`, whose last move was at *last_move (updated when it
// tries one), reading the time from `clock` (only when it considers a move) and moving by `move`
// (MoveOffCpu's contract): what SpinUsBeside runs, with what it reads from the system given.
using CpuClock = std::chrono::steady_clock::time_point (*)();
using CpuMover = std::function<int(int from, const std::function<bool(int)>& avoid)>;
int SpinUsOnCpu(CpuBoard& board, int cpu, int lo, int hi, int spin_us, bool spread, CpuClock clock,
                std::chrono::steady_clock::time_point* last_move, const CpuMover& move);

}  // namespace tutti
