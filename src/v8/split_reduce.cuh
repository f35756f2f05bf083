/*
 * v8/split_reduce.cuh: the definition of split-K's second kernel (declared
 * in v8/reduce.cuh), for the one file that builds it (src/v8/reduce.cu) and
 * the lab's own tiles.
 */
#ifndef HGEMM_V8_SPLIT_REDUCE_CUH
#define HGEMM_V8_SPLIT_REDUCE_CUH

#include "v8/reduce.cuh"

/* Split-K's second kernel (HGEMM_SK_REDUCE_KERNEL, the v8-split2k ablation),
 * after v8_kernel has left every slice's partial sum in its worker's slot:
 * block b finishes one share (v8_reduce_share) of one consumer's part of one
 * tile, b = ((slice * tiles + tile) * CLUSTER + rank) * V8_CONSUMERS + g, the
 * slot index of the worker that ran that slice. Every partial is read once,
 * by one of 128 threads on any SM. */
template <typename T, int BN, int CLUSTER, bool ROWS>
__global__ void __launch_bounds__(WARPGROUP_THREADS, 4) /* registers for every batch load in flight */
v8_split_reduce(const float *partials, gemm_args args, uint32_t ctiles_m, uint32_t tiles_n, hgemm_sk sk,
                v8_batch bt) {
    const uint32_t tiles = sk.tiles;
    const int g = (int)(blockIdx.x % V8_CONSUMERS);
    const uint32_t rank = blockIdx.x / V8_CONSUMERS % CLUSTER;
    const uint32_t worker = blockIdx.x / (V8_CONSUMERS * CLUSTER);
    const uint32_t slice = worker / tiles, tile = worker - slice * tiles;
    const uint32_t entry = tile / bt.tiles;
    const hgemm_tile ct = v8_tile_at<ROWS>(tile - entry * bt.tiles, ctiles_m, tiles_n, bt.raster);
    const int32_t row0 = v8_row0<CLUSTER>(ct, rank), col0 = (int32_t)(ct.n * BN);
    if (row0 >= args.m) return; /* v8_kernel stored nothing for it either */
    gemm_args out = args;
    out.C = (__half *)((T *)args.C + (int64_t)entry * bt.stride_c);
    v8_reduce_share<T, BN, CLUSTER, V8_REDUCE_BATCH>(partials, out, sk, tile, rank, g, slice, row0 + g * V8_WG_M,
                                                     col0, (int)(threadIdx.x % WARPGROUP_THREADS));
}

#endif /* HGEMM_V8_SPLIT_REDUCE_CUH */
