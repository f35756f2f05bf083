/*
 * fp8/grouped.cu: hgemm_grouped_fp8's kernel, FP8 experts of a mixture in
 * one launch. The grouped kernel's walk (grouped/schedule.cuh: the offsets
 * read on the device, a tile index mapped to group, m-tile and n-tile) with
 * the FP8 kernel's k-loop (fp8/common.cuh: 128 x 128 tiles, one loader
 * warp and two consumer warpgroups, a fresh fragment every 128 of k added
 * into the fp32 sum, times the blocks' scales in the block mode). A's rows
 * come from the group's first row (2-D map), B's from expert g (3-D map);
 * the stores stop at the group's last row. Expectations:
 * docs/notes/fp8-design.md.
 */
#include <string.h>

#include "fp8/common.cuh"
#include "grouped/schedule.cuh"
#include "pipeline.cuh"
#include "ptx/tma.cuh"

enum { F8G_MAX_GROUPS = HGEMM_GROUPED_MAX_GROUPS };

struct __align__(SW128_ALIGN) f8g_smem {
    uint8_t a[F8_STAGES][F8_BM * F8_BK]; /* 128 rows x 128 bytes, 128B-swizzled; consumer g's 64 from row 64g */
    uint8_t b[F8_STAGES][F8_BN * F8_BK];
    uint64_t full[F8_STAGES];
    uint64_t empty[F8_STAGES];
    int32_t start[F8G_MAX_GROUPS]; /* each group's first row, clamped */
    int32_t end[F8G_MAX_GROUPS];   /* one past its last, clamped */
    uint32_t tile0[F8G_MAX_GROUPS + 1]; /* tiles before group g; tile0[groups]: all */
};
static_assert(sizeof(f8g_smem) + SW128_ALIGN <= MAX_SMEM_PER_BLOCK, "the ring and the groups fit a block");
static_assert((int)GR_BM == (int)F8_BM, "the walk's tiles are the k-loop's");

typedef struct f8g_args {
    int32_t total_rows, n, k_tiles, groups; /* k_tiles: also the scale blocks along k */
    float alpha, beta;
    void *C;
    int64_t ldc;
    const int32_t *offs;
    const float *sa, *sb;
    uint32_t n_tiles;
    int32_t shared_b; /* every group reads B's entry 0 and its scales (stride_b == 0) */
    int32_t nb;       /* 128-column blocks of an expert's scales, ceil(n / 128) */
} f8g_args;

template <typename CT, hgemm_scale_mode MODE>
__global__ void __launch_bounds__(F8_THREADS, 1)
f8g_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b, f8g_args args) {
    extern __shared__ uint8_t smem_raw[];
    f8g_smem *sm = (f8g_smem *)smem_aligned(smem_raw);
    /* the roles' indices through a shuffle from lane 0: uniform branches for ptxas */
    const int tid = threadIdx.x, warp = __shfl_sync(0xffffffffu, tid / WARP_SIZE, 0), lane = tid % WARP_SIZE;
    const pipe_ring ring = ring_make(sm->full, sm->empty, F8_STAGES);
    if (tid == 0) ring_init(ring, F8_CONSUMERS);
    if (warp == F8_LOADER_WARP && lane == 0 && args.k_tiles > 0) {
        prefetch_tensormap(&tmap_a);
        prefetch_tensormap(&tmap_b);
    }
    gr_read_groups(sm, args); /* its barrier also publishes the ring's */
    const uint32_t tiles = __shfl_sync(0xffffffffu, sm->tile0[args.groups], 0);

    if (warp == F8_LOADER_WARP) {
        if (lane != 0) return;
        pipe_state st = {0, 0};
        for (uint32_t t = blockIdx.x; t < tiles; t += gridDim.x) {
            const gr_unit u = gr_decode(sm, t, args);
            const int32_t row0 = sm->start[u.g] + (int32_t)u.mt * F8_BM, col0 = (int32_t)u.nt * F8_BN;
            const int32_t entry = args.shared_b ? 0 : (int32_t)u.g;
            for (int kt = 0; kt < args.k_tiles; kt++, ring_advance(ring, &st)) {
                uint64_t *full = ring_producer_acquire(ring, st, (F8_BM + F8_BN) * F8_BK);
                tma_load_2d(sm->a[st.stage], &tmap_a, kt * F8_BK, row0, full);
                tma_load_3d(sm->b[st.stage], &tmap_b, kt * F8_BK, col0, entry, full);
            }
        }
        return;
    }

    const int g = __shfl_sync(0xffffffffu, tid / WARPGROUP_THREADS, 0); /* rows 64g .. 64g+63 of each tile */
    const bool leader = tid % WARPGROUP_THREADS == 0;
    const int wt = tid % WARPGROUP_THREADS;
    const int32_t frag_row = 16 * (wt / 32) + (wt % 32) / 4, frag_col = 2 * (wt % 4);
    float d[F8_BN / 2], t[F8_BN / 2];
    pipe_state st = {0, 0};
    for (uint32_t tt = blockIdx.x; tt < tiles; tt += gridDim.x) {
        const gr_unit u = gr_decode(sm, tt, args);
        const int32_t end = sm->end[u.g]; /* > the tile's first row: the group has this tile */
        const int32_t row0 = sm->start[u.g] + (int32_t)u.mt * F8_BM + g * (F8_BM / F8_CONSUMERS);
        const int32_t col0 = (int32_t)u.nt * F8_BN;
        const int64_t e = args.shared_b ? 0 : (int64_t)u.g; /* the expert's scales */
        /* rows past the group's end read its last row's scales: in bounds, never stored */
        const int32_t r0 = min(row0 + frag_row, end - 1), r1 = min(row0 + frag_row + 8, end - 1);
#pragma unroll
        for (int r = 0; r < F8_BN / 2; r++) d[r] = 0.0f;
        for (int kt = 0; kt < args.k_tiles; kt++, ring_advance(ring, &st)) {
            float s0 = 1.0f, s1 = 1.0f;
            if constexpr (MODE == HGEMM_SCALE_BLOCK) { /* issued before the wait: the loads overlap it */
                const float sb = args.sb[(e * args.nb + u.nt) * args.k_tiles + kt];
                s0 = args.sa[(int64_t)kt * args.total_rows + r0] * sb;
                s1 = args.sa[(int64_t)kt * args.total_rows + r1] * sb;
            }
            ring_consumer_wait(ring, st);
            const uint64_t da = wgmma_desc_sw128(sm->a[st.stage] + g * (F8_BM / F8_CONSUMERS) * F8_BK);
            const uint64_t db = wgmma_desc_sw128(sm->b[st.stage]);
            wgmma_fence();
            f8_stage_mma<HGEMM_DTYPE_E4M3, HGEMM_DTYPE_E4M3>(t, da, db);
            wgmma_commit_group();
            wgmma_wait_group_0();
            if (leader) ring_consumer_release(ring, st);
            f8_promote(d, t, s0, s1);
        }
        /* the group's rows only (m is its end); the row mode's B scales are the expert's */
        float alpha = args.alpha;
        if (MODE == HGEMM_SCALE_TENSOR && args.k_tiles > 0) alpha *= args.sa[0] * args.sb[e];
        const gemm_args c = {end, args.n, 0, args.k_tiles, alpha, args.beta, (__half *)args.C, args.ldc};
        f8_args a = {};
        a.n = args.n;
        a.sb = args.sb + (MODE == HGEMM_SCALE_ROW ? e * args.n : 0);
        const float a0 = MODE == HGEMM_SCALE_ROW ? args.sa[r0] : 1.0f, a1 = MODE == HGEMM_SCALE_ROW ? args.sa[r1] : 1.0f;
        f8_store_tile<CT, MODE, F8_BN>(a, c, d, a0, a1, row0 + frag_row, col0 + frag_col);
    }
}

template <typename CT, hgemm_scale_mode MODE>
static hgemm_status f8g_launch(const hgemm_grouped_fp8_problem *p, cudaStream_t stream) {
    CUtensorMap ta, tb;
    memset(&ta, 0, sizeof ta);
    memset(&tb, 0, sizeof tb);
    const int shared_b = p->stride_b == 0;
    if (!p->k_zero) {
        hgemm_status st = hgemm__tmap_encode_dt(&ta, HGEMM_DTYPE_E4M3, p->A, (uint64_t)p->total_rows,
                                                (uint64_t)p->k, (uint64_t)p->lda, F8_BM, F8_BK, TMAP_SWIZZLE_128B);
        if (st == HGEMM_SUCCESS)
            st = hgemm__tmap_encode_batch(&tb, HGEMM_DTYPE_E4M3, p->B, (uint64_t)p->n, (uint64_t)p->k,
                                          (uint64_t)p->ldb, shared_b ? 1 : (uint64_t)p->groups,
                                          (uint64_t)p->stride_b, F8_BN, F8_BK, TMAP_SWIZZLE_128B);
        if (st != HGEMM_SUCCESS) return st;
    }
    int sms = 0;
    const hgemm_status sst = hgemm__target_sms(p->sm_count, &sms);
    if (sst != HGEMM_SUCCESS) return sst;
    const uint32_t n_tiles = hgemm_ceil_div((uint64_t)p->n, F8_BN);
    /* at most this many tiles, whatever the offsets (each group rounds up one) */
    const uint64_t most = ((uint64_t)hgemm_ceil_div((uint64_t)p->total_rows, F8_BM) + (uint64_t)p->groups) * n_tiles;
    const uint32_t grid = most < (uint64_t)sms ? (uint32_t)most : (uint32_t)sms;
    f8g_args args = {(int32_t)p->total_rows,
                     (int32_t)p->n,
                     p->k_zero ? 0 : (int32_t)((p->k + F8_BK - 1) / F8_BK),
                     (int32_t)p->groups,
                     p->k_zero ? 0.0f : p->alpha,
                     p->beta,
                     p->C,
                     p->ldc,
                     p->offs,
                     p->scale_a,
                     p->scale_b,
                     n_tiles,
                     shared_b,
                     (int32_t)((p->n + 127) / 128)};
    void *params[] = {&ta, &tb, &args};
    return hgemm__launch((const void *)f8g_kernel<CT, MODE>, grid, F8_THREADS, sizeof(f8g_smem) + SW128_ALIGN, 1,
                         stream, params);
}

template <typename CT>
static hgemm_status f8g_launch_mode(const hgemm_grouped_fp8_problem *p, cudaStream_t stream) {
    /* C = beta * C reads no scale: the tensor build, which reads them only with k-tiles */
    if (p->k_zero) return f8g_launch<CT, HGEMM_SCALE_TENSOR>(p, stream);
    switch (p->mode) {
    case HGEMM_SCALE_TENSOR: return f8g_launch<CT, HGEMM_SCALE_TENSOR>(p, stream);
    case HGEMM_SCALE_ROW: return f8g_launch<CT, HGEMM_SCALE_ROW>(p, stream);
    case HGEMM_SCALE_BLOCK: return f8g_launch<CT, HGEMM_SCALE_BLOCK>(p, stream);
    }
    return HGEMM_ERROR_INVALID_VALUE;
}

extern "C" hgemm_status hgemm__launch_grouped_fp8(const hgemm_grouped_fp8_problem *p, cudaStream_t stream) {
    if (p->c_dtype == HGEMM_DTYPE_BF16) return f8g_launch_mode<__nv_bfloat16>(p, stream);
    if (p->c_dtype == HGEMM_DTYPE_F16) return f8g_launch_mode<__half>(p, stream);
    return f8g_launch_mode<float>(p, stream);
}
