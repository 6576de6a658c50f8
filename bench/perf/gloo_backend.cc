#include "bench/perf/gloo_backend.h"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/config.h>
#include <gloo/gather.h>
#include <gloo/math.h>
#include <gloo/reduce.h>
#include <gloo/reduce_scatter.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/hash_store.h>
#include <gloo/rendezvous/store.h>
#include <gloo/scatter.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/types.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <type_traits>

#include "core/base/env.h"
#include "core/launch/launch_env.h"
#include "core/store/store_bind.h"
#include "core/store/prefix_store.h"
#include "core/store/tcp_store.h"

namespace tutti::perf {
namespace {

constexpr double kDefaultTimeoutS = 300;
constexpr uint8_t kSendRecvSlotPrefix = 0x70;  // past Gloo's own collective prefixes (0x01..0x08)

// tutti's store seen as Gloo's rendezvous::Store (Gloo reports errors by throwing).
class StoreAdapter : public gloo::rendezvous::Store {
 public:
  StoreAdapter(std::shared_ptr<tutti::Store> store, double timeout_s) : store_(std::move(store)), timeout_s_(timeout_s) {}

  void set(const std::string& key, const std::vector<char>& data) override {
    Status st = store_->Set(key, std::string(data.begin(), data.end()));
    if (!st.ok()) throw std::runtime_error("store set " + key + ": " + st.ToString());
  }
  std::vector<char> get(const std::string& key) override {
    Result<std::string> v = store_->Get(key, timeout_s_);
    if (!v.ok()) throw std::runtime_error("store get " + key + ": " + v.status().ToString());
    return std::vector<char>(v->begin(), v->end());
  }
  void wait(const std::vector<std::string>& keys) override { Wait(keys, timeout_s_); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    Wait(keys, timeout.count() / 1e3);
  }

 private:
  void Wait(const std::vector<std::string>& keys, double timeout_s) {
    Status st = store_->Wait(keys, timeout_s);
    if (!st.ok()) throw std::runtime_error("store wait: " + st.ToString());
  }

  std::shared_ptr<tutti::Store> store_;
  double timeout_s_;
};

template <class T>
struct Tag {
  using type = T;
};

// Calls f(Tag<T>{}) with the C++ type Gloo reduces `type` as; false when Gloo cannot reduce it.
template <class F>
bool WithReducibleType(DataType type, F&& f) {
  switch (type) {
    case DataType::kInt8: f(Tag<int8_t>{}); return true;
    case DataType::kUint8: f(Tag<uint8_t>{}); return true;
    case DataType::kInt32: f(Tag<int32_t>{}); return true;
    case DataType::kUint32: f(Tag<uint32_t>{}); return true;
    case DataType::kInt64: f(Tag<int64_t>{}); return true;
    case DataType::kUint64: f(Tag<uint64_t>{}); return true;
    case DataType::kFloat16: f(Tag<gloo::float16>{}); return true;
    case DataType::kFloat32: f(Tag<float>{}); return true;
    case DataType::kFloat64: f(Tag<double>{}); return true;
    default: return false;
  }
}

bool ReducibleType(DataType type) {
  return WithReducibleType(type, [](auto) {});
}
bool ReducibleOp(RedOp op) {
  return op == RedOp::kSum || op == RedOp::kProd || op == RedOp::kMin || op == RedOp::kMax;
}

// Gloo's element-wise function for `op` on T: out = a op b.
using ElementwiseFn = void (*)(void*, const void*, const void*, size_t);
template <class T>
ElementwiseFn GlooFn(RedOp op) {
  switch (op) {
    case RedOp::kProd: return static_cast<ElementwiseFn>(&gloo::product<T>);
    case RedOp::kMin: return static_cast<ElementwiseFn>(&gloo::min<T>);
    case RedOp::kMax: return static_cast<ElementwiseFn>(&gloo::max<T>);
    default: return static_cast<ElementwiseFn>(&gloo::sum<T>);
  }
}
template <class T>
const gloo::ReductionFunction<T>* GlooReduction(RedOp op) {
  switch (op) {
    case RedOp::kProd: return gloo::ReductionFunction<T>::product;
    case RedOp::kMin: return gloo::ReductionFunction<T>::min;
    case RedOp::kMax: return gloo::ReductionFunction<T>::max;
    default: return gloo::ReductionFunction<T>::sum;
  }
}

// Runs a Gloo call, turning its exceptions into a Status.
template <class F>
Status Guard(const char* what, F&& f) {
  try {
    f();
    return OkStatus();
  } catch (const std::exception& e) {
    return RemoteError(std::string("gloo ") + what + ": " + e.what());
  }
}

Status Unsupported(const char* what, DataType type, RedOp op) {
  return InvalidArgument(std::string(what) + ": Gloo cannot reduce " + DataTypeName(type) + " with " + RedOpName(op));
}

char* At(const void* base, size_t elems, DataType type) {
  return static_cast<char*>(const_cast<void*>(base)) + elems * DataTypeSize(type);
}
char* Mut(const void* p) { return static_cast<char*>(const_cast<void*>(p)); }

template <class T>
struct TypedReduceScatter : GlooBackend::CachedReduceScatter {
  TypedReduceScatter(const std::shared_ptr<gloo::Context>& ctx, T* ptr, int total, int per_rank, RedOp op)
      : algo(ctx, std::vector<T*>{ptr}, total, std::vector<int>(ctx->size, per_rank), GlooReduction<T>(op)) {}
  void Run() override { algo.run(); }
  gloo::ReduceScatterHalvingDoubling<T> algo;
};

}  // namespace

Status GlooBackend::CheckAlgorithm(Coll coll, const std::string& algorithm) {
  if (algorithm.empty()) return OkStatus();
  if (coll == Coll::kAllReduce && (algorithm == "ring" || algorithm == "bcube")) return OkStatus();
  if (coll == Coll::kReduceScatter && (algorithm == "allreduce" || algorithm == "halving_doubling"))
    return OkStatus();
  return InvalidArgument("--algo " + algorithm + ": gloo_perf can choose all_reduce's algorithm (ring, bcube) and " +
                         "reduce_scatter's (allreduce, halving_doubling); " + CollName(coll) +
                         (coll == Coll::kAllReduce || coll == Coll::kReduceScatter ? " has no such algorithm"
                                                                                   : " has one algorithm in Gloo"));
}

Result<std::unique_ptr<PerfBackend>> GlooBackend::Create(const PerfOptions& o) {
  if (Status st = CheckAlgorithm(o.coll, o.algo); !st.ok()) return st;  // no breadcrumb: for the user
  TUTTI_ASSIGN_OR_RETURN(LaunchInfo info, LaunchInfoFromEnv());
  TUTTI_ASSIGN_OR_RETURN(double store_timeout, EnvSeconds("TUTTI_STORE_TIMEOUT"));
  std::unique_ptr<GlooBackend> b(new GlooBackend());
  b->rank_ = info.rank;
  b->size_ = info.world_size;
  b->local_rank_ = info.local_rank;
  b->local_size_ = info.local_world_size;
  const double timeout_s = o.timeout_s > 0 ? o.timeout_s : kDefaultTimeoutS;

  // The rendezvous store: tutti's TCP store, hosted by rank 0, as Communicator::Init does.
  std::unique_ptr<gloo::rendezvous::Store> store;
  if (info.world_size == 1 && info.master_addr.empty()) {
    store = std::make_unique<gloo::rendezvous::HashStore>();
  } else {
    if (info.master_addr.empty() || info.master_port == 0)
      return InvalidArgument("MASTER_ADDR and MASTER_PORT must say where the store is (launched by " + info.source +
                             "; tuttirun sets them)");
    if (info.rank == 0) {
      TUTTI_ASSIGN_OR_RETURN(StoreBind bind, ChooseStoreBind(info.master_addr));
      auto server = TcpStoreServer::Start(bind.host, info.master_port, info.secret);
      if (!server.ok())
        return server.status().WithContext("rank 0: cannot host the store on port " +
                                           std::to_string(info.master_port) + " (" + bind.reason + ")");
      b->store_ = std::shared_ptr<TcpStoreServer>(std::move(*server));
    }
    auto client = TcpStoreClient::Connect(info.master_addr, info.master_port, info.secret, store_timeout);
    if (!client.ok())
      return client.status().WithContext("rank " + std::to_string(info.rank) + ": cannot reach the store at " +
                                         info.master_addr + ":" + std::to_string(info.master_port));
    std::shared_ptr<tutti::Store> base(std::move(*client));
    store = std::make_unique<StoreAdapter>(std::make_shared<PrefixStore>("gloo_perf/", base), store_timeout);
  }

  // The Gloo device: loopback when the whole job is on this host.
  gloo::transport::tcp::attr attr;
  const char* ifname = getenv("GLOO_SOCKET_IFNAME");
  if (ifname && *ifname) {
    attr.iface = ifname;
  } else if (info.local_world_size == info.world_size) {
    attr.hostname = "127.0.0.1";
  } else {
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    attr.hostname = host;
  }
  Status st = Guard("connect", [&] {
    std::shared_ptr<gloo::transport::Device> dev = gloo::transport::tcp::CreateDevice(attr);
    b->device_ = dev->str();
    auto ctx = std::make_shared<gloo::rendezvous::Context>(info.rank, info.world_size);
    ctx->setTimeout(std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1e3)));
    ctx->connectFullMesh(*store, dev);
    b->ctx_ = std::move(ctx);
  });
  if (!st.ok()) return st.WithContext("rank " + std::to_string(info.rank));
  std::unique_ptr<PerfBackend> out = std::move(b);
  return out;
}

GlooBackend::~GlooBackend() {
  rs_.reset();
  ctx_.reset();
}

std::string GlooBackend::Describe() const {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  return "pid " + std::to_string(getpid()) + " on " + host + " (local rank " + std::to_string(local_rank_) + " of " +
         std::to_string(local_size_) + "), gloo " + std::to_string(GLOO_VERSION_MAJOR) + "." +
         std::to_string(GLOO_VERSION_MINOR) + " tcp device " + device_;
}

Status GlooBackend::SetAlgorithm(Coll coll, const std::string& algorithm) {
  if (Status st = CheckAlgorithm(coll, algorithm); !st.ok()) return st;
  bcube_ = coll == Coll::kAllReduce && algorithm == "bcube";
  halving_doubling_ = coll == Coll::kReduceScatter && algorithm == "halving_doubling";
  return OkStatus();
}

bool GlooBackend::Supports(Coll coll, DataType type, RedOp op) const {
  return !CollReduces(coll) || (ReducibleType(type) && ReducibleOp(op));
}

char* GlooBackend::Scratch(size_t bytes) {
  if (scratch_.size() < bytes) {
    rs_.reset();  // it may point into the old scratch buffer
    scratch_.assign(bytes, 0);
  }
  return scratch_.data();
}

Status GlooBackend::AllReduce(const void* send, void* recv, size_t count, DataType type, const Reduction& red) {
  if (!ReducibleOp(red.op) || !ReducibleType(type)) return Unsupported("all_reduce", type, red.op);
  if (count == 0) return OkStatus();
  return Guard("allreduce", [&] {
    WithReducibleType(type, [&](auto tag) {
      using T = typename decltype(tag)::type;
      gloo::AllreduceOptions opts(ctx_);
      if (send != recv) opts.setInput(reinterpret_cast<T*>(Mut(send)), count);
      opts.setOutput(reinterpret_cast<T*>(recv), count);
      opts.setReduceFunction(GlooFn<T>(red.op));
      opts.setAlgorithm(bcube_ ? gloo::AllreduceOptions::Algorithm::BCUBE : gloo::AllreduceOptions::Algorithm::RING);
      gloo::allreduce(opts);
    });
  });
}

Status GlooBackend::AllGather(const void* send, void* recv, size_t count, DataType type) {
  const size_t bytes = count * DataTypeSize(type);
  if (bytes == 0) return OkStatus();
  return Guard("allgather", [&] {
    gloo::AllgatherOptions opts(ctx_);
    if (send != At(recv, rank_ * count, type)) opts.setInput(Mut(send), bytes);  // else in place
    opts.setOutput(static_cast<char*>(recv), bytes * size_);
    gloo::allgather(opts);
  });
}

Status GlooBackend::ReduceScatter(const void* send, void* recv, size_t count, DataType type, const Reduction& red) {
  if (!ReducibleOp(red.op) || !ReducibleType(type)) return Unsupported("reduce_scatter", type, red.op);
  const size_t elem = DataTypeSize(type);
  const size_t total = count * size_;
  if (count == 0) return OkStatus();
  if (halving_doubling_ && total * elem > static_cast<size_t>(INT_MAX))
    return InvalidArgument("reduce_scatter: " + std::to_string(total * elem) +
                           " bytes exceed the int sizes of Gloo's ReduceScatterHalvingDoubling");
  const bool in_place = recv == At(send, rank_ * count, type);
  if (!halving_doubling_) {
    // All-reduce of the whole n x count array (into a scratch buffer out of place), of which
    // this rank keeps its block: in place the block is already where NCCL's layout wants it.
    return Guard("reduce_scatter (allreduce)", [&] {
      char* out = in_place ? Mut(send) : Scratch(total * elem);
      WithReducibleType(type, [&](auto tag) {
        using T = typename decltype(tag)::type;
        gloo::AllreduceOptions opts(ctx_);
        if (!in_place) opts.setInput(reinterpret_cast<T*>(Mut(send)), total);
        opts.setOutput(reinterpret_cast<T*>(out), total);
        opts.setReduceFunction(GlooFn<T>(red.op));
        gloo::allreduce(opts);
      });
      if (!in_place) memcpy(recv, out + rank_ * count * elem, count * elem);
    });
  }
  // Gloo's ReduceScatterHalvingDoubling. The buffer it reduces in place: the caller's (in
  // place) or a copy of the input.
  char* buf = in_place ? Mut(send) : Scratch(total * elem);
  if (!in_place) memcpy(buf, send, total * elem);
  return Guard("reduce_scatter (halving_doubling)", [&] {
    if (!rs_ || rs_->buf != buf || rs_->count != count || rs_->type != type || rs_->op != red.op) {
      rs_.reset();
      WithReducibleType(type, [&](auto tag) {
        using T = typename decltype(tag)::type;
        rs_ = std::make_unique<TypedReduceScatter<T>>(ctx_, reinterpret_cast<T*>(buf), static_cast<int>(total),
                                                      static_cast<int>(count), red.op);
      });
      rs_->buf = buf;
      rs_->count = count;
      rs_->type = type;
      rs_->op = red.op;
    }
    rs_->Run();
    // This rank's block is now at the start of buf.
    if (buf != recv) memmove(recv, buf, count * elem);
  });
}

Status GlooBackend::Broadcast(const void* send, void* recv, size_t count, DataType type, int root) {
  const size_t bytes = count * DataTypeSize(type);
  if (bytes == 0) return OkStatus();
  return Guard("broadcast", [&] {
    gloo::BroadcastOptions opts(ctx_);
    if (rank_ == root && send != recv) opts.setInput(Mut(send), bytes);
    opts.setOutput(static_cast<char*>(recv), bytes);
    opts.setRoot(root);
    gloo::broadcast(opts);
  });
}

Status GlooBackend::Reduce(const void* send, void* recv, size_t count, DataType type, const Reduction& red,
                           int root) {
  if (!ReducibleOp(red.op) || !ReducibleType(type)) return Unsupported("reduce", type, red.op);
  if (count == 0) return OkStatus();
  return Guard("reduce", [&] {
    WithReducibleType(type, [&](auto tag) {
      using T = typename decltype(tag)::type;
      gloo::ReduceOptions opts(ctx_);
      if (send != recv) opts.setInput(reinterpret_cast<T*>(Mut(send)), count);
      opts.setOutput(reinterpret_cast<T*>(recv), count);  // every rank: the ring uses it
      opts.setReduceFunction(GlooFn<T>(red.op));
      opts.setRoot(root);
      gloo::reduce(opts);
    });
  });
}

Status GlooBackend::Scatter(const void* send, void* recv, size_t count, DataType type, int root) {
  const size_t bytes = count * DataTypeSize(type);
  if (bytes == 0) return OkStatus();
  return Guard("scatter", [&] {
    gloo::ScatterOptions opts(ctx_);
    if (rank_ == root) {
      // In place the root's own block is already where its output goes (Gloo then copies it
      // onto itself).
      std::vector<char*> blocks(size_);
      for (int r = 0; r < size_; ++r) blocks[r] = At(send, r * count, type);
      opts.setInputs(blocks, bytes);
    }
    opts.setOutput(static_cast<char*>(recv), bytes);
    opts.setRoot(root);
    gloo::scatter(opts);
  });
}

Status GlooBackend::Gather(const void* send, void* recv, size_t count, DataType type, int root) {
  const size_t bytes = count * DataTypeSize(type);
  if (bytes == 0) return OkStatus();
  return Guard("gather", [&] {
    gloo::GatherOptions opts(ctx_);
    opts.setInput(Mut(send), bytes);  // in place at the root: already in its slot of recv
    if (rank_ == root) opts.setOutput(static_cast<char*>(recv), bytes * size_);
    opts.setRoot(root);
    gloo::gather(opts);
  });
}

Status GlooBackend::AllToAll(const void* send, void* recv, size_t count, DataType type) {
  const size_t bytes = count * DataTypeSize(type) * size_;
  if (bytes == 0) return OkStatus();
  const char* in = static_cast<const char*>(send);
  if (send == recv) {  // Gloo's alltoall reads and writes two buffers
    char* copy = Scratch(bytes);
    memcpy(copy, send, bytes);
    in = copy;
  }
  return Guard("alltoall", [&] {
    gloo::AlltoallOptions opts(ctx_);
    opts.setInput(Mut(in), bytes);
    opts.setOutput(static_cast<char*>(recv), bytes);
    gloo::alltoall(opts);
  });
}

Status GlooBackend::SendRecv(const void* send, int send_peer, void* recv, int recv_peer, size_t count,
                             DataType type) {
  const size_t bytes = count * DataTypeSize(type);
  if (send_peer == rank_ && recv_peer == rank_) {  // one rank: Gloo has no pair to itself
    if (bytes > 0 && send != recv) memmove(recv, send, bytes);
    return OkStatus();
  }
  if (bytes == 0) return OkStatus();
  return Guard("send_recv", [&] {
    const uint64_t slot = gloo::Slot::build(kSendRecvSlotPrefix, 0);
    auto in = ctx_->createUnboundBuffer(recv, bytes);
    auto out = ctx_->createUnboundBuffer(Mut(send), bytes);
    in->recv(recv_peer, slot);
    out->send(send_peer, slot);
    const auto timeout = ctx_->getTimeout();
    if (!in->waitRecv(timeout)) throw std::runtime_error("receive from rank " + std::to_string(recv_peer) + " aborted");
    if (!out->waitSend(timeout)) throw std::runtime_error("send to rank " + std::to_string(send_peer) + " aborted");
  });
}

Status GlooBackend::Barrier() {
  return Guard("barrier", [&] {
    gloo::BarrierOptions opts(ctx_);
    gloo::barrier(opts);
  });
}

Result<double> GlooBackend::AllReduceDouble(double value, Agg agg) {
  double out = value;
  const RedOp op = agg == Agg::kSum ? RedOp::kSum : agg == Agg::kMin ? RedOp::kMin : RedOp::kMax;
  TUTTI_RETURN_IF_ERROR(Guard("allreduce", [&] {
    gloo::AllreduceOptions opts(ctx_);
    opts.setOutput(&out, 1);
    opts.setReduceFunction(GlooFn<double>(op));
    gloo::allreduce(opts);
  }));
  return out;
}

}  // namespace tutti::perf
