/*
 * V5: one WGMMA group kept in flight.
 *
 * Changes from V4: a consumer no longer drains the tensor cores at every
 * k-tile. It issues the WGMMA of k-tile kt, then waits only until the group
 * of k-tile kt-1 has completed (wait_group 1), so the next group is queued
 * behind the running one and the tensor pipe never idles between k-tiles.
 * The stage of kt-1 is released then, one step late, because until that wait
 * returns its WGMMA may still be reading it. Same 128x256 tile, 2 consumer
 * warpgroups + 1 producer warp (9 warps), 4 stages, raster groups of 4, fp32
 * accumulation.
 *
 * Measured on an H200, 8192^3, median [range] of 3 runs (2026-11-29,
 * bench/results/2026-11-29-h200-run10-bench.csv; all runs: docs/notes/measurements.md):
 *           699 TFLOP/s [690..705], 0.954x cuBLAS COMPUTE_32F [0.924..0.974],
 *           0.918x COMPUTE_16F [0.891..0.933].
 */
#include "kernel_common.cuh"
#include "mma_tile.cuh"
#include "pipeline.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

enum {
    V5_BM = 128, V5_BN = 256,
    V5_STAGES = 4,
    V5_CONSUMERS = 2,                                        /* warpgroups 0 and 1 */
    V5_CONSUMER_THREADS = V5_CONSUMERS * WARPGROUP_THREADS,
    V5_THREADS = V5_CONSUMER_THREADS + WARP_SIZE,            /* + warp 8, the producer */
    V5_PRODUCER_WARP = V5_CONSUMER_THREADS / WARP_SIZE,
    V5_WG_M = V5_BM / V5_CONSUMERS,                          /* 64 rows per consumer */
    V5_TX_BYTES = (V5_BM + V5_BN) * BK * 2,
    V5_RASTER = 4,
};

typedef struct __align__(SW128_ALIGN) v5_smem {
    __half a[V5_STAGES][V5_BM * BK]; /* (STAGES, BM, BK), 128B-swizzled; rows 64g.. for consumer g */
    __half b[V5_STAGES][V5_BN * BK]; /* (STAGES, BN, BK), 128B-swizzled */
    uint64_t full[V5_STAGES];
    uint64_t empty[V5_STAGES];       /* V5_CONSUMERS arrivals per round */
} v5_smem;

static_assert(sizeof(((v5_smem *)0)->a[0]) % SW128_ALIGN == 0, "stages must stay 1024-byte aligned");
static_assert((V5_WG_M * BK * 2) % SW128_ALIGN == 0, "each consumer's A slice is 1024-byte aligned");
static_assert(sizeof(v5_smem) + SW128_ALIGN <= MAX_SMEM_PER_BLOCK, "shared memory budget of one block");

__global__ void __launch_bounds__(V5_THREADS)
v5_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
          gemm_args args, uint32_t tiles_m, uint32_t tiles_n) {
    extern __shared__ uint8_t smem_raw[];
    v5_smem *sm = (v5_smem *)smem_aligned(smem_raw);
    const int tid = threadIdx.x, warp = tid / WARP_SIZE;
    const hgemm_tile tile = hgemm_raster(blockIdx.x, tiles_m, tiles_n, V5_RASTER);
    const int32_t row0 = tile.m * V5_BM, col0 = tile.n * V5_BN;
    const int k_tiles = args.k_tiles;
    const pipe_ring ring = ring_make(sm->full, sm->empty, V5_STAGES);

    if (tid == 0) ring_init(ring, V5_CONSUMERS);
    __syncthreads();

    if (warp == V5_PRODUCER_WARP) {
        if (tid % WARP_SIZE == 0) {
            pipe_state st = {0, 0};
            for (int kt = 0; kt < k_tiles; kt++, ring_advance(ring, &st)) {
                uint64_t *full = ring_producer_acquire(ring, st, V5_TX_BYTES);
                tma_load_2d(sm->a[st.stage], &tmap_a, kt * BK, row0, full);
                tma_load_2d(sm->b[st.stage], &tmap_b, kt * BK, col0, full);
            }
        }
        return;
    }

    const int g = tid / WARPGROUP_THREADS; /* consumer warpgroup: rows 64g .. 64g+63 */
    const bool leader = tid % WARPGROUP_THREADS == 0;
    float d[128] = {}; /* (64, 256) fp32 accumulator */
    pipe_state st = {0, 0}, held = {0, 0}; /* held: the stage of the group still in flight */
    for (int kt = 0; kt < k_tiles; kt++, ring_advance(ring, &st)) {
        ring_consumer_wait(ring, st);
        const uint64_t desc_a = wgmma_desc_sw128(&sm->a[st.stage][g * V5_WG_M * BK]);
        const uint64_t desc_b = wgmma_desc_sw128(sm->b[st.stage]);
        wgmma_fence();
        wgmma_ktile_m64n256_f32(d, desc_a, desc_b, 1);
        wgmma_commit_group();
        wgmma_wait_group_1(); /* k-tile kt-1 is done; kt stays in flight */
        ring_release_held(ring, &held, st, leader && kt > 0);
    }
    wgmma_wait_group_0();
    ring_release_last(ring, held, leader && k_tiles > 0);
    epilogue_m64n256_f32(args, d, row0 + g * V5_WG_M, col0);
}

/* What this kernel can serve, decided on the CPU (api.c asks before any CUDA
 * call): the TMA limits of A and B, and a 1-D grid of tiles. */
extern "C" hgemm_status hgemm__supports_v5(const hgemm_problem *p) {
    hgemm_status st = hgemm__tmap_supports(p, 0);
    if (st != HGEMM_SUCCESS) return st;
    const uint64_t tiles = (uint64_t)hgemm_ceil_div(p->m, V5_BM) * hgemm_ceil_div(p->n, V5_BN);
    return tiles > MAX_GRID_X ? HGEMM_ERROR_NOT_SUPPORTED : HGEMM_SUCCESS;
}

extern "C" hgemm_status hgemm__launch_v5(const hgemm_problem *p, cudaStream_t stream) {
    hgemm_status st = hgemm__supports_v5(p);
    if (st != HGEMM_SUCCESS) return st;
    CUtensorMap ta, tb;
    st = tmap_ab(p, &ta, V5_BM, &tb, V5_BN);
    if (st != HGEMM_SUCCESS) return st;
    uint32_t tiles_m = hgemm_ceil_div(p->m, V5_BM), tiles_n = hgemm_ceil_div(p->n, V5_BN);
    gemm_args args = make_args(p);
    void *params[] = {&ta, &tb, &args, &tiles_m, &tiles_n};
    return hgemm__launch((const void *)v5_kernel, dim3(tiles_m * tiles_n), V5_THREADS,
                         sizeof(v5_smem) + SW128_ALIGN, 1, stream, params);
}
