/*
 * fp8/kernel.cu: hgemm_gemm_fp8's kernel. Persistent blocks of one loader
 * warp and two consumer warpgroups walk 128 x 128 output tiles; the loader
 * streams 128 bytes of k (128 fp8 values, one swizzled row) of A's 128 rows
 * and B's 128 rows per stage; each consumer multiplies its 64 rows with
 * four m64n128k32 WGMMAs into a fresh fp32 fragment, waits for them, and
 * adds the fragment into its running fp32 sum on the CUDA cores, times the
 * k-block's scales in the block mode: the tensor core's own FP8
 * accumulation is narrower than fp32, so it never sums more than 128 of k.
 * Row and tensor scales are applied once, before the store from registers.
 * Where the tiles fill less than half the GPU, a cluster of `split` blocks
 * shares each tile, one slice of k each, and the partial sums meet in
 * distributed shared memory: block r adds up and stores every split-th
 * column group from r on. Where there are tiles enough, the wide build:
 * 128 x 256 tiles, the fresh fragment taken in two halves of 128 columns
 * (so that 128 + 64 accumulators fit, with setmaxnreg), in pairs of blocks
 * that share B by multicast, a 16-bit C stored by TMA. The shared pieces
 * are in fp8/common.cuh. Design and measurements: docs/notes/fp8-design.md.
 */
#include <string.h>

#include <cuda_bf16.h>

#include "fp8/common.cuh"
#include "fp8/plan.h"
#include "pipeline.cuh"
#include "ptx/cluster.cuh"
#include "ptx/regs.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"
#include "raster.h"
#include "swizzle.cuh"

struct __align__(SW128_ALIGN) f8_smem {
    uint8_t a[F8_STAGES][F8_BM * F8_BK]; /* 128 rows x 128 bytes, 128B-swizzled; consumer g's 64 from row 64g */
    uint8_t b[F8_STAGES][F8_BN * F8_BK];
    uint64_t full[F8_STAGES];
    uint64_t empty[F8_STAGES];
};
static_assert(sizeof(f8_smem) + SW128_ALIGN <= MAX_SMEM_PER_BLOCK, "the ring fits a block");

struct __align__(SW128_ALIGN) f8w_smem {
    uint8_t a[F8W_STAGES][F8_BM * F8_BK];
    uint8_t b[F8W_STAGES][F8W_BN * F8_BK]; /* 256 rows: columns 0..127 of the tile, then 128..255 */
    uint8_t c[F8_CONSUMERS][2 * F16Q_BOX_BYTES]; /* a 16-bit C's 64 x 128 half of consumer g, for TMA */
    uint64_t full[F8W_STAGES];
    uint64_t empty[F8W_STAGES];
};
static_assert(sizeof(f8w_smem) + SW128_ALIGN <= MAX_SMEM_PER_BLOCK, "the wide ring fits a block");
/* setmaxnreg.inc takes its registers from those the producer warpgroup gives
 * back, not from the rest of the file (a launch that asks for more hangs):
 * at launch 168 each (65536 / 384, rounded down to 8). */
enum { F8W_LAUNCH_REGS = REGISTERS_PER_SM / F8W_THREADS / 8 * 8 };
static_assert((F8W_CONSUMER_REGS - F8W_LAUNCH_REGS) * F8_CONSUMER_THREADS <=
                  (F8W_LAUNCH_REGS - F8W_PRODUCER_REGS) * WARPGROUP_THREADS,
              "the registers the consumers ask for must be those the producer gives back");
/* a split's partial sums, float4 per column group and thread, in the A stages */
static_assert(F8_CONSUMERS * F8_GROUPS * WARPGROUP_THREADS * 16 <= sizeof(((f8_smem *)0)->a), "partials fit");


/* The row mode's scales applied to the fragment in place (BN columns from
 * the thread's column col; a0, a1 its rows'), as f8_store_group applies them. */
template <hgemm_scale_mode MODE, int BN>
static __device__ __forceinline__ void f8_scale_cols(const f8_args &a, float d[BN / 2], float a0, float a1,
                                                     int32_t col) {
    if constexpr (MODE == HGEMM_SCALE_ROW) {
#pragma unroll
        for (int j = 0; j < BN / 8; j++) {
            const float b0 = a.sb[min(col + 8 * j, a.n - 1)], b1 = a.sb[min(col + 8 * j + 1, a.n - 1)];
            d[4 * j] *= a0 * b0, d[4 * j + 1] *= a0 * b1, d[4 * j + 2] *= a1 * b0, d[4 * j + 3] *= a1 * b1;
        }
    }
}

/* A consumer's 64 x 256 fragment of a 16-bit C out by TMA, in two halves of
 * 128 columns through its 16 KB buffer (two 64 x 64 boxes, 128B-swizzled,
 * f32q_stage): each half waits until the store before has read the buffer,
 * so the consumer goes back to its k-loop while the last half's store runs. */
template <typename CT>
static __device__ __forceinline__ void f8_store_tma(uint8_t *buf, const CUtensorMap *tc, const gemm_args &c,
                                                    const float d[F8W_BN / 2], int32_t row0, int32_t col0, int g,
                                                    bool leader) {
#pragma unroll
    for (int h = 0; h < F8W_BN / F8_BN; h++) {
        if (leader) bulk_wait_group_read_0();
        named_barrier_sync(F8_EPI_BARRIER + g, WARPGROUP_THREADS);
        f32q_stage<CT, F8_BN>((__half *)buf, d + h * F8_BN / 2, c);
        fence_proxy_async_shared(); /* the staging's writes before the TMA engine reads them */
        named_barrier_sync(F8_EPI_BARRIER + g, WARPGROUP_THREADS);
        if (leader) {
            tma_store_2d(tc, col0 + h * F8_BN, row0, buf);
            tma_store_2d(tc, col0 + h * F8_BN + F16Q_BOX, row0, buf + F16Q_BOX_BYTES);
            bulk_commit_group();
        }
    }
}


/* Both kernels' start: the ring's barriers (one thread; shared by the
 * `pair` blocks of a cluster where pair is 2), the maps prefetched (the
 * loader), then every thread past the barrier (the cluster's, in a pair: no
 * block loads into another before its barriers exist). */
static __device__ __forceinline__ pipe_ring f8_prologue(uint64_t *full, uint64_t *empty, uint32_t stages,
                                                        uint32_t pair, int tid, int warp, int lane,
                                                        const CUtensorMap *ta, const CUtensorMap *tb, int k_tiles) {
    const pipe_ring ring = ring_make_cluster(full, empty, stages, pair);
    if (tid == 0) ring_init(ring, F8_CONSUMERS);
    if (warp == F8_LOADER_WARP && lane == 0 && k_tiles > 0) {
        prefetch_tensormap(ta);
        prefetch_tensormap(tb);
    }
    if (pair > 1)
        cluster_sync();
    else
        __syncthreads();
    return ring;
}

/* The tile of walk index t: in a pair (pair_log 1) the two blocks of a
 * cluster take tile rows 2u and 2u + 1 of one column, u the pair's row. */
static __device__ __forceinline__ hgemm_tile f8_tile(const f8_args &a, uint32_t t, uint32_t rank) {
    const uint32_t m_units = (a.m_tiles + (1u << a.pair_log) - 1) >> a.pair_log;
    hgemm_tile tile = hgemm_raster(t, m_units, a.n_tiles, F8_RASTER);
    tile.m = (tile.m << a.pair_log) + rank;
    return tile;
}

/* The loader (one thread): for walk indices first, first + step, ..., k-tiles
 * kt0 .. kt1-1 of A's 128 rows and B's BN, one stage each, B in 128-row
 * boxes. In a pair, block r loads B's half r into both blocks (multicast),
 * each block's full barrier counting its A and both halves, and waits at the
 * end until both blocks' consumers have released every stage (their releases
 * land here). SM: f8_smem or f8w_smem. */
template <int BN, typename SM>
static __device__ __forceinline__ void f8_load(SM *sm, pipe_ring ring, const CUtensorMap *ta, const CUtensorMap *tb,
                                               const f8_args &args, uint32_t first, uint32_t step, int kt0, int kt1,
                                               uint32_t rank) {
    pipe_state st = {0, 0};
    const uint32_t walk = ((args.m_tiles + (1u << args.pair_log) - 1) >> args.pair_log) * args.n_tiles;
    for (uint32_t t = first; t < walk; t += step) {
        const hgemm_tile tile = f8_tile(args, t, rank);
        for (int kt = kt0; kt < kt1; kt++, ring_advance(ring, &st)) {
            uint64_t *full = ring_producer_acquire(ring, st, (F8_BM + BN) * F8_BK);
            tma_load_2d(sm->a[st.stage], ta, kt * F8_BK, (int32_t)(tile.m * F8_BM), full);
#pragma unroll
            for (int h = 0; h < BN / F8_BN; h++) {
                const int32_t row = (int32_t)(tile.n * BN + h * F8_BN);
                if (args.pair_log == 0)
                    tma_load_2d(sm->b[st.stage] + h * F8_BN * F8_BK, tb, kt * F8_BK, row, full);
                else if ((uint32_t)h == rank)
                    tma_load_2d_multicast(sm->b[st.stage] + h * F8_BN * F8_BK, tb, kt * F8_BK, row, full, 0x3);
            }
        }
    }
    if (args.pair_log) ring_producer_tail(ring, st);
}

template <hgemm_dtype AT, hgemm_dtype BT, typename CT, hgemm_scale_mode MODE>
__global__ void __launch_bounds__(F8_THREADS, 1)
f8_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b, f8_args args) {
    extern __shared__ uint8_t smem_raw[];
    f8_smem *sm = (f8_smem *)smem_aligned(smem_raw);
    /* the warp's and the warpgroup's index through a shuffle from lane 0, so
     * that ptxas sees the roles' branches as uniform */
    const int tid = threadIdx.x, warp = __shfl_sync(0xffffffffu, tid / WARP_SIZE, 0), lane = tid % WARP_SIZE;
    const pipe_ring ring =
        f8_prologue(sm->full, sm->empty, F8_STAGES, 1, tid, warp, lane, &tmap_a, &tmap_b, args.k_tiles);
    const uint32_t tiles = args.m_tiles * args.n_tiles;
    /* a split: this block's tile is its cluster's, its k the rank-th slice */
    const uint32_t rank = args.split > 1 ? cluster_ctarank() : 0;
    const uint32_t first = blockIdx.x >> args.split_log, step = gridDim.x >> args.split_log;
    const int kt0 = (int)(((int64_t)args.k_tiles * rank) >> args.split_log);
    const int kt1 = (int)(((int64_t)args.k_tiles * (rank + 1)) >> args.split_log);

    const int wt = tid % WARPGROUP_THREADS;
    const int32_t frag_row = 16 * (wt / 32) + (wt % 32) / 4; /* this thread's rows: frag_row and frag_row + 8 */
    const int32_t frag_col = 2 * (wt % 4);                   /* its columns: frag_col + 8j, + 1 */
    const int g = __shfl_sync(0xffffffffu, tid / WARPGROUP_THREADS, 0); /* rows 64g .. 64g+63 of each tile */
    float alpha = args.alpha;
    float d[F8_BN / 2];
    int32_t row0 = 0, col0 = 0, r0 = 0, r1 = 0;

    if (warp == F8_LOADER_WARP) {
        if (lane == 0) f8_load<F8_BN>(sm, ring, &tmap_a, &tmap_b, args, first, step, kt0, kt1, 0);
        if (args.split == 1) return;
        __syncwarp(); /* lane 0 rejoins its warp: barrier.cluster is .aligned */
    } else {
        const bool leader = tid % WARPGROUP_THREADS == 0;
        if (MODE == HGEMM_SCALE_TENSOR && args.k_tiles > 0) alpha *= args.sa[0] * args.sb[0];
        float t[F8_BN / 2];
        pipe_state st = {0, 0};
        for (uint32_t tt = first; tt < tiles; tt += step) {
            const hgemm_tile tile = f8_tile(args, tt, 0);
            row0 = (int32_t)tile.m * F8_BM + g * (F8_BM / F8_CONSUMERS), col0 = (int32_t)tile.n * F8_BN;
            /* rows past m read row m-1's scales: in bounds, and never stored */
            r0 = min(row0 + frag_row, args.m - 1), r1 = min(row0 + frag_row + 8, args.m - 1);
#pragma unroll
            for (int r = 0; r < F8_BN / 2; r++) d[r] = 0.0f;
            for (int kt = kt0; kt < kt1; kt++, ring_advance(ring, &st)) {
                float s0 = 1.0f, s1 = 1.0f;
                if constexpr (MODE == HGEMM_SCALE_BLOCK) { /* issued before the wait: the loads overlap it */
                    const float sb = args.sb[(int64_t)tile.n * args.k_tiles + kt];
                    s0 = args.sa[(int64_t)kt * args.m + r0] * sb;
                    s1 = args.sa[(int64_t)kt * args.m + r1] * sb;
                }
                ring_consumer_wait(ring, st);
                const uint64_t da = wgmma_desc_sw128(sm->a[st.stage] + g * (F8_BM / F8_CONSUMERS) * F8_BK);
                const uint64_t db = wgmma_desc_sw128(sm->b[st.stage]);
                wgmma_fence();
                f8_stage_mma<AT, BT>(t, da, db);
                wgmma_commit_group();
                wgmma_wait_group_0();
                if (leader) ring_consumer_release(ring, st);
                f8_promote(d, t, s0, s1);
            }
            if (args.split > 1) break; /* one tile per cluster: its partial sums meet below */
            const float2 rs = f8_row_scales<MODE>(args, r0, r1);
            f8_store_tile<CT, MODE, F8_BN>(args, f8_out(args, alpha), d, rs.x, rs.y, row0 + frag_row, col0 + frag_col);
        }
        if (args.split == 1) return;
    }

    /* The split's partial sums: every WGMMA of the cluster has completed once
     * all its threads pass the first barrier (the A stages are free); each
     * block's partials are visible cluster-wide after the second; block r
     * then adds, for column groups r, r + split, ..., every block's values
     * in rank order, and stores them. Sixteen float4 loads per thread, all
     * in flight at once, whatever the split. */
    float4 *part = (float4 *)sm->a[0]; /* [consumer][group][thread] */
    cluster_sync();
    if (warp != F8_LOADER_WARP) {
#pragma unroll
        for (int j = 0; j < F8_GROUPS; j++)
            part[(g * F8_GROUPS + j) * WARPGROUP_THREADS + wt] =
                make_float4(d[4 * j], d[4 * j + 1], d[4 * j + 2], d[4 * j + 3]);
    }
    cluster_sync();
    if (warp != F8_LOADER_WARP) {
        const uint32_t mask = (uint32_t)args.split - 1;
        float4 v[F8_GROUPS];
#pragma unroll
        for (int i = 0; i < F8_GROUPS; i++) { /* i: (group slot i >> log) of this rank, from block i & mask */
            const int j = (int)rank + ((i >> args.split_log) << args.split_log);
            v[i] = ld_shared_cluster_f32x4(mapa_shared(&part[(g * F8_GROUPS + j) * WARPGROUP_THREADS + wt], i & mask));
        }
        const gemm_args c = f8_out(args, alpha);
        const float2 rs = f8_row_scales<MODE>(args, r0, r1);
        float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
        for (int i = 0; i < F8_GROUPS; i++) {
            acc.x += v[i].x, acc.y += v[i].y, acc.z += v[i].z, acc.w += v[i].w;
            if ((i & mask) == mask) {
                const int j = (int)rank + ((i >> args.split_log) << args.split_log);
                f8_store_group<CT, MODE>(args, c, rs.x, rs.y, row0 + frag_row, col0 + frag_col + 8 * j, acc);
                acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            }
        }
    }
    /* no block leaves while another may still read its partials */
    cluster_sync_relaxed_arrive();
}

/* The wide build: the same product over 128 x 256 tiles, persistent, no
 * split. Per stage each consumer takes B's two 128-row halves in turn: four
 * k32 WGMMAs into t, wait, promote into d's half. With pair_log 1 a cluster
 * of two blocks takes two tiles of one column, and each block loads one half
 * of their B for both: a third fewer bytes from L2 per product. */
template <hgemm_dtype AT, hgemm_dtype BT, typename CT, hgemm_scale_mode MODE>
__global__ void __launch_bounds__(F8W_THREADS, 1)
f8_wide_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
               const __grid_constant__ CUtensorMap tmap_c, f8_args args) {
    extern __shared__ uint8_t smem_raw[];
    f8w_smem *sm = (f8w_smem *)smem_aligned(smem_raw);
    const int tid = threadIdx.x, warp = __shfl_sync(0xffffffffu, tid / WARP_SIZE, 0), lane = tid % WARP_SIZE;
    const uint32_t pair = 1u << args.pair_log, rank = args.pair_log ? cluster_ctarank() : 0;
    const pipe_ring ring = f8_prologue(sm->full, sm->empty, F8W_STAGES, pair, tid, warp, lane, &tmap_a, &tmap_b,
                                       args.k_tiles);
    const uint32_t walk = ((args.m_tiles + pair - 1) >> args.pair_log) * args.n_tiles;
    const uint32_t first = blockIdx.x >> args.pair_log, step = gridDim.x >> args.pair_log;

    if (warp >= F8_LOADER_WARP) {
        setmaxnreg_dec<F8W_PRODUCER_REGS>();
        if (warp == F8_LOADER_WARP && lane == 0)
            f8_load<F8W_BN>(sm, ring, &tmap_a, &tmap_b, args, first, step, 0, args.k_tiles, rank);
        return;
    }
    setmaxnreg_inc<F8W_CONSUMER_REGS>();
    const int g = __shfl_sync(0xffffffffu, tid / WARPGROUP_THREADS, 0);
    const bool leader = tid % WARPGROUP_THREADS == 0;
    const int wt = tid % WARPGROUP_THREADS;
    const int32_t frag_row = 16 * (wt / 32) + (wt % 32) / 4, frag_col = 2 * (wt % 4);
    float alpha = args.alpha;
    if (MODE == HGEMM_SCALE_TENSOR && args.k_tiles > 0) alpha *= args.sa[0] * args.sb[0];
    float d[F8W_BN / 2], t[F8_BN / 2];
    pipe_state st = {0, 0};
    for (uint32_t tt = first; tt < walk; tt += step) {
        const hgemm_tile tile = f8_tile(args, tt, rank);
        const int32_t row0 = (int32_t)tile.m * F8_BM + g * (F8_BM / F8_CONSUMERS), col0 = (int32_t)tile.n * F8W_BN;
        const int32_t r0 = min(row0 + frag_row, args.m - 1), r1 = min(row0 + frag_row + 8, args.m - 1);
        /* B's 128-column scale blocks of the two halves (the second clamped where n ends first) */
        const int64_t nb0 = 2 * (int64_t)tile.n, nb1 = min(nb0 + 1, (int64_t)args.nb - 1);
#pragma unroll
        for (int r = 0; r < F8W_BN / 2; r++) d[r] = 0.0f;
        for (int kt = 0; kt < args.k_tiles; kt++, ring_advance(ring, &st)) {
            float s00 = 1.0f, s01 = 1.0f, s10 = 1.0f, s11 = 1.0f; /* s<half><row> */
            if constexpr (MODE == HGEMM_SCALE_BLOCK) {
                const float b0 = args.sb[nb0 * args.k_tiles + kt], b1 = args.sb[nb1 * args.k_tiles + kt];
                const float a0 = args.sa[(int64_t)kt * args.m + r0], a1 = args.sa[(int64_t)kt * args.m + r1];
                s00 = a0 * b0, s01 = a1 * b0, s10 = a0 * b1, s11 = a1 * b1;
            }
            ring_consumer_wait(ring, st);
            const uint64_t da = wgmma_desc_sw128(sm->a[st.stage] + g * (F8_BM / F8_CONSUMERS) * F8_BK);
            wgmma_fence();
            f8_stage_mma<AT, BT>(t, da, wgmma_desc_sw128(sm->b[st.stage]));
            wgmma_commit_group();
            wgmma_wait_group_0();
            f8_promote(d, t, s00, s01);
            wgmma_fence();
            f8_stage_mma<AT, BT>(t, da, wgmma_desc_sw128(sm->b[st.stage] + F8_BN * F8_BK));
            wgmma_commit_group();
            wgmma_wait_group_0();
            if (leader) ring_consumer_release(ring, st);
            f8_promote(d + F8_BN / 2, t, s10, s11);
        }
        /* a pair's second block past m (an odd number of tile rows) loaded for its peer: nothing to store */
        if (row0 >= args.m) continue;
        const float2 rs = f8_row_scales<MODE>(args, r0, r1);
        const gemm_args c = f8_out(args, alpha);
        if constexpr (!__is_same(CT, float)) {
            if (args.tma_c && !f16q_needs_direct(c, col0, F8W_BN)) {
                f8_scale_cols<MODE, F8W_BN>(args, d, rs.x, rs.y, col0 + frag_col);
                f8_store_tma<CT>(sm->c[g], &tmap_c, c, d, row0, col0, g, leader);
                continue;
            }
        }
        f8_store_tile<CT, MODE, F8W_BN>(args, c, d, rs.x, rs.y, row0 + frag_row, col0 + frag_col);
    }
    if (leader) bulk_wait_group_read_0(); /* the last stores have read the buffer before the block leaves */
}

template <hgemm_dtype AT, hgemm_dtype BT, typename CT, hgemm_scale_mode MODE>
static hgemm_status f8_launch(const hgemm_fp8_problem *p, cudaStream_t stream) {
    int sms = 0;
    const hgemm_status sst = hgemm__target_sms(p->sm_count, &sms);
    if (sst != HGEMM_SUCCESS) return sst;
    const uint32_t m_tiles = hgemm_ceil_div((uint64_t)p->m, F8_BM);
    const int wide = hgemm__fp8_wide((uint64_t)p->m, (uint64_t)p->n, sms);
    const uint32_t bn = wide ? F8W_BN : F8_BN, n_tiles = hgemm_ceil_div((uint64_t)p->n, bn);
    const uint64_t tiles = (uint64_t)m_tiles * n_tiles;
    const int64_t k_tiles = p->k_zero ? 0 : (p->k + F8_BK - 1) / F8_BK;
    const int split_log = wide ? 0 : hgemm__fp8_split_log(tiles, k_tiles, sms);
    /* the wide build in pairs sharing B wherever there are two tile rows */
    const int pair_log = hgemm__fp8_pair((uint64_t)p->m, wide, sms);
    CUtensorMap ta, tb;
    memset(&ta, 0, sizeof ta);
    memset(&tb, 0, sizeof tb);
    if (!p->k_zero) {
        hgemm_status st = hgemm__tmap_encode_dt(&ta, AT, p->A, (uint64_t)p->m, (uint64_t)p->k, (uint64_t)p->lda,
                                                F8_BM, F8_BK, TMAP_SWIZZLE_128B);
        if (st == HGEMM_SUCCESS) /* B in boxes of 128 rows: the wide tile's halves are two */
            st = hgemm__tmap_encode_dt(&tb, BT, p->B, (uint64_t)p->n, (uint64_t)p->k, (uint64_t)p->ldb, F8_BN,
                                       F8_BK, TMAP_SWIZZLE_128B);
        if (st != HGEMM_SUCCESS) return st;
    }
    /* the wide build's TMA stores: a 16-bit C that is not read (beta 0) and that a map can describe */
    CUtensorMap tc;
    memset(&tc, 0, sizeof tc);
    int tma_c = 0;
    if (wide && !__is_same(CT, float) && p->beta == 0.0f &&
        hgemm__tmap_check(p->C, (uint64_t)p->m, (uint64_t)p->n, (uint64_t)p->ldc, F16Q_ROWS, F16Q_BOX,
                          TMAP_SWIZZLE_128B) == HGEMM_SUCCESS) {
        const hgemm_status st =
            hgemm__tmap_encode_dt(&tc, __is_same(CT, __half) ? HGEMM_DTYPE_F16 : HGEMM_DTYPE_BF16, p->C,
                                  (uint64_t)p->m, (uint64_t)p->n, (uint64_t)p->ldc, F16Q_ROWS, F16Q_BOX,
                                  TMAP_SWIZZLE_128B);
        if (st != HGEMM_SUCCESS) return st;
        tma_c = 1;
    }
    f8_args args = {(int32_t)p->m,
                    (int32_t)p->n,
                    (int32_t)k_tiles,
                    p->k_zero ? 0.0f : p->alpha,
                    p->beta,
                    p->C,
                    p->ldc,
                    p->scale_a,
                    p->scale_b,
                    m_tiles,
                    n_tiles,
                    1 << split_log,
                    split_log,
                    (int32_t)((p->n + 127) / 128),
                    pair_log,
                    tma_c};
    void *params[] = {&ta, &tb, &args};
    void *wide_params[] = {&ta, &tb, &tc, &args};
    if (pair_log) {
        const void *fn = (const void *)f8_wide_kernel<AT, BT, CT, MODE>;
        const size_t smem = sizeof(f8w_smem) + SW128_ALIGN;
        unsigned grid = 0;
        hgemm_status st = hgemm__persistent_grid(fn, F8W_THREADS, smem, 2, ((m_tiles + 1) / 2) * (uint64_t)n_tiles,
                                                 &grid);
        if (st != HGEMM_SUCCESS) return st;
        if (grid > (unsigned)(sms & ~1)) grid = (unsigned)(sms & ~1); /* sm_count's target */
        return hgemm__launch_ready(fn, grid, F8W_THREADS, smem, 2, stream, wide_params);
    }
    const uint32_t grid = split_log > 0              ? (uint32_t)(tiles << split_log)
                          : tiles < (uint64_t)sms ? (uint32_t)tiles
                                                  : (uint32_t)sms;
    if (wide)
        return hgemm__launch((const void *)f8_wide_kernel<AT, BT, CT, MODE>, grid, F8W_THREADS,
                             sizeof(f8w_smem) + SW128_ALIGN, 1, stream, wide_params);
    return hgemm__launch((const void *)f8_kernel<AT, BT, CT, MODE>, grid, F8_THREADS, sizeof(f8_smem) + SW128_ALIGN,
                         1u << split_log, stream, params);
}

template <hgemm_dtype AT, hgemm_dtype BT, typename CT>
static hgemm_status f8_launch_mode(const hgemm_fp8_problem *p, cudaStream_t stream) {
    /* C = beta * C reads no scale: the tensor build, which reads them only with k-tiles */
    if (p->k_zero) return f8_launch<AT, BT, CT, HGEMM_SCALE_TENSOR>(p, stream);
    if constexpr (AT == HGEMM_DTYPE_E5M2 || BT == HGEMM_DTYPE_E5M2) {
        /* an e5m2 operand comes with tensor scales only (fp8.c): no other build of it */
        return f8_launch<AT, BT, CT, HGEMM_SCALE_TENSOR>(p, stream);
    } else {
        switch (p->mode) {
        case HGEMM_SCALE_TENSOR: return f8_launch<AT, BT, CT, HGEMM_SCALE_TENSOR>(p, stream);
        case HGEMM_SCALE_ROW: return f8_launch<AT, BT, CT, HGEMM_SCALE_ROW>(p, stream);
        case HGEMM_SCALE_BLOCK: return f8_launch<AT, BT, CT, HGEMM_SCALE_BLOCK>(p, stream);
        }
        return HGEMM_ERROR_INVALID_VALUE;
    }
}

template <hgemm_dtype AT, hgemm_dtype BT>
static hgemm_status f8_launch_out(const hgemm_fp8_problem *p, cudaStream_t stream) {
    if (p->c_dtype == HGEMM_DTYPE_BF16) return f8_launch_mode<AT, BT, __nv_bfloat16>(p, stream);
    if (p->c_dtype == HGEMM_DTYPE_F16) return f8_launch_mode<AT, BT, __half>(p, stream);
    return f8_launch_mode<AT, BT, float>(p, stream);
}

extern "C" hgemm_status hgemm__launch_fp8(const hgemm_fp8_problem *p, cudaStream_t stream) {
    if (p->a_dtype == HGEMM_DTYPE_E5M2) return f8_launch_out<HGEMM_DTYPE_E5M2, HGEMM_DTYPE_E4M3>(p, stream);
    if (p->b_dtype == HGEMM_DTYPE_E5M2) return f8_launch_out<HGEMM_DTYPE_E4M3, HGEMM_DTYPE_E5M2>(p, stream);
    return f8_launch_out<HGEMM_DTYPE_E4M3, HGEMM_DTYPE_E4M3>(p, stream);
}
