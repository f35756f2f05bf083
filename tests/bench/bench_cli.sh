#!/bin/sh
# bench_cli.sh CASE BENCH [KERNEL_TABLE_NAMES [CSV]]
# One test of hgemm-bench's command line; checks the exit status AND the text.
# The argument cases need no GPU (arguments are parsed before the GPU is
# looked for). `no_gpu` runs only without a GPU (77 otherwise); `gpu_smoke`
# only with one (77 otherwise).
set -u
case_name=$1
bench=$2
names=${3:-}
llm_file=$(dirname "$0")/../../bench/shapes/llm.txt
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

fail() {
    echo "FAIL ($case_name): $*"
    echo "--- stdout"; cat "$tmp/out"
    echo "--- stderr"; cat "$tmp/err"
    exit 1
}
run() {
    "$bench" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    echo "\$ hgemm-bench $* -> exit $rc"
}
expect_rc() { [ "$rc" -eq "$1" ] || fail "expected exit status $1, got $rc"; }
expect_in() { grep -q -F -e "$2" "$tmp/$1" || fail "expected '$2' on std$1"; }
expect_empty() { [ ! -s "$tmp/$1" ] || fail "expected nothing on std$1"; }
# A bad command line: status 1, one message naming the problem plus the
# usage hint on stderr, nothing on stdout, no crash.
bad() {
    msg=$1
    shift
    run "$@"
    expect_rc 1
    expect_in err "hgemm-bench: "
    expect_in err "$msg"
    expect_in err "--help"
    expect_empty out
    [ "$(wc -l <"$tmp/err")" -le 2 ] || fail "expected one message and one hint"
}
# The data rows of a timing CSV, read by the header's names: every row's
# interleave cell is $2, and v0 has rows, each with a positive ms and a
# finite vs_cublas32 (printf writes nan and inf as words).
expect_interleave() {
    problems=$(awk -F, -v want="$2" '
        /^#/ { next }
        !header { for (i = 1; i <= NF; i++) col[$i] = i; header = 1; next }
        {
            if ($col["interleave"] != want) printf "%s run %s: interleave %s; ", $col["kernel"], $col["run"], $col["interleave"]
            if ($col["kernel"] != "v0") next
            v0++
            if ($col["ms"] !~ /^[0-9]+\.[0-9]+$/ || $col["ms"] + 0 <= 0) printf "v0 run %s: ms %s; ", $col["run"], $col["ms"]
            if ($col["vs_cublas32"] !~ /^[0-9]+\.[0-9]+$/) printf "v0 run %s: vs_cublas32 %s; ", $col["run"], $col["vs_cublas32"]
        }
        END { if (!v0) printf "no v0 row" }' "$1")
    [ -z "$problems" ] || fail "$1, interleave $2 expected: $problems"
}
has_gpu() { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; }

case $case_name in
help)
    run --help
    expect_rc 0
    expect_in out "usage: hgemm-bench"
    for flag in --kernels --size --sweep --warmup --iters --cooldown --repeat --csv --list \
                --accuracy --accuracy-sweep --version --help "-h, --help" "--option=VALUE" \
                "--suite NAME" "--shapes FILE" --list-shapes --rotate --no-rotate --host-cost \
                "--host-cost-csv FILE" gbps rotate_sets "# rotated:" "4800 GB/s" hbm_peak_gbps \
                "--dtype LIST" "--layout LIST" "--batch N" "f16, bf16" "nt, nn, tn, tt" \
                "dtype, layout and batch" hgemm_gemm cublasGemmStridedBatchedEx "NOT_SUPPORTED" \
                "--interleave N" "2..1000" "and interleave" --explain "--sms N" --no-lead-in "lead-in" \
                "--max-window-ms MS" "(default: 15; 0: no cap)" "up to a launch a window" \
                "compare cycles" "a kernel timed alone"; do
        expect_in out "$flag"
    done
    expect_empty err
    # --help with a valid size still prints help and touches no GPU.
    run --size 64 64 64 --help
    expect_rc 0
    expect_in out "usage: hgemm-bench"
    run -h
    expect_rc 0
    expect_in out "usage: hgemm-bench"
    ;;
version)
    run --version
    expect_rc 0
    expect_empty err
    grep -Eq '^hgemm-bench [0-9]+\.[0-9]+\.[0-9]+ \(commit [^)]+\)$' "$tmp/out" ||
        fail "expected 'hgemm-bench X.Y.Z (commit ...)'"
    ;;
accepted)
    # Forms that must be accepted: they get past the command line and fail
    # only for want of a GPU (exit 2), or run where there is one (exit 0).
    if has_gpu; then want=0; else want=2; fi
    quick="--warmup 0 --iters 1 --cooldown 0"
    for args in "--kernels auto --size 64 64 64" "--kernels AUTO --size 64 64 64" \
                "--kernels auto-f16acc,v9 --size 64 64 64" \
                "--kernels V5,v6 --size 64 64 64" "--kernels All --size 64 64 64" \
                "--kernels=auto --size=64" "--size=64,72,80 --kernels=v0" "--size=64x72x80 --kernels=v0" \
                "--iters=1 --warmup=0 --cooldown=0 --repeat=1 --size=64 --kernels=v0" \
                "--accuracy --size=64 --kernels=v0" "--accuracy-sweep --kernels=v0"; do
        # shellcheck disable=SC2086 # word splitting of the two lists is intended
        run $args $quick
        expect_rc $want
        [ "$want" -eq 0 ] || expect_in err "no sm_90 GPU"
    done
    printf '64 72 80\n' >"$tmp/one.txt"
    for args in "--shapes $tmp/one.txt --kernels=v0" "--shapes=$tmp/one.txt --kernels=v0 --rotate" \
                "--size=64 --kernels=v0 --no-rotate" "--size=64 --kernels=v0 --rotate"; do
        # shellcheck disable=SC2086
        run $args $quick
        expect_rc $want
        [ "$want" -eq 0 ] || expect_in err "no sm_90 GPU"
    done
    for args in "--size=64 --kernels=v0 --interleave 2 --iters 2" \
                "--size=64 --kernels=v0 --interleave 2 --iters 2 --no-lead-in" \
                "--size=64 --kernels=v0 --interleave=1000 --iters=1000 --repeat 2" \
                "--size=64 --kernels=v0 --interleave 2 --iters 8 --max-window-ms 0.5" \
                "--size=64 --kernels=v0 --interleave 2 --iters 8 --max-window-ms=0"; do
        # shellcheck disable=SC2086
        run $args --warmup 0 --cooldown 0
        expect_rc $want
        [ "$want" -eq 0 ] || expect_in err "no sm_90 GPU"
    done
    for args in "--host-cost --kernels=v0" "--host-cost-csv $tmp/cost.csv --kernels=v0"; do
        # shellcheck disable=SC2086
        run $args
        expect_rc $want
        [ "$want" -eq 0 ] || expect_in err "no sm_90 GPU"
    done
    run --kernels auto --list
    expect_rc 0
    grep -q "^auto .*fp32 .*by shape" "$tmp/out" || fail "--list does not say what auto is"
    grep -q "^auto-f16acc .*fp16 .*by shape" "$tmp/out" || fail "--list does not say what auto-f16acc is"
    ;;
unknown_flag)
    bad "unknown option '--frobnicate'" --frobnicate
    bad "unexpected argument 'extra'" extra
    bad "unknown option '-x'" -x
    ;;
bad_size)
    bad "'0' is not a positive integer" --size 0 1 1
    bad "'-5' is not a positive integer" --size -5 3 3
    bad "'x' is not a positive integer" --size x 1 1
    bad "--size needs three arguments M N K" --size 8 8
    bad "--size needs three arguments M N K" --size
    bad "'1.5' is not a positive integer" --size 4 1.5 4
    bad "'99999999999999999999' is not a positive integer" --size 4 4 99999999999999999999
    bad "'--iters' is not a positive integer" --size 8 8 --iters 3
    bad "--size and --sweep exclude each other" --size 8 8 8 --sweep
    ;;
bad_values)
    bad "--iters: '0' is not an integer" --iters 0
    bad "--warmup: '-1' is not an integer" --warmup -1
    bad "--repeat: 'x' is not an integer" --repeat x
    bad "--cooldown: 'abc' is not a number of seconds" --cooldown abc
    bad "--cooldown: '-1' is not a number of seconds" --cooldown -1
    bad "--iters needs an argument" --iters
    bad "--csv needs a file name" --csv
    bad "--kernels needs an argument" --kernels
    bad "--iters: '0' is not an integer" --iters=0
    bad "--kernels needs an argument" --kernels=
    bad "--csv needs a file name" --csv=
    bad "--list takes no value" --list=1
    bad "--version takes no value" --version=2
    bad "unknown option '--frobnicate'" --frobnicate=1
    bad "'0' is not a positive integer" --size=0
    bad "expected N or M,N,K" --size=8,8
    bad "expected N or M,N,K" --size=8,8,8,8
    bad "'y' is not a positive integer" --size=8,y,8
    bad "--accuracy-sweep has its own shapes" --accuracy-sweep --size 8 8 8
    bad "--list-shapes takes no value" --list-shapes=1
    bad "--rotate takes no value" --rotate=yes
    bad "--no-rotate takes no value" --no-rotate=1
    bad "--host-cost takes no value" --host-cost=1
    bad "--suite needs a name: llm" --suite
    bad "--suite needs a name: llm" --suite=
    bad "--suite: unknown suite 'nosuch' (known: llm)" --suite nosuch
    bad "--suite is given twice" --suite llm --suite llm
    bad "--shapes needs a file name" --shapes
    bad "--shapes needs a file name" --shapes=
    bad "--shapes is given twice" --shapes a.txt --shapes b.txt
    bad "--shapes: cannot read '$tmp/nosuch.txt'" --shapes "$tmp/nosuch.txt"
    bad "--shapes: error reading '$tmp'" --shapes "$tmp"
    bad "--host-cost-csv needs a file name" --host-cost-csv
    bad "--interleave: 'x' is not an integer in 2..1000" --interleave x
    bad "--interleave: '1' is not an integer in 2..1000" --interleave 1
    bad "--interleave: '1001' is not an integer in 2..1000" --interleave 1001
    bad "--interleave: '2.5' is not an integer in 2..1000" --interleave=2.5
    bad "--interleave: '' is not an integer in 2..1000" --interleave=
    bad "--interleave needs an argument" --interleave
    bad "--interleave 8 needs --iters >= 8 (a launch per slice), got 4" --interleave 8 --iters 4
    bad "--interleave 31 needs --iters >= 31 (a launch per slice), got 30" --interleave 31
    bad "--no-lead-in applies to --interleave's slices" --no-lead-in
    bad "--no-lead-in takes no value" --interleave 2 --no-lead-in=1
    bad "--max-window-ms applies to --interleave's windows" --max-window-ms 15
    bad "--max-window-ms applies to --interleave's windows" --host-cost --max-window-ms=0
    bad "--max-window-ms: '-1' is not a number of milliseconds in 0..1000000" --interleave 2 --max-window-ms -1
    bad "--max-window-ms: '' is not a number of milliseconds in 0..1000000" --interleave 2 --max-window-ms=
    bad "--max-window-ms: 'x' is not a number of milliseconds in 0..1000000" --interleave 2 --max-window-ms x
    bad "--max-window-ms: 'nan' is not a number of milliseconds in 0..1000000" --interleave 2 --max-window-ms nan
    bad "--max-window-ms: '2e6' is not a number of milliseconds in 0..1000000" --interleave 2 --max-window-ms 2e6
    bad "--max-window-ms needs an argument" --interleave 2 --max-window-ms
    ;;
suite)
    # The built-in suite and bench/shapes/llm.txt list the same shapes, in
    # the same order; --list-shapes needs no GPU and prints a valid shapes file.
    [ -r "$llm_file" ] || fail "cannot read $llm_file"
    run --suite llm --list-shapes
    expect_rc 0
    expect_empty err
    cp "$tmp/out" "$tmp/suite"
    run --shapes "$llm_file" --list-shapes
    expect_rc 0
    expect_empty err
    cmp -s "$tmp/suite" "$tmp/out" || { diff "$tmp/suite" "$tmp/out"; fail "--suite llm and $llm_file differ"; }
    run --shapes "$tmp/suite" --list-shapes
    expect_rc 0
    cmp -s "$tmp/suite" "$tmp/out" || fail "--list-shapes output read back as --shapes differs"
    run --suite=LLM --list-shapes
    expect_rc 0
    cmp -s "$tmp/suite" "$tmp/out" || fail "--suite=LLM differs from --suite llm"
    count=$(wc -l <"$tmp/suite")
    [ "$count" -ge 32 ] || fail "the llm suite has $count shapes, expected at least 32"
    dups=$(awk '{print $1, $2, $3}' "$tmp/suite" | sort | uniq -d)
    [ -z "$dups" ] || fail "shapes listed twice: $dups"
    expect_in out "# memory-bound, operands rotated"
    # Every kind of shape DESIGN.md names: decode, prefill, square, long k, wide, ragged.
    for shape in "1 4096 4096" "64 28672 4096" "16 4096 14336" "1 8192 28672" "16 8192 28672" \
                 "96 4096 4096" "256 4096 14336" "256 8192 28672" \
                 "2048 6144 4096" "8192 4096 14336" "16384 16384 16384" "512 512 512" \
                 "256 256 65536" "1024 1024 32768" "512 512 131072" "2048 128256 4096" \
                 "32768 4096 1024" "1000 1000 1000" "777 1032 520" "8191 8193 8190" "1 4095 4097"; do
        grep -q "^$shape\( \|\$\)" "$tmp/suite" || fail "the llm suite lacks $shape"
    done
    # decode rows rotate; the others do not, unless --rotate; --no-rotate: none.
    grep -q '^1 4096 4096  # memory-bound, operands rotated$' "$tmp/suite" || fail "decode not rotated"
    grep -q '^8192 8192 8192$' "$tmp/suite" || fail "8192^3 should not rotate by default"
    grep -q '^128 4096 4096  # operands rotated$' "$tmp/suite" || fail "batched decode not rotated"
    grep -q '^512 6144 4096$' "$tmp/suite" || fail "512 rows should not rotate by default"
    run --suite llm --list-shapes --rotate
    expect_in out "8192 8192 8192  # operands rotated"
    run --suite llm --list-shapes --no-rotate
    expect_in out "1 4096 4096  # memory-bound, not rotated"
    ;;
shapes_file)
    # Separators, comments, blank lines, CRLF line ends.
    printf '# a comment\n\n  1 2 3\n4,5,6 # trailing\n7 , 8 ,9\r\n\t10\t11\t12\n13, 14 15\n' >"$tmp/ok.txt"
    run --shapes "$tmp/ok.txt" --list-shapes
    expect_rc 0
    expect_empty err
    printf '1 2 3  # memory-bound, operands rotated\n4 5 6  # memory-bound, operands rotated\n7 8 9  # memory-bound, operands rotated\n10 11 12  # memory-bound, operands rotated\n13 14 15  # memory-bound, operands rotated\n' >"$tmp/want"
    cmp -s "$tmp/want" "$tmp/out" || { diff "$tmp/want" "$tmp/out"; fail "shapes read wrong"; }
    run --shapes="$tmp/ok.txt" --list-shapes
    expect_rc 0
    cmp -s "$tmp/want" "$tmp/out" || fail "--shapes=FILE reads differently"
    # Bad lines: the file and the line are named.
    printf '1 2 3\n\n1 2\n' >"$tmp/two.txt"
    bad "$tmp/two.txt:3: expected three sizes M N K, got 2" --shapes "$tmp/two.txt"
    printf '# x\n1 2 3 4\n' >"$tmp/four.txt"
    bad "$tmp/four.txt:2: more than three sizes ('4' after M N K)" --shapes "$tmp/four.txt"
    printf '1 x 3\n' >"$tmp/word.txt"
    bad "$tmp/word.txt:1: 'x' is not a positive integer" --shapes "$tmp/word.txt"
    printf '1 0 3\n' >"$tmp/zero.txt"
    bad "$tmp/zero.txt:1: '0' is not a positive integer" --shapes "$tmp/zero.txt"
    printf '1 2 -3\n' >"$tmp/neg.txt"
    bad "$tmp/neg.txt:1: '-3' is not a positive integer" --shapes "$tmp/neg.txt"
    printf '1 2 3.5\n' >"$tmp/frac.txt"
    bad "$tmp/frac.txt:1: '3.5' is not a positive integer" --shapes "$tmp/frac.txt"
    printf '1 2 4294967296\n' >"$tmp/big.txt"
    bad "$tmp/big.txt:1: '4294967296' is not a positive integer" --shapes "$tmp/big.txt"
    printf '1,,2,3\n' >"$tmp/comma2.txt"
    bad "$tmp/comma2.txt:1: a comma without a size after it" --shapes "$tmp/comma2.txt"
    printf '1,2,3,\n' >"$tmp/comma_end.txt"
    bad "$tmp/comma_end.txt:1: a comma without a size after it" --shapes "$tmp/comma_end.txt"
    printf ',1,2,3\n' >"$tmp/comma_start.txt"
    bad "$tmp/comma_start.txt:1: a comma before the first size" --shapes "$tmp/comma_start.txt"
    printf '# nothing\n\n   \n' >"$tmp/empty.txt"
    bad "--shapes: '$tmp/empty.txt' holds no shape" --shapes "$tmp/empty.txt"
    : >"$tmp/zero_bytes.txt"
    bad "--shapes: '$tmp/zero_bytes.txt' holds no shape" --shapes "$tmp/zero_bytes.txt"
    ;;
exclusive)
    printf '8 8 8\n' >"$tmp/s.txt"
    bad "--size and --sweep exclude each other" --sweep --size 8 8 8
    bad "--size and --suite exclude each other" --size 8 8 8 --suite llm
    bad "--size and --shapes exclude each other" --size=8 --shapes "$tmp/s.txt"
    bad "--sweep and --suite exclude each other" --suite llm --sweep
    bad "--sweep and --shapes exclude each other" --sweep --shapes "$tmp/s.txt"
    bad "--suite and --shapes exclude each other" --shapes "$tmp/s.txt" --suite llm
    bad "--accuracy-sweep has its own shapes" --accuracy-sweep --suite llm
    bad "--accuracy-sweep has its own shapes" --accuracy-sweep --shapes "$tmp/s.txt"
    bad "--rotate and --no-rotate exclude each other" --rotate --no-rotate
    bad "--rotate applies to timing: not with --accuracy" --accuracy --rotate
    bad "--no-rotate applies to timing: not with --accuracy-sweep" --no-rotate --accuracy-sweep
    bad "--host-cost and --accuracy exclude each other" --host-cost --accuracy
    bad "--host-cost times its own 64 x 64 x 64 problem: no --suite with it" --host-cost --suite llm
    bad "--host-cost times its own 64 x 64 x 64 problem: no --size with it" --host-cost-csv c.csv --size 8 8 8
    bad "--list-shapes lists timed shapes: not with --host-cost" --host-cost --list-shapes
    bad "--rotate applies to timed shapes: not with --host-cost" --host-cost --rotate
    bad "--iters does not apply to --host-cost" --host-cost --iters 3
    bad "--cooldown does not apply to --host-cost" --cooldown=0 --host-cost
    bad "--csv holds timed shapes' rows" --host-cost --csv c.csv
    bad "--interleave applies to timing: not with --accuracy" --accuracy --interleave 2
    bad "--interleave applies to timing: not with --accuracy-sweep" --interleave=2 --accuracy-sweep
    bad "--interleave applies to timed shapes: not with --host-cost" --host-cost --interleave 2
    bad "--interleave applies to timed shapes: not with --host-cost" --interleave 3 --host-cost-csv c.csv
    [ ! -e c.csv ] || fail "a CSV was written for a refused command line"
    ;;
forms)
    # --dtype, --layout and --batch: lists in any case, '=' forms, combined
    # with the other modes; they get past the command line and fail only for
    # want of a GPU (exit 2), or run where there is one (exit 0).
    if has_gpu; then want=0; else want=2; fi
    quick="--warmup 0 --iters 1 --cooldown 0 --size=64 --kernels auto"
    for args in "--dtype f16" "--dtype bf16" "--dtype F16,BF16" "--dtype=bf16,f16" "--layout nn" \
                "--layout=NN,nt,tn,tt" "--batch 3" "--batch=64" "--dtype bf16 --layout tn --batch 2" \
                "--accuracy --dtype bf16 --layout tt" "--rotate --layout nn --batch 2"; do
        # shellcheck disable=SC2086 # word splitting of the two lists is intended
        run $args $quick
        expect_rc $want
        [ "$want" -eq 0 ] || expect_in err "no sm_90 GPU"
    done
    run --host-cost --kernels auto --dtype bf16 --layout nn --batch 2
    expect_rc $want
    # an ablation in another form gets past the command line too (a lab
    # build's; without the lab, no ablation is a kernel name)
    run --kernels v8-noseam,v8-dp --dtype bf16 --layout nn --warmup 0 --iters 1 --cooldown 0 --size=64
    if [ "${HGEMM_LAB:-0}" = 1 ]; then
        expect_rc $want
    else
        expect_rc 1
        expect_in err "unknown kernel 'v8-noseam'"
    fi
    # The shapes do not depend on the forms.
    run --size 64 72 80 --list-shapes --dtype bf16 --layout nn,tt --batch 7
    expect_rc 0
    expect_empty err
    [ "$(cat "$tmp/out")" = "64 72 80  # memory-bound, operands rotated" ] || fail "--list-shapes changed with forms"
    ;;
bad_forms)
    bad "--dtype: unknown element type 'fp32' (known: f16, bf16)" --dtype fp32
    bad "--dtype: unknown element type 'f8' (known: f16, bf16)" --dtype f16,f8
    bad "--dtype: empty name in 'f16,'" --dtype f16,
    bad "--dtype: empty name in ',bf16'" --dtype=,bf16
    bad "--dtype: 'F16' is listed twice" --dtype f16,F16
    bad "--dtype needs an argument: f16, bf16 or a list like f16,bf16" --dtype
    bad "--dtype needs an argument" --dtype=
    bad "--layout: unknown layout 'xt' (known: nt, nn, tn, tt)" --layout xt
    bad "--layout: unknown layout 'n' (known: nt, nn, tn, tt)" --layout nt,n
    bad "--layout: unknown layout 'ntn'" --layout ntn
    bad "--layout: empty name in 'nn,,nt'" --layout nn,,nt
    bad "--layout: 'nt' is listed twice" --layout nt,nn,nt
    bad "--layout needs an argument: nt, nn, tn, tt or a list like nn,nt,tn" --layout
    bad "--layout needs an argument" --layout=
    bad "--batch: '0' is not an integer in 1..1000000" --batch 0
    bad "--batch: '-2' is not an integer in 1..1000000" --batch -2
    bad "--batch: 'x' is not an integer in 1..1000000" --batch x
    bad "--batch: '2.5' is not an integer in 1..1000000" --batch=2.5
    bad "--batch: '1000001' is not an integer in 1..1000000" --batch 1000001
    bad "--batch: '' is not an integer in 1..1000000" --batch=
    bad "--batch needs an argument" --batch
    bad "--batch: '--size' is not an integer" --batch --size 8 8 8
    ;;
bad_kernels)
    bad "unknown kernel 'nosuch'" --kernels nosuch
    bad "unknown kernel 'nosuch'" --kernels v0,nosuch
    bad "empty name" --kernels v0,,v1
    bad "listed twice" --kernels v0,v0
    bad "listed twice" --kernels v0,V0
    bad "unknown kernel 'v0x'" --kernels v0x
    ;;
list)
    run --list
    expect_rc 0
    expect_empty err
    "$names" >"$tmp/names" || fail "$names failed"
    [ -s "$tmp/names" ] || fail "the kernel table is empty"
    while read -r name; do
        grep -q "^$name " "$tmp/out" || fail "--list does not print kernel '$name'"
    done <"$tmp/names"
    if [ "${HGEMM_LAB:-0}" = 1 ]; then
        # the ablations say which forms they run: v8-noseam every form, v8-dp f16 nt
        grep -q "^v8-noseam fp32  ablation (every form): " "$tmp/out" || fail "--list: v8-noseam's forms"
        grep -q "^v8-dp  fp32  ablation (f16 nt): " "$tmp/out" || fail "--list: v8-dp's forms"
    else
        # the library alone lists no ablation (they are the lab's, -DHGEMM_LAB=ON)
        grep -q "ablation" "$tmp/out" && fail "--list: an ablation without the lab"
    fi
    ;;
explain)
    # --explain --fp8: hgemm_gemm_fp8's plan (src/fp8/plan.h), the wide build in pairs, the split, plain tiles
    run --explain --fp8 --sms 132 --size 4096 7168 16384
    expect_rc 0
    expect_empty err
    expect_in out "hgemm_gemm_fp8's plan (e4m3 x e4m3, a bf16 C, beta 0), on 132 SMs (--sms)"
    expect_in out "4096 7168 16384: fp8 -> 128x256 tiles, in pairs sharing B by multicast, 896 tiles of 128 k-tiles on up to 132 blocks"
    run --explain --fp8 --sms 132 --size 64 2112 7168
    expect_in out "64 2112 7168: fp8 -> 128x128 tiles, k split over a cluster of 4: 17 tiles x 4 blocks, 14 k-tiles each"
    run --explain --fp8 --sms 132 --size 1024 1024 256
    expect_in out "1024 1024 256: fp8 -> 128x128 tiles, 64 tiles of 2 k-tiles on 64 blocks; stores from registers"
    run --fp8 --size 64 64 64
    expect_rc 1
    expect_in err "--fp8 applies to --explain"
    # --explain needs no GPU; with --sms its plans do not depend on the machine
    run --explain --sms 132 --kernels auto,v9 --size 4096 4096 4096
    expect_rc 0
    expect_empty err
    expect_in out "on 132 SMs (--sms)"
    expect_in out "4096 4096 4096: auto -> v8: 128x256 tiles, in pairs sharing B, 4 stages, the seam between tiles, pairs dealt by GPC; 256 tiles of 64 k-tiles: 4 rounds on 64 of 66 pairs"
    expect_in out "4096 4096 4096: v9 -> v9: C's m on WGMMA's N in 64-wide tiles"
    [ "$(grep -c -v '^#' "$tmp/out")" -eq 2 ] || fail "expected one line per kernel"
    # V9's 128-wide short tile: 65..384 rows against a weight 4096 or more wide
    run --explain --sms 132 --kernels v9 --size 128 4096 4096
    expect_in out "128 4096 4096: v9 -> v9: C's m on WGMMA's N in 128-wide tiles, its n in 64-row tiles: 64 tiles, 3 stages of 2 k-tiles, k split over a cluster of 2"
    run --explain --sms 132 --kernels v9 --size 300 4095 4096
    expect_in out "300 4095 4096: v9 -> v9: C's m on WGMMA's N in 64-wide tiles"
    # k up to 2048: AUTO's small products keep the 64-wide tiles they were measured with
    run --explain --sms 132 --kernels auto --size 128 4096 1024
    expect_in out "128 4096 1024: auto -> v9: C's m on WGMMA's N in 64-wide tiles"
    run --explain --sms 132 --kernels v7 --layout nn --size 256 256 256
    expect_rc 0
    expect_in out "256 256 256 f16 nn: v7 -> v7 does not run it: not supported"
    run --explain --sms 132 --kernels auto --suite llm
    expect_rc 0
    [ "$(grep -c -v '^#' "$tmp/out")" -eq "$(grep -v '^#' "$llm_file" | grep -c .)" ] || fail "expected one line per shape"
    expect_in out "1 4096 4096: auto -> v9: C's m on WGMMA's N in 16-wide tiles, its n in 64-row tiles: 64 tiles, 6 stages of 2 k-tiles, k split over a cluster of 2"
    expect_in out "256 256 65536: auto -> v8: 128x128 tiles, one block each (no cluster), 5 stages; 4 tiles of 1024 k-tiles: split-K, 33 slices each"
    # the wide tile where the 320 tile ran through run 136 (V8_W320_COST);
    # the narrow tiles play no deal
    expect_in out "2048 28672 4096: auto -> v8: 128x256 tiles, in pairs sharing B, 4 stages, the seam between tiles, pairs dealt by GPC; 896 tiles"
    if grep "128x128 tiles" "$tmp/out" | grep -q "dealt by GPC"; then fail "a 128-wide tile dealt by GPC"; fi
    expect_in out "the tail split"
    run --explain --sms 132 --kernels auto --size 512 4096 4096 --dtype bf16 --layout tn
    expect_rc 0
    expect_in out "512 4096 4096 bf16 tn: auto -> v8: 128x128 tiles"
    # the 320 tile plays the deal too (on 114 SMs, 57 pairs, it still runs at 2048^3)
    run --explain --sms 114 --kernels auto --size 2048 2048 2048
    expect_rc 0
    expect_in out "2048 2048 2048: auto -> v8: 128x320 tiles, in pairs sharing B, 3 stages, pairs dealt by GPC;"
    run --explain --sms 64 --kernels auto --size 4096 4096 4096
    expect_in out "on 64 SMs"
    expect_in out "of 32 pairs"
    bad "--sms sets the SMs --explain plans for: only with --explain" --sms 64
    bad "--sms: '0' is not an integer in 1..1024" --explain --sms 0
    bad "--explain takes no value" --explain=1
    bad "--explain prints its plans: no --csv with it" --explain --csv "$tmp/x.csv"
    bad "--explain and --host-cost exclude each other" --explain --host-cost
    ;;
explain_overflow)
    # the largest sizes and batches the CLI takes: every byte count past
    # int64 (BENCH is hgemm-bench built under UBSan, every report fatal)
    run --explain --sms 132 --size 2147483647 2147483647 2147483647 --batch 2
    expect_rc 0
    expect_empty err
    expect_in out "2147483647 2147483647 2147483647 f16 nt, batch 2: v8 -> v8 does not run it: not supported"
    run --explain --sms 132 --kernels auto --size 2147483647 2147483647 2147483647 --batch 1000000 \
        --dtype f16,bf16 --layout nt,nn,tn,tt
    expect_rc 0
    expect_empty err
    [ "$(grep -c -v '^#' "$tmp/out")" -eq 8 ] || fail "expected one line per form"
    run --explain --sms 132 --kernels auto,v5 --size 2147483647 8 2147483647 --batch 1000000
    expect_rc 0
    expect_empty err
    ;;
no_gpu)
    if has_gpu; then
        echo "skipped: a GPU is present (nvidia-smi -L lists one)"
        exit 77
    fi
    run --size 64 64 64 --kernels v0 --cooldown 0 --csv "$tmp/never.csv"
    expect_rc 2
    expect_in err "no sm_90 GPU"
    expect_empty out
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "expected a one-line message"
    [ ! -e "$tmp/never.csv" ] || fail "the CSV was created without a GPU"
    run
    expect_rc 2
    expect_in err "no sm_90 GPU"
    run --suite llm --csv "$tmp/never.csv"
    expect_rc 2
    [ ! -e "$tmp/never.csv" ] || fail "the CSV was created without a GPU"
    run --host-cost-csv "$tmp/never.csv"
    expect_rc 2
    expect_in err "no sm_90 GPU"
    [ ! -e "$tmp/never.csv" ] || fail "the host-cost CSV was created without a GPU"
    run --dtype f16,bf16 --layout nn,nt,tn --batch 8 --kernels v0,auto --csv "$tmp/never.csv"
    expect_rc 2
    expect_in err "no sm_90 GPU"
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "expected a one-line message"
    [ ! -e "$tmp/never.csv" ] || fail "the CSV was created without a GPU"
    ;;
gpu_smoke)
    if ! has_gpu; then
        echo "skipped: no GPU (nvidia-smi -L lists none)"
        exit 77
    fi
    csv=$tmp/smoke.csv
    run --size 264 264 72 --kernels v0 --warmup 1 --iters 3 --cooldown 0 --repeat 2 --csv "$csv"
    expect_rc 0
    expect_in out "cublas32"
    expect_in out "median"
    for key in gpu sm_clock_max_mhz driver_version cuda_runtime_version cublas_version git_commit date command; do
        grep -q "^# $key: " "$csv" || fail "no '# $key:' metadata line in the CSV"
    done
    header=$(grep -v '^#' "$csv" | head -n 1)
    for col in kernel m n k run ms tflops vs_cublas32 vs_cublas16 max_abs_err mean_abs_err \
               p99_abs_err iters sm_clock_before_mhz sm_clock_after_mhz window_sm_clock_mhz \
               window_max_temp_c gbps rotate_sets dtype layout batch window_mem_clock_mhz \
               window_clock_events interleave workspace_bytes; do
        echo ",$header," | grep -q ",$col," || fail "no column '$col' in '$header'"
    done
    echo "$header" | grep -q ',window_max_temp_c,gbps,rotate_sets,dtype,layout,batch,window_mem_clock_mhz,window_clock_events,interleave,workspace_bytes$' ||
        fail "gbps, rotate_sets, dtype, layout, batch, the window's telemetry, interleave and workspace_bytes are not the last columns: '$header'"
    expect_interleave "$csv" 1
    grep -q '^# interleave:' "$csv" && fail "a '# interleave:' line without --interleave"
    rows=$(grep -v '^#' "$csv" | tail -n +2 | grep -c ',ok,')
    # What every row ends with after its batch column: the window's memory
    # clock and NVML's clock-event mask (hex), each -1 without NVML,
    # interleave 1 (no --interleave) and the workspace's bytes.
    tel=',[-0-9]*,[-0-9a-fx]*,1,[0-9]*'
    [ "$rows" -eq 6 ] || fail "expected 6 ok rows (3 kernels x 2 runs), got $rows"
    grep -q '^cublas16,264,264,72,2,' "$csv" || fail "no cublas16 row for run 2"
    grep -q '^# rotated: none$' "$csv" || fail "264 x 264 x 72 is not memory-bound (both sides over 256): expected '# rotated: none'"
    grep -v '^#' "$csv" | tail -n +2 | grep -v ",1,f16,nt,1$tel\$" &&
        fail "a row of an unrotated f16 nt shape does not end with rotate_sets 1, f16, nt, batch 1"
    # --interleave: each run's entries timed together, 3 slices of 2 launches.
    csv=$tmp/interleave.csv
    run --size 264 136 72 --interleave 3 --iters 6 --warmup 1 --cooldown 0 --repeat 2 --kernels v0 \
        --csv "$csv"
    expect_rc 0
    expect_in out "interleaved in 3 slices"
    expect_in out "median"
    grep -q '^# interleave: 3 .*each opened by an untimed lead-in' "$csv" ||
        fail "no '# interleave: 3' metadata line naming the lead-in"
    grep -q '^# max_window_ms: 15 (a run whose windows would last longer' "$csv" ||
        fail "no '# max_window_ms: 15' metadata line (the default cap)"
    header=$(grep -v '^#' "$csv" | head -n 1)
    echo "$header" | grep -q ',window_clock_events,interleave,workspace_bytes$' ||
        fail "the header does not end with interleave, workspace_bytes: '$header'"
    rows=$(grep -v '^#' "$csv" | tail -n +2 | grep -c ',ok,')
    [ "$rows" -eq 6 ] || fail "--interleave: expected 6 ok rows (3 kernels x 2 runs), got $rows"
    expect_interleave "$csv" 3
    run --size 264 136 72 --interleave 3 --iters 6 --warmup 1 --cooldown 0 --kernels v0 --no-lead-in \
        --csv "$csv"
    expect_rc 0
    grep -q '^# interleave: 3 .*back to back (--no-lead-in)' "$csv" ||
        fail "no '# interleave: 3' metadata line saying the slices ran back to back"
    expect_interleave "$csv" 3
    # A cap shorter than any launch: one launch a window, so 6 slices, not 3
    # (3 is no multiple of the 6 rows of 3 entries' design: steps of one).
    run --size 264 136 72 --interleave 3 --iters 6 --warmup 1 --cooldown 0 --kernels v0 \
        --max-window-ms 0.000001 --csv "$csv"
    expect_rc 0
    expect_in out "interleaved in 6 slices (windows of at most 1e-06 ms; --interleave 3)"
    grep -q '^# max_window_ms: 1e-06 ' "$csv" || fail "no '# max_window_ms: 1e-06' metadata line"
    expect_interleave "$csv" 6
    # No cap: the asked-for slices whatever the launch takes.
    run --size 264 136 72 --interleave 3 --iters 6 --warmup 1 --cooldown 0 --kernels v0 \
        --max-window-ms 0 --csv "$csv"
    expect_rc 0
    grep -q '^# max_window_ms: 0 (no cap' "$csv" || fail "no '# max_window_ms: 0 (no cap' metadata line"
    expect_interleave "$csv" 3
    # A memory-bound shape: rotated, GB/s in the table, the sets in the header and the rows.
    csv=$tmp/decode.csv
    run --size 16 1032 520 --kernels v0 --warmup 1 --iters 3 --cooldown 0 --csv "$csv"
    expect_rc 0
    expect_in out "memory-bound"
    expect_in out "GB/s"
    expect_in out "% HBM"
    expect_in out "operand sets rotated"
    # the yardstick is this GPU's HBM peak, with where the figure comes from
    grep -Eq '^# hbm_peak_gbps: [1-9][0-9]* \(.+\)$' "$csv" || fail "no '# hbm_peak_gbps: N (source)' line"
    gpu=$(sed -n 's/^# gpu: //p' "$csv")
    peak=$(sed -n 's/^# hbm_peak_gbps: \([0-9]*\) .*/\1/p' "$csv")
    case $gpu in
    *GH200*) ;;
    *H200*) [ "$peak" = 4800 ] || fail "$gpu: hbm_peak_gbps $peak, expected the datasheet's 4800" ;;
    *"H100 80GB HBM3"*) [ "$peak" = 3350 ] || fail "$gpu: hbm_peak_gbps $peak, expected the datasheet's 3350" ;;
    esac
    sets=$(sed -n 's/^# rotated: 16x1032x520 sets=\([0-9]*\) set_bytes=[0-9]*$/\1/p' "$csv")
    [ "${sets:-0}" -gt 1 ] || fail "no '# rotated: 16x1032x520 sets=R' line with R > 1"
    rows=$(grep -c "^[a-z0-9]*,16,1032,520,1,.*,ok,.*,$sets,f16,nt,1$tel\$" "$csv")
    [ "$rows" -eq 3 ] || fail "expected 3 ok rows with rotate_sets $sets, got $rows"
    run --size 16 1032 520 --kernels v0 --warmup 1 --iters 3 --cooldown 0 --no-rotate --csv "$csv"
    expect_rc 0
    grep -q '^# rotated: none$' "$csv" || fail "--no-rotate: expected '# rotated: none'"
    # Host cost per call: its own CSV, cuBLAS 32F and the kernel.
    run --host-cost --kernels v0 --host-cost-csv "$tmp/cost.csv"
    expect_rc 0
    expect_in out "us/call"
    grep -q '^kernel,host_us,host_us_min,host_us_max,m,n,k,calls,batches,status,dtype,layout,batch$' \
        "$tmp/cost.csv" || fail "no host-cost header"
    grep -q '^cublas32,[0-9.]*,[0-9.]*,[0-9.]*,64,64,64,2000,5,ok,f16,nt,1$' "$tmp/cost.csv" ||
        fail "no cublas32 host-cost row"
    grep -q '^v0,[0-9.]*,[0-9.]*,[0-9.]*,64,64,64,2000,5,ok,f16,nt,1$' "$tmp/cost.csv" || fail "no v0 host-cost row"
    grep -q '^cublas16,' "$tmp/cost.csv" && fail "cublas16 has no host-cost row"
    run --accuracy --size 300 520 100 --kernels v0
    expect_rc 0
    expect_in out "p99 abs err"
    expect_in out "PASS"
    # Forms: AUTO in each, beside cuBLAS (strided batched); v0 serves f16 nt
    # batch 1 only and is skipped with a line, cublas16 runs for f16 only.
    csv=$tmp/forms.csv
    run --size 264 136 72 --kernels v0,auto --dtype f16,bf16 --layout nn,tt --batch 3 --warmup 1 \
        --iters 3 --cooldown 0 --csv "$csv"
    expect_rc 0
    expect_in out "264 x 136 x 72, bf16 tt, batch 3, run 1 of 1"
    expect_in err "v0: f16 nn, batch 3 at 264 x 136 x 72: hgemm_gemm answers"
    expect_in err "cublas16: bf16 nn, batch 3: cuBLAS has no COMPUTE_16F"
    grep -q '^# forms: dtype f16,bf16; layout nn,tt; batch 3 ' "$csv" || fail "no '# forms:' line"
    rows=$(grep -c ",ok,.*,3$tel\$" "$csv")
    [ "$rows" -eq 10 ] || fail "expected 10 ok rows (cublas32 and auto in 4 forms, cublas16 in 2), got $rows"
    for f in f16,nn f16,tt bf16,nn bf16,tt; do
        grep -q "^auto,264,136,72,1,.*,ok,.*,$f,3$tel\$" "$csv" || fail "no ok auto row for $f"
        grep -q "^cublas32,264,136,72,1,.*,ok,.*,$f,3$tel\$" "$csv" || fail "no ok cublas32 row for $f"
    done
    grep -q '^cublas16,.*,bf16,' "$csv" && fail "a cublas16 row for bf16"
    grep -q '^v0,' "$csv" && fail "a row for v0, which serves f16 nt batch 1 only"
    # bf16 at batch 1: cublasGemmEx on bf16 matrices.
    run --size 264 136 72 --kernels auto --dtype bf16 --warmup 1 --iters 3 --cooldown 0 --csv "$csv"
    expect_rc 0
    grep -q "^auto,264,136,72,1,.*,ok,.*,bf16,nt,1$tel\$" "$csv" || fail "no ok auto row for bf16 nt"
    # Ablations in other forms (a lab build's): v8-noseam goes through V8's
    # launcher (its row serves forms) and runs; v8-dp serves f16 nt only and
    # is skipped.
    if [ "${HGEMM_LAB:-0}" = 1 ]; then
        run --size 264 136 72 --kernels v8-noseam,v8-dp --dtype bf16 --layout nn,nt --warmup 1 --iters 3 \
            --cooldown 0 --csv "$csv"
        expect_rc 0
        expect_in err "v8-dp: bf16 nn: this ablation runs on hgemm_nt's path only"
        for f in bf16,nn bf16,nt; do
            grep -q "^v8-noseam,264,136,72,1,.*,ok,.*,$f,1$tel\$" "$csv" || fail "no ok v8-noseam row for $f"
        done
        grep -q '^v8-dp,' "$csv" && fail "a row for v8-dp, which serves f16 nt batch 1 only"
    fi
    ;;
*)
    echo "bench_cli.sh: unknown case '$case_name'"
    exit 1
    ;;
esac
echo "PASS ($case_name)"
