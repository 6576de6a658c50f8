#include "core/communicator.h"

#include "core/connect/lazy_connector.h"

#include <algorithm>
#include <cstdio>
#include <chrono>
#include <mutex>
#include <thread>
#include <set>

#include "core/coll/buffer_pool.h"
#include "core/coll/coll_registry.h"
#include "core/coll/plan_cache.h"
#include "core/comm_setup.h"
#include "core/base/env.h"
#include "core/launch/launch_env.h"
#include "core/base/logging.h"
#include "core/mem/registration_cache.h"
#include "core/store/in_memory_store.h"
#include "core/store/prefix_store.h"
#include "core/store/store_bind.h"
#include "core/store/tcp_store.h"

namespace tutti {

namespace {
std::string R(int r) { return "rank " + std::to_string(r); }

// False where no CUDA driver works: every pointer is host memory and nothing needs checking
// (the per-call checks cost one branch, and no message is built for them).
bool DevicesPossible() { return SystemMemoryProbe().knows_devices(); }

std::string ListText(const std::vector<int>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}
}  // namespace

Result<std::unique_ptr<Communicator>> Communicator::Create(std::shared_ptr<Store> store, int rank, int size,
                                                           const CommOptions& opts) {
  return CommBuilder::Build(std::move(store), rank, size, opts);
}

Result<std::unique_ptr<Communicator>> Communicator::InitFromEnv(const CommOptions& opts) {
  TUTTI_ASSIGN_OR_RETURN(LaunchInfo info, LaunchInfoFromEnv());
  return Init(info, opts);
}

Result<std::unique_ptr<Communicator>> Communicator::Init(const LaunchInfo& info, const CommOptions& opts) {
  if (info.world_size < 1 || info.rank < 0 || info.rank >= info.world_size)
    return InvalidArgument("rank " + std::to_string(info.rank) + " of world size " + std::to_string(info.world_size) +
                           " is not a valid rank");
  TUTTI_ASSIGN_OR_RETURN(double store_timeout, EnvSeconds("TUTTI_STORE_TIMEOUT"));
  std::string secret = opts.secret_set || !opts.secret.empty() ? opts.secret : info.secret;
  std::shared_ptr<TcpStoreServer> server;
  std::shared_ptr<Store> store;
  if (info.source == "single") {
    // Said once per process: a job whose launcher did not pass its variables would otherwise run
    // as several independent 1-rank worlds without a word.
    static std::once_flag said;
    std::call_once(said, [] {
      std::fprintf(stderr,
                   "tutti: no launch environment (RANK/WORLD_SIZE, OMPI_COMM_WORLD_*, SLURM_PROCID/NTASKS): "
                   "running as rank 0 of a 1-rank world. Launch with tuttirun, torchrun, mpirun or srun, or set "
                   "RANK=0 WORLD_SIZE=1 to silence this.\n");
    });
  }
  if (info.world_size == 1) {  // a single rank needs no rendezvous
    store = std::make_shared<InMemoryStore>();
  } else {
    if (info.master_addr.empty() || info.master_port == 0)
      return InvalidArgument(R(info.rank) + ": MASTER_ADDR and MASTER_PORT must say where the store is (launched by " +
                             info.source + ")");
    if (info.rank == 0) {
      TUTTI_ASSIGN_OR_RETURN(StoreBind bind, ChooseStoreBind(info.master_addr));
      TUTTI_LOG(Info, Init, "rank 0: store listens on %s:%d (%s)", bind.host.empty() ? "*" : bind.host.c_str(),
                info.master_port, bind.reason.c_str());
      auto s = TcpStoreServer::Start(bind.host, info.master_port, secret);
      if (!s.ok()) {
        std::string hint = s.status().message().find("in use") != std::string::npos
                               ? ": another process (an earlier init of this job that is still alive, or another "
                                 "job) listens on MASTER_PORT; choose another MASTER_PORT"
                               : "";
        return s.status().WithContext("rank 0: cannot host the store on " +
                                      (bind.host.empty() ? std::string("every interface") : bind.host) + " port " +
                                      std::to_string(info.master_port) + " (" + bind.reason + ")" + hint);
      }
      server = std::move(*s);
    }
    auto client = TcpStoreClient::Connect(info.master_addr, info.master_port, secret, store_timeout);
    if (!client.ok())
      return client.status().WithContext(R(info.rank) + ": cannot reach the store of rank 0 at " + info.master_addr +
                                         ":" + std::to_string(info.master_port));
    store = std::shared_ptr<Store>(std::move(*client));
  }
  CommOptions o = opts;
  o.secret = secret;
  o.secret_set = true;
  auto comm = Create(std::make_shared<PrefixStore>("tutti/world", store), info.rank, info.world_size, o);
  if (!comm.ok()) {
    // The others may still need the store to read why init failed ("init_error"): keep it up
    // until they have let go of it, briefly.
    if (server) {
      store.reset();
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
      while (server->num_connections() > 0 && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return comm.status();
  }
  (*comm)->keepalive_ = server;
  return comm;
}

Communicator::~Communicator() { Destroy(); }

Result<Communicator::MemHandle> Communicator::Register(const void* p, size_t bytes) {
  if (destroyed_) return InvalidUsage(R(rank_) + ": register on a destroyed communicator");
  auto reg = registrations_->Register(p, bytes);
  if (!reg.ok()) return reg.status().WithContext(R(rank_));
  TUTTI_LOG(Info, Init, "rank %d: registered %zu bytes at %p (%s)", rank_, bytes, p, Describe((*reg)->mem).c_str());
  return reg;
}

Status Communicator::Deregister(const MemHandle& handle) {
  return registrations_->Deregister(handle).WithContext(R(rank_));
}

MemInfo Communicator::MemoryOf(const void* p, size_t bytes) const {
  if (auto reg = registrations_->Lookup(p, bytes == 0 ? 1 : bytes)) return reg->mem;
  return SystemMemoryProbe().Probe(p);
}

bool Communicator::HostAccessible(const void* p, size_t bytes) const {
  return p == nullptr || !DevicesPossible() || MemoryOf(p, bytes).host_accessible();
}

Status Communicator::CheckHostAccessible(const std::string& who, const char* which, const void* p,
                                         size_t bytes) const {
  if (p == nullptr || !DevicesPossible()) return OkStatus();
  MemInfo m = MemoryOf(p, bytes);
  if (m.host_accessible()) return OkStatus();
  return InvalidArgument(who + ": the " + which + " buffer is " + Describe(m) +
                         " memory, which the host path cannot touch: collectives on device memory need a "
                         "program built with CUDA (its device runtime), and point-to-point calls on device "
                         "memory are not supported yet (host, pinned host and managed memory work)");
}

Status Communicator::AddToGroup(Result<Work> started, double timeout_s, const char* what) {
  if (!InGroup()) return InvalidUsage(R(rank_) + ": " + what + " handed to a group outside GroupStart / GroupEnd");
  internal::GroupWait how;
  how.timeout_s = timeout_s >= 0 ? timeout_s : timeout();
  how.spin_us = engine_->options().spin_us;
  how.yield_us = engine_->options().yield_us;
  std::shared_ptr<P2PEngine> engine = engine_;
  how.block = [engine](int us) { engine->BlockUntilActivity(us); };
  how.who = R(rank_) + ": " + what;
  return internal::GroupAdd(std::move(started), std::move(how));
}

Status Communicator::Send(const void* buf, size_t bytes, int peer, int tag, double timeout_s) {
  if (InGroup()) return AddToGroup(ISend(buf, bytes, peer, tag), timeout_s, "send");
  TUTTI_ASSIGN_OR_RETURN(auto op, PostSendOp(buf, bytes, peer, tag));
  return engine_->Wait(op, timeout_s);
}

Status Communicator::Recv(void* buf, size_t bytes, int peer, int tag, double timeout_s) {
  if (InGroup()) return AddToGroup(IRecv(buf, bytes, peer, tag), timeout_s, "recv");
  TUTTI_ASSIGN_OR_RETURN(auto op, PostRecvOp(buf, bytes, peer, tag));
  return engine_->Wait(op, timeout_s);
}

Result<int> Communicator::RecvAny(void* buf, size_t bytes, int tag, double timeout_s) {
  if (InGroup())
    return InvalidUsage(R(rank_) + ": RecvAny inside a group (it returns the sender when it completes): use "
                        "IRecv with kAnySource and Work::source()");
  TUTTI_ASSIGN_OR_RETURN(Work w, IRecv(buf, bytes, kAnySource, tag));
  TUTTI_RETURN_IF_ERROR(w.Wait(timeout_s));
  return w.source();
}

Status Communicator::Send(const void* buf, size_t bytes, int peer, int tag, HostStream& stream) {
  CollOptions o;
  o.stream = &stream;
  return OnStream(o, "send of " + std::to_string(bytes) + " bytes to rank " + std::to_string(peer),
                  [=, this](const CollOptions&) { return Send(buf, bytes, peer, tag); });
}

Status Communicator::Recv(void* buf, size_t bytes, int peer, int tag, HostStream& stream) {
  CollOptions o;
  o.stream = &stream;
  return OnStream(o, "recv of " + std::to_string(bytes) + " bytes from rank " + std::to_string(peer),
                  [=, this](const CollOptions&) { return Recv(buf, bytes, peer, tag); });
}

Result<Work> Communicator::ISend(const void* buf, size_t bytes, int peer, int tag) {
  TUTTI_ASSIGN_OR_RETURN(auto op, PostSendOp(buf, bytes, peer, tag));
  return Work(engine_, op);
}

Result<Work> Communicator::IRecv(void* buf, size_t bytes, int peer, int tag) {
  TUTTI_ASSIGN_OR_RETURN(auto op, PostRecvOp(buf, bytes, peer, tag));
  return Work(engine_, op);
}

Result<std::shared_ptr<Op>> Communicator::PostSendOp(const void* buf, size_t bytes, int peer, int tag) {
  if (destroyed_) return InvalidUsage(R(rank_) + ": send on a destroyed communicator");
  if (tag < 0) return InvalidArgument(R(rank_) + ": send with negative tag " + std::to_string(tag) + " (tags < 0 are reserved)");
  if (!HostAccessible(buf, bytes))  // (the message only when it is needed: this is every send)
    return CheckHostAccessible(R(rank_) + ": send to rank " + std::to_string(peer), "send", buf, bytes);
  return engine_->PostSend(buf, bytes, peer, tag);
}

Result<std::shared_ptr<Op>> Communicator::PostRecvOp(void* buf, size_t bytes, int peer, int tag) {
  if (destroyed_) return InvalidUsage(R(rank_) + ": recv on a destroyed communicator");
  if (tag < 0) return InvalidArgument(R(rank_) + ": recv with negative tag " + std::to_string(tag) + " (tags < 0 are reserved)");
  if (!HostAccessible(buf, bytes))
    return CheckHostAccessible(
        R(rank_) + ": recv from " + (peer == kAnySource ? std::string("any rank") : "rank " + std::to_string(peer)),
        "receive", buf, bytes);
  return engine_->PostRecv(buf, bytes, peer, tag);
}

Result<std::unique_ptr<Communicator>> Communicator::Split(int color, int key) {
  return SplitWithCheck(color, key, "", "split(color " + std::to_string(color) + ")");
}

Result<std::unique_ptr<Communicator>> Communicator::NewGroup(const std::vector<int>& ranks) {
  std::string what = "new_group(" + ListText(ranks) + ")";
  std::set<int> seen;
  for (int r : ranks) {
    if (r < 0 || r >= size_)
      return InvalidArgument(R(rank_) + ": " + what + " names rank " + std::to_string(r) + ", outside 0.." +
                             std::to_string(size_ - 1));
    if (!seen.insert(r).second) return InvalidArgument(R(rank_) + ": " + what + " lists rank " + std::to_string(r) + " twice");
  }
  if (ranks.empty()) return InvalidArgument(R(rank_) + ": new_group of no ranks");
  auto it = std::find(ranks.begin(), ranks.end(), rank_);
  int color = it == ranks.end() ? -1 : 0;
  int key = static_cast<int>(it - ranks.begin());
  return SplitWithCheck(color, key, ListText(ranks), what);
}

Result<std::unique_ptr<Communicator>> Communicator::SplitWithCheck(int color, int key, const std::string& check,
                                                                   const std::string& what) {
  if (destroyed_) return InvalidUsage(R(rank_) + ": " + what + " on a destroyed communicator");
  TUTTI_RETURN_IF_ERROR(engine_->failure());
  // Splits are matched across ranks by their order, like collectives.
  if (Status claim = colls_->BeginIssue(rank_, CollLabel::Of(what)); !claim.ok()) {
    engine_->FailAndNotify(claim);
    return claim;
  }
  auto result = SplitLocked(color, key, check, what);
  colls_->EndIssue(nullptr);
  return result;
}

Result<std::unique_ptr<Communicator>> Communicator::SplitLocked(int color, int key, const std::string& check,
                                                                 const std::string& what) {
  const int seq = ++split_count_;
  const std::string base = "split" + std::to_string(seq);
  const double t = timeout();
  TUTTI_RETURN_IF_ERROR(store_->Set(base + "/" + std::to_string(rank_),
                                    std::to_string(color) + " " + std::to_string(key) + " " + check));
  std::vector<std::pair<int, int>> members;  // (key, rank)
  for (int r = 0; r < size_; ++r) {
    auto v = store_->Get(base + "/" + std::to_string(r), t);
    if (!v.ok()) return v.status().WithContext(R(rank_) + ": " + what + ": waiting for " + R(r));
    int c = 0, k = 0, used = 0;
    if (sscanf(v->c_str(), "%d %d %n", &c, &k, &used) < 2 || used > static_cast<int>(v->size()))
      return ProtocolError(R(rank_) + ": " + what + ": malformed entry of " + R(r) + " in the store");
    std::string other_check = v->substr(static_cast<size_t>(used));
    if (other_check != check)
      return InvalidArgument(R(rank_) + ": " + what + " does not match the call on " + R(r) + " (" +
                             (other_check.empty() ? "split" : "new_group(" + other_check + ")") + ")");
    if (color >= 0 && c == color) members.emplace_back(k, r);
  }
  if (color < 0) return NotMemberError(R(rank_) + " is not a member of " + what);
  std::sort(members.begin(), members.end());
  int new_rank = 0;
  for (size_t i = 0; i < members.size(); ++i)
    if (members[i].second == rank_) new_rank = static_cast<int>(i);
  auto sub_store = std::make_shared<PrefixStore>(base + "/c" + std::to_string(color), store_);
  CommOptions o = opts_;
  o.timeout_s = t;
  o.local_engine = local_;
  TUTTI_ASSIGN_OR_RETURN(auto child, Create(sub_store, new_rank, static_cast<int>(members.size()), o));
  child->keepalive_ = keepalive_;
  return child;
}

Communicator::Stats Communicator::stats() const {
  Stats st;
  if (engine_) {
    P2PEngine::Stats e = engine_->stats();
    st.pending_ops = e.pending_ops;
    st.tracked_messages = e.tracked;
    st.tag_queues = e.tag_queues;
  }
  if (colls_) st.collectives_in_flight = colls_->InFlight();
  if (buffers_) st.pooled_bytes = buffers_->kept_bytes();
  if (plans_) st.cached_plans = plans_->size();
  st.direct_slot_calls = direct_slot_calls_.load(std::memory_order_relaxed);
  return st;
}

void Communicator::Abort(const std::string& why) {
  if (connector_) connector_->Stop();
  if (engine_) engine_->Abort(why);
}

Status Communicator::OnComplete(const Work& work, std::function<void(const Status&)> fn) {
  std::shared_ptr<WorkCompleter> completer;
  {
    std::lock_guard<std::mutex> lock(completer_mu_);
    if (destroyed_) return InvalidUsage(R(rank_) + ": completion callback on a destroyed communicator");
    if (!completer_) {
      WorkCompleter::Options o;
      o.rank = rank_;
      o.timeout_s = engine_->options().timeout_s;
      o.spin_us = engine_->options().spin_us;
      o.yield_us = engine_->options().yield_us;
      std::shared_ptr<P2PEngine> engine = engine_;
      o.block = [engine](int us) { engine->BlockUntilActivity(us); };
      completer_ = std::make_shared<WorkCompleter>(std::move(o));
    }
    completer = completer_;
  }
  return completer->Add(work, std::move(fn));
}

void Communicator::Destroy() {
  if (destroyed_) return;
  {
    std::lock_guard<std::mutex> lock(completer_mu_);
    destroyed_ = true;
  }
  CloseStreamGate();
  if (connector_) connector_->Stop();
  if (engine_) engine_->Shutdown();
  // Pending Works fail now ("communicator destroyed"): their functions run before Destroy returns.
  std::shared_ptr<WorkCompleter> completer;
  {
    std::lock_guard<std::mutex> lock(completer_mu_);
    completer = completer_;
  }
  if (completer) completer->Stop();
  registrations_->Clear();
}

}  // namespace tutti
