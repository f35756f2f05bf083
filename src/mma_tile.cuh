/*
 * mma_tile.cuh: the WGMMAs of one k-tile, one helper per accumulator type
 * and shape.
 *
 * A k-tile is BK = 64 fp16 of k: one 128-byte swizzled row of each operand
 * tile. One wgmma.mma_async covers WGMMA_K = 16 of it, so a k-tile takes
 * BK / WGMMA_K = 4, the next one reading the next 32 bytes of every row.
 * That step is +2 on both descriptors, whose start address counts 16-byte
 * units (ptx/wgmma.cuh); the hardware applies the swizzle to the address it
 * forms, so moving the start address is all it takes.
 *
 * The caller fences before (wgmma_fence) and commits after: where a k-tile's
 * group begins and ends, and what waits for it, is each version's idea.
 */
#ifndef HGEMM_MMA_TILE_CUH
#define HGEMM_MMA_TILE_CUH

#include "gemm_args.cuh" /* BK */
#include "hw.h"
#include "ptx/wgmma.cuh"

enum {
    KTILE_WGMMAS = BK / WGMMA_K,            /* 4 */
    WGMMA_DESC_K_STEP = (WGMMA_K * 2) >> 4, /* 16 fp16 = 32 bytes; descriptor addresses are >> 4 */
};

/* d (64, 256) fp32 (+)= A (64, BK) * B (256, BK)^T for the tiles the
 * descriptors point at. With accumulate == 0 the first WGMMA overwrites d
 * instead of adding to it: an accumulator starts without zeroed registers. */
static __device__ __forceinline__ void wgmma_ktile_m64n256_f32(float d[128], uint64_t desc_a,
                                                               uint64_t desc_b, uint32_t accumulate) {
#pragma unroll
    for (int kk = 0; kk < KTILE_WGMMAS; kk++)
        wgmma_m64n256k16_f32(d, desc_a + WGMMA_DESC_K_STEP * kk, desc_b + WGMMA_DESC_K_STEP * kk,
                             accumulate || kk > 0);
}

/* The same with a (64, 256) fp16 accumulator: pairs of halves, 64 registers. */
static __device__ __forceinline__ void wgmma_ktile_m64n256_f16(uint32_t d[64], uint64_t desc_a,
                                                               uint64_t desc_b, uint32_t accumulate) {
#pragma unroll
    for (int kk = 0; kk < KTILE_WGMMAS; kk++)
        wgmma_m64n256k16_f16(d, desc_a + WGMMA_DESC_K_STEP * kk, desc_b + WGMMA_DESC_K_STEP * kk,
                             accumulate || kk > 0);
}

#endif
