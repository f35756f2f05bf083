#!/usr/bin/env bash
# check_ptxas.sh OBJECT...
# Reads the ptxas -v report the build kept beside each CUDA object of the
# library (OBJECT.ptxas.log, written by cmake/ptxas_log.sh as the object is
# compiled) and fails on what the build's own flags cannot turn into errors:
# wgmma serialization (any ptxas info "wgmma.mma_async instructions are
# serialized": C7510, e.g. from a function call inside the kernel, C7515, an
# accumulator register defined by another instruction while WGMMAs are in
# flight, C7520, a WGMMA behind a data-dependent branch), a stack frame, or
# spills (the build already fails on those: -Xptxas=-warn-spills,-Werror).
# It fails too where an object or its report is missing, where the report is
# older than its object (compiled without the launcher) or holds no register
# count (compiled without -Xptxas=-v). Objects of other languages (.c.o) are
# passed over. Nothing is compiled here.
set -uo pipefail
fail=0 n=0
for obj in "$@"; do
    case $obj in *.cu.o | *.cu.obj) ;; *) continue ;; esac
    n=$((n + 1))
    name=${obj##*.dir/}
    name=${name%.o}
    log=$obj.ptxas.log
    if [ ! -f "$obj" ]; then
        echo "FAIL $name: no object $obj (build the library first)"
        fail=1
    elif [ ! -f "$log" ]; then
        echo "FAIL $name: no ptxas report $log (compiled without cmake/ptxas_log.sh)"
        fail=1
    elif [ "$obj" -nt "$log" ]; then
        echo "FAIL $name: $log is older than its object (compiled again without cmake/ptxas_log.sh)"
        fail=1
    elif grep -q "wgmma.mma_async instructions are serialized" "$log"; then
        grep "wgmma.mma_async instructions are serialized" "$log"
        echo "FAIL $name: wgmma.mma_async serialized (C75xx)"
        fail=1
    elif grep -Eq "[1-9][0-9]* bytes (stack frame|spill stores|spill loads)" "$log"; then
        # the function's name is on the line before its frame
        grep -E -B1 "[1-9][0-9]* bytes (stack frame|spill stores|spill loads)" "$log"
        echo "FAIL $name: stack frame or spills"
        fail=1
    elif ! grep -q "Used [0-9]* registers" "$log"; then
        echo "FAIL $name: $log holds no ptxas -v report (no 'Used N registers' line)"
        fail=1
    else
        regs=$(grep -o 'Used [0-9]* registers' "$log" | awk '$2 > m { m = $2 } END { print m }')
        echo "ok   $name: $(grep -c 'Compiling entry function' "$log") kernels, at most $regs registers"
    fi
done
[ "$n" -gt 0 ] || { echo "FAIL: no CUDA object among the arguments"; fail=1; }
exit $fail
