/*
 * add.cu: C += the received partials, for (b)'s copy-engine path
 * (src/nccl/add.h). One thread per 8 columns of a row: 16-byte loads and
 * stores where the 8 lie inside the row, element by element at a ragged
 * end. The sum is kept in fp32 and rounded to fp16 once, so for two terms it
 * is round_fp16(a + b) exactly (fp32's 24 bits are at least 2 x 11 + 2).
 *
 * The common case, one block to add and whole 16-byte groups (2 ranks, n a
 * multiple of 8), has a kernel of its own: each thread issues the loads of
 * ADD_UNROLL groups (C and R, 2 x ADD_UNROLL x 16 bytes) before it adds any,
 * so that enough bytes are in flight to keep HBM busy; the general kernel
 * waits for C's load before it starts R's. Same sums, bit for bit.
 */
#include <cuda_fp16.h>
#include <stdint.h>

#include "add.h"

enum {
    ADD_THREADS = 256,
    ADD_MAX_BLOCKS = 65536, /* a grid-stride loop covers the rest */
    ADD_VEC = 8,            /* fp16 elements in 16 bytes */
    ADD_UNROLL = 4          /* groups per thread and step in add_one_kernel */
};

typedef struct add_args {
    __half *C;
    const __half *R;
    int64_t ldc, block, ldr, rows, cols;
    int32_t blocks, skip;
} add_args;

/* Eight fp16 in 16 bytes (uint4), as the loads and stores move them. */
typedef union add_vec {
    uint4 raw;
    __half h[ADD_VEC];
} add_vec;

__global__ void __launch_bounds__(ADD_THREADS) add_kernel(add_args a) {
    const int64_t groups = (a.cols + ADD_VEC - 1) / ADD_VEC; /* per row */
    const int64_t total = groups * a.rows;
    for (int64_t g = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; g < total;
         g += (int64_t)gridDim.x * blockDim.x) {
        const int64_t row = g / groups, col = (g - row * groups) * ADD_VEC;
        __half *c = a.C + row * a.ldc + col;
        const __half *r = a.R + row * a.ldr + col;
        if (col + ADD_VEC <= a.cols) {
            float acc[ADD_VEC];
            add_vec v;
            v.raw = *(const uint4 *)c;
            for (int i = 0; i < ADD_VEC; i++) acc[i] = __half2float(v.h[i]);
            for (int p = 0; p < a.blocks; p++) {
                if (p == a.skip) continue;
                v.raw = *(const uint4 *)(r + p * a.block);
                for (int i = 0; i < ADD_VEC; i++) acc[i] += __half2float(v.h[i]);
            }
            for (int i = 0; i < ADD_VEC; i++) v.h[i] = __float2half_rn(acc[i]);
            *(uint4 *)c = v.raw;
        } else {
            for (int64_t i = 0; col + i < a.cols; i++) {
                float acc = __half2float(c[i]);
                for (int p = 0; p < a.blocks; p++)
                    if (p != a.skip) acc += __half2float(r[p * a.block + i]);
                c[i] = __float2half_rn(acc);
            }
        }
    }
}

/* The 8 sums of one group: fp32, one rounding each, as add_kernel's. */
static __device__ __forceinline__ uint4 add_group(uint4 c, uint4 r) {
    add_vec x, y;
    x.raw = c;
    y.raw = r;
#pragma unroll
    for (int i = 0; i < ADD_VEC; i++) x.h[i] = __float2half_rn(__half2float(x.h[i]) + __half2float(y.h[i]));
    return x.raw;
}

/* C += R (one block, already offset by the caller), cols a multiple of
 * ADD_VEC: group g is row g / groups, columns 8 (g % groups) ... A thread
 * takes groups g, g + stride, ... g + (ADD_UNROLL - 1) stride of each step. */
__global__ void __launch_bounds__(ADD_THREADS) add_one_kernel(add_args a) {
    const int64_t groups = a.cols / ADD_VEC;
    const int64_t total = groups * a.rows;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t g0 = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; g0 < total; g0 += ADD_UNROLL * stride) {
        uint4 c[ADD_UNROLL], r[ADD_UNROLL];
        __half *cp[ADD_UNROLL];
#pragma unroll
        for (int u = 0; u < ADD_UNROLL; u++) {
            const int64_t g = g0 + u * stride;
            if (g < total) {
                const int64_t row = g / groups, col = (g - row * groups) * ADD_VEC;
                cp[u] = a.C + row * a.ldc + col;
                c[u] = __ldcs((const uint4 *)cp[u]);
                r[u] = __ldcs((const uint4 *)(a.R + row * a.ldr + col));
            }
        }
#pragma unroll
        for (int u = 0; u < ADD_UNROLL; u++)
            if (g0 + u * stride < total) *(uint4 *)cp[u] = add_group(c[u], r[u]);
    }
}

extern "C" cudaError_t hgemm_nccl_add_blocks(void *C, int64_t ldc, const void *R, int64_t block,
                                             int64_t ldr, int blocks, int skip, int64_t rows,
                                             int64_t cols, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0 || blocks <= 0 || (blocks == 1 && skip == 0)) return cudaSuccess;
    add_args a = {(__half *)C, (const __half *)R, ldc, block, ldr, rows, cols, blocks, skip};
    const int64_t groups = (cols + ADD_VEC - 1) / ADD_VEC * rows;
    /* One block to add (the other is `skip`) and whole groups: add_one_kernel
     * on that block. */
    const int one = (blocks == 2 && (skip == 0 || skip == 1)) || (blocks == 1 && skip != 0);
    if (one && cols % ADD_VEC == 0) {
        const int p = blocks == 2 ? 1 - skip : 0;
        a.R = (const __half *)R + (int64_t)p * block;
        const int64_t per_block = (int64_t)ADD_THREADS * ADD_UNROLL;
        const int64_t want = (groups + per_block - 1) / per_block, most = ADD_MAX_BLOCKS;
        const dim3 grid((unsigned)(want < most ? want : most)), block_dim(ADD_THREADS);
        void *args[] = {&a};
        return cudaLaunchKernel((const void *)add_one_kernel, grid, block_dim, args, 0, stream);
    }
    const int64_t want = (groups + ADD_THREADS - 1) / ADD_THREADS;
    const int64_t most = ADD_MAX_BLOCKS;
    const dim3 grid((unsigned)(want < most ? want : most)), block_dim(ADD_THREADS);
    void *args[] = {&a};
    return cudaLaunchKernel((const void *)add_kernel, grid, block_dim, args, 0, stream);
}
