#!/usr/bin/env python3
"""Read hgemm-sm-map's CSV (tools/sm_map.cu) and say where V8's clusters land.

    python3 scripts/sm_groups.py sm-map.csv [--csv groups.csv]

- The SMs' groups: SMs seen in one cluster of 4, 8 or 16 share a GPC, so
  joining every such cluster's SMs gives the GPCs (a GPC none of whose
  clusters reached all its SMs may show as two groups; the count of SMs a
  group holds says so).
- The pairs (clusters of 2, V8's launch): how many sit on one TPC (SMs 2t
  and 2t + 1), whether a cluster index lands on the same SMs in every
  launch, and in which group each cluster index ran, in index order: the
  order in which the GPU hands clusters to GPCs.
With --csv, one row per SM: smid, its group, and the pair clusters (of
the first launch) that ran there.
"""
import argparse
import collections
import csv
import sys


class SmMapError(Exception):
    pass


def read(path):
    rows = []
    with open(path) as f:
        for r in csv.DictReader(line for line in f if not line.startswith("#")):
            try:
                rows.append({k: (v if k == "config" else int(v)) for k, v in r.items()})
            except (TypeError, ValueError) as e:
                raise SmMapError(f"{path}: a row that is not hgemm-sm-map's: {r}") from e
    if not rows:
        raise SmMapError(f"{path}: no rows")
    return rows


def clusters(rows, configs):
    """{(config, launch, cluster): sorted SMs} of the named configurations"""
    out = collections.defaultdict(list)
    for r in rows:
        if r["config"] in configs:
            out[(r["config"], r["launch"], r["cluster"])].append(r["smid"])
    return {k: sorted(v) for k, v in out.items()}


def groups(rows):
    """the SMs joined by the clusters of 4 and more: a list of sorted SM lists"""
    parent = {}

    def find(x):
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    big = {r["config"] for r in rows if r["cluster_size"] >= 4}
    for sms in clusters(rows, big).values():
        for s in sms:
            find(s)
        for s in sms[1:]:
            parent[find(s)] = find(sms[0])
    members = collections.defaultdict(list)
    for s in parent:
        members[find(s)].append(s)
    return sorted((sorted(m) for m in members.values()), key=lambda m: m[0])


def ranges(sms):
    """[0, 1, 2, 5, 7, 8] -> '0-2 5 7-8'"""
    out, start = [], None
    for i, s in enumerate(sms):
        if start is None:
            start = s
        if i + 1 == len(sms) or sms[i + 1] != s + 1:
            out.append(str(start) if start == s else f"{start}-{s}")
            start = None
    return " ".join(out)


def pairs(rows, config="pairs"):
    """the pairs' facts: clusters a launch, on one TPC, the same SMs each launch,
    and the first launch's {cluster: SMs}"""
    per = clusters(rows, {config})
    if not per:
        return None
    launches = sorted({k[1] for k in per})
    first = {k[2]: v for k, v in per.items() if k[1] == launches[0]}
    on_tpc = sum(1 for v in per.values() if len(v) == 2 and v[0] // 2 == v[1] // 2 and v[0] != v[1])
    same = sum(1 for c, sms in first.items() if all(per.get((config, l, c)) == sms for l in launches))
    return {"launches": len(launches), "clusters": len(first), "on_tpc": on_tpc, "total": len(per),
            "stable": same, "first": first}


def summary(rows):
    lines = []
    gs = groups(rows)
    of = {s: i for i, g in enumerate(gs) for s in g}
    all_sms = sorted({r["smid"] for r in rows})
    lines.append(f"SMs seen: {len(all_sms)} ({ranges(all_sms)})")
    if gs:
        lines.append(f"groups joined by the clusters of 4 and more: {len(gs)}")
        for i, g in enumerate(gs):
            lines.append(f"  group {i}: {len(g)} SMs: {ranges(g)}")
        outside = [s for s in all_sms if s not in of]
        if outside:
            lines.append(f"  in no cluster of 4 or more: {ranges(outside)}")
    for config in ("pairs", "pairs64"):
        p = pairs(rows, config)
        if not p:
            continue
        lines.append(f"{config}: {p['clusters']} clusters of 2, {p['launches']} launches")
        lines.append(f"  on one TPC (SMs 2t, 2t+1): {p['on_tpc']} of {p['total']}")
        lines.append(f"  the same SMs in every launch: {p['stable']} of {p['clusters']} cluster indexes")
        if gs:
            seq = [of.get(p["first"][c][0], -1) for c in sorted(p["first"])]
            lines.append("  group of each cluster index (first launch): " + " ".join(map(str, seq)))
            runs = sum(1 for a, b in zip(seq, seq[1:]) if a == b)
            lines.append(f"  neighbouring indexes in one group: {runs} of {max(len(seq) - 1, 0)}")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("--csv", dest="out", help="write smid,group,pair_clusters rows here")
    args = ap.parse_args(argv)
    try:
        rows = read(args.csv)
    except (OSError, SmMapError) as e:
        print(f"sm_groups: {e}", file=sys.stderr)
        return 1
    print(summary(rows))
    if args.out:
        gs = groups(rows)
        of = {s: i for i, g in enumerate(gs) for s in g}
        p = pairs(rows) or {"first": {}}
        at = collections.defaultdict(list)
        for c, sms in p["first"].items():
            for s in sms:
                at[s].append(c)
        with open(args.out, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["smid", "group", "pair_clusters"])
            for s in sorted({r["smid"] for r in rows}):
                w.writerow([s, of.get(s, ""), " ".join(map(str, at.get(s, [])))])
    return 0


if __name__ == "__main__":
    sys.exit(main())
