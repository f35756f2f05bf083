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

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "gemm_args.cuh" /* BK */
#include "hw.h"
#include "ptx/wgmma.cuh"

enum {
    KTILE_WGMMAS = BK / WGMMA_K,            /* 4 */
    WGMMA_DESC_K_STEP = (WGMMA_K * 2) >> 4, /* 16 fp16 = 32 bytes; descriptor addresses are >> 4 */
    /* MN-major tiles (wgmma_desc_sw128_mn): 16 k-rows of 128 bytes */
    WGMMA_DESC_K_STEP_MN = (WGMMA_K * SW128_ROW_BYTES) >> 4,
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

/* The fast kernels' k-tile: inputs of type T (__half or __nv_bfloat16),
 * each operand's tile K-major (A_MN, B_MN = 0: the descriptor steps 32 bytes
 * along the swizzled row) or MN-major (1: it steps 16 k-rows, 2048 bytes),
 * read through WGMMA's transpose bits; fp32 accumulation, N = 320, 256, 192,
 * 128 or 64.
 *
 * N = 320 is wider than one WGMMA (n <= 256): each k16 step is an m64n192
 * into d[0..95] and an m64n128 into d[96..159], the second reading B from
 * its 192nd row on, 24 KB further in either layout (192 K-major rows of 128
 * bytes, or 3 MN-major boxes of 8 KB; V8 builds it K-major only). In the
 * fragment layout register 4j.. holds columns 8j.., so d is the m64n320
 * accumulator the epilogue expects. The split reads A's 64 x 16 from shared
 * memory twice per step. */
enum { WGMMA_N320_FIRST = 192, WGMMA_N320_B_STEP = (WGMMA_N320_FIRST * SW128_ROW_BYTES) >> 4 };

template <typename T, int A_MN, int B_MN, int N>
static __device__ __forceinline__ void wgmma_ktile_m64n_f32_ab(float d[N / 2], uint64_t desc_a,
                                                               uint64_t desc_b, uint32_t accumulate) {
    static_assert(N == 320 || N == 256 || N == 192 || N == 128 || N == 64, "the fast kernels' tile widths");
    constexpr uint32_t step_a = A_MN ? WGMMA_DESC_K_STEP_MN : WGMMA_DESC_K_STEP;
    constexpr uint32_t step_b = B_MN ? WGMMA_DESC_K_STEP_MN : WGMMA_DESC_K_STEP;
    constexpr bool bf16 = __is_same(T, __nv_bfloat16);
#pragma unroll
    for (int kk = 0; kk < KTILE_WGMMAS; kk++) {
        const uint64_t da = wgmma_desc_add(desc_a, step_a * kk), db = wgmma_desc_add(desc_b, step_b * kk);
        const uint32_t acc = accumulate || kk > 0;
        if constexpr (N == 320 && bf16) {
            wgmma_m64n192k16_f32_bf16<A_MN, B_MN>(d, da, db, acc);
            wgmma_m64n128k16_f32_bf16<A_MN, B_MN>(d + WGMMA_N320_FIRST / 2, da,
                                                 wgmma_desc_add(db, WGMMA_N320_B_STEP), acc);
        }
        if constexpr (N == 320 && !bf16) {
            wgmma_m64n192k16_f32_f16<A_MN, B_MN>(d, da, db, acc);
            wgmma_m64n128k16_f32_f16<A_MN, B_MN>(d + WGMMA_N320_FIRST / 2, da,
                                                 wgmma_desc_add(db, WGMMA_N320_B_STEP), acc);
        }
        if constexpr (N == 256 && bf16) wgmma_m64n256k16_f32_bf16<A_MN, B_MN>(d, da, db, acc);
        if constexpr (N == 256 && !bf16) wgmma_m64n256k16_f32_f16<A_MN, B_MN>(d, da, db, acc);
        if constexpr (N == 192 && bf16) wgmma_m64n192k16_f32_bf16<A_MN, B_MN>(d, da, db, acc);
        if constexpr (N == 192 && !bf16) wgmma_m64n192k16_f32_f16<A_MN, B_MN>(d, da, db, acc);
        if constexpr (N == 128 && bf16) wgmma_m64n128k16_f32_bf16<A_MN, B_MN>(d, da, db, acc);
        if constexpr (N == 128 && !bf16) wgmma_m64n128k16_f32_f16<A_MN, B_MN>(d, da, db, acc);
        if constexpr (N == 64 && bf16) wgmma_m64n64k16_f32_bf16<A_MN, B_MN>(d, da, db, acc);
        if constexpr (N == 64 && !bf16) wgmma_m64n64k16_f32_f16<A_MN, B_MN>(d, da, db, acc);
    }
}

#endif
