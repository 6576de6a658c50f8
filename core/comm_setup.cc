#include "core/comm_setup.h"

#include <sched.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <random>
#include <set>

#include "core/coll/buffer_pool.h"
#include "core/coll/coll_registry.h"
#include "core/coll/device_path.h"
#include "core/coll/fused_path.h"
#include "core/coll/plan_cache.h"
#include "core/coll/selector.h"
#include "core/coll/slot_setup.h"
#include "core/connect/lazy_connector.h"
#include "core/base/env.h"
#include "core/exec/cpu_engine.h"
#include "core/base/logging.h"
#include "core/mem/registration_cache.h"
#include "core/base/process.h"
#include "transport/setup.h"
#include "transport/shm/doorbell.h"
#include "transport/shm/shm_segment.h"
#include "transport/shm/shm_setup.h"
#include "core/base/socket_util.h"
#include "transport/tcp/tcp_setup.h"

namespace tutti {

namespace {
std::string ReadLine(const char* path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

std::string R(int r) { return "rank " + std::to_string(r); }

struct Resolved {
  double timeout_s;
  double store_timeout_s;
  std::string transport;
  std::string host_id;
  std::string secret;
  int nsocks;
  int bufsize;
  ShmOptions shm;
  EngineOptions engine;
  std::shared_ptr<exec::LocalEngine> local;
  bool lazy = false;
  int64_t slot_max = 0, slot_bytes = 0;
  bool strict_checks = false;
};

// A setting from CommOptions when set there, else from its environment variable.
template <typename T, typename EnvFn>
Result<T> Setting(const std::optional<T>& given, EnvFn env, const char* name) {
  if (given) return *given;
  return env(name);
}

Result<Resolved> Resolve(int rank, int size, const CommOptions& o) {
  Resolved r;
  if (o.timeout_s >= 0) {
    r.timeout_s = o.timeout_s;
  } else {
    TUTTI_ASSIGN_OR_RETURN(r.timeout_s, EnvSeconds("TUTTI_TIMEOUT"));
  }
  TUTTI_ASSIGN_OR_RETURN(r.store_timeout_s, EnvSeconds("TUTTI_STORE_TIMEOUT"));
  TUTTI_ASSIGN_OR_RETURN(double heartbeat, Setting(o.heartbeat_timeout_s, EnvSeconds, "TUTTI_HEARTBEAT_TIMEOUT"));
  if (!(heartbeat >= 0)) return InvalidArgument("TUTTI_HEARTBEAT_TIMEOUT must be >= 0");
  r.engine.heartbeat_timeout_s = heartbeat > 1e8 ? 0 : heartbeat;
  if (!o.transport.empty()) {
    r.transport = o.transport;
  } else {
    TUTTI_ASSIGN_OR_RETURN(r.transport, EnvString("TUTTI_TRANSPORT"));
  }
  if (r.transport != "auto" && r.transport != "shm" && r.transport != "tcp")
    return InvalidArgument("transport \"" + r.transport + "\" is not one of auto, shm, tcp");
  r.host_id = !o.host_id.empty() ? o.host_id : EnvRaw("TUTTI_HOST_ID").value_or(DefaultHostId());
  r.secret = o.secret_set || !o.secret.empty() ? o.secret : EnvRaw("TUTTI_SECRET").value_or("");
  TUTTI_ASSIGN_OR_RETURN(int64_t nsocks, Setting(o.socket_nsocks, EnvInt, "TUTTI_SOCKET_NSOCKS"));
  if (nsocks < 1 || nsocks > 16) return InvalidArgument("TUTTI_SOCKET_NSOCKS must be 1..16");
  r.nsocks = static_cast<int>(nsocks);
  TUTTI_ASSIGN_OR_RETURN(int64_t bufsize, Setting(o.socket_bufsize, EnvInt, "TUTTI_SOCKET_BUFSIZE"));
  r.bufsize = static_cast<int>(std::clamp<int64_t>(bufsize, 0, 1 << 30));
  TUTTI_ASSIGN_OR_RETURN(int64_t fifo, Setting(o.shm_fifo_bytes, EnvInt, "TUTTI_SHM_FIFO_BYTES"));
  if (fifo < 4096 || fifo > (1ll << 30) || (fifo & (fifo - 1)) != 0)
    return InvalidArgument("TUTTI_SHM_FIFO_BYTES must be a power of two in 4096..1 GiB");
  r.shm.fifo_bytes = static_cast<size_t>(fifo);
  if (o.shm_cma) {
    r.shm.use_cma = r.engine.one_sided_all = *o.shm_cma;
  } else {
    TUTTI_ASSIGN_OR_RETURN(std::string cma, EnvString("TUTTI_SHM_CMA"));
    if (cma == "copies") {
      r.shm.use_cma = true;
      r.engine.one_sided_all = false;
    } else {
      Result<bool> all = ParseBool("TUTTI_SHM_CMA", cma);
      if (!all.ok()) return InvalidArgument("TUTTI_SHM_CMA \"" + cma + "\" is not one of copies, 0, 1");
      r.shm.use_cma = r.engine.one_sided_all = *all;
    }
  }
  TUTTI_ASSIGN_OR_RETURN(int64_t eager, Setting(o.eager_limit, EnvInt, "TUTTI_EAGER_LIMIT"));
  if (eager < 0) return InvalidArgument("TUTTI_EAGER_LIMIT must be >= 0");
  TUTTI_ASSIGN_OR_RETURN(int64_t spin, Setting(o.spin_us, EnvInt, "TUTTI_SPIN_US"));
  TUTTI_ASSIGN_OR_RETURN(int64_t yield_us, Setting(o.yield_us, EnvInt, "TUTTI_YIELD_US"));
  r.engine.yield_us = static_cast<int>(std::clamp<int64_t>(yield_us, 0, 10000000));
  r.engine.rank = rank;
  r.engine.size = size;
  r.engine.timeout_s = r.timeout_s;
  r.engine.eager_limit = static_cast<size_t>(eager);
  r.engine.spin_us = static_cast<int>(std::clamp<int64_t>(spin, 0, 1000000));
  TUTTI_ASSIGN_OR_RETURN(r.engine.move_waiters, Setting(o.move_waiters, EnvBool, "TUTTI_MOVE_WAITERS"));
  if (o.lazy_connect) {
    r.lazy = *o.lazy_connect;
  } else {
    TUTTI_ASSIGN_OR_RETURN(std::string connect, EnvString("TUTTI_CONNECT"));
    if (connect != "eager" && connect != "lazy")
      return InvalidArgument("TUTTI_CONNECT \"" + connect + "\" is not one of eager, lazy");
    r.lazy = connect == "lazy";
  }
  TUTTI_ASSIGN_OR_RETURN(r.slot_max, EnvInt("TUTTI_SLOT_MAX"));
  TUTTI_ASSIGN_OR_RETURN(r.slot_bytes, EnvInt("TUTTI_SLOT_BYTES"));
  if (r.slot_max < 0) return InvalidArgument("TUTTI_SLOT_MAX must be >= 0");
  if (r.slot_bytes < 64 || r.slot_bytes > (1 << 26)) return InvalidArgument("TUTTI_SLOT_BYTES must be 64..64 MiB");
  TUTTI_ASSIGN_OR_RETURN(r.strict_checks, Setting(o.strict_checks, EnvBool, "TUTTI_STRICT_CHECKS"));
  if (o.local_engine) {
    r.local = o.local_engine;
  } else {
    TUTTI_ASSIGN_OR_RETURN(std::string local, EnvString("TUTTI_LOCAL_ENGINE"));
    TUTTI_ASSIGN_OR_RETURN(exec::CpuEngine::Mode mode, exec::ParseCpuEngineMode(local));
    r.local = std::make_shared<exec::CpuEngine>(mode);
  }
  return r;
}

std::string Key(const char* what, int a) { return std::string(what) + "/" + std::to_string(a); }
}  // namespace

namespace {
std::string HostName() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  return host;
}
}  // namespace

std::string DefaultHostId() {
  char ns[128] = {};
  ssize_t n = readlink("/proc/self/ns/net", ns, sizeof(ns) - 1);
  if (n < 0) n = 0;
  ns[n] = '\0';
  return HostName() + "/" + ReadLine("/proc/sys/kernel/random/boot_id") + "/" + ns;
}

std::string EncodePeerCard(const PeerCard& c) {
  return std::to_string(c.world_size) + "\n" + std::to_string(c.pid) + "\n" + c.doorbell + "\n" + c.host_id;
}

namespace {
// A decimal in 1..INT32_MAX, as written by std::to_string.
bool ParsePositive(const std::string& s, int64_t* out) {
  if (s.empty() || s.size() > 10) return false;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (*end != '\0' || v <= 0 || v > INT32_MAX) return false;
  *out = v;
  return true;
}
}  // namespace

Result<PeerCard> DecodePeerCard(const std::string& text) {
  size_t nl0 = text.find('\n');
  size_t nl = nl0 == std::string::npos ? std::string::npos : text.find('\n', nl0 + 1);
  size_t nl2 = nl == std::string::npos ? std::string::npos : text.find('\n', nl + 1);
  if (nl2 == std::string::npos || nl2 - nl - 1 > 200 || text.size() - nl2 - 1 > 1024)
    return ProtocolError("malformed peer card in the store");
  PeerCard c;
  if (!ParsePositive(text.substr(0, nl0), &c.world_size))
    return ProtocolError("malformed world size in peer card");
  if (!ParsePositive(text.substr(nl0 + 1, nl - nl0 - 1), &c.pid)) return ProtocolError("malformed pid in peer card");
  c.doorbell = text.substr(nl + 1, nl2 - nl - 1);
  c.host_id = text.substr(nl2 + 1);
  return c;
}

namespace {
constexpr const char* kOtherRankFailed = "failed because of another rank";

// The init's waits: each polls "init_error" between slices, so a problem found by any rank
// ends every rank's init within a slice instead of at the store timeout.
class InitWaits {
 public:
  InitWaits(Store& store, double timeout_s, std::string ctx)
      : store_(store), deadline_(DeadlineIn(timeout_s)), ctx_(std::move(ctx)) {}

  // Publishes a problem for every rank and returns it as this rank's error.
  Status Fail(Status st) {
    st = st.WithContext(ctx_);
    (void)store_.Set("init_error", st.message());  // best effort: the error below is ours either way
    return st;
  }

  // A problem another rank published, if any.
  Status Check() {
    Result<bool> has = store_.Check({"init_error"});
    if (!has.ok() || !*has) return OkStatus();
    Result<std::string> why = store_.Get("init_error", 1);
    return InvalidUsage(ctx_ + ": " + kOtherRankFailed + ": " + (why.ok() ? *why : "(unreadable)"));
  }

  // Waits for `key`, which rank `from` (if >= 0) is to set: if that rank runs on this machine
  // and its process is gone, it died during init, and every rank hears so at once.
  Result<std::string> Get(const std::string& key, const std::string& what, int from = -1) {
    while (true) {
      double left = SecondsLeft();
      Result<std::string> v = store_.Get(key, std::min(kSlice, left));
      if (v.ok() || v.status().code() != Code::kTimeout) {
        if (!v.ok()) return v.status().WithContext(ctx_ + ": " + what);
        return v;
      }
      TUTTI_RETURN_IF_ERROR(Check());
      if (from >= 0) TUTTI_RETURN_IF_ERROR(CheckAlive(from));
      if (left <= kSlice) return v.status().WithContext(ctx_ + ": " + what);
    }
  }

  Clock::time_point deadline() const { return deadline_; }

  Status Wait(const std::string& key, const std::string& what, int from = -1) {
    return Get(key, what, from).status();
  }

  // Fails (and publishes) if rank `r` claimed its rank from a process on this machine that is
  // gone now.
  Status CheckAlive(int r) {
    auto it = local_pids_.find(r);
    if (it == local_pids_.end()) {
      Result<std::string> proc = store_.Get("proc/" + std::to_string(r), 0);
      if (!proc.ok()) return OkStatus();  // not claimed yet (or the store is busy): look later
      it = local_pids_.emplace(r, LocalPid(*proc)).first;
    }
    if (it->second > 0 && ProcessGone(it->second))
      return Fail(RemoteError("rank " + std::to_string(r) + " (pid " + std::to_string(it->second) +
                              ") died during init"));
    return OkStatus();
  }

 private:
  static constexpr double kSlice = 0.2;
  double SecondsLeft() const {
    return std::max(0.0, std::chrono::duration<double>(deadline_ - Clock::now()).count());
  }

  Store& store_;
  Clock::time_point deadline_;
  std::string ctx_;
  std::map<int, pid_t> local_pids_;  // rank -> pid on this machine, -1 elsewhere
};

// The transports' rendezvous: blobs under "setup/<key>" in the communicator's store, read with
// the init's waits (bounded, watching "init_error" and the writer's liveness).
class StoreExchange : public SetupExchange {
 public:
  StoreExchange(Store& store, InitWaits& waits, int rank, int size)
      : store_(store), waits_(waits), rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Status Put(const std::string& key, const std::string& blob) override { return store_.Set("setup/" + key, blob); }
  Result<std::string> Get(int from, const std::string& key, const std::string& what) override {
    return waits_.Get("setup/" + key, what, from);
  }
  Clock::time_point deadline() const override { return waits_.deadline(); }
  Result<uint64_t> CommId() override {
    TUTTI_ASSIGN_OR_RETURN(std::string id, waits_.Get("comm_id", "communicator id", 0));
    return static_cast<uint64_t>(std::strtoull(id.c_str(), nullptr, 10));
  }

 private:
  Store& store_;
  InitWaits& waits_;
  const int rank_, size_;
};
}  // namespace

Result<std::unique_ptr<Communicator>> CommBuilder::Build(std::shared_ptr<Store> store, int rank, int size,
                                                          const CommOptions& opts) {
  if (size < 1) return InvalidArgument("communicator size " + std::to_string(size) + " < 1");
  if (rank < 0 || rank >= size)
    return InvalidArgument("rank " + std::to_string(rank) + " outside 0.." + std::to_string(size - 1));
  if (!store) return InvalidArgument("no store given");
  TUTTI_ASSIGN_OR_RETURN(Resolved cfg, Resolve(rank, size, opts));
  TUTTI_ASSIGN_OR_RETURN(CollConfig coll_cfg, CollConfig::FromEnv());
  TUTTI_ASSIGN_OR_RETURN(FusedConfig fused_cfg, FusedConfigFromEnv());
  SetLogRank(rank);
  // Let peers read our buffers with process_vm_readv even under Yama's ptrace restrictions.
  prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
  auto ctx = [&](const std::string& what) {
    return R(rank) + ": init of a " + std::to_string(size) + "-rank communicator" + (what.empty() ? "" : ": " + what);
  };

  InitWaits waits(*store, cfg.store_timeout_s, ctx(""));
  // 0. Our rank is ours alone, and this store has not already formed a communicator.
  TUTTI_ASSIGN_OR_RETURN(bool formed, store->Check({"all_ready"}));
  if (formed)
    return InvalidUsage(ctx("a communicator was already formed on this store (a second init in the same job, or "
                            "another job on the same MASTER_PORT?): use another MASTER_PORT, or Split / NewGroup "
                            "of the existing communicator"));

  const std::string me = "pid " + std::to_string(getpid()) + " on " + HostName();
  TUTTI_ASSIGN_OR_RETURN(int64_t claims, store->Add(Key("claim", rank), 1));
  if (claims > 1) {
    auto first = store->Get(Key("claimed_by", rank), 1);
    return waits.Fail(InvalidUsage(R(rank) + " is claimed by two processes (" + (first.ok() ? *first : "another") +
                                   " and " + me + "): check RANK / OMPI_COMM_WORLD_RANK / SLURM_PROCID"));
  }
  TUTTI_RETURN_IF_ERROR(store->Set(Key("claimed_by", rank), me));
  TUTTI_RETURN_IF_ERROR(store->Set(Key("proc", rank), ProcessIdentity()));

  // Everything after the claim: a failure found here is published for the other ranks.
  auto connected = [&]() -> Result<std::unique_ptr<Communicator>> {
    // 1. Cards, and an id that TCP handshakes check so connections cannot cross communicators.
    if (rank == 0) {
      std::random_device rd;
      uint64_t id = (static_cast<uint64_t>(rd()) << 32) ^ rd();
      TUTTI_RETURN_IF_ERROR(store->Set("comm_id", std::to_string(id)));
    }
    // Our doorbell: shm peers ring it when they write to us, so we can sleep while waiting.
    std::shared_ptr<Doorbell> bell;
    if (cfg.transport != "tcp") {
      TUTTI_ASSIGN_OR_RETURN(auto b, Doorbell::Create());
      bell = std::move(b);
    }
    TUTTI_RETURN_IF_ERROR(
        store->Set(Key("card", rank), EncodePeerCard({size, cfg.host_id, getpid(), bell ? bell->name() : ""})));
    std::vector<PeerCard> cards(size);
    for (int r = 0; r < size; ++r) {
      TUTTI_ASSIGN_OR_RETURN(std::string text, waits.Get(Key("card", r), "waiting for " + R(r) + " to join", r));
      auto card = DecodePeerCard(text);
      if (!card.ok()) return waits.Fail(card.status().WithContext("card of " + R(r)));
      cards[r] = std::move(*card);
      if (cards[r].world_size != size)
        return waits.Fail(InvalidUsage("world sizes differ: " + R(rank) + " was started with " + std::to_string(size) +
                                       " ranks, " + R(r) + " (pid " + std::to_string(cards[r].pid) + ") with " +
                                       std::to_string(cards[r].world_size)));
    }
    // 2. Local ranks, and the transport of each pair.
    auto comm = std::unique_ptr<Communicator>(new Communicator());
    comm->registrations_ = std::make_shared<RegistrationCache>();
    comm->rank_ = rank;
    comm->size_ = size;
    comm->store_ = store;
    comm->opts_ = opts;
    comm->local_rank_ = 0;
    comm->local_size_ = 0;
    for (int r = 0; r < size; ++r) {
      if (cards[r].host_id != cfg.host_id) continue;
      if (r < rank) ++comm->local_rank_;
      ++comm->local_size_;
    }
    std::vector<PeerInfo> infos(size);
    for (int r = 0; r < size; ++r) infos[r] = {cards[r].host_id, cards[r].pid, cards[r].doorbell};
    // In order of preference; TUTTI_TRANSPORT leaves one.
    std::vector<std::unique_ptr<TransportSetup>> transports;
    if (cfg.transport != "tcp") transports.push_back(std::make_unique<ShmSetup>(cfg.shm));
    if (cfg.transport != "shm") {
      TcpSetupOptions t;
      t.secret = cfg.secret;
      t.nsocks = cfg.nsocks;
      t.bufsize = cfg.bufsize;
      t.user_timeout_ms = static_cast<int>(std::min(cfg.timeout_s * 1000, 2e9));
      t.ifname = EnvRaw("TUTTI_SOCKET_IFNAME").value_or("");
      transports.push_back(std::make_unique<TcpSetup>(std::move(t)));
    }
    std::vector<std::set<int>> peers_of(transports.size());
    for (int r = 0; r < size; ++r) {
      if (r == rank) continue;
      size_t t = 0;
      while (t < transports.size() && !transports[t]->CanConnect(infos[rank], infos[r])) ++t;
      if (t == transports.size())
        return InvalidArgument(ctx("no transport connects it to " + R(r) + " (on host " + cards[r].host_id + ")" +
                                   (cfg.transport == "shm" ? ": TUTTI_TRANSPORT=shm but " + R(r) + " is on another host"
                                                           : "")));
      peers_of[t].insert(r);
    }
    bool any_tcp = false;
    for (size_t t = 0; t < transports.size(); ++t)
      any_tcp |= std::string(transports[t]->name()) == "tcp" && !peers_of[t].empty();
    comm->transport_summary_ = any_tcp ? "tcp" : "shm";
    // More ranks on this host than cores we may run on: a waiting rank must not spin, it yields
    // its core at once (to the ranks it shares it with, which are likely the ones it waits for)
    // and sleeps after yield_us. Measured with 4 ranks on 2 cores: 8 B all_reduce 30-40 us when
    // sleeping after 5 us, 8-9 us yielding (through the slots; 220 -> 70 us as messages).
    cpu_set_t cpus;
    int ncpu = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
    if (comm->local_size_ > ncpu && !opts.spin_us && !EnvRaw("TUTTI_SPIN_US")) {
      cfg.engine.spin_us = 0;
      TUTTI_LOG(Info, Init, "rank %d: %d local ranks on %d cores: waiting ranks yield instead of spinning", rank,
                comm->local_size_, ncpu);
    }
    auto engine = std::make_shared<P2PEngine>(cfg.engine);

    for (size_t t = 0; t < transports.size(); ++t)
      if (!peers_of[t].empty()) engine->AddContext(transports[t]->name(), transports[t]->MakeContext());
    // 3. Each transport connects its peers (setup blobs through the store), now or lazily.
    if (!cfg.lazy) {
      StoreExchange ex(*store, waits, rank, size);
      for (size_t t = 0; t < transports.size(); ++t) {
        if (peers_of[t].empty()) continue;
        auto conns = transports[t]->Connect(infos, peers_of[t], ex);
        if (!conns.ok()) return conns.status().WithContext(ctx(transports[t]->name()));
        for (auto& [r, conn] : *conns) engine->SetConnection(r, std::move(conn));
      }
    } else {
      TUTTI_ASSIGN_OR_RETURN(std::string id, waits.Get("comm_id", "communicator id", 0));
      LazyConnector::Options lo;
      lo.rank = rank;
      lo.size = size;
      lo.timeout_s = cfg.timeout_s;
      lo.comm_id = std::strtoull(id.c_str(), nullptr, 10);
      std::vector<std::shared_ptr<TransportSetup>> transport_of(size);
      for (size_t t = 0; t < transports.size(); ++t) {
        std::shared_ptr<TransportSetup> shared = std::move(transports[t]);
        for (int r : peers_of[t]) transport_of[r] = shared;
      }
      std::weak_ptr<P2PEngine> weak_engine = engine;
      comm->connector_ = std::make_shared<LazyConnector>(
          store, lo, infos, std::move(transport_of),
          [weak_engine](int peer, Result<std::unique_ptr<Connection>> conn) {
            auto e = weak_engine.lock();
            if (!e) return;
            if (conn.ok()) {
              e->SetConnection(peer, std::move(*conn));
            } else {
              e->ConnectFailed(peer, conn.status());
            }
          });
      std::weak_ptr<LazyConnector> weak_connector = comm->connector_;
      engine->SetConnector([weak_connector](int peer) {
        if (auto c = weak_connector.lock()) c->Request(peer);
      });
    }

    // 4. Ranks that all share this host: the slots of small collectives (rank 0 decides for all).
    std::shared_ptr<ShmSegment> slot_segment;
    SlotRules slot_rules;
    if (size > 1) {
      SlotArea area;
      if (rank == 0) {
        std::string announcement = "off";
        if (comm->local_size_ == size && !any_tcp) {
          // Where large copies are read one-sidedly (TUTTI_SHM_CMA) and every rank has a CPU of
          // its own, an all_gather, gather, scatter or all_to_all whose blocks are read so leaves
          // the slots. With more ranks than CPUs only blocks of kDirectBlockMin and up do, and
          // not all_gather's: below that the slots were 2-5x faster. (2-vCPU VM, medians of 5,
          // 256 KiB blocks: 3 ranks gather 75 -> 50 us, scatter 56 -> 39, all_to_all 230 -> 211,
          // all_gather 138 -> 137; 4 ranks scatter 86 -> 57, gather and all_to_all the same,
          // all_gather 221 -> 292.)
          const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
          // (At least 1: 0 means no call leaves the slots; an eager limit of 0 sends every
          // block of 2 bytes or more by rendezvous, so such blocks leave.)
          const uint64_t copy_block_max = !cfg.shm.use_cma  ? 0
                                          : cpus >= size    ? std::max<uint64_t>(cfg.engine.eager_limit, 1)
                                                            : kDirectBlockMin - 1;
          SlotRules rules;
          rules.max_bytes = static_cast<uint64_t>(cfg.slot_max);
          rules.strict = cfg.strict_checks;
          rules.copy_block_max = copy_block_max;
          rules.all_gather_stays = cpus < size;
          if (cfg.shm.use_cma) {
            rules.direct_min = cpus >= size ? kSlotDirectMin : kSlotDirectBusyMin;
            rules.direct_rooted_min = cpus >= size ? kSlotDirectRootedMin : kSlotDirectBusyRootedMin;
            rules.direct_broadcast_min = cpus >= size ? kSlotDirectRootedMin : kSlotDirectBusyBroadcastMin;
          }
          auto made = CreateSlotArea(size, static_cast<uint64_t>(cfg.slot_bytes), rules, &announcement);
          if (made.ok()) {
            area = std::move(*made);
          } else {
            announcement = "off";
            TUTTI_LOG(Warn, Init, "rank 0: no shared slots for small collectives (they go as messages): %s",
                      made.status().message().c_str());
          }
        }
        TUTTI_RETURN_IF_ERROR(store->Set("slots", announcement));
      } else {
        TUTTI_ASSIGN_OR_RETURN(std::string announcement, waits.Get("slots", "rank 0's slot area", 0));
        auto opened = OpenSlotArea(announcement, size, rank);
        if (!opened.ok()) return waits.Fail(opened.status().WithContext("mapping rank 0's slot area"));
        area = std::move(*opened);
      }
      if (area.channel) {
        std::weak_ptr<SlotChannel> weak = area.channel;
        engine->SetFailureHook([weak](const Status& why) {
          if (auto ch = weak.lock()) ch->MarkFailed(why.message());
        });
        engine->SetCpuBoard(area.channel);  // where the ranks wait, for every waiter of the engine
      }
      comm->slots_ = std::move(area.channel);
      comm->slot_max_ = area.rules.max_bytes;
      comm->strict_checks_ = area.rules.strict;  // rank 0's
      comm->slot_copy_block_max_ = area.rules.copy_block_max;  // rank 0's
      comm->slot_all_gather_stays_ = area.rules.all_gather_stays;
      slot_rules = area.rules;  // (direct calls once every rank found it can read the others)
      slot_segment = std::move(area.segment);
    }

    // 5. Everyone is connected before anyone leaves the store.
    TUTTI_ASSIGN_OR_RETURN(int64_t joined, store->Add("ready", 1));
    if (joined == size) TUTTI_RETURN_IF_ERROR(store->Set("all_ready", "1"));
    TUTTI_RETURN_IF_ERROR(waits.Wait("all_ready", "waiting for all ranks to connect"));
    if (slot_rules.direct_min > 0 || slot_rules.direct_rooted_min > 0 || slot_rules.direct_broadcast_min > 0) {
      // Direct slot calls need every rank to read every other's memory: each tries (a rank whose
      // TUTTI_SHM_CMA is 0 refuses), and they take them only if all could (every rank gets the
      // same answer from the store).
      Status probe = cfg.shm.use_cma ? comm->slots_->ProbeReads()
                                     : UnavailableError("TUTTI_SHM_CMA is 0 on this rank");
      if (!probe.ok())
        TUTTI_LOG(Info, Init, "rank %d: slot calls copy through the slots (cannot read the other ranks' buffers: %s)",
                  rank, probe.message().c_str());
      TUTTI_RETURN_IF_ERROR(store->Add("slot_reads_refused", probe.ok() ? 0 : 1).status());
      TUTTI_ASSIGN_OR_RETURN(int64_t probed, store->Add("slot_reads_probed", 1));
      if (probed == size) {
        TUTTI_ASSIGN_OR_RETURN(int64_t refused, store->Add("slot_reads_refused", 0));
        TUTTI_RETURN_IF_ERROR(store->Set("slot_reads", refused == 0 ? "1" : "0"));
      }
      TUTTI_ASSIGN_OR_RETURN(std::string reads,
                             waits.Get("slot_reads", "every rank's try at reading the others' memory"));
      if (reads == "1") {
        comm->slot_direct_min_ = slot_rules.direct_min;
        comm->slot_direct_rooted_min_ = slot_rules.direct_rooted_min;
        comm->slot_direct_broadcast_min_ = slot_rules.direct_broadcast_min;
      }
    }
    // Rank 0 (which hosts the store when launched from the environment) leaves only after every
    // rank has seen "all_ready", so a program that ends right after init cannot take the store
    // away from a rank still waiting for that reply.
    TUTTI_ASSIGN_OR_RETURN(int64_t left, store->Add("left", 1));
    if (left == size) TUTTI_RETURN_IF_ERROR(store->Set("all_left", "1"));
    if (rank == 0) {
      TUTTI_RETURN_IF_ERROR(waits.Wait("all_left", "waiting for all ranks to finish init"));
    }
    if (slot_segment) slot_segment->Unlink();  // every rank mapped it before "ready"
    if (bell) {
      // Every peer has mapped it by now, unless pairs connect lazily: then it stays named until
      // the communicator is destroyed.
      if (!cfg.lazy) bell->Unlink();
      engine->SetWakeSource(bell);
    }
    comm->colls_ = std::make_shared<CollRegistry>();
    comm->buffers_ = std::make_shared<BufferPool>();
    comm->devices_ = std::make_shared<DevicePath>(opts.device_runtime);
    comm->plans_ = std::make_shared<PlanCache>();
    comm->coll_cfg_ = std::make_shared<const CollConfig>(std::move(coll_cfg));
    if (fused_cfg.enabled && comm->local_size_ == size && comm->devices_->runtime() != nullptr &&
        comm->devices_->runtime()->HasFused()) {
      comm->fused_ = std::make_shared<FusedPath>(comm->devices_->runtime(), store, rank, size, fused_cfg);
    }
    std::weak_ptr<CollRegistry> colls = comm->colls_;
    std::weak_ptr<BufferPool> pool = comm->buffers_;
    std::weak_ptr<DevicePath> devices = comm->devices_;
    engine->SetBackgroundWork([colls, pool, devices] {
      auto c = colls.lock();
      if (!c || !c->Active()) {
        if (auto b = pool.lock()) b->TrimIdle();
        if (auto d = devices.lock()) d->TrimIdle();
        return false;
      }
      c->AdvanceAll();
      return true;
    });
    engine->StartProgressThread();
    if (comm->connector_) comm->connector_->Start();
    comm->engine_ = std::move(engine);
    comm->local_ = cfg.local;
    TUTTI_LOG(Info, Init, "rank %d/%d ready (local %d/%d, transport %s)", rank, size, comm->local_rank_,
              comm->local_size_, cfg.transport.c_str());
    return comm;
  }();
  if (!connected.ok() && connected.status().message().find(kOtherRankFailed) == std::string::npos)
    (void)store->Set("init_error", connected.status().message());
  return connected;
}

}  // namespace tutti
