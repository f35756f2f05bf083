#!/usr/bin/env python3
"""A mixture-of-experts model from transformers' code (Qwen3-MoE, Qwen3-30B-A3B
shapes, a few layers, random weights, nothing downloaded) with its experts in
one grouped product per projection, through hgemm.functional.grouped_mm or
torch._grouped_mm, beside each other and beside transformers' own expert loop:

    python3 python/moe_e2e.py [--layers 2] [--repeats 3] [--train] [--csv FILE]

Every sparse MoE block is replaced by one that routes as transformers does
(softmax, top-k, renormalised where the config says so), sorts the token
copies by expert, runs gate+up (one (experts, 2 * width, hidden) weight), SiLU
times up, then down, both as grouped products over int32 end offsets on the
device, and adds the weighted rows back. Prefill (1 x 512, 4 x 1024) and decode
(batch 1 and 16 after a 128-token prompt: CUDA events around 16 steps, the
prompt untimed) are timed with CUDA events; the logits of the first prefill
are compared with transformers' loop in fp32 weights (max |error|).

--train: a bf16 training step (4 x 512 tokens, AdamW) with the experts'
weights as parameters, their gradients through each backend's grouped
products (hgemm: the weight gradient grouped along the rows, one launch);
the experts' gradients after the first step compared between the two
backends (max |d| over max |g|), the loss of every step printed, steps
from the third on timed. Columns: phase, batch, seq, backend, run, ms,
vs_torch_grouped, max_abs_logit_err (train rows: the step's loss)."""
import argparse
import csv
import statistics
import sys

import bench_timing  # python/bench_timing.py, beside this script

EXIT_NO_GPU = 77
QWEN3_30B_A3B = dict(hidden_size=2048, moe_intermediate_size=768, num_experts=128, num_experts_per_tok=8,
                     num_attention_heads=32, num_key_value_heads=4, head_dim=128, intermediate_size=6144,
                     vocab_size=151936, norm_topk_prob=True, max_position_embeddings=4096)
PREFILL = ((1, 512), (4, 1024))
DECODE = (1, 16)


def experts_of(block, torch):
    """The block's router weight (experts, hidden) and its experts as two
    stacked weights: gate+up (experts, 2 * width, hidden), down (experts,
    hidden, width); from a list of MLPs or from fused parameters."""
    router = block.gate.weight
    ex = block.experts
    if isinstance(ex, torch.nn.ModuleList):
        gate_up = torch.stack([torch.cat([e.gate_proj.weight, e.up_proj.weight], 0) for e in ex])
        down = torch.stack([e.down_proj.weight for e in ex])
    else:  # fused: gate_up_proj (experts, 2 * width, hidden) or (experts, hidden, 2 * width)
        gate_up, down = ex.gate_up_proj, ex.down_proj
        if gate_up.shape[1] == router.shape[1]:
            gate_up = gate_up.transpose(1, 2)
        if down.shape[2] == router.shape[1]:
            down = down.transpose(1, 2)
    return router, gate_up.detach().contiguous(), down.detach().contiguous()


def expert_weights(torch, blocks):
    """Each block's experts as two parameters, gate+up and down (shared by the
    backends' blocks, so that both train the same weights)."""
    out = []
    for blk in blocks:
        _, gate_up, down = experts_of(blk, torch)
        out.append((torch.nn.Parameter(gate_up), torch.nn.Parameter(down)))
    return out


def make_block(torch, F, block, config, grouped, weights):
    router = block.gate.weight
    gate_up, down = weights
    experts, top_k, norm = config.num_experts, config.num_experts_per_tok, config.norm_topk_prob
    width = down.shape[2]

    class GroupedMoe(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.gate_up, self.down = gate_up, down

        def forward(self, hidden):
            shape = hidden.shape
            x = hidden.reshape(-1, shape[-1])
            probs = F.softmax(F.linear(x, router), dim=1, dtype=torch.float)
            weight, chosen = probs.topk(top_k, dim=-1)
            if norm:
                weight = weight / weight.sum(dim=-1, keepdim=True)
            order = chosen.flatten().argsort(stable=True)
            token = order // top_k
            offs = torch.bincount(chosen.flatten(), minlength=experts).cumsum(0).to(torch.int32)
            rows = x[token]
            h = grouped(rows, self.gate_up.transpose(1, 2), offs)
            h = F.silu(h[:, :width]) * h[:, width:]
            y = grouped(h, self.down.transpose(1, 2), offs)
            y = y * weight.flatten()[order].to(y.dtype).unsqueeze(1)
            out = torch.zeros_like(x).index_add_(0, token, y)
            return out.reshape(shape)

    return GroupedMoe()


def train(torch, model, use, weights, tokens, steps):
    """Rows of the training step for hgemm and torch_grouped from the same
    weights and data; prints each step's loss and the experts' gradients'
    difference after the first step."""
    model.train()
    seen, params = set(), []
    for p in list(model.parameters()) + [p for pair in weights for p in pair]:  # each once
        if id(p) not in seen:
            seen.add(id(p))
            params.append(p)
    init = [p.detach().clone() for p in params]
    data = tokens(4, 512)
    out, first_grads = [], {}
    for name in ("torch_grouped", "hgemm"):
        with torch.no_grad():
            for p, v in zip(params, init):
                p.copy_(v)
        use(name)
        opt = torch.optim.AdamW(params, lr=1e-4, fused=True)
        losses, times = [], []
        for s in range(steps):
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            opt.zero_grad(set_to_none=True)
            loss = model(data, labels=data).loss
            loss.backward()
            if s == 0:
                first_grads[name] = [p.grad.detach().clone() for pair in weights for p in pair]
            opt.step()
            stop.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(stop))
            losses.append(loss.item())
        print(f"train {name}: loss by step " + " ".join(f"{x:.4f}" for x in losses))
        out.extend(("train", 4, 512, name, r + 1, ms, losses[r + 2]) for r, ms in enumerate(times[2:]))
        del opt
    worst = max(float((a.float() - b.float()).abs().max() / b.float().abs().max().clamp(min=1e-30))
                for a, b in zip(first_grads["hgemm"], first_grads["torch_grouped"]))
    print(f"train: the experts' gradients after one step, hgemm against torch_grouped: max |d| / max |g| {worst:.3e}")
    model.eval()
    return out


def events_ms(torch, fn, iters=3):
    return bench_timing.mean_ms(torch, fn, 1, iters)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--decode-steps", type=int, default=16)
    parser.add_argument("--train", action="store_true", help="also a bf16 training step")
    parser.add_argument("--train-steps", type=int, default=6)
    parser.add_argument("--csv")
    args = parser.parse_args()
    try:
        import torch
        import torch.nn.functional as F
        from transformers import Qwen3MoeConfig, Qwen3MoeForCausalLM
        import hgemm
        import hgemm.functional
    except ImportError as err:
        print(f"moe_e2e: needs torch, transformers and hgemm ({err})", file=sys.stderr)
        return EXIT_NO_GPU
    why = bench_timing.not_ready(torch, hgemm) or (None if hasattr(torch, "_grouped_mm") else "needs torch._grouped_mm")
    if why:
        print(f"moe_e2e: {why}", file=sys.stderr)
        return EXIT_NO_GPU
    torch.manual_seed(0)
    config = Qwen3MoeConfig(num_hidden_layers=args.layers, **QWEN3_30B_A3B)
    with torch.device("cuda"):
        model = Qwen3MoeForCausalLM(config).to(torch.bfloat16).eval()
    blocks = [(layer, layer.mlp) for layer in model.model.layers if hasattr(layer.mlp, "gate")]
    if not blocks:
        print("moe_e2e: no sparse MoE block found in the model", file=sys.stderr)
        return 1
    backends = {
        "hgemm": lambda a, b, offs: hgemm.functional.grouped_mm(a, b, offs=offs),
        "torch_grouped": lambda a, b, offs: torch._grouped_mm(a, b, offs=offs),
    }
    weights = expert_weights(torch, [blk for _, blk in blocks])
    swapped = {name: [make_block(torch, F, blk, config, fn, w) for (_, blk), w in zip(blocks, weights)]
               for name, fn in backends.items()}

    def use(name):
        for i, (layer, blk) in enumerate(blocks):
            layer.mlp = blk if name == "loop" else swapped[name][i]

    gen = torch.Generator(device="cuda").manual_seed(1)

    def tokens(batch, seq):
        return torch.randint(0, config.vocab_size, (batch, seq), device="cuda", generator=gen)

    rows = []
    first = tokens(*PREFILL[0])
    err = {}
    with torch.inference_mode():
        use("loop")
        with torch.device("cuda"):
            ref_model = Qwen3MoeForCausalLM(config)  # fp32
        ref_model.load_state_dict(model.state_dict())
        ref = ref_model(first).logits.float()
        del ref_model
        for name in ("loop",) + tuple(backends):
            use(name)
            err[name] = (model(first).logits.float() - ref).abs().max().item()
        del ref
        torch.cuda.empty_cache()
        names = ("torch_grouped", "hgemm", "loop")
        for batch, seq in PREFILL:
            t = tokens(batch, seq)
            for r in range(args.repeats):
                for name in names:
                    use(name)
                    rows.append(("prefill", batch, seq, name, r + 1, events_ms(torch, lambda: model(t)),
                                 err[name] if (batch, seq) == PREFILL[0] else float("nan")))
        for batch in DECODE:
            prompt, nxt = tokens(batch, 128), tokens(batch, 1)

            def decode_ms():  # the prompt untimed; events around the steps alone
                past = model(prompt, use_cache=True).past_key_values
                start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                for _ in range(args.decode_steps):
                    past = model(nxt, past_key_values=past, use_cache=True).past_key_values
                stop.record()
                torch.cuda.synchronize()
                return start.elapsed_time(stop) / args.decode_steps

            for r in range(args.repeats):
                for name in names:
                    use(name)
                    decode_ms()  # warm-up
                    rows.append(("decode", batch, 1, name, r + 1, decode_ms(), float("nan")))
    if args.train:
        rows.extend(train(torch, model, use, weights, tokens, args.train_steps))
    base = {}
    for row in rows:
        if row[3] == "torch_grouped":
            base.setdefault(row[:3], []).append(row[5])
    base = {k: statistics.median(v) for k, v in base.items()}
    print(f"Qwen3-30B-A3B shapes, {args.layers} layers, {torch.cuda.get_device_name()}, torch {torch.__version__}")
    groups = {}
    for row in rows:
        groups.setdefault(row[:4], []).append(row)
    for (phase, batch, seq, name), rs in groups.items():
        ms = [r[5] for r in rs]
        ratios = [base[(phase, batch, seq)] / x for x in ms]
        extra = f" max|err| {rs[0][6]:.3e}" if rs[0][6] == rs[0][6] else ""
        print(f"{phase:7} {batch:3} x {seq:5} {name:14} {statistics.median(ms):9.3f} ms "
              f"[{min(ms):.3f}..{max(ms):.3f}] vs torch_grouped {statistics.median(ratios):.3f}x{extra}")
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            f.write("# tool: python/moe_e2e.py\n")
            f.write(f"# gpu: {torch.cuda.get_device_name()}\n")
            f.write(f"# torch: {torch.__version__}\n")
            f.write(f"# model: Qwen3-30B-A3B shapes, {args.layers} layers, random weights, bf16\n")
            f.write("# train rows: max_abs_logit_err holds the step's loss\n")
            f.write("# command: " + " ".join(sys.argv) + "\n")
            out = csv.writer(f)
            out.writerow(("phase", "batch", "seq", "backend", "run", "ms", "vs_torch_grouped", "max_abs_logit_err"))
            for row in rows:
                out.writerow(row[:5] + (f"{row[5]:.5f}", f"{base[row[:3]] / row[5]:.4f}", f"{row[6]:.4e}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
