#!/usr/bin/env bash
# The GPU check: CUDA tests built here, carried to a machine with a GPU (which has no Bazel),
# and run there.
#
#   bash tools/gpu_check.sh --prepare   (build machine) builds the CUDA tests with everything of
#                                       ours linked in, into .gpu_bundle/ (ignored by git; no
#                                       links into Bazel's output tree), with every shared library
#                                       they load (libstdc++, glibc and its loader:
#                                       the GPU machine's may be older) beside them, and packs it
#                                       into .gpu_pack/bundle.tar.xz (what travels: ~12 MB)
#   bash tools/gpu_check.sh --run       (GPU machine, repository root; unpacks .gpu_pack first
#                                       when there is no .gpu_bundle) runs every test of the
#                                       bundle (each bounded to 120 s), then the benchmarks
#                                       (240 s each), logs to $OUT (or
#                                       .gpu_bundle/logs), prints a summary; exit 1 if any failed
#
# Without a GPU the tests skip cleanly, so --run also works (and is tried) on the build machine.
set -euo pipefail
cd "$(dirname "$0")/.."
bundle=.gpu_bundle
tests=(
  //kernels/cuda:device_probe    # what the GPUs can do for transports: IPC, VMM, mapped memory
  //kernels/cuda:device_test     # device query, copy kernel
  //kernels/cuda:reduce_test     # ReduceN on the device, bit for bit against the CPU kernels
  //kernels/cuda:scale_test      # premul_sum scaling and avg division, bit for bit against the CPU
  //core/exec:cuda_engine_test   # local tasks on a stream, tickets through events, vs the CPU engine
  //tests:cuda_memory_test       # memory kinds from the driver; P2P refuses device memory
  //tests:cuda_coll_test         # every collective on device memory, bitwise against the host path
  //core/mem:mem_kind_test       # the probe on host memory where a driver is loaded
  //tests:stream_test            # stream-ordered collectives (host streams)
  //kernels/cuda:prims_kernel_test  # the fused kernel: every algorithm lowered, both protocols, bitwise
)
# Benchmarks run after the tests (each bounded to 240 s), their tables in $OUT/<name>.log.
benches=(
  //bench:prims_gpu_bench        # the fused kernel, n ranks on the GPU, beside cudaMemcpy D2D
  //bench:cuda_kernels_bench     # copy / reduce kernels beside cudaMemcpy D2D (traffic rates)
  //bench:fused_coll_bench       # all_reduce through the communicator: fused beside staged
)
flags=(-c opt --dynamic_mode=off)

prepare() {
  bazel build "${flags[@]}" "${tests[@]}" "${benches[@]}"
  local bin
  bin=$(bazel info "${flags[@]}" bazel-bin 2>/dev/null)
  rm -rf "$bundle"
  mkdir -p "$bundle/bin" "$bundle/lib"
  mkdir -p "$bundle/bench"
  for t in "${tests[@]}" "${benches[@]}"; do
    local path=${t#//} dir=bin
    path=${path/://}
    [[ $t == //bench:* ]] && dir=bench
    cp -L "$bin/$path" "$bundle/$dir/"
  done
  # The CUDA runtime is linked in statically (@local_cuda//:cudart_static); the driver,
  # libcuda.so.1, comes from the GPU machine.
  # Every library the binaries load, and the loader, so they run whatever the GPU machine has
  # (the CUDA driver, libcuda.so.1, still comes from that machine).
  for b in "$bundle"/bin/* "$bundle"/bench/*; do
    LD_LIBRARY_PATH="$bundle/lib" ldd "$b" | awk '/=> \// {print $3} /^\t\/lib64\/ld-linux/ {print $1}' |
      while read -r lib; do [[ -e $bundle/lib/$(basename "$lib") ]] || cp -L "$lib" "$bundle/lib/"; done
  done
  # Debug sections off: the bundle travels with the working tree (64 MiB in all).
  strip --strip-debug "$bundle"/bin/* "$bundle"/bench/*
  echo "gpu_check: bundle in $bundle ($(du -sh "$bundle" | cut -f1)):"
  ls -l "$bundle/bin" "$bundle/lib"
  mkdir -p .gpu_pack
  tar -cJf .gpu_pack/bundle.tar.xz "$bundle"
  echo "gpu_check: packed into .gpu_pack/bundle.tar.xz ($(du -sh .gpu_pack/bundle.tar.xz | cut -f1))"
}

run() {
  [[ -d $bundle/bin || ! -f .gpu_pack/bundle.tar.xz ]] || tar -xJf .gpu_pack/bundle.tar.xz
  [[ -d $bundle/bin ]] || { echo "gpu_check: no bundle; run --prepare on the build machine" >&2; exit 2; }
  local out=${OUT:-$bundle/logs}
  mkdir -p "$out"
  { nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1 || true; } | tee "$out/nvidia-smi.txt"
  local status=0 summary=""
  for t in "$bundle"/bin/*; do
    local name rc
    name=$(basename "$t")
    local t0=$SECONDS
    set +e
    # The bundled loader and libraries; the driver's directories stay on the path after them.
    timeout -k 5 120 "$bundle/lib/ld-linux-x86-64.so.2" \
      --library-path "$PWD/$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}:/usr/lib/x86_64-linux-gnu:/usr/lib64:/usr/local/nvidia/lib64:/usr/lib/wsl/lib" \
      "$t" > "$out/$name.log" 2>&1
    rc=$?
    set -e
    local skipped
    skipped=$(grep -c '\[  SKIPPED \]' "$out/$name.log" || true)
    summary+="$(printf '%-24s rc=%-3s %3ss skipped-lines=%s' "$name" "$rc" "$((SECONDS - t0))" "$skipped")"$'\n'
    if ((rc != 0)); then
      status=1
      echo "== $name FAILED (rc $rc); last lines:"
      tail -30 "$out/$name.log"
    fi
  done
  for b in "$bundle"/bench/*; do
    [[ -e $b ]] || continue
    local name rc t0=$SECONDS
    name=$(basename "$b")
    set +e
    timeout -k 5 240 "$bundle/lib/ld-linux-x86-64.so.2" \
      --library-path "$PWD/$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}:/usr/lib/x86_64-linux-gnu:/usr/lib64:/usr/local/nvidia/lib64:/usr/lib/wsl/lib" \
      "$b" > "$out/$name.log" 2>&1
    rc=$?
    set -e
    summary+="$(printf '%-24s rc=%-3s %3ss (benchmark; table in %s.log)' "$name" "$rc" "$((SECONDS - t0))" "$name")"$'\n'
    cat "$out/$name.log"
    ((rc == 0)) || status=1
  done
  echo "$summary" | tee "$out/summary.txt"
  exit $status
}

case ${1:-} in
  --prepare) prepare ;;
  --run) run ;;
  *) sed -n '2,17s/^# \{0,1\}//p' "$0"; exit 2 ;;
esac
