/*
 * v8/plan.h: V8's planner, plain C (src/v8/plan.c; CPU-tested by
 * tests/cpu/test_v8_plan.c): the numbers the host and the kernel share, the
 * workspace's layout, the tile width by cost (v8_choose_bn), the build a
 * problem runs (v8_choose_build) and its work plan (v8_schedule_for). The
 * kernel (src/v8/kernel.cuh) and its launcher (src/v8/launch.cuh) read the
 * same enum; the measurements behind each rule are in docs/notes/v8-design.txt.
 */
#ifndef HGEMM_V8_PLAN_H
#define HGEMM_V8_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"
#include "stream_k.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    V8_BM = 128, V8_BN = 256,
    V8_K_TILE = 64,                                          /* BK (gemm_args.cuh): k per k-tile */
    V8_CONSUMERS = 2,                                        /* warpgroups 0 and 1 */
    V8_WG_M = V8_BM / V8_CONSUMERS,                          /* 64 rows per consumer */
    V8_RASTER = 8,                                           /* raster groups, in cluster tiles */
    V8_CLUSTER = 2,                                          /* blocks per cluster in the table's V8 */
    V8_SLOT_FLOATS = V8_WG_M * V8_BN,                        /* one consumer's partial sum, fp32 (room
                                                                for the widest tile) */
    V8_FLAG_BYTES = 4096,                                    /* the workspace's flags: 1024, one per slot of
                                                                up to 512 blocks; the partials start after
                                                                them, at the same offset whatever the grid */
    V8_SWAP_MIN_M = 65, V8_SWAP_MAX_M = 384,                 /* v8_swap: m's rows, */
    V8_SWAP_ONE_TILE_M = 192,                                /* one tile up to here, two past 256 */
    V8_SWAP_MIN_N = 2048, V8_SWAP_MAX_N = 16384,             /* the weight's width (one tile), */
    V8_SWAP_TWO_TILES_MAX_N = 8192,                          /* (two tiles) */
    V8_COUNT_FLAGS = 512,                                    /* flags before the in-kernel reduction's
                                                                counters (two per tile part) */
};

/* The workspace of one V8 launch (hgemm_nt_options.workspace), the one
 * owner of its offsets. Bytes [0, flag_bytes) are uint32 flags: flag s
 * (s < slots) is slot s's, raised when its partial sum is in; from flag
 * count_first on, two counters per tile part for split-K's in-kernel
 * reduction (count_first + 2 * slot, v8_kernel). The fp32 partial sums
 * start at partials_offset, slot s at s * slot_floats (split-K and
 * stream-K: V8_SLOT_FLOATS, 64 x 256; the tail split: 64 x bn, v8_kernel's
 * v8_tail). The layout is the same for every grid: calls with different SM
 * targets may share a workspace, and one call's partials must never land on
 * another's flags (a flag left nonzero lets an owner add a partial sum
 * before it is written). */
typedef struct v8_workspace_layout {
    size_t flag_bytes;        /* V8_FLAG_BYTES */
    uint32_t flags;           /* flag_bytes / 4 */
    uint32_t count_first;     /* V8_COUNT_FLAGS: the first counter */
    size_t partials_offset;   /* flag_bytes */
    size_t split_slot_floats; /* V8_SLOT_FLOATS */
} v8_workspace_layout;
v8_workspace_layout v8_workspace(void);
/* The tail split's slot: one consumer's 64 x bn partial sum. */
static inline size_t v8_tail_slot_floats(int bn) { return (size_t)V8_WG_M * (size_t)bn; }
/* Whether the workspace holds a split over `grid` blocks: one flag and one
 * split-K partial sum per consumer of every block. */
int v8_workspace_fits(const hgemm_problem *p, uint32_t grid);
/* The tail split's units that leave a partial sum (64 x bn fp32 and a flag
 * per consumer of each block of a cluster of `cluster`), at most: as many as
 * the workspace's flags and bytes hold. The workspace must hold the flags. */
uint32_t v8_tail_max_units(const hgemm_problem *p, int bn, uint32_t cluster);
/* Whether split-K's in-kernel reduction has room: the grid's flags before
 * the counters, and two counters per tile part after them (else the second
 * kernel reduces). */
int v8_counters_fit(uint32_t grid, uint32_t tiles, uint32_t cluster);

/* How a launch lets the stream's next kernel start (HGEMM_PDL_*): the
 * variant's mode, else EXIT (docs/notes/v8-design.txt, run 80). */
int v8_pdl_mode(const hgemm_v8_variant *v);
/* The raster groups' width in cluster tiles: the variant's, else V8_RASTER. */
uint32_t v8_raster(const hgemm_v8_variant *v);


/* Whether a plan runs the seam's build: every unit holds two k-tiles or
 * more, and whole tiles end plain (no stream-K or split-K, beta 0). */
int v8_seam_pays(const hgemm_sk *sk, float beta);

/* The work plan for `tiles` cluster tiles `bn` wide on `grid` blocks in
 * clusters of `cluster` under `*split` (HGEMM_SK_*), which it may lower to
 * HGEMM_SK_NONE; then the tail split, then hgemm_sk_balance (but in the
 * variant's all_workers). */
hgemm_sk v8_plan(const hgemm_problem *p, const hgemm_v8_variant *v, uint32_t tiles, uint32_t grid,
                 uint32_t cluster, int bn, int *split);

/* What a launch runs on `grid` blocks: the plan, the split mode it left,
 * whether a seam build keeps its seam, the clusters launched. */
typedef struct v8_schedule {
    hgemm_sk sk;
    int split;     /* the mode v8_plan left */
    int seam;      /* a seam build runs with its seam (else the same build without) */
    uint32_t busy; /* clusters launched */
} v8_schedule;
v8_schedule v8_schedule_for(const hgemm_problem *p, const hgemm_v8_variant *v, uint32_t tiles, uint32_t grid,
                            uint32_t cluster, int bn, int split, int seam_build);

/* Blocks for `blocks` SMs' worth in clusters of `cluster`: whole clusters,
 * rounded down, at least one. */
uint32_t v8_whole_clusters(uint32_t blocks, uint32_t cluster);

/* The tile width for a problem on `workers` clusters: 256, 320, 192, 128 or
 * 64, by the rounds each takes times its cost per element. */
int v8_choose_bn(const hgemm_problem *p, const hgemm_v8_variant *v, uint32_t workers);

/* The table's V8 for a problem on `sms` SMs: the tile width, whether its
 * blocks go in pairs, the ring (deep), the seam, the deal, the split mode. */
typedef struct v8_build {
    int bn, cluster, deep;
    int seam;  /* the seam's build; the launch may still run it without */
    int deal;  /* the GPC-aware deal's build */
    int split; /* HGEMM_SK_* for the launch */
    int epi;   /* the fused epilogue's build (hgemm_problem.epi): 128 or 256 wide (fp32 C: 256), no split */
} v8_build;
v8_build v8_choose_build(const hgemm_problem *p, const hgemm_v8_variant *v, uint32_t sms);
/* The ring's stages of each build v8_choose_build names (v8_tile's, checked
 * in src/v8/config.cuh). */
int v8_stages(int bn, int deep);
/* Whether the table's V8 runs `p` swapped (V8_EXP_TRANS): 65..192 rows
 * against a weight 2048..16384 wide, or 257..384 rows against one 2048..8192
 * wide; NT, beta 0, no epilogue, one entry, a workspace, n % 8 == 0. Then *q
 * is the swapped product (C^T = B A^T: the weight on WGMMA's M side) and *b
 * its build: a tile that holds m's rows (128 or 192 wide; two of 192 past
 * 256). */
int v8_swap(const hgemm_problem *p, hgemm_problem *q, v8_build *b);
/* Whether the swapped kernel serves a schedule: no split, or one whose
 * slice 0 adds the others' (the other reductions store C unswapped). */
int v8_swap_schedule_ok(const hgemm_sk *sk);

/* The SMs a launch plans for: the device's, or hgemm_nt_ex's target. */
hgemm_status v8_sms(const hgemm_problem *p, uint32_t *sms);

#ifdef __cplusplus
}
#endif

#endif /* HGEMM_V8_PLAN_H */
