/* tutti's C API: a stable, NCCL-like interface over the C++ library.
 *
 * Every function returns a tuttiResult_t; tuttiGetLastError() gives the message of the last
 * failure on the calling thread (which names the rank, the operation and the peer). No C++
 * exception ever leaves a function of this API: running out of memory is tuttiSystemError
 * with a message saying how much was asked for.
 * Collectives take an optional `work` argument: NULL runs the call to completion (blocking);
 * otherwise the call starts and *work must later be waited for with tuttiWorkWait and released
 * with tuttiWorkFree. */
#ifndef TUTTI_C_API_TUTTI_H_
#define TUTTI_C_API_TUTTI_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  tuttiSuccess = 0,
  tuttiUnhandledCudaError = 1,
  tuttiSystemError = 2,
  tuttiInternalError = 3,
  tuttiInvalidArgument = 4,
  tuttiInvalidUsage = 5,
  tuttiRemoteError = 6,
  tuttiInProgress = 7,
  tuttiTimeout = 8,
  tuttiAborted = 9,
  tuttiMismatch = 10,
  tuttiNotMember = 11,
  tuttiUnavailable = 12,
} tuttiResult_t;

/* Data types and reduction ops are numbered as NCCL numbers them (nccl.h), so a layer that
 * speaks NCCL's ABI converts with a cast. */
typedef enum {
  tuttiInt8 = 0,
  tuttiUint8 = 1,
  tuttiInt32 = 2,
  tuttiUint32 = 3,
  tuttiInt64 = 4,
  tuttiUint64 = 5,
  tuttiFloat16 = 6,
  tuttiFloat32 = 7,
  tuttiFloat64 = 8,
  tuttiBfloat16 = 9,
  tuttiFp8E4M3 = 10,
  tuttiFp8E5M2 = 11,
  tuttiNumTypes = 12
} tuttiDataType_t;

/* tuttiPremulSum is only accepted by tuttiAllReducePremulSum (it needs a scalar); NCCL's own
 * premul ops are created at run time from ncclNumOps (5) up and are mapped by the NCCL layer. */
typedef enum {
  tuttiSum = 0,
  tuttiProd = 1,
  tuttiMax = 2,
  tuttiMin = 3,
  tuttiAvg = 4,
  tuttiPremulSum = 5,
  tuttiBand = 6, /* bitwise and, or, exclusive or: integer types only */
  tuttiBor = 7,
  tuttiBxor = 8,
  tuttiNumOps = 9
} tuttiRedOp_t;

typedef struct tuttiComm* tuttiComm_t;
typedef struct tuttiWork* tuttiWork_t;

#define TUTTI_SPLIT_NOCOLOR (-1)

const char* tuttiGetErrorString(tuttiResult_t result);
/* The message of the last failed call on this thread ("" if none). */
const char* tuttiGetLastError(void);

/* Communicators. */
tuttiResult_t tuttiCommInitFromEnv(tuttiComm_t* comm); /* tuttirun, torchrun, mpirun, srun */
tuttiResult_t tuttiCommInitRank(tuttiComm_t* comm, int nranks, int rank, const char* master_addr,
                                int master_port, const char* secret);
/* Collective over comm; ranks with color TUTTI_SPLIT_NOCOLOR get *newcomm = NULL. */
tuttiResult_t tuttiCommSplit(tuttiComm_t comm, int color, int key, tuttiComm_t* newcomm);
tuttiResult_t tuttiCommCount(const tuttiComm_t comm, int* count);
tuttiResult_t tuttiCommUserRank(const tuttiComm_t comm, int* rank);
/* Registers [buff, buff+size) with comm, as ncclCommRegister: its memory kind is found once and
 * later calls on it reuse the registration. Deregister before freeing; a handle deregistered
 * twice is tuttiInvalidUsage. */
tuttiResult_t tuttiCommRegister(const tuttiComm_t comm, void* buff, size_t size, void** handle);
tuttiResult_t tuttiCommDeregister(const tuttiComm_t comm, void* handle);
tuttiResult_t tuttiCommAbort(tuttiComm_t comm); /* fails everything pending; the handle stays valid */
/* Releases comm. A second destroy of the same handle is tuttiInvalidUsage, never a crash. */
tuttiResult_t tuttiCommDestroy(tuttiComm_t comm);

/* Point-to-point (count elements of datatype; tag >= 0). A send of up to 8 KiB completes once
 * buffered for the receiver, a larger one once the receiver matched it. tuttiRecv's peer may be
 * TUTTI_ANY_SOURCE: the first message with the tag from any rank; pass a work to learn the sender
 * (tuttiWorkGetSource once it finished). */
#define TUTTI_ANY_SOURCE (-1)
tuttiResult_t tuttiSend(const void* buf, size_t count, tuttiDataType_t datatype, int peer, int tag,
                        tuttiComm_t comm, tuttiWork_t* work);
tuttiResult_t tuttiRecv(void* buf, size_t count, tuttiDataType_t datatype, int peer, int tag,
                        tuttiComm_t comm, tuttiWork_t* work);

/* Collectives; counts and buffer sizes as in tutti::Communicator (count is per rank). */
tuttiResult_t tuttiBroadcast(const void* sendbuf, void* recvbuf, size_t count, tuttiDataType_t datatype,
                             int root, tuttiComm_t comm, tuttiWork_t* work);
tuttiResult_t tuttiReduce(const void* sendbuf, void* recvbuf, size_t count, tuttiDataType_t datatype,
                          tuttiRedOp_t op, int root, tuttiComm_t comm, tuttiWork_t* work);
tuttiResult_t tuttiScatter(const void* sendbuf, void* recvbuf, size_t count, tuttiDataType_t datatype,
                           int root, tuttiComm_t comm, tuttiWork_t* work);
tuttiResult_t tuttiGather(const void* sendbuf, void* recvbuf, size_t count, tuttiDataType_t datatype,
                          int root, tuttiComm_t comm, tuttiWork_t* work);
tuttiResult_t tuttiAllReduce(const void* sendbuf, void* recvbuf, size_t count, tuttiDataType_t datatype,
                             tuttiRedOp_t op, tuttiComm_t comm, tuttiWork_t* work);
tuttiResult_t tuttiAllGather(const void* sendbuf, void* recvbuf, size_t count, tuttiDataType_t datatype,
                             tuttiComm_t comm, tuttiWork_t* work);
tuttiResult_t tuttiReduceScatter(const void* sendbuf, void* recvbuf, size_t count, tuttiDataType_t datatype,
                                 tuttiRedOp_t op, tuttiComm_t comm, tuttiWork_t* work);
tuttiResult_t tuttiAllToAll(const void* sendbuf, void* recvbuf, size_t count, tuttiDataType_t datatype,
                            tuttiComm_t comm, tuttiWork_t* work);
tuttiResult_t tuttiBarrier(tuttiComm_t comm, tuttiWork_t* work);
/* premul_sum all-reduce: this rank's input is multiplied by `scalar` before the sum. */
tuttiResult_t tuttiAllReducePremulSum(const void* sendbuf, void* recvbuf, size_t count,
                                      tuttiDataType_t datatype, double scalar, tuttiComm_t comm,
                                      tuttiWork_t* work);

/* v-collectives (MPI's allgatherv, gatherv, scatterv, alltoallv; reduce_scatter with a count per
 * rank), as tutti::Communicator's: every array has one entry per rank of comm, in elements; a
 * displacement array may be NULL (blocks packed in rank order). Arrays that only the root reads
 * (gatherv's recvcounts and rdispls, scatterv's sendcounts and sdispls) may be NULL elsewhere.
 * Ranks must agree on every block's count (a disagreement is tuttiMismatch); send and receive
 * buffers must not overlap. tuttiReduceScatterV: sendbuf holds recvcounts[0] + ... elements in
 * rank order, recvbuf this rank's block, reduced in rank order (tuttiAvg included). */
tuttiResult_t tuttiAllGatherV(const void* sendbuf, size_t sendcount, void* recvbuf, const size_t* recvcounts,
                              const size_t* rdispls, tuttiDataType_t datatype, tuttiComm_t comm,
                              tuttiWork_t* work);
tuttiResult_t tuttiGatherV(const void* sendbuf, size_t sendcount, void* recvbuf, const size_t* recvcounts,
                           const size_t* rdispls, tuttiDataType_t datatype, int root, tuttiComm_t comm,
                           tuttiWork_t* work);
tuttiResult_t tuttiScatterV(const void* sendbuf, const size_t* sendcounts, const size_t* sdispls, void* recvbuf,
                            size_t recvcount, tuttiDataType_t datatype, int root, tuttiComm_t comm,
                            tuttiWork_t* work);
tuttiResult_t tuttiAllToAllV(const void* sendbuf, const size_t* sendcounts, const size_t* sdispls, void* recvbuf,
                             const size_t* recvcounts, const size_t* rdispls, tuttiDataType_t datatype,
                             tuttiComm_t comm, tuttiWork_t* work);
tuttiResult_t tuttiReduceScatterV(const void* sendbuf, void* recvbuf, const size_t* recvcounts,
                                  tuttiDataType_t datatype, tuttiRedOp_t op, tuttiComm_t comm, tuttiWork_t* work);

/* Asynchronous operations. timeout_s < 0: the communicator's timeout. */
tuttiResult_t tuttiWorkWait(tuttiWork_t work, double timeout_s);
tuttiResult_t tuttiWorkTest(tuttiWork_t work, int* done); /* done: 1 when finished (then its result is returned) */
/* The rank a finished receive's message came from (-1 for sends and collectives). */
tuttiResult_t tuttiWorkGetSource(tuttiWork_t work, int* source);
/* A work that was already freed (or never made) is tuttiInvalidUsage. */
tuttiResult_t tuttiWorkFree(tuttiWork_t work);
/* Calls fn(result, user) once the work finishes: at once on this thread when it already has,
 * else on the communicator's completion thread, one function at a time, in the order works
 * finish. Inside fn, tuttiGetLastError() gives the failure's message. The work handle need not
 * outlive the call (fn may free it). A work still unfinished when the communicator's timeout
 * passes gets tuttiTimeout; tuttiCommAbort finishes pending works with tuttiAborted, and
 * tuttiCommDestroy with an error, running their functions before it returns. fn may
 * start calls (the order of a communicator's calls must still be the same on every rank). */
typedef void (*tuttiWorkCallback_t)(tuttiResult_t result, void* user);
tuttiResult_t tuttiWorkOnComplete(tuttiWork_t work, tuttiWorkCallback_t fn, void* user);

/* Groups, as ncclGroupStart / ncclGroupEnd: between them, calls made with work == NULL on this
 * thread start without waiting, and tuttiGroupEnd waits for all of them (each with its
 * communicator's timeout), so a rank may send to and receive from the same peer in one group.
 * Groups nest (the outermost end waits); buffers must stay untouched until tuttiGroupEnd
 * returns. A call refused in a group returns its error and tuttiGroupEnd returns it again (after
 * waiting for the calls that did start). Calls given a work behave as outside a group. */
tuttiResult_t tuttiGroupStart(void);
tuttiResult_t tuttiGroupEnd(void);

#ifdef __cplusplus
}
#endif

#endif /* TUTTI_C_API_TUTTI_H_ */
