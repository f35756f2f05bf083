"""A Llama-shaped model with its linear layers on hgemm's torch operators, beside torch.

    python3 python/torch_e2e.py [--layers 4] [--dtypes f16,bf16] [--compile] [--train] [--csv FILE]

The model is transformers' Llama from a Llama 3 8B configuration (hidden 4096,
intermediate 14336, 32 heads, 8 KV heads, vocabulary 128256) with random
weights and --layers layers; nothing is downloaded. Two backends, on the same
model object: "torch" (nn.Linear: cuBLAS) and "hgemm" (every nn.Linear made
an hgemm.nn.Linear: torch.ops.hgemm.linear, AUTO, fp32 accumulation; with
--swap-only q_proj,lm_head,... only the layers of those names, to find which
products a step's difference comes from), eager and, with --compile, under
torch.compile (inductor, dynamic shapes).

Phases, each timed with CUDA events after warm-up, --repeats times, the two
backends alternating within each repeat, torch first in odd repeats and hgemm
first in even ones (so that both see the same clocks and neither always
follows the other):
  - prefill B x S: one forward pass over B sequences of S tokens;
  - decode B: one token per sequence with a KV cache of --prompt tokens
    (per step: CUDA events around --decode-steps steps after an untimed
    prompt; the median of --decode-loops such loops);
  - train (--train, bf16): forward, backward and AdamW over 4 x 2048 tokens.
  - host: microseconds per call at 1 x 4096 x 4096 (300 calls, no sync inside)
    of F.linear, nn.Linear, torch.ops.hgemm.linear, hgemm.nn.Linear and the
    ctypes hgemm.linear path.
--phases and --prefill narrow the run (e.g. --phases prefill --prefill 1x4096);
--profile BxS prints, for each backend, the CUDA kernels of one prefill of
that size by total time (torch.profiler), to say where a difference lies.
Accuracy: the logits of the first prefill phase against the same model with
fp32 linear layers, for both backends (max |error|); for train, the loss after
--train-steps steps on a fixed seed (each train row its step's loss).

--csv FILE: one row per (dtype, phase, batch, seq, backend, mode, run):
dtype,phase,batch,seq,backend,mode,run,ms,vs_torch,max_abs_logit_err,loss.
Exits 2 without torch, transformers, hgemm's native operators or an sm_90 GPU.
"""
import argparse
import datetime
import os
import statistics
import subprocess
import sys
import time

import bench_timing  # python/bench_timing.py, beside this script

EXIT_NO_GPU = 77  # as the other measurement scripts and the GPU tests
LLAMA3_8B = dict(hidden_size=4096, intermediate_size=14336, num_attention_heads=32,
                 num_key_value_heads=8, vocab_size=128256, max_position_embeddings=8192,
                 rope_theta=500000.0, rms_norm_eps=1e-5)
PREFILL = ((1, 300), (4, 1024), (1, 4096))
DECODE = (1, 16, 64)


def events_ms(torch, fn, warmup=2, iters=1):
    """The median of `iters` timings of fn (CUDA events), after `warmup` calls."""
    return statistics.median(bench_timing.each_ms(torch, fn, warmup, iters))


class Backends:
    """One model; its nn.Linear layers switched between torch and hgemm."""

    def __init__(self, torch, hgemm_nn, model, only=None):
        self.torch, self.model = torch, model
        # only: name endings (q_proj, lm_head, ...); the other layers stay torch's under "hgemm"
        self.linears = [m for name, m in model.named_modules() if type(m) is torch.nn.Linear
                        and (only is None or name.split(".")[-1] in only)]
        if only is not None and not self.linears:
            raise SystemExit("torch_e2e: --swap-only %s names no linear layer of the model" % ",".join(only))
        self.hgemm_cls, self.torch_cls = hgemm_nn.Linear, torch.nn.Linear
        # swap_linears as a user calls it (every layer), then back to torch's class but for use("hgemm")
        swapped, skipped = hgemm_nn.swap_linears(model)
        if skipped:
            raise RuntimeError("layers hgemm does not take: %s" % skipped)
        for m in model.modules():
            if type(m) is hgemm_nn.Linear:
                m.__class__ = torch.nn.Linear
        self.use("torch")

    def use(self, backend):
        cls = self.hgemm_cls if backend == "hgemm" else self.torch_cls
        for m in self.linears:
            m.__class__ = cls


def order(r):
    """The backends in repeat r: torch first in odd repeats (r = 0, 2, ...), hgemm first in even."""
    return ("torch", "hgemm") if r % 2 == 0 else ("hgemm", "torch")


def profile_prefill(torch, backends, fwd, t, dname, size, top=15):
    """Each backend's CUDA kernels of one forward over t, by total time."""
    from torch.profiler import ProfilerActivity, profile
    for backend in ("torch", "hgemm"):
        backends.use(backend)
        for _ in range(2):
            fwd(t)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fwd(t)
            torch.cuda.synchronize()
        events = [e for e in prof.key_averages() if e.device_type == torch.autograd.DeviceType.CUDA]
        events.sort(key=lambda e: -e.device_time_total)
        total = sum(e.device_time_total for e in events)
        print(f"profile {dname} prefill {size[0]}x{size[1]} {backend}: kernels {total / 1e3:.3f} ms in all")
        for e in events[:top]:
            print(f"  {e.device_time_total / 1e3:9.3f} ms {e.count:5d}x  {e.key[:110]}")


def host_us(torch, hgemm, dtype, repeats, calls=300):
    """Microseconds per call at 1 x 4096 x 4096, one list per path."""
    import torch.nn.functional as F
    import hgemm.nn
    lin = torch.nn.Linear(4096, 4096, bias=False, device="cuda", dtype=dtype)
    hl = hgemm.nn.Linear(4096, 4096, bias=False, device="cuda", dtype=dtype)
    w = lin.weight.detach()
    x = torch.randn(1, 4096, device="cuda", dtype=dtype)
    op = torch.ops.hgemm.linear
    paths = [("F.linear", lambda: F.linear(x, w)),
             ("nn.Linear", lambda: lin(x)),
             ("torch.ops.hgemm.linear", lambda: op(x, w)),
             ("hgemm.nn.Linear", lambda: hl(x)),
             ("hgemm.linear", lambda: hgemm.linear(x, w)),
             ("hgemm.linear-ctypes", lambda: hgemm.linear(x, w, workspace=ws))]
    ws = hgemm.workspace()
    out = {name: [] for name, _ in paths}
    with torch.inference_mode():
        for _ in range(repeats):
            for name, fn in paths:  # interleaved: each repeat measures every path once
                for _ in range(20):
                    fn()
                torch.cuda.synchronize()
                t = time.perf_counter()
                for _ in range(calls):
                    fn()
                out[name].append((time.perf_counter() - t) / calls * 1e6)
                torch.cuda.synchronize()
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--dtypes", default="f16,bf16")
    parser.add_argument("--prompt", type=int, default=128, help="KV cache length before decode")
    parser.add_argument("--decode-steps", type=int, default=16)
    parser.add_argument("--decode-loops", type=int, default=5,
                        help="decode loops (and prompts) a repeat times: the medians' difference")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--compile", action="store_true", help="also under torch.compile")
    parser.add_argument("--compile-dtypes", default="f16,bf16", help="the dtypes --compile applies to")
    parser.add_argument("--train", action="store_true", help="also a bf16 training step")
    parser.add_argument("--train-steps", type=int, default=10)
    parser.add_argument("--swap-only", default="",
                        help="comma-separated layer names (q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, "
                             "down_proj, lm_head): only those run on hgemm under the hgemm backend")
    parser.add_argument("--phases", default="host,prefill,decode",
                        help="comma-separated: host, prefill, decode (train: --train)")
    parser.add_argument("--prefill", default=",".join("%dx%d" % p for p in PREFILL),
                        help="prefill sizes BxS, comma-separated")
    parser.add_argument("--profile", default="", help="BxS: each backend's kernels of one prefill of that size")
    parser.add_argument("--csv")
    args = parser.parse_args()
    only = set(args.swap_only.split(",")) if args.swap_only else None
    phases = set(args.phases.split(","))
    unknown = phases - {"host", "prefill", "decode"}
    if unknown:
        parser.error("unknown phase(s): %s" % ",".join(sorted(unknown)))
    try:
        prefill = [tuple(int(v) for v in p.split("x")) for p in args.prefill.split(",")]
        profile = tuple(int(v) for v in args.profile.split("x")) if args.profile else None
        if any(len(p) != 2 or min(p) < 1 for p in prefill + ([profile] if profile else [])):
            raise ValueError
    except ValueError:
        parser.error("--prefill and --profile take sizes BxS of positive integers, e.g. 1x4096")
    try:
        import torch
        from transformers import LlamaConfig, LlamaForCausalLM
        import hgemm
        import hgemm.nn
    except ImportError as err:
        print(f"torch_e2e: needs torch, transformers and hgemm ({err})", file=sys.stderr)
        return EXIT_NO_GPU
    why = bench_timing.not_ready(torch, hgemm)
    if why:
        print(f"torch_e2e: {why}", file=sys.stderr)
        return EXIT_NO_GPU

    rows = []  # (dtype, phase, batch, seq, backend, mode, run, ms, err, loss)
    names = {"f16": torch.float16, "bf16": torch.bfloat16}
    for dname in args.dtypes.split(","):
        dtype = names[dname]
        for name, values in (host_us(torch, hgemm, dtype, args.repeats) if "host" in phases else {}).items():
            rows.extend((dname, "host", 1, 4096, name, "eager", r + 1, v / 1e3, float("nan"), float("nan"))
                        for r, v in enumerate(values))
        torch.manual_seed(0)
        config = LlamaConfig(num_hidden_layers=args.layers, **LLAMA3_8B)
        with torch.device("cuda"):
            model = LlamaForCausalLM(config).to(dtype).eval()
        b = Backends(torch, hgemm.nn, model, only)
        gen = torch.Generator(device="cuda").manual_seed(1)

        def tokens(batch, seq):
            return torch.randint(0, config.vocab_size, (batch, seq), device="cuda", generator=gen)

        # Accuracy: the first prefill's logits against fp32 linear layers.
        first = tokens(*prefill[0])
        err = {}
        with torch.inference_mode():
            with torch.device("cuda"):
                ref_model = LlamaForCausalLM(config)
            ref_model.load_state_dict(model.state_dict())
            ref_model = ref_model.float()
            ref = ref_model(first).logits.float()
            del ref_model
            for backend in ("torch", "hgemm"):
                b.use(backend)
                err[backend] = (model(first).logits.float() - ref).abs().max().item()
            del ref
        torch.cuda.empty_cache()

        modes = [("eager", model)]
        if args.compile and dname in args.compile_dtypes.split(","):
            modes.append(("compile", torch.compile(model, dynamic=True)))
        for mode, fwd in modes:
            with torch.inference_mode():
                for batch, seq in (prefill if "prefill" in phases else []):
                    t = tokens(batch, seq)
                    for r in range(args.repeats):
                        for backend in order(r):
                            b.use(backend)
                            ms = events_ms(torch, lambda: fwd(t))
                            rows.append((dname, "prefill", batch, seq, backend, mode, r + 1, ms,
                                         err[backend] if (batch, seq) == prefill[0] else float("nan"),
                                         float("nan")))
                for batch in (DECODE if "decode" in phases else []):
                    prompt, nxt = tokens(batch, args.prompt), tokens(batch, 1)

                    def decode_ms():
                        # the prompt untimed; events around the decode steps alone
                        past = fwd(prompt, use_cache=True).past_key_values
                        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                        start.record()
                        for _ in range(args.decode_steps):
                            past = fwd(nxt, past_key_values=past, use_cache=True).past_key_values
                        stop.record()
                        torch.cuda.synchronize()
                        return start.elapsed_time(stop) / args.decode_steps
                    for r in range(args.repeats):
                        for backend in order(r):
                            b.use(backend)
                            decode_ms()  # warm-up
                            step = statistics.median(decode_ms() for _ in range(args.decode_loops))
                            rows.append((dname, "decode", batch, 1, backend, mode, r + 1, step,
                                         float("nan"), float("nan")))
                if profile and mode == "eager":
                    profile_prefill(torch, b, fwd, tokens(*profile), dname, profile)
        del modes
        if args.train and dtype == torch.bfloat16:
            model.train()
            batch, seq = 4, 2048
            data = tokens(batch, seq)
            init = {k: v.clone() for k, v in model.state_dict().items()}
            for backend in ("torch", "hgemm"):
                model.load_state_dict(init)
                b.use(backend)
                opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
                torch.manual_seed(2)
                losses, times = [], []
                for s in range(args.train_steps):
                    def step():
                        opt.zero_grad(set_to_none=True)
                        loss = model(data, labels=data).loss
                        loss.backward()
                        opt.step()
                        return loss
                    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    start.record()
                    loss = step()
                    stop.record()
                    torch.cuda.synchronize()
                    times.append(start.elapsed_time(stop))
                    losses.append(loss.item())
                print(f"train {backend}: loss by step " + " ".join(f"{x:.4f}" for x in losses))
                for r, ms in enumerate(times[2:]):  # the first two steps warm up; each row its step's loss
                    rows.append((dname, "train", batch, seq, backend, "eager", r + 1, ms, float("nan"),
                                 losses[r + 2]))
                del opt
            model.eval()
        del model, b
        torch.cuda.empty_cache()

    # vs_torch: torch's median over the phase's runs / this row's ms.
    def key(row):
        return row[:4] + row[5:6]
    torch_ms = {}
    for row in rows:
        if row[4] == "torch" or (row[1] == "host" and row[4] == "F.linear"):
            torch_ms.setdefault(key(row), []).append(row[7])
    base = {k: statistics.median(v) for k, v in torch_ms.items()}

    print(f"Llama 3 8B shapes, {args.layers} layers, {torch.cuda.get_device_name()}, torch {torch.__version__}")
    groups = {}
    for row in rows:
        groups.setdefault(key(row) + (row[4],), []).append(row)
    for k, rs in groups.items():
        dname, phase, batch, seq, mode, backend = k
        ms = [r[7] for r in rs]
        ratios = [base[key(r)] / r[7] for r in rs]
        unit, scale = ("us", 1e3) if phase == "host" else ("ms", 1.0)
        extra = ""
        if rs[0][8] == rs[0][8]:
            extra += f" max|err| {rs[0][8]:.3e}"
        if rs[0][9] == rs[0][9]:
            extra += f" loss {rs[0][9]:.4f}"
        print(f"{dname:4} {phase:7} {batch:3} x {seq:5} {mode:7} {backend:24} "
              f"{statistics.median(ms) * scale:9.3f} {unit} [{min(ms) * scale:.3f}..{max(ms) * scale:.3f}] "
              f"vs torch {statistics.median(ratios):.3f}x [{min(ratios):.3f}..{max(ratios):.3f}]{extra}")

    if args.csv:
        with open(args.csv, "w") as f:
            f.write("# tool: python/torch_e2e.py\n")
            f.write(f"# gpu: {torch.cuda.get_device_name()}\n")
            f.write(f"# torch: {torch.__version__}, CUDA {torch.version.cuda}\n")
            f.write(f"# hgemm_ops: {path}\n")
            try:
                commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                        cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
            except OSError:
                commit = ""
            f.write(f"# git_commit: {commit or 'unknown'}\n")
            f.write(f"# model: Llama 3 8B shapes, {args.layers} layers, random weights\n")
            f.write(f"# hgemm backend: {'only ' + args.swap_only if args.swap_only else 'every'} linear layer\n")
            f.write(f"# decode: prompt {args.prompt} tokens (untimed), {args.decode_steps} steps timed; per repeat "
                    f"the median of {args.decode_loops} loops, per step\n")
            f.write("# order: torch first in odd runs, hgemm first in even runs\n")
            f.write("# vs_torch: the median of torch's runs (F.linear for host rows) over this row's ms\n")
            f.write(f"# date: {datetime.datetime.now(datetime.timezone.utc).isoformat()}\n")
            f.write(f"# command: {' '.join(sys.argv)}\n")
            f.write("dtype,phase,batch,seq,backend,mode,run,ms,vs_torch,max_abs_logit_err,loss\n")
            for r in rows:
                f.write(f"{r[0]},{r[1]},{r[2]},{r[3]},{r[4]},{r[5]},{r[6]},{r[7]:.5f},"
                        f"{base[key(r)] / r[7]:.4f},{r[8]:.4e},{r[9]:.5f}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
