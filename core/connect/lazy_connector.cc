#include "core/connect/lazy_connector.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "core/base/deadline.h"
#include "core/base/logging.h"

namespace tutti {

namespace {
using Clock = std::chrono::steady_clock;

std::string R(int r) { return "rank " + std::to_string(r); }
std::string Inbox(int r) { return "lazy/inbox/" + std::to_string(r) + "/"; }

void Nap(int us) {
  timespec ts{0, us * 1000L};
  nanosleep(&ts, nullptr);
}
}  // namespace

struct LazyConnector::Shared {
  std::shared_ptr<Store> store;
  Options opts;
  std::vector<PeerInfo> cards;
  std::vector<std::shared_ptr<TransportSetup>> transport_of;
  Deliver deliver;
  std::atomic<bool> stop{false};
  mutable std::mutex mu;
  std::set<int> begun;  // guarded by mu
};

namespace {
// The setup exchange of one pair: its blobs under "lazy/<lower>-<higher>/" in the store, every
// read polled (the store client carries one request at a time, so a long blocking read would
// hold up the other pairs' setups) until the pair's deadline or the connector stops.
class PairExchange : public SetupExchange {
 public:
  PairExchange(Store& store, int rank, int size, int peer, uint64_t comm_id, Clock::time_point deadline,
               const std::atomic<bool>& stop)
      : store_(store), rank_(rank), size_(size), comm_id_(comm_id), deadline_(deadline), stop_(stop) {
    prefix_ = "lazy/" + std::to_string(std::min(rank, peer)) + "-" + std::to_string(std::max(rank, peer)) + "/";
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Status Put(const std::string& key, const std::string& blob) override { return store_.Set(prefix_ + key, blob); }
  Result<std::string> Get(int from, const std::string& key, const std::string& what) override {
    const std::string k = prefix_ + key;
    int nap_us = 100;
    while (true) {
      TUTTI_ASSIGN_OR_RETURN(bool there, store_.Check({k}));
      if (there) return store_.Get(k, 1.0);
      if (stop_.load()) return AbortedError(R(rank_) + ": communicator destroyed while connecting: " + what);
      if (Clock::now() >= deadline_)
        return TimeoutError(R(rank_) + ": " + what + ": " + R(from) +
                            " did not do its half of the connection in time (is it alive, and in this job?)");
      Nap(nap_us);
      nap_us = std::min(nap_us * 2, 10000);
    }
  }
  Clock::time_point deadline() const override { return deadline_; }
  Result<uint64_t> CommId() override { return comm_id_; }

 private:
  Store& store_;
  const int rank_, size_;
  const uint64_t comm_id_;
  const Clock::time_point deadline_;
  const std::atomic<bool>& stop_;
  std::string prefix_;
};
}  // namespace

LazyConnector::LazyConnector(std::shared_ptr<Store> store, const Options& opts, std::vector<PeerInfo> cards,
                             std::vector<std::shared_ptr<TransportSetup>> transport_of, Deliver deliver)
    : shared_(std::make_shared<Shared>()) {
  shared_->store = std::move(store);
  shared_->opts = opts;
  shared_->cards = std::move(cards);
  shared_->transport_of = std::move(transport_of);
  shared_->deliver = std::move(deliver);
}

LazyConnector::~LazyConnector() { Stop(); }

void LazyConnector::Start() {
  watcher_ = std::thread([this] { WatchInbox(); });
}

void LazyConnector::Stop() {
  shared_->stop.store(true);
  if (watcher_.joinable()) watcher_.join();
}

void LazyConnector::Request(int peer) {
  std::lock_guard<std::mutex> lock(shared_->mu);
  Begin(peer, true);
}

void LazyConnector::Begin(int peer, bool tell_peer) {
  if (shared_->stop.load() || peer < 0 || peer >= shared_->opts.size || peer == shared_->opts.rank) return;
  if (!shared_->begun.insert(peer).second) return;
  std::thread(ConnectPair, shared_, peer, tell_peer).detach();
}

void LazyConnector::WatchInbox() {
  Store& store = *shared_->store;
  const std::string inbox = Inbox(shared_->opts.rank);
  int64_t next = 0;
  int nap_us = 200;
  while (!shared_->stop.load()) {
    const std::string slot = inbox + std::to_string(next);
    Result<bool> there = store.Check({slot});
    if (there.ok() && *there) {
      Result<std::string> who = store.Get(slot, 1.0);
      if (who.ok()) {
        ++next;
        (void)store.Delete(slot);  // read once; keeps the store small
        char* end = nullptr;
        long r = std::strtol(who->c_str(), &end, 10);
        if (*end == '\0' && r >= 0 && r < shared_->opts.size) {
          std::lock_guard<std::mutex> lock(shared_->mu);
          Begin(static_cast<int>(r), false);
        } else {
          TUTTI_LOG(Warn, Init, "rank %d: malformed connection request \"%s\" in the store ignored",
                    shared_->opts.rank, who->c_str());
        }
        nap_us = 200;
        continue;
      }
    }
    if (!there.ok()) {
      // The store went away (its host rank left): no further pair can be connected; the
      // operations that need one end at their timeout, naming the peer.
      TUTTI_LOG(Info, Init, "rank %d: stopped watching for connection requests: %s", shared_->opts.rank,
                there.status().ToString().c_str());
      return;
    }
    Nap(nap_us);
    nap_us = std::min(nap_us * 2, 20000);
  }
}

void LazyConnector::ConnectPair(std::shared_ptr<Shared> s, int peer, bool tell_peer) {
  const int me = s->opts.rank;
  const Clock::time_point deadline = Clock::now() + WaitDuration(s->opts.timeout_s);
  TransportSetup& transport = *s->transport_of[peer];
  auto result = [&]() -> Result<std::unique_ptr<Connection>> {
    if (tell_peer) {
      TUTTI_ASSIGN_OR_RETURN(int64_t n, s->store->Add(Inbox(peer) + "count", 1));
      TUTTI_RETURN_IF_ERROR(s->store->Set(Inbox(peer) + std::to_string(n - 1), std::to_string(me)));
    }
    PairExchange ex(*s->store, me, s->opts.size, peer, s->opts.comm_id, deadline, s->stop);
    TUTTI_ASSIGN_OR_RETURN(auto conns, transport.Connect(s->cards, {peer}, ex));
    auto it = conns.find(peer);
    if (it == conns.end() || !it->second) return InternalError(std::string(transport.name()) + " returned no connection");
    return std::move(it->second);
  }();
  if (s->stop.load()) return;
  if (!result.ok()) {
    result = result.status().WithContext(R(me) + ": connecting to " + R(peer) + " (" + transport.name() + ")");
  } else {
    TUTTI_LOG(Info, Init, "rank %d: connected to rank %d (%s, lazily)", me, peer, transport.name());
  }
  s->deliver(peer, std::move(result));
}

}  // namespace tutti
