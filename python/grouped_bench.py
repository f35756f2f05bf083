#!/usr/bin/env python3
"""hgemm.functional.grouped_mm beside torch._grouped_mm and a per-expert loop
of F.linear (cuBLAS, the sizes read on the host, what transformers' MoE code
runs), in one process, on mixture-of-experts shapes:

    python3 python/grouped_bench.py [--tokens 16,64,512,4096] [--routing uniform,skewed]
                                    [--dtype bf16|fp8] [--scaling block|row]
                                    [--repeat 3] [--iters 20] [--csv FILE]

--wgrad: the experts' weight gradients instead (dW_g = dY_g^T X_g over each
expert's rows, (experts, n, k)): torch.ops.hgemm.grouped_mm_k beside
torch._grouped_mm's 2D x 2D form (where torch has it) and a loop of torch.mm
over the non-empty groups; bf16.

--dtype fp8: the same experts in float8_e4m3fn (hgemm.functional.quantize_fp8:
--scaling block, DeepSeek-V3's 1 x 128 and 128 x 128 blocks, or row, one
scale per row of A and per column of each expert), hgemm.functional
.grouped_scaled_mm beside torch._scaled_grouped_mm (row scaling, where torch
has it) and a loop of torch._scaled_mm over the non-empty groups (each
group's scales laid out as torch takes them, before timing); the reference
is the fp32 product of the dequantized operands.

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


def wgrad_calls(torch, x, n, offs, sizes, gen, has_torch_grouped):
    """The weight-gradient backends: dW_g = dY_g^T X_g for dY (rows, n) and
    X (rows, k) = x, (experts, n, k); the fp32 reference."""
    rows, k = x.shape
    dy = torch.randn(rows, n, device="cuda", generator=gen, dtype=torch.bfloat16)
    experts = len(sizes)

    def loop():
        out = x.new_zeros(experts, n, k)
        start = 0
        for e, c in enumerate(sizes):
            if c:
                torch.mm(dy[start:start + c].t(), x[start:start + c], out=out[e])
            start += c
        return out

    calls = {
        "hgemm": lambda: torch.ops.hgemm.grouped_mm_k(dy, x, offs),
        "torch_grouped": (lambda: torch._grouped_mm(dy.t(), x, offs=offs)) if has_torch_grouped else None,
        "cublas_loop": loop,
    }
    ref = torch.zeros(experts, n, k, device="cuda", dtype=torch.float32)
    start = 0
    for e, c in enumerate(sizes):
        if c:
            ref[e] = dy[start:start + c].float().t() @ x[start:start + c].float()
        start += c
    return calls, ref


def fp8_calls(torch, hgemm, a, w, offs, sizes, scaling):
    """The fp8 backends over a (rows, k) and w (experts, n, k), both bf16,
    quantized here, and the fp32 reference of the dequantized operands."""
    HF = hgemm.functional
    experts, n, k = w.shape
    rows = a.shape[0]
    block = (1, 128) if scaling == "block" else (1, k)
    a8, sa = HF.quantize_fp8(a, block)
    w8, sw = [], []
    for e in range(experts):
        q, s = HF.quantize_fp8(w[e], (128, 128) if scaling == "block" else (1, k))
        w8.append(q)
        sw.append(s)
    w8 = torch.stack(w8)  # (experts, n, k)
    wt8 = w8.transpose(1, 2)  # each expert column-major, as torch takes it
    if scaling == "block":
        sb = torch.stack(sw).transpose(1, 2)  # (experts, kb, nb), each expert's the transposed view
        sa_g = sa
    else:
        sb = torch.stack([s.reshape(n) for s in sw])  # (experts, n)
        sa_g = sa.reshape(rows)
    # the loop's inputs, each group's in the layout torch._scaled_mm takes (made before timing)
    parts, start = [], 0
    for e, c in enumerate(sizes):
        if c:
            if scaling == "block":
                sa_e = sa[start:start + c].t().contiguous().t()  # (c, kb) of strides (1, c)
                sb_e = sb[e]
            else:
                sa_e = sa[start:start + c].contiguous()  # (c, 1)
                sb_e = sb[e].reshape(1, n)
            parts.append((start, c, a8[start:start + c], wt8[e], sa_e, sb_e))
        start += c

    def loop():
        out = torch.empty(rows, n, device="cuda", dtype=torch.bfloat16)
        for s0, c, a_e, b_e, sa_e, sb_e in parts:
            out[s0:s0 + c] = torch._scaled_mm(a_e, b_e, sa_e, sb_e, out_dtype=torch.bfloat16)
        return out

    calls = {
        "hgemm": lambda: HF.grouped_scaled_mm(a8, wt8, sa_g, sb, offs=offs),
        "torch_grouped": ((lambda: torch._scaled_grouped_mm(a8, wt8, sa_g, sb, offs=offs, out_dtype=torch.bfloat16))
                          if scaling == "row" and hasattr(torch, "_scaled_grouped_mm") else None),
        "cublas_loop": loop,
    }
    # dequantized, fp32
    if scaling == "block":
        xa = a8.float() * sa.repeat_interleave(128, dim=1)[:, :k]
    else:
        xa = a8.float() * sa
    ref = torch.empty(rows, n, device="cuda", dtype=torch.float32)
    start = 0
    for e, c in enumerate(sizes):
        if c:
            if scaling == "block":
                we = w8[e].float() * sw[e].repeat_interleave(128, dim=0)[:n].repeat_interleave(128, dim=1)[:, :k]
            else:
                we = w8[e].float() * sw[e]
            ref[start:start + c] = xa[start:start + c] @ we.t()
        start += c
    return calls, ref


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", default="16,64,512,4096")
    parser.add_argument("--routing", default="uniform,skewed")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--models", default="", help="comma-separated model names (default: all)")
    parser.add_argument("--dtype", choices=("bf16", "fp8"), default="bf16")
    parser.add_argument("--wgrad", action="store_true", help="the weight gradients, grouped along the rows")
    parser.add_argument("--scaling", choices=("block", "row"), default="block", help="--dtype fp8's scales")
    parser.add_argument("--csv")
    args = parser.parse_args()
    if args.wgrad and args.dtype != "bf16":
        parser.error("--wgrad measures bf16 weight gradients only")
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

                if args.wgrad:
                    calls, ref = wgrad_calls(torch, a, n, offs, sizes, gen, has_torch_grouped)
                elif args.dtype == "fp8":
                    calls, ref = fp8_calls(torch, hgemm, a, w, offs, sizes, args.scaling)
                else:
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
                    try:
                        err = (fn().float() - ref).abs()
                    except RuntimeError as e:  # a layout or type this torch does not take
                        print(f"SKIP {name} {model} {proj} {tokens} {routing}: {str(e).splitlines()[0]}")
                        ok[name] = False
                        continue
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
                eb = 1 if args.dtype == "fp8" and not args.wgrad else 2  # bytes an element of A and the weights
                weight_bytes = (experts if args.wgrad else used) * n * k * eb  # wgrad: every expert's dW written
                io_bytes = weight_bytes + rows * k * eb + rows * n * 2
                flops = 2.0 * rows * n * k
                for name, v in times.items():
                    for r, ms in enumerate(v):
                        rows_out.append((model, proj if not args.wgrad else proj + "_wgrad", tokens, routing,
                                         "bf16" if args.wgrad else args.dtype, name, r + 1, ms,
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
            if args.dtype == "fp8":
                f.write(f"# fp8: float8_e4m3fn, {args.scaling} scales; torch_grouped is torch._scaled_grouped_mm, "
                        "cublas_loop a loop of torch._scaled_mm over the non-empty groups\n")
            out = csv.writer(f)
            out.writerow(("model", "proj", "tokens", "routing", "dtype", "backend", "run", "ms",
                          "vs_torch_grouped", "vs_cublas_loop", "gbps", "tflops"))
            for row in rows_out:
                out.writerow(row[:7] + tuple(f"{x:.5g}" for x in row[7:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
