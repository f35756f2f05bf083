#!/usr/bin/env python3
"""unit_clocks.py: a V8 launch's own cost and its tiles' changes, from the
unit clocks in hgemm-phase-timer's CSV (phases unit0, unit1, ...; each the
start of one unit of work of one consumer warpgroup, in SM cycles).

    python3 scripts/unit_clocks.py phase-4096x4096x4096.csv [...] [--bn 256]

For each file, over every launch and warpgroup (medians, and the range of
the launches' medians):
- fill:   start -> unit 0 (barriers, the first loads' wait);
- period: unit u -> unit u+1, a unit with its share of a tile change; its
          excess over the tensor cores' own time for the unit's k-tiles
          (1024 cycles a k-tile of a 128x256 tile, in proportion to the
          width: --bn, or the CSV's `# plan:` line), in k-tiles;
- close:  the last unit -> end (the last tile with the walk's close).
The k-tiles a unit holds are K / 64 (whole tiles: the shape's K); where a
launch also splits k (the tail split, split-K), its few slices are shorter
units, and the median period stays the whole tiles' while most units are.
"""
import argparse
import collections
import csv
import re
import statistics
import sys

CYCLES_PER_KTILE_256 = 1024  # a 128x256x64 k-tile at the tensor cores' dense fp16 rate, one SM
UNIT_MARKS = 32  # V8_UNIT_MARKS (src/internal.h): the units a warpgroup marks


class UnitClockError(Exception):
    pass


def read(path):
    """(M, N, K), the plan's tile width (or None), {launch: {slot: {phase: cycles}}}"""
    shape, bn = None, None
    marks = collections.defaultdict(lambda: collections.defaultdict(dict))
    with open(path) as f:
        lines = f.read().splitlines()
    for line in lines:
        if line.startswith("# shape:"):
            shape = tuple(int(x) for x in line.split(":", 1)[1].split())
        m = re.match(r"# plan: .*\bbn (\d+)", line)
        if m:
            bn = int(m.group(1))
    rows = [line for line in lines if not line.startswith("#")]
    for r in csv.DictReader(rows):
        try:
            marks[int(r["launch"])][int(r["slot"])][r["phase"]] = int(r["cycles"])
        except (KeyError, TypeError, ValueError) as e:
            raise UnitClockError(f"{path}: not hgemm-phase-timer's CSV: {r}") from e
    if shape is None or len(shape) != 3:
        raise UnitClockError(f"{path}: no '# shape: M N K' line")
    return shape, bn, marks


def launch_medians(slots):
    """one launch: median fill, period, close over its warpgroups (None where absent)"""
    fills, periods, closes = [], [], []
    for phases in slots.values():
        units = []
        while f"unit{len(units)}" in phases:
            units.append(phases[f"unit{len(units)}"])
        if not units or "start" not in phases:
            continue
        fills.append(units[0] - phases["start"])
        periods.extend(b - a for a, b in zip(units, units[1:]))
        if "end" in phases and len(units) < UNIT_MARKS:  # else the marks ran out before the units
            closes.append(phases["end"] - units[-1])
    med = lambda v: statistics.median(v) if v else None  # noqa: E731
    return med(fills), med(periods), med(closes)


def summary(path, bn_arg=None):
    shape, bn_plan, marks = read(path)
    bn = bn_arg or bn_plan or 256
    k_tiles = -(-shape[2] // 64)
    ideal = k_tiles * CYCLES_PER_KTILE_256 * bn / 256
    per = [launch_medians(marks[l]) for l in sorted(marks)]
    out = [f"{path}: {shape[0]} x {shape[1]} x {shape[2]}, 128x{bn} tiles, {k_tiles} k-tiles a unit, "
           f"{len(per)} launches"]
    for i, name in enumerate(("fill", "period", "close")):
        vals = [p[i] for p in per if p[i] is not None]
        if not vals:
            out.append(f"  {name}: no marks")
            continue
        line = f"  {name}: {statistics.median(vals):.0f} cycles [{min(vals):.0f}..{max(vals):.0f}]"
        if name == "period":
            excess = [(v - ideal) / (CYCLES_PER_KTILE_256 * bn / 256) for v in vals]
            line += f", {statistics.median(excess):+.2f} k-tiles over {ideal:.0f}"
        else:
            line += f" = {statistics.median(vals) / (CYCLES_PER_KTILE_256 * bn / 256):.2f} k-tiles"
        out.append(line)
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--bn", type=int, help="the tile width, where the CSV has no '# plan:' line")
    args = ap.parse_args(argv)
    status = 0
    for path in args.csv:
        try:
            print(summary(path, args.bn))
        except (OSError, UnitClockError) as e:
            print(f"unit_clocks: {e}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
