/*
 * kernel_common.cuh: what every version's file shares and none should copy:
 * the kernel's scalar arguments, the fp32 epilogue from WGMMA/MMA fragments,
 * the 128-byte swizzle and the launchers' tensor maps. The hardware numbers
 * they use are in hw.h.
 */
#ifndef HGEMM_KERNEL_COMMON_CUH
#define HGEMM_KERNEL_COMMON_CUH

#include <stdint.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "hw.h"
#include "internal.h"
#include "raster.h"

/* Scalars every kernel needs next to its tensor maps (sizes fit int32: api.c
 * checks). k_tiles = ceil(k / BK) is computed on the host in 64 bits: in
 * int32, k + BK - 1 wraps for k > INT32_MAX - (BK - 1). With k <= INT32_MAX,
 * k_tiles <= 2^25 and every k-tile coordinate kt * BK <= 2^31 - BK fits int32. */
typedef struct gemm_args {
    int32_t m, n, k;
    int32_t k_tiles;
    float alpha, beta;
    __half *C;
    int64_t ldc;
} gemm_args;

enum {
    BK = 64, /* fp16 per k-tile row: one 128-byte swizzle span */
};

static_assert(BK * sizeof(__half) == SW128_ROW_BYTES, "a k-tile row is one 128-byte swizzle span");

static inline gemm_args make_args(const hgemm_problem *p) {
    gemm_args a = {(int32_t)p->m, (int32_t)p->n, (int32_t)p->k,
                   (int32_t)((p->k + BK - 1) / BK), /* int64: no wrap */
                   p->alpha, p->beta, (__half *)p->C, p->ldc};
    return a;
}

/* Byte offset of the 16-byte chunk `chunk` (0..7) of row `row` in a tile of
 * 128-byte rows written by TMA with the 128B swizzle: chunk ^ (row % 8). */
static __device__ __forceinline__ uint32_t sw128_offset(uint32_t row, uint32_t chunk) {
    return row * SW128_ROW_BYTES + (chunk ^ (row % SW128_ROWS)) * SW128_CHUNK_BYTES;
}

/* Round a dynamic shared-memory pointer up to the swizzle alignment; the
 * launcher allocates SW128_ALIGN extra bytes for this. */
static __device__ __forceinline__ void *smem_aligned(void *raw) {
    return (void *)(((uintptr_t)raw + SW128_ALIGN - 1) & ~(uintptr_t)(SW128_ALIGN - 1));
}

/* C[row][col], C[row][col+1] = alpha * (v0, v1) + beta * C (col is even).
 * Skips what lies outside m x n; reads C only when beta != 0. */
static __device__ __forceinline__ void store_pair(gemm_args a, int32_t row, int32_t col,
                                                  float v0, float v1) {
    if (row >= a.m || col >= a.n) return;
    __half *c = a.C + (int64_t)row * a.ldc + col;
    v0 *= a.alpha;
    v1 *= a.alpha;
    if (col + 1 < a.n) {
        if (a.beta != 0.0f) {
            float2 old = __half22float2(*(const __half2 *)c);
            v0 += a.beta * old.x;
            v1 += a.beta * old.y;
        }
        *(__half2 *)c = __floats2half2_rn(v0, v1);
    } else {
        if (a.beta != 0.0f) v0 += a.beta * __half2float(*c);
        *c = __float2half_rn(v0);
    }
}

/* Epilogue of one warpgroup's m64n256 fp32 accumulator, whose top-left
 * element is C[row0][col0]. Fragment layout (PTX ISA, "wgmma register
 * fragments"): register 4j+e of thread t holds row 16*(t/32) + (t%32)/4 +
 * 8*(e/2), column 8j + 2*(t%4) + e%2. */
static __device__ __forceinline__ void epilogue_m64n256_f32(gemm_args a, const float d[128],
                                                            int32_t row0, int32_t col0) {
    int t = threadIdx.x % WARPGROUP_THREADS;
    int32_t row = row0 + 16 * (t / 32) + (t % 32) / 4;
    int32_t col = col0 + 2 * (t % 4);
#pragma unroll
    for (int j = 0; j < 32; j++) {
        store_pair(a, row, col + 8 * j, d[4 * j + 0], d[4 * j + 1]);
        store_pair(a, row + 8, col + 8 * j, d[4 * j + 2], d[4 * j + 3]);
    }
}

/* Tensor maps for the launchers. Each returns the encoder's status, which the
 * launcher checks before it goes on. */

/* A K-major operand: `rows` x k fp16, `ld` elements between rows, loaded in
 * 128B-swizzled boxes of box_rows x BK (one k-tile of box_rows rows). */
static inline hgemm_status tmap_operand(CUtensorMap *map, const void *ptr, int64_t rows, int64_t k,
                                        int64_t ld, uint32_t box_rows) {
    return hgemm__tmap_encode(map, ptr, (uint64_t)rows, (uint64_t)k, (uint64_t)ld, box_rows, BK,
                              TMAP_SWIZZLE_128B);
}

/* A's map in boxes of a_rows x BK and B's in boxes of b_rows x BK: SUCCESS,
 * or the status of the first that failed. */
static inline hgemm_status tmap_ab(const hgemm_problem *p, CUtensorMap *ta, uint32_t a_rows,
                                   CUtensorMap *tb, uint32_t b_rows) {
    hgemm_status st = tmap_operand(ta, p->A, p->m, p->k, p->lda, a_rows);
    if (st != HGEMM_SUCCESS) return st;
    return tmap_operand(tb, p->B, p->n, p->k, p->ldb, b_rows);
}

/* C's map, for epilogues that store through TMA: 128B-swizzled boxes of
 * box_rows x box_cols. */
static inline hgemm_status tmap_c(const hgemm_problem *p, CUtensorMap *tc, uint32_t box_rows,
                                  uint32_t box_cols) {
    return hgemm__tmap_encode(tc, p->C, (uint64_t)p->m, (uint64_t)p->n, (uint64_t)p->ldc, box_rows,
                              box_cols, TMAP_SWIZZLE_128B);
}

#endif
