/*
 * lab/lab.c: the ablation rows (built with -DHGEMM_LAB=ON only): a version
 * with one of its ideas taken out, so that its chapter can measure what that
 * idea buys. Not in the public API (no enum value; `id` is the version they
 * come from): hgemm-bench and the tests list them with hgemm__experiment_at
 * and run them through hgemm__run (src/internal.h). Each row's launcher is
 * in lab/v8_lab.cu or lab/v9_lab.c.
 */
#include <stddef.h>
#include <string.h>

#include "lab.h"

/* What a kernel that loads A and B and stores C through TMA, and needs no
 * other check, can serve: the tensor-map limits of the three. */
static hgemm_status supports_tma_abc(const hgemm_problem *p) { return hgemm__tmap_supports(p, 1); }

static const hgemm_kernel_info experiment_table[] = {
    {HGEMM_KERNEL_V8, "v8-nocluster", HGEMM_ACC_F32, "V8 without clusters: each block loads its whole B tile", hgemm__launch_v8_nocluster, supports_tma_abc, 0, 0},
    {HGEMM_KERNEL_V8, "v8-direct", HGEMM_ACC_F32, "V8 with V5's epilogue: registers straight to global memory", hgemm__launch_v8_direct, supports_tma_abc, 0, 0},
    {HGEMM_KERNEL_V8, "v8-dp", HGEMM_ACC_F32, "V8 (128x256) ignoring the workspace: whole tiles only, no stream-K, split-K or tail split", hgemm__launch_v8_dp, supports_tma_abc, 0, 0},
    {HGEMM_KERNEL_V8, "v8-wide", HGEMM_ACC_F32, "V8 with 128x256 tiles and the 4-stage ring at every shape, in its plain k-loop without the seam between tiles (V8 picks other widths where those take fewer rounds, and 3 stages for k <= 128)", hgemm__launch_v8_wide, supports_tma_abc, 0, 0},
    {HGEMM_KERNEL_V8, "v8-narrow", HGEMM_ACC_F32, "V8 with 128x128 tiles at every shape", hgemm__launch_v8_narrow, supports_tma_abc, 0, 0},
    {HGEMM_KERNEL_V8, "v8-narrow-dp", HGEMM_ACC_F32, "V8 with 128x128 tiles, whole tiles only (no split-K)", hgemm__launch_v8_narrow_dp, supports_tma_abc, 0, 0},
    {HGEMM_KERNEL_V8, "v8-narrow-nocluster", HGEMM_ACC_F32, "V8 with 128x128 tiles and no clusters: each block loads its whole B tile", hgemm__launch_v8_narrow_nocluster, supports_tma_abc, 0, 0},
    {HGEMM_KERNEL_V8, "v8-192", HGEMM_ACC_F32, "V8 with 128x192 tiles at every shape", hgemm__launch_v8_192, supports_tma_abc, 0, 0},
    {HGEMM_KERNEL_V8, "v8-320", HGEMM_ACC_F32, "V8 with 128x320 tiles (3 stages; with a workspace, the last round's tiles split in k where that takes at most 3/4 of a round) at every shape", hgemm__launch_v8_320, supports_tma_abc, 0, 0},
    {HGEMM_KERNEL_V8, "v8-320-gpc", HGEMM_ACC_F32, "V8 with 128x320 tiles at every shape and the GPC-aware deal, as V8 runs the 320 tile (v8-320: the hardware's order of the pairs)", hgemm__launch_v8_320_gpc, supports_tma_abc, 0, 0},
    {HGEMM_KERNEL_V8, "v8-320-whole", HGEMM_ACC_F32, "V8 with 128x320 tiles at every shape, whole tiles only, as through run 94 (v8-320: the last round's tiles split in k)", hgemm__launch_v8_320_whole, supports_tma_abc, 0, 0},
    {HGEMM_KERNEL_V8, "v8-320-r1", HGEMM_ACC_F32, "V8 with 128x320 tiles in raster groups 1 cluster tile wide (v8-320: 8)", hgemm__launch_v8_320_r1, supports_tma_abc, 0, 0},
    {HGEMM_KERNEL_V8, "v8-320-r2", HGEMM_ACC_F32, "V8 with 128x320 tiles in raster groups 2 cluster tiles wide (v8-320: 8)", hgemm__launch_v8_320_r2, supports_tma_abc, 0, 0},
    {HGEMM_KERNEL_V8, "v8-320-r4", HGEMM_ACC_F32, "V8 with 128x320 tiles in raster groups 4 cluster tiles wide (v8-320: 8)", hgemm__launch_v8_320_r4, supports_tma_abc, 0, 0},
    {HGEMM_KERNEL_V8, "v8-320-r16", HGEMM_ACC_F32, "V8 with 128x320 tiles in raster groups 16 cluster tiles wide (v8-320: 8)", hgemm__launch_v8_320_r16, supports_tma_abc, 0, 0},
    {HGEMM_KERNEL_V8, "v8-320-r32", HGEMM_ACC_F32, "V8 with 128x320 tiles in raster groups 32 cluster tiles wide (v8-320: 8)", hgemm__launch_v8_320_r32, supports_tma_abc, 0, 0},
    {HGEMM_KERNEL_V8, "v8-64", HGEMM_ACC_F32, "V8 with 128x64 tiles at every shape", hgemm__launch_v8_64, supports_tma_abc, 0, 0},
    {HGEMM_KERNEL_V8, "v8-64-fenced", HGEMM_ACC_F32, "V8 with 128x64 tiles and the block's start and end behind GPU-wide memory barriers and a closing cluster barrier, as V8 had through run 76", hgemm__launch_v8_64_fenced, supports_tma_abc, 0, 0},
    {HGEMM_KERNEL_V8, "v8-noseam", HGEMM_ACC_F32, "V8 with the 128x256 tile's plain k-loop: each tile waits for its last WGMMA group before its epilogue, as through run 125 (V8: the left half first, the next tile's left half issued while the right half runs)", hgemm__launch_v8_noseam, hgemm__supports_v8, 1, 1},
    {HGEMM_KERNEL_V8, "v8-allsms", HGEMM_ACC_F32, "V8 with whole tiles dealt over every cluster, as through run 99 (V8: over the fewest clusters that take as many rounds)", hgemm__launch_v8_allsms, hgemm__supports_v8, 1, 1},
    {HGEMM_KERNEL_V8, "v8-nopdl", HGEMM_ACC_F32, "V8 without programmatic dependent launch: a call starts only when the previous kernel in the stream has finished, as through run 78", hgemm__launch_v8_nopdl, hgemm__supports_v8, 1, 1},
    {HGEMM_KERNEL_V8, "v8-pdl-start", HGEMM_ACC_F32, "V8 with programmatic dependent launch, each block letting the next kernel be scheduled right after its own wait (V8: as its blocks exit)", hgemm__launch_v8_pdl_start, hgemm__supports_v8, 1, 1},
    {HGEMM_KERNEL_V8, "v8-pdl-late", HGEMM_ACC_F32, "V8 with programmatic dependent launch, each block letting the next kernel be scheduled once its loader has issued its last load (V8: as its blocks exit)", hgemm__launch_v8_pdl_late, hgemm__supports_v8, 1, 1},
    {HGEMM_KERNEL_V8, "v8-3stage", HGEMM_ACC_F32, "V8 (128x256) with 3 stages and each consumer's C staged whole (32 KB), as before run 27", hgemm__launch_v8_3stage, supports_tma_abc, 0, 0},
    {HGEMM_KERNEL_V8, "v8-streamk", HGEMM_ACC_F32, "V8 (128x256) sharing a few long tiles by stream-K instead of split-K", hgemm__launch_v8_streamk, supports_tma_abc, 0, 0},
    {HGEMM_KERNEL_V8, "v8-split2k", HGEMM_ACC_F32, "V8 (128x256) with split-K always reduced by a second kernel", hgemm__launch_v8_split2k, supports_tma_abc, 0, 0},
    {HGEMM_KERNEL_V8, "v8-c4", HGEMM_ACC_F32, "V8 (128x256) in clusters of 4 along M: each block loads a quarter of B (24 KB a k-tile from L2 instead of 32)", hgemm__launch_v8_c4, supports_tma_abc, 0, 0},
    {HGEMM_KERNEL_V8, "v8-halves", HGEMM_ACC_F32, "V8 (128x256, 4 stages) staging each consumer's C in two halves through one buffer, as from run 27 to run 74 (V8: four parts through two buffers)", hgemm__launch_v8_halves, supports_tma_abc, 0, 0},
    {HGEMM_KERNEL_V8, "v8-wide-serial", HGEMM_ACC_F32, "V8 with 128x256 tiles at every shape, every part of C stored before the next tile starts, as through run 90 (V8: the last parts during the next tile's first k-tiles)", hgemm__launch_v8_wide_serial, supports_tma_abc, 0, 0},
    {HGEMM_KERNEL_V8, "v8-wide-after", HGEMM_ACC_F32, "V8 with 128x256 tiles at every shape, each late part of C stored after the k-tile's stage release, as the 320 tile does (the wide tile: before it)", hgemm__launch_v8_wide_after, supports_tma_abc, 0, 0},
    {HGEMM_KERNEL_V8, "v8-seam", HGEMM_ACC_F32, "V8's 128x256 tile with the 4-stage ring as V8 runs it since run 126, at every shape: every k-tile in two m64n128k16 halves, a plain tile's end waiting for the left half only (C's first part goes out, and the next tile's left half is issued, while the right half runs)", hgemm__launch_v8_seam, supports_tma_abc, 0, 0},
    {HGEMM_KERNEL_V8, "v8-seam-rows", HGEMM_ACC_F32, "v8-seam with its raster groups walked down tile rows instead of across tile columns: the clusters a GPC holds share A's rows (each block's own loads, which L2 can merge) instead of B's columns (multicast to the pair)", hgemm__launch_v8_seam_rows, supports_tma_abc, 0, 0},
    {HGEMM_KERNEL_V8, "v8-gpc", HGEMM_ACC_F32, "v8-seam with the GPC-aware deal: the device's map of where each pair lands, measured once, sorted by GPC, so that the pairs one GPC holds play the workers that share a row of A (loaded alone, which L2's coalescer can merge)", hgemm__launch_v8_gpc, supports_tma_abc, 0, 0},
    {HGEMM_KERNEL_V8, "v8-n128x2", HGEMM_ACC_F32, "V8 (128x256, 4 stages) with every k16 step as two m64n128k16 on the accumulator's halves, as v8-seam runs it, without the seam: the split's own cost", hgemm__launch_v8_n128x2, supports_tma_abc, 0, 0},
    {HGEMM_KERNEL_V8, "v8-320-serial", HGEMM_ACC_F32, "V8 with 128x320 tiles at every shape, every part of C stored before the next tile starts, as through run 92 (v8-320: the last two parts during the next tile's first k-tiles)", hgemm__launch_v8_320_serial, supports_tma_abc, 0, 0},
    {HGEMM_KERNEL_V9, "v9-nosplit", HGEMM_ACC_F32, "V9 without split-K: one block per tile walks the whole k-loop", hgemm__launch_v9_nosplit, hgemm__supports_v9, 0, 0},
    {HGEMM_KERNEL_V9, "v9-noswap", HGEMM_ACC_F32, "V9 without the operand swap: A on WGMMA's M side, B on N", hgemm__launch_v9_noswap, hgemm__supports_v9, 0, 0},
    {HGEMM_KERNEL_V9, "v9-k128", HGEMM_ACC_F32, "V9 with two k-tiles per stage (3 stages) at every short width (V9: only at 64)", hgemm__launch_v9_k128, hgemm__supports_v9, 0, 0},
    {HGEMM_KERNEL_V9, "v9-deep", HGEMM_ACC_F32, "V9 with the deep ring (one block per SM, 6 stages of two k-tiles) at every shape (V9: where its tiles are at most one per SM)", hgemm__launch_v9_deep, hgemm__supports_v9, 0, 0},
    {HGEMM_KERNEL_V9, "v9-shallow", HGEMM_ACC_F32, "V9 without the deep ring: 3..5 small blocks per SM at every shape, as before run 29", hgemm__launch_v9_shallow, hgemm__supports_v9, 0, 0},
    {HGEMM_KERNEL_V9, "v9-norot", HGEMM_ACC_F32, "V9 with every tile's k-loop starting at its slice's first step (V9 staggers the starts where it does not split, run 67)", hgemm__launch_v9_norot, hgemm__supports_v9, 0, 0},
    {HGEMM_KERNEL_V9, "v9-scalar", HGEMM_ACC_F32, "V9 storing a swapped tile element by element (V9 stages it in shared memory for 16-byte stores, run 68)", hgemm__launch_v9_scalar, hgemm__supports_v9, 0, 0},
    {HGEMM_KERNEL_V9, "v9-nopdl", HGEMM_ACC_F32, "V9 without programmatic dependent launch: a call starts only when the previous kernel in the stream has finished, as through run 79", hgemm__launch_v9_nopdl, hgemm__supports_v9, 1, 0},
    {HGEMM_KERNEL_V9, "v9-pdl-start", HGEMM_ACC_F32, "V9 with programmatic dependent launch, each block letting the next kernel be scheduled right after its own wait (V9: once its loader has issued its last load)", hgemm__launch_v9_pdl_start, hgemm__supports_v9, 1, 0},
};

enum { EXPERIMENT_COUNT = (int)(sizeof(experiment_table) / sizeof(experiment_table[0])) };

int hgemm__experiment_count(void) { return EXPERIMENT_COUNT; }

const hgemm_kernel_info *hgemm__experiment_at(int i) {
    return (i >= 0 && i < EXPERIMENT_COUNT) ? &experiment_table[i] : NULL;
}

const hgemm_kernel_info *hgemm__experiment_by_name(const char *name) {
    if (name == NULL) return NULL;
    for (int i = 0; i < EXPERIMENT_COUNT; i++)
        if (strcmp(experiment_table[i].name, name) == 0) return &experiment_table[i];
    return NULL;
}
