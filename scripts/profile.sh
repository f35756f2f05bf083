#!/usr/bin/env bash
# profile.sh: hardware counters of each kernel beside cuBLAS's, one launch each.
#
#   scripts/profile.sh [KERNELS] [M N K]      (defaults: every kernel and both cuBLAS modes, 8192^3)
#   LAUNCHES=2 scripts/profile.sh ...         (the first 2 kernel launches of each call: a split's
#                                              second kernel too)
#   BENCH_ARGS="--layout nn" scripts/profile.sh ...  (more hgemm-bench options: a form, a batch)
#   PROFILE_EXTRA=a.sum,b.sum scripts/profile.sh ...  (more metrics, each where this ncu lists it:
#                                              the raw CSV; the table has columns for two,
#                                              smsp__inst_executed.sum and
#                                              l1tex__data_pipe_lsu_wavefronts_mem_shared.sum)
#   L2_DETAIL=1 scripts/profile.sh ...        (also L2's sectors by source unit, source node and
#                                              operation, where this ncu knows them: raw CSV only;
#                                              the request coalescer's (lrc__) where listed; and
#                                              every metric name this ncu lists, ncu-metrics.txt)
#
# Runs Nsight Compute over hgemm-bench once per kernel, profiling the one
# timed launch (--warmup 0 --iters 1) inside the NVTX range the benchmark
# opens for that kernel, after its correctness check passed. Always
# --clock-control none: the GPU runs at the clocks it has, nothing is locked
# or changed. Writes $OUT/profile-raw.csv (Nsight Compute's own CSV, one
# block per kernel) and prints the table of scripts/ncu_table.py, also
# written as $OUT/profile.csv.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
KERNELS=${1:-v0,v1,v2,v3,v4,v5,v6,v7,cublas32,cublas16}
M=${2:-8192} N=${3:-8192} K=${4:-8192}
OUT=${OUT:-$PWD/profile-out}
BUILD=${BUILD:-build}
BENCH="$BUILD/tools/hgemm-bench"
NCU=${NCU:-ncu}
LAUNCHES=${LAUNCHES:-1}
mkdir -p "$OUT"
raw="$OUT/profile-raw.csv"
: >"$raw"

# The tensor-pipe metric's name differs between Nsight Compute versions and
# chips: take the first candidate this ncu knows.
known=$("$NCU" --query-metrics 2>/dev/null || true)
tensor=""
for cand in sm__pipe_tensor_cycles_active sm__pipe_tensor_op_gmma_cycles_active \
            sm__pipe_tensor_op_hmma_cycles_active; do
    if grep -q "^$cand " <<<"$known"; then tensor=$cand; break; fi
done
extra=""
metrics=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second
metrics+=,dram__throughput.avg.pct_of_peak_sustained_elapsed
metrics+=,sm__throughput.avg.pct_of_peak_sustained_elapsed
metrics+=,lts__t_sector_hit_rate.pct,lts__throughput.avg.pct_of_peak_sustained_elapsed
metrics+=,dram__bytes_read.sum,lts__t_bytes.sum
metrics+=,launch__registers_per_thread
metrics+=,launch__shared_mem_per_block_dynamic,launch__shared_mem_per_block_static
metrics+=,sm__warps_active.avg.pct_of_peak_sustained_active
[ -n "$tensor" ] && metrics+=,$tensor.avg.pct_of_peak_sustained_active
# Where the warps wait (issue stalls per issued instruction) and the launch's
# grid, where this ncu knows the names.
for cand in launch__grid_size launch__cluster_dim_x \
            smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio \
            smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio \
            smsp__average_warps_issue_stalled_wait_per_issue_active.ratio \
            smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio \
            smsp__average_warps_issue_stalled_membar_per_issue_active.ratio \
            smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio \
            smsp__average_warps_issue_stalled_sleeping_per_issue_active.ratio; do
    metric=${cand%%.ratio}
    if grep -q "^${metric%%.*} \|^$metric " <<<"$known"; then metrics+=,$cand; fi
done
# Metrics the caller names, each where this ncu lists it (ncu_table.py's table shows
# the ones it has a column for).
IFS=, read -ra wanted <<<"${PROFILE_EXTRA:-}"
for cand in "${wanted[@]}"; do
    if grep -q "^${cand%%.*} " <<<"$known"; then metrics+=,$cand; else echo "profile: this ncu has no $cand" >&2; fi
done
# Where L2's traffic comes from (the SMs, the other L2 partition through the
# fabric) and what it is (reads, writes, reductions): every such sector count
# this ncu lists, summed over the slices.
if [ "${L2_DETAIL:-0}" = 1 ]; then
    detail=$(grep -oE '^lts__t_(sectors|requests)_(srcunit|srcnode|op)_[a-z0-9_]+ ' <<<"$known" |
        grep -vE '_(lookup|aperture)' | sort -u | sed 's/ $/.sum/' | paste -sd, -)
    detail+=,$(grep -oE '^lts__t_sectors_(lookup_hit|lookup_miss|srcunit_tex_lookup_(hit|miss)|srcunit_ltcfabric_lookup_(hit|miss)) ' <<<"$known" |
        sort -u | sed 's/ $/.sum/' | paste -sd, -)
    detail=${detail#,}; detail=${detail%,}
    for cand in dram__bytes_write.sum l1tex__m_xbar2l1tex_read_bytes.sum; do
        if grep -q "^${cand%%.*} " <<<"$known"; then detail+=,$cand; fi
    done
    echo "profile: L2 detail: $detail" >&2
    [ -n "$detail" ] && metrics+=,${detail#,}
    # Every metric this ncu lists, for the next question about L2; and the
    # counters of a unit in front of L2 that merges requests, where this
    # chip has one listed (lrc__: sectors and requests only). They are
    # tried once: if ncu refuses them, each kernel runs without them.
    printf '%s\n' "$known" >"$OUT/ncu-metrics.txt"
    extra=$(grep -oE '^lrc__[a-z0-9_]*(sectors|requests)[a-z0-9_]* ' <<<"$known" | sort -u | sed 's/ $/.sum/' | paste -sd, -)
    [ -n "$extra" ] && echo "profile: request coalescer: $extra" >&2
fi
echo "profile: tensor pipe metric: ${tensor:-none found}" >&2

# One profiled launch of $kernel (run by $run_kernels) with the metrics $1.
profile_one() {
    # shellcheck disable=SC2086 # BENCH_ARGS: words, as typed
    "$NCU" --clock-control none --nvtx --nvtx-include "$kernel/" --launch-count "$LAUNCHES" \
        --metrics "$1" --csv --page raw --log-file "$OUT/ncu-$kernel.csv" \
        "$BENCH" --kernels "$run_kernels" --size "$M" "$N" "$K" --warmup 0 --iters 1 \
        --cooldown 0 ${BENCH_ARGS:-} >"$OUT/bench-$kernel.log" 2>&1
}

IFS=, read -ra list <<<"$KERNELS"
for kernel in "${list[@]}"; do
    # The baselines run in every benchmark process; pair them with the cheapest kernel.
    run_kernels=$kernel
    [[ $kernel == cublas* ]] && run_kernels=v0
    echo "profile: $kernel at ${M}x${N}x${K}" >&2
    echo "# kernel: $kernel" >>"$raw"
    if [ -n "$extra" ] && ! profile_one "$metrics,$extra"; then
        echo "profile: ncu refused the request coalescer's counters; $kernel without them:" >&2
        tail -3 "$OUT/bench-$kernel.log" "$OUT/ncu-$kernel.csv" >&2 || true
        extra=""
    fi
    if [ -z "$extra" ] && ! profile_one "$metrics"; then
        echo "profile: ncu or the benchmark failed for $kernel:" >&2
        cat "$OUT/bench-$kernel.log" "$OUT/ncu-$kernel.csv" >&2
        exit 1
    fi
    cat "$OUT/ncu-$kernel.csv" >>"$raw"
    rm -f "$OUT/ncu-$kernel.csv" "$OUT/bench-$kernel.log"
done
python3 "$here/ncu_table.py" "$raw" --csv "$OUT/profile.csv"
