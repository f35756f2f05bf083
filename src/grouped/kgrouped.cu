/*
 * grouped/kgrouped.cu: hgemm_grouped_k's kernel, the weight gradients of a
 * mixture's experts in one launch: C_g = A_g^T B_g, A_g and B_g the rows of
 * A and B in group g (the tokens routed to expert g), so each group's
 * reduction runs over its own rows. Every group has the same m x n output
 * tiles, so the host knows the tile count; the offsets are read on the device
 * (grouped/schedule.cuh). Persistent blocks of one loader warp and two
 * consumer warpgroups; both operands MN-major (V8's boxes, v8_load), 64 rows
 * a k-tile from the group's first row on. The group's last k-tile also holds
 * rows of the next group (or past the end): the consumers zero those rows of
 * the stage in shared memory before multiplying it. Stores from registers,
 * bf16/fp16 or fp32 (c_fp32, e.g. a main gradient with beta 1).
 */
#include <string.h>

#include <cuda_bf16.h>

#include "grouped/schedule.cuh"
#include "kernel_common.cuh"
#include "mma_tile.cuh"
#include "pipeline.cuh"
#include "ptx/tma.cuh"
#include "ptx/wgmma.cuh"
#include "v8/kernel.cuh" /* v8_load and v8_desc: MN-major boxes */

enum {
    GK_BM = 128,
    GK_BN = 128,
    GK_STAGES = 6,
    GK_CONSUMERS = 2,
    GK_CONSUMER_THREADS = GK_CONSUMERS * WARPGROUP_THREADS,
    GK_LOADER_WARP = GK_CONSUMER_THREADS / WARP_SIZE,
    GK_THREADS = GK_CONSUMER_THREADS + WARP_SIZE,
    GK_TAIL_BARRIER = 1, /* the consumers, after zeroing a tail */
    GK_MAX_GROUPS = HGEMM_GROUPED_MAX_GROUPS,
};

struct __align__(SW128_ALIGN) gk_smem {
    __half a[GK_STAGES][GK_BM * BK]; /* two 64 x BK MN-major boxes: consumer g's rows are box g */
    __half b[GK_STAGES][GK_BN * BK];
    uint64_t full[GK_STAGES];
    uint64_t empty[GK_STAGES];
    int32_t start[GK_MAX_GROUPS]; /* each group's first row of A and B, clamped */
    int32_t end[GK_MAX_GROUPS];
    uint32_t tile0[GK_MAX_GROUPS + 1]; /* filled by gr_read_groups, unused: every group has m_tiles x n_tiles */
};
static_assert(sizeof(gk_smem) + SW128_ALIGN <= MAX_SMEM_PER_BLOCK, "the ring and the groups fit a block");
static_assert(GK_BM % V8_MN_BOX == 0 && GK_BN % V8_MN_BOX == 0, "whole MN-major boxes");

typedef struct gk_args {
    int32_t m, n, total_rows, groups; /* total_rows: A's and B's rows (total_k) */
    float alpha, beta;
    void *C;
    int64_t ldc, stride_c;
    const int32_t *offs;
    uint32_t m_tiles, n_tiles; /* n_tiles also read by gr_read_groups */
    int32_t k_zero;
} gk_args;

/* Zero k-rows `from`..BK-1 of the stage's boxes (A's two, B's two), each
 * of the consumers' 256 threads 8 fixed 16-byte chunks under a predicate
 * (no branch on the thread); the rows are whole 128-byte lines of each box
 * (the swizzle moves chunks within a line only). */
static __device__ __forceinline__ void gk_zero_tail(__half *a, __half *b, int from, int tid) {
    constexpr int chunks = SW128_ROW_BYTES / 16, per_box = BK * chunks; /* 512 */
    constexpr int all = (GK_BM + GK_BN) / V8_MN_BOX * per_box;            /* 2048 */
    static_assert(all % GK_CONSUMER_THREADS == 0, "whole rounds of the consumers' threads");
    const uint32_t a0 = smem_u32(a), b0 = smem_u32(b);
#pragma unroll
    for (int i = 0; i < all / GK_CONSUMER_THREADS; i++) {
        const int idx = tid + i * GK_CONSUMER_THREADS, box = idx / per_box, line = (idx / chunks) % BK;
        const int chunk = idx % chunks;
        const uint32_t base = box < GK_BM / V8_MN_BOX ? a0 + box * V8_MN_BOX * BK * 2
                                                      : b0 + (box - GK_BM / V8_MN_BOX) * V8_MN_BOX * BK * 2;
        st_shared_v4_zero_if(line >= from, base + line * SW128_ROW_BYTES + chunk * 16);
    }
}

template <typename T, bool C32>
__global__ void __launch_bounds__(GK_THREADS, 1)
gk_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b, gk_args args) {
    extern __shared__ uint8_t smem_raw[];
    gk_smem *sm = (gk_smem *)smem_aligned(smem_raw);
    /* the roles' indices through a shuffle from lane 0: uniform branches for ptxas */
    const int tid = threadIdx.x, warp = __shfl_sync(0xffffffffu, tid / WARP_SIZE, 0), lane = tid % WARP_SIZE;
    const pipe_ring ring = ring_make(sm->full, sm->empty, GK_STAGES);
    if (tid == 0) ring_init(ring, GK_CONSUMERS);
    if (warp == GK_LOADER_WARP && lane == 0 && !args.k_zero) {
        prefetch_tensormap(&tmap_a);
        prefetch_tensormap(&tmap_b);
    }
    const struct {
        int32_t groups;
        const int32_t *offs;
        int32_t total_rows;
        uint32_t n_tiles;
    } walk = {args.groups, args.offs, args.total_rows, 1};
    gr_read_groups(sm, walk); /* its barrier also publishes the ring's */
    const uint32_t per_group = args.m_tiles * args.n_tiles, tiles = per_group * (uint32_t)args.groups;

    if (warp == GK_LOADER_WARP) {
        if (lane != 0 || args.k_zero) return;
        pipe_state st = {0, 0};
        for (uint32_t t = blockIdx.x; t < tiles; t += gridDim.x) {
            const uint32_t g = t / per_group;
            const hgemm_tile tile = hgemm_raster(t - g * per_group, args.m_tiles, args.n_tiles, GR_RASTER);
            const int32_t start = sm->start[g], rows = sm->end[g] - start;
            for (int32_t r = 0; r < rows; r += BK, ring_advance(ring, &st)) {
                uint64_t *full = ring_producer_acquire(ring, st, (GK_BM + GK_BN) * BK * 2);
                v8_load<1, GK_BM>(sm->a[st.stage], &tmap_a, start + r, (int32_t)tile.m * GK_BM, 0, full, 0);
                v8_load<1, GK_BN>(sm->b[st.stage], &tmap_b, start + r, (int32_t)tile.n * GK_BN, 0, full, 0);
            }
        }
        return;
    }

    const int g = __shfl_sync(0xffffffffu, tid / WARPGROUP_THREADS, 0); /* rows 64g .. 64g+63 of each tile */
    const bool leader = tid % WARPGROUP_THREADS == 0;
    float d[GK_BN / 2];
    pipe_state st = {0, 0};
    for (uint32_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        const uint32_t grp = t / per_group;
        const hgemm_tile tile = hgemm_raster(t - grp * per_group, args.m_tiles, args.n_tiles, GR_RASTER);
        const int32_t rows = args.k_zero ? 0 : sm->end[grp] - sm->start[grp];
#pragma unroll
        for (int r = 0; r < GK_BN / 2; r++) d[r] = 0.0f; /* an empty group: C = beta * C */
        pipe_state held = st;
        int kt = 0;
        for (int32_t r = 0; r < rows; r += BK, kt++, ring_advance(ring, &st)) {
            ring_consumer_wait(ring, st);
            if (rows - r < BK) { /* the group's last k-tile reaches into the next group's rows */
                gk_zero_tail(sm->a[st.stage], sm->b[st.stage], rows - r, tid);
                fence_proxy_async_shared(); /* the zeros before the tensor core reads the stage */
                named_barrier_sync(GK_TAIL_BARRIER, GK_CONSUMER_THREADS);
            }
            const uint64_t desc_a = v8_desc<1>(&sm->a[st.stage][g * V8_MN_BOX * BK]);
            const uint64_t desc_b = v8_desc<1>(sm->b[st.stage]);
            wgmma_fence();
            wgmma_ktile_m64n_f32_ab<T, 1, 1, GK_BN>(d, desc_a, desc_b, kt > 0);
            wgmma_commit_group();
            wgmma_wait_group_1(); /* k-tile kt-1 done, kt in flight */
            ring_release_held(ring, &held, st, leader && kt > 0);
        }
        wgmma_wait_group_0(); /* on every path: ptxas injects one where it sees none */
        ring_release_last(ring, held, leader && kt > 0);
        const int32_t row0 = (int32_t)tile.m * GK_BM + g * (GK_BM / GK_CONSUMERS), col0 = (int32_t)tile.n * GK_BN;
        gemm_args c = {args.m, args.n, 0, 0, args.alpha, args.beta, (__half *)args.C, args.ldc};
        if constexpr (C32) {
            c.C = (__half *)((float *)args.C + (int64_t)grp * args.stride_c);
            epilogue_m64n_f32_out_f32<GK_BN>(c, d, row0, col0);
        } else {
            c.C = (__half *)((T *)args.C + (int64_t)grp * args.stride_c);
            epilogue_m64n_f32<T, GK_BN, true>(c, d, row0, col0);
        }
    }
}

template <typename T, bool C32>
static hgemm_status gk_launch(const hgemm_grouped_k_problem *p, cudaStream_t stream) {
    CUtensorMap ta, tb;
    memset(&ta, 0, sizeof ta);
    memset(&tb, 0, sizeof tb);
    if (!p->k_zero) { /* both MN-major: boxes of 64 columns by BK rows */
        hgemm_status st = hgemm__tmap_encode_batch(&ta, p->dtype, p->A, (uint64_t)p->total_k, (uint64_t)p->m,
                                                   (uint64_t)p->lda, 1, 0, BK, V8_MN_BOX, TMAP_SWIZZLE_128B);
        if (st == HGEMM_SUCCESS)
            st = hgemm__tmap_encode_batch(&tb, p->dtype, p->B, (uint64_t)p->total_k, (uint64_t)p->n,
                                          (uint64_t)p->ldb, 1, 0, BK, V8_MN_BOX, TMAP_SWIZZLE_128B);
        if (st != HGEMM_SUCCESS) return st;
    }
    int sms = 0;
    const hgemm_status sst = hgemm__target_sms(p->sm_count, &sms);
    if (sst != HGEMM_SUCCESS) return sst;
    const uint32_t m_tiles = hgemm_ceil_div((uint64_t)p->m, GK_BM), n_tiles = hgemm_ceil_div((uint64_t)p->n, GK_BN);
    const uint64_t tiles = (uint64_t)m_tiles * n_tiles * (uint64_t)p->groups;
    const uint32_t grid = tiles < (uint64_t)sms ? (uint32_t)tiles : (uint32_t)sms;
    gk_args args = {(int32_t)p->m,
                    (int32_t)p->n,
                    (int32_t)p->total_k,
                    (int32_t)p->groups,
                    p->k_zero ? 0.0f : p->alpha,
                    p->beta,
                    p->C,
                    p->ldc,
                    p->stride_c,
                    p->offs,
                    m_tiles,
                    n_tiles,
                    p->k_zero};
    void *params[] = {&ta, &tb, &args};
    return hgemm__launch((const void *)gk_kernel<T, C32>, grid, GK_THREADS, sizeof(gk_smem) + SW128_ALIGN, 1, stream,
                         params);
}

extern "C" hgemm_status hgemm__launch_grouped_k(const hgemm_grouped_k_problem *p, cudaStream_t stream) {
    if (p->dtype == HGEMM_DTYPE_BF16)
        return p->c_f32 ? gk_launch<__nv_bfloat16, true>(p, stream) : gk_launch<__nv_bfloat16, false>(p, stream);
    return p->c_f32 ? gk_launch<__half, true>(p, stream) : gk_launch<__half, false>(p, stream);
}
