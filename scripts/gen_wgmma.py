#!/usr/bin/env python3
"""Writes src/ptx/wgmma_ops.cuh: the WGMMA instructions whose operand lists are
too long to write by hand (m64n256k16 holds 128 fp32 or 64 fp16x2 registers).

Three families: the series' fp16 m64n256 instructions with K-major operands
(V1..V7 as their chapters show them); the general ones of the library's
fast kernels (V8's N = 256, 192 and 128, V9's N = 64, 32 and 16), one per input
type (f16, bf16), with fp32 accumulation, templated on the two transpose
immediates (0: K-major operand, 1: MN-major) so that one kernel source
serves every layout; and the FP8 family's k32 ones (src/fp8/), one per pair
of 8-bit input types, K-major operands only (8-bit WGMMA has no transpose).

    python3 scripts/gen_wgmma.py          # rewrite the header
    python3 scripts/gen_wgmma.py --check  # exit 1 if the header is stale (a test)
"""
import pathlib
import sys

OUT = pathlib.Path(__file__).resolve().parent.parent / "src" / "ptx" / "wgmma_ops.cuh"

# (function name, N, PTX dtype, C type of one accumulator register, constraint, registers)
VARIANTS = [
    ("wgmma_m64n256k16_f32", 256, "f32", "float", "f", 128),
    ("wgmma_m64n256k16_f16", 256, "f16", "uint32_t", "r", 64),
]


def variant(name, n, dtype, ctype, cons, nregs):
    regs = ", ".join(f"%{i}" for i in range(nregs))
    a, b, s = nregs, nregs + 1, nregs + 2
    outs = ",\n".join(
        "          " + ", ".join(f'"+{cons}"(d[{i}])' for i in range(j, min(j + 8, nregs)))
        for j in range(0, nregs, 8))
    return f'''
/* wgmma.mma_async.sync.aligned.m64n{n}k16.{dtype}.f16.f16 (PTX ISA "wgmma.mma_async"):
 * d (64x{n}, {dtype}, {nregs} registers per thread) (+)= A (64x16) * B ({n}x16)^T,
 * both operands read from shared memory through descriptors; d is kept when
 * scale_d != 0 and overwritten when it is 0. */
static __device__ __forceinline__ void {name}({ctype} d[{nregs}], uint64_t desc_a,
                                              uint64_t desc_b, uint32_t scale_d) {{
    asm volatile(
        "{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{s}, 0;\\n"
        "wgmma.mma_async.sync.aligned.m64n{n}k16.{dtype}.f16.f16 "
        "{{{regs}}}, "
        "%{a}, %{b}, p, 1, 1, 0, 0;\\n}}\\n"
        :
{outs}
        : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}}
'''


# The general family: fp32 accumulation, (function name, N, PTX input type, registers)
GENERAL = [(f"wgmma_m64n{n}k16_f32_{t}", n, t, n // 2) for t in ("f16", "bf16") for n in (256, 192, 128, 64, 32, 16)]


def general(name, n, itype, nregs):
    regs = ", ".join(f"%{i}" for i in range(nregs))
    a, b, s, ta, tb = nregs, nregs + 1, nregs + 2, nregs + 3, nregs + 4
    outs = ",\n".join(
        "          " + ", ".join(f'"+f"(d[{i}])' for i in range(j, min(j + 8, nregs)))
        for j in range(0, nregs, 8))
    return f'''
/* wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{itype}.{itype} (PTX ISA "wgmma.mma_async"):
 * d (64x{n}, f32, {nregs} registers per thread) (+)= A (64x16) * B ({n}x16)^T, with
 * each operand's tile K-major (TRANS_ = 0) or MN-major (TRANS_ = 1) in shared
 * memory; d is kept when scale_d != 0 and overwritten when it is 0. */
template <int TRANS_A, int TRANS_B>
static __device__ __forceinline__ void {name}(float d[{nregs}], uint64_t desc_a,
                                              uint64_t desc_b, uint32_t scale_d) {{
    asm volatile(
        "{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{s}, 0;\\n"
        "wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{itype}.{itype} "
        "{{{regs}}}, "
        "%{a}, %{b}, p, 1, 1, %{ta}, %{tb};\\n}}\\n"
        :
{outs}
        : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TRANS_A), "n"(TRANS_B));
}}
'''


# The FP8 family: (function name, N, A's PTX type, B's, registers)
FP8 = [(f"wgmma_m64n{n}k32_f32_{a}_{b}", n, a, b, n // 2)
       for a, b in (("e4m3", "e4m3"), ("e4m3", "e5m2"), ("e5m2", "e4m3")) for n in (256, 128, 64)]


def fp8(name, n, atype, btype, nregs):
    regs = ", ".join(f"%{i}" for i in range(nregs))
    a, b, s = nregs, nregs + 1, nregs + 2
    outs = ",\n".join(
        "          " + ", ".join(f'"+f"(d[{i}])' for i in range(j, min(j + 8, nregs)))
        for j in range(0, nregs, 8))
    return f'''
/* wgmma.mma_async.sync.aligned.m64n{n}k32.f32.{atype}.{btype} (PTX ISA "wgmma.mma_async"):
 * d (64x{n}, f32, {nregs} registers per thread) (+)= A (64x32) * B ({n}x32)^T,
 * both tiles K-major in shared memory; d is kept when scale_d != 0 and
 * overwritten when it is 0. */
static __device__ __forceinline__ void {name}(float d[{nregs}], uint64_t desc_a,
                                              uint64_t desc_b, uint32_t scale_d) {{
    asm volatile(
        "{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{s}, 0;\\n"
        "wgmma.mma_async.sync.aligned.m64n{n}k32.f32.{atype}.{btype} "
        "{{{regs}}}, "
        "%{a}, %{b}, p, 1, 1;\\n}}\\n"
        :
{outs}
        : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}}
'''


def render():
    body = ("".join(variant(*v) for v in VARIANTS) + "".join(general(*g) for g in GENERAL) +
            "".join(fp8(*f) for f in FP8))
    return ("/* wgmma_ops.cuh: generated by scripts/gen_wgmma.py; do not edit. */\n"
            "#ifndef HGEMM_PTX_WGMMA_OPS_CUH\n#define HGEMM_PTX_WGMMA_OPS_CUH\n\n"
            "#include <stdint.h>\n" + body + "\n#endif\n")


def main():
    text = render()
    if "--check" in sys.argv:
        if not OUT.exists() or OUT.read_text() != text:
            print(f"{OUT} is stale: run python3 scripts/gen_wgmma.py", file=sys.stderr)
            return 1
        print("wgmma_ops.cuh is up to date")
        return 0
    OUT.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
