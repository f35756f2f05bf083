#!/usr/bin/env python3
"""Median and range per kernel, shape and form over hgemm-bench CSV files.

    python3 scripts/bench_summary.py FILE.csv [FILE.csv ...] [--markdown]

Every row of every file is one sample (a run of --repeat, or one process of
scripts/processes.sh); rows of kernels whose check failed carry no timing and
are counted apart. Reads only the CSV contract of DESIGN.md.

Memory-bound rows (m or n <= 64) of CSVs with the `gbps` column also get
GB/s and the share of the HBM peak their file's `# hbm_peak_gbps:` line
names (the GPU's own; files without the line: the H200's); a group with a row whose
`rotate_sets` is 1 (operands not rotated, so the L2 may have served them)
says so. CSVs without these columns print as they always did.

CSVs with the `window_clock_events` column (NVML's clock-event reasons
during each timed window, OR-ed, hex) get a `clock events` column: which
reasons held the clocks back in how many of a group's samples ("power cap
in 2 of 3"), or "none". The idle bit is not a reason (the window is
busy), and rows without NVML (-1) are not counted.

Rows are grouped by form too: the `dtype`, `layout` and `batch` columns
(CSVs without them read as f16, nt, 1). Each of the three is printed, as a
column after the shape, only when some group differs from its default, so
an f16 nt run prints as it always did.

--bar KERNEL prints only KERNEL's verdict over every shape of the files:
the geomean of its per-shape median ratios to cuBLAS COMPUTE_32F, the
shapes below --threshold (0.90), and the lowest share of HBM peak among
memory-bound shapes whose weight is larger than the L2 (`# l2_bytes:`).
"""
import argparse
import csv
import math
import statistics
import sys

ORDER = ["v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "cublas32", "cublas16"]
FIELDS = [("ms", "ms", "{:.4f}"), ("tflops", "TFLOP/s", "{:.1f}"),
          ("vs_cublas32", "x cuBLAS 32F", "{:.3f}"), ("vs_cublas16", "x cuBLAS 16F", "{:.3f}")]
# The H200's HBM bandwidth, 4.8 TB/s (NVIDIA H200 Tensor Core GPU datasheet),
# in GB/s of 1e9 bytes: the peak of files whose header names none.
HBM_PEAK_GBPS = 4800.0
PEAK_KEY = "_file_hbm_peak_gbps"  # each row's file's peak (no CSV column is named so)
MEMORY_BOUND_MN = 64  # m or n at most this: memory-bound, judged in GB/s
BANDWIDTH = [("gbps", "GB/s", "{:.1f}"), ("hbm_pct", "% HBM", "{:.1f}")]
# The form columns, their defaults (what a CSV without them means) and their order.
FORM = [("dtype", "dtype", "f16"), ("layout", "layout", "nt"), ("batch", "batch", "1")]
DTYPE_ORDER = ["f16", "bf16"]
LAYOUT_ORDER = ["nt", "nn", "tn", "tt"]
# NVML's clock-event reasons that slow the clocks (nvmlClocksEventReason*,
# NVML API reference), as the column names them; 0x1 (idle) is left out.
CLOCK_EVENTS = [(0x4, "power cap"), (0x8, "hw slowdown"), (0x20, "sw thermal"),
                (0x40, "hw thermal"), (0x80, "power brake")]


def read(paths):
    """Every row of every file; each row also carries its file's HBM peak
    (`# hbm_peak_gbps:`, else HBM_PEAK_GBPS) under PEAK_KEY."""
    rows = []
    for path in paths:
        with open(path, newline="") as f:
            text = [ln for ln in f if ln.strip()]
        peak = HBM_PEAK_GBPS
        for ln in text:
            if ln.startswith("# hbm_peak_gbps:"):
                value = number(ln.split(":", 1)[1].split()[0])
                if value:
                    peak = value
                break
        for row in csv.DictReader(ln for ln in text if not ln.startswith("#")):
            row[PEAK_KEY] = peak
            rows.append(row)
    return rows


def number(text):
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


def clock_events(text):
    """The mask of a window_clock_events cell (hex), or None without one (-1, empty)."""
    text = (text or "").strip()
    if not text or text == "-1":
        return None
    try:
        return int(text, 16)
    except ValueError:
        return None


def events_text(stats):
    """ "none", or "power cap in 2 of 3[, ...]" for a group's clock_events stat."""
    masks = stats["clock_events"]
    parts = [f"{name} in {sum(1 for m in masks if m & bit)} of {len(masks)}"
             for bit, name in CLOCK_EVENTS if any(m & bit for m in masks)]
    return ", ".join(parts) or "none"


def memory_bound(m, n):
    return m <= MEMORY_BOUND_MN or n <= MEMORY_BOUND_MN


def form_of(row):
    """(dtype, layout, batch) of a row; a missing or empty column is its default."""
    dtype, layout, batch = ((row.get(col) or default).strip() for col, _, default in FORM)
    return dtype.lower(), layout.lower(), int(batch)


def summarize(rows):
    """(key, samples, stats) per key (kernel, m, n, k, dtype, layout, batch);
    stats maps a field to (median, min, max). Memory-bound groups with gbps
    values also get gbps, hbm_pct (of each row's file's peak) and, when some row was
    not rotated (rotate_sets 1), not_rotated = the count of such rows.
    Groups with window_clock_events values get clock_events, the list of
    their masks."""
    groups = {}
    for r in rows:
        key = (r["kernel"], int(r["m"]), int(r["n"]), int(r["k"])) + form_of(r)
        groups.setdefault(key, []).append(r)
    rank = {name: i for i, name in enumerate(ORDER)}
    dtype_rank = {name: i for i, name in enumerate(DTYPE_ORDER)}
    layout_rank = {name: i for i, name in enumerate(LAYOUT_ORDER)}

    def order(k):
        return (k[1], k[2], k[3], dtype_rank.get(k[4], 99), k[4], layout_rank.get(k[5], 99), k[5],
                k[6], rank.get(k[0], 99), k[0])

    out = []
    for key in sorted(groups, key=order):
        stats = {}
        for field, _, _ in FIELDS:
            vals = [v for v in (number(r.get(field)) for r in groups[key]) if v is not None]
            if vals:
                stats[field] = (statistics.median(vals), min(vals), max(vals))
        if memory_bound(key[1], key[2]):
            timed = [r for r in groups[key] if number(r.get("gbps")) is not None]
            vals = [number(r["gbps"]) for r in timed]
            if vals:
                stats["gbps"] = (statistics.median(vals), min(vals), max(vals))
                pct = [100.0 * number(r["gbps"]) / r.get(PEAK_KEY, HBM_PEAK_GBPS) for r in timed]
                stats["hbm_pct"] = (statistics.median(pct), min(pct), max(pct))
                unrotated = sum(1 for r in timed if number(r.get("rotate_sets")) == 1)
                if unrotated:
                    stats["not_rotated"] = unrotated
        masks = [m for m in (clock_events(r.get("window_clock_events")) for r in groups[key]) if m is not None]
        if masks:
            stats["clock_events"] = masks
        out.append((key, len(groups[key]), stats))
    return out


def cell(stats, field, fmt):
    if field not in stats:
        return "-"
    med, lo, hi = stats[field]
    return f"{fmt.format(med)} [{fmt.format(lo)}..{fmt.format(hi)}]"


def l2_bytes(paths):
    """The device's L2 size from the first CSV that records it (`# l2_bytes:`), or None."""
    for path in paths:
        with open(path) as f:
            for ln in f:
                if ln.startswith("# l2_bytes:"):
                    return int(ln.split(":", 1)[1])
    return None


def bar(table, kernel, threshold, l2):
    """The every-shape verdict for `kernel` against cuBLAS COMPUTE_32F: rows
    (label, value) from the per-shape medians of vs_cublas32 (shapes where the
    kernel has a timed row), the shapes below `threshold`, and, for memory-bound
    shapes whose weight (the long operand, k x the long side, 2 bytes an
    element) is larger than the L2 (`l2` bytes; None: every memory-bound
    shape), the lowest share of the HBM peak."""
    ratios, low, hbm = [], [], []
    for key, _, stats in table:
        if key[0] != kernel or "vs_cublas32" not in stats:
            continue
        m, n, k = key[1:4]
        shape = f"{m}x{n}x{k}"
        med = stats["vs_cublas32"][0]
        ratios.append(med)
        if med < threshold:
            low.append((med, shape))
        weight = 2 * k * max(m, n)
        if "hbm_pct" in stats and (l2 is None or weight > l2):
            hbm.append((stats["hbm_pct"][0], shape))
    if not ratios:
        return []
    geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    rows = [("shapes", str(len(ratios))),
            ("geomean x cuBLAS 32F (per-shape medians)", f"{geomean:.3f}"),
            (f"below {threshold:.2f}x", str(len(low)) + ("" if not low else ": " + ", ".join(
                f"{shape} {med:.3f}" for med, shape in sorted(low))))]
    if hbm:
        pct, shape = min(hbm)
        what = "weight larger than the L2" if l2 is not None else "memory-bound"
        rows.append((f"lowest % HBM peak, {what} ({len(hbm)} shapes)", f"{pct:.1f} ({shape})"))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    ap.add_argument("--bar", metavar="KERNEL",
                    help="print only KERNEL's every-shape verdict against cuBLAS COMPUTE_32F: the "
                         "geomean of the per-shape medians, the shapes below --threshold, and the "
                         "lowest %% of HBM peak among memory-bound shapes whose weight exceeds the L2")
    ap.add_argument("--threshold", type=float, default=0.90,
                    help="with --bar: the ratio a shape must reach (default 0.90)")
    args = ap.parse_args()
    table = summarize(read(args.csv))
    if args.bar:
        rows = bar(table, args.bar, args.threshold, l2_bytes(args.csv))
        if not rows:
            print(f"bench_summary: no timed rows of {args.bar} beside cublas32", file=sys.stderr)
            return 1
        if args.markdown:
            print(f"| {args.bar} | |")
            print("|---|---|")
            for label, value in rows:
                print(f"| {label} | {value} |")
        else:
            width = max(len(label) for label, _ in rows)
            for label, value in rows:
                print(f"{label.ljust(width)}  {value}")
        return 0
    if not table:
        print("bench_summary: no rows", file=sys.stderr)
        return 1
    # GB/s columns only where a memory-bound row has them: old CSVs print as before.
    fields = FIELDS + (BANDWIDTH if any("gbps" in stats for _, _, stats in table) else [])
    # A form column only where some group is not its default: f16 nt runs print as before.
    forms = [i for i, (_, _, default) in enumerate(FORM)
             if any(str(key[4 + i]) != default for key, _, _ in table)]
    events = any("clock_events" in stats for _, _, stats in table)
    head = (["kernel", "shape"] + [FORM[i][1] for i in forms] + ["samples"] + [label for _, label, _ in fields]
            + (["clock events"] if events else []))
    lines = []
    for key, count, stats in table:
        kernel, m, n, k = key[:4]
        cells = [kernel, f"{m}x{n}x{k}"] + [str(key[4 + i]) for i in forms] + [str(count)]
        for field, _, fmt in fields:
            text = cell(stats, field, fmt)
            if field == "gbps" and "not_rotated" in stats:
                text += f" (not rotated in {stats['not_rotated']})"
            cells.append(text)
        if events:
            cells.append(events_text(stats) if "clock_events" in stats else "-")
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
