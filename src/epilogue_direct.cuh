/*
 * epilogue_direct.cuh: epilogues that store accumulator fragments from
 * registers straight to global memory, masked to m x n: store_pair, the
 * element pair every one of them ends in (V0's mma.sync fragments, V6/V7's
 * right-edge tiles, V9), and the m64n256 fp32 warpgroup epilogue of V1..V5
 * (and of V8's tiles that TMA cannot store, and its v8-direct ablation).
 * The epilogues staged through shared
 * memory for TMA stores are in epilogue_f16.cuh and epilogue_f32.cuh.
 */
#ifndef HGEMM_EPILOGUE_DIRECT_CUH
#define HGEMM_EPILOGUE_DIRECT_CUH

#include <stdint.h>
#include <cuda_fp16.h>

#include "elem.cuh"
#include "gemm_args.cuh"
#include "hw.h"
#include "ptx/common.cuh"

/* C[row][col], C[row][col+1] = alpha * (v0, v1) + beta * C (col is even).
 * Skips what lies outside m x n; reads C only when beta != 0. T is C's
 * element type (elem.cuh): fp16 for every kernel but the fast ones' bf16 builds. */
template <typename T = __half>
static __device__ __forceinline__ void store_pair(gemm_args a, int32_t row, int32_t col,
                                                  float v0, float v1) {
    if (row >= a.m || col >= a.n) return;
    T *c = (T *)a.C + (int64_t)row * a.ldc + col;
    v0 *= a.alpha;
    v1 *= a.alpha;
    if (col + 1 < a.n) {
        if (a.beta != 0.0f) {
            float2 old = elem<T>::unpack(*(const uint32_t *)c);
            v0 += a.beta * old.x;
            v1 += a.beta * old.y;
        }
        *(uint32_t *)c = elem<T>::pack(v0, v1);
    } else {
        if (a.beta != 0.0f) v0 += a.beta * elem<T>::to_float(*c);
        *c = elem<T>::from_float(v0);
    }
}

/* store_pair without a branch that depends on the thread: each access under
 * its own predicate. For a kernel whose WGMMA descriptors live in uniform
 * registers (V8): a thread-dependent branch anywhere inside its tile loop
 * makes ptxas keep the loop's counters, and every descriptor built from
 * them, in ordinary registers (docs/notes/v8-log.md, run 158). */
template <typename T>
static __device__ __forceinline__ void store_pair_flat(gemm_args a, int32_t row, int32_t col, float v0, float v1) {
    const bool in = row < a.m && col < a.n, two = in && col + 1 < a.n, one = in && !two;
    T *c = (T *)a.C + (int64_t)row * a.ldc + col;
    v0 *= a.alpha;
    v1 *= a.alpha;
    if (a.beta != 0.0f) { /* the same for every thread */
        const float2 old = elem<T>::unpack(ld_global_b32_if(two, c));
        const float old0 = elem<T>::from_bits(ld_global_b16_if(one, c));
        v0 += a.beta * (two ? old.x : old0);
        v1 += a.beta * old.y;
    }
    st_global_b32_if(two, c, elem<T>::pack(v0, v1));
    st_global_b16_if(one, c, elem<T>::bits(v0));
}

/* Epilogue of one warpgroup's m64nN fp32 accumulator (N/2 registers), whose
 * top-left element is C[row0][col0]. Fragment layout (PTX ISA, "wgmma
 * register fragments"): register 4j+e of thread t holds row 16*(t/32) +
 * (t%32)/4 + 8*(e/2), column 8j + 2*(t%4) + e%2. FLAT: through
 * store_pair_flat (V8) instead of store_pair. */
template <typename T, int N, bool FLAT = false>
static __device__ __forceinline__ void epilogue_m64n_f32(gemm_args a, const float d[N / 2], int32_t row0,
                                                         int32_t col0) {
    int t = threadIdx.x % WARPGROUP_THREADS;
    int32_t row = row0 + 16 * (t / 32) + (t % 32) / 4;
    int32_t col = col0 + 2 * (t % 4);
#pragma unroll
    for (int j = 0; j < N / 8; j++) {
        if constexpr (FLAT) {
            store_pair_flat<T>(a, row, col + 8 * j, d[4 * j + 0], d[4 * j + 1]);
            store_pair_flat<T>(a, row + 8, col + 8 * j, d[4 * j + 2], d[4 * j + 3]);
        } else {
            store_pair<T>(a, row, col + 8 * j, d[4 * j + 0], d[4 * j + 1]);
            store_pair<T>(a, row + 8, col + 8 * j, d[4 * j + 2], d[4 * j + 3]);
        }
    }
}

/* An fp32 C's pair at (row, col) (col even): its address, and which of it
 * lies in m x n: both (two), the first alone (one), or neither. */
typedef struct f32_pair {
    float *p;
    bool two, one;
} f32_pair;

static __device__ __forceinline__ f32_pair f32_pair_at(const gemm_args &a, int32_t row, int32_t col) {
    const bool in = row < a.m && col < a.n, two = in && col + 1 < a.n;
    const f32_pair r = {(float *)a.C + (int64_t)row * a.ldc + col, two, in && !two};
    return r;
}

/* store_pair_flat for an fp32 C (hgemm_options.c_fp32): C[row][col],
 * C[row][col+1] = alpha * (v0, v1) + beta * C, one 8-byte access per pair
 * (col even, ldc a multiple of 8, C 16-byte aligned). */
static __device__ __forceinline__ void store_pair_f32_flat(gemm_args a, int32_t row, int32_t col, float v0, float v1) {
    const f32_pair q = f32_pair_at(a, row, col);
    const bool two = q.two, one = q.one;
    float *c = q.p;
    v0 *= a.alpha;
    v1 *= a.alpha;
    if (a.beta != 0.0f) { /* the same for every thread */
        const uint64_t old = ld_global_b64_if(two, c);
        const uint32_t old0 = ld_global_b32_if(one, c);
        v0 += a.beta * __uint_as_float(two ? (uint32_t)old : old0);
        v1 += a.beta * __uint_as_float((uint32_t)(old >> 32));
    }
    st_global_b64_if(two, c, (uint64_t)__float_as_uint(v1) << 32 | __float_as_uint(v0));
    st_global_b32_if(one, c, __float_as_uint(v0));
}

/* epilogue_m64n_f32 (FLAT) into an fp32 C. With beta != 0 the old values
 * of eight column groups (16 pairs) are loaded at once before any is used,
 * so that their latencies overlap (store_pair_f32_flat, one pair at a time,
 * waits for each load before the next: its asm keeps program order). */
template <int N>
static __device__ __forceinline__ void epilogue_m64n_f32_out_f32(gemm_args a, const float d[N / 2], int32_t row0,
                                                                 int32_t col0) {
    const int t = threadIdx.x % WARPGROUP_THREADS;
    const int32_t row = row0 + 16 * (t / 32) + (t % 32) / 4;
    const int32_t col = col0 + 2 * (t % 4);
    if (a.beta == 0.0f) { /* the same for every thread */
#pragma unroll
        for (int j = 0; j < N / 8; j++) {
            store_pair_f32_flat(a, row, col + 8 * j, d[4 * j + 0], d[4 * j + 1]);
            store_pair_f32_flat(a, row + 8, col + 8 * j, d[4 * j + 2], d[4 * j + 3]);
        }
        return;
    }
    constexpr int J = N / 8 < 8 ? N / 8 : 8;
    static_assert((N / 8) % J == 0, "whole batches of column groups");
#pragma unroll
    for (int j0 = 0; j0 < N / 8; j0 += J) {
        uint64_t old[2 * J];
#pragma unroll
        for (int j = 0; j < J; j++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const f32_pair q = f32_pair_at(a, row + 8 * h, col + 8 * (j0 + j));
                const uint64_t both = ld_global_b64_if(q.two, q.p);
                old[2 * j + h] = q.two ? both : (uint64_t)ld_global_b32_if(q.one, q.p);
            }
#pragma unroll
        for (int j = 0; j < J; j++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const f32_pair q = f32_pair_at(a, row + 8 * h, col + 8 * (j0 + j));
                float v0 = d[4 * (j0 + j) + 2 * h] * a.alpha, v1 = d[4 * (j0 + j) + 2 * h + 1] * a.alpha;
                v0 += a.beta * __uint_as_float((uint32_t)old[2 * j + h]); /* as store_pair_f32_flat */
                v1 += a.beta * __uint_as_float((uint32_t)(old[2 * j + h] >> 32));
                st_global_b64_if(q.two, q.p, (uint64_t)__float_as_uint(v1) << 32 | __float_as_uint(v0));
                st_global_b32_if(q.one, q.p, __float_as_uint(v0));
            }
    }
}

/* The m64n256 one, V1..V5's (fp16). */
static __device__ __forceinline__ void epilogue_m64n256_f32(gemm_args a, const float d[128],
                                                            int32_t row0, int32_t col0) {
    epilogue_m64n_f32<__half, 256>(a, d, row0, col0);
}

#endif
