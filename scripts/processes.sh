#!/usr/bin/env bash
# processes.sh: run hgemm-bench in N separate processes and summarize them.
#
#   scripts/processes.sh N [hgemm-bench arguments...]
#
# A process's first launches run with cold caches, fresh clocks and a new
# cuBLAS handle; a loop inside one process never sees that. The processes'
# rows are merged into $OUT/processes.csv (the run column numbers the
# process) and summarized: each kernel's median and range over processes.
set -euo pipefail
n=${1:?usage: scripts/processes.sh N [hgemm-bench arguments...]}
shift
OUT=${OUT:-$PWD/processes-out}
BENCH=${BENCH:-build/tools/hgemm-bench}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$OUT"
for ((i = 1; i <= n; i++)); do
    echo "process $i of $n" >&2
    if ! "$BENCH" "$@" --csv "$tmp/$i.csv" >"$tmp/$i.log" 2>&1; then
        echo "process $i failed; its log:" >&2
        cat "$tmp/$i.log" >&2
        exit 1
    fi
done
# Keep the first file's metadata, renumber the run column by process.
python3 - "$n" "$tmp" "$OUT/processes.csv" <<'PY'
import csv, sys
n, tmp, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
with open(out, "w", newline="") as f:
    writer = None
    for i in range(1, n + 1):
        with open(f"{tmp}/{i}.csv", newline="") as g:
            lines = g.readlines()
        if i == 1:
            f.writelines(l for l in lines if l.startswith("#"))
            f.write(f"# processes: {n}\n")
        rows = csv.DictReader(l for l in lines if l.strip() and not l.startswith("#"))
        for r in rows:
            r["run"] = str(i)
            if writer is None:
                writer = csv.DictWriter(f, fieldnames=list(r.keys()))
                writer.writeheader()
            writer.writerow(r)
PY
python3 "$here/bench_summary.py" "$OUT/processes.csv"
