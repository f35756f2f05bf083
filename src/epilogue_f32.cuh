/*
 * epilogue_f32.cuh: the epilogue of a warpgroup that holds a (64, N) fp32
 * accumulator (wgmma m64nNk16 .f32, N/2 registers; N = 256 or 128), staged
 * for TMA stores in the same layout as epilogue_f16.cuh's quarters: N/64
 * 64x64 16-bit boxes with the 128-byte swizzle. Used by V8.
 *
 * Register 4j+e of thread t holds row 16*(t/32) + (t%32)/4 + 8*(e/2), column
 * 8j + 2*(t%4) + e%2 of the quarter (PTX ISA, "wgmma register fragments"):
 * per warp, each 8-column block j is two 8x8 matrices (rows 0-7, rows 8-15)
 * in exactly the per-thread layout stmatrix takes, so one stmatrix.x4 writes a
 * 16x16 block: a quarter is 16 of them per warp, instead of 64 32-bit stores.
 */
#ifndef HGEMM_EPILOGUE_F32_CUH
#define HGEMM_EPILOGUE_F32_CUH

#include "elem.cuh"
#include "epilogue_f16.cuh"
#include "gemm_args.cuh"
#include "hw.h"
#include "swizzle.cuh"
#include "ptx/mma.cuh"

/* A consumer's (64, N) part of C as the 16-bit pairs that f32q_stage
 * writes: alpha * acc computed in fp32 and rounded once to T (elem.cuh),
 * register 4jj+mat holding stmatrix.x4 number jj's matrix mat. V8 packs the
 * columns it stores late this way (f32q_store_packed), so that the
 * accumulator is free for the next tile's WGMMAs. */
template <typename T = __half, int N = F16Q_COLS>
static __device__ __forceinline__ void f32q_pack(uint32_t r[N / 4], const float d[N / 2], float alpha) {
#pragma unroll
    for (int jj = 0; jj < N / 16; jj++)
#pragma unroll
        for (int mat = 0; mat < 4; mat++) { /* matrix mat: column block 2jj + mat/2, rows 8*(mat%2).. */
            const int j = 2 * jj + mat / 2, e = 2 * (mat % 2);
            r[4 * jj + mat] = elem<T>::pack(d[4 * j + e] * alpha, d[4 * j + e + 1] * alpha);
        }
}

/* f32q_pack's registers into the boxes at `c` (shared memory) with
 * stmatrix, 128B-swizzled: the 8 rows of each 8x8 matrix land in 8
 * different bank groups. */
template <int N = F16Q_COLS, bool TRANS = false>
static __device__ __forceinline__ void f32q_store_packed(__half *c, const uint32_t r[N / 4]) {
    const int t = threadIdx.x % WARPGROUP_THREADS, warp = t / WARP_SIZE, lane = t % WARP_SIZE;
    const uint32_t c_base = smem_u32(c);
    const uint32_t q = lane / 8;                             /* the matrix this lane addresses */
    const uint32_t row = 16 * warp + 8 * (q % 2) + lane % 8; /* its row in the quarter */
    /* TRANS: the part transposed, box b holding its columns 64b.. as rows
     * and its 64 rows as columns. This lane's row is the part's column
     * 16jj + t (t = 8(q/2) + lane%8), its 16-byte chunk that of rows
     * 16 warp + 8(q%2): box jj/4, row 16(jj%4) + t, whose swizzle (row % 8
     * = lane % 8) is the same for every jj. */
    const uint32_t t_row = 8 * (q / 2) + lane % 8;
    const uint32_t t_base = c_base + sw128_offset(t_row, 2 * warp + q % 2);
#pragma unroll
    for (int jj = 0; jj < N / 16; jj++) { /* 16-column blocks: one stmatrix.x4 each */
        if constexpr (TRANS) {
            stmatrix_x4_trans(t_base + (jj / 4) * F16Q_BOX_BYTES + (jj % 4) * 16 * SW128_ROW_BYTES, &r[4 * jj]);
        } else {
            const uint32_t chunk = 2 * jj + q / 2; /* 16-byte column chunk of this lane's row, 0..31 */
            stmatrix_x4(c_base + (chunk / 8) * F16Q_BOX_BYTES + sw128_offset(row, chunk % 8), &r[4 * jj]);
        }
    }
}

/* Stage a consumer's (64, N) part of C into the boxes at `c` (shared
 * memory) for beta == 0 (f32q_stage_loaded adds beta * C): packed, then
 * stored. */
template <typename T = __half, int N = F16Q_COLS, bool TRANS = false>
static __device__ __forceinline__ void f32q_stage(__half *c, const float d[N / 2], gemm_args args) {
    uint32_t r[N / 4];
    f32q_pack<T, N>(r, d, args.alpha);
    f32q_store_packed<N, TRANS>(c, r);
}

/* f32q_stage for beta != 0, where C's part was already loaded into the
 * boxes at `c` (by TMA, 128B-swizzled, as f32q_stage writes them): each
 * thread reads its old elements with ldmatrix from the very addresses its
 * stmatrix then overwrites (the two are inverses: the same fragment layout),
 * so C is read from global memory once, in whole boxes, instead of element
 * by element. alpha * acc + beta * C in fp32, rounded once to T. Outside
 * m x n the box holds TMA's zero fill, and the store clips it. */
template <typename T = __half, int N = F16Q_COLS>
static __device__ __forceinline__ void f32q_stage_loaded(__half *c, const float d[N / 2], gemm_args args) {
    const int t = threadIdx.x % WARPGROUP_THREADS, warp = t / WARP_SIZE, lane = t % WARP_SIZE;
    const uint32_t c_base = smem_u32(c);
    const uint32_t q = lane / 8;
    const uint32_t row = 16 * warp + 8 * (q % 2) + lane % 8;
#pragma unroll
    for (int jj = 0; jj < N / 16; jj++) {
        const uint32_t chunk = 2 * jj + q / 2;
        const uint32_t addr = c_base + (chunk / 8) * F16Q_BOX_BYTES + sw128_offset(row, chunk % 8);
        uint32_t r[4];
        ldmatrix_x4(r, addr);
#pragma unroll
        for (int mat = 0; mat < 4; mat++) {
            const int j = 2 * jj + mat / 2, e = 2 * (mat % 2);
            const float2 o = elem<T>::unpack(r[mat]);
            float x = d[4 * j + e] * args.alpha, y = d[4 * j + e + 1] * args.alpha;
            x += args.beta * o.x; /* as f32q_stage computes it */
            y += args.beta * o.y;
            r[mat] = elem<T>::pack(x, y);
        }
        stmatrix_x4(addr, r);
    }
}

#endif
