#include "algorithms/common.h"

#include <algorithm>

namespace tutti::algo {

std::vector<Span> Pieces(uint64_t count, int nchannels, uint64_t chunk, uint64_t max_streams) {
  std::vector<Span> out;
  if (count == 0) return out;
  max_streams = std::clamp<uint64_t>(max_streams, 1, kMaxStreams);
  const uint64_t channels = std::min<uint64_t>(std::max(nchannels, 1), std::min<uint64_t>(count, max_streams));
  const uint64_t per_channel_cap = std::max<uint64_t>(1, max_streams / channels);
  for (uint64_t c = 0; c < channels; ++c) {
    const Span share = SplitEven(count, channels, c);
    uint64_t pieces = chunk == 0 ? 1 : share.len / chunk + (share.len % chunk != 0 ? 1 : 0);
    pieces = std::clamp<uint64_t>(pieces, 1, per_channel_cap);
    for (uint64_t p = 0; p < pieces; ++p) {
      const Span piece = SplitEven(share.len, pieces, p);
      if (piece.len > 0) out.push_back({share.off + piece.off, piece.len});
    }
  }
  return out;
}

void AddSend(Step& s, int peer, Region r) {
  if (r.count > 0) s.sends.push_back(Transfer{peer, r});
}

void AddRecv(Step& s, int peer, Region r) {
  if (r.count > 0) s.recvs.push_back(Transfer{peer, r});
}

void AddCopy(Step& s, Region dst, Region src) {
  if (dst.count == 0) return;
  if (dst.buf == src.buf && dst.offset == src.offset) return;
  s.locals.push_back(LocalOp{LocalOp::Kind::kCopy, dst, {src}});
}

void AddReduce(Step& s, Region dst, std::vector<Region> srcs) {
  if (dst.count == 0) return;
  s.locals.push_back(LocalOp{LocalOp::Kind::kReduce, dst, std::move(srcs)});
}

Schedule Finish(Schedule s) {
  Schedule out;
  uint64_t scratch = 0;
  auto note = [&](const Region& r) {
    if (r.buf == Buf::kScratch && r.count > 0) scratch = std::max(scratch, r.offset + r.count);
  };
  for (Stream& st : s.streams) {
    Stream kept;
    for (Step& step : st.steps) {
      if (step.recvs.empty() && step.sends.empty() && step.locals.empty()) continue;
      for (const Transfer& t : step.recvs) note(t.region);
      for (const Transfer& t : step.sends) note(t.region);
      for (const LocalOp& l : step.locals) {
        note(l.dst);
        for (const Region& r : l.srcs) note(r);
      }
      kept.steps.push_back(std::move(step));
    }
    out.streams.push_back(std::move(kept));  // kept even when empty: stream indices match across ranks
  }
  out.scratch_count = scratch;
  return out;
}

Schedule SingleRank(const CollArgs& a) {
  Schedule s;
  if (a.coll == Collective::kBarrier || a.count == 0) return s;
  Step step;
  AddCopy(step, Rg(Buf::kOutput, 0, a.count), Rg(Buf::kInput, 0, a.count));
  s.streams.push_back(Stream{{std::move(step)}});
  return Finish(std::move(s));
}

}  // namespace tutti::algo
