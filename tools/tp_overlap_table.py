#!/usr/bin/env python3
"""The overlap table of docs/tutorial/tp-overlap.md, from hgemm-nccl-bench's CSV.

    python3 tools/tp_overlap_table.py nccl.csv                  # Markdown table
    python3 tools/tp_overlap_table.py nccl.csv --timeline nccl-timeline.csv
    python3 tools/tp_overlap_table.py nccl.csv --table-only     # what the docs quote

--table-only prints the table alone, without the line naming its source: the
form a doc quotes under a `generated:` comment (scripts/check_docs.py runs
the script again and compares).

For every (op, kernel, chunks) of the CSV, over its runs (median, and the
range in parentheses when there are several runs):

    GEMM        the local GEMM alone (mode gemm), ms
    coll        the collective alone (mode collective), ms
    coll/GEMM   their ratio
    naive       collective then GEMM, or GEMM then collective, ms
    overlap     libhgemm_nccl (mode overlap, AGREE checks), ms
    xGEMM       overlap / GEMM                 (the bar: <= 1.10)
    naive/ovl   naive / overlap                (the bar: >= 1.10)
    model       the best possible overlap from the chunked pieces' own times
                (below), ms
    model/ovl   how close the measurement comes to it (1 = as good as possible)
    local       the same with HGEMM_NCCL_CHECK_LOCAL (no agreement), ms

The model (the chapter derives it): with G the GEMM's time, X the
communication's, N GPUs and C chunks, chunk after chunk at full speed and no
interference between the two,

    all-gather + GEMM:       max(G, X/C + G(N-1)/N, X + G(N-1)/(N C))
    GEMM + reduce-scatter:   max(G + X/C, G/C + X)

evaluated with G = gemm-chunked and X = collective-chunked at the same C (the
pieces the overlapped call really runs), so that chunking's own cost is in
the model and only the overlap is judged.
"""
import argparse
import csv
import statistics
import sys


def model_allgather_gemm(g, x, n, c):
    """Best completion time of all-gather + GEMM: the own rows (G/N) need
    nothing; chunk i of the others' rows arrives at (i+1) X/C and takes
    G (N-1)/(N C) to multiply."""
    return max(g, x / c + g * (n - 1) / n, x + g * (n - 1) / (n * c))


def model_gemm_reducescatter(g, x, c):
    """Best completion time of GEMM + reduce-scatter: chunk i is computed by
    (i+1) G/C and its reduction takes X/C after that and after chunk i-1's."""
    return max(g + x / c, g / c + x)


def read_csv(path):
    """(metadata dict, list of row dicts) of a hgemm-nccl-bench CSV."""
    meta, lines = {}, []
    with open(path, newline="") as f:
        for line in f:
            if line.startswith("#"):
                key, _, value = line[1:].partition(":")
                meta[key.strip()] = value.strip()
            elif line.strip():
                lines.append(line)
    return meta, list(csv.DictReader(lines))


def index(rows):
    """{(op, mode, kernel, chunks, run): ms}."""
    out = {}
    for r in rows:
        out[(r["op"], r["mode"], r["kernel"], int(r["chunks"]), int(r["run"]))] = float(r["ms"])
    return out


def cell(values, digits):
    if not values:
        return "-"
    med = statistics.median(values)
    if len(values) == 1:
        return "%.*f" % (digits, med)
    return "%.*f (%.*f-%.*f)" % (digits, med, digits, min(values), digits, max(values))


def table(rows, gpus):
    """The Markdown table's lines."""
    ms = index(rows)
    runs = sorted({k[4] for k in ms})
    keys = sorted({(k[0], k[2], k[3]) for k in ms if k[1] == "overlap"},
                  key=lambda t: (t[0], t[1], t[2]))
    head = ["op", "kernel", "chunks", "GEMM ms", "coll ms", "coll/GEMM", "naive ms", "overlap ms",
            "xGEMM", "naive/ovl", "model ms", "model/ovl", "local ms"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for op, kernel, chunks in keys:
        cols = {h: [] for h in head[3:]}
        for run in runs:
            def get(mode, kern=kernel, c=1):
                return ms.get((op, mode, kern, c, run))
            g, x = get("gemm"), get("collective", "nccl")
            gc, xc = get("gemm-chunked", c=chunks), get("collective-chunked", "nccl", chunks)
            naive, ovl, local = get("naive"), get("overlap", c=chunks), get("overlap-local", c=chunks)
            if None in (g, x, ovl):
                continue
            cols["GEMM ms"].append(g)
            cols["coll ms"].append(x)
            cols["coll/GEMM"].append(x / g)
            cols["overlap ms"].append(ovl)
            cols["xGEMM"].append(ovl / g)
            if naive is not None:
                cols["naive ms"].append(naive)
                cols["naive/ovl"].append(naive / ovl)
            if gc is not None and xc is not None:
                model = (model_allgather_gemm(gc, xc, gpus, chunks) if op == "ag"
                         else model_gemm_reducescatter(gc, xc, chunks))
                cols["model ms"].append(model)
                cols["model/ovl"].append(model / ovl)
            if local is not None:
                cols["local ms"].append(local)
        digits = {"coll/GEMM": 2, "xGEMM": 3, "naive/ovl": 3, "model/ovl": 3}
        line = [op, kernel, str(chunks)] + [cell(cols[h], digits.get(h, 3)) for h in head[3:]]
        out.append("| " + " | ".join(line) + " |")
    return out


def timeline_table(path):
    """Per op and GPU: when each chunk's communication and GEMMs were done."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    out = ["| op | kernel | GPU | event | chunk | ms from the call's start |", "|---|---|---|---|---|---|"]
    for r in rows:
        chunk = "" if int(r["chunk"]) < 0 else r["chunk"]
        out.append("| %s | %s | %s | %s | %s | %.3f |" % (r["op"], r["kernel"], r["rank"], r["event"], chunk,
                                                          float(r["t_ms"])))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv", help="hgemm-nccl-bench --csv output")
    ap.add_argument("--timeline", help="hgemm-nccl-bench --timeline output")
    ap.add_argument("--table-only", action="store_true",
                    help="the overlap table alone, no source line (the form the docs quote)")
    args = ap.parse_args(argv)
    if args.table_only and args.timeline:
        ap.error("--table-only prints the overlap table alone; leave out --timeline")
    meta, rows = read_csv(args.csv)
    if not rows:
        print("%s: no rows" % args.csv, file=sys.stderr)
        return 1
    gpus = int(rows[0]["gpus"])
    if args.table_only:
        print("\n".join(table(rows, gpus)))
        return 0
    print("<!-- from %s: %s, %s GPUs, commit %s, %s -->" % (
        args.csv, meta.get("gpu", "?"), gpus, meta.get("git_commit", "?"), meta.get("date", "?")))
    print("\n".join(table(rows, gpus)))
    if args.timeline:
        print()
        print("\n".join(timeline_table(args.timeline)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
