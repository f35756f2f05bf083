"""hgemm.nt against torch.matmul(a, b.T), from Python, on the GPU.

    python3 python/bench_torch.py [--size 8192] [--repeats 3] [--csv FILE]

The same fp16 tensors go to each contender: hgemm.nt with kernel "auto", "v6"
and "v7" (into a preallocated out, on torch's current stream), and
torch.matmul(a, b.T) (cuBLAS through torch). Each measurement is 5 warm-up
launches and then 30 timed ones between two CUDA events, after a cooldown
(DESIGN.md); the whole set is repeated, and the table gives the median and
the range over the repeats, never one lucky sample. Needs torch and an sm_90
GPU; exits 2 with a message otherwise. "vs torch" is torch.matmul's median
time over this one's: above 1 means faster than torch.

--csv FILE writes one row per contender and repeat, in the columns of
hgemm-bench's CSV where they mean the same (kernel, m, n, k, run, ms,
tflops) plus vs_torch (torch.matmul's time over this one's, same repeat),
after `# key: value` metadata lines (GPU, torch and CUDA versions, hgemm's
version, date, command), so that a figure quoted from Python has a file
behind it.
"""
import argparse
import datetime
import statistics
import sys
import time

import bench_timing  # python/bench_timing.py, beside this script

import hgemm

WARMUP, TIMED = 5, 30


def time_ms(torch, fn, cooldown):
    """Mean milliseconds per launch of fn over TIMED launches."""
    time.sleep(cooldown)
    return bench_timing.mean_ms(torch, fn, WARMUP, TIMED)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=8192, help="m = n = k (default 8192)")
    parser.add_argument("--repeats", type=int, default=3, help="times the whole set runs (default 3)")
    parser.add_argument("--cooldown", type=float, default=3.0,
                        help="seconds of idle GPU before each measurement (default 3)")
    parser.add_argument("--csv", help="write one row per contender and repeat to this file")
    args = parser.parse_args()

    try:
        import torch
    except ImportError:
        print("bench_torch: needs torch", file=sys.stderr)
        return 2
    if not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0):
        print("bench_torch: needs an sm_90 GPU (H100/H200)", file=sys.stderr)
        return 2

    m = n = k = args.size
    torch.manual_seed(0)
    # Unit-variance outputs, as in the tests: entries of variance 1/sqrt(k).
    a = (torch.randn(m, k, device="cuda") * k ** -0.25).half()
    b = (torch.randn(n, k, device="cuda") * k ** -0.25).half()
    out = torch.empty(m, n, dtype=torch.float16, device="cuda")
    contenders = [
        ("hgemm auto", lambda: hgemm.nt(a, b, out, kernel="auto")),
        ("hgemm v6", lambda: hgemm.nt(a, b, out, kernel="v6")),
        ("hgemm v7", lambda: hgemm.nt(a, b, out, kernel="v7")),
        ("torch.matmul", lambda: torch.matmul(a, b.T)),
    ]
    csv_names = {"hgemm auto": "hgemm-auto", "hgemm v6": "hgemm-v6", "hgemm v7": "hgemm-v7",
                 "torch.matmul": "torch"}

    ms = {name: [] for name, _ in contenders}
    for _ in range(args.repeats):
        for name, fn in contenders:
            ms[name].append(time_ms(torch, fn, args.cooldown))

    flop = 2.0 * m * n * k
    print("# %s, torch %s, %dx%dx%d fp16, %d warm-up + %d timed launches, %d repeats"
          % (torch.cuda.get_device_name(), torch.__version__, m, n, k, WARMUP, TIMED, args.repeats))
    print("%-14s %10s %20s %10s %20s %10s" % ("", "ms", "ms range", "TFLOP/s", "TFLOP/s range",
                                            "vs torch"))
    torch_median = statistics.median(ms["torch.matmul"])
    for name, _ in contenders:
        times = ms[name]
        med, lo, hi = statistics.median(times), min(times), max(times)
        print("%-14s %10.3f %9.3f .. %7.3f %10.1f %9.1f .. %7.1f %9.3fx"
              % (name, med, lo, hi, flop / med / 1e9, flop / hi / 1e9, flop / lo / 1e9,
                 torch_median / med))
    if args.csv:
        write_csv(args.csv, torch, (m, n, k), args, contenders, csv_names, ms, flop)
    return 0


def write_csv(path, torch, shape, args, contenders, csv_names, ms, flop):
    m, n, k = shape
    with open(path, "w") as f:
        f.write("# tool: python/bench_torch.py\n")
        f.write("# gpu: %s\n" % torch.cuda.get_device_name())
        f.write("# torch_version: %s\n" % torch.__version__)
        f.write("# torch_cuda_version: %s\n" % torch.version.cuda)
        f.write("# hgemm_version: %s (%s)\n" % (hgemm.__version__, hgemm.library_path()))
        f.write("# date: %s\n" % datetime.datetime.now(datetime.timezone.utc).strftime(
            "%Y-%m-%dT%H:%M:%SZ"))
        f.write("# command: %s\n" % " ".join(sys.argv))
        f.write("# warmup: %d\n# iters: %d\n# cooldown_s: %g\n# repeat: %d\n"
                % (WARMUP, TIMED, args.cooldown, args.repeats))
        f.write("# layout: row-major NT, out = a @ b.T, fp16; unit-variance outputs\n")
        f.write("kernel,m,n,k,run,ms,tflops,vs_torch\n")
        for run in range(args.repeats):
            base = ms["torch.matmul"][run]
            for name, _ in contenders:
                t = ms[name][run]
                f.write("%s,%d,%d,%d,%d,%.6f,%.3f,%.5f\n"
                        % (csv_names[name], m, n, k, run + 1, t, flop / t / 1e9, base / t))
    print("wrote %s" % path)


if __name__ == "__main__":
    sys.exit(main())
