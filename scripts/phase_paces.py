#!/usr/bin/env python3
"""phase_paces.py: how evenly V8's consumer warpgroups ran, from a phase CSV.

    scripts/phase_paces.py PHASE_CSV [PHASE_CSV ...]

Reads hgemm-phase-timer's CSV (launch,slot,phase,ns,cycles; slot = block * 2
+ warpgroup) and prints, per launch, when the warpgroups ended (min, median,
max, in us after the launch's first start), the spread of those ends as a
share of the latest, the SM cycles each warpgroup counted from its start to
its end, and the clock each ran at (cycles over ns). Then, for the first
launch, the distinct clocks with the blocks at each (blocks of a 2-block
cluster run on one TPC, so they read the same). Exit status 1 on a file
with no start and end marks.
"""
import csv
import statistics
import sys
from collections import defaultdict


def launches(path):
    """{launch: {slot: (start_ns, start_cycles, end_ns, end_cycles)}}"""
    marks = defaultdict(dict)
    with open(path) as f:
        for row in csv.DictReader(line for line in f if not line.startswith("#")):
            marks[int(row["launch"])][(int(row["slot"]), row["phase"])] = (int(row["ns"]), int(row["cycles"]))
    out = {}
    for launch, m in marks.items():
        slots = {}
        for (slot, phase), (ns, cyc) in m.items():
            if phase == "end" and (slot, "start") in m:
                s_ns, s_cyc = m[(slot, "start")]
                slots[slot] = (s_ns, s_cyc, ns, cyc)
        if slots:
            out[launch] = slots
    return out


def launch_stats(slots):
    """One launch's warpgroups: ends (ns after the first start), cycles and clocks (GHz)."""
    ends = sorted(v[2] for v in slots.values())
    cycles = [v[3] - v[1] for v in slots.values()]
    ghz = [(v[3] - v[1]) / (v[2] - v[0]) for v in slots.values() if v[2] > v[0]]
    return {"groups": len(ends), "end_min": ends[0], "end_median": statistics.median(ends), "end_max": ends[-1],
            "cycles_min": min(cycles), "cycles_max": max(cycles), "ghz_min": min(ghz), "ghz_max": max(ghz)}


def clock_levels(slots):
    """{clock in GHz, to 3 decimals: [blocks at it]} (a block's clock: the mean of its warpgroups')."""
    by_block = defaultdict(list)
    for slot, v in slots.items():
        if v[2] > v[0]:
            by_block[slot // 2].append((v[3] - v[1]) / (v[2] - v[0]))
    levels = defaultdict(list)
    for block, g in sorted(by_block.items()):
        levels[round(statistics.mean(g), 3)].append(block)
    return dict(levels)


def report(path):
    data = launches(path)
    if not data:
        print(f"{path}: no start and end marks", file=sys.stderr)
        return False
    print(path)
    for launch in sorted(data):
        st = launch_stats(data[launch])
        lo, med, hi = st["end_min"], st["end_median"], st["end_max"]
        print(f"  launch {launch}: {st['groups']} warpgroups, end {lo / 1e3:.1f} / {med / 1e3:.1f} / {hi / 1e3:.1f} us "
              f"(max - median {100 * (hi - med) / hi:.2f}%, max - min {100 * (hi - lo) / hi:.2f}% of the latest); "
              f"cycles {st['cycles_min']}..{st['cycles_max']} "
              f"({100 * (st['cycles_max'] - st['cycles_min']) / st['cycles_max']:.2f}%); "
              f"GHz {st['ghz_min']:.3f}..{st['ghz_max']:.3f}")
    print("  clocks in launch 1 (GHz: blocks):")
    for clock, blocks in sorted(clock_levels(data[min(data)]).items()):
        print(f"    {clock:.3f}: {len(blocks)} blocks, {' '.join(str(b) for b in blocks)}")
    return True


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) == 2 else 1
    ok = True
    for path in argv[1:]:
        ok = report(path) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
