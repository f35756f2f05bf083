/*
 * V7: persistent blocks.
 *
 * Changes from V6: one block per SM for the whole product instead of one
 * block per tile. Each block walks the tiles blockIdx.x, blockIdx.x +
 * gridDim.x, ... (in the same 8-wide raster order, so the 132 tiles in work
 * at one time are the ones a V6 wave would hold), and every role keeps its
 * state from one tile to the next:
 *   - the loader warp (16) never stops: its ring position carries over, so
 *     while the consumers finish a tile and run its epilogue, the first
 *     stages of the next tile are already loading (V6 paid a ring fill,
 *     a DRAM round trip, at the start of every tile);
 *   - a storer warp (17) takes over the TMA stores that V6's producer did
 *     after its loads; four epi_free barriers instead of three, because the
 *     buffer now passes from group 3 of one tile to group 0 of the next;
 *   - a consumer group that has staged its quarter goes straight on to the
 *     next tile's k-loop on the stages the loader filled meanwhile, so the
 *     four groups' serialized epilogue overlaps tensor-core work.
 * The tile, the fp16 accumulation, the 3-stage ring and the epilogue buffer
 * are V6's. 18 warps (576 threads).
 *
 * Barrier phases: epi_ready[g] and epi_free[g] complete once per tile that
 * goes through the buffer, so both sides wait on parity (that count & 1);
 * tiles stored directly (right edge, n % 8 != 0) skip the handoff on both sides.
 *
 * Measured on an H200, 8192^3, median [range] of 3 runs (2026-11-29,
 * bench/results/2026-11-29-h200-run10-bench.csv; all runs: docs/notes/measurements.md):
 *           807 TFLOP/s [798..814], 1.101x cuBLAS COMPUTE_32F [1.069..1.123],
 *           1.062x COMPUTE_16F [1.029..1.076].
 * Level with V6 in that one-process run (V6: 816 [799..817]); ahead of it in
 * three fresh processes (829 [805..829] against 794 [793..817], run 10) and
 * under Nsight Compute: tensor pipe 97.5% against V6's 95.6%, 1.331 against
 * 1.357 ms at the same clock. The wave tail (1024 tiles on 132 SMs) remains.
 */
#include "kernel_common.cuh"
#include "epilogue_f16.cuh"
#include "mma_tile.cuh"
#include "pipeline.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

enum {
    V7_BM = 256, V7_BN = 256,
    V7_STAGES = 3,
    V7_CONSUMERS = 4,
    V7_CONSUMER_THREADS = V7_CONSUMERS * WARPGROUP_THREADS, /* warps 0-15 */
    V7_LOADER_WARP = V7_CONSUMER_THREADS / WARP_SIZE,        /* warp 16: TMA loads */
    V7_STORER_WARP = V7_LOADER_WARP + 1,                     /* warp 17: TMA stores */
    V7_THREADS = V7_CONSUMER_THREADS + 2 * WARP_SIZE,
    V7_SLAB_M = V7_BM / V7_CONSUMERS,                        /* 64 rows: one consumer's A */
    V7_TX_BYTES = (V7_BM + V7_BN) * BK * 2,                  /* 64 KB per stage */
    V7_RASTER = 8,
    V7_EPI_READY_ARRIVALS = WARPGROUP_THREADS,               /* every thread of a group staged its part */
};

typedef struct __align__(SW128_ALIGN) v7_smem {
    __half a[V7_STAGES][V7_CONSUMERS][V7_SLAB_M * BK]; /* (STAGES, slab, 64, BK), 128B-swizzled */
    __half b[V7_STAGES][V7_BN * BK];                   /* (STAGES, BN, BK), 128B-swizzled */
    __half c[F16Q_BOXES][F16Q_ROWS * F16Q_BOX];        /* one quarter (64, 256) as 4 swizzled 64x64 boxes */
    uint64_t full[V7_STAGES];
    uint64_t empty[V7_STAGES];                         /* all four consumers release a stage */
    uint64_t epi_ready[V7_CONSUMERS];                  /* group g has staged its quarter in c */
    uint64_t epi_free[V7_CONSUMERS];                   /* quarter g has left c: the next writer may start */
} v7_smem;

static_assert((V7_SLAB_M * BK * 2) % SW128_ALIGN == 0, "A slabs must stay 1024-byte aligned");
static_assert((int)V7_SLAB_M == (int)F16Q_ROWS && (int)V7_BN == (int)F16Q_COLS,
              "a consumer's quarter is epilogue_f16's shape");
static_assert(sizeof(v7_smem) + SW128_ALIGN <= MAX_SMEM_PER_BLOCK,
              "3 stages of 64 KB + the 32 KB C buffer must fit one block's 227 KB");

__global__ void __launch_bounds__(V7_THREADS, 1)
v7_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
          const __grid_constant__ CUtensorMap tmap_c, gemm_args args, uint32_t tiles_m,
          uint32_t tiles_n) {
    extern __shared__ uint8_t smem_raw[];
    v7_smem *sm = (v7_smem *)smem_aligned(smem_raw);
    const int tid = threadIdx.x, warp = tid / WARP_SIZE, lane = tid % WARP_SIZE;
    const uint32_t tiles = tiles_m * tiles_n;
    const int k_tiles = args.k_tiles;
    const pipe_ring ring = ring_make(sm->full, sm->empty, V7_STAGES);

    if (tid == 0) {
        ring_init(ring, V7_CONSUMERS);
        for (int i = 0; i < V7_CONSUMERS; i++) {
            mbarrier_init(&sm->epi_ready[i], V7_EPI_READY_ARRIVALS);
            mbarrier_init(&sm->epi_free[i], 1);
        }
        fence_mbarrier_init();
    }
    if (warp == V7_LOADER_WARP && lane == 0) {
        prefetch_tensormap(&tmap_a);
        prefetch_tensormap(&tmap_b);
    }
    if (warp == V7_STORER_WARP && lane == 0) prefetch_tensormap(&tmap_c);
    __syncthreads();

    if (warp == V7_LOADER_WARP) {
        if (lane != 0) return;
        /* V6's order: slab 1 last, consumer 1 is the first to wait for the buffer. */
        const int slab_order[V7_CONSUMERS] = {0, 2, 3, 1};
        pipe_state st = {0, 0};
        for (uint32_t t = blockIdx.x; t < tiles; t += gridDim.x) {
            const hgemm_tile tile = hgemm_raster(t, tiles_m, tiles_n, V7_RASTER);
            const int32_t row0 = tile.m * V7_BM, col0 = tile.n * V7_BN;
            for (int kt = 0; kt < k_tiles; kt++, ring_advance(ring, &st)) {
                uint64_t *full = ring_producer_acquire(ring, st, V7_TX_BYTES);
                tma_load_2d(sm->b[st.stage], &tmap_b, kt * BK, col0, full);
#pragma unroll
                for (int i = 0; i < V7_CONSUMERS; i++) {
                    const int slab = slab_order[i];
                    tma_load_2d(sm->a[st.stage][slab], &tmap_a, kt * BK, row0 + slab * V7_SLAB_M, full);
                }
            }
        }
        return;
    }

    if (warp == V7_STORER_WARP) {
        if (lane != 0) return;
        uint32_t handoffs = 0; /* tiles stored through the buffer so far */
        for (uint32_t t = blockIdx.x; t < tiles; t += gridDim.x) {
            const hgemm_tile tile = hgemm_raster(t, tiles_m, tiles_n, V7_RASTER);
            const int32_t row0 = tile.m * V7_BM, col0 = tile.n * V7_BN;
            if (f16q_needs_direct(args, col0, V7_BN)) continue; /* the consumers store it */
            for (int g = 0; g < V7_CONSUMERS; g++) {
                mbarrier_wait(&sm->epi_ready[g], handoffs & 1);
                fence_proxy_async_shared();
#pragma unroll
                for (int b = 0; b < F16Q_BOXES; b++)
                    tma_store_2d(&tmap_c, col0 + b * F16Q_BOX, row0 + g * V7_SLAB_M, sm->c[b]);
                bulk_commit_group();
                bulk_wait_group_read_0(); /* TMA has read c: it may be overwritten */
                mbarrier_arrive(&sm->epi_free[g]);
            }
            handoffs++;
        }
        bulk_wait_group_0(); /* the last writes are done before the block exits */
        return;
    }

    const int g = tid / WARPGROUP_THREADS; /* consumer: rows 64g .. 64g+63 of each tile */
    const bool leader = tid % WARPGROUP_THREADS == 0;
    uint32_t d[F16Q_ACC_REGS];             /* (64, 256) fp16 accumulator, pairs per register */
    pipe_state st = {0, 0};
    uint32_t handoffs = 0;
    for (uint32_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        const hgemm_tile tile = hgemm_raster(t, tiles_m, tiles_n, V7_RASTER);
        const int32_t row0 = tile.m * V7_BM, col0 = tile.n * V7_BN;
#pragma unroll
        for (int r = 0; r < F16Q_ACC_REGS; r++) d[r] = 0;

        pipe_state held = st;
        for (int kt = 0; kt < k_tiles; kt++, ring_advance(ring, &st)) {
            ring_consumer_wait(ring, st);
            const uint64_t desc_a = wgmma_desc_sw128(sm->a[st.stage][g]);
            const uint64_t desc_b = wgmma_desc_sw128(sm->b[st.stage]);
            wgmma_fence();
            wgmma_ktile_m64n256_f16(d, desc_a, desc_b, 1);
            wgmma_commit_group();
            wgmma_wait_group_1(); /* as V5/V6: k-tile kt-1 done, kt in flight */
            ring_release_held(ring, &held, st, leader && kt > 0);
        }
        wgmma_wait_group_0();
        ring_release_last(ring, held, leader); /* k_tiles >= 1: k == 0 never reaches a kernel */

        const int32_t qrow0 = row0 + g * V7_SLAB_M;
        if (f16q_needs_direct(args, col0, V7_BN)) {
            f16q_store_direct(d, args, qrow0, col0);
            continue;
        }
        /* Handoff: the buffer is ours once the quarter before ours has left it
         * (for group 0, quarter 3 of this block's previous tile). */
        if (g > 0)
            mbarrier_wait(&sm->epi_free[g - 1], handoffs & 1);
        else if (handoffs > 0)
            mbarrier_wait(&sm->epi_free[V7_CONSUMERS - 1], (handoffs - 1) & 1);
        f16q_stage(sm->c[0], d, args, qrow0, col0);
        fence_proxy_async_shared();
        mbarrier_arrive(&sm->epi_ready[g]);
        handoffs++;
    }
}

/* What this kernel can serve, decided on the CPU (api.c asks before any CUDA
 * call): the TMA limits of A, B and C, and a 1-D grid of tiles. */
extern "C" hgemm_status hgemm__supports_v7(const hgemm_problem *p) {
    hgemm_status st = hgemm__tmap_supports(p, 1);
    if (st != HGEMM_SUCCESS) return st;
    const uint64_t tiles = (uint64_t)hgemm_ceil_div(p->m, V7_BM) * hgemm_ceil_div(p->n, V7_BN);
    return tiles > MAX_GRID_X ? HGEMM_ERROR_NOT_SUPPORTED : HGEMM_SUCCESS;
}

extern "C" hgemm_status hgemm__launch_v7(const hgemm_problem *p, cudaStream_t stream) {
    hgemm_status st = hgemm__supports_v7(p);
    if (st != HGEMM_SUCCESS) return st;
    CUtensorMap ta, tb, tc;
    st = tmap_ab(p, &ta, V7_SLAB_M, &tb, V7_BN);
    if (st == HGEMM_SUCCESS) st = tmap_c(p, &tc, F16Q_ROWS, F16Q_BOX);
    if (st != HGEMM_SUCCESS) return st;
    uint32_t tiles_m = hgemm_ceil_div(p->m, V7_BM), tiles_n = hgemm_ceil_div(p->n, V7_BN);
    int sms = 0;
    const hgemm_status sst = hgemm__target_sms(p->sm_count, &sms);
    if (sst != HGEMM_SUCCESS) return sst;
    const uint32_t tiles = tiles_m * tiles_n;
    const uint32_t grid = tiles < (uint32_t)sms ? tiles : (uint32_t)sms; /* one block per SM */
    gemm_args args = make_args(p);
    void *params[] = {&ta, &tb, &tc, &args, &tiles_m, &tiles_n};
    return hgemm__launch((const void *)v7_kernel, grid, V7_THREADS,
                         sizeof(v7_smem) + SW128_ALIGN, 1, stream, params);
}
