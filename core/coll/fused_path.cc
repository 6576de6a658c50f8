#include "core/coll/fused_path.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "core/base/env.h"
#include "core/base/logging.h"
#include "kernels/prims/rank_run.h"

namespace tutti {

namespace {

size_t Align64(size_t x) { return (x + 63) / 64 * 64; }

}  // namespace

// Ranks that are threads of one process on one device meet here before each launch (see
// prims::RankRun::before_launch): a barrier in this process's memory, found by every rank of
// the group under the same key.
class FusedPath::LocalBarrier {
 public:
  explicit LocalBarrier(int n) : n_(n) {}

  static std::shared_ptr<LocalBarrier> For(const std::string& key, int n) {
    static std::mutex mu;
    static auto* groups = new std::map<std::string, std::weak_ptr<LocalBarrier>>;  // lives until exit
    std::lock_guard<std::mutex> lock(mu);
    for (auto it = groups->begin(); it != groups->end();) it = it->second.expired() ? groups->erase(it) : std::next(it);
    std::shared_ptr<LocalBarrier> b = (*groups)[key].lock();
    if (!b) {
      b = std::make_shared<LocalBarrier>(n);
      (*groups)[key] = b;
    }
    return b;
  }

  // kAborted when `cancelled` (may be empty) says so meanwhile: then this barrier is left
  // uneven, as the path is after any failure.
  Status Arrive(double timeout_s, const std::function<bool()>& cancelled) {
    const uint64_t gen = gen_.load(std::memory_order_acquire);
    if (count_.fetch_add(1, std::memory_order_acq_rel) + 1 == n_) {
      count_.store(0, std::memory_order_relaxed);
      gen_.fetch_add(1, std::memory_order_acq_rel);
      return OkStatus();
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    for (int spins = 0; gen_.load(std::memory_order_acquire) == gen; ++spins) {
      if (spins < 1000) continue;
      std::this_thread::yield();
      if ((spins & 1023) != 0) continue;
      if (cancelled && cancelled()) {
        return AbortedError("stopped waiting for the ranks sharing this device: the communicator failed");
      }
      if (std::chrono::steady_clock::now() > deadline) {
        return TimeoutError("the ranks sharing this device did not all reach the call within " +
                            std::to_string(timeout_s) + " s");
      }
    }
    return OkStatus();
  }

 private:
  const int n_;
  std::atomic<int> count_{0};
  std::atomic<uint64_t> gen_{0};
};

// One device's connections: this rank's receiving ends (its own memory), its peers' (mapped),
// and the tables a run takes, per protocol.
struct FusedPath::Area {
  int device = -1;
  char* own = nullptr;  // [proto][stream][from peer] connections into this rank
  char* stage = nullptr;
  std::vector<char*> peers;  // each peer's area, mapped (nullptr for this rank)
  std::vector<prims::ConnCtl*> send[2], recv[2];  // [proto][stream * size + peer]
  std::string failed;  // a setup that failed: said again by every later call
  std::shared_ptr<LocalBarrier> barrier;  // all ranks are threads of this process on this device
  std::string off;  // why the path is off on this device (a rank cannot reach a peer's memory)
  std::once_flag off_logged;
};

FusedPath::FusedPath(exec::DeviceRuntime* runtime, std::shared_ptr<Store> store, int rank, int size, FusedConfig config)
    : rt_(runtime), store_(std::move(store)), rank_(rank), size_(size), cfg_(config) {}

FusedPath::~FusedPath() {
  // After a failed call a peer's kernel may still write into this rank's receiving ends (until
  // its own timeout): they are left allocated (the runtime reclaims them with the context).
  if (!broken_.empty()) return;
  for (auto& [device, a] : areas_) {
    for (char* p : a->peers) {
      if (p != nullptr) rt_->UnmapShared(device, p);
    }
    if (a->own != nullptr) rt_->FreeDevice(device, a->own);
    if (a->stage != nullptr) rt_->FreeDevice(device, a->stage);
  }
}

Result<FusedPath::Area*> FusedPath::AreaFor(int device, double timeout_s) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = areas_.find(device);
  if (it == areas_.end()) {
    auto a = std::make_unique<Area>();
    a->device = device;
    if (Status st = Setup(device, a.get(), timeout_s); !st.ok()) a->failed = st.message();
    it = areas_.emplace(device, std::move(a)).first;
  }
  if (!it->second->failed.empty()) {
    return UnavailableError("fused path on device " + std::to_string(device) + ": " + it->second->failed);
  }
  return it->second.get();
}

// Allocates and zeroes this rank's receiving ends, publishes them, maps every peer's and builds
// the tables. Every rank sets up in the same order (its first fused call on each device).
Status FusedPath::Setup(int device, Area* a, double timeout_s) {
  const prims::FifoGeom geoms[2] = {cfg_.ll, cfg_.simple};
  size_t stride[2], at[2], total = 0;
  for (int p = 0; p < 2; ++p) {
    stride[p] = Align64(prims::ConnBytes(geoms[p]));
    at[p] = total;
    total += stride[p] * cfg_.streams * static_cast<size_t>(size_);
  }
  TUTTI_ASSIGN_OR_RETURN(a->own, rt_->AllocShared(device, total));
  a->stage = rt_->AllocDevice(device, static_cast<size_t>(cfg_.ll.slot_bytes) * cfg_.streams);
  if (a->stage == nullptr) return UnavailableError("no device memory for the LL staging");
  TUTTI_ASSIGN_OR_RETURN(std::string shared, rt_->ShareDevice(device, a->own, total));
  // "<device> <what the runtime shares>": ranks of one process on one device find each other.
  const std::string mine = std::to_string(device) + " " + shared;
  const std::string prefix = "fused/" + std::to_string(setups_++) + "/";
  TUTTI_RETURN_IF_ERROR(store_->Set(prefix + std::to_string(rank_), mine));
  bool one_device = true;
  std::string group_key = rank_ == 0 ? mine : "";
  std::string cannot;  // why this rank cannot reach a peer's memory (then no rank uses the path)
  a->peers.assign(static_cast<size_t>(size_), nullptr);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (int q = 0; q < size_; ++q) {
    if (q == rank_) continue;
    const double left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    Result<std::string> theirs = store_->Get(prefix + std::to_string(q), std::max(left, 0.001));
    if (!theirs.ok()) {
      return theirs.status().WithContext("rank " + std::to_string(q) + " did not publish its fused connections (its "
                                         "first call on device memory is another call, or it runs with TUTTI_FUSED=0)");
    }
    const size_t space = theirs->find(' ');
    if (space == std::string::npos) return ProtocolError("rank " + std::to_string(q) + " published '" + *theirs + "'");
    const std::string their_shared = theirs->substr(space + 1);
    one_device = one_device && theirs->substr(0, space) == std::to_string(device) && rt_->IsLocal(their_shared);
    if (q == 0) group_key = *theirs;
    Result<char*> mapped = rt_->MapShared(device, their_shared);
    if (!mapped.ok()) {
      if (cannot.empty()) {
        cannot = "rank " + std::to_string(rank_) + " cannot map rank " + std::to_string(q) + "'s device memory (" +
                 mapped.status().message() + ")";
      }
      continue;
    }
    a->peers[q] = *mapped;
  }
  // Every rank says whether it reached all its peers; one that did not turns the path off for
  // all (the same answer everywhere), and device collectives go the staged path.
  TUTTI_RETURN_IF_ERROR(store_->Set(prefix + "reach/" + std::to_string(rank_), cannot.empty() ? "ok" : cannot));
  for (int q = 0; q < size_ && a->off.empty(); ++q) {
    if (q == rank_) {
      a->off = cannot;
      continue;
    }
    const double left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    TUTTI_ASSIGN_OR_RETURN(std::string reach, store_->Get(prefix + "reach/" + std::to_string(q), std::max(left, 0.001)));
    if (reach != "ok") a->off = reach;
  }
  if (!a->off.empty()) return OkStatus();
  if (one_device && size_ > 1) a->barrier = LocalBarrier::For(group_key, size_);
  for (int p = 0; p < 2; ++p) {
    a->send[p].assign(cfg_.streams * static_cast<size_t>(size_), nullptr);
    a->recv[p].assign(cfg_.streams * static_cast<size_t>(size_), nullptr);
    for (uint32_t s = 0; s < cfg_.streams; ++s) {
      for (int q = 0; q < size_; ++q) {
        if (q == rank_) continue;
        // Connection (from -> to) lives in `to`'s area at [p][s][from].
        auto in_area = [&](char* base, int from) {
          return reinterpret_cast<prims::ConnCtl*>(base + at[p] + (s * static_cast<size_t>(size_) + from) * stride[p]);
        };
        a->recv[p][s * size_ + q] = in_area(a->own, q);
        a->send[p][s * size_ + q] = in_area(a->peers[q], rank_);
      }
    }
  }
  return OkStatus();
}

Result<bool> FusedPath::Usable(int device, double timeout_s) {
  TUTTI_ASSIGN_OR_RETURN(Area * a, AreaFor(device, timeout_s));
  if (a->off.empty()) return true;
  std::call_once(a->off_logged, [&] {
    TUTTI_LOG(Warn, Coll, "rank %d: collectives on device %d go through host staging: %s", rank_, device,
              a->off.c_str());
  });
  return false;
}

Status FusedPath::Run(int device, const algo::PrimProgram& program, DataType type, RedOp op, uint8_t* const bufs[3],
                      const uint64_t bytes[3], uint64_t call_bytes, uint32_t tag, double timeout_s,
                      std::function<bool()> cancelled) {
  if (!broken_.empty()) {
    return InvalidUsage("an earlier fused call failed (" + broken_ +
                        "); its connections may hold stale pieces, so no later call on device memory can run");
  }
  if (program.streams.size() > cfg_.streams) {
    return InvalidArgument("a program of " + std::to_string(program.streams.size()) + " streams; the fused path has " +
                           std::to_string(cfg_.streams));
  }
  TUTTI_ASSIGN_OR_RETURN(Area * a, AreaFor(device, timeout_s));
  if (!a->off.empty()) return InvalidUsage("the fused path is off on device " + std::to_string(device) + ": " + a->off);
  const int p = call_bytes <= cfg_.ll_max_bytes ? 0 : 1;
  prims::RankRun run;
  run.type = type;
  run.op = op;
  run.program = &program;
  run.rank = rank_;
  run.nranks = size_;
  for (int b = 0; b < 3; ++b) {
    run.bufs[b] = bufs[b];
    run.buf_bytes[b] = bytes[b];
  }
  run.send = a->send[p];
  run.recv = a->recv[p];
  run.stage = reinterpret_cast<uint8_t*>(a->stage);
  run.geom = p == 0 ? cfg_.ll : cfg_.simple;
  run.tag = tag;
  run.cancelled = cancelled;
  run.timeout_s = timeout_s;
  if (a->barrier) {
    std::shared_ptr<LocalBarrier> barrier = a->barrier;
    run.before_launch = [barrier, timeout_s, cancelled] { return barrier->Arrive(timeout_s, cancelled); };
  }
  Status st = rt_->RunFused(device, run);
  if (!st.ok() && st.code() != Code::kInvalidArgument) broken_ = st.message();
  return st;
}

Result<FusedConfig> FusedConfigFromEnv() {
  FusedConfig c;
  TUTTI_ASSIGN_OR_RETURN(c.enabled, EnvBool("TUTTI_FUSED"));
  TUTTI_ASSIGN_OR_RETURN(int64_t ll, EnvInt("TUTTI_FUSED_LL_MAX"));
  if (ll < 0) return InvalidArgument("TUTTI_FUSED_LL_MAX must be >= 0");
  c.ll_max_bytes = static_cast<uint64_t>(ll);
  c.auto_channels = !EnvRaw("TUTTI_NCHANNELS").has_value();
  return c;
}

}  // namespace tutti
