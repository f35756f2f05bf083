"""A Llama-shaped model with its linear layers through hgemm, beside torch.

    python3 python/llama_e2e.py [--layers 4] [--prefill 2048] [--decode 32] [--dtype f16|bf16] [--csv FILE]

What a user who puts hgemm under a transformer sees. The model is built from
a Llama 3 8B configuration (hidden 4096, intermediate 14336, 32 heads, 8 KV
heads, vocabulary 128256) with random weights and fewer layers (nothing is
downloaded), in fp16 or bf16 (--dtype) on the GPU. Every nn.Linear of the
decoder layers and the LM head then runs as torch does it (cuBLAS through
F.linear) or through hgemm (x @ W.T, HGEMM_KERNEL_AUTO: fp32 accumulation),
three ways: "hgemm", hgemm.linear, a plain function that calls the library
from eager PyTorch; "hgemm-ws", the same with a workspace (hgemm.workspace(),
one for the model: V8 and AUTO may then split a product's last round of
tiles, or a few long tiles, over every SM); and "hgemm-op", the custom ops that torch.compile
traces (torch.ops.hgemm.nt in fp16, torch.ops.hgemm.matmul with W.T as a
transposed view, no copy, in bf16), which pass through the torch
dispatcher on every call.

Measured, for each backend, after warm-up, with CUDA events, the median and
range over --repeats repeats:
  - prefill: one forward pass over a batch of 1 x --prefill tokens
    (the GEMMs are m = prefill tokens against the weights);
  - decode: --decode single-token steps with a KV cache (m = 1: GEMV-shaped
    products, bound by reading the weights).
  - decode-gemms: one decode step's linear layers alone (every nn.Linear of
    the model, m = 1, the weights read from HBM: 2.8 GB at 4 layers),
    captured once in a CUDA graph and replayed 10 times per repeat, so
    Python's per-call cost is out of it: what a server that replays its
    decode step from a graph would see of the GEMMs.
  - linear-host-call: host time of one call of the first layer's q_proj at
    m = 1 (300 calls in a row, no synchronization inside: what Python,
    the torch dispatcher and the library cost per linear layer before the
    GPU sees it), in the CSV's ms column;
  - host-direct, host-direct-plain, host-empty, host-library: the same
    call's parts (F.linear and hgemm.linear without the nn.Module around
    them; hgemm.linear on a plain tensor instead of the nn.Parameter; its
    output allocation; its ctypes call into hgemm_nt alone, fp16 only).
Accuracy: the prefill logits of both backends against a third pass with the
linear layers in fp32 (weights upcast), as max and mean absolute error.

--csv FILE writes one row per (backend, phase, repeat) with ms and tokens/s,
after `# key: value` metadata. Exits 2 without torch, transformers or an sm_90 GPU.
"""
import argparse
import datetime
import statistics
import sys
import time

import bench_timing  # python/bench_timing.py, beside this script

import hgemm

EXIT_NO_GPU = 2
# torch (cuBLAS through F.linear); hgemm.linear (eager, no dispatcher); torch.ops.hgemm (the
# custom ops, what torch.compile calls)
BACKENDS = ("torch", "hgemm", "hgemm-ws", "hgemm-op")
LLAMA3_8B = dict(hidden_size=4096, intermediate_size=14336, num_attention_heads=32,
                 num_key_value_heads=8, vocab_size=128256, max_position_embeddings=8192,
                 rope_theta=500000.0, rms_norm_eps=1e-5)


def linear_backend(torch, model, backend, dtype):
    """Route every nn.Linear's forward through `backend` ("torch", "hgemm", "hgemm-ws",
    "hgemm-op", "fp32")."""
    import torch.nn.functional as F
    ws = hgemm.workspace() if backend == "hgemm-ws" else None  # every call runs on one stream

    def make(layer):
        weight = layer.weight
        if backend == "torch":
            return lambda x: F.linear(x, weight, layer.bias)
        if backend == "fp32":
            w32 = weight.float()
            return lambda x: F.linear(x.float(), w32).to(x.dtype)

        if backend == "hgemm":
            return lambda x: hgemm.linear(x, weight)
        if backend == "hgemm-ws":
            return lambda x: hgemm.linear(x, weight, workspace=ws)

        def through_op(x):
            x2 = x.reshape(-1, x.shape[-1])
            if not x2.is_contiguous():
                x2 = x2.contiguous()
            if dtype == torch.float16:
                y = torch.ops.hgemm.nt(x2, weight, 1.0, "auto")
            else:
                y = torch.ops.hgemm.matmul(x2, weight.t(), 1.0, "auto")
            return y.reshape(*x.shape[:-1], weight.shape[0])
        return through_op

    for module in model.modules():
        if isinstance(module, torch.nn.Linear):
            module.forward = make(module)


def timed(torch, fn, warmup, repeats):
    """Milliseconds of fn(), one value per repeat, after warm-up."""
    return bench_timing.each_ms(torch, fn, warmup, repeats)


def host_ms_per_call(torch, model, repeats, dtype, calls=300):
    """Host ms per call of the first linear layer at m = 1, one value per repeat."""
    layer = next(mod for mod in model.modules() if isinstance(mod, torch.nn.Linear))
    x = torch.randn(1, layer.in_features, device="cuda", dtype=dtype)
    out = []
    for _ in range(repeats):
        layer(x)
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(calls):
            layer(x)
        out.append((time.perf_counter() - start) / calls * 1e3)
        torch.cuda.synchronize()
    return out


def host_pieces(torch, model, repeats, dtype, calls=300):
    """Where a linear call's host time goes, at m = 1 on the first linear layer:
    ms per call of F.linear and hgemm.linear called directly (no nn.Module
    around them), and of two parts of hgemm.linear alone: the output's
    torch.empty and the library call (ctypes into hgemm_nt, its arguments
    computed beforehand); and hgemm.linear on the weight as a plain tensor
    (w.detach()) instead of the layer's nn.Parameter. Rows (backend, phase,
    values), one value per repeat."""
    import torch.nn.functional as F
    layer = next(mod for mod in model.modules() if isinstance(mod, torch.nn.Linear))
    w = layer.weight
    plain = w.detach()  # the weight as a plain torch.Tensor, not an nn.Parameter
    x = torch.randn(1, layer.in_features, device="cuda", dtype=dtype)
    out = torch.empty((1, w.shape[0]), device="cuda", dtype=dtype)
    index = x.get_device()
    stream = torch.cuda.current_stream(index).cuda_stream
    lib, auto = hgemm._load(), hgemm._kernel_table()["auto"]
    ld_out = hgemm._torch._one_row_ld(w.shape[0])
    args = (auto, 1, w.shape[0], w.shape[1], 1.0, x.data_ptr(), w.shape[1], w.data_ptr(), w.shape[1],
            0.0, out.data_ptr(), ld_out, stream)
    pieces = [("torch", "host-direct", lambda: F.linear(x, w)),
              ("hgemm", "host-direct", lambda: hgemm.linear(x, w)),
              ("hgemm", "host-direct-plain", lambda: hgemm.linear(x, plain)),
              ("hgemm", "host-empty", lambda: torch.empty((1, w.shape[0]), dtype=dtype, device=index))]
    if dtype == torch.float16:  # hgemm_nt is the fp16 call
        pieces.append(("hgemm", "host-library", lambda: lib.hgemm_nt(*args)))
    rows = []
    for backend, phase, fn in pieces:
        values = []
        for _ in range(repeats):
            fn()
            torch.cuda.synchronize()
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            values.append((time.perf_counter() - start) / calls * 1e3)
            torch.cuda.synchronize()
        rows.append((backend, phase, values))
    return rows


def decode_gemms(torch, model, repeats, dtype, replays=10):
    """ms per decode step of the model's linear layers at m = 1, from a CUDA graph."""
    linears = [mod for mod in model.modules() if isinstance(mod, torch.nn.Linear)]
    xs = [torch.randn(1, mod.in_features, device="cuda", dtype=dtype) for mod in linears]

    def step():
        return [mod(x) for mod, x in zip(linears, xs)]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up off the capture, as torch.cuda.graph asks
        step()
        step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        outs = step()

    def replay():
        for _ in range(replays):
            graph.replay()
    ms = [t / replays for t in timed(torch, replay, warmup=1, repeats=repeats)]
    del outs, graph
    return ms


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--prefill", type=int, default=2048)
    parser.add_argument("--decode", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--dtype", choices=("f16", "bf16"), default="f16")
    parser.add_argument("--csv")
    args = parser.parse_args()
    try:
        import torch
        from transformers import LlamaConfig, LlamaForCausalLM
    except ImportError as err:
        print(f"llama_e2e: needs torch and transformers ({err})", file=sys.stderr)
        return EXIT_NO_GPU
    why = bench_timing.not_ready(torch)
    if why:
        print(f"llama_e2e: {why}", file=sys.stderr)
        return EXIT_NO_GPU

    torch.manual_seed(0)
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float16
    config = LlamaConfig(num_hidden_layers=args.layers, **LLAMA3_8B)
    with torch.device("cuda"):
        model = LlamaForCausalLM(config).to(dtype).eval()
    tokens = torch.randint(0, config.vocab_size, (1, args.prefill), device="cuda")

    rows, logits = [], {}
    with torch.inference_mode():
        for backend in ("fp32",) + BACKENDS:
            linear_backend(torch, model, backend, dtype)
            logits[backend] = model(tokens).logits.float()
            if backend == "fp32":
                continue
            prefill = timed(torch, lambda: model(tokens), warmup=2, repeats=args.repeats)

            def decode():
                out = model(tokens[:, :256], use_cache=True)
                past, nxt = out.past_key_values, tokens[:, 256:257]
                for _ in range(args.decode):
                    out = model(nxt, past_key_values=past, use_cache=True)
                    past = out.past_key_values
            # decode time: the whole loop less its 256-token prompt, per step
            prompt = timed(torch, lambda: model(tokens[:, :256], use_cache=True), 2, args.repeats)
            loop = timed(torch, decode, warmup=1, repeats=args.repeats)
            steps = [(l - p) / args.decode for l, p in zip(loop, prompt)]
            gemms = decode_gemms(torch, model, args.repeats, dtype)
            for r, host in enumerate(host_ms_per_call(torch, model, args.repeats, dtype)):
                rows.append((backend, "linear-host-call", r + 1, host, 0.0))
            for r, (pf, st, gm) in enumerate(zip(prefill, steps, gemms)):
                rows.append((backend, "prefill", r + 1, pf, args.prefill / pf * 1e3))
                rows.append((backend, "decode", r + 1, st, 1e3 / st))
                rows.append((backend, "decode-gemms", r + 1, gm, 1e3 / gm))

        for backend, phase, values in host_pieces(torch, model, args.repeats, dtype):
            rows.extend((backend, phase, r + 1, v, 0.0) for r, v in enumerate(values))

    ref = logits["fp32"]
    err = {b: ((logits[b] - ref).abs().max().item(), (logits[b] - ref).abs().mean().item())
           for b in BACKENDS}

    def med(backend, phase):
        v = [ms for b, p, _, ms, _ in rows if b == backend and p == phase]
        return statistics.median(v), min(v), max(v)

    print(f"Llama 3 8B shapes, {args.layers} layers, {args.dtype}, {torch.cuda.get_device_name()}")
    print(f"{'backend':8} {'prefill ms (' + str(args.prefill) + ' tok)':>26} {'decode ms/token':>24}"
          f" {'decode GEMMs ms (graph)':>26} {'max |err|':>10} {'mean |err|':>11}")
    for b in BACKENDS:
        p, d, g = med(b, "prefill"), med(b, "decode"), med(b, "decode-gemms")
        print(f"{b:8} {p[0]:9.3f} [{p[1]:.3f}..{p[2]:.3f}] {d[0]:8.3f} [{d[1]:.3f}..{d[2]:.3f}]"
              f" {g[0]:8.3f} [{g[1]:.3f}..{g[2]:.3f}] {err[b][0]:10.3e} {err[b][1]:11.3e}")
    for b in BACKENDS:
        h = med(b, "linear-host-call")
        print(f"{b:8} host time per linear-layer call (m = 1): {h[0] * 1e3:.1f} us "
              f"[{h[1] * 1e3:.1f}..{h[2] * 1e3:.1f}]")
    pieces = [("torch", "host-direct", "F.linear alone"), ("hgemm", "host-direct", "hgemm.linear alone"),
              ("hgemm", "host-direct-plain", "  on w.detach()"),
              ("hgemm", "host-empty", "  its torch.empty"), ("hgemm", "host-library", "  its library call")]
    for b, phase, what in pieces:
        if any(r[0] == b and r[1] == phase for r in rows):
            h = med(b, phase)
            print(f"{what:20} (m = 1): {h[0] * 1e3:.1f} us [{h[1] * 1e3:.1f}..{h[2] * 1e3:.1f}]")
    tp, td, tg = med("torch", "prefill")[0], med("torch", "decode")[0], med("torch", "decode-gemms")[0]
    for b in BACKENDS[1:]:
        hp, hd, hg = med(b, "prefill")[0], med(b, "decode")[0], med(b, "decode-gemms")[0]
        print(f"{b} vs torch: prefill {tp / hp:.3f}x, decode {td / hd:.3f}x, decode GEMMs from a "
              f"graph {tg / hg:.3f}x (above 1: hgemm faster)")

    if args.csv:
        with open(args.csv, "w") as f:
            f.write("# tool: python/llama_e2e.py\n")
            f.write(f"# gpu: {torch.cuda.get_device_name()}\n")
            f.write(f"# torch: {torch.__version__}, CUDA {torch.version.cuda}\n")
            f.write(f"# model: Llama 3 8B shapes, {args.layers} layers, random weights, {args.dtype}\n")
            f.write(f"# prefill_tokens: {args.prefill}\n# decode_steps: {args.decode}\n")
            f.write(f"# date: {datetime.datetime.now(datetime.timezone.utc).isoformat()}\n")
            f.write(f"# command: {' '.join(sys.argv)}\n")
            f.write("backend,phase,run,ms,tokens_per_s,max_abs_err_logits,mean_abs_err_logits\n")
            for b, p, r, ms, tps in rows:
                f.write(f"{b},{p},{r},{ms:.4f},{tps:.2f},{err[b][0]:.4e},{err[b][1]:.4e}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
