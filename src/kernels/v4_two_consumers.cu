/*
 * V4: two consumer warpgroups, a pipeline abstraction, raster groups.
 *
 * Changes from V3:
 *   - the tile grows to 128x256 and its M is split between two consumer
 *     warpgroups (64x256 each): two independent WGMMA streams share every B
 *     tile, and the block does twice the math per byte of B it loads;
 *   - the stage/phase bookkeeping moves into src/pipeline.cuh
 *     (acquire / wait / release / advance);
 *   - a 1-D grid visits tiles in raster groups V4_RASTER tile-columns wide
 *     (src/raster.h), so the blocks resident at one time share a few B
 *     tiles and each A tile, and reuse them from L2.
 * Each consumer still waits for its own WGMMA (wait 0) before releasing a stage.
 *
 * Measured on an H200, 8192^3, median [range] of 3 runs (2026-11-29,
 * bench/results/2026-11-29-h200-run10-bench.csv; all runs: docs/notes/measurements.md):
 *           689 TFLOP/s [684..689], 0.934x cuBLAS COMPUTE_32F [0.924..0.951],
 *           0.911x COMPUTE_16F [0.873..0.918].
 */
#include "kernel_common.cuh"
#include "mma_tile.cuh"
#include "pipeline.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

enum {
    V4_BM = 128, V4_BN = 256,
    V4_STAGES = 4,
    V4_CONSUMERS = 2,                                        /* warpgroups 0 and 1 */
    V4_CONSUMER_THREADS = V4_CONSUMERS * WARPGROUP_THREADS,
    V4_THREADS = V4_CONSUMER_THREADS + WARP_SIZE,            /* + warp 8, the producer */
    V4_PRODUCER_WARP = V4_CONSUMER_THREADS / WARP_SIZE,
    V4_WG_M = V4_BM / V4_CONSUMERS,                          /* 64 rows per consumer */
    V4_TX_BYTES = (V4_BM + V4_BN) * BK * 2,
    V4_RASTER = 4,
};

typedef struct __align__(SW128_ALIGN) v4_smem {
    __half a[V4_STAGES][V4_BM * BK]; /* (STAGES, BM, BK), 128B-swizzled; rows 64g.. for consumer g */
    __half b[V4_STAGES][V4_BN * BK]; /* (STAGES, BN, BK), 128B-swizzled */
    uint64_t full[V4_STAGES];
    uint64_t empty[V4_STAGES];       /* V4_CONSUMERS arrivals per round */
} v4_smem;

static_assert(sizeof(((v4_smem *)0)->a[0]) % SW128_ALIGN == 0, "stages must stay 1024-byte aligned");
static_assert((V4_WG_M * BK * 2) % SW128_ALIGN == 0, "each consumer's A slice is 1024-byte aligned");
static_assert(sizeof(v4_smem) + SW128_ALIGN <= MAX_SMEM_PER_BLOCK, "shared memory budget of one block");

__global__ void __launch_bounds__(V4_THREADS)
v4_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
          gemm_args args, uint32_t tiles_m, uint32_t tiles_n) {
    extern __shared__ uint8_t smem_raw[];
    v4_smem *sm = (v4_smem *)smem_aligned(smem_raw);
    const int tid = threadIdx.x, warp = tid / WARP_SIZE;
    const hgemm_tile tile = hgemm_raster(blockIdx.x, tiles_m, tiles_n, V4_RASTER);
    const int32_t row0 = tile.m * V4_BM, col0 = tile.n * V4_BN;
    const int k_tiles = args.k_tiles;
    const pipe_ring ring = ring_make(sm->full, sm->empty, V4_STAGES);

    if (tid == 0) ring_init(ring, V4_CONSUMERS);
    __syncthreads();

    if (warp == V4_PRODUCER_WARP) {
        if (tid % WARP_SIZE == 0) {
            pipe_state st = {0, 0};
            for (int kt = 0; kt < k_tiles; kt++, ring_advance(ring, &st)) {
                uint64_t *full = ring_producer_acquire(ring, st, V4_TX_BYTES);
                tma_load_2d(sm->a[st.stage], &tmap_a, kt * BK, row0, full);
                tma_load_2d(sm->b[st.stage], &tmap_b, kt * BK, col0, full);
            }
        }
        return;
    }

    const int g = tid / WARPGROUP_THREADS; /* consumer warpgroup: rows 64g .. 64g+63 */
    const bool leader = tid % WARPGROUP_THREADS == 0;
    float d[128] = {}; /* (64, 256) fp32 accumulator */
    pipe_state st = {0, 0};
    for (int kt = 0; kt < k_tiles; kt++, ring_advance(ring, &st)) {
        ring_consumer_wait(ring, st);
        const uint64_t desc_a = wgmma_desc_sw128(&sm->a[st.stage][g * V4_WG_M * BK]);
        const uint64_t desc_b = wgmma_desc_sw128(sm->b[st.stage]);
        wgmma_fence();
        wgmma_ktile_m64n256_f32(d, desc_a, desc_b, 1);
        wgmma_commit_group();
        wgmma_wait_group_0();
        if (leader) ring_consumer_release(ring, st);
    }
    epilogue_m64n256_f32(args, d, row0 + g * V4_WG_M, col0);
}

/* What this kernel can serve, decided on the CPU (api.c asks before any CUDA
 * call): the TMA limits of A and B, and a 1-D grid of tiles. */
extern "C" hgemm_status hgemm__supports_v4(const hgemm_problem *p) {
    hgemm_status st = hgemm__tmap_supports(p, 0);
    if (st != HGEMM_SUCCESS) return st;
    const uint64_t tiles = (uint64_t)hgemm_ceil_div(p->m, V4_BM) * hgemm_ceil_div(p->n, V4_BN);
    return tiles > MAX_GRID_X ? HGEMM_ERROR_NOT_SUPPORTED : HGEMM_SUCCESS;
}

extern "C" hgemm_status hgemm__launch_v4(const hgemm_problem *p, cudaStream_t stream) {
    hgemm_status st = hgemm__supports_v4(p);
    if (st != HGEMM_SUCCESS) return st;
    CUtensorMap ta, tb;
    st = tmap_ab(p, &ta, V4_BM, &tb, V4_BN);
    if (st != HGEMM_SUCCESS) return st;
    uint32_t tiles_m = hgemm_ceil_div(p->m, V4_BM), tiles_n = hgemm_ceil_div(p->n, V4_BN);
    gemm_args args = make_args(p);
    void *params[] = {&ta, &tb, &args, &tiles_m, &tiles_n};
    return hgemm__launch((const void *)v4_kernel, dim3(tiles_m * tiles_n), V4_THREADS,
                         sizeof(v4_smem) + SW128_ALIGN, 1, stream, params);
}
