/*
 * V6: four consumer warpgroups, fp16 accumulation, a TMA-store epilogue.
 *
 * Changes from V5, three that only work together:
 *   - the tile grows to 256x256: four consumer warpgroups, each owning a
 *     64x256 quarter, four WGMMA streams sharing every B tile (17 warps:
 *     4 x 4 consumers + 1 producer);
 *   - WGMMA accumulates in fp16 (.f16.f16.f16): 64 registers per thread for
 *     a quarter instead of 128. With fp32, 512 consumer threads x 128
 *     accumulator registers would be the SM's whole 64K register file;
 *   - the epilogue goes through shared memory and TMA: one 64x256 buffer
 *     that the four groups fill in turn; the producer warp, idle once its
 *     loads are issued, stores each quarter with bulk tensor copies.
 * Also: 3 stages (a stage is 64 KB now), raster groups 8 wide, and A is
 * loaded as four 64-row slabs, one per consumer, slab 1 issued last.
 *
 * Measured on an H200, 8192^3, median [range] of 3 runs (2026-11-29,
 * bench/results/2026-11-29-h200-run10-bench.csv; all runs: docs/notes/measurements.md):
 *           816 TFLOP/s [799..817], 1.102x cuBLAS COMPUTE_32F [1.094..1.114],
 *           1.056x COMPUTE_16F [1.042..1.087].
 */
#include "kernel_common.cuh"
#include "epilogue_f16.cuh"
#include "mma_tile.cuh"
#include "pipeline.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

enum {
    V6_BM = 256, V6_BN = 256,
    V6_STAGES = 3,
    V6_CONSUMERS = 4,
    V6_CONSUMER_THREADS = V6_CONSUMERS * WARPGROUP_THREADS,  /* warps 0-15 */
    V6_THREADS = V6_CONSUMER_THREADS + WARP_SIZE,             /* + warp 16, the producer */
    V6_PRODUCER_WARP = V6_CONSUMER_THREADS / WARP_SIZE,
    V6_SLAB_M = V6_BM / V6_CONSUMERS,                         /* 64 rows: one consumer's A */
    V6_TX_BYTES = (V6_BM + V6_BN) * BK * 2,                   /* 64 KB per stage */
    V6_RASTER = 8,
    V6_EPI_READY_ARRIVALS = WARPGROUP_THREADS, /* every thread of a group has staged its part */
    V6_EPI_FREE_BARRIERS = V6_CONSUMERS - 1,   /* the last group hands the buffer to nobody */
};

typedef struct __align__(SW128_ALIGN) v6_smem {
    __half a[V6_STAGES][V6_CONSUMERS][V6_SLAB_M * BK]; /* (STAGES, slab, 64, BK), 128B-swizzled */
    __half b[V6_STAGES][V6_BN * BK];                   /* (STAGES, BN, BK), 128B-swizzled */
    __half c[F16Q_BOXES][F16Q_ROWS * F16Q_BOX];        /* one quarter (64, 256) as 4 swizzled 64x64 boxes */
    uint64_t full[V6_STAGES];
    uint64_t empty[V6_STAGES];                         /* all four consumers release a stage */
    uint64_t epi_ready[V6_CONSUMERS];                  /* group i has staged its quarter in c */
    uint64_t epi_free[V6_EPI_FREE_BARRIERS];           /* quarter i has left c: group i+1 may write */
} v6_smem;

static_assert((V6_SLAB_M * BK * 2) % SW128_ALIGN == 0, "A slabs must stay 1024-byte aligned");
static_assert((int)V6_SLAB_M == (int)F16Q_ROWS && (int)V6_BN == (int)F16Q_COLS, "a consumer's quarter is epilogue_f16's shape");
static_assert(sizeof(v6_smem) + SW128_ALIGN <= MAX_SMEM_PER_BLOCK,
              "3 stages of 64 KB + the 32 KB C buffer must fit one block's 227 KB");

__global__ void __launch_bounds__(V6_THREADS, 1)
v6_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
          const __grid_constant__ CUtensorMap tmap_c, gemm_args args, uint32_t tiles_m,
          uint32_t tiles_n) {
    extern __shared__ uint8_t smem_raw[];
    v6_smem *sm = (v6_smem *)smem_aligned(smem_raw);
    const int tid = threadIdx.x, warp = tid / WARP_SIZE;
    const hgemm_tile tile = hgemm_raster(blockIdx.x, tiles_m, tiles_n, V6_RASTER);
    const int32_t row0 = tile.m * V6_BM, col0 = tile.n * V6_BN;
    const int k_tiles = args.k_tiles;
    const bool direct = f16q_needs_direct(args, col0, V6_BN);
    const pipe_ring ring = ring_make(sm->full, sm->empty, V6_STAGES);

    if (tid == 0) {
        ring_init(ring, V6_CONSUMERS);
        for (int i = 0; i < V6_CONSUMERS; i++) mbarrier_init(&sm->epi_ready[i], V6_EPI_READY_ARRIVALS);
        for (int i = 0; i < V6_EPI_FREE_BARRIERS; i++) mbarrier_init(&sm->epi_free[i], 1);
        fence_mbarrier_init();
    }
    if (tid == V6_CONSUMER_THREADS) { /* the producer: fetch the descriptors while barriers start */
        prefetch_tensormap(&tmap_a);
        prefetch_tensormap(&tmap_b);
        prefetch_tensormap(&tmap_c);
    }
    __syncthreads();

    if (warp == V6_PRODUCER_WARP) {
        if (tid % WARP_SIZE != 0) return;
        /* Main loop: five loads per stage. Slab 1 goes last: consumer 1 is the
         * first group that will also wait for the epilogue buffer. */
        const int slab_order[V6_CONSUMERS] = {0, 2, 3, 1};
        pipe_state st = {0, 0};
        for (int kt = 0; kt < k_tiles; kt++, ring_advance(ring, &st)) {
            uint64_t *full = ring_producer_acquire(ring, st, V6_TX_BYTES);
            tma_load_2d(sm->b[st.stage], &tmap_b, kt * BK, col0, full);
#pragma unroll
            for (int i = 0; i < V6_CONSUMERS; i++) {
                const int slab = slab_order[i];
                tma_load_2d(sm->a[st.stage][slab], &tmap_a, kt * BK, row0 + slab * V6_SLAB_M, full);
            }
        }
        if (direct) return; /* the consumers store this tile themselves */
        /* Epilogue: store the quarters in order as the groups stage them. */
        for (int i = 0; i < V6_CONSUMERS; i++) {
            mbarrier_wait(&sm->epi_ready[i], 0);
            /* The writers fenced their stores; this fence orders what the
             * barrier made visible to this thread before its own TMA reads. */
            fence_proxy_async_shared();
#pragma unroll
            for (int b = 0; b < F16Q_BOXES; b++)
                tma_store_2d(&tmap_c, col0 + b * F16Q_BOX, row0 + i * V6_SLAB_M, sm->c[b]);
            bulk_commit_group();
            if (i < V6_EPI_FREE_BARRIERS) {
                bulk_wait_group_read_0(); /* TMA has read c: it may be overwritten */
                mbarrier_arrive(&sm->epi_free[i]);
            }
        }
        bulk_wait_group_0(); /* the last quarter's writes are done before the block exits */
        return;
    }

    const int g = tid / WARPGROUP_THREADS; /* consumer: rows 64g .. 64g+63 of the tile */
    const bool leader = tid % WARPGROUP_THREADS == 0;
    uint32_t d[F16Q_ACC_REGS];               /* (64, 256) fp16 accumulator, pairs per register */
#pragma unroll
    for (int r = 0; r < F16Q_ACC_REGS; r++) d[r] = 0;

    pipe_state st = {0, 0}, held = {0, 0};
    for (int kt = 0; kt < k_tiles; kt++, ring_advance(ring, &st)) {
        ring_consumer_wait(ring, st);
        const uint64_t desc_a = wgmma_desc_sw128(sm->a[st.stage][g]);
        const uint64_t desc_b = wgmma_desc_sw128(sm->b[st.stage]);
        wgmma_fence();
        wgmma_ktile_m64n256_f16(d, desc_a, desc_b, 1);
        wgmma_commit_group();
        wgmma_wait_group_1(); /* as V5: k-tile kt-1 done, kt in flight */
        ring_release_held(ring, &held, st, leader && kt > 0);
    }
    wgmma_wait_group_0();
    ring_release_last(ring, held, leader && k_tiles > 0);

    if (direct) {
        f16q_store_direct(d, args, row0 + g * V6_SLAB_M, col0);
        return;
    }
    /* Epilogue handoff: wait until the previous quarter has left the buffer,
     * stage ours, make it visible to the async proxy, tell the producer. */
    if (g > 0) mbarrier_wait(&sm->epi_free[g - 1], 0);
    f16q_stage(sm->c[0], d, args, row0 + g * V6_SLAB_M, col0);
    fence_proxy_async_shared();
    mbarrier_arrive(&sm->epi_ready[g]);
}

/* What this kernel can serve, decided on the CPU (api.c asks before any CUDA
 * call): the TMA limits of A, B and C, and a 1-D grid of tiles. */
extern "C" hgemm_status hgemm__supports_v6(const hgemm_problem *p) {
    hgemm_status st = hgemm__tmap_supports(p, 1);
    if (st != HGEMM_SUCCESS) return st;
    const uint64_t tiles = (uint64_t)hgemm_ceil_div(p->m, V6_BM) * hgemm_ceil_div(p->n, V6_BN);
    return tiles > MAX_GRID_X ? HGEMM_ERROR_NOT_SUPPORTED : HGEMM_SUCCESS;
}

extern "C" hgemm_status hgemm__launch_v6(const hgemm_problem *p, cudaStream_t stream) {
    hgemm_status st = hgemm__supports_v6(p);
    if (st != HGEMM_SUCCESS) return st;
    CUtensorMap ta, tb, tc;
    st = tmap_ab(p, &ta, V6_SLAB_M, &tb, V6_BN);
    if (st == HGEMM_SUCCESS) st = tmap_c(p, &tc, F16Q_ROWS, F16Q_BOX);
    if (st != HGEMM_SUCCESS) return st;
    uint32_t tiles_m = hgemm_ceil_div(p->m, V6_BM), tiles_n = hgemm_ceil_div(p->n, V6_BN);
    gemm_args args = make_args(p);
    void *params[] = {&ta, &tb, &tc, &args, &tiles_m, &tiles_n};
    return hgemm__launch((const void *)v6_kernel, dim3(tiles_m * tiles_n), V6_THREADS,
                         sizeof(v6_smem) + SW128_ALIGN, 1, stream, params);
}
