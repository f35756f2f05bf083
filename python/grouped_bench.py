#!/usr/bin/env python3
"""hgemm.functional.grouped_mm beside torch._grouped_mm and a per-expert loop
of F.linear (cuBLAS, the sizes read on the host, what transformers' MoE code
runs), in one process, on mixture-of-experts shapes:

    python3 python/grouped_bench.py [--tokens 16,64,512,4096] [--routing uniform,skewed]
                                    [--repeat 3] [--iters 20] [--csv FILE]

Each token picks top_k distinct experts, uniformly or skewed (the square of
a uniform draw: low experts busy, high ones often empty). A is (rows, k), the
experts' weights (experts, n, k) as nn.Linear stores them, passed to both
grouped products as w.transpose(-2, -1). Before timing, each backend's output
is compared with an fp32 product of the same bf16 operands (|d| <= 2e-2 +
2e-2 |ref| over the routed rows); a backend that fails is not timed. The
three take turns, each window `iters` calls between two CUDA events.
Columns: model, proj, tokens, routing, dtype, backend, run, ms (one call),
vs_torch_grouped, vs_cublas_loop (the other's median over this row's ms),
gbps (the used experts' weights once, A and C, over ms), tflops."""
import argparse
import csv
import statistics
import sys

import bench_timing  # python/bench_timing.py, beside this script

EXIT_NO_GPU = 77

# model, proj, experts, top_k, n, k (one expert: rows x k times (n x k)^T)
SHAPES = (
    ("deepseek-v3", "gate_up", 256, 8, 4096, 7168), ("deepseek-v3", "down", 256, 8, 7168, 2048),
    ("qwen3-30b-a3b", "gate_up", 128, 8, 1536, 2048), ("qwen3-30b-a3b", "down", 128, 8, 2048, 768),
    ("mixtral-8x7b", "gate_up", 8, 2, 28672, 4096), ("mixtral-8x7b", "down", 8, 2, 4096, 14336),
)
BACKENDS = ("hgemm", "torch_grouped", "cublas_loop")


def route(torch, tokens, experts, top_k, skewed, gen):
    """Rows per expert for `tokens` tokens, each on top_k distinct experts."""
    if skewed:
        score = torch.rand(tokens, experts, generator=gen, device="cuda") ** 2
        score = score * torch.linspace(2.0, 0.5, experts, device="cuda")  # low experts favoured
    else:
        score = torch.rand(tokens, experts, generator=gen, device="cuda")
    picked = score.topk(top_k, dim=1).indices
    return torch.bincount(picked.flatten(), minlength=experts)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", default="16,64,512,4096")
    parser.add_argument("--routing", default="uniform,skewed")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--models", default="", help="comma-separated model names (default: all)")
    parser.add_argument("--csv")
    args = parser.parse_args()
    try:
        import torch
        import torch.nn.functional as F
        import hgemm
        import hgemm.functional
    except ImportError as err:
        print(f"grouped_bench: needs torch and hgemm ({err})", file=sys.stderr)
        return EXIT_NO_GPU
    why = bench_timing.not_ready(torch, hgemm)
    if why:
        print(f"grouped_bench: {why}", file=sys.stderr)
        return EXIT_NO_GPU
    has_torch_grouped = hasattr(torch, "_grouped_mm")
    gen = torch.Generator(device="cuda").manual_seed(0)
    models = set(args.models.split(",")) if args.models else None
    rows_out = []
    for model, proj, experts, top_k, n, k in SHAPES:
        if models and model not in models:
            continue
        w = torch.randn(experts, n, k, device="cuda", generator=gen, dtype=torch.bfloat16) * k ** -0.5
        wt = w.transpose(-2, -1)  # (experts, k, n), n contiguous
        for tokens in (int(t) for t in args.tokens.split(",")):
            for routing in args.routing.split(","):
                count = route(torch, tokens, experts, top_k, routing == "skewed", gen)
                offs = count.cumsum(0).to(torch.int32)
                rows = int(offs[-1])
                sizes = count.tolist()
                a = torch.randn(rows, k, device="cuda", generator=gen, dtype=torch.bfloat16)
                used = sum(1 for c in sizes if c)

                def loop():
                    out = a.new_empty(rows, n)
                    start = 0
                    for e, c in enumerate(sizes):
                        if c:
                            torch.mm(a[start:start + c], wt[e], out=out[start:start + c])
                        start += c
                    return out

                calls = {
                    "hgemm": lambda: hgemm.functional.grouped_mm(a, wt, offs=offs),
                    "torch_grouped": (lambda: torch._grouped_mm(a, wt, offs=offs)) if has_torch_grouped else None,
                    "cublas_loop": loop,
                }
                ref = torch.empty(rows, n, device="cuda", dtype=torch.float32)
                start = 0
                for e, c in enumerate(sizes):
                    if c:
                        ref[start:start + c] = a[start:start + c].float() @ wt[e].float()
                    start += c
                ok = {}
                for name, fn in calls.items():
                    if fn is None:
                        ok[name] = False
                        continue
                    err = (fn().float() - ref).abs()
                    ok[name] = bool((err <= 2e-2 + 2e-2 * ref.abs()).all())
                    if not ok[name]:
                        print(f"FAIL {name} {model} {proj} {tokens} {routing}: max error {err.max().item():.3e}")
                del ref
                times = {name: [] for name in calls}
                for _ in range(args.repeat):
                    for name, fn in calls.items():  # in turns
                        if not ok[name]:
                            continue
                        times[name].append(bench_timing.mean_ms(torch, fn, 1, args.iters))
                med = {name: statistics.median(v) for name, v in times.items() if v}
                weight_bytes = used * n * k * 2
                io_bytes = weight_bytes + rows * (k + n) * 2
                flops = 2.0 * rows * n * k
                for name, v in times.items():
                    for r, ms in enumerate(v):
                        rows_out.append((model, proj, tokens, routing, "bf16", name, r + 1, ms,
                                         med["torch_grouped"] / ms if "torch_grouped" in med else float("nan"),
                                         med["cublas_loop"] / ms if "cublas_loop" in med else float("nan"),
                                         io_bytes / ms / 1e6, flops / ms / 1e9))
                line = " ".join(f"{name} {med[name] * 1e3:8.1f} us" for name in calls if name in med)
                print(f"{model:14} {proj:7} {tokens:6} {routing:8} rows {rows:7} experts used {used:3}: {line}",
                      flush=True)
        del w, wt
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}")
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            f.write("# tool: python/grouped_bench.py\n")
            f.write(f"# gpu: {torch.cuda.get_device_name()}\n")
            f.write(f"# torch: {torch.__version__}\n")
            f.write("# command: " + " ".join(sys.argv) + "\n")
            f.write("# ms: one call; gbps: the used experts' weights once, A and C; vs_*: that backend's "
                    "median over this row's ms\n")
            out = csv.writer(f)
            out.writerow(("model", "proj", "tokens", "routing", "dtype", "backend", "run", "ms",
                          "vs_torch_grouped", "vs_cublas_loop", "gbps", "tflops"))
            for row in rows_out:
                out.writerow(row[:7] + tuple(f"{x:.5g}" for x in row[7:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
