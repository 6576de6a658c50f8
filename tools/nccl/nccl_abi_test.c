/* An NCCL program, compiled against NCCL's own nccl.h, run on tutti's libnccl.so.2 with host
 * memory: rank processes made by fork (the parent's id from ncclGetUniqueId reaches them by pipe), every
 * collective checked, send/recv in a group, a premul_sum op, a split, errors; then one thread
 * driving every rank's communicator (ncclCommInitAll, and init inside a group as nccl-tests does).
 *   nccl_abi_test [NRANKS]   (exit status 0: all checks passed) */
#include <nccl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK(call)                                                                              \
  do {                                                                                           \
    ncclResult_t r_ = (call);                                                                    \
    if (r_ != ncclSuccess) {                                                                     \
      fprintf(stderr, "rank %d: %s failed: %s (%s)\n", rank, #call, ncclGetErrorString(r_),     \
              ncclGetLastError(NULL));                                                           \
      exit(10);                                                                                  \
    }                                                                                            \
  } while (0)
#define EXPECT(cond)                                                                             \
  do {                                                                                           \
    if (!(cond)) {                                                                               \
      fprintf(stderr, "rank %d: line %d: %s\n", rank, __LINE__, #cond);                          \
      exit(11);                                                                                  \
    }                                                                                            \
  } while (0)

static int rank = -1;

/* The rank processes are forked before the parent touches the library, as MPI launches them:
 * a fork while another thread of the parent (the store server that ncclGetUniqueId starts) holds
 * an allocator lock leaves the child deadlocked in its first malloc (sanitizer runtimes do not
 * guard their allocator across fork). The parent then makes the id and hands it to each child
 * through a pipe, as a program would broadcast it. */
static void run_rank(int id_fd, int n, int me) {
  rank = me;
  ncclUniqueId id;
  size_t got = 0;
  while (got < sizeof(id)) {
    ssize_t k = read(id_fd, (char*)&id + got, sizeof(id) - got);
    if (k <= 0) {
      fprintf(stderr, "rank %d: no unique id from the parent\n", me);
      exit(12);
    }
    got += (size_t)k;
  }
  close(id_fd);
  ncclComm_t comm;
  CHECK(ncclCommInitRank(&comm, n, id, me));
  int v = 0, count = 0, r = -1;
  CHECK(ncclGetVersion(&v));
  EXPECT(v == NCCL_VERSION_CODE);
  CHECK(ncclCommCount(comm, &count));
  CHECK(ncclCommUserRank(comm, &r));
  EXPECT(count == n && r == me);
  cudaStream_t stream = 0;

  float x[5], y[5];
  for (int i = 0; i < 5; ++i) x[i] = (float)(me + 1) * (i + 1);
  CHECK(ncclAllReduce(x, y, 5, ncclFloat, ncclSum, comm, stream));
  for (int i = 0; i < 5; ++i) EXPECT(y[i] == (float)(n * (n + 1) / 2) * (i + 1));
  CHECK(ncclAllReduce(x, x, 5, ncclFloat32, ncclAvg, comm, stream)); /* in place */
  for (int i = 0; i < 5; ++i) EXPECT(x[i] == (float)(n + 1) / 2 * (i + 1));
  int mx = me * 10, mxo = -1;
  CHECK(ncclAllReduce(&mx, &mxo, 1, ncclInt32, ncclMax, comm, stream));
  EXPECT(mxo == (n - 1) * 10);

  double b[3] = {0, 0, 0};
  if (me == n - 1) b[0] = 1.5, b[1] = -2, b[2] = 1e300;
  CHECK(ncclBcast(b, 3, ncclDouble, n - 1, comm, stream));
  EXPECT(b[0] == 1.5 && b[1] == -2 && b[2] == 1e300);
  int64_t bs = me == 0 ? 77 : 0, br = 0;
  CHECK(ncclBroadcast(&bs, &br, 1, ncclInt64, 0, comm, stream));
  EXPECT(br == 77);

  int64_t red = me + 1, redo = 0;
  CHECK(ncclReduce(&red, &redo, 1, ncclInt64, ncclProd, 0, comm, stream));
  if (me == 0) {
    int64_t f = 1;
    for (int i = 1; i <= n; ++i) f *= i;
    EXPECT(redo == f);
  }

  int32_t mine[2] = {me, -me}, all[64];
  CHECK(ncclAllGather(mine, all, 2, ncclInt32, comm, stream));
  for (int i = 0; i < n; ++i) EXPECT(all[2 * i] == i && all[2 * i + 1] == -i);

  uint32_t rs_in[64], rs_out = 0;
  for (int i = 0; i < n; ++i) rs_in[i] = (uint32_t)(100 * i + me);
  CHECK(ncclReduceScatter(rs_in, &rs_out, 1, ncclUint32, ncclSum, comm, stream));
  EXPECT(rs_out == (uint32_t)(100 * me * n + n * (n - 1) / 2));

  int8_t a2a_in[64], a2a_out[64];
  for (int i = 0; i < n; ++i) a2a_in[i] = (int8_t)(me * 10 + i);
  CHECK(ncclAlltoAll(a2a_in, a2a_out, 1, ncclInt8, comm, stream));
  for (int i = 0; i < n; ++i) EXPECT(a2a_out[i] == (int8_t)(i * 10 + me));

  float g_in = (float)me, g_out[64];
  CHECK(ncclGather(&g_in, g_out, 1, ncclFloat, 1 % n, comm, stream));
  if (me == 1 % n)
    for (int i = 0; i < n; ++i) EXPECT(g_out[i] == (float)i);
  float s_in[64], s_out = -1;
  for (int i = 0; i < n; ++i) s_in[i] = 0.5f * i;
  CHECK(ncclScatter(s_in, &s_out, 1, ncclFloat, 0, comm, stream));
  EXPECT(s_out == 0.5f * me);

  /* A ring both ways in one group: each rank sends and receives at once. */
  int next = (me + 1) % n, prev = (me + n - 1) % n;
  int to_next = me, to_prev = -me, from_prev = -100, from_next = -100;
  CHECK(ncclGroupStart());
  CHECK(ncclSend(&to_next, 1, ncclInt, next, comm, stream));
  CHECK(ncclSend(&to_prev, 1, ncclInt, prev, comm, stream));
  CHECK(ncclRecv(&from_prev, 1, ncclInt, prev, comm, stream));
  CHECK(ncclRecv(&from_next, 1, ncclInt, next, comm, stream));
  CHECK(ncclGroupEnd());
  if (n > 1) EXPECT(from_prev == prev && from_next == -next);

  /* premul_sum: each rank scales by its own factor before the sum. */
  ncclRedOp_t pm;
  float factor = (float)(me + 1);
  CHECK(ncclRedOpCreatePreMulSum(&pm, &factor, ncclFloat, ncclScalarHostImmediate, comm));
  EXPECT((int)pm >= (int)ncclNumOps);
  float one = 1, sum = 0;
  CHECK(ncclAllReduce(&one, &sum, 1, ncclFloat, pm, comm, stream));
  EXPECT(sum == (float)(n * (n + 1) / 2));
  CHECK(ncclRedOpDestroy(pm, comm));
  EXPECT(ncclAllReduce(&one, &sum, 1, ncclFloat, pm, comm, stream) == ncclInvalidArgument);

  /* Registration. */
  void* handle = NULL;
  CHECK(ncclCommRegister(comm, y, sizeof(y), &handle));
  CHECK(ncclAllReduce(x, y, 5, ncclFloat, ncclSum, comm, stream));
  CHECK(ncclCommDeregister(comm, handle));

  /* Split: odd and even ranks; rank 0 stays out. */
  ncclComm_t sub = NULL;
  CHECK(ncclCommSplit(comm, me == 0 ? NCCL_SPLIT_NOCOLOR : me % 2, me, &sub, NULL));
  EXPECT((me == 0) == (sub == NULL));
  if (sub != NULL) {
    int sn = 0, one_each = 1, members = 0;
    CHECK(ncclCommCount(sub, &sn));
    CHECK(ncclAllReduce(&one_each, &members, 1, ncclInt, ncclSum, sub, stream));
    EXPECT(members == sn);
    CHECK(ncclCommDestroy(sub));
  }

  /* Errors are codes with a message, never a crash. */
  EXPECT(ncclAllReduce(x, y, 5, (ncclDataType_t)42, ncclSum, comm, stream) == ncclInvalidArgument);
  EXPECT(strstr(ncclGetLastError(comm), "data type") != NULL);
  EXPECT(ncclBroadcast(x, y, 5, ncclFloat, n + 3, comm, stream) == ncclInvalidArgument);
  EXPECT(ncclGroupEnd() == ncclInvalidUsage);
  ncclResult_t async;
  CHECK(ncclCommGetAsyncError(comm, &async));
  EXPECT(async == ncclSuccess);
  CHECK(ncclCommFinalize(comm));
  CHECK(ncclCommDestroy(comm));
  EXPECT(ncclCommCount(comm, &count) == ncclInvalidArgument); /* destroyed handle */
  exit(0);
}

/* One thread, every rank's communicator: InitAll, and init inside a group with a unique id. */
static int one_thread(int n) {
  rank = 0;
  ncclComm_t comms[8];
  float in[8][4], out[8][4];
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 0) {
      CHECK(ncclCommInitAll(comms, n, NULL));
    } else {
      ncclUniqueId id;
      CHECK(ncclGetUniqueId(&id));
      CHECK(ncclGroupStart());
      for (int i = 0; i < n; ++i) CHECK(ncclCommInitRank(&comms[i], n, id, i));
      CHECK(ncclGroupEnd());
    }
    CHECK(ncclGroupStart());
    for (int i = 0; i < n; ++i) {
      for (int k = 0; k < 4; ++k) in[i][k] = (float)(i + k);
      CHECK(ncclAllReduce(in[i], out[i], 4, ncclFloat, ncclSum, comms[i], 0));
    }
    CHECK(ncclGroupEnd());
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < 4; ++k) EXPECT(out[i][k] == (float)(n * (n - 1) / 2 + n * k));
    for (int i = 0; i < n; ++i) CHECK(ncclCommDestroy(comms[i]));
  }
  return 0;
}

/* Waits for every child until `deadline_s` has passed, then kills those left: a hung rank is a
 * failure naming it, never a hung test. */
static int wait_children(const pid_t* pids, int n, int deadline_s) {
  int failed = 0, left = n;
  int done[8] = {0};
  for (long waited_ms = 0; left > 0; waited_ms += 10) {
    for (int r = 0; r < n; ++r) {
      int st = 0;
      if (done[r] || waitpid(pids[r], &st, WNOHANG) != pids[r]) continue;
      done[r] = 1;
      --left;
      if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "rank %d ended with status %d\n", r, st);
        failed = 1;
      }
    }
    if (left > 0 && waited_ms >= deadline_s * 1000L) {
      for (int r = 0; r < n; ++r) {
        if (done[r]) continue;
        fprintf(stderr, "rank %d (pid %d) did not finish within %d s: killed\n", r, (int)pids[r], deadline_s);
        kill(pids[r], SIGKILL);
        waitpid(pids[r], NULL, 0);
      }
      return 1;
    }
    if (left > 0) usleep(10000);
  }
  return failed;
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 3;
  if (n < 1 || n > 8) return 2;
  pid_t pids[8];
  int id_pipes[8][2];
  for (int r = 0; r < n; ++r) {
    if (pipe(id_pipes[r]) != 0) return 3;
    pids[r] = fork();
    if (pids[r] < 0) return 3;
    if (pids[r] == 0) {
      for (int q = 0; q <= r; ++q) close(id_pipes[q][1]); /* the read ends before r: closed */
      run_rank(id_pipes[r][0], n, r);
    }
    close(id_pipes[r][0]);
  }
  rank = 0;
  ncclUniqueId id;
  ncclUniqueId zero;
  memset(&zero, 0, sizeof(zero));
  ncclComm_t bad;
  EXPECT(ncclCommInitRank(&bad, 2, zero, 0) == ncclInvalidArgument); /* not an id of ours */
  CHECK(ncclGetUniqueId(&id));
  for (int r = 0; r < n; ++r) {
    if (write(id_pipes[r][1], &id, sizeof(id)) != (ssize_t)sizeof(id)) return 3;
    close(id_pipes[r][1]);
  }
  const char* d = getenv("NCCL_ABI_TEST_DEADLINE_S");
  if (wait_children(pids, n, d != NULL ? atoi(d) : 240) != 0) return 1;
  if (one_thread(n) != 0) return 1;
  printf("nccl_abi_test: %d ranks passed\n", n);
  return 0;
}
