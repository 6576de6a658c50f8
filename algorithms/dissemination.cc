// Dissemination barrier: round i (d = 2^i, while d < n) sends a 0-element message to rank
// r + d and receives one from rank r - d. After round i every rank has heard, directly or
// through others, from the 2^(i+1) - 1 ranks before it, so after ceil(log2 n) rounds from all.
#include "algorithms/dissemination.h"

#include "algorithms/common.h"

namespace tutti::algo {

Schedule DisseminationBarrier(const CollArgs& a) {
  Schedule s;
  if (a.nranks == 1) return s;
  const int n = a.nranks, r = a.rank;
  Stream& st = s.streams.emplace_back();
  for (int d = 1; d < n; d *= 2) {
    Step& step = st.steps.emplace_back();
    step.sends.push_back(Transfer{Mod(r + d, n), Rg(Buf::kOutput, 0, 0)});
    step.recvs.push_back(Transfer{Mod(r - d, n), Rg(Buf::kOutput, 0, 0)});
  }
  return s;
}

}  // namespace tutti::algo
