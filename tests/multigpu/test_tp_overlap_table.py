"""tools/tp_overlap_table.py: the overlap model and the table, on a CSV
written here (synthetic numbers chosen so the results are easy to check by
hand; nothing here was measured)."""
import io
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import tp_overlap_table as t  # noqa: E402

HEADER = ("kernel,mode,op,m,n,k,gpus,chunks,run,ms,ms_min,ms_max,coll_gemm_ratio,vs_gemm,vs_naive,"
          "tflops,algbw_gbps,max_abs_diff")


def row(kernel, mode, op, chunks, run, ms):
    return "%s,%s,%s,64,64,64,2,%d,%d,%g,%g,%g,,,,,,-1" % (kernel, mode, op, chunks, run, ms, ms, ms)


class Model(unittest.TestCase):
    def test_allgather_gemm(self):
        # Compute-bound: the own half (1.0) hides the first chunk (0.125).
        self.assertAlmostEqual(t.model_allgather_gemm(2.0, 0.5, 2, 4), 2.0)
        # Communication-bound: the last chunk arrives at X = 3 and takes 2 (2-1)/(2 4) = 0.25.
        self.assertAlmostEqual(t.model_allgather_gemm(2.0, 3.0, 2, 4), 3.25)
        # One chunk: the others' rows wait for the whole collective.
        self.assertAlmostEqual(t.model_allgather_gemm(2.0, 1.5, 2, 1), 2.5)
        # One GPU: nothing to wait for.
        self.assertAlmostEqual(t.model_allgather_gemm(2.0, 0.0, 1, 1), 2.0)

    def test_gemm_reducescatter(self):
        self.assertAlmostEqual(t.model_gemm_reducescatter(2.0, 0.5, 4), 2.125)
        self.assertAlmostEqual(t.model_gemm_reducescatter(2.0, 3.0, 4), 3.5)
        self.assertAlmostEqual(t.model_gemm_reducescatter(2.0, 0.5, 1), 2.5)


class Table(unittest.TestCase):
    def test_table(self):
        lines = ["# tool: hgemm-nccl-bench", "# gpu: fixture", "# git_commit: none", HEADER]
        for run, scale in ((1, 1.0), (2, 1.1)):
            lines += [row("nccl", "collective", "ag", 1, run, 0.5 * scale),
                      row("nccl", "collective-chunked", "ag", 4, run, 0.5 * scale),
                      row("v5", "gemm", "ag", 1, run, 2.0 * scale),
                      row("v5", "naive", "ag", 1, run, 2.5 * scale),
                      row("v5", "gemm-chunked", "ag", 4, run, 2.0 * scale),
                      row("v5", "overlap", "ag", 4, run, 2.2 * scale),
                      row("v5", "overlap-local", "ag", 4, run, 2.1 * scale)]
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "fixture.csv")
            with open(path, "w") as f:
                f.write("\n".join(lines) + "\n")
            out = io.StringIO()
            with redirect_stdout(out):
                self.assertEqual(t.main([path]), 0)
        text = out.getvalue()
        body = [l for l in text.splitlines() if l.startswith("| ag ")]
        self.assertEqual(len(body), 1)
        cells = [c.strip() for c in body[0].strip("|").split("|")]
        self.assertEqual(cells[:3], ["ag", "v5", "4"])
        self.assertEqual(cells[3], "2.100 (2.000-2.200)")      # GEMM ms, median of the two runs
        self.assertEqual(cells[5], "0.25 (0.25-0.25)")                    # coll/GEMM, the same in both runs
        self.assertEqual(cells[8], "1.100 (1.100-1.100)")                   # xGEMM: 2.2/2.0 and 2.42/2.2
        self.assertEqual(cells[10], "2.100 (2.000-2.200)")     # model: compute-bound, = gemm-chunked
        self.assertEqual(cells[11], "0.909 (0.909-0.909)")                  # model / overlap = 2.0 / 2.2

        # --table-only: the same table and nothing else (what a doc quotes).
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "fixture.csv")
            with open(path, "w") as f:
                f.write("\n".join(lines) + "\n")
            only = io.StringIO()
            with redirect_stdout(only):
                self.assertEqual(t.main([path, "--table-only"]), 0)
        table = [l for l in text.splitlines() if l.startswith("|")]
        self.assertEqual(only.getvalue().splitlines(), table)


if __name__ == "__main__":
    unittest.main()
