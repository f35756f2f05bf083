#!/bin/sh
# test_sass_hgmma.sh LIBHGEMM KERNEL_TABLE_NAMES
# The SASS of libhgemm must show the tensor-core instructions each version is
# about: HMMA (mma.sync) in v0_kernel, HGMMA (warpgroup MMA) in the kernels of
# every later version of the table. Exits 77 without cuobjdump or a GPU.
set -u
lib=$1
names=$2
if ! command -v cuobjdump >/dev/null 2>&1; then
    echo "test_sass_hgmma: skipped: cuobjdump is not on PATH"
    exit 77
fi
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    echo "test_sass_hgmma: skipped: no GPU (nvidia-smi -L lists none)"
    exit 77
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
if ! cuobjdump --dump-sass "$lib" >"$tmp/sass" 2>"$tmp/err"; then
    echo "FAIL: cuobjdump --dump-sass $lib failed:"
    cat "$tmp/err"
    exit 1
fi
"$names" >"$tmp/names" || { echo "FAIL: $names failed"; exit 1; }
failed=0
while read -r name; do
    if [ "$name" = v0 ]; then want=HMMA; else want=HGMMA; fi
    # Functions whose symbol contains NAME_kernel; count WANT instructions in them.
    set -- $(awk -v pat="${name}_kernel" -v want="${want}." '
        /Function :/ { inside = index($0, pat) > 0; funcs += inside; next }
        inside && index($0, want) > 0 { n++ }
        END { print funcs + 0, n + 0 }' "$tmp/sass")
    funcs=$1
    count=$2
    if [ "$funcs" -eq 0 ]; then
        echo "FAIL $name: no kernel symbol containing ${name}_kernel in $lib"
        failed=1
    elif [ "$count" -eq 0 ]; then
        echo "FAIL $name: no $want instruction in the $funcs function(s) named *${name}_kernel*"
        failed=1
    else
        echo "PASS $name: $count $want instructions in $funcs function(s)"
    fi
done <"$tmp/names"
exit $failed
