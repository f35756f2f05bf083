"""CPU tests of the scripts that read measurement files: the Nsight Compute
parser (against a fixture recorded on an H200 by scripts/profile.sh) and the
CSV summary used for --repeat and fresh-process runs; and how python/'s
measurement scripts start where they cannot measure."""
import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))

import bench_summary  # noqa: E402
import ncu_table  # noqa: E402
import sm_groups  # noqa: E402
import unit_clocks  # noqa: E402

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

    def test_instruction_and_wavefront_counts_in_millions(self):
        # ncu gives instructions the unit "inst" and wavefronts none (run 153's raw CSV)
        text = ('# kernel: auto\n"Kernel Name","smsp__inst_executed.sum",'
                '"l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"\n'
                '"","inst",""\n"v8_kernel","272,664,174","202,728,529"\n')
        row = ncu_table.parse(text)[0]
        self.assertAlmostEqual(row["inst_m"], 272.664174, places=6)
        self.assertAlmostEqual(row["smem_lsu_wavefronts_m"], 202.728529, places=6)

    def test_byte_totals_in_gb(self):
        text = ('# kernel: v3\n"Kernel Name","dram__bytes_read.sum","lts__t_bytes.sum"\n'
                '"","Gbyte","Mbyte"\n"v3_kernel","12.50","25,000.00"\n')
        row = ncu_table.parse(text)[0]
        self.assertAlmostEqual(row["dram_read_gb"], 12.5)
        self.assertAlmostEqual(row["l2_gb"], 25.0)
        self.assertIsNone(self.rows["v6"]["dram_read_gb"])  # the old fixture lacks the metric

    def test_l2_sources_in_gb(self):
        text = ('# kernel: v8\n"Kernel Name","lts__t_sectors_srcunit_tex.sum","lts__t_sectors_srcunit_ltcfabric.sum"\n'
                '"","sector","Msector"\n"v8_kernel","250,000,000","50.00"\n')
        row = ncu_table.parse(text)[0]
        self.assertAlmostEqual(row["l2_tex_gb"], 8.0)
        self.assertAlmostEqual(row["l2_fabric_gb"], 1.6)
        self.assertIsNone(self.rows["v6"]["l2_tex_gb"])  # without L2_DETAIL: no source split

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

    # hgemm-bench's later columns: gbps and rotate_sets after window_max_temp_c.
    CSV_GBPS = """# rotated: 1x4096x4096 sets=4 set_bytes=33570816
kernel,m,n,k,run,ms,tflops,vs_cublas32,vs_cublas16,max_abs_err,window_max_temp_c,gbps,rotate_sets
v9,1,4096,4096,1,0.0100,3.4,1.1,1.0,0.01,40,3357.082,4
v9,1,4096,4096,2,0.0080,4.2,1.2,1.1,0.01,40,4196.352,4
v9,1,4096,4096,3,0.0090,3.7,1.1,1.0,0.01,41,3730.091,4
cublas32,1,4096,4096,1,0.0110,3.0,1.0,0.9,0.01,40,3051.892,1
v9,4096,4096,4096,1,0.2000,687.2,1.0,1.0,0.01,40,503.316,1
v8,1,4096,4096,1,nan,nan,nan,nan,nan,-1,nan,4
"""

    def summary_of(self, text, *args):
        with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
            f.write(text)
        try:
            table = {(key[0], key[1]): stats for key, _, stats in
                     bench_summary.summarize(bench_summary.read([f.name]))}
            out = subprocess.run([sys.executable, os.path.join(SCRIPTS, "bench_summary.py"), f.name]
                                 + list(args), capture_output=True, text=True)
        finally:
            os.unlink(f.name)
        self.assertEqual(out.returncode, 0, out.stderr)
        return table, out.stdout

    def test_gbps_and_hbm_share_of_memory_bound_rows(self):
        table, text = self.summary_of(self.CSV_GBPS, "--markdown")
        v9 = table[("v9", 1)]
        self.assertEqual(v9["gbps"], (3730.091, 3357.082, 4196.352))
        med, lo, hi = v9["hbm_pct"]
        self.assertAlmostEqual(med, 100 * 3730.091 / 4800)
        self.assertAlmostEqual(hi, 100 * 4196.352 / 4800)
        self.assertNotIn("not_rotated", v9)
        # a row with rotate_sets 1 is flagged; a large shape gets no GB/s
        self.assertEqual(table[("cublas32", 1)]["not_rotated"], 1)
        self.assertNotIn("gbps", table[("v9", 4096)])
        self.assertNotIn("gbps", table[("v8", 1)])  # a failed check carries no timing
        lines = text.splitlines()
        self.assertEqual(lines[0], "| kernel | shape | samples | ms | TFLOP/s | x cuBLAS 32F | "
                                   "x cuBLAS 16F | GB/s | % HBM |")
        self.assertIn("| v9 | 1x4096x4096 | 3 | 0.0090 [0.0080..0.0100] | 3.7 [3.4..4.2] | "
                      "1.100 [1.100..1.200] | 1.000 [1.000..1.100] | 3730.1 [3357.1..4196.4] | "
                      "77.7 [69.9..87.4] |", lines)
        self.assertIn("| cublas32 | 1x4096x4096 | 1 | 0.0110 [0.0110..0.0110] | 3.0 [3.0..3.0] | "
                      "1.000 [1.000..1.000] | 0.900 [0.900..0.900] | "
                      "3051.9 [3051.9..3051.9] (not rotated in 1) | 63.6 [63.6..63.6] |", lines)
        self.assertIn("| v9 | 4096x4096x4096 | 1 | 0.2000 [0.2000..0.2000] | 687.2 [687.2..687.2] | "
                      "1.000 [1.000..1.000] | 1.000 [1.000..1.000] | - | - |", lines)

    def test_hbm_share_of_the_files_own_peak(self):
        # an H100's CSV names its peak; the share is of that, not the H200's
        table, text = self.summary_of("# hbm_peak_gbps: 3350 (H100 SXM datasheet, 3.35 TB/s)\n"
                                      + self.CSV_GBPS, "--markdown")
        med, lo, hi = table[("v9", 1)]["hbm_pct"]
        self.assertAlmostEqual(med, 100 * 3730.091 / 3350)
        self.assertAlmostEqual(lo, 100 * 3357.082 / 3350)
        self.assertAlmostEqual(hi, 100 * 4196.352 / 3350)
        self.assertIn("| 3730.1 [3357.1..4196.4] | 111.3 [100.2..125.3] |",
                      [ln for ln in text.splitlines() if ln.startswith("| v9 | 1x4096x4096 |")][0])
        # two files, two GPUs: each row is judged against its own file's peak
        paths = []
        try:
            for head, gbps in (("# hbm_peak_gbps: 4800 (H200 datasheet, 4.8 TB/s)\n", 2400.0),
                               ("# hbm_peak_gbps: 2000 (H100 PCIe product brief, 2 TB/s)\n", 1500.0)):
                with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
                    f.write(head + "kernel,m,n,k,run,ms,tflops,vs_cublas32,vs_cublas16,max_abs_err,gbps,rotate_sets\n"
                            f"v9,1,4096,4096,1,0.01,3,1.0,1.0,0.01,{gbps},4\n")
                    paths.append(f.name)
            table = {key[0]: stats for key, _, stats in bench_summary.summarize(bench_summary.read(paths))}
        finally:
            for path in paths:
                os.unlink(path)
        self.assertEqual(table["v9"]["hbm_pct"], (62.5, 50.0, 75.0))

    CSV_BAR = """# l2_bytes: 62914560
kernel,m,n,k,run,ms,tflops,vs_cublas32,vs_cublas16,max_abs_err,gbps,rotate_sets
cublas32,1,4096,14336,1,0.03,1,1.0,1.0,0.01,3900,2
auto,1,4096,14336,1,0.03,1,1.05,1.0,0.01,3600,2
auto,1,4096,14336,2,0.03,1,0.95,1.0,0.01,3400,2
auto,1,4096,4096,1,0.01,1,1.20,1.0,0.01,2000,4
auto,512,512,512,1,0.01,1,0.80,1.0,0.01,,1
auto,512,512,512,2,0.01,1,0.90,1.0,0.01,,1
auto,1024,1024,1024,1,0.01,1,1.00,1.0,0.01,,1
auto,2048,2048,2048,1,nan,nan,nan,nan,nan,,1
"""

    # The window's telemetry, the last two columns since the memory clock and
    # NVML's clock-event reasons were added.
    CSV_EVENTS = """kernel,m,n,k,run,ms,tflops,vs_cublas32,vs_cublas16,max_abs_err,batch,window_mem_clock_mhz,window_clock_events
v8,8192,8192,8192,1,1.50,733,1.0,1.0,0.01,1,2619,0x4
v8,8192,8192,8192,2,1.43,769,1.05,1.0,0.01,1,2619,0x0
v8,8192,8192,8192,3,1.52,723,0.97,1.0,0.01,1,2619,0x84
cublas32,8192,8192,8192,1,1.50,733,1.0,1.0,0.01,1,2619,0x1
cublas32,8192,8192,8192,2,1.50,733,1.0,1.0,0.01,1,-1,-1
v5,8192,8192,8192,1,1.90,580,0.8,0.8,0.01,1,-1,-1
"""

    def test_clock_events_per_group(self):
        table, text = self.summary_of(self.CSV_EVENTS, "--markdown")
        self.assertEqual(table[("v8", 8192)]["clock_events"], [0x4, 0x0, 0x84])
        self.assertEqual(table[("cublas32", 8192)]["clock_events"], [0x1])  # -1 is no sample
        self.assertNotIn("clock_events", table[("v5", 8192)])
        lines = text.splitlines()
        self.assertTrue(lines[0].endswith("| x cuBLAS 16F | clock events |"), lines[0])
        v8 = [ln for ln in lines if ln.startswith("| v8 |")]
        self.assertEqual(len(v8), 1)
        self.assertTrue(v8[0].endswith("| power cap in 2 of 3, power brake in 1 of 3 |"), v8[0])
        cublas = [ln for ln in lines if ln.startswith("| cublas32 |")][0]
        self.assertTrue(cublas.endswith("| none |"), cublas)  # idle is not a reason
        v5 = [ln for ln in lines if ln.startswith("| v5 |")][0]
        self.assertTrue(v5.endswith("| - |"), v5)

    def test_no_clock_events_column_without_the_telemetry(self):
        _, text = self.summary_of(self.CSV)
        self.assertNotIn("clock events", text)

    def test_bar_verdict(self):
        # per-shape medians 1.00 (1x4096x14336), 1.20, 0.85, 1.00; a failed
        # shape has no ratio; the HBM line counts only the weight past the L2
        # (4096 x 14336 x 2 bytes; 4096 x 4096 x 2 fits its 60 MiB)
        _, text = self.summary_of(self.CSV_BAR, "--bar", "auto")
        lines = text.splitlines()
        self.assertEqual(lines[0].split(), ["shapes", "4"])
        geomean = (1.0 * 1.2 * 0.85 * 1.0) ** 0.25
        self.assertEqual(lines[1].split()[-1], f"{geomean:.3f}")
        self.assertTrue(lines[2].endswith("1: 512x512x512 0.850"), lines[2])
        self.assertIn("(1 shapes)", lines[3])
        self.assertTrue(lines[3].endswith(f"{100 * 3500 / 4800:.1f} (1x4096x14336)"), lines[3])
        _, text = self.summary_of(self.CSV_BAR, "--bar", "auto", "--threshold", "0.8", "--markdown")
        self.assertIn("| below 0.80x | 0 |", text.splitlines())

    def test_old_csv_prints_no_bandwidth_columns(self):
        # the fixture's 64x64x64 rows are memory-bound but have no gbps column
        _, text = self.summary_of(self.CSV)
        self.assertNotIn("GB/s", text)
        self.assertNotIn("HBM", text)
        self.assertTrue(text.splitlines()[0].split() == ["kernel", "shape", "samples", "ms",
                                                         "TFLOP/s", "x", "cuBLAS", "32F", "x",
                                                         "cuBLAS", "16F"])

    # hgemm-bench's form columns (dtype, layout, batch) come last; a CSV
    # without them reads as f16, nt, 1. cublas16 has no bf16 row and the
    # bf16 rows' vs_cublas16 is empty.
    CSV_FORMS = """# forms: dtype f16,bf16; layout nt,nn; batch 1
kernel,m,n,k,run,ms,tflops,vs_cublas32,vs_cublas16,max_abs_err,gbps,rotate_sets,dtype,layout,batch
cublas32,8192,8192,8192,1,1.50,733.0,1.00,0.97,0.01,nan,1,f16,nt,1
cublas16,8192,8192,8192,1,1.45,758.0,1.03,1.00,0.03,nan,1,f16,nt,1
auto,8192,8192,8192,1,1.40,785.0,1.07,1.03,0.01,nan,1,f16,nt,1
auto,8192,8192,8192,1,1.42,774.0,1.06,1.02,0.01,nan,1,f16,nn,1
cublas32,8192,8192,8192,1,1.60,687.0,1.00,nan,0.01,nan,1,bf16,nn,1
auto,8192,8192,8192,1,1.50,733.0,1.066,,0.01,nan,1,bf16,nn,1
auto,8192,8192,8192,2,1.40,785.0,1.143,,0.01,nan,1,bf16,nn,1
"""

    def test_forms_are_groups_of_their_own(self):
        _, text = self.summary_of(self.CSV_FORMS, "--markdown")
        lines = self.CSV_FORMS.splitlines()
        rows = [dict(zip(lines[1].split(","), ln.split(","))) for ln in lines[2:]]
        full = {key: stats for key, _, stats in bench_summary.summarize(rows)}
        self.assertEqual(len(full), 6)  # one group per (kernel, shape, dtype, layout, batch)
        auto_bf16 = full[("auto", 8192, 8192, 8192, "bf16", "nn", 1)]
        self.assertEqual(auto_bf16["ms"], (1.45, 1.40, 1.50))
        self.assertNotIn("vs_cublas16", auto_bf16)  # empty and nan alike: no value
        lines = text.splitlines()
        self.assertEqual(lines[0], "| kernel | shape | dtype | layout | samples | ms | TFLOP/s | "
                                   "x cuBLAS 32F | x cuBLAS 16F |")  # batch is 1 everywhere
        # f16 before bf16, nt before nn, then the kernels in their usual order
        self.assertEqual([ln.split(" | ")[0][2:] + " " + ln.split(" | ")[2] + " " + ln.split(" | ")[3]
                          for ln in lines[2:]],
                         ["cublas32 f16 nt", "cublas16 f16 nt", "auto f16 nt", "auto f16 nn",
                          "cublas32 bf16 nn", "auto bf16 nn"])
        self.assertIn("| auto | 8192x8192x8192 | bf16 | nn | 2 | 1.4500 [1.4000..1.5000] | "
                      "759.0 [733.0..785.0] | 1.105 [1.066..1.143] | - |", lines)

    def test_batch_column_only_where_a_batch_is_not_1(self):
        text = self.CSV_FORMS.replace(",f16,nt,1\n", ",f16,nt,64\n").replace(",bf16,nn,1\n", ",f16,nt,1\n")
        text = text.replace(",f16,nn,1\n", ",f16,nt,1\n")
        _, out = self.summary_of(text)
        head = out.splitlines()[0].split()
        self.assertEqual(head[:4], ["kernel", "shape", "batch", "samples"])
        self.assertNotIn("dtype", head)
        self.assertNotIn("layout", head)

    def test_old_csv_reads_as_f16_nt_batch_1(self):
        rows = bench_summary.read([RUN10])
        keys = [key for key, _, _ in bench_summary.summarize(rows)]
        self.assertTrue(keys and all(key[4:] == ("f16", "nt", 1) for key in keys))


REPO = os.path.join(HERE, "..", "..")
SCRIPTS = os.path.join(REPO, "scripts")
RUN10 = os.path.join(REPO, "bench", "results", "2026-11-29-h200-run10-bench.csv")


class CheckDocs(unittest.TestCase):
    """scripts/check_docs.py catches each kind of drift between a doc and its CSV."""

    def problems(self, text, suffix=".md"):
        import check_docs
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "doc" + suffix)
            with open(path, "w") as f:
                f.write(text)
            c = check_docs.Checker(False)
            c.check_file(path)
            return c.errors, c.checked

    def assertCaught(self, text, what):
        errors, _ = self.problems(text)
        self.assertTrue(any(what in e for e in errors), "expected '%s' in %s" % (what, errors))

    def assertClean(self, text, checked=1):
        errors, n = self.problems(text)
        self.assertEqual(errors, [])
        self.assertGreaterEqual(n, checked)

    def test_the_repository_docs_agree(self):
        out = subprocess.run([sys.executable, os.path.join(SCRIPTS, "check_docs.py")],
                             capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)

    def test_a_register_count_that_is_not_the_profile(self):
        self.assertCaught("V6 keeps 92<!-- = run10-profile v6 registers --> registers.",
                          "quotes 92, the CSV gives 90")
        self.assertClean("V6 keeps 90<!-- = run10-profile v6 registers --> registers.")

    def test_a_count_written_as_a_word(self):
        spec = "run10-bench * window_sm_clock_mhz stat=count window_sm_clock_mhz<1980"
        self.assertCaught("all but three<!-- = %s --> windows" % spec, "quotes 3, the CSV gives 4")
        self.assertClean("all but four<!-- = %s --> windows" % spec)

    def test_a_median_and_range(self):
        self.assertClean("V6 816.5 TFLOP/s [798.5..816.5]<!-- = run10-bench v6 tflops -->", 1)
        self.assertCaught("V6 816.6 [798.5..816.5]<!-- = run10-bench v6 tflops -->",
                          "quotes 816.6 / 798.5 / 816.5")

    def test_an_expression(self):
        expr = ('max("run{7,8,10}-profile v6 tensor_pipe_pct") - '
                'min("run{7,8,10}-profile v6 tensor_pipe_pct")')
        self.assertCaught("within 2.5<!-- = expr: %s --> points" % expr, "quotes 2.5")
        self.assertClean("within 2.65<!-- = expr: %s --> points" % expr)

    def test_a_checked_table(self):
        table = ("<!-- table: csv=run10-bench -->\n| kernel | TFLOP/s | x cuBLAS 32F |\n|---|---|---|\n"
                 "| v6 | 816.5 [798.5..816.5] | 1.102 [1.094..1.114] |\n")
        self.assertClean(table, 2)
        self.assertCaught(table.replace("1.102 [", "1.112 ["), "quotes 1.112")

    def test_a_generated_table(self):
        out = subprocess.run([sys.executable, os.path.join(SCRIPTS, "bench_summary.py"), RUN10,
                              "--markdown"], capture_output=True, text=True).stdout
        doc = ("<!-- generated: bench_summary.py bench/results/2026-11-29-h200-run10-bench.csv "
               "--markdown -->\n%s" % out)
        self.assertClean(doc)
        self.assertCaught(doc.replace("816.5", "826.5", 1), "differs from")

    def test_a_generated_table_from_tools(self):
        csv_name = "bench/results/2026-11-30-h200-run17-nccl.csv"
        out = subprocess.run([sys.executable, os.path.join(REPO, "tools", "tp_overlap_table.py"),
                              os.path.join(REPO, csv_name), "--table-only"],
                             capture_output=True, text=True).stdout
        doc = "<!-- generated: tp_overlap_table.py %s --table-only -->\n%s" % (csv_name, out)
        self.assertClean(doc)
        self.assertCaught(doc.replace("| 2.228 (", "| 2.128 (", 1), "differs from")

    def test_a_range_per_column_value(self):
        # The median per chunk count (2.228, 2.220, 2.137), then their range;
        # every call's range would be 2.051..2.301.
        spec = "run17-nccl auto ms mode=overlap op=ag"
        self.assertClean("2.137..2.228 ms<!-- = %s per=chunks -->" % spec)
        self.assertCaught("2.051..2.301 ms<!-- = %s per=chunks -->" % spec, "quotes 2.051 / 2.301")
        self.assertClean("2.051..2.301 ms<!-- = %s -->" % spec)
        self.assertCaught("2.1..2.2 ms<!-- = %s per=nosuchcolumn -->" % spec, "not a column")

    def test_a_range_without_a_reference(self):
        self.assertCaught("V6 ran at 816.5 [798.5..816.5] TFLOP/s.", "has no reference")

    def test_a_range_that_wraps_across_lines(self):
        # Without a reference: caught wherever the line breaks.
        self.assertCaught("V6 ran at 816.5\n[798.5..816.5] TFLOP/s.", "has no reference")
        self.assertCaught("V6 ran at 816.5 [798.5..\n816.5] TFLOP/s.", "has no reference")
        # With one, read whole: a wrong minimum on the line before is caught ...
        self.assertCaught("V6 ran at 816.5\n[797.5..816.5]<!-- = run10-bench v6 tflops --> TFLOP/s.",
                          "quotes 816.5 / 797.5 / 816.5")
        self.assertCaught("medians from 798.5 to\n816.6<!-- = run10-bench v6 tflops --> TFLOP/s",
                          "quotes 798.5 / 816.6")
        # ... and the right one passes.
        self.assertClean("V6 ran at 816.5\n[798.5..816.5]<!-- = run10-bench v6 tflops --> TFLOP/s.")
        self.assertClean("medians from 798.5 to\n816.5<!-- = run10-bench v6 tflops --> TFLOP/s")
        # A marker on the line before ends that figure: it does not join this one.
        self.assertClean("V5 0.954x<!-- = run10-bench v5 vs_cublas32 --> to\n"
                         "1.102x<!-- = run10-bench v6 vs_cublas32 --> for V6", 2)

    def test_a_geomean_over_shapes(self):
        spec = "run12-sweep v7 vs_cublas32"
        import check_docs
        med = {}
        for r in check_docs.Spec(spec).rows():
            med.setdefault((r["m"], r["n"], r["k"]), []).append(float(r["vs_cublas32"]))
        import math
        import statistics
        vals = [statistics.median(v) for v in med.values()]
        gm = math.exp(sum(map(math.log, vals)) / len(vals))
        self.assertClean("%.3fx<!-- = %s per=shape over=geomean -->" % (gm, spec))
        self.assertCaught("%.3fx<!-- = %s per=shape over=geomean -->" % (gm + 0.01, spec), "quotes")
        self.assertClean("%.3fx<!-- = %s per=shape -->" % (statistics.median(vals), spec))

    def test_paths(self):
        self.assertCaught("see `bench/results/2026-11-29-h200-all.csv`", "does not exist")
        self.assertCaught("as `../shared/reference` measures", "outside the repository")
        self.assertCaught("the design (DESIGN.md) says", "not in the repository")
        self.assertCaught("[log](../../nowhere.md)", "nowhere.md")
        self.assertCaught("and the device time was spent", "device time")

    def test_kernel_header_claims(self):
        import check_docs
        c = check_docs.Checker(False)
        c.check_claims()
        self.assertEqual(c.errors, [])
        self.assertGreater(c.checked, 20)


class PlottingWithoutMatplotlib(unittest.TestCase):
    """The plot scripts say what to install instead of a traceback."""

    def run_script(self, *args):
        env = dict(os.environ, PYTHONPATH=os.path.join(HERE, "fixtures", "no_matplotlib"))
        return subprocess.run([sys.executable] + list(args), capture_output=True, text=True, env=env)

    def test_plot_and_plot_accuracy(self):
        with tempfile.TemporaryDirectory() as tmp:
            for script in ("plot.py", "plot_accuracy.py"):
                out = self.run_script(os.path.join(SCRIPTS, script), RUN10, "-o",
                                      os.path.join(tmp, "x.png"))
                self.assertEqual(out.returncode, 2, out.stderr)
                self.assertIn("needs matplotlib", out.stderr)
                self.assertIn("pip install", out.stderr)
                self.assertNotIn("Traceback", out.stderr)
                self.assertFalse(os.path.exists(os.path.join(tmp, "x.png")))

    def test_accuracy_table_needs_no_matplotlib(self):
        out = self.run_script(os.path.join(SCRIPTS, "plot_accuracy.py"), RUN10, "--markdown", "--long")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("| v6 | fp16 | 8192x8192x8192 | 2.330e-03 | 1.117e-02 | 4.681e-02 |", out.stdout)



NVCC = next((p for p in ("nvcc", "/usr/local/cuda/bin/nvcc") if shutil.which(p)), None)


@unittest.skipUnless(NVCC, "no nvcc")
class SassOne(unittest.TestCase):
    """scripts/sass_one.sh up to the cubin (CUBIN_ONLY=1: no cuobjdump, no
    network): one instantiation of v8_kernel, cut from the library's own
    source at the marker, compiles, and its cubin holds that kernel alone."""

    def test_one_instantiation(self):
        with tempfile.TemporaryDirectory() as out:
            env = dict(os.environ, OUT=out, CUBIN_ONLY="1", NVCC=NVCC)
            run = subprocess.run([os.path.join(SCRIPTS, "sass_one.sh"), "2, true, __half, 0, 0, 64, 0, false, 1, 0"],
                                 env=env, capture_output=True, text=True)
            self.assertEqual(run.returncode, 0, run.stderr)
            self.assertIn("registers", run.stdout)
            with open(os.path.join(out, "one.cu")) as f:
                cu = f.read()
            self.assertEqual(cu.count("template __global__ void v8_kernel<"), 1)
            self.assertFalse("static hgemm_status v8_c_map" in cu, "not cut before the host code")
            with open(os.path.join(out, "one.cubin"), "rb") as f:
                cubin = f.read()
            self.assertIn(b"_Z9v8_kernelILi2ELb1E6__halfLi0ELi0ELi64ELi0ELb0ELi1ELi0E", cubin)
            self.assertNotIn(b"ELi256ELi2E", cubin)  # no other instantiation

    def test_arguments_that_name_no_kernel_fail(self):
        with tempfile.TemporaryDirectory() as out:
            env = dict(os.environ, OUT=out, CUBIN_ONLY="1", NVCC=NVCC)
            run = subprocess.run([os.path.join(SCRIPTS, "sass_one.sh"), "2, true, float"],
                                 env=env, capture_output=True, text=True)
            self.assertNotEqual(run.returncode, 0)
            self.assertIn("error", run.stderr)


class SourceDigest(unittest.TestCase):
    """scripts/source_digest.sh in a scratch repository: a commit's digest is
    its checkout's, an edit under src/ changes it, an ignored file and a file
    outside the listed paths do not."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.repo = self.tmp.name
        os.makedirs(os.path.join(self.repo, "scripts"))
        os.makedirs(os.path.join(self.repo, "src"))
        with open(os.path.join(SCRIPTS, "source_digest.sh")) as f, \
                open(os.path.join(self.repo, "scripts", "source_digest.sh"), "w") as g:
            g.write(f.read())
        os.chmod(os.path.join(self.repo, "scripts", "source_digest.sh"), 0o755)
        self.write("src/a.c", "int a;\n")
        self.write("CMakeLists.txt", "project(x)\n")
        self.write(".gitignore", "build*/\n")
        self.git("init", "-q")
        self.git("add", "-A")
        self.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, path, text):
        os.makedirs(os.path.dirname(os.path.join(self.repo, path)) or self.repo, exist_ok=True)
        with open(os.path.join(self.repo, path), "w") as f:
            f.write(text)

    def git(self, *args):
        subprocess.run(["git", *args], cwd=self.repo, check=True, capture_output=True)

    def digest(self, *rev):
        out = subprocess.run([os.path.join(self.repo, "scripts", "source_digest.sh"), *rev],
                             cwd=self.repo, capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertRegex(out.stdout, r"^[0-9a-f]{16}\n$")
        return out.stdout

    def test_checkout_and_commit_agree(self):
        self.assertEqual(self.digest(), self.digest("HEAD"))

    def test_an_edit_under_src_changes_it(self):
        before = self.digest()
        self.write("src/a.c", "int b;\n")
        self.assertNotEqual(self.digest(), before)
        self.assertEqual(self.digest("HEAD"), before)

    def test_ignored_and_unlisted_files_do_not(self):
        before = self.digest()
        self.write("src/build-x/obj.o", "binary")  # ignored by build*/
        self.write("README.md", "words")           # not a listed path
        self.assertEqual(self.digest(), before)

    def test_a_new_file_under_a_listed_path_does(self):
        before = self.digest()
        self.write("tools/new.c", "int c;\n")
        self.assertNotEqual(self.digest(), before)

    def test_the_python_package_counts(self):
        before = self.digest()
        self.write("python/hgemm/__init__.py", "x = 1\n")
        self.assertNotEqual(self.digest(), before)
        after = self.digest()
        self.write("pyproject.toml", "[project]\n")
        self.assertNotEqual(self.digest(), after)


class PackResults(unittest.TestCase):
    """scripts/pack_results.sh: no CSV may be the file the device leaves behind."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def fill(self, names):
        for name in names:
            with open(os.path.join(self.out, name), "w") as f:
                f.write(name + "\n")

    def pack(self, *args, env=None):
        script = os.path.join(HERE, "..", "..", "scripts", "pack_results.sh")
        full_env = {k: v for k, v in os.environ.items() if k != "PACK"}
        full_env.update(env or {})
        return subprocess.run([script, self.out, *args], capture_output=True, text=True, env=full_env)

    def test_more_than_the_limit_goes_into_one_archive(self):
        names = ["device.log", "summary.txt"] + ["f%d.csv" % i for i in range(8)]
        self.fill(names)
        r = self.pack("8")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(sorted(os.listdir(self.out)), ["device.log", "results.tgz", "summary.txt"])
        listed = subprocess.run(["tar", "tzf", os.path.join(self.out, "results.tgz")],
                                capture_output=True, text=True, check=True).stdout.split()
        self.assertEqual(sorted(os.path.basename(p) for p in listed if not p.endswith("/")), sorted(names))

    def test_up_to_the_limit_nothing_moves(self):
        names = ["device.log", "suite.csv", "summary.txt"]
        self.fill(names)
        r = self.pack("8")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(sorted(os.listdir(self.out)), names)

    def test_pack_1_and_pack_0(self):
        self.fill(["device.log", "suite.csv"])
        self.assertEqual(self.pack("8", env={"PACK": "1"}).returncode, 0)
        self.assertEqual(sorted(os.listdir(self.out)), ["device.log", "results.tgz"])
        self.fill(["a%d.csv" % i for i in range(12)])
        self.assertEqual(self.pack("8", env={"PACK": "0"}).returncode, 0)
        self.assertIn("a11.csv", os.listdir(self.out))

    def test_not_a_folder(self):
        r = subprocess.run([os.path.join(HERE, "..", "..", "scripts", "pack_results.sh"),
                            os.path.join(self.out, "missing")], capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)


class BenchLogCsv(unittest.TestCase):
    """scripts/bench_log_csv.py: the rows of hgemm-bench's printed per-run tables."""
    LOG = """=== build: cmake --build x
== 1 x 4096 x 4096, run 1 of 2; memory-bound, 4 operand sets rotated (33.6 MB each) ==
=== suite: build-device/tools/hgemm-bench --suite llm
hgemm-bench: NVIDIA H200, 132 SMs
hgemm-bench: 1 of 2 shapes rotate operand sets, so the L2 (60 MiB) cannot serve what the launch before read
== 1 x 4096 x 4096, run 1 of 2; memory-bound, 4 operand sets rotated (33.6 MB each) ==
kernel             ms    TFLOP/s  % cuBLAS 32F  % cuBLAS 16F    max error     MHz     C      GB/s   % HBM
cublas32       0.0179        1.9        100.0%         96.9%    9.766e-04    1980    38    1871.5   39.0%
auto           0.0115        2.9        156.6%        151.6%    9.811e-04    1980    38    2929.9   61.0%

== 256 x 256 x 65536, run 2 of 2 ==
kernel             ms    TFLOP/s  % cuBLAS 32F  % cuBLAS 16F    max error     MHz     C
cublas32       0.0249      344.9        100.0%        128.7%    1.896e-03    1980    40
auto       FAILED: 3 of 65536 elements outside the tolerance
             (0, 1): 1.5 against 1.0

== 256 x 256 x 65536: median [min..max] over 2 runs ==
kernel     ms                           TFLOP/s
auto       0.0271 [0.0271..0.0272]      317.0 [316.0..318.0]
suite                        rc=0     227s
=== hostcost: x
== 64 x 64 x 64, run 1 of 1 ==
kernel             ms    TFLOP/s  % cuBLAS 32F  % cuBLAS 16F    max error     MHz     C
auto           0.0050        0.1        100.0%        100.0%    1.000e-03    1980    40
"""

    def run_tool(self, *args):
        with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
            f.write(self.LOG)
        try:
            return subprocess.run([sys.executable, os.path.join(HERE, "..", "..", "scripts", "bench_log_csv.py"),
                                   f.name, *args], capture_output=True, text=True)
        finally:
            os.unlink(f.name)

    def test_the_steps_rows_with_their_status(self):
        r = self.run_tool("--step", "suite")
        self.assertEqual(r.returncode, 0, r.stderr)
        import csv
        rows = list(csv.DictReader(l for l in r.stdout.splitlines() if not l.startswith("#")))
        self.assertEqual([(x["kernel"], x["m"], x["run"], x["status"]) for x in rows],
                         [("cublas32", "1", "1", "ok"), ("auto", "1", "1", "ok"),
                          ("cublas32", "256", "2", "ok"), ("auto", "256", "2", "failed")])
        self.assertEqual(rows[1]["ms"], "0.0115")
        self.assertEqual(rows[1]["vs_cublas32"], "1.566")
        self.assertEqual(rows[1]["gbps"], "2929.9")
        self.assertEqual(rows[1]["rotate_sets"], "4")
        self.assertEqual(rows[2]["rotate_sets"], "1")
        self.assertEqual(rows[3]["ms"], "")
        self.assertIn("# derived", r.stdout.splitlines()[0])
        self.assertIn("# l2_bytes: 62914560", r.stdout.splitlines())

    def test_the_whole_log_and_a_missing_step(self):
        r = self.run_tool()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len([l for l in r.stdout.splitlines() if l and not l.startswith("#")]), 1 + 2 + 2 + 1)
        self.assertEqual(self.run_tool("--step", "forms").returncode, 1)


class DeviceCheckStatus(unittest.TestCase):
    """scripts/device-check.sh's exit status says whether a step failed."""

    ROOT = os.path.join(HERE, "..", "..")

    def run_steps(self, steps, env_extra):
        with tempfile.TemporaryDirectory() as out:
            env = dict(os.environ, OUT=out, PACK="0", **env_extra)
            r = subprocess.run(["bash", "scripts/device-check.sh", steps], cwd=self.ROOT, env=env,
                               capture_output=True, text=True, timeout=120)
            with open(os.path.join(out, "summary.txt")) as f:
                return r.returncode, f.read()

    def test_no_step_is_success(self):
        rc, summary = self.run_steps("none", {})
        self.assertEqual(rc, 0)
        self.assertIn("source digest:", summary)

    def test_a_failed_step_fails_the_run(self):
        # a kernel no bench knows: the step fails with or without a device build
        rc, summary = self.run_steps("processes", {"PROCESS_ARGS": "1 --kernels no-such-kernel --size 64 64 64"})
        self.assertEqual(rc, 1)
        self.assertRegex(summary, r"processes\s+rc=[1-9]")

    def test_profile_shapes_each_a_step(self):
        # no profiler here (NCU names a command that fails): each shape's
        # step runs, fails and is named by its shape; nothing is left behind
        with tempfile.TemporaryDirectory() as out:
            env = dict(os.environ, OUT=out, PACK="0", NCU="false", PROFILE_KERNELS="auto",
                       PROFILE_SHAPE="64 64 64;128 256 512")
            r = subprocess.run(["bash", "scripts/device-check.sh", "profile"], cwd=self.ROOT, env=env,
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 1)
            with open(os.path.join(out, "summary.txt")) as f:
                summary = f.read()
            self.assertRegex(summary, r"profile-64x64x64\s+rc=[1-9]")
            self.assertRegex(summary, r"profile-128x256x512\s+rc=[1-9]")
            self.assertFalse([n for n in os.listdir(out) if n.endswith(".d")])


# A stand-in for hgemm-bench: records its arguments, a line a call, in
# $FAKE_CALLS and writes a one-row CSV where --csv says.
FAKE_BENCH = r"""#!/usr/bin/env bash
echo "$*" >>"$FAKE_CALLS"
csv=""
while [ $# -gt 0 ]; do
    [ "$1" = --csv ] && csv=$2
    shift
done
printf '%s\n' "# gpu: stand-in" "kernel,m,n,k,ms" "auto,1,1,1,0.5" >"$csv"
"""


def device_check_with_fake_bench(step, env_extra, read=None):
    """Runs device-check.sh's `step` over FAKE_BENCH (its build tree a
    temporary one). Returns the exit status, each call's arguments (split),
    the names under $OUT, and read(OUT) where given (before the temporary
    tree goes)."""
    root = os.path.join(HERE, "..", "..")
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "tools"))
        bench = os.path.join(tmp, "tools", "hgemm-bench")
        with open(bench, "w") as f:
            f.write(FAKE_BENCH)
        os.chmod(bench, 0o755)
        out, calls = os.path.join(tmp, "out"), os.path.join(tmp, "calls")
        env = dict(os.environ, OUT=out, PACK="0", DEVICE_CHECK_BUILD=tmp, FAKE_CALLS=calls, **env_extra)
        r = subprocess.run(["bash", "scripts/device-check.sh", step], cwd=root, env=env,
                           capture_output=True, text=True, timeout=120)
        with open(calls) as f:
            args = [line.split() for line in f]
        return r.returncode, args, sorted(os.listdir(out)), read(out) if read else None


class DeviceCheckTarget(unittest.TestCase):
    """device-check.sh's target step: 8192^3 in 5 stand-in processes of 128
    one-launch windows, then one process over bench/shapes/target.txt."""

    def test_processes_then_the_shapes(self):
        rc, args, files, _ = device_check_with_fake_bench("target", {})
        self.assertEqual(rc, 0)
        self.assertEqual(len(args), 6)
        for a in args[:5]:
            self.assertEqual(a[a.index("--kernels") + 1], "auto,v8")
            self.assertEqual(a[a.index("--size") + 1:a.index("--size") + 4], ["8192"] * 3)
            self.assertEqual(a[a.index("--interleave") + 1], "128")
            self.assertEqual(a[a.index("--iters") + 1], "128")
            self.assertEqual(a[a.index("--repeat") + 1], "5")
        last = args[5]
        self.assertEqual(last[last.index("--shapes") + 1], "bench/shapes/target.txt")
        self.assertEqual(last[last.index("--kernels") + 1], "auto")
        self.assertIn("target-processes.csv", files)
        self.assertIn("target-shapes.csv", files)
        self.assertNotIn("target.d", files)

    def test_the_shapes_are_the_sweeps_with_every_side_4096_or_more(self):
        root = os.path.join(HERE, "..", "..")
        with open(os.path.join(root, "bench", "shapes", "target.txt")) as f:
            shapes = [tuple(map(int, l.split())) for l in f if l.strip() and not l.startswith("#")]
        # the built-in sweep, as tools/hgemm-bench.c's sweep_shapes table lists it
        with open(os.path.join(root, "tools", "hgemm-bench.c")) as f:
            src = f.read()
        table = src[src.index("sweep_shapes[] = {"):]
        table = table[:table.index("};")]
        sweep = [tuple(map(int, t)) for t in re.findall(r"\{(\d+),\s*(\d+),\s*(\d+)\}", table)]
        self.assertGreater(len(sweep), 5)
        self.assertEqual(sorted(shapes), sorted(s for s in sweep if min(s) >= 4096))


class DeviceCheckBatched(unittest.TestCase):
    """device-check.sh's batched step: one stand-in hgemm-bench process per
    BATCH:M N K of $BATCHES, each CSV kept, all in batched.csv under one
    column line, and a malformed spec a failed step."""

    def batched(self, batches):
        def merged(out):
            with open(os.path.join(out, "batched.csv")) as f:
                return f.read().splitlines()
        rc, args, files, lines = device_check_with_fake_bench("batched", {"BATCHES": batches}, merged)
        return rc, args, lines, files

    def test_each_spec_its_process_and_one_csv(self):
        rc, args, merged, files = self.batched("4096:64 64 64;32:1 4096 128")
        self.assertEqual(rc, 0)
        self.assertEqual(len(args), 2)
        self.assertEqual(args[0][args[0].index("--batch") + 1], "4096")
        self.assertEqual(args[1][args[1].index("--size") + 1:args[1].index("--size") + 4], ["1", "4096", "128"])
        self.assertIn("batched-4096-64x64x64.csv", files)
        self.assertIn("batched-32-1x4096x128.csv", files)
        self.assertEqual([l for l in merged if l.startswith("kernel,")], ["kernel,m,n,k,ms"])
        self.assertEqual(len([l for l in merged if l.startswith("auto,")]), 2)

    def test_a_malformed_spec_fails_the_run_and_the_rest_still_run(self):
        rc, args, merged, files = self.batched("8:4096 4096;2:128 128 128")
        self.assertEqual(rc, 1)
        self.assertEqual(len(args), 1)
        self.assertIn("batched-2-128x128x128.csv", files)


class DeviceCheckAlone(unittest.TestCase):
    """device-check.sh's alone step: one hgemm-bench process without
    --interleave, its kernels and arguments from $ALONE_KERNELS and
    $ALONE_ARGS (defaults: auto, 8192^3 after 100 warm-up launches, no
    cooldown), into alone.csv."""

    def alone(self, env_extra):
        rc, args, files, _ = device_check_with_fake_bench("alone", env_extra)
        return rc, args, files

    def test_defaults(self):
        rc, args, files = self.alone({})
        self.assertEqual(rc, 0)
        self.assertEqual(len(args), 1)
        a = args[0]
        self.assertEqual(a[a.index("--kernels") + 1], "auto")
        self.assertEqual(a[a.index("--size") + 1:a.index("--size") + 4], ["8192", "8192", "8192"])
        self.assertEqual(a[a.index("--warmup") + 1], "100")
        self.assertEqual(a[a.index("--cooldown") + 1], "0")
        self.assertNotIn("--interleave", a)
        self.assertIn("alone.csv", files)

    def test_kernels_and_arguments_given(self):
        rc, args, _ = self.alone({"ALONE_KERNELS": "auto,v8-320", "ALONE_ARGS": "--size 4096 4096 4096 --repeat 2"})
        self.assertEqual(rc, 0)
        a = args[0]
        self.assertEqual(a[a.index("--kernels") + 1], "auto,v8-320")
        self.assertEqual(a[a.index("--repeat") + 1], "2")
        self.assertNotIn("--warmup", a)


class ProfileMetrics(unittest.TestCase):
    """scripts/profile.sh's choice of metrics, with a stand-in for ncu that
    lists a few metric names, records each call's --metrics and writes a
    one-row CSV (or refuses the request coalescer's counters when told to)."""

    ROOT = os.path.join(HERE, "..", "..")
    FAKE_NCU = r"""#!/usr/bin/env bash
if [ "$1" = --query-metrics ]; then
    printf '%s\n' "Metric Name   Metric Description" \
        "sm__pipe_tensor_cycles_active   # of cycles where the tensor pipe was active" \
        "lts__t_sectors_srcunit_tex   # of sectors from the SMs" \
        "lts__t_sectors_srcunit_ltcfabric   # of sectors from the other partition" \
        "lts__t_sectors_lookup_hit   # of sectors that hit" \
        "lrc__t_sectors_merged   # of sectors the coalescer merged" \
        "lrc__throughput   % of the coalescer's peak"
    exit 0
fi
metrics="" log=""
while [ $# -gt 0 ]; do
    case $1 in
        --metrics) metrics=$2; shift ;;
        --log-file) log=$2; shift ;;
    esac
    shift
done
echo "$metrics" >>"$FAKE_CALLS"
if [ -n "${FAKE_REFUSE:-}" ] && [[ $metrics == *lrc__* ]]; then
    echo "==ERROR== Failed to find metric lrc__t_sectors_merged.sum" >"$log"
    exit 1
fi
printf '%s\n' '"Kernel Name","gpu__time_duration.sum"' '"","ns"' '"v8_kernel","1,000"' >"$log"
"""

    def profile(self, **env_extra):
        with tempfile.TemporaryDirectory() as tmp:
            ncu = os.path.join(tmp, "ncu")
            with open(ncu, "w") as f:
                f.write(self.FAKE_NCU)
            os.chmod(ncu, 0o755)
            calls = os.path.join(tmp, "calls")
            out = os.path.join(tmp, "out")
            env = dict(os.environ, NCU=ncu, OUT=out, BUILD=tmp, FAKE_CALLS=calls, **env_extra)
            r = subprocess.run(["bash", "scripts/profile.sh", "auto,cublas32", "64", "64", "64"], cwd=self.ROOT,
                               env=env, capture_output=True, text=True, timeout=60)
            with open(calls) as f:
                metrics = [line.strip().split(",") for line in f]
            return r, metrics, sorted(os.listdir(out))

    def test_the_plain_profile_asks_for_no_l2_detail(self):
        r, metrics, files = self.profile()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(metrics), 2)
        self.assertIn("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", metrics[0])
        self.assertFalse([m for m in metrics[0] if m.startswith(("lrc__", "lts__t_sectors_src"))])
        self.assertNotIn("ncu-metrics.txt", files)

    def test_l2_detail_adds_the_listed_counters_and_keeps_the_list(self):
        r, metrics, files = self.profile(L2_DETAIL="1")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(metrics), 2)
        for m in ("lts__t_sectors_srcunit_tex.sum", "lts__t_sectors_srcunit_ltcfabric.sum",
                  "lts__t_sectors_lookup_hit.sum", "lrc__t_sectors_merged.sum"):
            self.assertIn(m, metrics[1])
        self.assertFalse([m for m in metrics[1] if m.startswith("lrc__throughput")])  # not a counter
        self.assertIn("ncu-metrics.txt", files)
        self.assertIn("profile.csv", files)

    def test_extra_metrics_where_ncu_lists_them(self):
        # PROFILE_EXTRA: the listed one asked for in every call, the other
        # named on stderr and left out
        r, metrics, _ = self.profile(PROFILE_EXTRA="lts__t_sectors_lookup_hit.sum,made__up.sum")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("this ncu has no made__up.sum", r.stderr)
        for call in metrics:
            self.assertIn("lts__t_sectors_lookup_hit.sum", call)
            self.assertIn("gpu__time_duration.sum", call)
            self.assertNotIn("made__up.sum", call)

    def test_a_refused_coalescer_counter_is_dropped_not_fatal(self):
        r, metrics, files = self.profile(L2_DETAIL="1", FAKE_REFUSE="1")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("refused", r.stderr)
        # the first kernel tries once with them and once without; the second only without
        self.assertEqual([any(m.startswith("lrc__") for m in call) for call in metrics], [True, False, False])
        self.assertIn("lts__t_sectors_srcunit_tex.sum", metrics[2])
        self.assertIn("profile.csv", files)


class SmGroups(unittest.TestCase):
    """scripts/sm_groups.py on a map written here: 12 SMs in two GPCs whose
    TPCs alternate (GPC 0: SMs 0-1, 4-5, 8-9; GPC 1: 2-3, 6-7, 10-11), pairs
    handed out to the GPCs in turn, one pair off its TPC in the second
    launch, clusters of 4 that together cover each GPC."""

    HEAD = "# tool: hgemm-sm-map\nconfig,cluster_size,launch,block,cluster,rank,smid,start_ns\n"

    def write_map(self):
        rows = []
        tpc_order = [0, 2, 4, 6, 8, 10]  # cluster c on SMs 2 * (tpc) .. : GPC 0, 1, 0, 1, ...
        for launch in (1, 2):
            for c, first in enumerate(tpc_order):
                sms = [first, first + 1]
                if launch == 2 and c == 5:
                    sms = [9, 10]  # not one TPC, and not the first launch's SMs
                for rank, sm in enumerate(sms):
                    rows.append(f"pairs,2,{launch},{2 * c + rank},{c},{rank},{sm},0")
        c4 = [[0, 1, 4, 5], [2, 3, 6, 7], [4, 5, 8, 9], [6, 7, 10, 11]]
        for c, sms in enumerate(c4):
            for rank, sm in enumerate(sms):
                rows.append(f"c4,4,1,{4 * c + rank},{c},{rank},{sm},0")
        f = tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False)
        f.write(self.HEAD + "\n".join(rows) + "\n")
        f.close()
        self.addCleanup(os.unlink, f.name)
        return f.name

    def test_groups_are_the_gpcs(self):
        rows = sm_groups.read(self.write_map())
        self.assertEqual(sm_groups.groups(rows), [[0, 1, 4, 5, 8, 9], [2, 3, 6, 7, 10, 11]])

    def test_pairs_facts(self):
        p = sm_groups.pairs(sm_groups.read(self.write_map()))
        self.assertEqual((p["launches"], p["clusters"]), (2, 6))
        self.assertEqual((p["on_tpc"], p["total"]), (11, 12))
        self.assertEqual(p["stable"], 5)

    def test_summary_names_the_order_and_the_ranges(self):
        text = sm_groups.summary(sm_groups.read(self.write_map()))
        self.assertIn("group 0: 6 SMs: 0-1 4-5 8-9", text)
        self.assertIn("group of each cluster index (first launch): 0 1 0 1 0 1", text)
        self.assertIn("neighbouring indexes in one group: 0 of 5", text)
        self.assertIn("on one TPC (SMs 2t, 2t+1): 11 of 12", text)

    def test_the_table_and_a_bad_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "g.csv")
            with contextlib.redirect_stdout(io.StringIO()) as printed:
                self.assertEqual(sm_groups.main([self.write_map(), "--csv", out]), 0)
            self.assertIn("groups joined by the clusters of 4 and more: 2", printed.getvalue())
            with open(out) as f:
                lines = f.read().splitlines()
            self.assertEqual(lines[0], "smid,group,pair_clusters")
            self.assertIn("2,1,1", lines)
            bad = os.path.join(tmp, "bad.csv")
            with open(bad, "w") as f:
                f.write(self.HEAD + "pairs,2,one,0,0,0,0,0\n")
            with contextlib.redirect_stderr(io.StringIO()) as said:
                self.assertEqual(sm_groups.main([bad]), 1)
            self.assertIn("not hgemm-sm-map's", said.getvalue())


class UnitClocks(unittest.TestCase):
    """scripts/unit_clocks.py on a phase CSV written here: 4096 x 4096 x
    4096 (64 k-tiles a unit), two launches of two warpgroups, the start at
    1000 cycles, units every 70000 from 3000, the end 80000 after the last
    (and 72000 in the second launch)."""

    def write_csv(self, plan=""):
        rows = ["# tool: hgemm-phase-timer", "# shape: 4096 4096 4096"] + ([plan] if plan else [])
        rows.append("launch,slot,phase,ns,cycles")
        for launch, close in ((1, 80000), (2, 72000)):
            for slot in (0, 1):
                rows.append(f"{launch},{slot},start,0,1000")
                for u in range(4):
                    rows.append(f"{launch},{slot},unit{u},{u},{3000 + 70000 * u}")
                rows.append(f"{launch},{slot},end,9,{3000 + 70000 * 3 + close}")
        f = tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False)
        f.write("\n".join(rows) + "\n")
        f.close()
        self.addCleanup(os.unlink, f.name)
        return f.name

    def test_fill_period_close(self):
        text = unit_clocks.summary(self.write_csv())
        self.assertIn("128x256 tiles, 64 k-tiles a unit, 2 launches", text)
        self.assertIn("fill: 2000 cycles [2000..2000] = 1.95 k-tiles", text)
        self.assertIn("period: 70000 cycles [70000..70000], +4.36 k-tiles over 65536", text)
        self.assertIn("close: 76000 cycles [72000..80000]", text)

    def test_the_plans_width(self):
        text = unit_clocks.summary(self.write_csv("# plan: v8 bn 320 cluster 2"))
        self.assertIn("128x320 tiles", text)
        self.assertIn("over 81920", text)  # 64 k-tiles of 1280 cycles

    def test_the_marks_count_is_the_librarys(self):
        import re
        with open(os.path.join(HERE, "..", "..", "src", "internal.h")) as f:
            self.assertEqual(int(re.search(r"V8_UNIT_MARKS = (\d+)", f.read()).group(1)), unit_clocks.UNIT_MARKS)

    def test_a_file_without_its_shape(self):
        with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
            f.write("launch,slot,phase,ns,cycles\n1,0,start,0,1\n")
        self.addCleanup(os.unlink, f.name)
        with contextlib.redirect_stderr(io.StringIO()) as said:
            self.assertEqual(unit_clocks.main([f.name]), 1)
        self.assertIn("no '# shape: M N K' line", said.getvalue())


class PhasePaces(unittest.TestCase):
    """scripts/phase_paces.py on a phase CSV written here: two blocks (four
    warpgroups) with the same cycles at two clocks, and one with no end."""

    CSV = """# tool: hgemm-phase-timer
launch,slot,phase,ns,cycles
1,0,start,0,1000
1,0,end,1000000,1501000
1,1,start,32,1000
1,1,end,1000032,1501000
1,2,start,0,2000
1,2,end,1034483,1502000
1,3,start,64,2000
1,3,end,1034547,1502000
1,4,start,0,5
"""

    def setUp(self):
        import phase_paces
        self.pp = phase_paces
        fd, self.path = tempfile.mkstemp(suffix=".csv")
        with os.fdopen(fd, "w") as f:
            f.write(self.CSV)

    def tearDown(self):
        os.unlink(self.path)

    def test_ends_cycles_and_clocks(self):
        data = self.pp.launches(self.path)
        self.assertEqual(sorted(data), [1])
        self.assertEqual(sorted(data[1]), [0, 1, 2, 3])  # slot 4 has no end
        st = self.pp.launch_stats(data[1])
        self.assertEqual((st["groups"], st["end_min"], st["end_max"]), (4, 1000000, 1034547))
        self.assertEqual((st["cycles_min"], st["cycles_max"]), (1500000, 1500000))
        self.assertAlmostEqual(st["ghz_max"], 1.5, places=6)
        self.assertAlmostEqual(st["ghz_min"], 1.5e6 / 1034483, places=6)

    def test_blocks_by_clock(self):
        levels = self.pp.clock_levels(self.pp.launches(self.path)[1])
        self.assertEqual(levels, {1.45: [1], 1.5: [0]})

    def test_command_line(self):
        script = os.path.join(HERE, "..", "..", "scripts", "phase_paces.py")
        out = subprocess.run([sys.executable, script, self.path], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("4 warpgroups", out.stdout)
        self.assertIn("1.450: 1 blocks, 1", out.stdout)
        fd, empty = tempfile.mkstemp(suffix=".csv")
        with os.fdopen(fd, "w") as f:
            f.write("launch,slot,phase,ns,cycles\n1,0,start,0,1\n")
        try:
            out = subprocess.run([sys.executable, script, empty], capture_output=True, text=True)
            self.assertEqual(out.returncode, 1)
        finally:
            os.unlink(empty)


class MeasurementScripts(unittest.TestCase):
    """python/'s measurement scripts start from any folder (bench_timing.py
    beside them), print their usage, and without torch or a GPU say what
    they need in one line and exit nonzero, without a traceback."""
    SCRIPTS = ("torch_e2e.py", "llama_e2e.py", "moe_e2e.py", "grouped_bench.py", "fp8_bench.py", "bench_torch.py")

    def run_script(self, name, *args):
        path = os.path.join(HERE, "..", "..", "python", name)
        env = dict(os.environ, PYTHONPATH="")
        return subprocess.run([sys.executable, path, *args], capture_output=True, text=True, cwd=tempfile.gettempdir(),
                              env=env, timeout=120)

    def test_usage(self):
        for name in self.SCRIPTS:
            out = self.run_script(name, "--help")
            self.assertEqual(out.returncode, 0, name + ": " + out.stderr)
            self.assertIn("usage:", out.stdout, name)

    def test_without_what_they_need(self):
        try:
            import torch
            if torch.cuda.is_available():
                self.skipTest("torch sees a GPU here: the scripts would measure")
        except ImportError:
            pass
        for name in ("torch_e2e.py", "moe_e2e.py", "grouped_bench.py", "fp8_bench.py"):
            out = self.run_script(name)
            self.assertNotEqual(out.returncode, 0, name)
            self.assertNotIn("Traceback", out.stderr, name)
            self.assertRegex(out.stderr.strip(), r"^[a-z_0-9]+: (needs|hgemm's native)", name)


if __name__ == "__main__":
    unittest.main()
