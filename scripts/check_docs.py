#!/usr/bin/env python3
"""Check every measured figure the docs quote against the committed CSVs.

    python3 scripts/check_docs.py            # exit 0 when all agree, 1 otherwise
    python3 scripts/check_docs.py --list     # also print each checked figure

The README, the tutorial (docs/tutorial/*.md), the notes (docs/notes/*.md),
the figures (docs/figures/*.svg) and the kernel headers (src/kernels/v*.cu)
quote numbers measured on the H200. Each one carries a reference to the CSV
it comes from, and this script recomputes it from bench/results/ and fails
when the quoted text is not that number rounded as written. Four kinds of
reference:

1. A generated table. A comment right above a Markdown table,

       <!-- generated: bench_summary.py bench/results/FILE.csv --markdown -->

   names one of the scripts in GENERATORS (in scripts/ or tools/) and its
   arguments; the table must be exactly what the script prints.

2. A checked table, for tables written by hand:

       <!-- table: csv=run10-bench -->                 rows are kernels
       <!-- table: rows=run kind=bench kernel=v0 -->   rows are runs: "10",
                                                       "5, one process", "5, 5 processes"
       <!-- table: rows=kernel-run kind=profile -->    rows like "v0 (7)"

   Each column is read from its header (HEADERS below: "TFLOP/s" is the
   tflops column, "regs" the profile's registers, ...); columns it does not
   know ("idea", "commit") are not checked. A cell "A [B..C]" is the median,
   minimum and maximum over the rows that match; a cell "A" the median (the
   value, for a profile). Filters like m=8192 or shape=4096x4096x14336 may
   follow.

3. An inline reference, right after a figure in prose or in a table cell:

       816.5 TFLOP/s<!-- = run10-bench v6 tflops -->
       four<!-- = run10-bench * window_sm_clock_mhz stat=count window_sm_clock_mhz<1980 -->
       1.040x to 1.102x<!-- = run{6..10}-bench,run{7..10}-processes v6 vs_cublas32 per=file -->
       +10.3%<!-- = expr: 100 * (median("run12-sweep v7 tflops k=1024") / median("run12-sweep v6 tflops k=1024") - 1) -->

   The figure is what stands right before the comment: "A [B..C]" (median,
   min, max), "A..B" or "A to B" (min, max) or one number (stat=, default
   median). Outside a table the figure may begin on the line before the
   comment's: a range that wraps ("1.040x to" / "1.102x<!-- ... -->") is
   read whole. A spec is CSV [KERNEL [COLUMN]] then options: stat= (median,
   min, max, mean, geomean, count, value), per=file (the statistic per file; the
   figure is then the smallest and largest over the files), per=COLUMN
   (the same per value of a column: per=chunks; per=shape groups by m, n
   and k), over= (with per=, the statistic across the groups for a single
   figure: "per=shape over=geomean" is the geomean of the per-shape
   medians; a bare "per=shape" gives the median shape's value), scale=
   (multiplies), filters (column=value, column<value, column>value,
   column!=value). CSV names a file of bench/results/ by the end of its name
   (run10-bench is 2026-11-29-h200-run10-bench.csv), several with commas or
   braces: run{6..10}-bench, run{7,8,10}-profile. KERNEL * is every row.

4. A claims file, docs/claims.txt, for files where a comment cannot sit next
   to the figure (the kernel headers): one claim a line,

       FILE :: text with {figures} in braces :: SPEC

   the text (without braces, whitespace and comment stars collapsed) must be
   in FILE, and its figures must match SPEC (with stats=median,min,max naming
   what each figure is).

Besides the figures: every "A [B..C]" in the Markdown files must be covered
by one of the checks above; every bench/results CSV a doc names must exist;
every relative link and every repository path in backquotes must exist in
the repository (no path outside it); no doc may cite ../shared or speak of
"device time".
"""
import argparse
import csv
import glob
import math
import os
import re
import statistics
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(REPO, "bench", "results")
CLAIMS = os.path.join(REPO, "docs", "claims.txt")
# The scripts a generated table may name, and the folder each one is in.
GENERATORS = {"bench_summary.py": "scripts", "plot_accuracy.py": "scripts", "ncu_table.py": "scripts",
              "tp_overlap_table.py": "tools"}
FORBIDDEN = [("../shared", "a path outside the repository"),
             ("device time", "wording about how runs were scheduled")]

# Table headers and the CSV column each one reads (bench CSVs and profile CSVs).
HEADERS = {
    "ms": "ms", "tflop/s": "tflops", "tflop/s (median)": "tflops",
    "x cublas compute_32f": "vs_cublas32", "x cublas 32f": "vs_cublas32", "x cublas32": "vs_cublas32",
    "x cublas compute_16f": "vs_cublas16", "x cublas 16f": "vs_cublas16", "x cublas16": "vs_cublas16",
    "samples": "#count",
    "sm mhz": "sm_clock_mhz", "tensor %": "tensor_pipe_pct", "tensor pipe %": "tensor_pipe_pct",
    "dram read gb": "dram_read_gb", "dram %": "dram_pct",
    "dram gb read": "dram_read_gb", "dram gb": "dram_read_gb", "l2 hit %": "l2_hit_pct",
    "l2 %": "l2_pct", "l2 gb": "l2_gb", "regs": "registers", "registers": "registers",
    "smem kib": "smem_kib", "occupancy %": "occupancy_pct", "sm %": "sm_pct",
    "mean abs err": "mean_abs_err", "p99 abs err": "p99_abs_err", "max abs err": "max_abs_err",
    "window mhz": "window_sm_clock_mhz",
}
PROFILE_MS = "duration_ms"  # a profile CSV's "ms"

NUM = r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?"
UNIT = r"(?:\s?(?:x|%|TFLOP/s|MHz|ms|GB|KiB|W|C|points|registers))?"
FIG_MRANGE = re.compile(r"(%s)%s\s*\[\s*(%s)%s\s*\.\.\s*(%s)%s\s*\]%s$" % (NUM, UNIT, NUM, UNIT, NUM, UNIT, UNIT))
FIG_RANGE = re.compile(r"(%s)%s\s*(?:\.\.|to|-|–)\s*(%s)%s$" % (NUM, UNIT, NUM, UNIT))
FIG_ONE = re.compile(r"(%s)%s$" % (NUM, UNIT))
WORDS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten "
                                    "eleven twelve".split())}
FIG_WORD = re.compile(r"\b(%s)$" % "|".join(WORDS), re.IGNORECASE)
RANGE_ANYWHERE = re.compile(r"%s%s\s*\[\s*%s%s\s*\.\.\s*%s%s\s*\]" % (NUM, UNIT, NUM, UNIT, NUM, UNIT))
MARKER = re.compile(r"<!--\s*(=(?!=)|table:|generated:)\s*(.*?)\s*-->", re.DOTALL)


class Problem(Exception):
    pass


# --- CSV files ------------------------------------------------------------------

_csv_cache = {}


def expand(text):
    """run{6..10}-bench,x{a,b} -> the list of names."""
    out = []
    for part in split_top(text):
        m = re.search(r"\{([^}]*)\}", part)
        if not m:
            out.append(part)
            continue
        inner = m.group(1)
        r = re.fullmatch(r"(\d+)\.\.(\d+)", inner)
        items = [str(i) for i in range(int(r.group(1)), int(r.group(2)) + 1)] if r else inner.split(",")
        for item in items:
            out.extend(expand(part[:m.start()] + item + part[m.end():]))
    return out


def split_top(text):
    """Split on commas outside braces."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    parts.append(cur)
    return [p for p in parts if p]


def csv_path(name):
    """A file of bench/results by the end of its name (or a repository path)."""
    if os.path.exists(os.path.join(REPO, name)):
        return os.path.join(REPO, name)
    base = name[:-4] if name.endswith(".csv") else name
    found = [p for p in glob.glob(os.path.join(RESULTS, "*.csv"))
             if os.path.basename(p)[:-4].endswith(base)
             and (os.path.basename(p)[:-4] == base or os.path.basename(p)[:-4].endswith("-" + base))]
    if len(found) != 1:
        raise Problem("CSV '%s': %s" % (name, "no such file in bench/results" if not found
                                         else "ambiguous: " + ", ".join(map(os.path.basename, found))))
    return found[0]


def load(path):
    if path not in _csv_cache:
        with open(path, newline="") as f:
            lines = [ln for ln in f if ln.strip() and not ln.startswith("#")]
        rows = list(csv.DictReader(lines))
        for r in rows:
            r["#file"] = path
        _csv_cache[path] = rows
    return _csv_cache[path]


def number(text):
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


# --- specs ----------------------------------------------------------------------

FILTER = re.compile(r"^([a-z_0-9]+)(<=|>=|!=|=|<|>)(.+)$")


class Spec:
    """CSV [KERNEL [COLUMN]] [stat=] [stats=] [per=file|COLUMN] [scale=] [filters]."""

    def __init__(self, text, defaults=None):
        self.text = text
        opts = dict(defaults or {})
        words = text.split()
        if not words:
            raise Problem("empty reference")
        self.files = [csv_path(n) for n in expand(words[0])]
        positional, self.filters = [], []
        for w in words[1:]:
            m = FILTER.match(w)
            if m and m.group(1) in ("stat", "stats", "per", "over", "scale") and m.group(2) == "=":
                opts[m.group(1)] = m.group(3)
            elif m:
                self.filters.append((m.group(1), m.group(2), m.group(3)))
            else:
                positional.append(w)
        if len(positional) > 2:
            raise Problem("reference '%s': too many words %s" % (text, positional))
        self.kernel = positional[0] if positional else opts.get("kernel", "*")
        self.column = positional[1] if len(positional) > 1 else opts.get("column")
        self.stat = opts.get("stat")
        self.stats = opts.get("stats")
        per = opts.get("per")
        self.per = None if per is None else ("#file" if per == "file" else per)
        self.over = opts.get("over")
        if self.over and not self.per:
            raise Problem("reference '%s': over= needs per=" % text)
        self.scale = float(opts.get("scale", 1))

    def rows(self):
        out = []
        for path in self.files:
            for r in load(path):
                if self.kernel != "*" and r.get("kernel") not in self.kernel.split("|"):
                    continue
                if all(keep(r, f) for f in self.filters):
                    out.append(r)
        if not out:
            raise Problem("reference '%s' selects no row" % self.text)
        return out

    def values(self, rows=None):
        if self.column is None:
            raise Problem("reference '%s' names no column" % self.text)
        vals = [number(r.get(self.column)) for r in (rows if rows is not None else self.rows())]
        vals = [v * self.scale for v in vals if v is not None]
        if not vals and self.stat != "count":
            raise Problem("reference '%s': no numeric '%s' in the rows" % (self.text, self.column))
        return vals

    def compute(self, kinds):
        """The value of each statistic in kinds ('median', 'min', ...)."""
        if self.per:
            stat = self.stat or "median"
            groups = {}
            for r in self.rows():
                if self.per == "shape":
                    key = "%sx%sx%s" % (r.get("m"), r.get("n"), r.get("k"))
                elif self.per not in r:
                    raise Problem("reference '%s': per=%s is not a column" % (self.text, self.per))
                else:
                    key = r[self.per]
                groups.setdefault(key, []).append(r)
            per = [apply(stat, self.values(rows), rows) for rows in groups.values()]
            if self.over and kinds == [stat]:
                kinds = [self.over]
            return [apply(k, per, None) for k in kinds]
        rows = self.rows()
        vals = self.values(rows) if self.column else []
        return [apply(k, vals, rows) for k in kinds]


def keep(row, flt):
    col, op, want = flt
    if col == "shape" and op in ("=", "!="):
        return ("%sx%sx%s" % (row.get("m"), row.get("n"), row.get("k")) == want) == (op == "=")
    have = row.get(col)
    hv, wv = number(have), number(want)
    if op == "=":
        return have == want or (hv is not None and wv is not None and hv == wv)
    if op == "!=":
        return not keep(row, (col, "=", want))
    if hv is None or wv is None:
        return False
    return {"<": hv < wv, ">": hv > wv, "<=": hv <= wv, ">=": hv >= wv}[op]


def apply(stat, vals, rows):
    if stat == "count":
        return float(len(vals) if vals or rows is None else len(rows))
    if not vals:
        raise Problem("no values for %s" % stat)
    if stat == "median":
        return statistics.median(vals)
    if stat == "min":
        return min(vals)
    if stat == "max":
        return max(vals)
    if stat == "mean":
        return statistics.mean(vals)
    if stat == "geomean":
        if min(vals) <= 0:
            raise Problem("geomean of values that are not all positive")
        return math.exp(sum(math.log(v) for v in vals) / len(vals))
    if stat == "value":
        if max(vals) != min(vals):
            raise Problem("stat=value but the rows differ: %s" % vals)
        return vals[0]
    raise Problem("unknown statistic '%s'" % stat)


# --- figures ----------------------------------------------------------------------

def strip_markup(text):
    return text.replace("**", "").replace("`", "").rstrip()


def figure_at_end(text):
    """(kinds, quoted strings) of the figure that ends text, or None."""
    t = strip_markup(text)
    for pattern, kinds in ((FIG_MRANGE, ("median", "min", "max")), (FIG_RANGE, ("min", "max")),
                           (FIG_ONE, (None,))):
        m = pattern.search(t)
        if m:
            return kinds, list(m.groups()), m.start()
    m = FIG_WORD.search(t)
    if m:
        return ("count",), [str(WORDS[m.group(1).lower()])], m.start()
    return None


def agrees(quoted, value):
    """quoted (text) is value rounded to the digits written (either way at a tie)."""
    q = float(quoted)
    mant = quoted.lower().split("e")[0]
    decimals = len(mant.split(".")[1]) if "." in mant else 0
    exp = int(quoted.lower().split("e")[1]) if "e" in quoted.lower() else 0
    half = 0.5 * 10.0 ** (exp - decimals)
    return abs(q - value) <= half * (1 + 1e-9) + 1e-12


def show(value):
    return ("%.6g" % value) if value is not None else "?"


# --- expressions -------------------------------------------------------------------

def evaluate(expr):
    def stat_fn(stat):
        def f(spec, **kw):
            return Spec(spec, {"stat": stat}).compute([stat])[0]
        return f
    env = {name: stat_fn(name) for name in ("median", "min", "max", "mean", "geomean", "count", "value")}
    env.update(abs=abs, round=round)
    try:
        return float(eval(expr, {"__builtins__": {}}, env))  # the docs' own expressions
    except Problem:
        raise
    except Exception as e:
        raise Problem("expression '%s': %s" % (expr, e))


# --- the checks -------------------------------------------------------------------

class Checker:
    def __init__(self, verbose):
        self.errors, self.checked, self.verbose = [], 0, verbose

    def error(self, where, msg):
        self.errors.append("%s: %s" % (where, msg))

    def ok(self, where, what):
        self.checked += 1
        if self.verbose:
            print("ok  %s: %s" % (where, what))

    def compare(self, where, kinds, quoted, spec=None, values=None):
        if values is None:
            if kinds == (None,):
                kinds = (spec.stat or "median",)
            if spec.stats:
                kinds = tuple(spec.stats.split(","))
            values = spec.compute(list(kinds))
        if len(values) != len(quoted):
            raise Problem("%d figures quoted, %d computed" % (len(quoted), len(values)))
        bad = [(q, v) for q, v in zip(quoted, values) if not agrees(q, v)]
        text = " / ".join(quoted)
        if bad:
            self.error(where, "quotes %s, the CSV gives %s (%s)" % (
                text, " / ".join(show(v) for v in values),
                "; ".join("%s" % k for k in kinds)))
        else:
            self.ok(where, text)

    # 1-3: markers in a Markdown or SVG file
    def check_file(self, path):
        rel = os.path.relpath(path, REPO)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        lines = text.split("\n")
        covered = set()  # (line index, start column) of figures covered
        line_starts = [0]
        for ln in lines:
            line_starts.append(line_starts[-1] + len(ln) + 1)

        def line_of(pos):
            lo, hi = 0, len(line_starts) - 1
            while lo < hi - 1:
                mid = (lo + hi) // 2
                if line_starts[mid] <= pos:
                    lo = mid
                else:
                    hi = mid
            return lo

        # Markers inside code (fenced blocks, inline spans within a paragraph)
        # are examples, not references.
        code = [c.span() for c in re.finditer(r"^```.*?^```", text, re.DOTALL | re.MULTILINE)]
        for c in re.finditer(r"(?<!`)`(?!`)(?:[^`\n]|\n(?!\s*\n))+`", text):
            if not any(a <= c.start() < b for a, b in code):
                code.append(c.span())
        for m in MARKER.finditer(text):
            if any(a <= m.start() < b for a, b in code):
                continue
            kind, body = m.group(1), m.group(2).strip()
            li = line_of(m.start())
            where = "%s:%d" % (rel, li + 1)
            try:
                if kind == "=":
                    before = text[line_starts[li]:m.start()]
                    if before.lstrip().startswith("|"):
                        cell = re.sub(r"<!--.*?-->", "", before).split("|")[-1]
                    else:
                        # The line before joins in, so that a range wrapping
                        # across the line break is read whole; an earlier
                        # marker ends a figure (it is not part of this one).
                        if li > 0 and lines[li - 1].strip() and not lines[li - 1].lstrip().startswith(
                                ("|", "```", "#")):
                            before = lines[li - 1] + " " + before
                        cell = re.sub(r"<!--.*?-->", " ; ", before, flags=re.DOTALL)
                    fig = figure_at_end(cell)
                    if fig is None:
                        raise Problem("no figure right before the reference '%s'" % body)
                    kinds, quoted, _ = fig
                    if body.startswith("expr:"):
                        if len(quoted) != 1:
                            raise Problem("an expression checks one figure")
                        self.compare(where, ("expr",), quoted, values=[evaluate(body[5:].strip())])
                    else:
                        self.compare(where, kinds, quoted, Spec(body))
                    covered.add(li)
                elif kind == "table:":
                    rows = self.table_after(lines, li)
                    self.check_table(where, body, lines, rows)
                    covered.update(rows)
                else:
                    rows = self.table_after(lines, li)
                    self.check_generated(where, body, lines, rows)
                    covered.update(rows)
            except Problem as e:
                self.error(where, str(e))
        if path.endswith(".md"):
            self.check_coverage(rel, lines, covered)
            self.check_paths(rel, path, text)

    @staticmethod
    def table_after(lines, li):
        i = li + 1
        while i < len(lines) and not lines[i].strip():
            i += 1
        rows = []
        while i < len(lines) and lines[i].lstrip().startswith("|"):
            rows.append(i)
            i += 1
        if len(rows) < 3:
            raise Problem("the comment is not followed by a Markdown table")
        return rows

    def check_generated(self, where, body, lines, rows):
        args = body.split()
        if not args or args[0] not in GENERATORS:
            raise Problem("generated: the script must be one of %s" % ", ".join(sorted(GENERATORS)))
        out = subprocess.run([sys.executable, os.path.join(REPO, GENERATORS[args[0]], args[0])] + args[1:],
                             cwd=REPO, capture_output=True, text=True)
        if out.returncode != 0:
            raise Problem("%s failed: %s" % (" ".join(args), out.stderr.strip()))
        want = out.stdout.strip().split("\n")
        have = [lines[i].strip() for i in rows]
        if want == have:
            self.ok(where, "table = %s" % " ".join(args))
            return
        for i, (w, h) in enumerate(zip(want, have)):
            if w != h:
                raise Problem("table row %d differs from `%s`:\n    doc:    %s\n    script: %s"
                              % (i + 1, " ".join(args), h, w))
        raise Problem("the table has %d rows, `%s` prints %d" % (len(have), " ".join(args), len(want)))

    def check_table(self, where, body, lines, rows):
        opts, filters = {}, []
        for w in body.split():
            m = FILTER.match(w)
            if not m:
                raise Problem("table: cannot read '%s'" % w)
            if m.group(1) in ("csv", "csvs", "rows", "kind", "kernel", "cols", "skip", "col") \
                    and m.group(2) == "=":
                opts[m.group(1)] = m.group(3)
            else:
                filters.append(w)
        cells = [split_row(lines[i]) for i in rows]
        header, body_rows = cells[0], cells[2:]
        if opts.get("rows") == "metric":
            return self.check_metric_table(where, opts, filters, rows, header, body_rows)
        profile = opts.get("kind") == "profile" or "profile" in opts.get("csv", "")
        # A header "V1 TFLOP/s" (or "V3" alone, or "cuBLAS 32F TFLOP/s") reads
        # that kernel's column; the row's kernel otherwise.
        col_kernels = [None] * len(header)
        ratios = {}
        for i, h in enumerate(header):
            r = re.match(r"^V(\d+) / V(\d+) \(medians\)$", h.strip())
            if r:  # the ratio of two kernels' median TFLOP/s
                ratios[i] = ("v" + r.group(1), "v" + r.group(2))
                continue
            m = re.match(r"^(V\d+|cuBLAS 32F|cuBLAS 16F)(?:\s+(.*))?$", h.strip())
            if m and i > 0:
                col_kernels[i] = kernel_name(m.group(1))
                header[i] = m.group(2) or opts.get("col", "TFLOP/s")
        if "cols" in opts:
            columns = opts["cols"].split(",")
            if len(columns) != len(header):
                raise Problem("cols= names %d columns, the table has %d" % (len(columns), len(header)))
        else:
            columns = [HEADERS.get(h.lower().strip()) for h in header]
        columns = [None if c in (None, "-") else (PROFILE_MS if c == "ms" and profile else c)
                   for c in columns]
        how = len(header) > 1 and header[1].strip().lower() == "how"
        skip = set(opts.get("skip", "").split(",")) - {""}
        for ri, row in zip(rows[2:], body_rows):
            label = strip_markup(row[0]).strip()
            if label in skip:
                continue
            where_row = "%s (row '%s')" % (where.split(":")[0] + ":%d" % (ri + 1), label)
            if how:  # "| 10 | 3 processes |": the run and how it ran
                label = "%s, %s" % (label, strip_markup(row[1]).strip())
            csvs, kernel, extra = row_source(opts, label)
            for ci, (col, ck, cell) in enumerate(zip(columns[1:], col_kernels[1:], row[1:]), 1):
                if ci in ratios and figure_whole(cell):
                    a, b = (Spec(" ".join([csvs, x, "tflops"] + filters + extra)).compute(["median"])[0]
                            for x in ratios[ci])
                    self.compare(where_row, ("ratio",), figure_whole(cell)[1], values=[a / b])
                    continue
                if col is None:
                    continue
                kernel_here = ck or kernel
                fig = figure_whole(cell)
                if fig is None:
                    continue
                kinds, quoted = fig
                spec = Spec(" ".join([csvs, kernel_here] + ([col] if not col.startswith("#") else [])
                                     + filters + extra))
                if col == "#count":
                    spec.stat = "count"
                    kinds = ("count",)
                elif kinds == (None,):
                    kinds = ("median",)
                try:
                    self.compare(where_row, kinds, quoted, spec)
                except Problem as e:
                    self.error(where_row, str(e))

    def check_metric_table(self, where, opts, filters, rows, header, body_rows):
        """Rows are statistics ("TFLOP/s", "ms", ...), columns are sources:
        csv= for every column, or csvs=A,B (one per column after the first)."""
        sources = opts["csvs"].split(",") if "csvs" in opts else [opts.get("csv")] * (len(header) - 1)
        if len(sources) != len(header) - 1 or None in sources:
            raise Problem("rows=metric needs csv= or one csvs= entry per column")
        for ri, row in zip(rows[2:], body_rows):
            col = HEADERS.get(strip_markup(row[0]).strip().lower())
            if col is None:
                continue
            where_row = "%s (row '%s')" % (where.split(":")[0] + ":%d" % (ri + 1), row[0])
            for src, cell in zip(sources, row[1:]):
                fig = figure_whole(cell)
                if fig is None:
                    continue
                kinds = ("median",) if fig[0] == (None,) else fig[0]
                try:
                    self.compare(where_row, kinds, fig[1],
                                 Spec(" ".join([src, opts.get("kernel", "*"), col] + filters)))
                except Problem as e:
                    self.error(where_row, str(e))

    def check_coverage(self, rel, lines, covered):
        """Every "A [B..C]" is checked by a marker or a table, whether it sits on
        one line or wraps across lines (it is covered by the line it ends on)."""
        fence, kept = False, []
        for ln in lines:
            if ln.lstrip().startswith("```"):
                fence = not fence
                kept.append("")
                continue
            # blank code, markup and markers without moving a line break
            ln = "" if fence else re.sub(r"<!--.*?-->", " ; ", re.sub(r"`[^`]+`", "", ln))
            kept.append(strip_markup(ln))
        text = "\n".join(kept)
        for m in RANGE_ANYWHERE.finditer(text):
            last = text.count("\n", 0, m.end())
            if last in covered:
                continue
            self.error("%s:%d" % (rel, last + 1), "figure '%s' has no reference to its CSV"
                       % " ".join(m.group(0).split()))

    def check_paths(self, rel, path, text):
        here = os.path.dirname(path)
        for phrase, why in FORBIDDEN:
            for m in re.finditer(re.escape(phrase), text, re.IGNORECASE):
                self.error("%s:%d" % (rel, text.count("\n", 0, m.start()) + 1),
                           "'%s': %s" % (phrase, why))
        plain = re.sub(r"<!--.*?-->", "", text, flags=re.DOTALL)
        # links
        for m in re.finditer(r"\]\(([^)\s]+)\)", plain):
            target = m.group(1).split("#")[0]
            if not target or re.match(r"[a-z]+:", target):
                continue
            self.exists(rel, plain, m.start(), os.path.normpath(os.path.join(here, target)), target)
        # CSV names anywhere
        for m in re.finditer(r"(?:bench/results/)?(\d{4}-\d\d-\d\d-[\w{},.-]+?\.csv)", plain):
            for name in expand(m.group(1)):
                self.exists(rel, plain, m.start(), os.path.join(RESULTS, name), name)
        # repository paths in backquotes
        for m in re.finditer(r"`([\w./{},*-]+/[\w./{},*-]*\.(?:md|csv|cu|cuh|c|h|py|sh|svg|png|toml|cmake|txt))`",
                             plain):
            for name in expand(m.group(1)):
                if re.match(r"\d{4}-\d\d-\d\d-", os.path.basename(name)) and "/" not in name:
                    continue
                cands = [os.path.normpath(os.path.join(REPO, name)),
                         os.path.normpath(os.path.join(here, name))]
                if not any(glob.glob(c) for c in cands):
                    self.exists(rel, plain, m.start(), cands[0], name)
        # names of Markdown files
        for m in re.finditer(r"\b([\w-]+\.md)\b", plain):
            if not glob.glob(os.path.join(REPO, "**", m.group(1)), recursive=True):
                self.error("%s:%d" % (rel, plain.count("\n", 0, m.start()) + 1),
                           "names %s, which is not in the repository" % m.group(1))

    def exists(self, rel, text, pos, target, shown):
        line = text.count("\n", 0, pos) + 1
        if not os.path.realpath(target).startswith(REPO + os.sep):
            self.error("%s:%d" % (rel, line), "'%s' is outside the repository" % shown)
        elif not glob.glob(target):
            self.error("%s:%d" % (rel, line), "'%s' does not exist" % shown)

    # 4: the claims file
    def check_claims(self):
        texts, claimed = {}, {}
        if not os.path.exists(CLAIMS):
            return self.check_header_coverage(claimed)
        with open(CLAIMS, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                where = "docs/claims.txt:%d" % n
                parts = [p.strip() for p in line.split("::")]
                if len(parts) != 3:
                    self.error(where, "expected FILE :: TEXT :: SPEC")
                    continue
                target, claim, spec = parts
                path = os.path.join(REPO, target)
                if not os.path.exists(path):
                    self.error(where, "%s does not exist" % target)
                    continue
                if path not in texts:
                    with open(path, encoding="utf-8") as g:
                        texts[path] = normalize(g.read())
                quoted = re.findall(r"\{([^}]*)\}", claim)
                claimed.setdefault(path, []).append(normalize(claim.replace("{", "").replace("}", "")))
                if normalize(claim.replace("{", "").replace("}", "")) not in texts[path]:
                    self.error(where, "'%s' is not in %s" % (claim.replace("{", "").replace("}", ""),
                                                             target))
                    continue
                try:
                    s = Spec(spec)
                    kinds = tuple(s.stats.split(",")) if s.stats else (s.stat or "median",)
                    self.compare("%s (%s)" % (where, target), kinds, quoted, s)
                except Problem as e:
                    self.error(where, str(e))
        self.check_header_coverage(claimed)

    def check_header_coverage(self, claimed):
        """Every "A [B..C]" in a kernel header is inside some claim of its file."""
        for path in sorted(glob.glob(os.path.join(REPO, "src", "kernels", "v*.cu"))):
            with open(path, encoding="utf-8") as f:
                text = f.read()
            head = normalize(text[:text.find("*/") + 2] if text.lstrip().startswith("/*") else "")
            for m in RANGE_ANYWHERE.finditer(head):
                if not any(m.group(0) in c for c in claimed.get(path, [])):
                    self.error(os.path.relpath(path, REPO), "figure '%s' in the header has no claim "
                               "in docs/claims.txt" % m.group(0))


def normalize(text):
    text = re.sub(r"\n\s*\*(?!/)", " ", text)  # comment continuation stars
    return re.sub(r"\s+", " ", text)


def split_row(line):
    cells = line.strip().strip("|").split("|")
    return [re.sub(r"<!--.*?-->", "", c).strip() for c in cells]


def figure_whole(cell):
    t = strip_markup(cell).strip()
    if not t or t == "-":
        return None
    for pattern, kinds in ((FIG_MRANGE, ("median", "min", "max")), (FIG_RANGE, ("min", "max")),
                           (FIG_ONE, (None,))):
        m = pattern.fullmatch(t)
        if m:
            return kinds, list(m.groups())
    return None


def row_source(opts, label):
    """(CSV names, kernel) for one row of a checked table."""
    rows = opts.get("rows", "kernel")
    kind = opts.get("kind", "bench")
    if rows == "run":
        m = re.fullmatch(r"(\d+)(?:,\s*(one process|processes|\d+ processes|\d+ fresh processes))?",
                         label)
        if not m:
            raise Problem("row '%s': expected a run number" % label)
        which = "processes" if m.group(2) and "processes" in m.group(2) else kind
        return "run%s-%s" % (m.group(1), which), opts.get("kernel", "*"), []
    if rows == "kernel-run":
        m = re.fullmatch(r"(\S+) \((\d+)\)", label) or re.fullmatch(r"(\S+), run (\d+)", label)
        if not m:
            raise Problem("row '%s': expected 'kernel (run)' or 'kernel, run N'" % label)
        return "run%s-%s" % (m.group(2), kind), kernel_name(m.group(1)), []
    if rows == "shape":  # "8192 x 8192 x 1024"
        m = re.fullmatch(r"(\d+)\s*x\s*(\d+)\s*x\s*(\d+)", label)
        if not m or "csv" not in opts:
            raise Problem("row '%s': expected M x N x K (and csv=)" % label)
        return opts["csv"], opts.get("kernel", "*"), ["shape=%sx%sx%s" % m.groups()]
    if "csv" not in opts:
        raise Problem("table: csv= is needed when rows are kernels")
    return opts["csv"], kernel_name(label), []


def kernel_name(label):
    low = label.lower().replace(" ", "").replace("compute_", "")
    if low in ("cublas32f", "cublas32"):
        return "cublas32"
    if low in ("cublas16f", "cublas16"):
        return "cublas16"
    return label.lower()


def doc_files():
    files = [os.path.join(REPO, "README.md")]
    for pattern in ("docs/tutorial/*.md", "docs/notes/*.md", "docs/*.md", "docs/figures/*.svg"):
        files.extend(sorted(glob.glob(os.path.join(REPO, pattern))))
    return files


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--list", action="store_true", help="print every figure checked")
    ap.add_argument("files", nargs="*", help="check only these docs (default: all)")
    args = ap.parse_args()
    c = Checker(args.list)
    for path in (args.files or doc_files()):
        c.check_file(os.path.abspath(path))
    if not args.files:
        c.check_claims()
    for e in c.errors:
        print(e)
    print("check_docs: %d figures and tables agree with bench/results; %d problems"
          % (c.checked, len(c.errors)))
    return 1 if c.errors else 0


if __name__ == "__main__":
    sys.exit(main())
