// The NCCL ABI as tutti's libnccl.so.2 implements it: the numbers and layouts a program compiled
// against NCCL's nccl.h passes across the library boundary (result codes, data types, reduction
// ops, the 128-byte unique id, the config and simulation structs). Written from the documented
// ABI; abi_compat_test checks every value and layout against the toolkit's nccl.h.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {

// Opaque to programs: what ncclComm_t points at (defined in state.h).
struct ncclComm;
typedef ncclComm* ncclComm_t;
typedef void* ncclCudaStream;  // cudaStream_t: a pointer
typedef void* ncclWindowHandle;  // ncclWindow_t: a pointer

// (Named apart from nccl.h's types so that abi_compat_test can compare the two.)
typedef struct tutti_nccl_unique_id {
  char internal[128];
} ncclUniqueIdAbi;

// ncclConfig_t (NCCL 2.28 layout; `size` says how much of it a program's version has).
typedef struct tutti_nccl_config {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int blocking;
  int cgaClusterSize;
  int minCTAs;
  int maxCTAs;
  const char* netName;
  int splitShare;
  int trafficClass;
  const char* commName;
  int collnetEnable;
  int CTAPolicy;
  int shrinkShare;
  int nvlsCTAs;
  int nChannelsPerNetPeer;
  int nvlinkCentricSched;
} ncclConfigAbi;

typedef struct tutti_nccl_sim_info {
  size_t size;
  unsigned int magic;
  unsigned int version;
  float estimatedTime;
} ncclSimInfoAbi;

}  // extern "C"

namespace tutti::nccl {

// ncclResult_t
enum NcclResult : int {
  kSuccess = 0,
  kUnhandledCudaError = 1,
  kSystemError = 2,
  kInternalError = 3,
  kInvalidArgument = 4,
  kInvalidUsage = 5,
  kRemoteError = 6,
  kInProgress = 7,
  kNumResults = 8,
};

// ncclDataType_t: 0 int8, 1 uint8, 2 int32, 3 uint32, 4 int64, 5 uint64, 6 float16, 7 float32,
// 8 float64, 9 bfloat16, 10 fp8 e4m3, 11 fp8 e5m2.
constexpr int kNumTypes = 12;
// ncclRedOp_t: built-in ops, then ops made by ncclRedOpCreatePreMulSum from kNumOps up.
enum Op : int { kSum = 0, kProd = 1, kMax = 2, kMin = 3, kAvg = 4, kNumOps = 5 };
// ncclScalarResidence_t
enum ScalarResidence : int { kScalarDevice = 0, kScalarHostImmediate = 1 };

constexpr int kSplitNoColor = -1;
constexpr int kConfigUndefInt = INT32_MIN;
constexpr unsigned kConfigMagic = 0xcafebeef;
constexpr unsigned kSimInfoMagic = 0x74685283;
// The NCCL release whose ABI this is (NCCL_VERSION_CODE of 2.28.9).
constexpr int kVersionCode = 22809;

}  // namespace tutti::nccl
