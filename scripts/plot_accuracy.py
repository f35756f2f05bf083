#!/usr/bin/env python3
"""Error against the fp64 reference as k grows, per kernel, from hgemm-bench CSVs.

    python3 scripts/plot_accuracy.py FILE.csv [FILE.csv ...] -o docs/figures/accuracy-k.png
    python3 scripts/plot_accuracy.py FILE.csv [...] --markdown [--stat max|p99|mean]
    python3 scripts/plot_accuracy.py FILE.csv [...] --markdown --long

Reads the CSV contract only (kernel, m, n, k, accumulator and the
mean_abs_err, p99_abs_err, max_abs_err columns), from any hgemm-bench run:
`--accuracy-sweep` (k = 1024 .. 16384 on a 4096 x 4096 output) is made for
it, but a timing run or `--sweep` carries the same columns. The inputs are
drawn so that every output has unit variance, so the errors of different
shapes compare; the largest error of a shape grows with its element count
too, which is why each table row names its shape.

--markdown prints a table, one row per shape (sorted by k), one column per
kernel, of the chosen statistic (default: max), and needs nothing beyond
Python; with --long, one row per kernel and shape with all three
statistics. The plot (-o) draws mean, p99 and max against k on log axes, fp32-
accumulating kernels in solid lines and fp16-accumulating ones dashed, with
the tests' absolute tolerances (1e-2 for fp32 accumulation, 5e-2 for fp16)
across the max panel; it needs matplotlib. When a kernel has several rows
for one shape (runs), the largest value is used.
"""
import argparse
import csv
import math
import sys

ORDER = ["cublas32", "v0", "v1", "v2", "v3", "v4", "v5", "v8", "v9", "auto", "cublas16", "v6", "v7"]
STATS = {"mean": "mean_abs_err", "p99": "p99_abs_err", "max": "max_abs_err"}
ATOL = {"fp32": 1e-2, "fp16": 5e-2}  # tests/ and hgemm-bench: HGEMM_CHECK_ATOL_ACC_*


def read(paths):
    """{(kernel, m, n, k): {"acc": ..., "mean_abs_err": ..., ...}}, largest over rows."""
    table = {}
    for path in paths:
        with open(path, newline="") as f:
            lines = [ln for ln in f if ln.strip() and not ln.startswith("#")]
        for r in csv.DictReader(lines):
            key = (r["kernel"], int(r["m"]), int(r["n"]), int(r["k"]))
            entry = table.setdefault(key, {"acc": r.get("accumulator", "")})
            for col in STATS.values():
                try:
                    v = float(r[col])
                except (KeyError, TypeError, ValueError):
                    continue
                if not math.isnan(v):
                    entry[col] = max(entry.get(col, v), v)
    return table


def kernel_order(names):
    rank = {name: i for i, name in enumerate(ORDER)}
    return sorted(names, key=lambda x: (rank.get(x, len(ORDER)), x))


def label(kernel, acc):
    return "%s (%s)" % (kernel, acc) if acc else kernel


def markdown(table, stat):
    col = STATS[stat]
    kernels = kernel_order({key[0] for key in table})
    accs = {key[0]: v["acc"] for key, v in table.items()}
    shapes = sorted({key[1:] for key in table}, key=lambda s: (s[2], s[0], s[1]))
    out = ["| k | shape | " + " | ".join(label(x, accs[x]) for x in kernels) + " |",
           "|---|---|" + "---|" * len(kernels)]
    for m, n, k in shapes:
        cells = []
        for x in kernels:
            v = table.get((x, m, n, k), {}).get(col)
            cells.append("-" if v is None else "%.2e" % v)
        out.append("| %d | %dx%dx%d | %s |" % (k, m, n, k, " | ".join(cells)))
    return "\n".join(out)


def markdown_long(table):
    keys = sorted(table, key=lambda x: (x[3], x[1], x[2], kernel_order([y[0] for y in table]).index(x[0])))
    out = ["| kernel | accumulator | shape | mean abs err | p99 abs err | max abs err |",
           "|---|---|---|---|---|---|"]
    for key in keys:
        v = table[key]
        cells = ["-" if v.get(col) is None else "%.3e" % v[col] for col in STATS.values()]
        out.append("| %s | %s | %dx%dx%d | %s |" % (key[0], v["acc"], key[1], key[2], key[3],
                                                   " | ".join(cells)))
    return "\n".join(out)


def plot(table, output, title):
    from plotting import pyplot
    plt = pyplot()
    kernels = kernel_order({key[0] for key in table})
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.4), dpi=120, sharex=True)
    cmap = plt.get_cmap("tab10")
    for i, x in enumerate(kernels):
        # (k, element count) -> errors; several shapes may share a k (a --sweep
        # CSV): then points only, since a line would join different shapes.
        pts = sorted(((key[3], key[1] * key[2]), v) for key, v in table.items() if key[0] == x)
        pts = [(k, v) for (k, _), v in pts]
        acc = pts[0][1]["acc"] if pts else ""
        one_per_k = len({k for k, _ in pts}) == len(pts)
        style = dict(color="#555555" if x.startswith("cublas") else cmap(i % 10),
                     linestyle=("--" if acc == "fp16" else "-") if one_per_k else "none",
                     marker="^" if acc == "fp16" else "o", markersize=4,
                     label="%s, %s accumulation" % (x, acc))
        for ax, (stat, col) in zip(axes, STATS.items()):
            ks = [k for k, v in pts if col in v]
            ax.plot(ks, [v[col] for k, v in pts if col in v], **style)
    for acc, atol in ATOL.items():
        axes[2].axhline(atol, color="#c0392b", linewidth=0.8,
                        linestyle="--" if acc == "fp16" else "-")
        axes[2].text(0.02, atol, "atol %g (%s accumulation)" % (atol, acc), color="#c0392b",
                     fontsize=7, va="bottom", transform=axes[2].get_yaxis_transform())
    for ax, stat in zip(axes, STATS):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("k")
        ax.set_title("%s |C - fp64 reference|" % stat, fontsize=10)
        ax.grid(alpha=0.3, which="both")
    axes[0].set_ylabel("absolute error (unit-variance outputs)")
    axes[0].legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(output)
    print("wrote %s" % output)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv", nargs="+")
    ap.add_argument("-o", "--output", help="PNG (or SVG) to write")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table instead")
    ap.add_argument("--stat", choices=sorted(STATS), default="max", help="for --markdown (default max)")
    ap.add_argument("--long", action="store_true",
                    help="with --markdown: one row per kernel and shape, mean, p99 and max")
    ap.add_argument("--title", default="hgemm: error against fp64 as k grows")
    args = ap.parse_args()
    if not args.markdown and not args.output:
        ap.error("give -o FILE to plot, or --markdown for a table")
    table = read(args.csv)
    if not table:
        print("plot_accuracy: no rows with error columns in %s" % ", ".join(args.csv), file=sys.stderr)
        return 1
    if args.markdown:
        print(markdown_long(table) if args.long else markdown(table, args.stat))
    else:
        plot(table, args.output, args.title)
    return 0


if __name__ == "__main__":
    sys.exit(main())
