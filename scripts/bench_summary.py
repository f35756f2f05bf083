#!/usr/bin/env python3
"""Median and range per kernel and shape over hgemm-bench CSV files.

    python3 scripts/bench_summary.py FILE.csv [FILE.csv ...] [--markdown]

Every row of every file is one sample (a run of --repeat, or one process of
scripts/processes.sh); rows of kernels whose check failed carry no timing and
are counted apart. Reads only the CSV contract of DESIGN.md.
"""
import argparse
import csv
import math
import statistics
import sys

ORDER = ["v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "cublas32", "cublas16"]
FIELDS = [("ms", "ms", "{:.4f}"), ("tflops", "TFLOP/s", "{:.1f}"),
          ("vs_cublas32", "x cuBLAS 32F", "{:.3f}"), ("vs_cublas16", "x cuBLAS 16F", "{:.3f}")]


def read(paths):
    rows = []
    for path in paths:
        with open(path, newline="") as f:
            lines = [ln for ln in f if ln.strip() and not ln.startswith("#")]
        rows.extend(csv.DictReader(lines))
    return rows


def number(text):
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


def summarize(rows):
    groups = {}
    for r in rows:
        key = (r["kernel"], int(r["m"]), int(r["n"]), int(r["k"]))
        groups.setdefault(key, []).append(r)
    rank = {name: i for i, name in enumerate(ORDER)}
    out = []
    for key in sorted(groups, key=lambda k: (k[1], k[2], k[3], rank.get(k[0], 99), k[0])):
        stats = {}
        for field, _, _ in FIELDS:
            vals = [v for v in (number(r.get(field)) for r in groups[key]) if v is not None]
            if vals:
                stats[field] = (statistics.median(vals), min(vals), max(vals))
        out.append((key, len(groups[key]), stats))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = ap.parse_args()
    table = summarize(read(args.csv))
    if not table:
        print("bench_summary: no rows", file=sys.stderr)
        return 1
    head = ["kernel", "shape", "samples"] + [label for _, label, _ in FIELDS]
    lines = []
    for (kernel, m, n, k), count, stats in table:
        cells = [kernel, f"{m}x{n}x{k}", str(count)]
        for field, _, fmt in FIELDS:
            if field in stats:
                med, lo, hi = stats[field]
                cells.append(f"{fmt.format(med)} [{fmt.format(lo)}..{fmt.format(hi)}]")
            else:
                cells.append("-")
        lines.append(cells)
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for cells in lines:
            print("| " + " | ".join(cells) + " |")
    else:
        widths = [max(len(c[i]) for c in [head] + lines) for i in range(len(head))]
        for cells in [head] + lines:
            print("  ".join(c.ljust(w) for c, w in zip(cells, widths)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
