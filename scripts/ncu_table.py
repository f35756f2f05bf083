#!/usr/bin/env python3
"""Turns Nsight Compute's raw CSV (from scripts/profile.sh) into one row per kernel.

    python3 scripts/ncu_table.py profile-raw.csv [--csv profile.csv]

The input holds one block per profiled kernel: a `# kernel: NAME` line that
profile.sh writes, then ncu's `--csv --page raw` output (a header row of
metric names, a row of units, one row per profiled launch); ncu's own
`==PROF==` lines are skipped. Units are normalized: durations to ms, clocks
to MHz, shared memory to KiB.
"""
import argparse
import csv
import io
import sys

TIME_TO_MS = {"nsecond": 1e-6, "ns": 1e-6, "usecond": 1e-3, "us": 1e-3, "msecond": 1.0,
              "ms": 1.0, "second": 1e3, "s": 1e3}
FREQ_TO_MHZ = {"cycle/nsecond": 1e3, "cycle/usecond": 1.0, "cycle/msecond": 1e-3,
               "cycle/second": 1e-6, "hz": 1e-6, "khz": 1e-3, "mhz": 1.0, "ghz": 1e3}
BYTES_TO_KIB = {"byte": 1 / 1024, "kbyte": 1000 / 1024, "kibyte": 1.0, "mbyte": 1e6 / 1024,
                "mibyte": 1024.0}
BYTES_TO_GB = {"byte": 1e-9, "kbyte": 1e-6, "mbyte": 1e-3, "gbyte": 1.0, "tbyte": 1e3}
# L2 counts in 32-byte sectors (lts__t_sectors_*)
SECTORS_TO_GB = {"sector": 32e-9, "ksector": 32e-6, "msector": 32e-3, "gsector": 32.0}
# counts (instructions, wavefronts) in millions; ncu gives wavefronts no unit
COUNT_TO_M = {"inst": 1e-6, "kinst": 1e-3, "minst": 1.0, "": 1e-6, "k": 1e-3, "m": 1.0}

# (output column, candidate metric names in order of preference, unit table or
# None for plain numbers). ncu reports .avg, .min, .max and .sum variants of a
# metric side by side: match the exact name, never a prefix.
TENSOR_PCT = ".avg.pct_of_peak_sustained_active"
COLUMNS = [
    ("duration_ms", ["gpu__time_duration.sum"], TIME_TO_MS),
    ("sm_clock_mhz", ["sm__cycles_elapsed.avg.per_second"], FREQ_TO_MHZ),
    ("tensor_pipe_pct", ["sm__pipe_tensor_cycles_active" + TENSOR_PCT,
                         "sm__pipe_tensor_op_gmma_cycles_active" + TENSOR_PCT,
                         "sm__pipe_tensor_op_hmma_cycles_active" + TENSOR_PCT], None),
    ("dram_pct", ["dram__throughput.avg.pct_of_peak_sustained_elapsed"], None),
    ("sm_pct", ["sm__throughput.avg.pct_of_peak_sustained_elapsed"], None),
    ("l2_hit_pct", ["lts__t_sector_hit_rate.pct"], None),
    ("l2_pct", ["lts__throughput.avg.pct_of_peak_sustained_elapsed"], None),
    ("dram_read_gb", ["dram__bytes_read.sum"], BYTES_TO_GB),
    ("l2_gb", ["lts__t_bytes.sum"], BYTES_TO_GB),
    ("registers", ["launch__registers_per_thread"], None),
    # the block's whole allocation: static + dynamic + the driver's 1 KiB
    ("smem_kib", ["launch__shared_mem_per_block"], BYTES_TO_KIB),
    ("occupancy_pct", ["sm__warps_active.avg.pct_of_peak_sustained_active"], None),
    ("grid", ["launch__grid_size"], None),
    ("cluster", ["launch__cluster_dim_x"], None),
] + [("stall_" + reason, ["smsp__average_warps_issue_stalled_%s_per_issue_active.ratio" % reason], None)
     for reason in ("barrier", "long_scoreboard", "wait", "math_pipe_throttle", "membar",
                    "lg_throttle", "sleeping")] + [
    # where L2's lookups come from (profile.sh's L2_DETAIL=1): the SMs' own
    # requests (TMA and loads), and the other L2 partition's, over the fabric
    ("l2_tex_gb", ["lts__t_sectors_srcunit_tex.sum"], SECTORS_TO_GB),
    ("l2_fabric_gb", ["lts__t_sectors_srcunit_ltcfabric.sum"], SECTORS_TO_GB),
    # with profile.sh's PROFILE_EXTRA: warp instructions issued, and shared
    # memory's wavefronts through the LSU pipe (ldmatrix, stmatrix, ld/st.shared;
    # not WGMMA's operand reads), in millions
    ("inst_m", ["smsp__inst_executed.sum"], COUNT_TO_M),
    ("smem_lsu_wavefronts_m", ["l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"], COUNT_TO_M),
]


class ParseError(ValueError):
    pass


def to_number(text):
    text = text.strip().replace(",", "")
    if text in ("", "n/a", "N/A"):
        return None
    return float(text)


def convert(value, unit, table, metric):
    if table is None or value is None:
        return value
    key = unit.strip().lower()
    if key.endswith("/block"):  # launch__shared_mem_per_block_*: "byte/block"
        key = key[: -len("/block")]
    if key not in table:
        raise ParseError(f"unknown unit {unit!r} for {metric}")
    return value * table[key]


def parse_block(name, lines):
    """The last launch of one ncu raw CSV block as {column: value}."""
    rows = list(csv.reader(io.StringIO("".join(lines))))
    rows = [r for r in rows if r]
    if len(rows) < 3:
        raise ParseError(f"{name}: expected a header, a unit row and a launch, got {len(rows)} rows")
    header, units, last = rows[0], rows[1], rows[-1]
    out = {"kernel": name, "ncu_kernel_name": last[header.index("Kernel Name")]
           if "Kernel Name" in header else ""}
    for column, names, table in COLUMNS:
        out[column] = None
        for name in names:
            if name in header:
                i = header.index(name)
                out[column] = convert(to_number(last[i]), units[i], table, name)
                break
    return out


def parse(text):
    blocks, name, lines = [], None, []
    for line in text.splitlines(keepends=True):
        if line.startswith("# kernel:"):
            if name is not None:
                blocks.append(parse_block(name, lines))
            name, lines = line.split(":", 1)[1].strip(), []
        elif line.startswith("==") or not line.strip():
            continue
        elif name is not None:
            lines.append(line)
    if name is not None:
        blocks.append(parse_block(name, lines))
    if not blocks:
        raise ParseError("no '# kernel:' block found")
    return blocks


def fmt(v):
    if v is None:
        return "-"
    return f"{v:.3f}" if abs(v) < 10 else f"{v:.1f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("raw")
    ap.add_argument("--csv", help="also write the table as CSV here")
    args = ap.parse_args()
    with open(args.raw) as f:
        rows = parse(f.read())
    cols = ["kernel"] + [c for c, _, _ in COLUMNS]
    table = [[r["kernel"]] + [fmt(r[c]) for c, _, _ in COLUMNS] for r in rows]
    widths = [max(len(x) for x in col) for col in zip(cols, *table)]
    for line in [cols] + table:
        print("  ".join(x.rjust(w) for x, w in zip(line, widths)))
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(cols + ["ncu_kernel_name"])
            for r in rows:
                w.writerow([r["kernel"]] + ["" if r[c] is None else r[c] for c, _, _ in COLUMNS]
                           + [r["ncu_kernel_name"]])
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ParseError as e:
        print(f"ncu_table: {e}", file=sys.stderr)
        sys.exit(1)
