#!/usr/bin/env python3
"""Draws docs/figures/v8-pair-seam-split.svg: V8's pair of blocks sharing B, the seam
between two tiles, and the tail split of the last round (a diagram, drawn in code).

    python3 scripts/plot_v8_schedule.py
"""
import os
OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "figures", "v8-pair-seam-split.svg")
out = []
W, H = 960, 430
def rect(x, y, w, h, fill, stroke="#333", extra=""):
    out.append(f'<rect x="{x}" y="{y}" width="{w}" height="{h}" fill="{fill}" stroke="{stroke}" stroke-width="1" {extra}/>')
def text(x, y, s, size=12, anchor="start", weight="normal", fill="#111"):
    out.append(f'<text x="{x}" y="{y}" font-size="{size}" text-anchor="{anchor}" font-weight="{weight}" fill="{fill}">{s}</text>')
def line(x1, y1, x2, y2, color="#333", dash=None, arrow=True, width=1.5):
    d = f' stroke-dasharray="{dash}"' if dash else ""
    a = ' marker-end="url(#arrow)"' if arrow else ""
    out.append(f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="{color}" stroke-width="{width}"{d}{a}/>')
A, B, C, L, R, EPI, SL = "#cfe3f7", "#f9d9b0", "#e8e8e8", "#7fb3e6", "#3d7fc4", "#f4b6b6", "#bfe5bf"

# --- 1. the pair -------------------------------------------------------------
text(20, 28, "1. A pair (one cluster) sharing B", 14, weight="bold")
rect(40, 60, 120, 30, B); text(100, 80, "B half 0", 11, "middle")
rect(165, 60, 120, 30, B); text(225, 80, "B half 1", 11, "middle")
text(162, 52, "256 x 64 slice of B, k-tile kt", 11, "middle")
for i, y in enumerate((130, 250)):
    rect(40, y, 245, 80, C)
    text(48, y + 16, f"block {i} (SM {i}): 128 x 256 tile of C", 11)
    rect(48, y + 26, 50, 46, A); text(73, y + 53, "A", 11, "middle")
    rect(110, y + 26, 80, 46, B); text(150, y + 47, "B: both", 11, "middle"); text(150, y + 61, "halves", 11, "middle")
    text(196, y + 45, "2 consumers", 10); text(196, y + 59, "release in", 10); text(196, y + 72, "both blocks", 10)
# multicast arrows: half 0 from block 0's TMA into both; half 1 from block 1's
line(100, 90, 140, 154, "#c06000"); line(100, 90, 130, 274, "#c06000", dash="4 3")
line(225, 90, 165, 154, "#c06000", dash="4 3"); line(225, 90, 170, 274, "#c06000")
text(20, 360, "Each block loads one half of B and multicasts it to both:", 11)
text(20, 376, "16 KB of B from L2 per block per k-tile instead of 32 KB;", 11)
text(20, 392, "a stage is free when all 4 consumers (2 x 2 blocks) are done.", 11)

# --- 2. the seam -------------------------------------------------------------
x0 = 330
text(x0, 28, "2. The seam between tile t and tile t+1 (one consumer)", 14, weight="bold")
text(x0, 62, "tensor pipe", 11)
text(x0, 112, "epilogue", 11)
bx, bw = x0 + 80, 26
seq = [("L", L), ("R", R), ("L", L), ("R", R), ("L", L), ("R", R), ("L", L), ("R", R), ("L", L), ("R", R)]
for i, (s, col) in enumerate(seq):
    rect(bx + i * bw, 48, bw, 22, col); text(bx + i * bw + bw / 2, 63, s, 11, "middle", fill="#fff" if s == "R" else "#111")
sep = bx + 6 * bw
line(sep, 40, sep, 130, "#555", dash="3 3", arrow=False)
text(bx + 3 * bw, 90 - 46, "tile t: last k-tiles", 10, "middle")
text(sep + 2 * bw, 90 - 46, "tile t+1", 10, "middle")
rect(bx + 5 * bw, 98, bw, 22, EPI); text(bx + 5 * bw + bw / 2, 113, "0,1", 9, "middle")
rect(bx + 6 * bw + 4, 98, 2 * bw - 4, 22, EPI); text(bx + 7 * bw + 2, 113, "2,3", 9, "middle")
text(x0, 150, "Each k-tile runs as two m64n128k16 halves, left (L) then right (R).", 11)
text(x0, 166, "At the tile's end the consumer waits for L only: C's parts 0 and 1", 11)
text(x0, 182, "are stored and packed while R runs; tile t+1's first L is issued", 11)
text(x0, 198, "before the old R's parts 2 and 3 are packed. No gap in the pipe;", 11)
text(x0, 214, "without the seam it drained for about 3,000 cycles a tile.", 11)

# --- 3. the tail split -------------------------------------------------------
y0 = 250
text(x0, y0, "3. The last round, split along k (the tail split)", 14, weight="bold")
workers, rw, ry = 6, 30, 16
text(x0, y0 + 22, "cluster", 10)
for w in range(workers):
    y = y0 + 30 + w * ry
    text(x0 + 40, y + 12, str(w), 10, "end")
    for r in range(3):
        rect(x0 + 48 + r * 3 * rw, y, 3 * rw, ry - 2, "#dcdcdc"); text(x0 + 48 + r * 3 * rw + 1.5 * rw, y + 11, f"tile {r * workers + w}", 9, "middle")
tx = x0 + 48 + 9 * rw
# 4 tail tiles (18..21) in 3 slices = 12 units on 6 workers: 2 units each, slices 1,2 first, owners (slice 0) last
units = [(t, s) for s in (1, 2) for t in range(4)] + [(t, 0) for t in range(4)]
cols = {0: "#2e8b57", 1: SL, 2: SL}
for j, (t, s) in enumerate(units):
    w, r = j % workers, j // workers
    y = y0 + 30 + w * ry
    rect(tx + r * rw, y, rw, ry - 2, cols[s]); text(tx + r * rw + rw / 2, y + 11, f"{18 + t}.{s}", 8, "middle", fill="#fff" if s == 0 else "#111")
text(tx + rw, y0 + 22, "last round", 10, "middle")
text(tx + 2 * rw + 10, y0 + 40, "whole rounds stay whole;", 10)
text(tx + 2 * rw + 10, y0 + 54, "the last round's 4 tiles in 3 slices", 10)
text(tx + 2 * rw + 10, y0 + 68, "of k each: 12 units on 6 clusters,", 10)
text(tx + 2 * rw + 10, y0 + 82, "two thirds of a round, not a whole one.", 10)
text(tx + 2 * rw + 10, y0 + 96, "Slice 0 (dark, the owner) runs last", 10)
text(tx + 2 * rw + 10, y0 + 110, "and adds slices 1, 2 in order:", 10)
text(tx + 2 * rw + 10, y0 + 124, "the same bits on every run.", 10)

svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="Helvetica, Arial, sans-serif">',
       '<title>V8: a pair of blocks sharing B, the seam between tiles, the tail split</title>',
       '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#333"/></marker></defs>',
       f'<rect x="0" y="0" width="{W}" height="{H}" fill="#fff"/>'] + out + ["</svg>"]
open(OUT, "w").write("\n".join(svg) + "\n")
