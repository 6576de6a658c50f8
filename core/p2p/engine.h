// The point-to-point engine of one communicator: tag matching, the eager / rendezvous protocol
// over the transport connections, waiting with timeouts, failure handling, and a progress thread.
//
// Protocol (frame types in core/p2p/frame_types.h):
//  - size <= eager limit: DATA carries the bytes; the receiver answers ACK once a receive has
//    taken them, or NACK with its own size if the sizes differ. (A point-to-point send larger than
//    kBufferedSendMax goes as RTS instead where the connection exposes its buffer.)
//  - larger: RTS announces the size (and a descriptor when the transport can expose the buffer).
//    The receiver either reads the data one-sidedly and ACKs (shm: process_vm_readv, one copy),
//    or answers CTS, after which the sender streams BULK pieces straight into the receive buffer
//    and the receiver ACKs once all have arrived. Where one-sided access works both ways (shm),
//    a large message is split: the receiver reads the head while the sender writes the tail
//    (CTS carries the receive buffer's descriptor; the sender reports DONE), so both cores copy.
//    One-sided copies are posted to the connection and carried out by whichever thread polls,
//    outside the engine's lock; their ends come back through OnAccessDone.
// Such a send completes once the receiver has matched it, so a size mismatch is reported on both
// sides. Eager collective messages (sig != 0) and point-to-point sends of up to kBufferedSendMax
// bytes go as POST instead: the send completes once its bytes are out of the buffer (OnSent), as
// MPI's eager sends do, which saves a round trip per message; the receiver answers only a
// mismatch (NACK: it fails the sender's communicator if a collective send completed already, and
// is logged for a point-to-point one, whose receive reports it) and returns the bytes it held in
// batches (CREDIT). Past the eager budget a send goes as RTS and waits for its receive.
// A collective mismatch whose messages nobody receives is found by the next call that exchanges
// messages: signatures fold in every earlier call (core/coll/call_digest.h). Messages between
// two ranks with the same tag are matched in the order sent.
#pragma once

#include <condition_variable>
#include <functional>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/p2p/cpu_board.h"
#include "core/p2p/frame_types.h"
#include "core/p2p/op.h"
#include "core/p2p/tag_queues.h"
#include "transport/context.h"
#include "transport/transport.h"

namespace tutti {

// Messages from this size up are copied by both sides at once when one-sided access works.
constexpr uint64_t kSplitCopyMin = 1 << 20;
// Receives posted as copies read one-sidedly up to this size (unless one_sided_all); larger ones
// stream through the connection: on the 2-vCPU VM an all_gather whose two ranks read 8 MiB or
// more from each other at once took 1.05-1.2x the ring's time.
constexpr uint64_t kCopyReadMax = 4 << 20;

// Point-to-point sends up to this size complete once buffered (POST), larger ones when matched
// (where the receiver can read them one-sidedly, they go as RTS from here up: one copy instead of
// two). Same-run A/B over shm, send_recv, us (2 ranks / 4 ranks on 2 CPUs): buffered 8 KiB
// 2.98 / 6.36 vs 2.72 / 8.39 as RTS read by the receiver; 16 KiB 4.31 / 8.40 through the FIFO (as
// DATA) vs 2.88 / 8.44 as RTS, 64 KiB 9.80 / 20.7 vs 4.99 / 12.4. Buffered sends larger than this
// find their receive unposted more often (the sender runs ahead) and are then copied three times.
constexpr uint64_t kBufferedSendMax = 8 << 10;

// What a POST costs the eager budget beyond its payload: about what holding it unexpected costs
// the receiver (header, record, queue), so that a sender running ahead (a broadcast's root) with
// tiny messages is held to a few MiB at the receiver, not to 4 MiB of payload.
constexpr uint64_t kPostOverhead = 256;

// PostRecv's peer for a receive that takes a message from whichever rank sends one first (MPI's
// MPI_ANY_SOURCE); the op's `peer` says who once it matched. User tags only.
inline constexpr int kAnySource = -1;

struct EngineOptions {
  int rank = 0;
  int size = 1;
  double timeout_s = 300;
  size_t eager_limit = 64 << 10;
  // Where the connection offers one-sided reads (shm's cross-memory attach), a large message is
  // read by the receiver: true for every receive, false only for receives posted as copies
  // (PostRecv's `copy`) of up to kCopyReadMax bytes, the others asking for the data by message
  // (TUTTI_SHM_CMA).
  bool one_sided_all = false;
  size_t eager_budget = 4 << 20;  // unacknowledged eager bytes per peer (POST: + kPostOverhead)
  int spin_us = 50;
  int yield_us = 2000;  // after spinning, poll while yielding the core until this
  // A waiter that finds a rank it waits for on its own CPU may move to a free one (CpuBoard).
  bool move_waiters = true;
  // A peer from which nothing (not even a heartbeat) arrived for this long is declared dead:
  // stopped, hung, or cut off by the network. 0 = no heartbeats. Every peer is sent a PING each
  // tenth of it, by the progress thread when nothing else polls.
  double heartbeat_timeout_s = 0;
};

class P2PEngine : public FrameSink {
 public:
  explicit P2PEngine(const EngineOptions& opts);
  ~P2PEngine() override;

  // Installs the connection to `peer`: before any operation with it (eager connection), or when
  // a lazy connection arrives, which starts the sends that waited for it.
  void SetConnection(int peer, std::unique_ptr<Connection> conn);
  // The progress context of a transport (by name): connections of that transport are attached
  // to it, and each progress pass asks it which of them have work. Transports without one get
  // a context that names every connection. Before the first connection of the transport.
  void AddContext(const std::string& transport, std::unique_ptr<TransportContext> ctx);
  // Lazy connection: operations with a peer that has no connection yet ask `request(peer)`
  // (once per peer; it must not block) and wait in the engine; the connection comes through
  // SetConnection, or ConnectFailed fails the communicator. Set before the first operation.
  void SetConnector(std::function<void(int peer)> request) { connector_ = std::move(request); }
  // Called once, under the engine's lock, when the communicator fails (it must not block or call
  // back into the engine). Set before the first operation.
  void SetFailureHook(std::function<void(const Status&)> hook) { failure_hook_ = std::move(hook); }
  void ConnectFailed(int peer, const Status& why);
  std::string TransportName(int peer) const;
  const EngineOptions& options() const { return opts_; }
  void StartProgressThread();
  // Stops and joins the progress thread (idempotent; safe from the progress thread itself).
  void StopProgressThread();

  // Tags >= 0 are the user's; negative tags are reserved for collectives, whose messages also
  // carry a signature `sig` of the call that must match on both sides.
  Result<std::shared_ptr<Op>> PostSend(const void* buf, size_t bytes, int peer, int tag, uint32_t sig = 0);
  // peer may be kAnySource (tag >= 0): receives are matched in the order they were posted, each
  // message to the earliest posted receive that accepts it (its sender's or an any-source one),
  // and an any-source receive takes the earliest message that arrived unmatched.
  // `copy`: the message lands where it stays, nothing combined into it later (point-to-point
  // receives, a gather's blocks); false where it is staged for a reduction (see one_sided_all).
  Result<std::shared_ptr<Op>> PostRecv(void* buf, size_t bytes, int peer, int tag, uint32_t sig = 0,
                                       bool copy = true);
  // Waits for op (timeout_s < 0: the communicator's timeout). On timeout an unmatched receive
  // is withdrawn; anything else leaves the communicator failed.
  Status Wait(const std::shared_ptr<Op>& op, double timeout_s);
  // Drives progress once; true if op is done.
  bool Test(const std::shared_ptr<Op>& op);

  // Fails every pending and future operation with kAborted and closes connections. Prompt.
  void Abort(const std::string& why);
  // Tells peers we are leaving (CLOSE), flushes briefly, closes connections; fails pending ops.
  void Shutdown();
  // The error the communicator failed with, or OK.
  Status failure() const;
  // Fails the communicator (every pending and later operation) with `why`.
  void Fail(const Status& why);
  // Fails the communicator and tells every peer why (CLOSE with the reason), so that ranks
  // waiting for this one fail now, naming the cause, instead of at their timeout.
  void FailAndNotify(const Status& why);
  // While a thread waits on something of this engine (a collective), the progress thread keeps
  // out of its way; pair every AddWaiter with RemoveWaiter.
  void AddWaiter() { waiters_.fetch_add(1); }
  void RemoveWaiter() { waiters_.fetch_sub(1); }
  // AddWaiter for a scope.
  class WaiterScope {
   public:
    explicit WaiterScope(P2PEngine* e) : e_(e) { e_->AddWaiter(); }
    ~WaiterScope() { e_->RemoveWaiter(); }
    WaiterScope(const WaiterScope&) = delete;
    WaiterScope& operator=(const WaiterScope&) = delete;

   private:
    P2PEngine* e_;
  };
  // The board of the CPUs the communicator's ranks wait on (set before the first operation, when
  // they all share this host). SpinUs: how long a waiter for ranks [lo, hi) that would spin
  // spin_us spins (SpinUsBeside; spin_us without a board).
  void SetCpuBoard(std::shared_ptr<CpuBoard> board) { board_ = std::move(board); }
  int SpinUs(int lo, int hi, int spin_us) {
    return board_ ? SpinUsBeside(*board_, lo, hi, spin_us, opts_.move_waiters) : spin_us;
  }
  // The source that wakes this rank when a peer writes to it (set before StartProgressThread).
  void SetWakeSource(std::shared_ptr<WakeSource> wake) { wake_ = std::move(wake); }
  // Sleeps up to timeout_us, returning early when data may have arrived.
  void BlockUntilActivity(int timeout_us);
  // One non-blocking progress pass if nobody else is making progress now; true if anything moved.
  bool Poll();
  // Ranks from which messages with `tag` but another signature than `sig` wait unmatched (a
  // sign that the ranks called different collectives).
  std::vector<int> PeersWithForeignMessages(int tag, uint32_t sig) const;
  // Per-call state the engine holds now (all zero when nothing is in flight): a test and the
  // soak benchmark check that every call releases what it took.
  struct Stats {
    size_t pending_ops = 0;     // posted and not yet complete
    size_t tracked = 0;         // entries in the per-peer tables (sends, receives, unexpected)
    size_t tag_queues = 0;      // per-tag queues (posted + unexpected)
  };
  Stats stats() const;
  // Work the progress thread also drives (collectives in flight); returns true while active.
  void SetBackgroundWork(std::function<bool()> fn);

  // FrameSink.
  Result<void*> OnHeader(int peer, const FrameHeader& h) override;
  Status OnFrame(int peer, const FrameHeader& h) override;
  void OnSent(int peer, uint64_t cookie) override;
  void OnAccessDone(int peer, uint64_t cookie, const Status& st) override;

 private:
  // The payload of a message held unexpected: small ones inline, larger ones on the heap, never
  // zero-filled (the transport writes it whole before anyone reads it).
  class HeldBytes {
   public:
    void Allocate(size_t n) {
      if (n > sizeof(inline_)) heap_.reset(new char[n]);
      n_ = n;
    }
    char* data() { return n_ > sizeof(inline_) ? heap_.get() : inline_; }

   private:
    char inline_[24];
    std::unique_ptr<char[]> heap_;
    size_t n_ = 0;
  };
  struct Incoming {  // a message that arrived before its receive was posted
    FrameType type;
    uint64_t id;
    int tag;
    uint64_t size;
    uint32_t sig = 0;
    HeldBytes data;  // DATA/POST payload
    std::string descriptor;  // RTS payload
    bool complete = false;
    std::shared_ptr<Op> waiting;  // a receive that matched it before the payload finished
    uint64_t arrival = 0;         // order of arrival over all peers (for any-source receives)
  };
  // A posted one-sided copy and what it is for: a whole message read from the sender's buffer,
  // the head of a split message, or the tail the sender writes into the receiver's buffer.
  enum class AccessRole { kWholeRead, kHeadRead, kTailWrite };
  struct PendingAccess {
    std::shared_ptr<Op> op;
    AccessRole role;
    uint64_t len;
  };
  struct Peer {
    std::unique_ptr<Connection> conn;
    uint64_t next_id = 1;
    std::unordered_map<uint64_t, std::shared_ptr<Op>> sends;  // awaiting CTS or ACK/NACK
    std::unordered_map<uint64_t, std::shared_ptr<Op>> bulk_recvs;
    std::deque<std::shared_ptr<Op>> streaming;  // cleared to send, pieces left to queue
    TagQueues<Op> posted;
    TagQueues<Incoming> unexpected;
    // The DATA/RTS frame being received now (socket 0 / the ring deliver them one at a time).
    std::shared_ptr<Op> cur_op;
    std::shared_ptr<Incoming> cur_in;
    std::string cur_descriptor;
    size_t eager_inflight = 0;
    uint64_t credit_owed = 0;  // bytes of the peer's POST frames we no longer hold, not yet returned
    bool one_sided_ok = false;   // a one-sided read from this peer has worked
    bool one_sided_off = false;  // one was not possible (kUnavailable): the data is asked for
    bool reads_declined = false;  // the peer answered a send it could have read with CTS from 0
    std::unordered_map<uint64_t, PendingAccess> accesses;  // posted one-sided copies, by cookie
    std::deque<std::shared_ptr<Op>> deferred;  // sends waiting for a lazy connection, in order
    bool connect_requested = false;
    std::chrono::steady_clock::time_point last_heard;  // last frame header from this peer
    Status closed;  // set when the peer said CLOSE
  };

  Result<std::shared_ptr<Op>> Post(Op::Kind kind, void* buf, size_t bytes, int peer, int tag, uint32_t sig,
                                   bool copy = true);
  Result<std::shared_ptr<Op>> PostAnySourceRecv(void* buf, size_t bytes, int tag);
  // The receive a message from p (peer) with `tag` goes to: the earlier posted of p's first
  // receive for the tag and the first any-source one (which then learns its peer); null if none.
  std::shared_ptr<Op> TakePostedLocked(Peer& p, int peer, int tag);
  // Queues a message that arrived before its receive.
  void AddUnexpectedLocked(Peer& p, std::shared_ptr<Incoming> in);
  // Fails any-source receives that can no longer match (every peer gone, or the communicator).
  void FailAnySourceLocked(const Status& why);
  // Fails a matched receive whose message (of `type`) disagrees in signature or size, and tells
  // the sender.
  bool CheckMatchLocked(Peer& p, const std::shared_ptr<Op>& op, FrameType type, uint64_t id, uint64_t size,
                        uint32_t sig);
  Status CheckPostable(int peer, const char* what, size_t bytes, int tag) const;
  void StartSendLocked(Peer& p, const std::shared_ptr<Op>& op);
  void MatchLocked(Peer& p, const std::shared_ptr<Op>& op, const std::shared_ptr<Incoming>& in);
  void HandleRtsLocked(Peer& p, const std::shared_ptr<Op>& op, uint64_t size, const std::string& desc);
  void SendControlLocked(Peer& p, FrameType type, uint64_t id, uint64_t arg,
                         const std::string* payload = nullptr);
  void AddReceivedLocked(Peer& p, std::shared_ptr<Op> op, uint64_t bytes);
  // An eager message (DATA or POST, `bytes` of payload) was taken by a receive: ACK, or credit.
  void ConsumedEagerLocked(Peer& p, FrameType type, uint64_t id, uint64_t bytes);
  Status OnCreditLocked(Peer& p, int peer, const FrameHeader& h);
  void StartBulkLocked(Peer& p, const std::shared_ptr<Op>& op, uint64_t from, const std::string& desc);
  void PumpStreamingLocked(Peer& p);
  // OnFrame by frame type.
  Status OnDataLocked(Peer& p, int peer, const FrameHeader& h);
  Status OnRtsLocked(Peer& p, int peer, const FrameHeader& h);
  Status OnBulkLocked(Peer& p, int peer, const FrameHeader& h);
  Status OnDoneLocked(Peer& p, int peer, const FrameHeader& h);
  Status OnReplyLocked(Peer& p, int peer, const FrameHeader& h);
  Status OnCloseLocked(Peer& p, int peer, const FrameHeader& h);
  // Posts a one-sided copy of [offset, offset+len) of op's buffer; it ends in OnAccessDone.
  Status PostAccessLocked(Peer& p, const std::shared_ptr<Op>& op, AccessRole role, const std::string& desc,
                          uint64_t offset, uint64_t len);
  // Carries out posted one-sided copies; called WITHOUT mu_, so that a large copy from one peer
  // never holds up the progress of the others. True if it copied anything.
  bool RunAccesses();
  bool ProgressLocked();
  // Drives peer i's connection alone (if it has one and it is open); true if it moved.
  bool ProgressPeerLocked(int i);
  void CheckPeersLocked();
  // Sends PINGs when due and fails peers that have been silent for the heartbeat timeout.
  void HeartbeatLocked(std::chrono::steady_clock::time_point now);
  void Complete(const std::shared_ptr<Op>& op, Status st);
  void FailPeerLocked(int peer, const Status& why, bool whole_communicator);
  void FailAllLocked(const Status& why);
  void FailPeerOpsLocked(Peer& p, const Status& why);
  Status TimeoutLocked(const std::shared_ptr<Op>& op, double waited_s);
  // Queues CLOSE to every peer, with the communicator's error (if any) as the reason.
  void SayGoodbyeLocked();
  void ProgressThreadMain();

  EngineOptions opts_;
  mutable std::mutex mu_;
  std::vector<Peer> peers_;
  Status failed_;                 // the communicator-wide failure, if any
  std::atomic<bool> has_failed_{false};  // failed_ is set (read without the lock)
  std::function<void(const Status&)> failure_hook_;
  std::atomic<bool> aborted_{false};
  std::atomic<int> pending_{0};   // posted and not yet done
  std::atomic<int> waiters_{0};   // threads inside Wait()
  std::shared_ptr<CpuBoard> board_;
  uint64_t next_seq_ = 1;
  uint64_t next_arrival_ = 1;               // Incoming::arrival
  // Any-source receives not matched yet, by tag, in the order posted.
  TagQueues<Op> any_posted_;
  uint64_t next_cookie_ = 1;                // one-sided accesses
  std::atomic<int> accesses_posted_{0};     // posted and not yet reported
  std::chrono::steady_clock::time_point last_check_;
  std::chrono::steady_clock::time_point last_ping_;
  std::chrono::steady_clock::time_point last_heartbeat_check_;
  // The connections again, for what runs without mu_ (RunAccesses); set once per peer.
  std::unique_ptr<std::atomic<Connection*>[]> live_;
  std::function<void(int)> connector_;  // lazy connection (null: every peer connected at init)
  std::vector<std::pair<std::string, std::unique_ptr<TransportContext>>> contexts_;  // by transport
  std::vector<Connection*> ready_;  // scratch of ProgressLocked
  std::mutex fds_mu_;                   // wait_fds_ (read while sleeping, without mu_)
  std::vector<int> wait_fds_;
  std::string close_reason_;  // payload of our CLOSE frames (kept alive while they are queued)
  bool said_goodbye_ = false;

  std::function<bool()> background_work_;  // set before StartProgressThread
  std::shared_ptr<WakeSource> wake_;
  std::thread progress_thread_;
  std::mutex thread_mu_;
  std::condition_variable thread_cv_;
  bool stop_thread_ = false;
};

}  // namespace tutti
