#!/usr/bin/env python3
"""Draws a traced tensor-parallel call (hgemm-nccl-bench --timeline's CSV) as
an SVG timeline: the GEMM's stream and the collective's, chunk by chunk, for
the all-gather + GEMM (a) and the GEMM + reduce-scatter (b), on one GPU.

    python3 scripts/plot_tp_timeline.py bench/results/2026-11-30-h200-run17-nccl-timeline.csv \
        --kernel auto --chunks 4 --rank 0 -o docs/figures/tp-timeline.svg

Needs nothing beyond Python. The CSV holds only when each piece ended (ms from
the call's start on that GPU), so a piece is drawn from the end of the one
before it on its stream, or from the event it waits for if that is later
(a chunk's GEMM in (a) waits for the chunk to land; a reduction in (b) for
its chunk's GEMM), which is how the streams order them.
"""
import argparse
import csv
import sys

COLORS = {"gemm": "#3d7fc4", "own": "#7fb3e6", "comm": "#e69138"}


def read(path, kernel, chunks, rank):
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(ln for ln in f if ln.strip() and not ln.startswith("#"))]
    ev = {}
    for r in rows:
        if r["kernel"] == kernel and int(r["chunks"]) == chunks and int(r["rank"]) == rank:
            ev[(r["op"], r["event"], int(r["chunk"]))] = float(r["t_ms"])
    if not ev:
        sys.exit("plot_tp_timeline: no rows for kernel %s, %d chunks, rank %d" % (kernel, chunks, rank))
    return ev


def lanes(ev, chunks):
    """{op: [(lane, start, end, label, color)]}"""
    out = {}
    # (a) all-gather + GEMM: the own rows' GEMM, then each chunk's once it landed
    a, t = [], 0.0
    own = ev[("ag", "own_gemm_done", -1)]
    a.append(("GEMM", 0.0, own, "own", COLORS["own"]))
    t = own
    for c in range(chunks):
        start, end = max(t, ev[("ag", "comm_done", c)]), ev[("ag", "gemm_done", c)]
        a.append(("GEMM", start, end, str(c), COLORS["gemm"]))
        t = end
    t = 0.0
    for c in range(chunks):
        end = ev[("ag", "comm_done", c)]
        a.append(("all-gather", t, end, str(c), COLORS["comm"]))
        t = end
    out["(a) all-gather + GEMM"] = a
    # (b) GEMM + reduce-scatter: each chunk's GEMM, then its reduction
    b, t = [], 0.0
    for c in range(chunks):
        end = ev[("rs", "gemm_done", c)]
        b.append(("GEMM", t, end, str(c), COLORS["gemm"]))
        t = end
    t = 0.0
    for c in range(chunks):
        start = max(t, ev[("rs", "gemm_done", c)])
        end = ev[("rs", "comm_done", c)]
        b.append(("reduce-scatter", start, end, str(c), COLORS["comm"]))
        t = end
    out["(b) GEMM + reduce-scatter"] = b
    return out


def svg(panels, title):
    W, left, right, lane_h, gap = 900, 130, 30, 26, 14
    tmax = max(e for bars in panels.values() for _, _, e, _, _ in bars)
    scale = (W - left - right) / tmax
    o, y = [], 40
    o.append('<text x="%d" y="22" font-size="14" font-weight="bold">%s</text>' % (10, title))
    for name, bars in panels.items():
        o.append('<text x="10" y="%d" font-size="12" font-weight="bold">%s</text>' % (y + 12, name))
        y += 20
        for lane in dict.fromkeys(l for l, *_ in bars):
            o.append('<text x="%d" y="%d" font-size="11" text-anchor="end">%s</text>' % (left - 8, y + 17, lane))
            for l, s, e, label, color in bars:
                if l != lane:
                    continue
                x, w = left + s * scale, max((e - s) * scale, 1)
                o.append('<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s" stroke="#fff"/>'
                         % (x, y, w, lane_h - 4, color))
                if w > 14:
                    o.append('<text x="%.1f" y="%d" font-size="10" text-anchor="middle" fill="#fff">%s</text>'
                             % (x + w / 2, y + 15, label))
            y += lane_h
        y += gap
    # time axis
    o.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>' % (left, y, W - right, y))
    step = 0.25
    t = 0.0
    while t <= tmax + 1e-9:
        x = left + t * scale
        o.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#333"/>' % (x, y, x, y + 4))
        o.append('<text x="%.1f" y="%d" font-size="10" text-anchor="middle">%.2f</text>' % (x, y + 16, t))
        t += step
    o.append('<text x="%d" y="%d" font-size="11" text-anchor="middle">ms from the call\'s start on this GPU</text>'
             % ((left + W - right) // 2, y + 32))
    H = y + 44
    head = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
            'font-family="Helvetica, Arial, sans-serif">' % (W, H, W, H),
            '<title>%s</title>' % title, '<rect x="0" y="0" width="%d" height="%d" fill="#fff"/>' % (W, H)]
    return "\n".join(head + o + ["</svg>"]) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--kernel", default="auto")
    ap.add_argument("--chunks", type=int, default=4)
    ap.add_argument("--rank", type=int, default=0)
    ap.add_argument("--title", default=None)
    ap.add_argument("-o", "--output", required=True, help="the SVG to write")
    a = ap.parse_args()
    ev = read(a.csv, a.kernel, a.chunks, a.rank)
    title = a.title or "One traced call, %s, %d chunks, GPU %d" % (a.kernel, a.chunks, a.rank)
    with open(a.output, "w") as f:
        f.write(svg(lanes(ev, a.chunks), title))
    print("wrote %s" % a.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
