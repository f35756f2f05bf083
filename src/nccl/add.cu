/*
 * add.cu: C += the received partials, for (b)'s copy-engine path
 * (src/nccl/add.h). One thread per 8 columns of a row: 16-byte loads and
 * stores where the 8 lie inside the row, element by element at a ragged
 * end. The sum is kept in fp32 and rounded to fp16 once, so for two terms it
 * is round_fp16(a + b) exactly (fp32's 24 bits are at least 2 x 11 + 2).
 */
#include <cuda_fp16.h>
#include <stdint.h>

#include "add.h"

enum {
    ADD_THREADS = 256,
    ADD_MAX_BLOCKS = 65536, /* a grid-stride loop covers the rest */
    ADD_VEC = 8             /* fp16 elements in 16 bytes */
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

extern "C" cudaError_t hgemm_nccl_add_blocks(void *C, int64_t ldc, const void *R, int64_t block,
                                             int64_t ldr, int blocks, int skip, int64_t rows,
                                             int64_t cols, cudaStream_t stream) {
    if (rows <= 0 || cols <= 0 || blocks <= 0 || (blocks == 1 && skip == 0)) return cudaSuccess;
    add_args a = {(__half *)C, (const __half *)R, ldc, block, ldr, rows, cols, blocks, skip};
    const int64_t groups = (cols + ADD_VEC - 1) / ADD_VEC * rows;
    const int64_t want = (groups + ADD_THREADS - 1) / ADD_THREADS;
    const int64_t most = ADD_MAX_BLOCKS;
    const dim3 grid((unsigned)(want < most ? want : most)), block_dim(ADD_THREADS);
    void *args[] = {&a};
    return cudaLaunchKernel((const void *)add_kernel, grid, block_dim, args, 0, stream);
}
