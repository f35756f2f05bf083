/*
 * v8/launch.cuh: the host side of one V8 build: its tensor maps, its grid,
 * the plan (v8/plan.h) and the launch of v8_kernel (and of split-K's second
 * kernel), and the table's choice of build for one element type and layout
 * (launch_v8_tile). Each src/v8/<dtype>_<form>.cu instantiates one element type and form
 * (V8_INSTANCE); lab/v8_lab.cu its ablations.
 */
#ifndef HGEMM_V8_LAUNCH_CUH
#define HGEMM_V8_LAUNCH_CUH

#include <string.h>

#include <cuda_bf16.h>

#include "v8/kernel.cuh"

/* A map over C's m x n entries at `ptr` (ld, C's batch stride), in the
 * epilogue's boxes: C itself, or a separate C input. */
static inline hgemm_status v8_c_map(const hgemm_problem *p, int64_t batch, const void *ptr, int64_t ld,
                                    CUtensorMap *t) {
    return hgemm__tmap_encode_batch(t, p->dtype, ptr, (uint64_t)p->m, (uint64_t)p->n, (uint64_t)ld, (uint64_t)batch,
                                    (uint64_t)p->stride_c, F16Q_ROWS, F16Q_BOX, TMAP_SWIZZLE_128B);
}

/* A's and B's tensor maps, each over the whole batch, as stored (MN-major
 * in boxes of 64 x BK, K-major in boxes of rows x BK). */
template <int CLUSTER, int BN>
static hgemm_status v8_ab_maps(const hgemm_problem *p, int64_t batch, CUtensorMap *ta, CUtensorMap *tb) {
    const uint64_t m = (uint64_t)p->m, n = (uint64_t)p->n, k = (uint64_t)p->k;
    const uint64_t na = p->stride_a ? (uint64_t)batch : 1, nb = p->stride_b ? (uint64_t)batch : 1;
    hgemm_status st =
        p->a_mn ? hgemm__tmap_encode_batch(ta, p->dtype, p->A, k, m, (uint64_t)p->lda, na, (uint64_t)p->stride_a,
                                           BK, V8_MN_BOX, TMAP_SWIZZLE_128B)
                : hgemm__tmap_encode_batch(ta, p->dtype, p->A, m, k, (uint64_t)p->lda, na, (uint64_t)p->stride_a,
                                           V8_BM, BK, TMAP_SWIZZLE_128B);
    if (st != HGEMM_SUCCESS) return st;
    return p->b_mn ? hgemm__tmap_encode_batch(tb, p->dtype, p->B, k, n, (uint64_t)p->ldb, nb, (uint64_t)p->stride_b,
                                              BK, V8_MN_BOX, TMAP_SWIZZLE_128B)
                   : hgemm__tmap_encode_batch(tb, p->dtype, p->B, n, k, (uint64_t)p->ldb, nb, (uint64_t)p->stride_b,
                                              BN / CLUSTER, BK, TMAP_SWIZZLE_128B);
}

/* The three tensor maps: A's and B's, and C's in the epilogue's boxes. */
template <int CLUSTER, int BN>
static hgemm_status v8_maps(const hgemm_problem *p, int64_t batch, CUtensorMap *ta, CUtensorMap *tb,
                            CUtensorMap *tc) {
    const hgemm_status st = v8_ab_maps<CLUSTER, BN>(p, batch, ta, tb);
    return st != HGEMM_SUCCESS ? st : v8_c_map(p, batch, p->C, p->ldc, tc);
}

/* The map the epilogue loads C from (beta != 0): C's own, or a separate C
 * input's (hgemm_nt_options.c_in). */
static inline hgemm_status v8_c_in_map(const hgemm_problem *p, int64_t batch, const CUtensorMap *tc,
                                       CUtensorMap *t) {
    if (p->C_in == NULL) {
        *t = *tc;
        return HGEMM_SUCCESS;
    }
    return v8_c_map(p, batch, p->C_in, p->ldc_in, t);
}

/* The element type's hgemm_dtype (for hgemm__v8_split_reduce). */
template <typename T> struct elem_dtype { static constexpr hgemm_dtype value = HGEMM_DTYPE_F16; };
template <> struct elem_dtype<__nv_bfloat16> { static constexpr hgemm_dtype value = HGEMM_DTYPE_BF16; };

/* One build of v8_kernel on the GPU's persistent grid, under `split`
 * (HGEMM_SK_*) and the variant `v` (the table's: all zero). */
template <int CLUSTER, bool TMA_EPILOGUE, typename T, int A_MN, int B_MN, int BN, int DEEP = 0, bool FENCED = false,
          int LATE_AT = v8_tile<BN, DEEP>::late_at, int EXP = 0>
static hgemm_status launch_v8(const hgemm_problem *p, const hgemm_v8_variant *v, cudaStream_t stream, int split) {
    const int64_t batch = p->batch > 1 ? p->batch : 1;
    CUtensorMap ta, tb, tc, tc_in;
    hgemm_status st;
    if constexpr ((EXP & V8_EXP_F32C) != 0) { /* an fp32 C, stored from registers: no C map */
        st = v8_ab_maps<CLUSTER, BN>(p, batch, &ta, &tb);
        tc = ta;
        tc_in = ta;
    } else if constexpr ((EXP & V8_EXP_TRANS) != 0) { /* C as stored: n x m of the swapped product */
        st = v8_ab_maps<CLUSTER, BN>(p, batch, &ta, &tb);
        if (st == HGEMM_SUCCESS)
            st = hgemm__tmap_encode_batch(&tc, p->dtype, p->C, (uint64_t)p->n, (uint64_t)p->m, (uint64_t)p->ldc, 1,
                                          0, F16Q_ROWS, F16Q_BOX, TMAP_SWIZZLE_128B);
        tc_in = tc;
    } else {
        st = v8_maps<CLUSTER, BN>(p, batch, &ta, &tb, &tc);
        if (st == HGEMM_SUCCESS) st = v8_c_in_map(p, batch, &tc, &tc_in);
    }
    if (st != HGEMM_SUCCESS) return st;
    uint32_t tiles_m = hgemm_ceil_div(p->m, V8_BM), tiles_n = hgemm_ceil_div(p->n, BN);
    uint32_t ctiles_m = hgemm_ceil_div(tiles_m, CLUSTER);
    const void *kernel = (const void *)v8_kernel<CLUSTER, TMA_EPILOGUE, T, A_MN, B_MN, BN, DEEP, FENCED, LATE_AT, EXP>;
    const size_t smem = sizeof(v8_smem<BN, DEEP>) + SW128_ALIGN;
    unsigned grid = 0;
    /* hgemm__supports_v8 has checked that every entry's tiles fit 32 bits at
     * the narrow width or wider; the quarter width has twice as many */
    const uint64_t all_tiles = (uint64_t)ctiles_m * tiles_n * (uint64_t)batch;
    if (all_tiles > UINT32_MAX) return HGEMM_ERROR_NOT_SUPPORTED;
    v8_batch bt = {ctiles_m * tiles_n, p->stride_a ? ~0u : 0u, p->stride_b ? ~0u : 0u, v8_raster(v),
                   batch > 1 ? p->stride_c : 0};
    const uint32_t tiles = (uint32_t)all_tiles;
    st = hgemm__persistent_grid(kernel, V8_THREADS, smem, CLUSTER, UINT32_MAX, &grid);
    if (st != HGEMM_SUCCESS) return st;
    /* hgemm_nt_ex's SM target: one block per SM, so at most that many blocks */
    if (p->sm_count > 0 && (unsigned)p->sm_count < grid) grid = v8_whole_clusters((uint32_t)p->sm_count, CLUSTER);
    const v8_schedule sched = v8_schedule_for(p, v, tiles, grid, CLUSTER, BN, split, (EXP & V8_EXP_SEAM) != 0);
    hgemm_sk sk = sched.sk;
    split = sched.split;
    if constexpr ((EXP & V8_EXP_TRANS) != 0)
        if (!v8_swap_schedule_ok(&sk)) return HGEMM_ERROR_NOT_SUPPORTED; /* nothing launched: run unswapped */
    const uint32_t busy = sched.busy;
    /* V8_EXP_SEAM where it does not pay (v8_seam_pays): the same build
     * without the seam, whose shared memory is the same (so is the grid)
     * and whose limit the launch below sets (hgemm__persistent_grid set the
     * seam kernel's only) */
    bool swapped = false;
    if constexpr ((EXP & V8_EXP_SEAM) != 0) {
        if (!sched.seam) {
            kernel = (const void *)v8_kernel<CLUSTER, TMA_EPILOGUE, T, A_MN, B_MN, BN, DEEP, FENCED, LATE_AT,
                                             EXP & ~V8_EXP_SEAM>;
            swapped = true;
        }
    }
    /* the workspace's flags and partial sums (v8_workspace_layout) */
    const v8_workspace_layout ws = v8_workspace();
    uint32_t *flags = split != HGEMM_SK_NONE ? (uint32_t *)p->workspace : NULL;
    float *partials = split != HGEMM_SK_NONE ? (float *)((char *)p->workspace + ws.partials_offset) : NULL;
    gemm_args args = make_args(p);
    const int pdl = v8_pdl_mode(v);
    uint32_t trigger = (uint32_t)hgemm__pdl_trigger(pdl);
    /* the GPC-aware deal for the clusters launched (the identity where the
     * device has no map, or in the other builds, which do not read it) */
    v8_deal deal;
    memset(&deal, 0, sizeof deal);
    if constexpr ((EXP & V8_EXP_GPC) != 0)
        if (CLUSTER == 2) hgemm__v8_deal(stream, busy, V8_THREADS, smem, deal.worker);
    hgemm_epi epi = p->epi; /* read by the epilogue's builds alone */
    void *params[] = {&ta, &tb, &tc, &tc_in, &args, &ctiles_m, &tiles_n, &sk, &partials, &flags, &bt, &trigger, &deal,
                      &epi};
    /* hgemm__persistent_grid has set the shared-memory limit, of every
     * kernel but a swapped one */
    st = swapped ? hgemm__launch_ex(kernel, dim3(busy * CLUSTER), V8_THREADS, smem, CLUSTER, pdl != HGEMM_PDL_OFF,
                                    stream, params)
                 : hgemm__launch_ready_ex(kernel, dim3(busy * CLUSTER), V8_THREADS, smem, CLUSTER,
                                          pdl != HGEMM_PDL_OFF, stream, params);
    if (st != HGEMM_SUCCESS || !sk.slices || sk.reduce != HGEMM_SK_REDUCE_KERNEL) return st;
    /* Split-K: one block per share of each consumer's part of each tile, one
     * share per slot written (sk_workers * CLUSTER * V8_CONSUMERS <= slots). */
    void *reduce_params[] = {&partials, &args, &ctiles_m, &tiles_n, &sk, &bt};
    const void *reduce;
    if constexpr ((EXP & V8_EXP_ROWS) != 0 || CLUSTER > 2)
        reduce = (const void *)v8_split_reduce<T, BN, CLUSTER, (EXP & V8_EXP_ROWS) != 0>; /* the lab's own */
    else
        reduce = hgemm__v8_split_reduce(elem_dtype<T>::value, BN, CLUSTER);
    return hgemm__launch(reduce, dim3(sk.sk_workers * CLUSTER * V8_CONSUMERS), WARPGROUP_THREADS, 0, 1, stream,
                         reduce_params);
}

/* The GPC-aware deal's bit (V8_EXP_GPC) in the builds v8_choose_build gives
 * the deal, but in the phase clocks' build (v8/plan.c). */
#ifdef HGEMM_PHASE_TIMER
#define V8_EXP_DEAL 0
#else
#define V8_EXP_DEAL V8_EXP_GPC
#endif

/* The swapped product (v8_swap): the tile that holds m's rows, pairs
 * sharing them by multicast. NOT_SUPPORTED, before any launch, where its
 * schedule needs a reduction that stores C unswapped. */
template <typename T>
static hgemm_status launch_v8_swapped(const hgemm_problem *q, const v8_build *b, const hgemm_v8_variant *v,
                                      cudaStream_t stream) {
    switch (b->bn) {
    case 128:
        return launch_v8<V8_CLUSTER, true, T, 0, 0, 128, 0, false, v8_tile<128, 0>::late_at, V8_EXP_TRANS>(
            q, v, stream, b->split);
    default:
        return launch_v8<V8_CLUSTER, true, T, 0, 0, 192, 0, false, v8_tile<192, 0>::late_at, V8_EXP_TRANS>(
            q, v, stream, b->split);
    }
}

/* The table's V8 for one element type and layout: v8_choose_build's
 * choice, on the SMs the call plans for; NT products of a few hundred
 * rows against a wide weight swapped (v8_swap). */
template <typename T, int A_MN, int B_MN>
static hgemm_status launch_v8_tile(const hgemm_problem *p, const hgemm_v8_variant *v, cudaStream_t stream) {
    uint32_t sms = 0;
    const hgemm_status st = v8_sms(p, &sms);
    if (st != HGEMM_SUCCESS) return st;
    if constexpr (!A_MN && !B_MN) {
        hgemm_problem q;
        v8_build sb;
        if (v8_swap(p, &q, &sb)) {
            const hgemm_status swapped = launch_v8_swapped<T>(&q, &sb, v, stream);
            if (swapped != HGEMM_ERROR_NOT_SUPPORTED) return swapped;
        }
    }
    const v8_build b = v8_choose_build(p, v, sms);
    if (b.epi) { /* the fused epilogue's two builds, NT, and fp32 C's, TN (v8_choose_build, api.c) */
        if constexpr (A_MN && B_MN) {
            if (p->epi.c_f32 && p->epi.bias == NULL && p->epi.act == HGEMM_ACTIVATION_NONE && p->C_in == NULL)
                return launch_v8<V8_CLUSTER, false, T, 1, 1, 256, 2, false, v8_tile<256, 2>::late_at, V8_EXP_F32C>(
                    p, v, stream, b.split);
        }
        if constexpr (!A_MN && !B_MN) {
            if (p->epi.c_f32) return HGEMM_ERROR_NOT_SUPPORTED;
            if (b.bn == 128)
                return launch_v8<V8_CLUSTER, true, T, 0, 0, 128, 0, false, v8_tile<128, 0>::late_at, V8_EXP_EPI>(
                    p, v, stream, b.split);
            return launch_v8<V8_CLUSTER, true, T, 0, 0, 256, 2, false, v8_tile<256, 2>::late_at,
                             V8_EXP_EPI | V8_EXP_SEAM | V8_EXP_DEAL>(p, v, stream, b.split);
        }
        return HGEMM_ERROR_NOT_SUPPORTED;
    }
    if (b.bn == 128) {
        if constexpr (!B_MN)
            if (b.cluster == 1) return launch_v8<1, true, T, A_MN, B_MN, 128>(p, v, stream, b.split);
        return launch_v8<V8_CLUSTER, true, T, A_MN, B_MN, 128>(p, v, stream, b.split);
    }
    if constexpr (!A_MN && !B_MN)
        if (b.bn == 320)
            return launch_v8<V8_CLUSTER, true, T, A_MN, B_MN, 320, 2, false, v8_tile<320, 2>::late_at, V8_EXP_DEAL>(
                p, v, stream, b.split);
    if constexpr (!B_MN) {
        if (b.bn == 192) return launch_v8<V8_CLUSTER, true, T, A_MN, B_MN, 192>(p, v, stream, b.split);
        if (b.bn == 64) return launch_v8<V8_CLUSTER, true, T, A_MN, B_MN, 64>(p, v, stream, b.split);
        if (b.cluster == 1) return launch_v8<1, true, T, A_MN, B_MN, 256, 2>(p, v, stream, b.split);
    }
    if (b.deep == 0) return launch_v8<V8_CLUSTER, true, T, A_MN, B_MN, 256, 0>(p, v, stream, b.split);
    if (!b.seam) return launch_v8<V8_CLUSTER, true, T, A_MN, B_MN, 256, 2>(p, v, stream, b.split);
    return launch_v8<V8_CLUSTER, true, T, A_MN, B_MN, 256, 2, false, v8_tile<256, 2>::late_at,
                     V8_EXP_SEAM | V8_EXP_DEAL>(p, v, stream, b.split);
}

/* One element type and form's entry point (src/v8/<dtype>_<form>.cu), named
 * hgemm__v8_<NAME>: the table's V8 under a variant. */
#define V8_INSTANCE(NAME, T, A_MN, B_MN)                                                                        \
    extern "C" hgemm_status hgemm__v8_##NAME(const hgemm_problem *p, const hgemm_v8_variant *v,                \
                                             cudaStream_t stream) {                                            \
        return launch_v8_tile<T, A_MN, B_MN>(p, v, stream);                                                   \
    }

#endif /* HGEMM_V8_LAUNCH_CUH */
