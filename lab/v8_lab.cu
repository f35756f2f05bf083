/*
 * lab/v8_lab.cu: V8's ablations (lab/lab.c's rows; built with -DHGEMM_LAB=ON
 * only): V8 with one idea taken out, each tile width alone, other rings,
 * epilogues, clusters, splits and launch modes, fp16 NT. Each is a build of
 * v8_kernel (src/v8/kernel.cuh) or the table's V8 under a variant
 * (hgemm_v8_variant); what each measured is in docs/notes/v8-log.md.
 */
#include "v8/launch.cuh"
#include "v8/split_reduce.cuh" /* the lab's own tiles (v8-c4, v8-seam-rows) */
#include "lab.h"

/* The table's variant: no knob turned. */
static const hgemm_v8_variant V8_TABLE = {0, 0, 0, 0};

extern "C" hgemm_status hgemm__launch_v8_nocluster(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<1, true, __half, 0, 0, 256, 2>(p, &V8_TABLE, stream, HGEMM_SK_AUTO);
}

extern "C" hgemm_status hgemm__launch_v8_direct(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER, false, __half, 0, 0, 256, 1>(p, &V8_TABLE, stream, HGEMM_SK_AUTO);
}

extern "C" hgemm_status hgemm__launch_v8_dp(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER, true, __half, 0, 0, 256, 2>(p, &V8_TABLE, stream, HGEMM_SK_NONE);
}

extern "C" hgemm_status hgemm__launch_v8_wide(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER, true, __half, 0, 0, 256, 2>(p, &V8_TABLE, stream, HGEMM_SK_AUTO);
}

extern "C" hgemm_status hgemm__launch_v8_narrow(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER, true, __half, 0, 0, 128>(p, &V8_TABLE, stream, HGEMM_SK_AUTO);
}

/* The narrow tile with whole tiles only (no split-K, one launch), for the
 * small products where a split's second launch may cost more than it buys. */
extern "C" hgemm_status hgemm__launch_v8_narrow_dp(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER, true, __half, 0, 0, 128>(p, &V8_TABLE, stream, HGEMM_SK_NONE);
}

/* The narrow tile without clusters: each block loads its whole B tile, so
 * no block waits for its partner to free a stage (run 69). */
extern "C" hgemm_status hgemm__launch_v8_narrow_nocluster(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<1, true, __half, 0, 0, 128>(p, &V8_TABLE, stream, HGEMM_SK_AUTO);
}

extern "C" hgemm_status hgemm__launch_v8_192(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER, true, __half, 0, 0, 192>(p, &V8_TABLE, stream, HGEMM_SK_AUTO);
}

/* The 320-wide tile at every shape (run 82): cuBLAS's tile at 8192^3; with
 * a workspace, the tail split where it applies (as V8), or whole tiles only
 * (v8-320-whole, V8's 320 tile through run 94). */
extern "C" hgemm_status hgemm__launch_v8_320(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER, true, __half, 0, 0, 320, 2>(p, &V8_TABLE, stream, HGEMM_SK_TAIL);
}
/* v8-320-gpc: the 320 tile with the GPC-aware deal, as the table's V8 runs
 * it since run 136 (v8-320: without the deal; in the phase clocks' build,
 * v8-320's). */
extern "C" hgemm_status hgemm__launch_v8_320_gpc(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER, true, __half, 0, 0, 320, 2, false, v8_tile<320, 2>::late_at, V8_EXP_DEAL>(p, &V8_TABLE, stream, HGEMM_SK_TAIL);
}
extern "C" hgemm_status hgemm__launch_v8_320_whole(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER, true, __half, 0, 0, 320, 2>(p, &V8_TABLE, stream, HGEMM_SK_NONE);
}

/* The 320-wide tile in raster groups of other widths (V8: V8_RASTER, 8
 * cluster tiles): which tiles run at once, and so which of them ask L2 for
 * the same k-tile of A or B at about the same time. */
static hgemm_status launch_v8_320_raster(const hgemm_problem *p, cudaStream_t stream, int raster) {
    hgemm_v8_variant v = V8_TABLE;
    v.raster = raster;
    return launch_v8<V8_CLUSTER, true, __half, 0, 0, 320, 2>(p, &v, stream, HGEMM_SK_TAIL);
}
extern "C" hgemm_status hgemm__launch_v8_320_r1(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8_320_raster(p, stream, 1);
}
extern "C" hgemm_status hgemm__launch_v8_320_r2(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8_320_raster(p, stream, 2);
}
extern "C" hgemm_status hgemm__launch_v8_320_r4(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8_320_raster(p, stream, 4);
}
extern "C" hgemm_status hgemm__launch_v8_320_r16(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8_320_raster(p, stream, 16);
}
extern "C" hgemm_status hgemm__launch_v8_320_r32(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8_320_raster(p, stream, 32);
}

extern "C" hgemm_status hgemm__launch_v8_64(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER, true, __half, 0, 0, 64>(p, &V8_TABLE, stream, HGEMM_SK_AUTO);
}

/* The table's V8 with one way of programmatic dependent launch everywhere
 * (hgemm_problem.pdl); OFF is V8 as through run 78: each call starts only
 * once the previous kernel in the stream has finished. */
static hgemm_status launch_v8_pdl(const hgemm_problem *p, cudaStream_t stream, int pdl) {
    hgemm_v8_variant v = V8_TABLE;
    v.pdl = pdl;
    return hgemm__v8_run(p, &v, stream);
}
extern "C" hgemm_status hgemm__launch_v8_nopdl(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8_pdl(p, stream, HGEMM_PDL_OFF);
}
extern "C" hgemm_status hgemm__launch_v8_pdl_start(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8_pdl(p, stream, HGEMM_PDL_START);
}
extern "C" hgemm_status hgemm__launch_v8_pdl_late(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8_pdl(p, stream, HGEMM_PDL_LATE);
}

/* The table's V8 with whole tiles dealt over every cluster, as through run
 * 99, where V8 deals them over the fewest clusters that take as many rounds
 * (hgemm_sk_balance). */
/* V8 with the wide tile's plain k-loop: every tile waits for its last
 * WGMMA group before its epilogue, as through run 125 */
extern "C" hgemm_status hgemm__launch_v8_noseam(const hgemm_problem *p, cudaStream_t stream) {
    hgemm_v8_variant v = V8_TABLE;
    v.no_seam = 1;
    return hgemm__v8_run(p, &v, stream);
}

extern "C" hgemm_status hgemm__launch_v8_allsms(const hgemm_problem *p, cudaStream_t stream) {
    hgemm_v8_variant v = V8_TABLE;
    v.all_workers = 1;
    return hgemm__v8_run(p, &v, stream);
}

/* The quarter tile with the block's start and end as through run 76
 * (FENCED), to measure the memory barriers at the small products. */
extern "C" hgemm_status hgemm__launch_v8_64_fenced(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER, true, __half, 0, 0, 64, 0, true>(p, &V8_TABLE, stream, HGEMM_SK_AUTO);
}

extern "C" hgemm_status hgemm__launch_v8_3stage(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER, true, __half, 0, 0, 256, 0>(p, &V8_TABLE, stream, HGEMM_SK_AUTO);
}

/* Split-K always reduced by the second kernel (before run 52 it was so for
 * any number of slices; now a few slices are added by slice 0's worker). */
extern "C" hgemm_status hgemm__launch_v8_split2k(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER, true, __half, 0, 0, 256, 2>(p, &V8_TABLE, stream, HGEMM_SK_SPLIT_KERNEL);
}

/* Stream-K where split-K would apply (the plan before split-K existed). */
extern "C" hgemm_status hgemm__launch_v8_streamk(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER, true, __half, 0, 0, 256, 2>(p, &V8_TABLE, stream, HGEMM_SK_STREAM);
}

/* Clusters of 4 along M (v8-c4, run 73): four 128x256 tiles one above the
 * other share each B tile, a quarter loaded by each block, so a block asks
 * L2 for 24 KB a k-tile (16 KB of A, 8 KB of B) instead of 32. */
extern "C" hgemm_status hgemm__launch_v8_c4(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<4, true, __half, 0, 0, 256, 2>(p, &V8_TABLE, stream, HGEMM_SK_AUTO);
}

/* The deep ring with C in two halves through one buffer (DEEP = 1), the
 * table's wide tile from run 27 to run 74, at every k. */
extern "C" hgemm_status hgemm__launch_v8_halves(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER, true, __half, 0, 0, 256, 1>(p, &V8_TABLE, stream, HGEMM_SK_AUTO);
}

/* The wide and the 320-wide tile with every part of C stored before the
 * next tile starts, as through run 90 (the wide tile) and run 92 (the 320
 * tile); V8 sends their last three and two parts during the next tile's
 * first k-tiles (v8_late_parts). */
extern "C" hgemm_status hgemm__launch_v8_wide_serial(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER, true, __half, 0, 0, 256, 2, false, V8_LATE_NONE>(p, &V8_TABLE, stream, HGEMM_SK_AUTO);
}
extern "C" hgemm_status hgemm__launch_v8_320_serial(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER, true, __half, 0, 0, 320, 2, false, V8_LATE_NONE>(p, &V8_TABLE, stream, HGEMM_SK_NONE);
}

/* The wide tile's late parts in the 320 tile's order: after the release of
 * the stage the k-tile before had read (V8_LATE_AFTER; run 93's v8-wide). */
extern "C" hgemm_status hgemm__launch_v8_wide_after(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER, true, __half, 0, 0, 256, 2, false, V8_LATE_AFTER>(p, &V8_TABLE, stream, HGEMM_SK_AUTO);
}

/* The wide tile as V8 runs it at 8192^3 (4 stages, C in four parts, the
 * tail split with a workspace), built with V8_EXP_* bits, at every shape
 * (V8 picks the width by shape) */
template <int EXP>
static hgemm_status launch_v8_wide_exp(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8<V8_CLUSTER, true, __half, 0, 0, 256, 2, false, v8_tile<256, 2>::late_at, EXP>(p, &V8_TABLE, stream,
                                                                                                  HGEMM_SK_AUTO);
}
extern "C" hgemm_status hgemm__launch_v8_seam(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8_wide_exp<V8_EXP_SEAM>(p, stream);
}
extern "C" hgemm_status hgemm__launch_v8_n128x2(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8_wide_exp<V8_EXP_N128X2>(p, stream);
}
/* v8-seam-rows (run 132's probe): v8-seam with the raster walked down tile
 * rows (v8_tile_at). L2's request coalescer merges identical unicast loads
 * from different clusters, never the pairs' multicasts (run 132), and the
 * hardware deals cluster indexes round the GPCs, about 8 apart (run 131's
 * SM map): here the clusters one GPC holds share A's rows, which each
 * block loads alone, where V8's walk gives them B's columns, multicast. */
extern "C" hgemm_status hgemm__launch_v8_seam_rows(const hgemm_problem *p, cudaStream_t stream) {
    return launch_v8_wide_exp<V8_EXP_SEAM | V8_EXP_ROWS>(p, stream);
}
/* v8-gpc (run 134's probe): v8-seam with the GPC-aware deal (src/deal.h):
 * each cluster plays the worker at its place in the device's map sorted by
 * GPC, so that the 8 workers a raster group gives one row of A sit in one
 * GPC, where L2's coalescer can merge their loads of it. */
extern "C" hgemm_status hgemm__launch_v8_gpc(const hgemm_problem *p, cudaStream_t stream) {
#ifdef HGEMM_PHASE_TIMER
    /* not in the phase clocks' build: there the deal's worker, held where
     * V8's index is read again from %ctaid, spilled 8 bytes */
    (void)p;
    (void)stream;
    return HGEMM_ERROR_NOT_SUPPORTED;
#else
    return launch_v8_wide_exp<V8_EXP_SEAM | V8_EXP_GPC>(p, stream);
#endif
}

