#!/usr/bin/env python3
"""hgemm.functional.scaled_mm beside torch._scaled_mm (cuBLASLt), in one
process, on FP8 products of DeepSeek-V3's and Llama's shapes:

    python3 python/fp8_bench.py [--scalings tensor,block] [--m 1,16,64,128,4096,16384]
                                [--repeat 3] [--iters 20] [--csv FILE]

Inputs: bf16 random normal activations (m, k) and weights (n, k), quantized
on the GPU by hgemm.functional.quantize_fp8 to e4m3 (tensor: one scale each;
block: 1 x 128 for the activations, 128 x 128 for the weights), the same
tensors given to both backends, bf16 out. The reference is the fp64 product
of the dequantized inputs; each backend's largest error against it is a
column (max_abs_err for hgemm, torch_max_abs_err for torch, beside each
other on every row). first_call_ms: the first call of the shape in this
process, synchronized, wall clock. The two take turns. --timing graph (the
default): `iters` calls captured in one CUDA graph, replayed, the GPU's time
per call without the host's between calls (how a server replays its decode
step); each call reads its own copy of the operands, as many copies as keep
their bytes past 128 MB (up to 8), so that the small products read their
weights from HBM, not from L2. --timing eager: `iters` calls back to back
from Python between two CUDA events (the small products then measure each
backend's host time per call). Columns: scaling, m, n, k, backend, run, ms,
tflops, gbps (A and B once, one byte an element, C's bf16 and the scales,
over ms: the decode rows' measure against HBM), vs_torch_scaled_mm
(torch's median ms over this row's ms), max_abs_err, torch_max_abs_err,
first_call_ms, timing, copies."""
import argparse
import csv
import statistics
import sys
import time

import bench_timing  # python/bench_timing.py, beside this script

EXIT_NO_GPU = 77

# (n, k): DeepSeek-V3's dense projections, then Llama 3 8B's, then a square
NK = ((2112, 7168), (24576, 1536), (32768, 512), (7168, 16384), (4096, 7168), (7168, 2048),
      (4096, 4096), (14336, 4096), (4096, 14336), (8192, 8192))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scalings", default="tensor,block")
    parser.add_argument("--m", default="1,16,64,128,4096,16384")
    parser.add_argument("--shapes", default="", help="n:k pairs, comma-separated (default: the built-in list)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--iters", type=int, default=40)
    parser.add_argument("--timing", choices=("graph", "eager"), default="graph")
    parser.add_argument("--csv")
    args = parser.parse_args()
    try:
        import torch
        import hgemm
        import hgemm.functional as HF
    except ImportError as e:
        print(f"fp8_bench: needs torch and hgemm: {e}", file=sys.stderr)
        return EXIT_NO_GPU
    why = bench_timing.not_ready(torch, hgemm)
    if why:
        print(f"fp8_bench: {why}", file=sys.stderr)
        return EXIT_NO_GPU
    nk = NK if not args.shapes else tuple(tuple(int(v) for v in p.split(":")) for p in args.shapes.split(","))
    ms_list = [int(v) for v in args.m.split(",")]
    rows = []
    out_csv = open(args.csv, "w", newline="") if args.csv else None
    writer = None
    gen = torch.Generator(device="cuda").manual_seed(0)
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}")
    for scaling in args.scalings.split(","):
        for (n, k) in nk:
            for m in ms_list:
                x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=gen)
                w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=gen) * 0.05
                if scaling == "tensor":
                    a8, sa = HF.quantize_fp8(x, None)
                    w8, sw = HF.quantize_fp8(w, None)
                    sb = sw
                else:
                    a8, sa = HF.quantize_fp8(x, (1, 128))
                    w8, sw = HF.quantize_fp8(w, (128, 128))
                    sb = sw.t()
                b8 = w8.t()

                def run_hgemm():
                    return HF.scaled_mm(a8, b8, sa, sb, out_dtype=torch.bfloat16)

                def run_torch():
                    return torch._scaled_mm(a8, b8, sa, sb, out_dtype=torch.bfloat16)

                # --timing graph: copies of the operands, each call its own, past L2 together
                size = m * k + n * k
                copies = 1 if args.timing == "eager" else max(1, min(8, -(-(128 << 20) // size)))
                ops = [(a8, b8, sa, sb)] + [(a8.clone(), w8.clone().t(), sa.clone(), sb.clone())
                                             for _ in range(copies - 1)]
                fns = {"hgemm": [lambda o=o: HF.scaled_mm(*o, out_dtype=torch.bfloat16) for o in ops],
                       "torch": [lambda o=o: torch._scaled_mm(*o, out_dtype=torch.bfloat16) for o in ops]}

                # the fp64 reference of the dequantized operands
                if scaling == "tensor":
                    xa = a8.double() * sa.double()
                    wb = w8.double() * sw.double()
                else:
                    xa = a8.double() * sa.double().repeat_interleave(128, dim=1)[:, :k]
                    wb = w8.double() * sw.double().repeat_interleave(128, dim=0)[:n].repeat_interleave(128, dim=1)[:, :k]
                ref = xa @ wb.t()
                del xa, wb
                first = {}
                errs = {}
                for name, fn in (("hgemm", run_hgemm), ("torch", run_torch)):
                    torch.cuda.synchronize()
                    t0 = time.perf_counter()
                    try:
                        out = fn()
                        torch.cuda.synchronize()
                    except RuntimeError as e:
                        print(f"  {scaling} {m}x{n}x{k} {name}: {str(e).splitlines()[0]}")
                        out = None
                    first[name] = (time.perf_counter() - t0) * 1e3
                    errs[name] = float((out.double() - ref).abs().max()) if out is not None else float("nan")
                del ref
                runnable = [(nm, fn) for nm, fn in (("hgemm", run_hgemm), ("torch", run_torch))
                            if errs[nm] == errs[nm]]
                times = {nm: [] for nm, _ in runnable}
                failed = set()
                for r in range(args.repeat):
                    for nm, fn in runnable:
                        if nm in failed:
                            continue
                        if args.timing == "graph":
                            try:
                                times[nm].append(bench_timing.graph_ms(torch, fns[nm], 2, args.iters))
                            except RuntimeError as e:  # a backend that cannot be captured: no row
                                print(f"  {scaling} {m}x{n}x{k} {nm}: not capturable: {str(e).splitlines()[0]}")
                                failed.add(nm)
                                times[nm] = []
                        else:
                            times[nm].append(bench_timing.mean_ms(torch, fn, 3, args.iters))
                times = {nm: t for nm, t in times.items() if t}
                runnable = [(nm, fn) for nm, fn in runnable if nm in times]
                torch_med = statistics.median(times["torch"]) if "torch" in times else float("nan")
                flops = 2.0 * m * n * k
                moved = m * k + n * k + 2 * m * n + 4 * (sa.numel() + sb.numel())  # bytes, each once
                for nm, _ in runnable:
                    for r, ms in enumerate(times[nm]):
                        rows.append({"scaling": scaling, "m": m, "n": n, "k": k,
                                     "backend": "hgemm" if nm == "hgemm" else "torch_scaled_mm", "run": r,
                                     "ms": f"{ms:.5f}", "tflops": f"{flops / ms / 1e9:.1f}",
                                     "gbps": f"{moved / ms / 1e6:.1f}",
                                     "vs_torch_scaled_mm": f"{torch_med / ms:.4f}",
                                     "max_abs_err": f"{errs['hgemm']:.4g}", "torch_max_abs_err": f"{errs['torch']:.4g}",
                                     "first_call_ms": f"{first[nm]:.3f}", "timing": args.timing,
                                     "copies": copies})
                if out_csv is not None and rows:  # shape by shape: a run cut short keeps what it measured
                    if writer is None:
                        out_csv.write(f"# tool: python/fp8_bench.py\n# gpu: {torch.cuda.get_device_name()}, "
                                      f"torch {torch.__version__}\n# command: {' '.join(sys.argv)}\n")
                        writer = csv.DictWriter(out_csv, fieldnames=list(rows[0].keys()))
                        writer.writeheader()
                    writer.writerows(rows)
                    out_csv.flush()
                rows = []
                med = {nm: statistics.median(t) for nm, t in times.items()}
                h = med.get("hgemm", float("nan"))
                print(f"{scaling:6} {m:5} x {n:5} x {k:5}  hgemm {h:.4f} ms {flops / h / 1e9:7.1f} TFLOP/s "
                      f"{moved / h / 1e6:6.0f} GB/s  "
                      f"torch {torch_med:.4f} ms {flops / torch_med / 1e9:7.1f}  vs torch {torch_med / h:.3f}x  "
                      f"err {errs['hgemm']:.3g} (torch {errs['torch']:.3g})  first {first['hgemm']:.2f} / "
                      f"{first['torch']:.2f} ms", flush=True)
                del a8, b8, sa, sb, x, w, ops, fns
    if out_csv is not None:
        out_csv.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
