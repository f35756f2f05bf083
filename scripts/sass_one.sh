#!/usr/bin/env bash
# sass_one.sh: the SASS of one V8 kernel, on a machine without a GPU, in seconds.
#
#   scripts/sass_one.sh                      (the wide fp16 tile AUTO runs at 8192^3)
#   scripts/sass_one.sh '2, true, __half, 0, 0, 128, 0, false, 1, 0'   (v8_kernel's
#                                            template arguments: CLUSTER, TMA_EPILOGUE, T,
#                                            A_MN, B_MN, BN, DEEP, FENCED, LATE_AT, EXP)
#   EXTRA=-DHGEMM_PHASE_TIMER scripts/sass_one.sh ...   (more nvcc flags)
#   CUBIN_ONLY=1 scripts/sass_one.sh ...     (stop at the cubin: no cuobjdump needed)
#
# Compiles src/v8/kernel.cuh with one explicit instantiation, instead of a
# form's file of up to ten, so a change to the kernel shows in its SASS in
# about 6 s. Then cuobjdump -sass, into $OUT/one.sass, and the count of the
# instructions that tell where a k-loop's work goes: HGMMA beside R2UR
# (descriptors built in ordinary registers and moved to uniform ones before
# each WGMMA) and UIADD3 (built in uniform registers, as cuBLAS does), and
# STL (a spill, or a subroutine's return address). docs/notes/v8-log.md,
# run 158, is what it found. cuobjdump comes with the CUDA toolkit; where
# the toolkit has none (nvcc alone), it is taken from PyPI's
# nvidia-cuda-cuobjdump, with the nvdisasm it calls (nvidia-cuda-nvdisasm),
# into $SASS_TOOLS (default build/sass-tools).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
args=${1:-2, true, __half, 0, 0, 256, 2, false, 1, 72}
OUT=${OUT:-$here/build/sass-one}
NVCC=${NVCC:-nvcc}
command -v "$NVCC" >/dev/null || NVCC=/usr/local/cuda/bin/nvcc
mkdir -p "$OUT"
{
    echo '#include "v8/kernel.cuh"'
    echo "template __global__ void v8_kernel<$args>(const __grid_constant__ CUtensorMap,"
    echo "    const __grid_constant__ CUtensorMap, const __grid_constant__ CUtensorMap,"
    echo "    const __grid_constant__ CUtensorMap, gemm_args, uint32_t, uint32_t, hgemm_sk, float *, uint32_t *,"
    echo "    v8_batch, uint32_t, const __grid_constant__ v8_deal, const __grid_constant__ hgemm_epi);"
} >"$OUT/one.cu"
# shellcheck disable=SC2086 # EXTRA: words, as typed
"$NVCC" -cubin -arch=sm_90a -O3 -std=c++17 ${EXTRA:-} -Xptxas=-v -I"$here/include" -I"$here/src" \
    -I"$here/src/kernels" -o "$OUT/one.cubin" "$OUT/one.cu" 2>"$OUT/ptxas.txt" || {
    cat "$OUT/ptxas.txt" >&2
    exit 1
}
grep -E "registers|spill" "$OUT/ptxas.txt" | sed 's/^ *//' | sort -u
[ "${CUBIN_ONLY:-0}" = 1 ] && { echo "sass_one: $OUT/one.cubin"; exit 0; }

cuobjdump=$(command -v cuobjdump || true)
[ -z "$cuobjdump" ] && [ -x "$(dirname "$(command -v "$NVCC")")/cuobjdump" ] &&
    cuobjdump=$(dirname "$(command -v "$NVCC")")/cuobjdump
if [ -z "$cuobjdump" ]; then
    tools=${SASS_TOOLS:-$here/build/sass-tools}
    cuobjdump=$(find "$tools" -name cuobjdump -type f 2>/dev/null | head -1 || true)
    if [ -z "$cuobjdump" ] || [ -z "$(find "$tools" -name nvdisasm -type f 2>/dev/null | head -1 || true)" ]; then
        echo "sass_one: no cuobjdump here; installing it and nvdisasm from PyPI into $tools" >&2
        python3 -m pip install -q --no-deps --disable-pip-version-check --root-user-action=ignore \
            --target "$tools" nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm >&2
        cuobjdump=$(find "$tools" -name cuobjdump -type f | head -1)
    fi
    chmod +x "$(dirname "$cuobjdump")"/*
fi
# cuobjdump runs the nvdisasm beside it or on PATH
PATH="$(dirname "$cuobjdump"):$PATH" "$cuobjdump" -sass "$OUT/one.cubin" >"$OUT/one.sass"
python3 - "$OUT/one.sass" <<'EOF'
import collections, re, sys
count = collections.Counter()
for line in open(sys.argv[1]):
    m = re.match(r'\s*/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z0-9_]+)', line)
    if m:
        count[m.group(1)] += 1
print('instructions', sum(count.values()), ' '.join(f'{op} {count[op]}' for op in
      ('HGMMA', 'R2UR', 'UIADD3', 'IADD3', 'IMAD', 'MOV', 'STL', 'CALL')))
EOF
echo "sass_one: $OUT/one.sass"
