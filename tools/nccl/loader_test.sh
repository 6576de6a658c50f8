#!/usr/bin/env bash
# loader_test.sh LIBNCCL PROGRAM: checks tutti's libnccl.so.2 the way the dynamic loader and an
# NCCL program see it (see BUILD).
set -euo pipefail
lib=$1 prog=$2
fail() { echo "loader_test: $*" >&2; exit 1; }

soname=$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[[ $soname == libnccl.so.2 ]] || fail "soname is '$soname', not libnccl.so.2"

# Entry points libtorch_cuda.so (PyTorch 2.11) takes from libnccl.so.2, and the rest of nccl.h's
# host API.
wanted="ncclAllGather ncclAllReduce ncclAlltoAll ncclBcast ncclBroadcast ncclCommAbort ncclCommCount
ncclCommDeregister ncclCommDestroy ncclCommFinalize ncclCommGetAsyncError ncclCommInitAll ncclCommInitRank
ncclCommInitRankConfig ncclCommInitRankScalable ncclCommRegister ncclCommShrink ncclCommSplit ncclCommUserRank
ncclCommWindowDeregister ncclCommWindowRegister ncclDevCommCreate ncclDevCommDestroy ncclGetErrorString
ncclGetLastError ncclGetUniqueId ncclGetVersion ncclGroupEnd ncclGroupSimulateEnd ncclGroupStart ncclMemAlloc
ncclMemFree ncclRecv ncclRedOpCreatePreMulSum ncclRedOpDestroy ncclReduce ncclReduceScatter ncclSend
ncclCommCuDevice ncclCommRevoke ncclGather ncclScatter"
exported=$(nm -D --defined-only "$lib" | awk '$2 == "T" || $2 == "W" {print $3}')
for s in $wanted; do
  grep -qx "$s" <<<"$exported" || fail "$s is not exported"
done
others=$(grep -v '^nccl' <<<"$exported" || true)
[[ -z $others ]] || fail "exports more than nccl*: $(head -5 <<<"$others" | tr '\n' ' ')"
# NCCL's symbols carry no version tags; a program linked against NCCL asks for none.
versioned=$(objdump -T "$lib" | awk '$NF ~ /^nccl/ && $(NF-1) != "Base" {print $NF " " $(NF-1)}')
[[ -z $versioned ]] || fail "versioned symbols: $(head -3 <<<"$versioned" | tr '\n' ' ')"

# The program was linked against NVIDIA's libnccl.so.2; the loader takes ours from the path.
dir=$(cd "$(dirname "$lib")" && pwd)
uses=$(LD_LIBRARY_PATH=$dir ldd "$prog" | awk '/libnccl.so.2/ {print $3}')
[[ $(readlink -f "$uses") == $(readlink -f "$lib") ]] || fail "the program would load $uses"
LD_LIBRARY_PATH=$dir "$prog" 2
LD_LIBRARY_PATH=$dir "$prog" 4
echo "loader_test: passed"
