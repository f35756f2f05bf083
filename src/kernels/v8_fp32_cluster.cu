/*
 * V8: fp32 accumulation at cuBLAS speed: persistent blocks, moved registers,
 * and pairs of blocks that share each B tile.
 *
 * Changes from V5 (the last fp32-accumulating version; V6/V7 bought their
 * speed with fp16 accumulators that fp32 cannot use: four 64x256 fp32
 * quarters would need the whole register file):
 *   - persistent blocks, as V7: one block per SM walks the tiles, and the
 *     loader runs on into the next tile while the consumers store the last
 *     one, so no tile pays a ring fill;
 *   - setmaxnreg: the loader is a whole warpgroup (setmaxnreg needs one),
 *     which gives its registers back (40 per thread) so that the consumers
 *     can take 232, room for the 128 accumulator registers and the tile loop;
 *   - 2-block clusters along M: the two blocks of a cluster compute two
 *     128x256 tiles one above the other, which need the same B tile. Each
 *     block loads one half of it and multicasts it to both, so a block reads
 *     16 KB of A and 16 KB of B from L2 per k-tile instead of 48 KB. A stage
 *     is free again only when the consumers of both blocks have released it
 *     (pipe_*_cluster in pipeline.cuh).
 * Tile, 4-stage ring, WGMMA group in flight and the fp32 epilogue from
 * registers are V5's. 12 warps: consumers in warpgroups 0 and 1, the loader
 * thread in warpgroup 2.
 *
 * Built for CLUSTER = 2 (the V8 of the table) and CLUSTER = 1 (the same
 * kernel without the shared B tile, so the chapter can measure that idea).
 *
 * Measured: see docs/tutorial/v8.md and docs/notes/log.md.
 */
#include "kernel_common.cuh"
#include "pipeline.cuh"
#include "ptx/cluster.cuh"
#include "ptx/regs.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"

enum {
    V8_BM = 128, V8_BN = 256,
    V8_STAGES = 4,
    V8_CONSUMERS = 2,                                        /* warpgroups 0 and 1 */
    V8_CONSUMER_THREADS = V8_CONSUMERS * WARPGROUP_THREADS,
    V8_PRODUCER_WG = V8_CONSUMERS,                           /* warpgroup 2 */
    V8_PRODUCER_THREAD = V8_CONSUMER_THREADS,                /* its first thread issues the loads */
    V8_THREADS = V8_CONSUMER_THREADS + WARPGROUP_THREADS,    /* 384 */
    V8_WG_M = V8_BM / V8_CONSUMERS,                          /* 64 rows per consumer */
    V8_TX_BYTES = (V8_BM + V8_BN) * BK * 2,                  /* 48 KB land in each block per stage */
    V8_RASTER = 8,                                           /* raster groups, in cluster tiles */
    V8_PRODUCER_REGS = 40,
    V8_CONSUMER_REGS = 232,
    V8_REGISTER_FILE = 65536,                                /* 32-bit registers per SM */
    V8_CLUSTER = 2,                                          /* blocks per cluster in the table's V8 */
    WGMMA_K = 16,
};

typedef struct __align__(1024) v8_smem {
    __half a[V8_STAGES][V8_BM * BK]; /* (STAGES, BM, BK), 128B-swizzled; rows 64g.. for consumer g */
    __half b[V8_STAGES][V8_BN * BK]; /* (STAGES, BN, BK), 128B-swizzled; in a cluster, rows
                                        (BN/CLUSTER)*r.. come from block r's multicast */
    uint64_t full[V8_STAGES];        /* 1 arrival (own loader) + V8_TX_BYTES */
    uint64_t empty[V8_STAGES];       /* V8_CONSUMERS x CLUSTER arrivals */
} v8_smem;

static_assert(sizeof(((v8_smem *)0)->a[0]) % SW128_ALIGN == 0, "stages must stay 1024-byte aligned");
static_assert((V8_WG_M * BK * 2) % SW128_ALIGN == 0, "each consumer's A slice is 1024-byte aligned");
static_assert((V8_BN / V8_CLUSTER * BK * 2) % SW128_ALIGN == 0, "each block's B slice is 1024-byte aligned");
static_assert(sizeof(v8_smem) + SW128_ALIGN <= 227 * 1024, "4 stages of 48 KB must fit one block's 227 KB");
static_assert(V8_CONSUMER_REGS * V8_CONSUMER_THREADS + V8_PRODUCER_REGS * WARPGROUP_THREADS <= V8_REGISTER_FILE,
              "the registers the warpgroups ask for must fit the register file");

/* First row of C (and A) of this block's tile: cluster tile (tile.m, tile.n)
 * is CLUSTER tiles stacked along M, block `rank` takes the rank-th. */
template <int CLUSTER>
static __device__ __forceinline__ int32_t v8_row0(hgemm_tile tile, uint32_t rank) {
    return (int32_t)((tile.m * CLUSTER + rank) * V8_BM);
}

template <int CLUSTER>
__global__ void __launch_bounds__(V8_THREADS, 1)
v8_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
          gemm_args args, uint32_t ctiles_m, uint32_t tiles_n, uint32_t k_tiles) {
    enum { B_SLICE = V8_BN / CLUSTER, CTA_MASK = (1 << CLUSTER) - 1 };
    extern __shared__ uint8_t smem_raw[];
    v8_smem *sm = (v8_smem *)smem_aligned(smem_raw); /* the same offset in every block */
    const int tid = threadIdx.x, wg = tid / WARPGROUP_THREADS;
    const uint32_t rank = CLUSTER > 1 ? cluster_ctarank() : 0;
    const uint32_t cluster_id = blockIdx.x / CLUSTER, clusters = gridDim.x / CLUSTER;
    const uint32_t ctiles = ctiles_m * tiles_n; /* cluster tiles: (CLUSTER * BM) x BN */

    if (tid == 0) pipe_init(sm->full, sm->empty, V8_STAGES, V8_CONSUMERS * CLUSTER);
    /* The peer's loads and releases target these barriers: initialised
     * everywhere before anyone starts. */
    if (CLUSTER > 1)
        cluster_sync();
    else
        __syncthreads();

    if (wg == V8_PRODUCER_WG) {
        setmaxnreg_dec<V8_PRODUCER_REGS>();
        if (tid == V8_PRODUCER_THREAD) {
            prefetch_tensormap(&tmap_a);
            prefetch_tensormap(&tmap_b);
            pipe_state st = {0, 0};
            for (uint32_t t = cluster_id; t < ctiles; t += clusters) {
                const hgemm_tile tile = hgemm_raster(t, ctiles_m, tiles_n, V8_RASTER);
                const int32_t a_row = v8_row0<CLUSTER>(tile, rank);
                const int32_t b_row = (int32_t)(tile.n * V8_BN + rank * B_SLICE);
                for (uint32_t kt = 0; kt < k_tiles; kt++, pipe_advance(&st, V8_STAGES)) {
                    const int32_t col = (int32_t)(kt * BK);
                    uint64_t *full = pipe_producer_acquire(sm->full, sm->empty, st, V8_TX_BYTES);
                    tma_load_2d(sm->a[st.stage], &tmap_a, col, a_row, full);
                    if (CLUSTER > 1)
                        tma_load_2d_multicast(&sm->b[st.stage][rank * B_SLICE * BK], &tmap_b, col, b_row,
                                              full, CTA_MASK);
                    else
                        tma_load_2d(sm->b[st.stage], &tmap_b, col, b_row, full);
                }
            }
        }
        __syncwarp(); /* converged again for the cluster barrier below */
    } else {
        setmaxnreg_inc<V8_CONSUMER_REGS>();
        const int g = wg; /* rows 64g .. 64g+63 of each tile */
        const bool leader = tid % WARPGROUP_THREADS == 0;
        float d[128] = {}; /* (64, 256) fp32 accumulator */
        pipe_state st = {0, 0};
        for (uint32_t t = cluster_id; t < ctiles; t += clusters) {
            const hgemm_tile tile = hgemm_raster(t, ctiles_m, tiles_n, V8_RASTER);
            const int32_t row0 = v8_row0<CLUSTER>(tile, rank), col0 = (int32_t)(tile.n * V8_BN);
            pipe_state prev = st;
            for (uint32_t kt = 0; kt < k_tiles; kt++, pipe_advance(&st, V8_STAGES)) {
                pipe_consumer_wait(sm->full, st);
                const uint64_t desc_a = wgmma_desc_sw128(&sm->a[st.stage][g * V8_WG_M * BK]);
                const uint64_t desc_b = wgmma_desc_sw128(sm->b[st.stage]);
                wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < BK / WGMMA_K; kk++) /* the tile's first WGMMA overwrites d */
                    wgmma_m64n256k16_f32(d, desc_a + 2 * kk, desc_b + 2 * kk, (kt | kk) != 0);
                wgmma_commit_group();
                wgmma_wait_group_1(); /* k-tile kt-1 is done; kt stays in flight */
                if (leader && kt > 0) {
                    if (CLUSTER > 1)
                        pipe_consumer_release_cluster(sm->empty, prev, CLUSTER);
                    else
                        pipe_consumer_release(sm->empty, prev);
                }
                prev = st;
            }
            wgmma_wait_group_0();
            if (leader) {
                if (CLUSTER > 1)
                    pipe_consumer_release_cluster(sm->empty, prev, CLUSTER);
                else
                    pipe_consumer_release(sm->empty, prev);
            }
            /* A cluster tile that sticks out below m can leave a block with no
             * rows at all (an odd number of tile rows): it loaded for its peer
             * and has nothing to store. */
            if (row0 < args.m) epilogue_m64n256_f32(args, d, row0 + g * V8_WG_M, col0);
        }
    }
    /* No block leaves while its peer may still multicast into its shared
     * memory or release stages on its barriers. */
    if (CLUSTER > 1) cluster_sync();
}

template <int CLUSTER>
static hgemm_status launch_v8(const hgemm_problem *p, cudaStream_t stream) {
    /* Tile coordinates are int32 up to one cluster tile past m and n. */
    if (p->m > INT32_MAX - CLUSTER * V8_BM || p->n > INT32_MAX - V8_BN) return HGEMM_ERROR_NOT_SUPPORTED;
    CUtensorMap ta, tb;
    HGEMM_TMAP(ta, p->A, p->m, p->k, p->lda, V8_BM, BK, 1);
    HGEMM_TMAP(tb, p->B, p->n, p->k, p->ldb, V8_BN / CLUSTER, BK, 1);
    uint32_t tiles_m = hgemm_ceil_div(p->m, V8_BM), tiles_n = hgemm_ceil_div(p->n, V8_BN);
    uint32_t ctiles_m = hgemm_ceil_div(tiles_m, CLUSTER);
    uint32_t k_tiles = hgemm_ceil_div(p->k, BK);
    if ((uint64_t)ctiles_m * tiles_n > INT32_MAX) return HGEMM_ERROR_NOT_SUPPORTED;
    const void *kernel = (const void *)v8_kernel<CLUSTER>;
    const size_t smem = sizeof(v8_smem) + SW128_ALIGN;
    unsigned grid = 0;
    hgemm_status st = hgemm__persistent_grid(kernel, V8_THREADS, smem, CLUSTER,
                                             (uint64_t)ctiles_m * tiles_n, &grid);
    if (st != HGEMM_SUCCESS) return st;
    gemm_args args = make_args(p);
    void *params[] = {&ta, &tb, &args, &ctiles_m, &tiles_n, &k_tiles};
    return hgemm__launch(kernel, dim3(grid), V8_THREADS, smem, CLUSTER, stream, params);
}

extern "C" hgemm_status hgemm__launch_v8(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER>(p, stream);
}

/* V8 without clusters: each block loads its whole B tile itself. */
extern "C" hgemm_status hgemm__launch_v8_nocluster(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<1>(p, stream);
}
