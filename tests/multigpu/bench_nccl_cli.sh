#!/bin/sh
# bench_nccl_cli.sh CASE BENCH: hgemm-nccl-bench's command line and output.
#   help      --help prints the usage and exits 0
#   bad_args  bad values exit 1 with a message naming them
#   no_gpus   with fewer than 2 GPUs: exit 2 and the reason (skipped, 77, with 2 or more)
#   smoke     with 2 or more GPUs: a small layer, the CSV's header and row count,
#             the timeline (skipped, 77, with fewer)
#   smoke_ce  the same with --copy-engine: the copy-engine path at 1 chunk (the
#             bench fails when a call takes another), the kernel path at 2
set -u
case_name=$1
bench=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "bench_nccl_cli $case_name: FAILED: $*"; exit 1; }
gpus() { nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true; }

case $case_name in
help)
    "$bench" --help >"$tmp/out" 2>&1 || fail "--help exited $?"
    grep -q '^usage:' "$tmp/out" || fail "no usage line"
    grep -q -- '--chunks' "$tmp/out" || fail "usage lacks --chunks"
    grep -q -- '--copy-engine' "$tmp/out" || fail "usage lacks --copy-engine"
    ;;
bad_args)
    for args in "--chunks 0" "--chunks 65" "--kernels v99" "--m -5" "--ops xy" "--iters 0" "--gpus 9" \
                "--cooldown -1" "--nonsense 1" "--csv" "--copy-engine --gemm-sms 100"; do
        # shellcheck disable=SC2086
        "$bench" $args >"$tmp/out" 2>&1
        rc=$?
        [ "$rc" -eq 1 ] || fail "'$args' exited $rc, want 1"
        grep -q '^usage:' "$tmp/out" || fail "'$args' printed no usage"
    done
    ;;
no_gpus)
    if [ "$(gpus)" -ge 2 ]; then echo "bench_nccl_cli no_gpus: skipped: this machine has 2 or more GPUs"; exit 77; fi
    "$bench" --repeat 1 >"$tmp/out" 2>&1
    rc=$?
    [ "$rc" -eq 2 ] || fail "exited $rc without 2 GPUs, want 2"
    grep -q 'needs at least 2 sm_90 GPUs' "$tmp/out" || fail "no reason given: $(cat "$tmp/out")"
    ;;
smoke)
    if [ "$(gpus)" -lt 2 ]; then echo "bench_nccl_cli smoke: skipped: fewer than 2 GPUs"; exit 77; fi
    "$bench" --m 1024 --n 512 --k 512 --chunks 1,2 --kernels auto,v5 --repeat 1 --warmup 1 --iters 3 \
        --cooldown 0 --csv "$tmp/out.csv" --timeline "$tmp/timeline.csv" >"$tmp/out" 2>&1 \
        || fail "exited $?: $(tail -20 "$tmp/out")"
    header='kernel,mode,op,m,n,k,gpus,chunks,run,ms,ms_min,ms_max,coll_gemm_ratio,vs_gemm,vs_naive,tflops,algbw_gbps,max_abs_diff'
    grep -qx "$header" "$tmp/out.csv" || fail "CSV header missing"
    for key in gpu gpus driver_version nccl_version git_commit date; do
        grep -q "^# $key: " "$tmp/out.csv" || fail "metadata '$key' missing"
    done
    # Per op: collective + 2 chunked collectives + per kernel (gemm, naive, 3 modes x 2 chunk counts).
    rows=$(grep -vc '^#\|^kernel,' "$tmp/out.csv")
    [ "$rows" -eq 38 ] || fail "$rows CSV rows, want 38"
    # Every overlapped row was checked against the naive result.
    bad=$(awk -F, '$2 ~ /^overlap/ && $18 < 0' "$tmp/out.csv" | wc -l)
    [ "$bad" -eq 0 ] || fail "$bad overlapped rows not checked"
    # 2 ops x 2 GPUs x (2 + 2 x 4 chunks) events.
    events=$(grep -vc '^#\|^op,' "$tmp/timeline.csv")
    [ "$events" -eq 40 ] || fail "$events timeline rows, want 40"
    ;;
smoke_ce)
    if [ "$(gpus)" -lt 2 ]; then echo "bench_nccl_cli smoke_ce: skipped: fewer than 2 GPUs"; exit 77; fi
    "$bench" --copy-engine --m 1024 --n 512 --k 512 --chunks 1,2 --kernels auto --repeat 1 --warmup 1 --iters 3 \
        --cooldown 0 --csv "$tmp/out.csv" --timeline "$tmp/timeline.csv" >"$tmp/out" 2>&1 \
        || fail "exited $?: $(tail -20 "$tmp/out")"
    grep -q '^# copy_engine: on' "$tmp/out.csv" || fail "metadata 'copy_engine: on' missing"
    # Per op: collective + 2 chunked collectives + gemm, naive, 2 modes x 2 chunk counts (no overlap-local).
    rows=$(grep -vc '^#\|^kernel,' "$tmp/out.csv")
    [ "$rows" -eq 18 ] || fail "$rows CSV rows, want 18"
    grep -q ',overlap-local,' "$tmp/out.csv" && fail "overlap-local rows with --copy-engine"
    bad=$(awk -F, '$2 == "overlap" && $18 < 0' "$tmp/out.csv" | wc -l)
    [ "$bad" -eq 0 ] || fail "$bad overlapped rows not checked"
    # 2 ops x 2 GPUs x (2 + 2 x 1 chunk) events.
    events=$(grep -vc '^#\|^op,' "$tmp/timeline.csv")
    [ "$events" -eq 16 ] || fail "$events timeline rows, want 16"
    ;;
*)
    fail "unknown case"
    ;;
esac
echo "bench_nccl_cli $case_name: passed"
