#!/usr/bin/env python3
"""Draws the tutorial's two schematic figures (diagrams drawn in code, no data):

    docs/figures/v9-swap-split.svg   V9: the weight on WGMMA's M side, the few
                                     tokens on N, k split over a cluster and the
                                     partial sums added in distributed shared memory
    docs/figures/forms-layouts.svg   every form: a K-major and an MN-major operand,
                                     the TMA boxes each becomes, the transpose bit

    python3 scripts/plot_diagrams.py
"""
import os
from xml.sax.saxutils import escape

FIG = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "figures")


class Svg:
    def __init__(self, w, h, title):
        self.w, self.h, self.title, self.o = w, h, title, []

    def rect(self, x, y, w, h, fill, stroke="#333"):
        self.o.append('<rect x="%g" y="%g" width="%g" height="%g" fill="%s" stroke="%s"/>' % (x, y, w, h, fill, stroke))

    def text(self, x, y, s, size=11, anchor="start", weight="normal", fill="#111"):
        self.o.append('<text x="%g" y="%g" font-size="%d" text-anchor="%s" font-weight="%s" fill="%s">%s</text>'
                      % (x, y, size, anchor, weight, fill, escape(s)))

    def arrow(self, x1, y1, x2, y2, color="#333"):
        self.o.append('<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="%s" stroke-width="1.5" marker-end="url(#a)"/>'
                      % (x1, y1, x2, y2, color))

    def write(self, name):
        head = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
                'font-family="Helvetica, Arial, sans-serif">' % (self.w, self.h, self.w, self.h),
                '<title>%s</title>' % escape(self.title),
                '<defs><marker id="a" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
                'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#333"/></marker></defs>',
                '<rect x="0" y="0" width="%d" height="%d" fill="#fff"/>' % (self.w, self.h)]
        with open(os.path.join(FIG, name), "w") as f:
            f.write("\n".join(head + self.o + ["</svg>"]) + "\n")
        print("wrote docs/figures/%s" % name)


def v9():
    s = Svg(900, 330, "V9: the weight on M, the tokens on N, k split over a cluster")
    W, X, P, C = "#f9d9b0", "#cfe3f7", "#bfe5bf", "#e8e8e8"
    s.text(20, 24, "1. The swap: C^T = W x^T", 14, weight="bold")
    s.rect(40, 50, 60, 200, W); s.text(70, 150, "W", 13, "middle")
    s.text(70, 268, "n x k, K-major", 10, "middle")
    for i in range(5):
        s.rect(40, 50 + 40 * i, 60, 40, "none", "#c06000")
    s.text(108, 74, "64-row tile on", 10); s.text(108, 88, "WGMMA's M", 10)
    s.rect(200, 50, 60, 24, X); s.text(230, 66, "x", 12, "middle")
    s.text(230, 90, "m x k, m <= 64:", 10, "middle"); s.text(230, 104, "on WGMMA's N", 10, "middle")
    s.text(230, 118, "(16, 32 or 64 wide)", 10, "middle")
    s.rect(200, 150, 60, 40, C); s.text(230, 174, "C^T tile", 10, "middle")
    s.text(230, 208, "stored transposed", 10, "middle"); s.text(230, 222, "into C (m x n)", 10, "middle")
    s.text(20, 290, "Nothing is transposed in memory:", 11)
    s.text(20, 305, "the swap is which tensor map", 11)
    s.text(20, 320, "feeds which side of the WGMMA.", 11)
    x0 = 330
    s.text(x0, 24, "2. One tile's k-loop split over a cluster of S blocks (S <= 8)", 14, weight="bold")
    S = 4
    for r in range(S):
        x = x0 + 20 + r * 130
        s.rect(x, 50, 110, 26, W); s.text(x + 55, 67, "k slice %d" % r, 10, "middle")
        s.rect(x, 100, 110, 40, P); s.text(x + 55, 118, "block %d: fp32" % r, 10, "middle")
        s.text(x + 55, 132, "partial in smem", 10, "middle")
        s.arrow(x + 55, 76, x + 55, 98)

    for r in range(S):
        x = x0 + 20 + r * 130
        s.rect(x, 200, 110, 30, C); s.text(x + 55, 219, "share %d of C" % r, 10, "middle")
        for q in range(S):
            s.arrow(x0 + 20 + q * 130 + 55, 140, x + 10 + 30 * q, 198, "#9a9a9a")
    s.text(x0, 256, "After a cluster barrier block r adds, for its share of the tile, the S partials in", 11)
    s.text(x0, 271, "rank order 0, 1, ..., S-1, read from its peers' shared memory (mapa, ld.shared::cluster).", 11)
    s.text(x0, 292, "No workspace and no second kernel; every element is the same sum in the same", 11)
    s.text(x0, 307, "order on every run (bitwise repeatable). The weight streams from HBM once.", 11)
    s.write("v9-swap-split.svg")


def forms():
    s = Svg(900, 300, "Every form: K-major and MN-major operands, one kernel")
    A, B = "#cfe3f7", "#f9d9b0"
    s.text(20, 24, "The same k-tile of A (128 rows x 64 k), stored two ways", 14, weight="bold")
    # K-major
    s.text(40, 52, "A stored row-major (op N): K-major", 12, weight="bold")
    s.rect(40, 64, 160, 128, A)
    for i in range(1, 8):
        s.o.append('<line x1="40" y1="%g" x2="200" y2="%g" stroke="#7fa7cf" stroke-width="0.6"/>' % (64 + 16 * i, 64 + 16 * i))
    s.text(120, 210, "each row: 64 k-elements, 128 bytes", 10, "middle")
    s.text(120, 224, "one TMA box of 128 rows x 64 k", 10, "middle")
    s.text(120, 238, "WGMMA: transpose bit 0", 10, "middle", weight="bold")
    # MN-major
    x0 = 330
    s.text(x0, 52, "A stored transposed (op T): MN-major", 12, weight="bold")
    s.rect(x0, 64, 128, 160, B); s.rect(x0 + 128, 64, 128, 160, B)
    for i in range(1, 10):
        y = 64 + 16 * i
        s.o.append('<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#c9a070" stroke-width="0.6"/>' % (x0, y, x0 + 256, y))
    s.text(x0 + 64, 146, "box 0", 11, "middle"); s.text(x0 + 192, 146, "box 1", 11, "middle")
    s.text(x0 + 128, 242, "each k-row: 64 M-elements, 128 bytes; two boxes of 64 M x 64 k", 10, "middle")
    s.text(x0 + 128, 256, "side by side along M (the descriptor's leading offset: 8 KB)", 10, "middle")
    s.text(x0 + 128, 270, "WGMMA: transpose bit 1, read where it lies", 10, "middle", weight="bold")
    x1 = 640
    s.text(x1, 52, "Forms (C = op(A) op(B)):", 12, weight="bold")
    rows = [("NT", "A K-major, B K-major", "x @ W.T"), ("NN", "A K-major, B MN-major", "dX = dY @ W"),
            ("TN", "A MN-major, B K-major", "dW = dY.T @ X"), ("TT", "both MN-major", "")]
    for i, (f, what, use) in enumerate(rows):
        y = 80 + 34 * i
        s.text(x1, y, f, 12, weight="bold"); s.text(x1 + 34, y, what, 10)
        if use:
            s.text(x1 + 34, y + 14, use, 10, fill="#555")
    s.text(x1, 230, "Template parameters of one source:", 10)
    s.text(x1, 244, "element type (fp16, bf16) and each", 10)
    s.text(x1, 258, "operand's layout; a batch is the", 10)
    s.text(x1, 272, "tensor maps' third dimension.", 10)
    s.write("forms-layouts.svg")


if __name__ == "__main__":
    v9()
    forms()
