/*
 * epilogue_f16.cuh: the epilogue of a warpgroup that holds a (64, 256) fp16
 * accumulator (wgmma m64n256k16 .f16, 64 registers of packed pairs), shared by
 * V6 and V7.
 *
 * Register 2j+h of thread t holds the pair at row 16*(t/32) + (t%32)/4 + 8h,
 * columns 8j + 2*(t%4) + {0,1} of the quarter. Two ways out:
 *   - f16q_stage: alpha * acc + beta * C in fp32, rounded once to fp16, into
 *     a shared buffer laid out as four 64x64 boxes with the 128-byte swizzle,
 *     ready for four TMA stores;
 *   - f16q_store_direct: straight to global, masked, for the right-edge tiles
 *     that TMA cannot store (f16q_needs_direct).
 */
#ifndef HGEMM_EPILOGUE_F16_CUH
#define HGEMM_EPILOGUE_F16_CUH

#include "epilogue_direct.cuh"
#include "gemm_args.cuh"
#include "hw.h"
#include "swizzle.cuh"
#include "ptx/common.cuh"

enum {
    F16Q_ROWS = 64,                    /* rows of one warpgroup's quarter */
    F16Q_COLS = 256,
    F16Q_BOX = 64,                     /* TMA store box: 64x64, one 128-byte swizzle span wide */
    F16Q_BOXES = F16Q_COLS / F16Q_BOX, /* 4 boxes per quarter */
    F16Q_BOX_BYTES = F16Q_ROWS * F16Q_BOX * 2,
    F16Q_ACC_REGS = 64,                /* (64, 256) fp16 = 128 halves per thread, packed in pairs */
};

static_assert(F16Q_BOX_BYTES % SW128_ALIGN == 0, "C boxes must stay 1024-byte aligned");

/* Stage this warpgroup's quarter (rows row0.., columns col0.. of C) into the
 * F16Q_BOXES swizzled boxes at `c` (shared memory). With beta == 0, one pass:
 * alpha * acc, rounded to fp16. Otherwise two: the first stores acc itself
 * (fp16 already, so exactly), the second has each thread read back the very
 * words it wrote and store alpha * acc + beta * C, computed in fp32 and
 * rounded once (no barrier needed, and the accumulator registers are dead by
 * then, which keeps the beta path's addresses off the register budget).
 * Rounding alpha * acc to fp16 before adding beta * C would overflow where
 * the sum does not (alpha * acc = 131072, beta * C = -120000). The swizzle
 * spreads the 8 rows one store instruction touches over all 32 banks. */
static __device__ __forceinline__ uint32_t f16q_smem_offset(int r, int t) {
    const int j = r / 2, h = r % 2;
    const uint32_t row = 16 * (t / 32) + (t % 32) / 4 + 8 * h; /* 0..63 in the quarter */
    return (j / 8) * F16Q_BOX_BYTES + sw128_offset(row, j % 8) + 4 * (t % 4);
}

static __device__ __forceinline__ void f16q_stage(__half *c, const uint32_t d[F16Q_ACC_REGS],
                                                  gemm_args args, int32_t row0, int32_t col0) {
    const int t = threadIdx.x % WARPGROUP_THREADS;
    const uint32_t c_base = smem_u32(c);
    if (args.beta == 0.0f) {
#pragma unroll
        for (int r = 0; r < F16Q_ACC_REGS; r++) {
            float2 v = __half22float2(*(const __half2 *)&d[r]);
            __half2 out = __floats2half2_rn(v.x * args.alpha, v.y * args.alpha);
            st_shared_u32(c_base + f16q_smem_offset(r, t), *(uint32_t *)&out);
        }
        return;
    }
#pragma unroll
    for (int r = 0; r < F16Q_ACC_REGS; r++) st_shared_u32(c_base + f16q_smem_offset(r, t), d[r]);
#pragma unroll 4
    for (int r = 0; r < F16Q_ACC_REGS; r++) {
        const int32_t grow = row0 + 16 * (t / 32) + (t % 32) / 4 + 8 * (r % 2);
        const int32_t gcol = col0 + 8 * (r / 2) + 2 * (t % 4);
        if (grow >= args.m || gcol >= args.n) continue;
        const uint32_t addr = c_base + f16q_smem_offset(r, t);
        uint32_t word = ld_shared_u32(addr);
        float2 v = __half22float2(*(const __half2 *)&word); /* acc, exact */
        v.x *= args.alpha;
        v.y *= args.alpha;
        const __half *old = args.C + (int64_t)grow * args.ldc + gcol;
        v.x += args.beta * __half2float(old[0]);
        if (gcol + 1 < args.n) v.y += args.beta * __half2float(old[1]);
        __half2 out = __floats2half2_rn(v.x, v.y);
        st_shared_u32(addr, *(uint32_t *)&out);
    }
}

/* A TMA store clips the inner dimension at 16-byte granularity only, so on a
 * tile whose right edge is not 16-byte aligned (n % 8 != 0) it would write
 * into the ldc padding beyond column n: such tiles are stored directly. */
static __device__ __forceinline__ bool f16q_needs_direct(gemm_args args, int32_t col0, int32_t tile_n) {
    return (args.n % 8) != 0 && col0 + tile_n > args.n;
}

/* Store the quarter straight from registers, masked, as V5 does. */
static __device__ __forceinline__ void f16q_store_direct(const uint32_t d[F16Q_ACC_REGS], gemm_args args,
                                                         int32_t row0, int32_t col0) {
    const int t = threadIdx.x % WARPGROUP_THREADS;
    const int32_t row = row0 + 16 * (t / 32) + (t % 32) / 4, col = col0 + 2 * (t % 4);
#pragma unroll
    for (int r = 0; r < F16Q_ACC_REGS; r++) {
        float2 v = __half22float2(*(const __half2 *)&d[r]);
        store_pair(args, row + 8 * (r % 2), col + 8 * (r / 2), v.x, v.y);
    }
}

#endif
