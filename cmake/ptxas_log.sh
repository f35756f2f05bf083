#!/bin/sh
# ptxas_log.sh COMPILER ARGS...: the library's CUDA compiler launcher
# (CMakeLists.txt, hgemm_objects). Runs the compile as given (the library's
# CUDA files compile with -Xptxas=-v) and keeps its stderr, ptxas's resource
# report, in OBJECT.ptxas.log beside the object that -o names. The ptxas
# test (tests/ptxas/check_ptxas.sh) reads those logs instead of compiling the
# kernels again. On success the compile's messages are passed on without the
# report's per-function lines (the wgmma serialization notes, C75xx, stay);
# a failed compile prints everything and leaves no log.
set -u
obj='' prev=''
for arg in "$@"; do
    [ "$prev" = -o ] && obj=$arg
    prev=$arg
done
[ -n "$obj" ] || exec "$@"
log=$obj.ptxas.log
rm -f "$log"
"$@" 2>"$log.tmp"
rc=$?
if [ "$rc" -ne 0 ]; then
    cat "$log.tmp" >&2
    rm -f "$log.tmp"
    exit "$rc"
fi
grep -Ev '^ptxas info    : (Compiling entry function|Function properties for|Used [0-9]+ registers|Compile time|[0-9]+ bytes (gmem|cmem))|^ +[0-9]+ bytes stack frame' \
    "$log.tmp" >&2
mv "$log.tmp" "$log"
# newer than the object: ptxas wrote its report before nvcc wrote the object,
# and the test takes a log older than its object for a stale one
touch "$log"
