#!/usr/bin/env bash
# check_ptxas.sh NVCC SRC_DIR INCLUDE_DIR KERNEL.cu...
# Compiles each kernel file for sm_90a with ptxas -v and fails on what the
# build's own flags cannot turn into errors: wgmma serialization (any ptxas
# info "wgmma.mma_async instructions are serialized": C7510, e.g. from a
# function call inside the kernel, C7515, an accumulator register defined by
# another instruction while WGMMAs are in flight, C7520, a WGMMA behind a
# data-dependent branch), a stack frame, or spills.
# PTXAS_CHECK_FLAGS: more nvcc flags (e.g. -DHGEMM_PHASE_TIMER, the diagnostic build).
# The files compile side by side, PTXAS_CHECK_JOBS at a time (default: the
# cores), and are reported in the order given.
set -uo pipefail
nvcc=$1 src=$2 inc=$3
shift 3
lab=$(cd "$src/.." && pwd)/lab
jobs=${PTXAS_CHECK_JOBS:-$(nproc)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
i=0
for cu in "$@"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    # shellcheck disable=SC2086
    { "$nvcc" -gencode arch=compute_90a,code=sm_90a -std=c++17 -I"$src" -I"$inc" -I"$lab" ${PTXAS_CHECK_FLAGS:-} \
          -Xptxas -v -c "$cu" -o /dev/null >"$tmp/$i.out" 2>&1; echo $? >"$tmp/$i.rc"; } &
    i=$((i + 1))
done
wait
fail=0
i=0
for cu in "$@"; do
    out=$(cat "$tmp/$i.out")
    rc=$(cat "$tmp/$i.rc")
    i=$((i + 1))
    [ "$rc" = 0 ] || { echo "$out"; echo "FAIL $cu: does not compile"; fail=1; continue; }
    name=$(basename "$cu")
    if grep -q "wgmma.mma_async instructions are serialized" <<<"$out"; then
        grep "wgmma.mma_async instructions are serialized" <<<"$out"
        echo "FAIL $name: wgmma.mma_async serialized (C75xx)"
        fail=1
    elif grep -Eq "[1-9][0-9]* bytes (stack frame|spill stores|spill loads)" <<<"$out"; then
        grep -E "bytes stack frame" <<<"$out"
        echo "FAIL $name: stack frame or spills"
        fail=1
    else
        echo "ok   $name: $(grep -o 'Used [0-9]* registers' <<<"$out" | head -1)"
    fi
done
exit $fail
