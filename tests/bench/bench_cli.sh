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
has_gpu() { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; }

case $case_name in
help)
    run --help
    expect_rc 0
    expect_in out "usage: hgemm-bench"
    for flag in --kernels --size --sweep --warmup --iters --cooldown --repeat --csv --list \
                --accuracy --accuracy-sweep --version --help "-h, --help" "--option=VALUE"; do
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
                "--kernels V5,v6 --size 64 64 64" "--kernels All --size 64 64 64" \
                "--kernels=auto --size=64" "--size=64,72,80 --kernels=v0" "--size=64x72x80 --kernels=v0" \
                "--iters=1 --warmup=0 --cooldown=0 --repeat=1 --size=64 --kernels=v0" \
                "--accuracy --size=64 --kernels=v0" "--accuracy-sweep --kernels=v0"; do
        # shellcheck disable=SC2086 # word splitting of the two lists is intended
        run $args $quick
        expect_rc $want
        [ "$want" -eq 0 ] || expect_in err "no sm_90 GPU"
    done
    run --kernels auto --list
    expect_rc 0
    grep -q "^(auto = " "$tmp/out" || fail "--list does not say what auto is"
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
    ;;
gpu_smoke)
    if ! has_gpu; then
        echo "skipped: no GPU (nvidia-smi -L lists none)"
        exit 77
    fi
    csv=$tmp/smoke.csv
    run --size 264 136 72 --kernels v0 --warmup 1 --iters 3 --cooldown 0 --repeat 2 --csv "$csv"
    expect_rc 0
    expect_in out "cublas32"
    expect_in out "median"
    for key in gpu sm_clock_max_mhz driver_version cuda_runtime_version cublas_version git_commit date command; do
        grep -q "^# $key: " "$csv" || fail "no '# $key:' metadata line in the CSV"
    done
    header=$(grep -v '^#' "$csv" | head -n 1)
    for col in kernel m n k run ms tflops vs_cublas32 vs_cublas16 max_abs_err mean_abs_err \
               p99_abs_err iters sm_clock_before_mhz sm_clock_after_mhz window_sm_clock_mhz \
               window_max_temp_c; do
        echo ",$header," | grep -q ",$col," || fail "no column '$col' in '$header'"
    done
    rows=$(grep -v '^#' "$csv" | tail -n +2 | grep -c ',ok,')
    [ "$rows" -eq 6 ] || fail "expected 6 ok rows (3 kernels x 2 runs), got $rows"
    grep -q '^cublas16,264,136,72,2,' "$csv" || fail "no cublas16 row for run 2"
    run --accuracy --size 300 520 100 --kernels v0
    expect_rc 0
    expect_in out "p99 abs err"
    expect_in out "PASS"
    ;;
*)
    echo "bench_cli.sh: unknown case '$case_name'"
    exit 1
    ;;
esac
echo "PASS ($case_name)"
