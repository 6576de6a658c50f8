// tools/nccl/abi.h against the toolkit's nccl.h: every number and layout a program passes to
// libnccl.so.2 is what NCCL's header says.
#include <nccl.h>

#include <cstddef>

#include "tools/nccl/abi.h"

namespace n = tutti::nccl;

static_assert(NCCL_VERSION_CODE == n::kVersionCode, "version");
static_assert(ncclSuccess == n::kSuccess && ncclUnhandledCudaError == n::kUnhandledCudaError &&
                  ncclSystemError == n::kSystemError && ncclInternalError == n::kInternalError &&
                  ncclInvalidArgument == n::kInvalidArgument && ncclInvalidUsage == n::kInvalidUsage &&
                  ncclRemoteError == n::kRemoteError && ncclInProgress == n::kInProgress &&
                  ncclNumResults == n::kNumResults,
              "result codes");
static_assert(sizeof(ncclResult_t) == sizeof(int) && sizeof(ncclDataType_t) == sizeof(int) &&
                  sizeof(ncclRedOp_t) == sizeof(int),
              "enums are passed as int");
static_assert(ncclInt8 == 0 && ncclUint8 == 1 && ncclInt32 == 2 && ncclUint32 == 3 && ncclInt64 == 4 &&
                  ncclUint64 == 5 && ncclFloat16 == 6 && ncclFloat32 == 7 && ncclFloat64 == 8 && ncclBfloat16 == 9 &&
                  ncclFloat8e4m3 == 10 && ncclFloat8e5m2 == 11 && ncclNumTypes == n::kNumTypes,
              "data types (state.cc's TypeOf table)");
static_assert(ncclSum == n::kSum && ncclProd == n::kProd && ncclMax == n::kMax && ncclMin == n::kMin &&
                  ncclAvg == n::kAvg && ncclNumOps == n::kNumOps,
              "reduction ops");
static_assert(ncclScalarDevice == n::kScalarDevice && ncclScalarHostImmediate == n::kScalarHostImmediate, "residence");
static_assert(NCCL_SPLIT_NOCOLOR == n::kSplitNoColor && NCCL_CONFIG_UNDEF_INT == n::kConfigUndefInt, "constants");
static_assert(sizeof(ncclUniqueId) == sizeof(ncclUniqueIdAbi) && alignof(ncclUniqueId) == alignof(ncclUniqueIdAbi),
              "unique id");
static_assert(sizeof(ncclConfig_t) == sizeof(ncclConfigAbi), "config size");
#define SAME_FIELD(f) static_assert(offsetof(ncclConfig_t, f) == offsetof(ncclConfigAbi, f), "config field " #f)
SAME_FIELD(size);
SAME_FIELD(magic);
SAME_FIELD(version);
SAME_FIELD(blocking);
SAME_FIELD(netName);
SAME_FIELD(commName);
SAME_FIELD(nvlinkCentricSched);
static_assert(sizeof(ncclSimInfo_t) == sizeof(ncclSimInfoAbi) &&
                  offsetof(ncclSimInfo_t, estimatedTime) == offsetof(ncclSimInfoAbi, estimatedTime),
              "sim info");

int main() {
  ncclConfig_t c = NCCL_CONFIG_INITIALIZER;
  ncclSimInfo_t s = NCCL_SIM_INFO_INITIALIZER;
  return c.magic == n::kConfigMagic && s.magic == n::kSimInfoMagic ? 0 : 1;
}
