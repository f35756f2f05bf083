#!/usr/bin/env python3
"""Bar chart of TFLOP/s per kernel at one shape, read from hgemm-bench CSV only.

    python3 scripts/plot.py bench/results/FILE.csv -o docs/figures/tflops-8192.png

Each bar is the median over the runs in the CSV, with a line from the lowest
to the highest run; the colour says how the kernel accumulates (the CSV's
`accumulator` column: fp32 or fp16), cuBLAS bars are grey; the 989 TFLOP/s
dense fp16 datasheet peak of the H100/H200 tensor cores is drawn across the
chart. Needs matplotlib (pip install matplotlib, or pip install '.[plot]');
without it, says so and exits 2.
"""
import argparse
import csv
import statistics
import sys

from plotting import pyplot

COLORS = {"fp32": "#3b75af", "fp16": "#e08a2c"}  # by accumulator
PEAK_TFLOPS = 989.0  # dense fp16 tensor-core peak, H100/H200 SXM datasheet
CUBLAS_ORDER = ["cublas32", "cublas16"]  # after every hgemm bar


def bar_order(name):
    """hgemm's kernels by version (v0, v1, ..., v10; a version's ablations
    such as v8-320 after it, AUTO after all of them), then cuBLAS."""
    if name in CUBLAS_ORDER:
        return (2, CUBLAS_ORDER.index(name), name)
    head = name.split("-", 1)[0]
    if head[:1] == "v" and head[1:].isdigit():
        return (0, int(head[1:]), name)
    return (1, 0, name)


def read_rows(path):
    meta = {}
    lines = []
    with open(path, newline="") as f:
        for line in f:
            if line.startswith("#"):
                key, _, value = line[1:].partition(":")
                meta[key.strip()] = value.strip()
            elif line.strip():
                lines.append(line)
    return meta, list(csv.DictReader(lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv", help="hgemm-bench --csv output")
    ap.add_argument("-o", "--output", required=True, help="PNG to write")
    ap.add_argument("--size", nargs=3, type=int, default=[8192, 8192, 8192], metavar=("M", "N", "K"))
    args = ap.parse_args()

    plt = pyplot()
    meta, rows = read_rows(args.csv)
    m, n, k = (str(x) for x in args.size)
    per_kernel, acc = {}, {}
    for r in rows:
        if (r["m"], r["n"], r["k"]) == (m, n, k) and r.get("tflops") not in (None, "", "nan"):
            per_kernel.setdefault(r["kernel"], []).append(float(r["tflops"]))
            acc[r["kernel"]] = r.get("accumulator", "")
    names = sorted(per_kernel, key=bar_order)
    if not names:
        print(f"plot.py: no rows for {m}x{n}x{k} in {args.csv}", file=sys.stderr)
        return 1

    med = [statistics.median(per_kernel[x]) for x in names]
    lo = [statistics.median(per_kernel[x]) - min(per_kernel[x]) for x in names]
    hi = [max(per_kernel[x]) - statistics.median(per_kernel[x]) for x in names]
    colors = ["#8c8c8c" if x.startswith("cublas") else COLORS.get(acc[x], "#3b75af") for x in names]

    fig, ax = plt.subplots(figsize=(9, 4.8), dpi=120)
    bars = ax.bar(names, med, color=colors, yerr=[lo, hi], capsize=4)
    for bar, name in zip(bars, names):
        if name.startswith("cublas") and acc[name] == "fp16":
            bar.set_hatch("//")
    from matplotlib.patches import Patch
    ax.legend(handles=[Patch(color=COLORS["fp32"], label="hgemm, fp32 accumulation"),
                       Patch(color=COLORS["fp16"], label="hgemm, fp16 accumulation"),
                       Patch(facecolor="#8c8c8c", label="cuBLAS COMPUTE_32F"),
                       Patch(facecolor="#8c8c8c", hatch="//", label="cuBLAS COMPUTE_16F")],
              loc="upper left", fontsize=8)
    ax.axhline(PEAK_TFLOPS, color="#c0392b", linestyle="--", linewidth=1)
    ax.text(len(names) - 0.5, PEAK_TFLOPS + 10, f"{PEAK_TFLOPS:.0f} TFLOP/s dense fp16 peak",
            ha="right", va="bottom", color="#c0392b", fontsize=9)
    for i, v in enumerate(med):
        ax.text(i, v / 2, f"{v:.0f}", ha="center", va="center", color="white", fontsize=9)
    runs = max(len(v) for v in per_kernel.values())
    ax.set_ylabel("TFLOP/s")
    ax.set_ylim(0, PEAK_TFLOPS * 1.12)
    ax.set_title(f"hgemm at {m}x{n}x{k} fp16 on {meta.get('gpu', 'GPU')} "
                 f"(median of {runs} runs, bars show the range)", fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(args.output)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
