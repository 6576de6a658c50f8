#include "bench/perf/perf_runner.h"

#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "bench/perf/perf_data.h"

namespace tutti::perf {
namespace {

// Column layout (the nccl-tests columns). Header lines start with '#', so their first field is
// one character narrower.
constexpr const char* kLeftFmt = "%12s  %12s  %10s  %10s  %6s";
constexpr const char* kPlaceFmt = "  %10s  %8s  %8s  %7s";

std::string Fmt(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string Fmt(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  return buf;
}

std::string HeaderLine(const char* f[5], const char* g[4]) {
  std::string s = Fmt(kLeftFmt, f[0], f[1], f[2], f[3], f[4]);
  s += Fmt(kPlaceFmt, g[0], g[1], g[2], g[3]);
  s += Fmt(kPlaceFmt, g[0], g[1], g[2], g[3]);
  while (!s.empty() && s.back() == ' ') s.pop_back();
  s[0] = '#';
  return s;
}

void PrintHeader() {
  std::string left = Fmt(kLeftFmt, "", "", "", "", "");
  std::string place = Fmt(kPlaceFmt, "", "", "", "");
  auto centered = [](const std::string& label, size_t width) {
    size_t pad = width > label.size() ? (width - label.size()) / 2 : 0;
    std::string s(pad, ' ');
    s += label;
    s.resize(std::max(width, s.size()), ' ');
    return s;
  };
  std::string groups = left + centered("out-of-place", place.size()) + centered("in-place", place.size());
  while (!groups.empty() && groups.back() == ' ') groups.pop_back();
  groups[0] = '#';
  const char* f2[5] = {"size", "count", "type", "redop", "root"};
  const char* g2[4] = {"time", "algbw", "busbw", "#wrong"};
  const char* f3[5] = {"(B)", "(elements)", "", "", ""};
  const char* g3[4] = {"(us)", "(GB/s)", "(GB/s)", ""};
  printf("%s\n%s\n%s\n", groups.c_str(), HeaderLine(f2, g2).c_str(), HeaderLine(f3, g3).c_str());
}

// The exit status of a setting error that every rank detects alike and rank 0 reports: the
// others wait a moment, so that a launcher that stops all ranks when one fails (tuttirun) does
// not cut rank 0's message short.
int SettingError(int rank) {
  fflush(stderr);
  if (rank != 0) usleep(1000 * 1000);
  return 2;
}

struct Timed {
  bool run = false;  // false: "-" (no in-place form)
  double time_us = 0;
  double algbw = 0, busbw = 0;
  uint64_t wrong = 0;
};

std::string PlaceColumns(const Timed& t, bool check) {
  if (!t.run) return Fmt(kPlaceFmt, "-", "-", "-", "-");
  std::string wrong = check ? std::to_string(t.wrong) : "N/A";
  return Fmt(kPlaceFmt, Fmt("%.2f", t.time_us).c_str(), Fmt("%.2f", t.algbw).c_str(), Fmt("%.2f", t.busbw).c_str(),
             wrong.c_str());
}

struct Buffer {
  char* p = nullptr;
  explicit Buffer(size_t bytes) {
    size_t rounded = (std::max<size_t>(bytes, 1) + 4095) / 4096 * 4096;
    p = static_cast<char*>(aligned_alloc(4096, rounded));
    if (p) memset(p, 0, rounded);  // touch every page now, not in the first timed call
  }
  ~Buffer() { free(p); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
};

class Runner {
 public:
  Runner(PerfBackend& b, const PerfOptions& o, const char* prog)
      : b_(b), o_(o), prog_(prog), n_(b.size()), rank_(b.rank()) {}

  int Run();

 private:
  Status Launch(const void* send, void* recv, const Plan& p, DataType type, const Reduction& red);
  Status TimeOne(const Pattern& pat, const Plan& plan, DataType type, RedOp op, size_t size, bool in_place,
                 Timed* out);
  Status Preamble();
  void PrintRow(const Plan& plan, DataType type, RedOp op, const Timed t[2]);
  void Error(const Status& st) {
    fprintf(stderr, "%s: rank %d: %s\n", prog_, rank_, st.ToString().c_str());
    fflush(stderr);
  }

  PerfBackend& b_;
  const PerfOptions& o_;
  const char* prog_;
  const int n_, rank_;
  std::unique_ptr<Buffer> send_, recv_;
  double bw_sum_ = 0;
  int bw_count_ = 0;
  uint64_t wrong_total_ = 0;
  std::vector<std::string> failures_;  // rank 0: which rows had wrong elements
  int local_reports_ = 0;
};

Status Runner::Launch(const void* send, void* recv, const Plan& p, DataType type, const Reduction& red) {
  switch (o_.coll) {
    case Coll::kAllReduce: return b_.AllReduce(send, recv, p.count, type, red);
    case Coll::kAllGather: return b_.AllGather(send, recv, p.count, type);
    case Coll::kReduceScatter: return b_.ReduceScatter(send, recv, p.count, type, red);
    case Coll::kBroadcast: return b_.Broadcast(send, recv, p.count, type, o_.root);
    case Coll::kReduce: return b_.Reduce(send, recv, p.count, type, red, o_.root);
    case Coll::kScatter: return b_.Scatter(send, recv, p.count, type, o_.root);
    case Coll::kGather: return b_.Gather(send, recv, p.count, type, o_.root);
    case Coll::kAllToAll: return b_.AllToAll(send, recv, p.count, type);
    case Coll::kSendRecv: return b_.SendRecv(send, (rank_ + 1) % n_, recv, (rank_ - 1 + n_) % n_, p.count, type);
  }
  return InvalidArgument("unknown collective");
}

Status Runner::TimeOne(const Pattern& pat, const Plan& plan, DataType type, RedOp op, size_t size, bool in_place,
                       Timed* out) {
  const size_t elem = DataTypeSize(type);
  char* send = in_place ? recv_->p + plan.inplace_send_off * elem : send_->p;
  char* recv = in_place ? recv_->p + plan.inplace_recv_off * elem : recv_->p;
  const Reduction red{op, pat.Scalar(rank_)};
  auto prepare = [&]() {
    if (in_place) {
      FillPoison(type, recv_->p, plan.whole_elems());
    } else {
      FillPoison(type, recv, plan.recv_elems);
    }
    FillInput(pat, rank_, type, send, 0, plan.send_elems);
  };
  prepare();
  for (int i = 0; i < o_.warmup_iters; ++i) TUTTI_RETURN_IF_ERROR(Launch(send, recv, plan, type, red));
  TUTTI_RETURN_IF_ERROR(b_.Barrier());
  double us = 0;
  if (o_.barrier) {  // each call alone, its ranks released together by a barrier
    double sum = 0;
    for (int i = 0; i < o_.iters; ++i) {
      TUTTI_RETURN_IF_ERROR(b_.Barrier());
      const double t = bench::NowSeconds();
      TUTTI_RETURN_IF_ERROR(Launch(send, recv, plan, type, red));
      sum += bench::NowSeconds() - t;
    }
    us = sum / o_.iters * 1e6;
  } else {
    const double t0 = bench::NowSeconds();
    for (int i = 0; i < o_.iters; ++i) TUTTI_RETURN_IF_ERROR(Launch(send, recv, plan, type, red));
    us = (bench::NowSeconds() - t0) / o_.iters * 1e6;
  }
  double agg = 0;
  switch (o_.average) {
    case 0: {
      TUTTI_ASSIGN_OR_RETURN(agg, b_.AllReduceDouble(rank_ == 0 ? us : 0, Agg::kSum));
      break;
    }
    case 1: {
      TUTTI_ASSIGN_OR_RETURN(double sum, b_.AllReduceDouble(us, Agg::kSum));
      agg = sum / n_;
      break;
    }
    case 2: {
      TUTTI_ASSIGN_OR_RETURN(agg, b_.AllReduceDouble(us, Agg::kMin));
      break;
    }
    default: {
      TUTTI_ASSIGN_OR_RETURN(agg, b_.AllReduceDouble(us, Agg::kMax));
      break;
    }
  }
  out->run = true;
  out->time_us = agg;
  out->algbw = agg > 0 ? static_cast<double>(plan.op_bytes) / agg / 1e3 : 0;  // bytes/us -> GB/s
  out->busbw = out->algbw * BusBwFactor(o_.coll, n_);
  bw_sum_ += out->busbw;
  ++bw_count_;
  if (!o_.check) return OkStatus();

  prepare();
  TUTTI_RETURN_IF_ERROR(Launch(send, recv, plan, type, red));
  if (rank_ == o_.debug_corrupt_rank && pat.HasOutput(rank_) && plan.recv_elems > 0)
    Corrupt(type, recv, plan.recv_elems / 2);
  CheckResult cr = CheckOutput(pat, rank_, type, recv, plan.recv_elems);
  if (cr.wrong > 0 && local_reports_++ < 10) {
    fprintf(stderr,
            "%s: rank %d: %s %s %s, size %zu B, count %zu, %s: %" PRIu64 " of %zu elements wrong; first at index %" PRIu64
            ": got %g, expected %g\n",
            prog_, rank_, CollName(o_.coll), DataTypeName(type), CollReduces(o_.coll) ? RedOpName(op) : "-", size,
            plan.count, in_place ? "in-place" : "out-of-place", cr.wrong, plan.recv_elems, cr.first_index, cr.got,
            cr.expected);
    fflush(stderr);
  }
  TUTTI_ASSIGN_OR_RETURN(double wrong, b_.AllReduceDouble(static_cast<double>(cr.wrong), Agg::kSum));
  out->wrong = static_cast<uint64_t>(wrong);
  if (out->wrong > 0) {
    wrong_total_ += out->wrong;
    failures_.push_back(Fmt("%s %s %s, size %zu B (count %zu), %s: %" PRIu64 " wrong", CollName(o_.coll),
                            DataTypeName(type), CollReduces(o_.coll) ? RedOpName(op) : "-", plan.op_bytes, plan.count,
                            in_place ? "in-place" : "out-of-place", out->wrong));
  }
  return OkStatus();
}

void Runner::PrintRow(const Plan& plan, DataType type, RedOp op, const Timed t[2]) {
  if (rank_ != 0) return;
  std::string root = CollRooted(o_.coll) ? std::to_string(o_.root) : "-";
  std::string line = Fmt(kLeftFmt, std::to_string(plan.op_bytes).c_str(), std::to_string(plan.count).c_str(),
                         DataTypeName(type), CollReduces(o_.coll) ? RedOpName(op) : "-", root.c_str());
  line += PlaceColumns(t[0], o_.check) + PlaceColumns(t[1], o_.check);
  printf("%s\n", line.c_str());
  fflush(stdout);
}

Status Runner::Preamble() {
  // Every rank's description, gathered in fixed 256-byte slots.
  constexpr size_t kSlot = 256;
  std::vector<char> mine(kSlot, 0), all(kSlot * n_, 0);
  std::string d = b_.Describe();
  memcpy(mine.data(), d.data(), std::min(d.size(), kSlot - 1));
  TUTTI_RETURN_IF_ERROR(b_.AllGather(mine.data(), all.data(), kSlot, DataType::kUint8));
  if (rank_ != 0) return OkStatus();
  printf("# %s  coll: %s  backend: %s  algorithm: %s  ranks: %d\n", prog_, CollName(o_.coll), b_.name().c_str(),
         o_.algo.empty() ? "auto" : o_.algo.c_str(), n_);
  std::string step = o_.step_factor > 1 ? std::to_string(o_.step_factor) + "(factor)"
                                        : std::to_string(o_.step_bytes) + "(bytes)";
  printf("# minBytes %zu maxBytes %zu step: %s warmup iters: %d iters: %d agg: %s validation: %d blocking: %d barrier: %d "
         "timeout: %g\n",
         o_.min_bytes, o_.max_bytes, step.c_str(), o_.warmup_iters, o_.iters, AverageName(o_.average), o_.check ? 1 : 0,
         o_.blocking, o_.barrier ? 1 : 0, o_.timeout_s);
  printf("#\n# Using ranks\n");
  for (int r = 0; r < n_; ++r) printf("#  Rank %2d %s\n", r, all.data() + r * kSlot);
  printf("#\n");
  PrintHeader();
  fflush(stdout);
  return OkStatus();
}

int Runner::Run() {
  auto fail = [&](const Status& st) {
    Error(st);
    b_.Abort(st.message());
    return 1;
  };
  if (CollRooted(o_.coll) && o_.root >= n_) {
    if (rank_ == 0) fprintf(stderr, "%s: root %d is not a rank (0..%d)\n", prog_, o_.root, n_ - 1);
    return SettingError(rank_);
  }
  if (Status st = b_.SetAlgorithm(o_.coll, o_.algo); !st.ok()) {
    if (rank_ == 0) fprintf(stderr, "%s: %s\n", prog_, st.message().c_str());
    return SettingError(rank_);
  }
  const std::vector<size_t> sizes = SizeSweep(o_.min_bytes, o_.max_bytes, o_.step_factor, o_.step_bytes);
  const size_t max_size = sizes.empty() ? 0 : *std::max_element(sizes.begin(), sizes.end());
  send_ = std::make_unique<Buffer>(max_size);
  recv_ = std::make_unique<Buffer>(max_size);
  if (!send_->p || !recv_->p) return fail(SystemError("allocating 2 x " + std::to_string(max_size) + " bytes"));
  if (Status st = Preamble(); !st.ok()) return fail(st);

  const std::vector<RedOp> ops = CollReduces(o_.coll) ? o_.ops : std::vector<RedOp>{RedOp::kSum};
  for (DataType type : o_.types) {
    for (RedOp op : ops) {
      if (!OpTakesType(op, type)) {
        if (rank_ == 0) printf("# skipped: %s is for integer types, not %s\n", RedOpName(op), DataTypeName(type));
        continue;
      }
      if (!b_.Supports(o_.coll, type, op)) {
        if (rank_ == 0) printf("# skipped: %s does not support %s of %s%s%s\n", b_.name().c_str(), CollName(o_.coll),
                               DataTypeName(type), CollReduces(o_.coll) ? " with " : "",
                               CollReduces(o_.coll) ? RedOpName(op) : "");
        continue;
      }
      for (size_t si = 0; si < sizes.size(); ++si) {
        const Plan plan = PlanFor(o_.coll, sizes[si], DataTypeSize(type), n_, rank_);
        Timed t[2];
        for (int place = 0; place < 2; ++place) {
          if (place == 1 && !CollHasInPlace(o_.coll)) continue;
          const uint64_t seed = ((si * 16 + static_cast<uint64_t>(type)) * 8 + static_cast<uint64_t>(op)) * 2 + place;
          const Pattern pat(o_.coll, type, op, n_, o_.root, plan.count, seed);
          if (Status st = TimeOne(pat, plan, type, op, sizes[si], place == 1, &t[place]); !st.ok()) return fail(st);
        }
        PrintRow(plan, type, op, t);
      }
    }
  }
  if (rank_ == 0) {
    printf("# Out of bounds values : %" PRIu64 " %s\n", wrong_total_, wrong_total_ ? "FAILED" : "OK");
    printf("# Avg bus bandwidth    : %g\n", bw_count_ ? bw_sum_ / bw_count_ : 0.0);
    printf("#\n");
    if (wrong_total_) {
      printf("# FAILED: wrong results in %zu measurement(s):\n", failures_.size());
      for (const auto& f : failures_) printf("#   %s\n", f.c_str());
    }
    fflush(stdout);
  }
  // Nobody leaves before rank 0 has printed everything (a launcher may stop the others as soon
  // as one rank exits non-zero).
  if (Status st = b_.Barrier(); !st.ok()) return fail(st);
  return wrong_total_ ? 1 : 0;
}

}  // namespace

int RunPerf(PerfBackend& b, const PerfOptions& o, const char* prog) { return Runner(b, o, prog).Run(); }

int PerfMain(int argc, char** argv, const char* prog, int launch_rank, const BackendFactory& make) {
  Result<PerfOptions> opts = ParsePerfArgs(argc, argv);
  if (!opts.ok()) {
    if (launch_rank == 0) fprintf(stderr, "%s: %s\n", prog, opts.status().message().c_str());
    return SettingError(launch_rank);
  }
  if (opts->help) {
    if (launch_rank == 0) printf("%s", PerfUsage(prog).c_str());
    return 0;
  }
  Result<std::unique_ptr<PerfBackend>> backend = make(*opts);
  if (!backend.ok()) {
    const bool setting = backend.status().code() == Code::kInvalidArgument;
    if (!setting || launch_rank == 0)
      fprintf(stderr, "%s: %s\n", prog,
              setting ? backend.status().message().c_str()
                      : ("rank " + std::to_string(launch_rank) + ": " + backend.status().ToString()).c_str());
    return setting ? SettingError(launch_rank) : 1;
  }
  return RunPerf(**backend, *opts, prog);
}

}  // namespace tutti::perf
