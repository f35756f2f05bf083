#!/usr/bin/env bash
# pack_results.sh OUT [MAX]: make a results folder fit what comes back from the device.
#
# A remote run returns at most MAX files (default 8) of its $OUT and
# leaves the rest behind. Where OUT holds more (or PACK=1), every file goes
# into OUT/results.tgz and only it, device.log and summary.txt stay, so no
# CSV can be the one left out; with PACK=0 nothing is packed. Prints what it
# did. Exit status: 0, or 1 if the archive could not be written (then
# nothing is removed).
set -uo pipefail
out=${1:?usage: pack_results.sh OUT [MAX]}
max=${2:-8}
pack=${PACK:-auto}
[ -d "$out" ] || { echo "pack_results: $out is not a folder" >&2; exit 1; }
n=$(find "$out" -type f ! -name results.tgz | wc -l)
if [ "$pack" = 0 ] || { [ "$pack" != 1 ] && [ "$n" -le "$max" ]; }; then
    echo "pack_results: $n files in $out, none packed"
    exit 0
fi
# written outside OUT (an archive inside the folder it reads changes under tar)
tmp=$(mktemp "${TMPDIR:-/tmp}/pack_results.XXXXXX") || exit 1
if ! tar czf "$tmp" -C "$out" --exclude=./results.tgz . || ! mv "$tmp" "$out/results.tgz"; then
    rm -f "$tmp"
    echo "pack_results: the archive could not be written; $n files left as they are" >&2
    exit 1
fi
find "$out" -type f ! -name results.tgz ! -name device.log ! -name summary.txt -delete
echo "pack_results: $n files in $out packed into results.tgz (device.log and summary.txt also kept as files)"
