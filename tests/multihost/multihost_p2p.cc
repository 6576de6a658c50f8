// multihost_p2p: every rank exchanges messages of several sizes with every other rank, over the
// transports tutti picks (shm inside a host, tcp between hosts), and checks every byte.
// multihost_test.sh runs it under tuttirun on "hosts" made of network namespaces.
//
//   tuttirun -n 2 --nnodes 2 --node-rank I --master-addr A --master-port P --secret S multihost_p2p
//
// options:
//   --rounds N      exchange rounds (default 1)
//   --fault-wait    after the first round, print "rank R waiting for rank P" and post a receive
//                   from the next rank that nobody sends; print the error it ends with and exit 0
//                   (3 if it succeeded). The test takes a host's link down meanwhile.
//
// Ranks on the same node (rank / LOCAL_WORLD_SIZE, as tuttirun numbers them) must reach each
// other over "shm", all others over "tcp". Prints one line per rank:
//   rank R ok: N exchanges, transports [self shm tcp tcp], B bytes each way, S s
// and exits 1 with the Status message on any error.
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/communicator.h"

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kSizes[] = {0, 1, 4099, 65537, (3u << 20) + 5, 16u << 20};
constexpr size_t kGuard = 64;               // bytes after each receive buffer that must stay put
constexpr unsigned char kGuardByte = 0x5A;
constexpr int kFaultTag = 999;

double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

uint64_t Mix(uint64_t x) {  // splitmix64
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The bytes `src` sends `dst` in round `round` for size index `k`: different for every message.
void Fill(unsigned char* p, size_t n, int src, int dst, int round, int k) {
  uint64_t seed = Mix((uint64_t(src) << 40) ^ (uint64_t(dst) << 24) ^ (uint64_t(round) << 8) ^ uint64_t(k));
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t v = Mix(seed + i);
    std::memcpy(p + i, &v, 8);
  }
  if (i < n) {
    uint64_t v = Mix(seed + i);
    std::memcpy(p + i, &v, n - i);
  }
}

struct Exchange {
  int peer;
  std::vector<unsigned char> send, recv;
  tutti::Work send_work, recv_work;
};

// One round: for every size, a receive from and a send to every peer, all in flight at once.
tutti::Status Round(tutti::Communicator& c, int round, int* exchanges, uint64_t* bytes) {
  const int me = c.rank(), n = c.size();
  for (int k = 0; k < static_cast<int>(std::size(kSizes)); ++k) {
    const size_t size = kSizes[k];
    const int tag = round * 100 + k;
    std::vector<Exchange> ex;
    for (int p = 0; p < n; ++p) {
      if (p == me) continue;
      Exchange e;
      e.peer = p;
      e.send.resize(size);
      Fill(e.send.data(), size, me, p, round, k);
      e.recv.assign(size + kGuard, kGuardByte);
      std::memset(e.recv.data(), static_cast<unsigned char>(0xC3 ^ round), size);  // not the data
      ex.push_back(std::move(e));
    }
    for (Exchange& e : ex) {
      auto w = c.IRecv(e.recv.data(), size, e.peer, tag);
      if (!w.ok()) return w.status();
      e.recv_work = std::move(*w);
    }
    for (Exchange& e : ex) {
      auto w = c.ISend(e.send.data(), size, e.peer, tag);
      if (!w.ok()) return w.status();
      e.send_work = std::move(*w);
    }
    for (Exchange& e : ex) {
      TUTTI_RETURN_IF_ERROR(e.recv_work.Wait());
      TUTTI_RETURN_IF_ERROR(e.send_work.Wait());
    }
    for (Exchange& e : ex) {
      std::vector<unsigned char> want(size);
      Fill(want.data(), size, e.peer, me, round, k);
      if (size > 0 && std::memcmp(want.data(), e.recv.data(), size) != 0) {
        size_t at = 0;
        while (want[at] == e.recv[at]) ++at;
        size_t bad = 0;
        for (size_t i = at; i < size; ++i) bad += want[i] != e.recv[i];
        return tutti::MismatchError(
            "rank " + std::to_string(me) + ": round " + std::to_string(round) + ", " + std::to_string(size) +
            " bytes from rank " + std::to_string(e.peer) + " over " + c.TransportTo(e.peer) + ": byte " +
            std::to_string(at) + " is " + std::to_string(e.recv[at]) + ", expected " + std::to_string(want[at]) +
            " (" + std::to_string(bad) + " bytes wrong)");
      }
      for (size_t i = size; i < size + kGuard; ++i) {
        if (e.recv[i] != kGuardByte)
          return tutti::MismatchError("rank " + std::to_string(me) + ": " + std::to_string(size) +
                                      "-byte receive from rank " + std::to_string(e.peer) +
                                      " wrote past the end of the buffer (offset " + std::to_string(i) + ")");
      }
      ++*exchanges;
      *bytes += size;
    }
  }
  return tutti::OkStatus();
}

int Fail(const tutti::Status& st) {
  fprintf(stderr, "%s\n", st.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  int rounds = 1;
  bool fault_wait = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--rounds" && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
    } else if (a == "--fault-wait") {
      fault_wait = true;
    } else {
      fprintf(stderr, "usage: %s [--rounds N] [--fault-wait]\n", argv[0]);
      return 2;
    }
  }
  if (rounds < 1) rounds = 1;

  auto comm = tutti::Communicator::InitFromEnv();
  if (!comm.ok()) return Fail(comm.status());
  tutti::Communicator& c = **comm;
  const int me = c.rank(), n = c.size(), node_size = c.local_size();

  std::string transports;
  for (int p = 0; p < n; ++p) {
    std::string got = c.TransportTo(p);
    std::string want = p == me ? "self" : (p / node_size == me / node_size ? "shm" : "tcp");
    if (got != want)
      return Fail(tutti::MismatchError("rank " + std::to_string(me) + " reaches rank " + std::to_string(p) +
                                       " over \"" + got + "\", expected \"" + want + "\""));
    transports += (p ? " " : "") + got;
  }

  int exchanges = 0;
  uint64_t bytes = 0;
  auto start = Clock::now();
  for (int r = 0; r < (fault_wait ? 1 : rounds); ++r) {
    tutti::Status st = Round(c, r, &exchanges, &bytes);
    if (!st.ok()) return Fail(st);
  }
  printf("rank %d ok: %d exchanges, transports [%s], %" PRIu64 " bytes each way, %.2f s\n", me, exchanges,
         transports.c_str(), bytes, Since(start));
  if (!fault_wait) return 0;

  // Fault mode: nobody sends this message; the test breaks a link meanwhile.
  const int peer = (me + 1) % n;
  unsigned char buf[8];
  printf("rank %d waiting for rank %d (timeout %.1f s)\n", me, peer, c.timeout());
  auto t = Clock::now();
  tutti::Status st = c.Recv(buf, sizeof(buf), peer, kFaultTag);
  if (st.ok()) {
    printf("rank %d fault: receive from rank %d unexpectedly succeeded after %.1f s\n", me, peer, Since(t));
    return 3;
  }
  printf("rank %d fault: receive from rank %d failed after %.1f s: %s\n", me, peer, Since(t), st.ToString().c_str());
  t = Clock::now();
  c.Destroy();
  printf("rank %d closed the communicator in %.1f s\n", me, Since(t));
  return 0;
}
