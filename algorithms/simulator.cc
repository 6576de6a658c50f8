#include "algorithms/simulator.h"

#include <algorithm>
#include <deque>
#include <unordered_map>
#include <unordered_set>

#include "algorithms/check.h"
#include "algorithms/registry.h"

namespace tutti::algo {

// ---- ExprPool ----

ExprPool::ExprPool(const std::vector<uint64_t>& inputs) {
  leaf_base_.push_back(0);
  for (uint64_t c : inputs) leaf_base_.push_back(leaf_base_.back() + c);
}

void ExprPool::LeafOf(ExprId id, int* rank, uint64_t* index) const {
  const uint64_t x = id - 1;
  const auto it = std::upper_bound(leaf_base_.begin(), leaf_base_.end(), x);
  *rank = static_cast<int>(it - leaf_base_.begin()) - 1;
  *index = x - leaf_base_[*rank];
}

ExprId ExprPool::Reduce(const ExprId* c, size_t k) {
  const uint64_t first = num_leaves() + 1;
  if (first + num_nodes() >= UINT32_MAX || children_.size() + k >= UINT32_MAX) return kUnwritten;
  children_.insert(children_.end(), c, c + k);
  start_.push_back(static_cast<uint32_t>(children_.size()));
  return static_cast<ExprId>(first + num_nodes() - 1);
}

bool ExprPool::Same(ExprId x, ExprId y) const {
  // Structural comparison; pairs already compared equal are remembered, so shared
  // subexpressions (a DAG) are compared once.
  std::unordered_set<uint64_t> equal;
  std::function<bool(ExprId, ExprId)> same = [&](ExprId a, ExprId b) {
    if (a == b) return true;
    if (a == kUnwritten || b == kUnwritten || IsLeaf(a) || IsLeaf(b)) return false;
    const uint64_t key = (static_cast<uint64_t>(a) << 32) | b;
    if (equal.count(key)) return true;
    size_t ka, kb;
    const ExprId* ca = Children(a, &ka);
    const ExprId* cb = Children(b, &kb);
    if (ka != kb) return false;
    for (size_t i = 0; i < ka; ++i)
      if (!same(ca[i], cb[i])) return false;
    equal.insert(key);
    return true;
  };
  return same(x, y);
}

const ExprId* ExprPool::Children(ExprId id, size_t* k) const {
  const uint64_t j = id - num_leaves() - 1;
  *k = start_[j + 1] - start_[j];
  return &children_[start_[j]];
}

std::string ExprPool::Format(ExprId id, bool show_index, size_t max_len) const {
  std::string s;
  std::function<void(ExprId)> put = [&](ExprId e) {
    if (s.size() > max_len) return;
    if (e == kUnwritten) {
      s += "?";
    } else if (IsLeaf(e)) {
      int r;
      uint64_t i;
      LeafOf(e, &r, &i);
      s += std::to_string(r) + (show_index ? ":" + std::to_string(i) : "");
    } else {
      size_t k;
      const ExprId* c = Children(e, &k);
      s += "(";
      for (size_t i = 0; i < k; ++i) {
        if (i) s += " ";
        put(c[i]);
      }
      s += ")";
    }
  };
  put(id);
  if (s.size() > max_len) s = s.substr(0, max_len) + "...";
  return s;
}

std::vector<std::vector<int64_t>> SumOutputs(const SimResult& res, const std::function<int64_t(int, uint64_t)>& input) {
  return EvaluateOutputs<int64_t>(
      res, input, [](int64_t x, int64_t y) { return static_cast<int64_t>(static_cast<uint64_t>(x) + static_cast<uint64_t>(y)); });
}

// ---- Simulation ----

namespace {

struct Pending {
  int rank, stream;
  size_t step;
  const Transfer* t;
};

class Sim {
 public:
  Sim(const CollArgs& a, const std::vector<Schedule>& s, Aliasing al)
      : a_(a), n_(a.nranks), sched_(s), words_((n_ + 63) / 64), in_place_(al == Aliasing::kInPlace) {}

  Result<SimResult> Run() {
    std::vector<uint64_t> inputs;
    for (int r = 0; r < n_; ++r) inputs.push_back(BufferCount(Args(r), Buf::kInput));
    uint64_t total = 0;
    for (uint64_t c : inputs) total += c;
    if (total >= (uint64_t{1} << 31)) return InvalidArgument("simulation too large: " + std::to_string(total) + " input elements");
    res_.pool = ExprPool(inputs);
    ranks_.resize(n_);
    for (int r = 0; r < n_; ++r) {
      RankState& rs = ranks_[r];
      const CollArgs ar = Args(r);
      const uint64_t nin = BufferCount(ar, Buf::kInput), nout = BufferCount(ar, Buf::kOutput);
      if (in_place_) {
        // One storage: the original input where the input lies, nothing elsewhere.
        rs.in_base = InPlaceBase(ar, Buf::kInput);
        rs.out_base = InPlaceBase(ar, Buf::kOutput);
        rs.mem.assign(std::max(rs.in_base + nin, rs.out_base + nout), kUnwritten);
        for (uint64_t i = 0; i < nin; ++i) rs.mem[rs.in_base + i] = res_.pool.Leaf(r, i);
      } else {
        rs.mem.assign(nout, kUnwritten);
      }
      rs.nout = nout;
      rs.scratch.assign(sched_[r].scratch_count, kUnwritten);
      rs.streams.resize(sched_[r].streams.size());
      for (auto& ss : rs.streams) {
        ss.known.assign(words_, 0);
        ss.known[r / 64] |= uint64_t{1} << (r % 64);
        ss.incoming = ss.known;
      }
    }
    for (int r = 0; r < n_; ++r)
      for (size_t s = 0; s < ranks_[r].streams.size(); ++s) TUTTI_RETURN_IF_ERROR(Post(r, static_cast<int>(s)));
    while (!ready_.empty()) {
      auto [r, s] = ready_.front();
      ready_.pop_front();
      TUTTI_RETURN_IF_ERROR(Complete(r, s));
    }
    TUTTI_RETURN_IF_ERROR(CheckFinished());
    for (int r = 0; r < n_; ++r) {
      std::vector<bool> heard(n_, false);
      heard[r] = true;
      for (const auto& ss : ranks_[r].streams)
        for (int q = 0; q < n_; ++q) heard[q] = heard[q] || ((ss.known[q / 64] >> (q % 64)) & 1);
      res_.heard_from.push_back(std::move(heard));
      const RankState& rs = ranks_[r];
      res_.output.emplace_back(rs.mem.begin() + rs.out_base, rs.mem.begin() + rs.out_base + rs.nout);
    }
    return std::move(res_);
  }

 private:
  struct StreamState {
    size_t step = 0;
    size_t pending = 0;
    bool done = false;
    std::vector<uint64_t> known, incoming;
  };
  struct RankState {
    // The output (distinct buffers), or the one storage of input and output (in place).
    std::vector<ExprId> mem, scratch;
    uint64_t in_base = 0, out_base = 0, nout = 0;
    std::vector<StreamState> streams;
  };
  struct Channel {
    std::deque<Pending> sends, recvs;
  };

  CollArgs Args(int r) const {
    CollArgs x = a_;
    x.rank = r;
    return x;
  }
  std::string Where(int r, int s, size_t k) const {
    return "rank " + std::to_string(r) + " stream " + std::to_string(s) + " step " + std::to_string(k);
  }
  uint64_t Key(int s, int src, int dst) const {
    return (static_cast<uint64_t>(s) * n_ + src) * n_ + dst;
  }

  // Reads region `g` of rank r into buf_; error if an element was never written, or (in place)
  // if an input element's storage no longer holds the original input.
  Status Read(int r, const Region& g, std::vector<ExprId>& buf, const std::string& what) {
    buf.resize(g.count);
    const RankState& rs = ranks_[r];
    if (g.buf == Buf::kInput) {
      for (uint64_t i = 0; i < g.count; ++i) {
        buf[i] = res_.pool.Leaf(r, g.offset + i);
        if (!in_place_) continue;
        const uint64_t at = rs.in_base + g.offset + i;
        if (rs.mem[at] != buf[i])
          return InternalError(what + " reads input[" + std::to_string(g.offset + i) + "] in place, but its storage (element " +
                               std::to_string(at) + " of the in-place buffer) was overwritten with " +
                               res_.pool.Format(rs.mem[at], true, 80));
      }
      return OkStatus();
    }
    const std::vector<ExprId>& src = g.buf == Buf::kOutput ? rs.mem : rs.scratch;
    const uint64_t off = g.offset + (g.buf == Buf::kOutput ? rs.out_base : 0);
    std::copy(src.begin() + off, src.begin() + off + g.count, buf.begin());
    for (uint64_t i = 0; i < g.count; ++i)
      if (buf[i] == kUnwritten)
        return InternalError(what + " reads " + BufName(g.buf) + "[" + std::to_string(g.offset + i) +
                             "], which nothing wrote");
    return OkStatus();
  }
  void Write(int r, const Region& g, const std::vector<ExprId>& buf) {
    RankState& rs = ranks_[r];
    std::vector<ExprId>& dst = g.buf == Buf::kOutput ? rs.mem : rs.scratch;
    std::copy(buf.begin(), buf.begin() + g.count, dst.begin() + g.offset + (g.buf == Buf::kOutput ? rs.out_base : 0));
  }

  Status Post(int r, int s) {
    StreamState& ss = ranks_[r].streams[s];
    const auto& steps = sched_[r].streams[s].steps;
    if (ss.step >= steps.size()) {
      ss.done = true;
      return OkStatus();
    }
    const Step& step = steps[ss.step];
    ss.pending = step.recvs.size() + step.sends.size();
    if (ss.pending == 0) ready_.push_back({r, s});
    for (const Transfer& t : step.recvs) {
      Channel& ch = channels_[Key(s, t.peer, r)];
      const Pending me{r, s, ss.step, &t};
      if (ch.sends.empty()) {
        ch.recvs.push_back(me);
        continue;
      }
      const Pending other = ch.sends.front();
      ch.sends.pop_front();
      TUTTI_RETURN_IF_ERROR(Match(other, me));
    }
    for (const Transfer& t : step.sends) {
      Channel& ch = channels_[Key(s, r, t.peer)];
      const Pending me{r, s, ss.step, &t};
      if (ch.recvs.empty()) {
        ch.sends.push_back(me);
        continue;
      }
      const Pending other = ch.recvs.front();
      ch.recvs.pop_front();
      TUTTI_RETURN_IF_ERROR(Match(me, other));
    }
    return OkStatus();
  }

  Status Match(const Pending& snd, const Pending& rcv) {
    if (snd.t->region.count != rcv.t->region.count)
      return MismatchError(Where(snd.rank, snd.stream, snd.step) + " sends " + std::to_string(snd.t->region.count) +
                           " elements to rank " + std::to_string(rcv.rank) + ", whose matching receive (" +
                           Where(rcv.rank, rcv.stream, rcv.step) + ") is for " + std::to_string(rcv.t->region.count));
    TUTTI_RETURN_IF_ERROR(Read(snd.rank, snd.t->region, tmp_, Where(snd.rank, snd.stream, snd.step) + ": send"));
    Write(rcv.rank, rcv.t->region, tmp_);
    ++res_.messages;
    res_.elements += rcv.t->region.count;
    StreamState& from = ranks_[snd.rank].streams[snd.stream];
    StreamState& to = ranks_[rcv.rank].streams[rcv.stream];
    for (int w = 0; w < words_; ++w) to.incoming[w] |= from.known[w];
    for (const Pending* p : {&snd, &rcv}) {
      StreamState& ss = ranks_[p->rank].streams[p->stream];
      if (--ss.pending == 0) ready_.push_back({p->rank, p->stream});
    }
    return OkStatus();
  }

  Status Complete(int r, int s) {
    StreamState& ss = ranks_[r].streams[s];
    const Step& step = sched_[r].streams[s].steps[ss.step];
    const std::string at = Where(r, s, ss.step);
    for (const LocalOp& l : step.locals) {
      if (l.kind == LocalOp::Kind::kCopy) {
        TUTTI_RETURN_IF_ERROR(Read(r, l.srcs[0], tmp_, at + ": copy"));
        Write(r, l.dst, tmp_);
        continue;
      }
      srcs_.resize(l.srcs.size());
      for (size_t i = 0; i < l.srcs.size(); ++i) TUTTI_RETURN_IF_ERROR(Read(r, l.srcs[i], srcs_[i], at + ": reduction"));
      tmp_.resize(l.dst.count);
      std::vector<ExprId> kids(l.srcs.size());
      for (uint64_t e = 0; e < l.dst.count; ++e) {
        for (size_t i = 0; i < kids.size(); ++i) kids[i] = srcs_[i][e];
        tmp_[e] = res_.pool.Reduce(kids.data(), kids.size());
        if (tmp_[e] == kUnwritten) return InvalidArgument("simulation too large: expression pool full");
      }
      Write(r, l.dst, tmp_);
    }
    ss.known = ss.incoming;
    ++ss.step;
    return Post(r, s);
  }

  Status CheckFinished() const {
    std::string stuck;
    int shown = 0, total = 0;
    for (int r = 0; r < n_; ++r)
      for (size_t s = 0; s < ranks_[r].streams.size(); ++s) {
        const StreamState& ss = ranks_[r].streams[s];
        if (ss.done) continue;
        ++total;
        if (shown++ >= 8) continue;
        std::string waits;
        for (const auto& [key, ch] : channels_)
          for (const auto* q : {&ch.sends, &ch.recvs})
            for (const Pending& p : *q)
              if (p.rank == r && p.stream == static_cast<int>(s))
                waits += std::string(waits.empty() ? "" : ", ") + (q == &ch.sends ? "send to " : "receive from ") +
                         "rank " + std::to_string(p.t->peer) + " (" + std::to_string(p.t->region.count) + " elements)";
        stuck += (stuck.empty() ? "" : "; ") + Where(r, static_cast<int>(s), ss.step) + " waits: " + waits;
      }
    if (total == 0) return OkStatus();
    return InternalError("deadlock in " + DescribeArgs(a_) + ": " + std::to_string(total) +
                         " streams cannot finish: " + stuck + (total > 8 ? "; ..." : ""));
  }

  const CollArgs a_;
  const int n_;
  const std::vector<Schedule>& sched_;
  const int words_;
  const bool in_place_;
  SimResult res_;
  std::vector<RankState> ranks_;
  std::unordered_map<uint64_t, Channel> channels_;
  std::deque<std::pair<int, int>> ready_;
  std::vector<ExprId> tmp_;
  std::vector<std::vector<ExprId>> srcs_;
};

}  // namespace

Result<SimResult> SimulateSchedules(const CollArgs& args, const std::vector<Schedule>& schedules, Aliasing aliasing) {
  CollArgs a = args;
  a.rank = 0;
  TUTTI_RETURN_IF_ERROR(ValidateArgs(a));
  if (static_cast<int>(schedules.size()) != a.nranks)
    return InvalidArgument(std::to_string(schedules.size()) + " schedules for " + std::to_string(a.nranks) + " ranks");
  for (int r = 0; r < a.nranks; ++r) {
    a.rank = r;
    TUTTI_RETURN_IF_ERROR(CheckSchedule(schedules[r], a).WithContext(DescribeArgs(a)));
    if (aliasing == Aliasing::kInPlace)
      TUTTI_RETURN_IF_ERROR(CheckSchedule(schedules[r], a, aliasing).WithContext(DescribeArgs(a) + ", in place"));
  }
  return Sim(args, schedules, aliasing).Run();
}

Result<SimResult> Simulate(const std::string& algorithm, const CollArgs& args, Aliasing aliasing) {
  CollArgs a = args;
  a.rank = 0;
  TUTTI_RETURN_IF_ERROR(ValidateArgs(a));
  std::vector<Schedule> schedules;
  for (int r = 0; r < args.nranks; ++r) {
    a.rank = r;
    TUTTI_ASSIGN_OR_RETURN(Schedule s, BuildSchedule(algorithm, a));
    schedules.push_back(std::move(s));
  }
  return SimulateSchedules(args, schedules, aliasing);
}

}  // namespace tutti::algo
