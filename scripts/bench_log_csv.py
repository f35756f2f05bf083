#!/usr/bin/env python3
"""The per-run rows of hgemm-bench's printed tables, as CSV, for a run whose
own CSV was lost (device-check's log keeps everything the bench printed).

    python3 scripts/bench_log_csv.py LOG [--step NAME] > FILE.csv

LOG is a device.log (or the bench's stdout). With --step, only the output of
device-check's step NAME (from its "=== NAME:" line to its "NAME rc=" line).
Each printed "== M x N x K..., run R of N ==" table gives one row per kernel
that passed its check (the bench prints a failed one as "FAILED", which
becomes a row with status failed and no figures). The figures have the
printed precision only: ms to 4 decimals, TFLOP/s and GB/s to 1, the ratios
to 0.1%; the '#' header says the file is derived. Only fp16 NT tables of
batch 1 (the suite's) are read; a table of another form is an error.
"""
import argparse
import re
import sys

COLUMNS = ["kernel", "m", "n", "k", "run", "ms", "tflops", "vs_cublas32", "vs_cublas16", "max_abs_err",
           "status", "window_sm_clock_mhz", "window_max_temp_c", "gbps", "rotate_sets", "dtype", "layout",
           "batch"]
TABLE = re.compile(r"^== (\d+) x (\d+) x (\d+)(.*), run (\d+) of (\d+)(.*) ==$")
ROTATED = re.compile(r"(\d+) operand sets rotated")


def step_lines(lines, step):
    """The lines of device-check's step `step`."""
    start = next((i for i, l in enumerate(lines) if l.startswith("=== %s:" % step)), None)
    if start is None:
        raise ValueError("no step %r in the log" % step)
    end = next((i for i in range(start + 1, len(lines))
                if re.match(r"^%s\s+rc=" % re.escape(step), lines[i])), len(lines))
    return lines[start + 1:end]


def parse(lines):
    rows, shape = [], None
    for line in lines:
        m = TABLE.match(line)
        if m:
            if m.group(4).strip():
                raise ValueError("a table of another form (%r): only fp16 NT, batch 1" % m.group(4).strip())
            rot = ROTATED.search(m.group(7))
            shape = dict(m=m.group(1), n=m.group(2), k=m.group(3), run=m.group(5),
                         rotate_sets=rot.group(1) if rot else "1")
            continue
        if line.startswith("== "):  # a median table or another section
            shape = None
            continue
        if shape is None or not line.strip() or line.startswith("kernel "):
            continue
        f = line.split()
        if len(f) >= 3 and f[1] == "FAILED:":
            rows.append(dict(shape, kernel=f[0], status="failed"))
            continue
        if len(f) not in (8, 10):
            continue  # a mismatch listing under a failure
        try:
            ms, tflops = float(f[1]), float(f[2])
            vs32, vs16 = float(f[3].rstrip("%")) / 100, float(f[4].rstrip("%")) / 100
            err, mhz, temp = float(f[5]), int(f[6]), int(f[7])
        except ValueError:
            continue
        row = dict(shape, kernel=f[0], ms="%.4f" % ms, tflops="%.1f" % tflops, vs_cublas32="%.3f" % vs32,
                   vs_cublas16="%.3f" % vs16, max_abs_err="%.3e" % err, status="ok",
                   window_sm_clock_mhz=str(mhz), window_max_temp_c=str(temp))
        if len(f) == 10:
            row["gbps"] = f[8]
        rows.append(row)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("log")
    ap.add_argument("--step", help="device-check's step whose output to read (e.g. suite)")
    a = ap.parse_args(argv)
    with open(a.log) as f:
        lines = f.read().split("\n")
    try:
        if a.step:
            lines = step_lines(lines, a.step)
        rows = parse(lines)
    except ValueError as e:
        print("bench_log_csv: %s" % e, file=sys.stderr)
        return 1
    if not rows:
        print("bench_log_csv: no per-run table in %s" % a.log, file=sys.stderr)
        return 1
    out = sys.stdout
    out.write("# derived: scripts/bench_log_csv.py %s%s\n" % (a.log, " --step " + a.step if a.step else ""))
    out.write("# from hgemm-bench's printed per-run tables; the run's own CSV did not come back. Figures\n"
              "# at the printed precision (ms 4 decimals, ratios 0.1%); rows whose check failed: status failed\n")
    for line in lines:
        if line.startswith("hgemm-bench: "):
            out.write("# " + line + "\n")
    # the L2 size, as the bench's CSV header gives it, from its printed "the L2 (N MiB)"
    l2 = next(filter(None, (re.search(r"the L2 \((\d+) MiB\)", l) for l in lines)), None)
    if l2:
        out.write("# l2_bytes: %d\n" % (int(l2.group(1)) << 20))
    out.write(",".join(COLUMNS) + "\n")
    for r in rows:
        r.setdefault("dtype", "f16")
        r.setdefault("layout", "nt")
        r.setdefault("batch", "1")
        out.write(",".join(r.get(c, "") for c in COLUMNS) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
