/* The C API from C: 3 ranks (forked by the test driver) all-reduce, all-gather, run the
 * v-collectives, split, send/recv asynchronously, run groups and completion functions, and see
 * a clear error for bad arguments.
 * Returns 0 on success. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/c_api/tutti.h"

#define CHECK(call)                                                                         \
  do {                                                                                      \
    tuttiResult_t r_ = (call);                                                              \
    if (r_ != tuttiSuccess) {                                                               \
      fprintf(stderr, "%s:%d %s: %s (%s)\n", __FILE__, __LINE__, #call,                     \
              tuttiGetErrorString(r_), tuttiGetLastError());                                \
      return 1;                                                                             \
    }                                                                                       \
  } while (0)

/* What a completion function saw: its result and whether tuttiGetLastError had a message. */
struct completion {
  atomic_int result; /* -1 until the function ran */
  atomic_int calls;
  atomic_int has_message;
};

static void on_complete(tuttiResult_t result, void* user) {
  struct completion* c = (struct completion*)user;
  atomic_store(&c->has_message, strlen(tuttiGetLastError()) > 0);
  atomic_store(&c->result, (int)result);
  atomic_fetch_add(&c->calls, 1);
}

/* Waits up to 20 s for the function to have run. */
static int ran(struct completion* c) {
  for (int i = 0; i < 20000 && atomic_load(&c->calls) == 0; ++i) {
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  return atomic_load(&c->calls) == 1;
}

/* Groups and completion functions; 0 on success. */
static int groups_and_completions(tuttiComm_t comm, int rank, int n) {
  const int left = (rank + n - 1) % n, right = (rank + 1) % n;
  enum { kBig = 1 << 18 }; /* ints: 1 MiB, sent by rendezvous */
  int* outb = malloc(kBig * sizeof(int));
  int* from_left = malloc(kBig * sizeof(int));
  int* from_right = malloc(kBig * sizeof(int));
  if (outb == NULL || from_left == NULL || from_right == NULL) return 50;
  for (int i = 0; i < kBig; ++i) outb[i] = rank * 7 + i;
  /* Sends to both neighbours before any receive: as blocking calls outside a group each would
   * wait for a receive that comes after it. */
  int one = rank, total = -1;
  CHECK(tuttiGroupStart());
  CHECK(tuttiSend(outb, kBig, tuttiInt32, right, 40, comm, NULL));
  CHECK(tuttiSend(outb, kBig, tuttiInt32, left, 41, comm, NULL));
  CHECK(tuttiRecv(from_left, kBig, tuttiInt32, left, 40, comm, NULL));
  CHECK(tuttiRecv(from_right, kBig, tuttiInt32, right, 41, comm, NULL));
  CHECK(tuttiAllReduce(&one, &total, 1, tuttiInt32, tuttiSum, comm, NULL));
  CHECK(tuttiGroupEnd());
  for (int i = 0; i < kBig; ++i)
    if (from_left[i] != left * 7 + i || from_right[i] != right * 7 + i) return 51;
  if (total != n * (n - 1) / 2) return 52;
  /* A call refused in a group returns its error, and tuttiGroupEnd returns it again. */
  CHECK(tuttiGroupStart());
  if (tuttiSend(outb, 1, tuttiInt32, n + 5, 42, comm, NULL) != tuttiInvalidArgument) return 53;
  if (tuttiGroupEnd() != tuttiInvalidArgument) return 54;
  if (tuttiGroupEnd() != tuttiInvalidUsage) return 55; /* none open */
  free(outb);
  free(from_left);
  free(from_right);

  /* A completion function runs once the receive finishes, although its handle was freed. */
  struct completion got = {-1, 0, 0};
  int in = -1, token = rank;
  tuttiWork_t wr = NULL;
  CHECK(tuttiRecv(&in, 1, tuttiInt32, left, 43, comm, &wr));
  CHECK(tuttiWorkOnComplete(wr, on_complete, &got));
  CHECK(tuttiWorkFree(wr));
  CHECK(tuttiSend(&token, 1, tuttiInt32, right, 43, comm, NULL));
  if (!ran(&got) || atomic_load(&got.result) != tuttiSuccess || in != left) return 56;
  if (tuttiWorkOnComplete(wr, on_complete, &got) != tuttiInvalidUsage) return 57; /* freed */
  /* Abort finishes a receive nobody sends to: the function gets tuttiAborted (or, when a peer's
   * abort reaches this rank first, tuttiRemoteError) and a message. */
  tuttiComm_t dup = NULL;
  CHECK(tuttiCommSplit(comm, 0, rank, &dup));
  struct completion aborted = {-1, 0, 0};
  CHECK(tuttiRecv(&in, 1, tuttiInt32, left, 44, dup, &wr));
  CHECK(tuttiWorkOnComplete(wr, on_complete, &aborted));
  if (tuttiWorkOnComplete(wr, NULL, &aborted) != tuttiInvalidArgument) return 58;
  CHECK(tuttiCommAbort(dup));
  const int finished = ran(&aborted), why = atomic_load(&aborted.result);
  if (!finished || (why != tuttiAborted && why != tuttiRemoteError) || !atomic_load(&aborted.has_message)) {
    fprintf(stderr, "rank %d: after abort: %d calls, result %d, message %d\n", rank, atomic_load(&aborted.calls),
            atomic_load(&aborted.result), atomic_load(&aborted.has_message));
    return 59;
  }
  CHECK(tuttiWorkFree(wr));
  CHECK(tuttiCommDestroy(dup));
  return 0;
}

int c_api_rank_main(void) {
  tuttiComm_t comm = NULL, sub = NULL;
  int rank = -1, n = -1;
  CHECK(tuttiCommInitFromEnv(&comm));
  CHECK(tuttiCommUserRank(comm, &rank));
  CHECK(tuttiCommCount(comm, &n));
  float x[4] = {1.0f * rank, 2.0f, 3.0f, 4.0f}, sum[4];
  CHECK(tuttiAllReduce(x, sum, 4, tuttiFloat32, tuttiSum, comm, NULL));
  if (sum[0] != n * (n - 1) / 2.0f || sum[1] != 2.0f * n) return 2;
  int mine = rank * 10, all[16];
  tuttiWork_t w = NULL;
  CHECK(tuttiAllGather(&mine, all, 1, tuttiInt32, comm, &w));
  CHECK(tuttiWorkWait(w, -1));
  CHECK(tuttiWorkFree(w));
  for (int i = 0; i < n; ++i)
    if (all[i] != 10 * i) return 3;
  /* Ring of tokens with async send/recv. */
  int out = rank, in = -1;
  tuttiWork_t ws = NULL, wr = NULL;
  CHECK(tuttiRecv(&in, 1, tuttiInt32, (rank + n - 1) % n, 5, comm, &wr));
  CHECK(tuttiSend(&out, 1, tuttiInt32, (rank + 1) % n, 5, comm, &ws));
  CHECK(tuttiWorkWait(ws, -1));
  CHECK(tuttiWorkWait(wr, -1));
  tuttiWorkFree(ws);
  tuttiWorkFree(wr);
  if (in != (rank + n - 1) % n) return 4;
  /* Receive from any source: the ring again, the receiver learns its sender. */
  int src = -2;
  in = -1;
  CHECK(tuttiRecv(&in, 1, tuttiInt32, TUTTI_ANY_SOURCE, 6, comm, &wr));
  CHECK(tuttiSend(&out, 1, tuttiInt32, (rank + 1) % n, 6, comm, &ws));
  CHECK(tuttiWorkWait(ws, -1));
  CHECK(tuttiWorkWait(wr, -1));
  CHECK(tuttiWorkGetSource(wr, &src));
  tuttiWorkFree(ws);
  tuttiWorkFree(wr);
  if (n > 1 && (src != (rank + n - 1) % n || in != src)) return 4;
  /* Rank 0 stays out of the split. */
  CHECK(tuttiCommSplit(comm, rank == 0 ? TUTTI_SPLIT_NOCOLOR : 1, rank, &sub));
  if ((rank == 0) != (sub == NULL)) return 5;
  if (sub != NULL) {
    int sn = 0;
    CHECK(tuttiCommCount(sub, &sn));
    if (sn != n - 1) return 6;
    CHECK(tuttiCommDestroy(sub));
  }
  /* Bad input is an error code with a message, not a crash. */
  if (tuttiAllReduce(x, sum, 4, (tuttiDataType_t)99, tuttiSum, comm, NULL) != tuttiInvalidArgument) return 7;
  if (tuttiBroadcast(x, x, 4, tuttiFloat32, n + 5, comm, NULL) != tuttiInvalidArgument) return 8;
  if (strstr(tuttiGetLastError(), "root") == NULL) return 9;
  if (tuttiAllReduce(x, sum, 4, tuttiFloat32, tuttiPremulSum, comm, NULL) != tuttiInvalidArgument) return 10;
  /* Bitwise ops: integer types only. */
  if (tuttiAllReduce(x, sum, 4, tuttiFloat32, tuttiBxor, comm, NULL) != tuttiInvalidArgument) return 13;
  if (strstr(tuttiGetLastError(), "integer type") == NULL) return 14;
  {
    uint32_t bits = 1u << rank, all32 = 0;
    CHECK(tuttiAllReduce(&bits, &all32, 1, tuttiUint32, tuttiBor, comm, NULL));
    if (all32 != (n >= 32 ? 0xFFFFFFFFu : (1u << n) - 1)) return 15;
  }
  /* v-collectives: rank i's block holds i + 1 elements (values 100 * i + j). */
  {
    size_t counts[16], displs[16], total = 0;
    for (int i = 0; i < n; ++i) {
      counts[i] = (size_t)i + 1;
      displs[i] = total + 1; /* one element of gap before each block */
      total += counts[i] + 1;
    }
    int mine_v[16], got[64], back[16];
    for (int j = 0; j <= rank; ++j) mine_v[j] = 100 * rank + j;
    memset(got, 0xff, sizeof got);
    CHECK(tuttiAllGatherV(mine_v, (size_t)rank + 1, got, counts, displs, tuttiInt32, comm, NULL));
    for (int i = 0; i < n; ++i)
      for (size_t j = 0; j < counts[i]; ++j)
        if (got[displs[i] + j] != 100 * i + (int)j) return 30;
    /* gather_v at the last rank (others pass no counts), scatter_v back from it. */
    memset(got, 0xff, sizeof got);
    CHECK(tuttiGatherV(mine_v, (size_t)rank + 1, got, rank == n - 1 ? counts : NULL, NULL, tuttiInt32, n - 1,
                       comm, &w));
    CHECK(tuttiWorkWait(w, -1));
    CHECK(tuttiWorkFree(w));
    if (rank == n - 1) {
      size_t at = 0;
      for (int i = 0; i < n; ++i)
        for (size_t j = 0; j < counts[i]; ++j)
          if (got[at++] != 100 * i + (int)j) return 31;
    }
    memset(back, 0, sizeof back);
    CHECK(tuttiScatterV(got, rank == n - 1 ? counts : NULL, NULL, back, (size_t)rank + 1, tuttiInt32, n - 1, comm,
                        NULL));
    for (int j = 0; j <= rank; ++j)
      if (back[j] != 100 * rank + j) return 32;
    /* all_to_all_v: rank r sends block i (r + i) % 2 + 1 elements of value 10 * r + i. */
    size_t sc[16], rc[16], sd[16], rd[16], sat = 0, rat = 0;
    int sendv[64], recvv[64];
    for (int i = 0; i < n; ++i) {
      sc[i] = (size_t)((rank + i) % 2 + 1);
      rc[i] = sc[i];
      sd[i] = sat;
      rd[i] = rat;
      for (size_t j = 0; j < sc[i]; ++j) sendv[sat + j] = 10 * rank + i;
      sat += sc[i];
      rat += rc[i];
    }
    CHECK(tuttiAllToAllV(sendv, sc, sd, recvv, rc, rd, tuttiInt32, comm, NULL));
    for (int i = 0; i < n; ++i)
      for (size_t j = 0; j < rc[i]; ++j)
        if (recvv[rd[i] + j] != 10 * i + rank) return 33;
    /* reduce_scatter_v: every rank contributes 1 + its rank to every element. */
    float in_v[64], out_v[16];
    for (size_t j = 0; j < total; ++j) in_v[j] = 1.0f + rank;
    CHECK(tuttiReduceScatterV(in_v, out_v, counts, tuttiFloat32, tuttiSum, comm, NULL));
    for (size_t j = 0; j < counts[rank]; ++j)
      if (out_v[j] != n * (n + 1) / 2.0f) return 34;
    CHECK(tuttiReduceScatterV(in_v, out_v, counts, tuttiFloat32, tuttiAvg, comm, NULL));
    for (size_t j = 0; j < counts[rank]; ++j)
      if (out_v[j] != (n + 1) / 2.0f) return 37;
    /* A missing counts array is an error naming it. */
    if (tuttiAllGatherV(mine_v, 1, got, NULL, NULL, tuttiInt32, comm, NULL) != tuttiInvalidArgument) return 35;
    if (strstr(tuttiGetLastError(), "null receive counts") == NULL) return 36;
  }
  CHECK(tuttiBarrier(comm, NULL));
  /* A work handle freed twice is an error, not a double free. */
  CHECK(tuttiBarrier(comm, &w));
  CHECK(tuttiWorkWait(w, -1));
  CHECK(tuttiWorkFree(w));
  if (tuttiWorkFree(w) != tuttiInvalidUsage) return 11;
  if (tuttiWorkWait(w, -1) != tuttiInvalidUsage) return 12;
  /* A count that passes the size checks but cannot be allocated is an error code naming the
   * size, not std::bad_alloc. It fails the communicator it ran on (here a copy of comm): a rank
   * that gets there after a peer failed hears the peer's reason (tuttiRemoteError, same text). */
  {
    char small[16];
    tuttiComm_t dup = NULL;
    CHECK(tuttiCommSplit(comm, 0, rank, &dup));
    tuttiResult_t r = tuttiAllToAll(small, small, (size_t)1 << 40, tuttiInt8, dup, NULL);
    if (r != tuttiSystemError && r != tuttiRemoteError) return 13;
    if (strstr(tuttiGetLastError(), "out of memory") == NULL) return 14;
    if (strstr(tuttiGetLastError(), "bytes") == NULL) return 15;
    if (tuttiBarrier(dup, NULL) == tuttiSuccess) return 16; /* that communicator is failed now */
    CHECK(tuttiCommDestroy(dup));
  }
  /* Registration: a handle per call, deregistered once; twice is an error. */
  {
    void* h1 = NULL;
    void* h2 = NULL;
    CHECK(tuttiCommRegister(comm, x, sizeof(x), &h1));
    CHECK(tuttiCommRegister(comm, x, sizeof(float), &h2)); /* inside the first: shares it */
    if (h1 == NULL || h2 == NULL || h1 == h2) return 21;
    CHECK(tuttiCommDeregister(comm, h2));
    if (tuttiCommDeregister(comm, h2) != tuttiInvalidUsage) return 22;
    if (tuttiCommRegister(comm, NULL, 4, &h2) != tuttiInvalidArgument) return 23;
    CHECK(tuttiAllReduce(x, sum, 4, tuttiFloat32, tuttiSum, comm, NULL)); /* registered buffers work */
    (void)h1; /* left registered: destroying the communicator releases it */
  }
  {
    int r = groups_and_completions(comm, rank, n);
    if (r != 0) return r;
  }
  CHECK(tuttiBarrier(comm, NULL));
  CHECK(tuttiCommDestroy(comm));
  /* Destroying twice is an error, never a double free; so is using the destroyed handle. */
  if (tuttiCommDestroy(comm) != tuttiInvalidUsage) return 17;
  if (strstr(tuttiGetLastError(), "already destroyed") == NULL) return 18;
  if (tuttiCommCount(comm, &n) != tuttiInvalidUsage) return 19;
  if (tuttiCommDestroy((tuttiComm_t)&rank) != tuttiInvalidArgument) return 20;
  return 0;
}
