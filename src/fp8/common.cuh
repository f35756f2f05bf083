/*
 * fp8/common.cuh: what hgemm_gemm_fp8's kernels (kernel.cu) and the grouped
 * FP8 kernel (grouped.cu) share: the tile's sizes, the arguments, one
 * stage's WGMMAs into a fresh fragment, its promotion into the fp32 sum,
 * and the stores from registers with the row mode's scales.
 */
#ifndef HGEMM_FP8_COMMON_CUH
#define HGEMM_FP8_COMMON_CUH

#include <cuda_bf16.h>

#include "epilogue_direct.cuh"
#include "epilogue_f32.cuh"
#include "kernel_common.cuh"
#include "ptx/wgmma.cuh"
#include "swizzle.cuh"

enum {
    F8_BM = 128,
    F8_BN = 128,
    F8_BK = 128, /* bytes = fp8 values of k per stage: one 128-byte swizzled row, and one scale block */
    F8_STAGES = 6,
    F8_CONSUMERS = 2,
    F8_CONSUMER_THREADS = F8_CONSUMERS * WARPGROUP_THREADS,
    F8_LOADER_WARP = F8_CONSUMER_THREADS / WARP_SIZE,
    F8_THREADS = F8_CONSUMER_THREADS + WARP_SIZE,
    F8_RASTER = 8,
    F8_K_STEPS = F8_BK / 32,             /* m64nNk32 per stage */
    F8_DESC_K_STEP = 32 >> 4,            /* 32 bytes of k, in the descriptor's 16-byte units */
    F8_GROUPS = F8_BN / 8, /* column groups of a fragment: registers 4j .. 4j+3 */
    /* the wide build */
    F8W_BN = 256,
    F8W_STAGES = 4,
    F8W_THREADS = F8_CONSUMER_THREADS + WARPGROUP_THREADS, /* a producer warpgroup, for setmaxnreg */
    F8W_PRODUCER_REGS = 24,
    F8W_CONSUMER_REGS = 240,
    F8_EPI_BARRIER = 1, /* named barriers 1, 2: consumer g's staging (0 is __syncthreads) */
};
static_assert((int)F8_BK == (int)SW128_ROW_BYTES, "a stage's k is one swizzled row");
static_assert(F8_BN == 128, "the block scales' 128 columns are one tile's");

typedef struct f8_args {
    int32_t m, n, k_tiles; /* k_tiles: also the scale blocks along k, ceil(k / 128), where k > 0 */
    float alpha, beta;
    void *C;
    int64_t ldc;
    const float *sa, *sb;
    uint32_t m_tiles, n_tiles;
    int32_t split;     /* blocks per tile (a cluster), 1, 2, 4 or 8 (hgemm__fp8_split_log) */
    int32_t split_log; /* log2(split) */
    int32_t nb;        /* 128-column blocks of B's scales, ceil(n / 128) */
    int32_t pair_log;  /* the wide build: 1 where a cluster of two blocks shares B (f8_tile), else 0 */
    int32_t tma_c;     /* the wide build: a 16-bit C, beta 0, C's map valid: tiles go out by TMA */
} f8_args;

/* The four k32 steps of one stage into t (overwritten). */
template <hgemm_dtype AT, hgemm_dtype BT>
static __device__ __forceinline__ void f8_stage_mma(float t[F8_BN / 2], uint64_t da, uint64_t db) {
#pragma unroll
    for (int kk = 0; kk < F8_K_STEPS; kk++) {
        const uint64_t a = wgmma_desc_add(da, F8_DESC_K_STEP * kk), b = wgmma_desc_add(db, F8_DESC_K_STEP * kk);
        if constexpr (AT == HGEMM_DTYPE_E4M3 && BT == HGEMM_DTYPE_E4M3) wgmma_m64n128k32_f32_e4m3_e4m3(t, a, b, kk > 0);
        if constexpr (AT == HGEMM_DTYPE_E4M3 && BT == HGEMM_DTYPE_E5M2) wgmma_m64n128k32_f32_e4m3_e5m2(t, a, b, kk > 0);
        if constexpr (AT == HGEMM_DTYPE_E5M2 && BT == HGEMM_DTYPE_E4M3) wgmma_m64n128k32_f32_e5m2_e4m3(t, a, b, kk > 0);
    }
}

/* What the stores read: C, its sizes, alpha (the tensor scales folded in) and beta. */
static __device__ __forceinline__ gemm_args f8_out(const f8_args &a, float alpha) {
    const gemm_args c = {a.m, a.n, 0, a.k_tiles, alpha, a.beta, (__half *)a.C, a.ldc};
    return c;
}

/* d[0..63] += t * (s0 for the thread's first row, s1 for its second) */
static __device__ __forceinline__ void f8_promote(float *d, const float *t, float s0, float s1) {
#pragma unroll
    for (int j = 0; j < F8_GROUPS; j++) {
        d[4 * j + 0] = fmaf(t[4 * j + 0], s0, d[4 * j + 0]);
        d[4 * j + 1] = fmaf(t[4 * j + 1], s0, d[4 * j + 1]);
        d[4 * j + 2] = fmaf(t[4 * j + 2], s1, d[4 * j + 2]);
        d[4 * j + 3] = fmaf(t[4 * j + 3], s1, d[4 * j + 3]);
    }
}

/* One column group of the fragment (rows row, row + 8; columns col, col + 1)
 * into C (CT: __half, __nv_bfloat16 or float), times the rows' scales a0, a1
 * and the columns' in the row mode. */
template <typename CT, hgemm_scale_mode MODE>
static __device__ __forceinline__ void f8_store_group(const f8_args &a, const gemm_args &c, float a0, float a1,
                                                      int32_t row, int32_t col, float4 v) {
    if constexpr (MODE == HGEMM_SCALE_ROW) {
        const float b0 = a.sb[min(col, a.n - 1)], b1 = a.sb[min(col + 1, a.n - 1)];
        v.x *= a0 * b0, v.y *= a0 * b1, v.z *= a1 * b0, v.w *= a1 * b1;
    }
    if constexpr (__is_same(CT, float)) {
        store_pair_f32_flat(c, row, col, v.x, v.y);
        store_pair_f32_flat(c, row + 8, col, v.z, v.w);
    } else {
        store_pair_flat<CT>(c, row, col, v.x, v.y);
        store_pair_flat<CT>(c, row + 8, col, v.z, v.w);
    }
}

/* A consumer's whole fragment, BN columns from col0 (the thread's first
 * row and column: row, col0 + frag_col); a0, a1 its rows' scales (row mode). */
template <typename CT, hgemm_scale_mode MODE, int BN>
static __device__ __forceinline__ void f8_store_tile(const f8_args &a, const gemm_args &c, const float d[BN / 2],
                                                     float a0, float a1, int32_t row, int32_t col) {
    if constexpr (__is_same(CT, float) && MODE != HGEMM_SCALE_ROW) { /* C's old values loaded in batches */
        const int wt = threadIdx.x % WARPGROUP_THREADS;
        epilogue_m64n_f32_out_f32<BN>(c, d, row - (16 * (wt / 32) + (wt % 32) / 4), col - 2 * (wt % 4));
    } else {
#pragma unroll
        for (int j = 0; j < BN / 8; j++)
            f8_store_group<CT, MODE>(a, c, a0, a1, row, col + 8 * j,
                                     make_float4(d[4 * j], d[4 * j + 1], d[4 * j + 2], d[4 * j + 3]));
    }
}
/* The rows' scales of the row mode (r0, r1 clamped to C's rows); 1 otherwise. */
template <hgemm_scale_mode MODE>
static __device__ __forceinline__ float2 f8_row_scales(const f8_args &a, int32_t r0, int32_t r1) {
    if constexpr (MODE == HGEMM_SCALE_ROW) return make_float2(a.sa[r0], a.sa[r1]);
    return make_float2(1.0f, 1.0f);
}

#endif
