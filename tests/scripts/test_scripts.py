"""CPU tests of the scripts that read measurement files: the Nsight Compute
parser (against a fixture recorded on an H200 by scripts/profile.sh) and the
CSV summary used for --repeat and fresh-process runs."""
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))

import bench_summary  # noqa: E402
import ncu_table  # noqa: E402

FIXTURE = os.path.join(HERE, "fixtures", "ncu-raw-h200.csv")


class NcuTable(unittest.TestCase):
    def setUp(self):
        with open(FIXTURE) as f:
            self.rows = {r["kernel"]: r for r in ncu_table.parse(f.read())}

    def test_one_row_per_profiled_kernel(self):
        self.assertEqual(sorted(self.rows), ["cublas16", "cublas32", "v0", "v6"])

    def test_units_are_normalized(self):
        v6 = self.rows["v6"]
        # the fixture says 1,377,... ns, 1,644,9..,... hz, 232,448 byte/block
        self.assertAlmostEqual(v6["duration_ms"], 1.377, places=3)
        self.assertAlmostEqual(v6["sm_clock_mhz"], 1644.9, places=1)
        self.assertAlmostEqual(v6["smem_kib"], 227.0, places=1)
        self.assertEqual(v6["registers"], 96)

    def test_exact_metric_not_its_min_max_sum_siblings(self):
        v0 = self.rows["v0"]
        self.assertAlmostEqual(v0["tensor_pipe_pct"], 59.29, places=2)   # .sum would be the same, .max 61.14
        self.assertAlmostEqual(v0["occupancy_pct"], 24.55, places=2)
        self.assertEqual(v0["registers"], 102)                          # not 102 + 104 allocated
        self.assertAlmostEqual(v0["smem_kib"], 35.0, places=2)          # not summed with _dynamic/_driver

    def test_kernel_names_are_the_profiled_ones(self):
        self.assertTrue(self.rows["v6"]["ncu_kernel_name"].startswith("v6_kernel"))
        self.assertTrue(self.rows["v0"]["ncu_kernel_name"].startswith("v0_kernel"))
        self.assertNotIn("fill", self.rows["cublas32"]["ncu_kernel_name"])

    def test_unknown_unit_is_an_error(self):
        with open(FIXTURE) as f:
            text = f.read().replace('"ns"', '"furlong"')
        with self.assertRaises(ncu_table.ParseError):
            ncu_table.parse(text)

    def test_byte_totals_in_gb(self):
        text = ('# kernel: v3\n"Kernel Name","dram__bytes_read.sum","lts__t_bytes.sum"\n'
                '"","Gbyte","Mbyte"\n"v3_kernel","12.50","25,000.00"\n')
        row = ncu_table.parse(text)[0]
        self.assertAlmostEqual(row["dram_read_gb"], 12.5)
        self.assertAlmostEqual(row["l2_gb"], 25.0)
        self.assertIsNone(self.rows["v6"]["dram_read_gb"])  # the old fixture lacks the metric

    def test_empty_input_is_an_error(self):
        with self.assertRaises(ncu_table.ParseError):
            ncu_table.parse("==PROF== nothing\n")


class BenchSummary(unittest.TestCase):
    CSV = """# gpu: test
kernel,m,n,k,run,ms,tflops,vs_cublas32,vs_cublas16,max_abs_err
v6,64,64,64,1,1.0,10,1.10,1.05,0.01
v6,64,64,64,2,3.0,30,1.30,1.00,0.01
v6,64,64,64,3,2.0,20,1.20,0.95,0.01
v5,64,64,64,1,nan,nan,nan,nan,nan
"""

    def test_median_and_range(self):
        with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
            f.write(self.CSV)
        try:
            table = {key[0]: (count, stats) for key, count, stats in
                     bench_summary.summarize(bench_summary.read([f.name]))}
        finally:
            os.unlink(f.name)
        count, stats = table["v6"]
        self.assertEqual(count, 3)
        self.assertEqual(stats["ms"], (2.0, 1.0, 3.0))
        self.assertEqual(stats["vs_cublas16"], (1.0, 0.95, 1.05))
        self.assertEqual(table["v5"][1], {})  # a failed check carries no timing


if __name__ == "__main__":
    unittest.main()
