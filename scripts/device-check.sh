#!/usr/bin/env bash
# device-check.sh: everything hgemm needs to know from an H200, in one call.
#
#   scripts/device-check.sh [STEP,STEP,...]
#
# LAB=1: configure the trees with -DHGEMM_LAB=ON, so that the test, sanitize,
# bench and sweep steps also list and run the lab's ablation rows (lab/: the
# chapters' ablation tables); without it, the library as shipped, no ablation.
#
# Steps (default: build,sass,test,sanitize,bench):
#   build     configure and build (Release) into build-device/, then the ptxas reports its
#             compile kept (ctest ptxas_kernels: with LAB=1, the lab's kernels too)
#   carried   instead of build: unpack build-carry/build.tar.xz (scripts/carry_build.sh,
#             run here on this commit and carried) into build-device/ and point its
#             CTest files at this copy; the device builds nothing (about 130 s less)
#   sass      count HGMMA / HMMA per kernel in the library's SASS; with $SASS_DUMP (a
#             substring of kernel symbols, e.g. "ELi256ELi2ELb0ELi1ELi8EE"), every
#             matching function's whole SASS into sass-dump.txt
#   test      ctest: the GPU tests (label gpu; the CPU ones run in CI)
#   sanitize  compute-sanitizer memcheck, racecheck, synccheck on small shapes,
#             the kernels named in $SANITIZE_KERNELS (default: every kernel and ablation;
#             racecheck: $RACECHECK_KERNELS, default the kernels users can name, v0..v9,
#             since on some machines racecheck takes about 0.15 s a case, main's build too:
#             every ablation would take 400 s, run 159), and memcheck and racecheck of
#             libhgemm_nccl's sum kernels (test_nccl_add)
#   bench     hgemm-bench at 8192^3, $BENCH_KERNELS (default all) beside cuBLAS
#             ($BENCH_ARGS, default --repeat 3)
#   sweep     hgemm-bench --sweep, $SWEEP_KERNELS beside cuBLAS ($SWEEP_ARGS: more options)
#   suite     hgemm-bench --suite llm (decode, prefill, squares, long-K, wide, ragged;
#             memory-bound shapes with rotated operands), $SUITE_KERNELS (default
#             auto, what users get; v8,v9,auto,auto-f16acc to derive AUTO's table) beside
#             cuBLAS, $SUITE_ARGS (default --repeat 3 --cooldown 0.5 --interleave 6 --iters 30,
#             as runs 99 and 101: a median of 3 is not moved by one slow window, a median
#             of 2 is; 6 slices fit 1 or 4 kernels beside both cuBLAS modes, other counts
#             need their own --interleave; about 1.5 minutes for AUTO), into suite.csv
#   alone     hgemm-bench without --interleave, each kernel alone after a warm-up long enough
#             for its clock to settle: $ALONE_KERNELS (default auto) beside cuBLAS, $ALONE_ARGS
#             (default --size 8192 8192 8192 --cooldown 0 --warmup 100 --iters 300 --repeat 6,
#             as runs 149 and 152), into alone.csv; each row's window_sm_clock_mhz is its own
#             entry's clock (interleaved rows share the period's: a comparison of cycles)
#   shapes    hgemm-bench on shape files, each with its own kernels: $SHAPES holds
#             FILE=KERNELS pairs separated by ';' (e.g. "bench/shapes/prefetch.txt=v8,v8-nopf"),
#             $SHAPES_ARGS (default --repeat 3 --cooldown 1), into shapes-NAME.csv
#             (NAME: the file's name without .txt)
#   phase     a second build, build-phase/ (-DHGEMM_PHASE_TIMER=ON: V8's tiles up to 128 wide
#             record per-phase clocks, the wider ones the walk's start and end, every width
#             each unit's start; carried instead where PHASE=1 scripts/carry_build.sh packed
#             it; built here, its ptxas reports are checked, ctest ptxas_kernels),
#             and hgemm-phase-timer on each "M N K" of $PHASE_SHAPES
#             (';'-separated, default "256 256 65536;1024 1024 1024"), 5 launches each,
#             into phase.log and phase-MxNxK.csv
#   occupancy hgemm-cluster-occupancy (tools/cluster_occupancy.cu): how many clusters of 1..16 one-SM blocks the
#             GPU holds at once, into occupancy.csv
#   smmap     hgemm-sm-map (tools/sm_map.cu): the SM of every block of V8's pairs and of every
#             cluster of 4, 8 and 16 the GPU holds, 6 launches each, into sm-map.csv; then
#             scripts/sm_groups.py: the GPCs those clusters join, whether a pair sits on one
#             TPC and stays put, which GPC each cluster index gets (the log), sm-groups.csv
#   concurrency hgemm-cluster-concurrency (tools/cluster_concurrency.cu): whether a grid of pairs
#             runs beside a grid of every cluster of 4, in which launch orders, into concurrency.csv
#   hostcost  hgemm-bench --host-cost: host time per call, $SUITE_KERNELS and cuBLAS
#   forms     hgemm-bench at 8192^3 in fp16 and bf16, layouts NN, NT and TN, each beside
#             cuBLAS COMPUTE_32F ($FORMS_ARGS, default --kernels auto,v8 --dtype f16,bf16
#             --layout nn,nt,tn --repeat 3 --size 8192 8192 8192 --interleave 12 --iters 36
#             --cooldown 1, interleaved as in run 98: 12 slices fit a form's 3 or 4 entries;
#             a $FORMS_ARGS of your own needs its own --interleave), into forms.csv, forms.log
#   batched   hgemm-bench on strided batches beside cublasGemmStridedBatchedEx, one process
#             per "BATCH:M N K" of $BATCHES (';' between them; default 64:1024 1024 128
#             and 8:4096 4096 4096) with $BATCHED_ARGS (default --kernels auto,v8
#             --repeat 3), each into batched-BATCH-MxNxK.csv, all in batched.csv, and
#             batched.log
#   accuracy  hgemm-bench --accuracy-sweep (mean/p99/max error per k) for $ACCURACY_KERNELS (default all)
#   window    hgemm-bench v5,v6,v7 with 100 timed launches instead of 30
#   python    the Python GPU tests, the Python CPU tests (torch's fake op side) and
#             python/bench_torch.py
#   fp8       hgemm_gemm_fp8: test_gpu_fp8, the same under compute-sanitizer memcheck and
#             racecheck, then python/fp8_bench.py beside torch._scaled_mm ($FP8_ARGS, default
#             the bar's block-scaled shapes, m 64, 128, 4096 at DeepSeek-V3's six (n, k), --repeat 3,
#             CUDA-graph timing) into fp8.csv and fp8.log, and 8192^3 with tensor scales into fp8-8192.csv
#   grouped   test_gpu_grouped (the 2D x 3D and the k-grouped forms), then python/grouped_bench.py
#             beside torch's grouped products and a per-expert loop ($GROUPED_ARGS, default
#             --tokens 64,4096 --routing uniform --repeat 3): bf16 into grouped.csv, the weight
#             gradients (--wgrad) into grouped-wgrad.csv, FP8 with block scales into grouped-fp8.csv;
#             then python/moe_e2e.py --train (Qwen3-MoE shapes, the experts through either grouped
#             product, prefill, decode and a training step) into moe-e2e.csv
#   epilogue  test_gpu_epilogue and test_gpu_c_in, then hgemm-epilogue-bench --wgrad (the TN
#             product into an fp32 C with beta 1 beside cuBLAS's, bf16, $WGRAD_ARGS, default
#             --repeat 2) into wgrad.csv
#   e2e       python/llama_e2e.py: a Llama-shaped model through hgemm and through torch
#   torch     the native torch operators (libhgemm_torch.so, built beside the library where
#             torch is installed): their GPU tests (python/tests/test_gpu_native.py), then
#             python/torch_e2e.py $TORCH_E2E_ARGS (default --repeats 3 --train) into
#             torch-e2e.csv and torch-e2e.log
#   target    V8's target (docs/tutorial/v8.md), read as run 153 read it: 8192^3 in
#             5 fresh processes, each 5 runs of 128 windows of one launch (AUTO and v8
#             beside cuBLAS: a comparison of cycles at one clock, to about 0.3 points),
#             into target-processes.csv; then AUTO at bench/shapes/target.txt (the built-in
#             sweep's shapes with every side >= 4096), 5 runs at the sweep's windows, into
#             target-shapes.csv; about 3 minutes by run 153's timings (the alone step gives the other reading)
#   processes scripts/processes.sh $PROCESS_ARGS (default: v5, v6, v7 and cuBLAS
#             in 3 fresh processes)
#   profile   scripts/profile.sh $PROFILE_KERNELS at $PROFILE_SHAPE ("M N K", default 8192^3;
#             Nsight Compute, clocks never touched); several shapes separated by ';'
#             ("4096 4096 4096;4096 14336 4096") each into profile-MxNxK.csv and its -raw.csv;
#             L2_DETAIL=1: L2's sectors by source and operation too (raw CSV), and the metric
#             names this ncu lists, ncu-metrics.txt; PROFILE_EXTRA: more metrics by name
#             (profile.sh; e.g. smsp__inst_executed.sum, the warp instructions, run 153)
#   nccl      libhgemm_nccl on 2+ GPUs: the tests labelled multigpu, then
#             hgemm-nccl-bench ($NCCL_BENCH_ARGS) into nccl.csv and
#             nccl-timeline.csv, and where $NCCL_BENCH_ARGS2 is set a second run
#             with those arguments (say --copy-engine --chunks 1) into nccl-ce.csv
#             and nccl-ce-timeline.csv; NVLink multicast off (NCCL_NVLS_ENABLE=0)
#
# Any of the hgemm-bench argument variables may carry --interleave N (with --iters a
# multiple of N, N a multiple of the entries timed, twice that when they are odd): the
# run's kernels and cuBLAS then take turns in N slices at the GPU's sustained clocks,
# each ratio taken at the same clock levels (docs/notes/v8-log.md, runs 95..97).
#
# device.log and summary.txt open with the sources' digest (scripts/source_digest.sh),
# which names the commit that ran even where the copy's .git is stale.
# Everything lands under $OUT (default ./device-out): device.log (all output),
# bench.csv, suite.csv, fp8.csv, alone.csv, target-processes.csv, target-shapes.csv, hostcost.csv, forms.csv, batched.csv, window30.csv, window100.csv, processes.csv, profile-raw.csv,
# profile.csv, nccl.csv, nccl-timeline.csv; where that is more than the 8 files a
# remote run returns, all of them in results.tgz beside device.log and summary.txt
# (scripts/pack_results.sh). Packing sees one invocation's $OUT only: give
# every step of a remote call to one invocation (each step's variables may
# be set together), or archive the call's whole output yourself, or files
# past the eighth are lost. Each step has its own timeout, so a hung
# kernel costs minutes, not the whole run. Never changes any GPU setting.
# Exits 0 when every step it ran passed, 1 when any failed (summary.txt says which).
set -uo pipefail

OUT=${OUT:-$PWD/device-out}
STEPS=${1:-build,sass,test,sanitize,bench}
BUILD=${DEVICE_CHECK_BUILD:-build-device} # another tree only for the script's own tests
BENCH_ARGS=${BENCH_ARGS:---repeat 3}
BENCH_KERNELS=${BENCH_KERNELS:-all}
SANITIZE_KERNELS=${SANITIZE_KERNELS:-}
RACECHECK_KERNELS=${RACECHECK_KERNELS:-${SANITIZE_KERNELS:-v0,v1,v2,v3,v4,v5,v6,v7,v8,v9}}
SWEEP_KERNELS=${SWEEP_KERNELS:-v5,v7,v8}
PROCESS_ARGS=${PROCESS_ARGS:-3 --kernels v5,v6,v7}
mkdir -p "$OUT"
LOG="$OUT/device.log"
SUMMARY="$OUT/summary.txt"
: >"$SUMMARY"

has() { [[ ",$STEPS," == *",$1,"* ]]; }

FAILED=0 # steps whose command returned nonzero: the script's exit status says whether any did

# run NAME TIMEOUT CMD...: run with a time limit, log everything, record the status.
# With STEP_LOG=FILE (STEP_LOG=... run ...), the command's output also goes to FILE.
run() {
    local name=$1 limit=$2
    shift 2
    echo "=== $name: $* (limit ${limit}s)" | tee -a "$LOG"
    local start=$SECONDS rc
    if [ -n "${STEP_LOG:-}" ]; then
        timeout --signal=KILL "$limit" "$@" 2>&1 | tee -a "$STEP_LOG" >>"$LOG"
        rc=${PIPESTATUS[0]}
    else
        timeout --signal=KILL "$limit" "$@" >>"$LOG" 2>&1
        rc=$?
    fi
    printf '%-28s rc=%-4s %4ds\n' "$name" "$rc" $((SECONDS - start)) | tee -a "$SUMMARY" "$LOG"
    [ "$rc" -eq 0 ] || FAILED=$((FAILED + 1))
    return "$rc"
}

{
    echo "=== device"
    date -u
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv
    nvcc --version | tail -1
    git rev-parse --short HEAD 2>/dev/null
} >>"$LOG" 2>&1
# The copy's .git may be older than its files: the digest names the sources
# (scripts/source_digest.sh REV here gives a commit's, to match it).
digest=$(scripts/source_digest.sh 2>/dev/null || echo unknown)
echo "source digest: $digest (scripts/source_digest.sh)" | tee -a "$LOG" >>"$SUMMARY"

# Ninja where there is one, for the build and phase steps' trees
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
# LAB=1: the lab's ablations too (lab/, -DHGEMM_LAB=ON)
case "${LAB:-0}" in 1|ON|on|yes) gen+=(-DHGEMM_LAB=ON) ;; *) gen+=(-DHGEMM_LAB=OFF) ;; esac

if has build; then
    # CMAKE_EXTRA: e.g. -DCMAKE_CUDA_FLAGS=-DHGEMM_HANG_NS=5000000000ull for a shorter hang guard
    # shellcheck disable=SC2086
    run configure 120 cmake -S . -B "$BUILD" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release ${CMAKE_EXTRA:-} || exit 1
    run build 300 cmake --build "$BUILD" -j "$(nproc)" || { tail -40 "$LOG"; exit 1; }
    # the ptxas reports this build kept (a CPU test; with LAB=1 it covers the
    # lab's kernels, which CI does not build)
    run ptxas 60 ctest --test-dir "$BUILD" -R '^ptxas_kernels$' --output-on-failure
fi

if has carried; then
    # the tree carry_build.sh built elsewhere: its CTest files name that checkout's folder
    from=$(cat build-carry/root 2>/dev/null || true)
    if [ -z "$from" ] || [ ! -f build-carry/build.tar.xz ]; then
        echo "carried: no build-carry/build.tar.xz and root (scripts/carry_build.sh)" | tee -a "$LOG" >>"$SUMMARY"
        exit 1
    fi
    # tar's xz where there is one, else Python's
    run carried-unpack 120 bash -c "tar xJf build-carry/build.tar.xz 2>/dev/null ||
        python3 -c 'import tarfile; tarfile.open(\"build-carry/build.tar.xz\").extractall()'" || exit 1
    # the checkout's folder and the Python the CTest files name: this machine's
    subst="s#$from#$PWD#g"
    py_from=$(cat build-carry/python 2>/dev/null || true) py_here=$(command -v python3 || true)
    [ -n "$py_from" ] && [ -n "$py_here" ] && subst="$subst;s#$py_from#$py_here#g"
    run carried-relocate 60 bash -c "find '$BUILD' -name CTestTestfile.cmake -exec sed -i '$subst' {} +" || exit 1
fi

if has sass; then
    # Per kernel function: how many HGMMA (warpgroup MMA) and HMMA (mma.sync) instructions.
    run sass 120 bash -c "cuobjdump --dump-sass $BUILD/libhgemm.so | awk '
        /Function :/ { f = \$3 }
        /HGMMA/ { hg[f]++ } /HMMA/ { hm[f]++ }
        END { for (k in hg) print \"HGMMA\", hg[k], k; for (k in hm) print \"HMMA\", hm[k], k }' | sort -k3"
    if [ -n "${SASS_DUMP:-}" ]; then
        run sass-dump 120 bash -c "cuobjdump --dump-sass $BUILD/libhgemm.so | awk -v pat=\"\$SASS_DUMP\" '
            /Function :/ { inside = index(\$0, pat) > 0 } inside' >'$OUT/sass-dump.txt'"
    fi
fi

if has test; then
    run ctest 300 ctest --test-dir "$BUILD" -L gpu --output-on-failure --timeout 200
fi

if has sanitize; then
    for tool in memcheck racecheck synccheck; do
        sanitize_list=$SANITIZE_KERNELS
        [ "$tool" = racecheck ] && sanitize_list=$RACECHECK_KERNELS
        # shellcheck disable=SC2086
        run "sanitize-$tool" 150 compute-sanitizer --tool "$tool" --error-exitcode 9 \
            "$BUILD/tests/sanitize/sanitize_driver" ${sanitize_list//,/ }
    done
    # libhgemm_nccl's sum kernels (one GPU, small shapes), where NCCL was found at configure time
    if [ -x "$BUILD/tests/multigpu/test_nccl_add" ]; then
        for tool in memcheck racecheck; do
            run "sanitize-nccl-add-$tool" 150 compute-sanitizer --tool "$tool" --error-exitcode 9 \
                "$BUILD/tests/multigpu/test_nccl_add"
        done
    fi
fi

# Multi-GPU right after the correctness steps: on a 2-GPU machine it is the
# step no other machine can run.
if has nccl; then
    # NVLink multicast can take a shared host's GPUs out of service: off, always.
    export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0} NCCL_DEBUG=${NCCL_DEBUG:-WARN}
    grep -E "^HGEMM_NCCL_(INCLUDE_DIR|LIBRARY):" "$BUILD/CMakeCache.txt" >>"$LOG" 2>&1
    if [ "$NCCL_NVLS_ENABLE" != 0 ]; then
        echo "nccl: NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE, refused: run with NCCL_NVLS_ENABLE=0" | tee -a "$SUMMARY" "$LOG"
    elif [ ! -x "$BUILD/tools/hgemm-nccl-bench" ]; then
        echo "nccl: $BUILD/tools/hgemm-nccl-bench was not built: NCCL not found at configure time" \
             "(see the 'NCCL' line of the configure output in $LOG)" | tee -a "$SUMMARY" "$LOG"
    else
        run nccl-topology 30 nvidia-smi topo -m
        run nccl-tests 240 ctest --test-dir "$BUILD" -L multigpu --output-on-failure --timeout 120
        # shellcheck disable=SC2086
        run nccl-bench 300 "$BUILD/tools/hgemm-nccl-bench" ${NCCL_BENCH_ARGS:-} --csv "$OUT/nccl.csv" \
            --timeline "$OUT/nccl-timeline.csv"
        if [ -n "${NCCL_BENCH_ARGS2:-}" ]; then
            # shellcheck disable=SC2086
            run nccl-bench2 300 "$BUILD/tools/hgemm-nccl-bench" $NCCL_BENCH_ARGS2 --csv "$OUT/nccl-ce.csv" \
                --timeline "$OUT/nccl-ce-timeline.csv"
        fi
    fi
fi

if has bench; then
    # shellcheck disable=SC2086
    run bench 400 "$BUILD/tools/hgemm-bench" --kernels "$BENCH_KERNELS" $BENCH_ARGS --csv "$OUT/bench.csv"
fi

if has fp8; then
    run fp8-test 120 "$BUILD/tests/gpu/test_gpu_fp8"
    run fp8-memcheck 300 compute-sanitizer --tool memcheck --error-exitcode 9 "$BUILD/tests/gpu/test_gpu_fp8"
    run fp8-racecheck 300 compute-sanitizer --tool racecheck --error-exitcode 9 "$BUILD/tests/gpu/test_gpu_fp8"
    # shellcheck disable=SC2086
    STEP_LOG="$OUT/fp8.log" run fp8-bench 400 env PYTHONPATH=python HGEMM_LIBRARY="$BUILD/libhgemm.so" \
        PYTHONUNBUFFERED=1 python3 python/fp8_bench.py ${FP8_ARGS:---scalings block --m 64,128,4096 \
        --shapes 2112:7168,24576:1536,32768:512,7168:16384,4096:7168,7168:2048 --repeat 3} --csv "$OUT/fp8.csv"
    STEP_LOG="$OUT/fp8.log" run fp8-8192 120 env PYTHONPATH=python HGEMM_LIBRARY="$BUILD/libhgemm.so" \
        PYTHONUNBUFFERED=1 python3 python/fp8_bench.py --scalings tensor --m 8192 --shapes 8192:8192 --repeat 3 \
        --csv "$OUT/fp8-8192.csv"
fi

if has grouped; then
    run grouped-tests 300 ctest --test-dir "$BUILD" -R 'test_gpu_grouped' --output-on-failure
    for mode in bf16 wgrad fp8; do
        case $mode in bf16) extra="" ;; wgrad) extra="--wgrad" ;; fp8) extra="--dtype fp8 --scaling block" ;; esac
        csv="$OUT/grouped.csv"
        [ "$mode" = bf16 ] || csv="$OUT/grouped-$mode.csv"
        # shellcheck disable=SC2086
        STEP_LOG="$OUT/grouped.log" run "grouped-$mode" 400 env PYTHONPATH=python HGEMM_LIBRARY="$BUILD/libhgemm.so" \
            PYTHONUNBUFFERED=1 python3 python/grouped_bench.py ${GROUPED_ARGS:---tokens 64,4096 --routing uniform \
            --repeat 3} $extra --csv "$csv"
    done
    STEP_LOG="$OUT/moe-e2e.log" run moe-e2e 400 env PYTHONPATH=python HGEMM_LIBRARY="$BUILD/libhgemm.so" \
        PYTHONUNBUFFERED=1 python3 python/moe_e2e.py --train --csv "$OUT/moe-e2e.csv"
fi

if has epilogue; then
    run epilogue-tests 300 ctest --test-dir "$BUILD" -R 'test_gpu_epilogue|test_gpu_c_in' --output-on-failure
    # shellcheck disable=SC2086
    run wgrad 300 "$BUILD/tools/hgemm-epilogue-bench" --wgrad --dtype bf16 ${WGRAD_ARGS:---repeat 2} \
        --csv "$OUT/wgrad.csv"
fi

if has e2e; then
    # A Llama-shaped model (random weights) with its linear layers through hgemm, beside torch
    # (E2E_ARGS: e.g. "--dtype bf16"; default fp16)
    # shellcheck disable=SC2086
    run e2e 300 env PYTHONPATH=python HGEMM_LIBRARY="$BUILD/libhgemm.so" PYTHONUNBUFFERED=1 \
        python3 python/llama_e2e.py ${E2E_ARGS:-} --csv "$OUT/llama.csv"
fi

if has torch; then
    run torch-tests 400 env PYTHONPATH=python HGEMM_LIBRARY="$BUILD/libhgemm.so" PYTHONUNBUFFERED=1 \
        python3 -m unittest discover -s python/tests -p 'test_gpu_native.py' -v
    # shellcheck disable=SC2086
    STEP_LOG="$OUT/torch-e2e.log" run torch-e2e 500 env PYTHONPATH=python HGEMM_LIBRARY="$BUILD/libhgemm.so" \
        PYTHONUNBUFFERED=1 python3 python/torch_e2e.py ${TORCH_E2E_ARGS:---repeats 3 --train} \
        --csv "$OUT/torch-e2e.csv"
fi

if has sweep; then
    # shellcheck disable=SC2086
    run sweep 400 "$BUILD/tools/hgemm-bench" --kernels "$SWEEP_KERNELS" --sweep ${SWEEP_ARGS:-} --csv "$OUT/sweep.csv"
fi

if has suite; then
    # shellcheck disable=SC2086
    run suite 560 "$BUILD/tools/hgemm-bench" --kernels "${SUITE_KERNELS:-auto}" \
        --suite llm ${SUITE_ARGS:---repeat 3 --cooldown 0.5 --interleave 6 --iters 30} --csv "$OUT/suite.csv"
fi

if has alone; then
    # shellcheck disable=SC2086
    run alone 400 "$BUILD/tools/hgemm-bench" --kernels "${ALONE_KERNELS:-auto}" \
        ${ALONE_ARGS:---size 8192 8192 8192 --cooldown 0 --warmup 100 --iters 300 --repeat 6} --csv "$OUT/alone.csv"
fi

if has shapes; then
    IFS=';' read -ra shape_runs <<<"${SHAPES:-}"
    for pair in "${shape_runs[@]}"; do
        file=${pair%%=*} kernels=${pair#*=}
        name=$(basename "$file" .txt)
        # shellcheck disable=SC2086
        run "shapes-$name" 400 "$BUILD/tools/hgemm-bench" --kernels "$kernels" --shapes "$file" \
            ${SHAPES_ARGS:---repeat 3 --cooldown 1} --csv "$OUT/shapes-$name.csv"
    done
fi

if has phase; then
    # carried (PHASE=1 scripts/carry_build.sh): the archive's timer; else built here
    if ! { has carried && grep -qx build-phase/tools/hgemm-phase-timer build-carry/files; }; then
        run phase-configure 120 cmake -S . -B build-phase "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DHGEMM_PHASE_TIMER=ON
        run phase-build 300 cmake --build build-phase --target hgemm-phase-timer -j "$(nproc)"
        # src/v8/all.cu with the phase clocks: no spill, no serialized wgmma
        run phase-ptxas 60 ctest --test-dir build-phase -R '^ptxas_kernels$' --output-on-failure
    fi
    IFS=';' read -r -a phase_shapes <<<"${PHASE_SHAPES:-256 256 65536;1024 1024 1024}"
    for shape in "${phase_shapes[@]}"; do
        # shellcheck disable=SC2086
        set -- $shape
        STEP_LOG="$OUT/phase.log" run "phase-$1x$2x$3" 60 build-phase/tools/hgemm-phase-timer "$1" "$2" "$3" 5 \
            "$OUT/phase-$1x$2x$3.csv"
    done
fi

if has occupancy; then
    STEP_LOG="$OUT/occupancy.csv" run occupancy 30 "$BUILD/tools/hgemm-cluster-occupancy"
fi

if has smmap; then
    # the map itself is long: into its own file; the summary into the log
    run smmap 60 bash -c '"$1" >"$2" && python3 scripts/sm_groups.py "$2" --csv "$3"' smmap \
        "$BUILD/tools/hgemm-sm-map" "$OUT/sm-map.csv" "$OUT/sm-groups.csv"
fi

if has concurrency; then
    STEP_LOG="$OUT/concurrency.csv" run concurrency 60 "$BUILD/tools/hgemm-cluster-concurrency"
fi

if has hostcost; then
    run hostcost 120 "$BUILD/tools/hgemm-bench" --kernels "${SUITE_KERNELS:-v8,v9,auto,auto-f16acc}" \
        --host-cost --host-cost-csv "$OUT/hostcost.csv"
fi

if has forms; then
    # The forms of the bar: AUTO and V8 in fp16 and bf16, NN, NT and TN, each beside cuBLAS
    # in the same process (cublas16 for fp16 only). About 4 minutes with the defaults.
    : >"$OUT/forms.log"
    # shellcheck disable=SC2086
    STEP_LOG="$OUT/forms.log" run forms 560 "$BUILD/tools/hgemm-bench" \
        ${FORMS_ARGS:---kernels auto,v8 --dtype f16,bf16 --layout nn,nt,tn --repeat 3 --size 8192 8192 8192 --interleave 12 --iters 36 --cooldown 1} \
        --csv "$OUT/forms.csv"
fi

if has batched; then
    # Strided batches, every entry its own matrices, beside cublasGemmStridedBatchedEx: one
    # process per "BATCH:M N K" of $BATCHES (';' between them), then one CSV (each later
    # file's column line dropped; its '#' lines stay, and readers skip them).
    : >"$OUT/batched.log"
    : >"$OUT/batched.csv"
    IFS=';' read -ra batch_specs <<<"${BATCHES:-64:1024 1024 128;8:4096 4096 4096}"
    for spec in "${batch_specs[@]}"; do
        count=${spec%%:*} dims=${spec#*:}
        read -ra dim <<<"$dims"
        if [[ $spec != *:* || ! $count =~ ^[0-9]+$ || ${#dim[@]} -ne 3 ]]; then
            echo "batched: '$spec' is not BATCH:M N K" | tee -a "$LOG" >>"$SUMMARY"
            FAILED=$((FAILED + 1))
            continue
        fi
        name=batched-$count-${dim[0]}x${dim[1]}x${dim[2]}
        # shellcheck disable=SC2086
        STEP_LOG="$OUT/batched.log" run "$name" 300 "$BUILD/tools/hgemm-bench" \
            ${BATCHED_ARGS:---kernels auto,v8 --repeat 3} --batch "$count" --size "${dim[@]}" \
            --csv "$OUT/$name.csv"
        if [ -s "$OUT/$name.csv" ]; then
            if [ -s "$OUT/batched.csv" ]; then
                awk '/^#/ || seen++ { print }' "$OUT/$name.csv" >>"$OUT/batched.csv"
            else
                cat "$OUT/$name.csv" >>"$OUT/batched.csv"
            fi
        fi
    done
fi

if has accuracy; then
    run accuracy 300 "$BUILD/tools/hgemm-bench" --kernels "${ACCURACY_KERNELS:-all}" --accuracy-sweep \
        --csv "$OUT/accuracy.csv"
fi

if has window; then
    run window-30 300 "$BUILD/tools/hgemm-bench" --kernels v5,v6,v7 --repeat 3 --iters 30 --csv "$OUT/window30.csv"
    run window-100 300 "$BUILD/tools/hgemm-bench" --kernels v5,v6,v7 --repeat 3 --iters 100 --csv "$OUT/window100.csv"
fi

if has python; then
    run python-gpu 300 env PYTHONPATH=python HGEMM_LIBRARY="$BUILD/libhgemm.so" \
        python3 -m unittest discover -s python/tests -p 'test_gpu*.py' -v
    # The CPU tests too: with torch there, its op's fake side (meta tensors, symbolic tracing) runs.
    run python-cpu 120 env PYTHONPATH=python HGEMM_LIBRARY="$BUILD/libhgemm.so" \
        python3 -m unittest discover -s python/tests -p 'test_cpu*.py' -v
    run python-bench 300 env PYTHONPATH=python HGEMM_LIBRARY="$BUILD/libhgemm.so" \
        python3 python/bench_torch.py
fi

if has processes; then
    # shellcheck disable=SC2086
    run processes 400 env OUT="$OUT" BENCH="$BUILD/tools/hgemm-bench" scripts/processes.sh $PROCESS_ARGS
fi

if has target; then
    run target-processes 400 env OUT="$OUT/target.d" BENCH="$BUILD/tools/hgemm-bench" scripts/processes.sh 5 \
        --kernels auto,v8 --size 8192 8192 8192 --repeat 5 --interleave 128 --iters 128 --cooldown 1
    [ -f "$OUT/target.d/processes.csv" ] && mv "$OUT/target.d/processes.csv" "$OUT/target-processes.csv"
    rm -rf "$OUT/target.d"
    run target-shapes 300 "$BUILD/tools/hgemm-bench" --kernels auto --shapes bench/shapes/target.txt \
        --repeat 5 --interleave 6 --iters 30 --cooldown 1 --csv "$OUT/target-shapes.csv"
fi

if has profile; then
    # PROFILE_SHAPE: "M N K", or several separated by ';' (each into
    # profile-MxNxK.csv and profile-MxNxK-raw.csv, one step each)
    IFS=';' read -ra pshapes <<<"${PROFILE_SHAPE:-8192 8192 8192}"
    for shape in "${pshapes[@]}"; do
        read -r pm pn pk <<<"$shape"
        if [ "${#pshapes[@]}" -eq 1 ]; then
            run profile 500 env BUILD="$BUILD" OUT="$OUT" scripts/profile.sh \
                "${PROFILE_KERNELS:-v0,v1,v2,v3,v4,v5,v6,v7,v8,cublas32,cublas16}" "$pm" "$pn" "$pk"
            continue
        fi
        name="profile-${pm}x${pn}x${pk}"
        run "$name" 500 env BUILD="$BUILD" OUT="$OUT/$name.d" scripts/profile.sh \
            "${PROFILE_KERNELS:-v0,v1,v2,v3,v4,v5,v6,v7,v8,cublas32,cublas16}" "$pm" "$pn" "$pk"
        [ -f "$OUT/$name.d/profile.csv" ] && mv "$OUT/$name.d/profile.csv" "$OUT/$name.csv"
        [ -f "$OUT/$name.d/profile-raw.csv" ] && mv "$OUT/$name.d/profile-raw.csv" "$OUT/$name-raw.csv"
        [ -f "$OUT/$name.d/ncu-metrics.txt" ] && mv "$OUT/$name.d/ncu-metrics.txt" "$OUT/ncu-metrics.txt"
        rm -rf "$OUT/$name.d"
    done
fi

echo "=== summary"
cat "$SUMMARY"
# More files than a remote run returns (8): all of them into results.tgz
# (scripts/pack_results.sh; PACK=1 packs whatever the count, PACK=0 never).
scripts/pack_results.sh "$OUT" 8 2>&1 | tee -a "$LOG"
# The last lines of each step's output, so the caller sees the essentials.
grep -E "passed|failed|FAIL|ERROR SUMMARY|tests passed|HGMMA|HMMA|stuck" "$LOG" | tail -60 || true
# Nonzero where any step failed (not the grep's status: a run of bench steps
# alone printed none of those lines and exited 1, while a failed ctest exited 0).
if [ "$FAILED" -gt 0 ]; then
    echo "device-check: $FAILED step(s) failed (summary.txt)"
    exit 1
fi
exit 0
