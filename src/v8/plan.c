/*
 * v8/plan.c: V8's planner in plain C (declared in v8/plan.h): the
 * workspace's layout, the width rule, the build and the work plan. The
 * measurements each rule and constant comes from are in
 * docs/notes/v8-design.txt ("The planner's rules").
 */
#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "v8/plan.h"
#include "raster.h"

/* Relative cost per element of each width against the 128x256 tile (runs
 * 26, 66, 82, 97, 137); the tail split's last round's fixed cost (run 99);
 * the k-tiles a slice needs for the wide tile to take split-K (run 32); the
 * slices from which the wide tile runs without clusters (runs 69, 70); the
 * k-tiles up to which the wide tile keeps 3 stages (runs 74, 75). */
#define V8_NARROW_COST 1.15
#define V8_MID_COST 1.05
#define V8_QUARTER_COST 1.5
#define V8_W320_COST 1.02
#define V8_SPLIT_WIDE_KTILES 64
#define V8_TAIL_ROUND_COST 0.25
#define V8_UNCOUPLED_WIDE_SLICES 8
#define V8_SHORT_KTILES 2

/* The GPC-aware deal in the table's seam build of the wide tile and in its
 * 320 tile, but in the phase clocks' build (its worker spilled there). */
#ifdef HGEMM_PHASE_TIMER
#define V8_DEAL_BUILD 0
#else
#define V8_DEAL_BUILD 1
#endif

v8_workspace_layout v8_workspace(void) {
    v8_workspace_layout w = {V8_FLAG_BYTES, V8_FLAG_BYTES / sizeof(uint32_t), V8_COUNT_FLAGS, V8_FLAG_BYTES,
                             V8_SLOT_FLOATS};
    return w;
}

int v8_workspace_fits(const hgemm_problem *p, uint32_t grid) {
    const v8_workspace_layout w = v8_workspace();
    const size_t slots = (size_t)grid * V8_CONSUMERS;
    return p->workspace != NULL && slots * sizeof(uint32_t) <= w.flag_bytes &&
           p->workspace_bytes >= w.partials_offset + slots * w.split_slot_floats * sizeof(float);
}

uint32_t v8_tail_max_units(const hgemm_problem *p, int bn, uint32_t cluster) {
    const v8_workspace_layout w = v8_workspace();
    const size_t unit_slots = (size_t)cluster * V8_CONSUMERS, slot_bytes = v8_tail_slot_floats(bn) * sizeof(float);
    const size_t by_flags = w.flag_bytes / sizeof(uint32_t) / unit_slots;
    const size_t by_bytes = (p->workspace_bytes - w.partials_offset) / (unit_slots * slot_bytes);
    return (uint32_t)(by_flags < by_bytes ? by_flags : by_bytes);
}

int v8_counters_fit(uint32_t grid, uint32_t tiles, uint32_t cluster) {
    const v8_workspace_layout w = v8_workspace();
    const uint32_t slots = grid * V8_CONSUMERS;
    return !(slots > w.count_first || w.count_first + 2 * (size_t)tiles * cluster * V8_CONSUMERS > w.flags);
}

int v8_pdl_mode(const hgemm_v8_variant *v) { return v->pdl != HGEMM_PDL_DEFAULT ? v->pdl : HGEMM_PDL_EXIT; }

uint32_t v8_raster(const hgemm_v8_variant *v) { return v->raster > 0 ? (uint32_t)v->raster : (uint32_t)V8_RASTER; }

int v8_swap(const hgemm_problem *p, hgemm_problem *q, v8_build *b) {
    if (p->m < V8_SWAP_MIN_M || p->m > V8_SWAP_MAX_M || p->n < V8_SWAP_MIN_N) return 0;
    /* where it led (docs/notes/v8-swap.md): up to 192 rows against
     * weights up to 16384 wide, two tiles of 192 up to 8192; not 193..256
     * (the 256-wide tile, 0.72..0.94x) nor the 28672-wide weights */
    if (p->m > V8_SWAP_ONE_TILE_M ? p->m <= 256 || p->n > V8_SWAP_TWO_TILES_MAX_N : p->n > V8_SWAP_MAX_N) return 0;
    if (p->a_mn || p->b_mn || p->batch > 1 || p->beta != 0.0f || p->C_in != NULL || hgemm__epi_on(&p->epi))
        return 0;
    /* TMA stores whole 16-byte chunks: C's rows must end on one (n % 8 == 0) */
    if (p->workspace == NULL || p->n % 8 != 0 || p->ldc % 8 != 0 || (uintptr_t)p->C % 16 != 0) return 0;
    *q = *p;
    q->m = p->n;
    q->n = p->m;
    q->A = p->B;
    q->lda = p->ldb;
    q->B = p->A;
    q->ldb = p->lda;
    /* past 256 rows two tiles of 192 (the 320-wide build spills swapped) */
    const v8_build swapped = {p->m <= 128 ? 128 : 192, V8_CLUSTER, 0, 0, 0, HGEMM_SK_AUTO, 0};
    *b = swapped;
    return 1;
}

int v8_swap_schedule_ok(const hgemm_sk *sk) { return !sk->slices || sk->reduce == HGEMM_SK_REDUCE_OWNER; }

int v8_seam_pays(const hgemm_sk *sk, float beta) {
    return sk->k_tiles >= 2 && sk->sk_workers == 0 && beta == 0.0f;
}

/* No split with a separate C input (the split's second kernel reads C
 * itself), for the 320-wide tile but in the tail split's mode (the other
 * splits' slots hold 64 x 256), nor where the workspace does not fit the
 * grid. A batch's tiles are one sequence, so its last round is cut the
 * same way. */
hgemm_sk v8_plan(const hgemm_problem *p, const hgemm_v8_variant *v, uint32_t tiles, uint32_t grid,
                 uint32_t cluster, int bn, int *split) {
    if (p->C_in != NULL || (bn > 256 && *split != HGEMM_SK_TAIL) || !v8_workspace_fits(p, grid))
        *split = HGEMM_SK_NONE;
    hgemm_sk sk = hgemm_sk_plan(tiles, (uint32_t)hgemm_ceil_div(p->k, V8_K_TILE), grid / cluster, *split);
    if (*split == HGEMM_SK_AUTO || *split == HGEMM_SK_TAIL) hgemm_sk_tail(&sk, v8_tail_max_units(p, bn, cluster));
    if (!v->all_workers) hgemm_sk_balance(&sk);
    return sk;
}

v8_schedule v8_schedule_for(const hgemm_problem *p, const hgemm_v8_variant *v, uint32_t tiles, uint32_t grid,
                            uint32_t cluster, int bn, int split, int seam_build) {
    v8_schedule out;
    out.split = split;
    out.sk = v8_plan(p, v, tiles, grid, cluster, bn, &out.split);
    hgemm_sk *sk = &out.sk;
    out.seam = seam_build && v8_seam_pays(sk, p->beta);
    /* where the slots or the tiles' counters would not fit, the second
     * kernel reduces instead (never on an H200: 264 slots, 132) */
    if (sk->slices && sk->reduce == HGEMM_SK_REDUCE_SHARED && !v8_counters_fit(grid, sk->tiles, cluster))
        sk->reduce = HGEMM_SK_REDUCE_KERNEL;
    /* Clusters with work: all of the plan's while whole tiles go round
     * (dp_tiles is 0 or a multiple of sk->workers, which hgemm_sk_balance may
     * have made fewer than `workers`), else the stream-K ones or one per tile. */
    out.busy = sk->sk_workers ? sk->sk_workers : (tiles < sk->workers ? tiles : sk->workers);
    if (sk->sk_workers && sk->dp_tiles) out.busy = sk->workers;
    return out;
}

uint32_t v8_whole_clusters(uint32_t blocks, uint32_t cluster) {
    return blocks < cluster ? cluster : blocks / cluster * cluster;
}

/* The rounds of `tiles` tiles `bn` wide on `workers` clusters as the launch
 * runs them: whole, except where the tail split cuts the last round: there
 * its share plus V8_TAIL_ROUND_COST. */
static double v8_rounds(const hgemm_problem *p, const hgemm_v8_variant *v, uint64_t tiles, uint32_t workers,
                        int bn) {
    const double whole = (double)((tiles + workers - 1) / workers);
    if (tiles > UINT32_MAX) return whole;
    int split = bn > 256 ? HGEMM_SK_TAIL : HGEMM_SK_AUTO;
    const hgemm_sk sk = v8_plan(p, v, (uint32_t)tiles, workers * V8_CLUSTER, V8_CLUSTER, bn, &split);
    if (!sk.tail_slices) return whole;
    const uint32_t passes = hgemm_sk_tail_passes(sk.tiles - sk.dp_tiles, sk.tail_slices, workers);
    return (double)(sk.dp_tiles / workers) + (double)passes / sk.tail_slices + V8_TAIL_ROUND_COST;
}

int v8_choose_bn(const hgemm_problem *p, const hgemm_v8_variant *v, uint32_t workers) {
    const uint64_t batch = p->batch > 1 ? (uint64_t)p->batch : 1;
    const uint64_t ctiles_m = hgemm_ceil_div(hgemm_ceil_div(p->m, V8_BM), V8_CLUSTER);
    const uint64_t wide = ctiles_m * hgemm_ceil_div(p->n, 256) * batch;
    /* With a workspace, wide tiles few enough for split-K keep every
     * cluster busy at the wide tile's cost, where each slice is long enough
     * to pay for its partial sum. */
    if (p->workspace != NULL && wide <= workers) {
        const uint32_t k_tiles = (uint32_t)hgemm_ceil_div(p->k, V8_K_TILE);
        const uint32_t slices = hgemm_sk_slices((uint32_t)wide, k_tiles, workers);
        if (slices >= 2 && k_tiles / slices >= V8_SPLIT_WIDE_KTILES) return 256;
    }
    static const int widths[5] = {256, 320, 192, 128, 64};
    static const double costs[5] = {1.0, V8_W320_COST, V8_MID_COST, V8_NARROW_COST, V8_QUARTER_COST};
    int best = 256;
    double best_cost = 0.0;
    for (int i = 0; i < 5; i++) {
        if ((widths[i] == 192 || widths[i] == 64) && p->b_mn) continue;
        if (widths[i] == 320 && (p->a_mn || p->b_mn)) continue; /* K-major operands only (run 82) */
        if (widths[i] == 64 && (hgemm_ceil_div(p->k, V8_K_TILE) >= HGEMM_SK_MIN_KTILES || p->lda % 64 || p->ldb % 64))
            continue;
        const uint64_t tiles = ctiles_m * hgemm_ceil_div(p->n, (uint32_t)widths[i]) * batch;
        if (tiles > UINT32_MAX) continue; /* the quarter width only: the launch would refuse it */
        const double cost = v8_rounds(p, v, tiles, workers, widths[i]) * widths[i] / 256.0 * costs[i];
        if (i == 0 || cost < best_cost) {
            best = widths[i];
            best_cost = cost;
        }
    }
    return best;
}

/* Whether a tile `bn` wide runs without clusters: where its tiles, one per
 * block, split k in at least `min_slices` slices (a memory-bound k-loop in a
 * pair runs at the pace of the later block). */
static int v8_split_uncoupled(const hgemm_problem *p, uint32_t sms, int bn, uint32_t min_slices) {
    /* one block per SM: the grid the launch will take */
    if (p->C_in != NULL || sms < 2 || !v8_workspace_fits(p, sms)) return 0;
    const uint64_t batch = p->batch > 1 ? (uint64_t)p->batch : 1;
    const uint64_t tiles = hgemm_ceil_div(p->m, V8_BM) * (uint64_t)hgemm_ceil_div(p->n, (uint32_t)bn) * batch;
    if (tiles > UINT32_MAX) return 0;
    const hgemm_sk sk =
        hgemm_sk_plan((uint32_t)tiles, (uint32_t)hgemm_ceil_div(p->k, V8_K_TILE), sms, HGEMM_SK_AUTO);
    return sk.slices >= 2 && sk.slices >= min_slices;
}

v8_build v8_choose_build(const hgemm_problem *p, const hgemm_v8_variant *v, uint32_t sms) {
    const uint32_t workers = sms < V8_CLUSTER ? 1 : sms / V8_CLUSTER;
    const int bn = v8_choose_bn(p, v, workers);
    v8_build b = {bn, V8_CLUSTER, 0, 0, 0, HGEMM_SK_AUTO, 0};
    if (hgemm__epi_on(&p->epi)) { /* two builds, in pairs; api.c gives them no workspace */
        b.epi = 1;
        b.split = HGEMM_SK_NONE;
        if (bn > 128 || p->epi.c_f32) { /* an fp32 C: the wide build alone */
            b.bn = 256;
            b.deep = 2;
        } else {
            b.bn = 128;
        }
        return b;
    }
    if (bn == 128) {
        if (!p->b_mn && v8_split_uncoupled(p, sms, 128, 2)) b.cluster = 1;
        return b;
    }
    if (bn == 320) { /* K-major operands only: v8_choose_bn takes it for nothing else */
        b.deep = 2;
        b.split = HGEMM_SK_TAIL;
        b.deal = V8_DEAL_BUILD;
        return b;
    }
    if (bn == 192 || bn == 64) return b; /* B K-major only (v8_choose_bn) */
    b.bn = 256;
    b.deep = 2;
    if (!p->b_mn && v8_split_uncoupled(p, sms, 256, V8_UNCOUPLED_WIDE_SLICES)) {
        b.cluster = 1;
        return b;
    }
    if (hgemm_ceil_div(p->k, V8_K_TILE) <= V8_SHORT_KTILES) {
        b.deep = 0;
        return b;
    }
    /* the seam between tiles; the launch runs the plain build where the
     * seam does not pay (v8_seam_pays) */
    b.seam = !v->no_seam;
    b.deal = b.seam && V8_DEAL_BUILD;
    return b;
}

int v8_stages(int bn, int deep) {
    switch (bn) {
    case 64: return 8;
    case 128: return 5;
    case 192: return 4;
    case 320: return 3;
    default: return deep ? 4 : 3;
    }
}

hgemm_status v8_sms(const hgemm_problem *p, uint32_t *sms) {
    int dev = 0, n = 0;
    cudaError_t err = cudaGetDevice(&dev);
    if (err == cudaSuccess) err = cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev);
    if (err != cudaSuccess) return hgemm__status_from_cuda(err);
    if (p->sm_count > 0 && p->sm_count < n) n = p->sm_count;
    *sms = (uint32_t)n;
    return HGEMM_SUCCESS;
}

/* What V8 serves: the tensor-map limits of A, B and C, and a batch whose
 * tiles, all entries together, a 32-bit index counts (at the narrow width;
 * the quarter tile, with twice as many, is taken only where its count fits
 * too, and the launch refuses it elsewhere). */
hgemm_status hgemm__supports_v8(const hgemm_problem *p) {
    hgemm_status st = hgemm__tmap_supports(p, 1);
    if (st != HGEMM_SUCCESS) return st;
    const uint64_t tiles = (uint64_t)hgemm_ceil_div(hgemm_ceil_div(p->m, V8_BM), V8_CLUSTER) *
                           (uint64_t)hgemm_ceil_div(p->n, 128);
    const uint64_t batch = p->batch > 1 ? (uint64_t)p->batch : 1;
    return tiles * batch <= UINT32_MAX ? HGEMM_SUCCESS : HGEMM_ERROR_NOT_SUPPORTED;
}

/* What hgemm__launch_v8 would run for `p` on a GPU of `sms` SMs (0: the
 * current device's), by the same choices, with no CUDA call when sms > 0.
 * One difference: the launch takes as many pairs as the GPU holds at once
 * (cudaOccupancyMaxActiveClusters), assumed here to be every SM's. */
hgemm_status hgemm__v8_explain(const hgemm_problem *p, uint32_t sms, hgemm_v8_plan *out) {
    static const hgemm_v8_variant table = {0, 0, 0, 0};
    if (sms == 0) {
        const hgemm_status st = v8_sms(p, &sms);
        if (st != HGEMM_SUCCESS) return st;
    } else if (p->sm_count > 0 && (uint32_t)p->sm_count < sms) {
        sms = (uint32_t)p->sm_count;
    }
    hgemm_problem q;
    v8_build b;
    out->swapped = v8_swap(p, &q, &b);
    if (out->swapped) {
        const uint64_t qtiles = hgemm_ceil_div(hgemm_ceil_div(q.m, V8_BM), V8_CLUSTER) * hgemm_ceil_div(q.n, b.bn);
        const uint32_t grid = v8_whole_clusters(sms, V8_CLUSTER);
        const v8_schedule sc = v8_schedule_for(&q, &table, (uint32_t)qtiles, grid, V8_CLUSTER, b.bn, b.split, 0);
        out->swapped = v8_swap_schedule_ok(&sc.sk); /* else the launch runs it as given */
    }
    if (out->swapped)
        p = &q;
    else
        b = v8_choose_build(p, &table, sms);
    const uint64_t batch = p->batch > 1 ? (uint64_t)p->batch : 1;
    const uint64_t ctiles_m = hgemm_ceil_div(hgemm_ceil_div(p->m, V8_BM), (uint32_t)b.cluster);
    const uint64_t tiles = ctiles_m * hgemm_ceil_div(p->n, (uint32_t)b.bn) * batch;
    if (tiles > UINT32_MAX) return HGEMM_ERROR_NOT_SUPPORTED;
    const uint32_t cluster = (uint32_t)b.cluster;
    const uint32_t grid = v8_whole_clusters(sms, cluster);
    const v8_schedule sc = v8_schedule_for(p, &table, (uint32_t)tiles, grid, cluster, b.bn, b.split, b.seam != 0);
    out->bn = b.bn;
    out->cluster = b.cluster;
    out->stages = v8_stages(b.bn, b.deep);
    out->seam = sc.seam;
    out->deal = b.deal;
    out->split = sc.split;
    out->sms = sms;
    out->tiles = (uint32_t)tiles;
    out->k_tiles = sc.sk.k_tiles;
    out->clusters = sc.busy;
    out->workers = sc.sk.workers;
    out->dp_tiles = sc.sk.dp_tiles;
    out->sk_workers = sc.sk.sk_workers;
    out->slices = sc.sk.slices;
    out->tail_slices = sc.sk.tail_slices;
    out->reduce = sc.sk.reduce;
    return HGEMM_SUCCESS;
}
