/*
 * grouped/kernel.cu: hgemm_grouped's kernel (mixture-of-experts products).
 * Persistent blocks of one loader warp and two consumer warpgroups walk the
 * tiles of every group in one launch. Each block reads the offsets once,
 * counts each group's 128-row tiles, and maps a tile index to (group,
 * m-tile, n-tile) by a binary search over those counts; the loader streams
 * 128 rows of A from the group's first row (2-D map) and B's entry g (3-D
 * map, either layout) through a ring; each consumer multiplies 64 rows by
 * the tile's width in fp32 (WGMMA) and stores from registers, clipped at
 * the group's last row, so a group's rows past a tile's end are never
 * padded and the next group's rows are never written. Design, build notes
 * and expectations: docs/notes/grouped-design.md; measurements:
 * hgemm-grouped-bench (docs/bench.md).
 */
#include <string.h>

#include <cuda_bf16.h>

#include "grouped/schedule.cuh"
#include "kernel_common.cuh"
#include "mma_tile.cuh"
#include "pipeline.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"
#include "v8/kernel.cuh" /* v8_load and v8_desc: B's boxes in either layout */

enum {
    GR_CONSUMERS = 2,
    GR_CONSUMER_THREADS = GR_CONSUMERS * WARPGROUP_THREADS,
    GR_LOADER_WARP = GR_CONSUMER_THREADS / WARP_SIZE,
    GR_THREADS = GR_CONSUMER_THREADS + WARP_SIZE,
    GR_MAX_GROUPS = HGEMM_GROUPED_MAX_GROUPS,
};

template <int BN> struct gr_tile {
    static constexpr int stages = BN == 256 ? 4 : 6; /* 192 KB of stages either way */
    static constexpr uint32_t tx_bytes = (GR_BM + BN) * BK * 2;
};

template <int BN>
struct __align__(SW128_ALIGN) gr_smem {
    __half a[gr_tile<BN>::stages][GR_BM * BK]; /* 128 rows x BK, 128B-swizzled; consumer g's 64 from row 64g */
    __half b[gr_tile<BN>::stages][BN * BK];    /* BN x BK (K-major) or BN/64 boxes of 64 x BK (MN-major) */
    uint64_t full[gr_tile<BN>::stages];
    uint64_t empty[gr_tile<BN>::stages];
    int32_t start[GR_MAX_GROUPS]; /* each group's first row, clamped */
    int32_t end[GR_MAX_GROUPS];   /* one past its last, clamped */
    uint32_t tile0[GR_MAX_GROUPS + 1]; /* tiles before group g; tile0[groups]: all */
};
static_assert(sizeof(gr_smem<256>) + SW128_ALIGN <= MAX_SMEM_PER_BLOCK, "the wide tile's ring fits a block");
static_assert(sizeof(gr_smem<128>) + SW128_ALIGN <= MAX_SMEM_PER_BLOCK, "the narrow tile's ring fits a block");
static_assert((GR_BM / GR_CONSUMERS * BK * 2) % SW128_ALIGN == 0, "each consumer's rows start 1024-byte aligned");

typedef struct gr_args {
    int32_t total_rows, n, k_tiles, groups;
    float alpha, beta;
    __half *C;
    int64_t ldc;
    const int32_t *offs;
    uint32_t n_tiles;
    int32_t shared_b; /* every group reads B's entry 0 (stride_b == 0) */
} gr_args;

template <typename T, int B_MN, int BN>
__global__ void __launch_bounds__(GR_THREADS, 1)
gr_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b, gr_args args) {
    extern __shared__ uint8_t smem_raw[];
    gr_smem<BN> *sm = (gr_smem<BN> *)smem_aligned(smem_raw);
    /* the warp's and the warpgroup's index through a shuffle from lane 0, so
     * that ptxas sees the roles' branches as uniform: without it, it
     * serialized every WGMMA (C7518) */
    const int tid = threadIdx.x, warp = __shfl_sync(0xffffffffu, tid / WARP_SIZE, 0), lane = tid % WARP_SIZE;
    const pipe_ring ring = ring_make(sm->full, sm->empty, gr_tile<BN>::stages);
    if (tid == 0) ring_init(ring, GR_CONSUMERS);
    if (warp == GR_LOADER_WARP && lane == 0 && args.k_tiles > 0) {
        prefetch_tensormap(&tmap_a);
        prefetch_tensormap(&tmap_b);
    }
    gr_read_groups(sm, args); /* its barriers also publish the ring's */
    const uint32_t tiles = __shfl_sync(0xffffffffu, sm->tile0[args.groups], 0); /* the same: uniform */

    if (warp == GR_LOADER_WARP) {
        if (lane != 0) return;
        pipe_state st = {0, 0};
        for (uint32_t t = blockIdx.x; t < tiles; t += gridDim.x) {
            const gr_unit u = gr_decode(sm, t, args);
            const int32_t row0 = sm->start[u.g] + (int32_t)u.mt * GR_BM, col0 = (int32_t)u.nt * BN;
            const int32_t entry = args.shared_b ? 0 : (int32_t)u.g;
            for (int kt = 0; kt < args.k_tiles; kt++, ring_advance(ring, &st)) {
                uint64_t *full = ring_producer_acquire(ring, st, gr_tile<BN>::tx_bytes);
                tma_load_2d(sm->a[st.stage], &tmap_a, kt * BK, row0, full);
                v8_load<B_MN, BN>(sm->b[st.stage], &tmap_b, kt * BK, col0, entry, full, 0);
            }
        }
        return;
    }

    const int g = __shfl_sync(0xffffffffu, tid / WARPGROUP_THREADS, 0); /* rows 64g .. 64g+63 of each tile */
    const bool leader = tid % WARPGROUP_THREADS == 0;
    float d[BN / 2];
    /* k == 0 leaves it so: C = beta * C */
#pragma unroll
    for (int r = 0; r < BN / 2; r++) d[r] = 0.0f;
    pipe_state st = {0, 0};
    for (uint32_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        const gr_unit u = gr_decode(sm, t, args);
        const int32_t row0 = sm->start[u.g] + (int32_t)u.mt * GR_BM + g * (GR_BM / GR_CONSUMERS);
        const int32_t col0 = (int32_t)u.nt * BN;
        pipe_state held = st;
        for (int kt = 0; kt < args.k_tiles; kt++, ring_advance(ring, &st)) {
            ring_consumer_wait(ring, st);
            const uint64_t desc_a = wgmma_desc_sw128(sm->a[st.stage] + g * (GR_BM / GR_CONSUMERS) * BK);
            const uint64_t desc_b = v8_desc<B_MN>(sm->b[st.stage]);
            wgmma_fence();
            wgmma_ktile_m64n_f32_ab<T, 0, B_MN, BN>(d, desc_a, desc_b, kt > 0);
            wgmma_commit_group();
            wgmma_wait_group_1(); /* k-tile kt-1 done, kt in flight */
            ring_release_held(ring, &held, st, leader && kt > 0);
        }
        wgmma_wait_group_0(); /* on every path: ptxas injects one where it sees none (C7517) */
        ring_release_last(ring, held, leader && args.k_tiles > 0);
        /* the group's rows only: m is its end */
        const gemm_args c = {sm->end[u.g], args.n, 0, args.k_tiles, args.alpha, args.beta, args.C, args.ldc};
        epilogue_m64n_f32<T, BN, true>(c, d, row0, col0);
    }
}

template <typename T, int B_MN, int BN>
static hgemm_status gr_launch(const hgemm_grouped_problem *p, cudaStream_t stream) {
    CUtensorMap ta, tb;
    memset(&ta, 0, sizeof ta);
    memset(&tb, 0, sizeof tb);
    const int shared_b = p->stride_b == 0;
    if (!p->k_zero) {
        const uint64_t rows = (uint64_t)p->total_rows, n = (uint64_t)p->n, k = (uint64_t)p->k;
        const uint64_t entries = shared_b ? 1 : (uint64_t)p->groups;
        hgemm_status st = hgemm__tmap_encode_dt(&ta, p->dtype, p->A, rows, k, (uint64_t)p->lda, GR_BM, BK,
                                                TMAP_SWIZZLE_128B);
        if (st == HGEMM_SUCCESS)
            st = B_MN ? hgemm__tmap_encode_batch(&tb, p->dtype, p->B, k, n, (uint64_t)p->ldb, entries,
                                                 (uint64_t)p->stride_b, BK, V8_MN_BOX, TMAP_SWIZZLE_128B)
                      : hgemm__tmap_encode_batch(&tb, p->dtype, p->B, n, k, (uint64_t)p->ldb, entries,
                                                 (uint64_t)p->stride_b, BN, BK, TMAP_SWIZZLE_128B);
        if (st != HGEMM_SUCCESS) return st;
    }
    int sms = 0;
    const hgemm_status sst = hgemm__target_sms(p->sm_count, &sms);
    if (sst != HGEMM_SUCCESS) return sst;
    const uint32_t n_tiles = hgemm_ceil_div((uint64_t)p->n, BN);
    /* at most this many tiles, whatever the offsets (each group rounds up one) */
    const uint64_t most = ((uint64_t)hgemm_ceil_div((uint64_t)p->total_rows, GR_BM) + (uint64_t)p->groups) * n_tiles;
    const uint32_t grid = most < (uint64_t)sms ? (uint32_t)most : (uint32_t)sms;
    gr_args args = {(int32_t)p->total_rows,
                    (int32_t)p->n,
                    p->k_zero ? 0 : (int32_t)((p->k + BK - 1) / BK),
                    (int32_t)p->groups,
                    p->k_zero ? 0.0f : p->alpha,
                    p->beta,
                    (__half *)p->C,
                    p->ldc,
                    p->offs,
                    n_tiles,
                    shared_b};
    void *params[] = {&ta, &tb, &args};
    return hgemm__launch((const void *)gr_kernel<T, B_MN, BN>, grid, GR_THREADS, sizeof(gr_smem<BN>) + SW128_ALIGN,
                         1, stream, params);
}

/* The tile's width: 128 where n is at most that, else 256. */
template <typename T>
static hgemm_status gr_launch_dt(const hgemm_grouped_problem *p, cudaStream_t stream) {
    if (p->n <= 128) return p->b_mn ? gr_launch<T, 1, 128>(p, stream) : gr_launch<T, 0, 128>(p, stream);
    return p->b_mn ? gr_launch<T, 1, 256>(p, stream) : gr_launch<T, 0, 256>(p, stream);
}

extern "C" hgemm_status hgemm__launch_grouped(const hgemm_grouped_problem *p, cudaStream_t stream) {
    return p->dtype == HGEMM_DTYPE_BF16 ? gr_launch_dt<__nv_bfloat16>(p, stream) : gr_launch_dt<__half>(p, stream);
}
