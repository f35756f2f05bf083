/*
 * gemm_args.cuh: what a kernel is given, and how its launcher makes it: the
 * scalars (gemm_args, from make_args) and the tensor maps of A, B and C
 * (tmap_operand, tmap_ab, tmap_c), with BK, the k-tile every version and
 * every map shares.
 */
#ifndef HGEMM_GEMM_ARGS_CUH
#define HGEMM_GEMM_ARGS_CUH

#include <stdint.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "hw.h"
#include "internal.h"

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
