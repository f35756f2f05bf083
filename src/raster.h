/*
 * raster.h: which output tile a block computes.
 *
 * A 1-D grid walks the (tiles_m x tiles_n) tile grid in raster groups that
 * are `group` tile-columns wide: inside a group the tile-column changes
 * fastest, then the tile-row. The blocks resident at one time then cover a
 * band `group` columns wide and (resident / group) rows tall, so a wave reads
 * only `group` B tiles per k-step and A once per group, instead of all of B
 * for every few rows of A. The last group may be narrower.
 * Shared by host (tests) and device (kernels).
 */
#ifndef HGEMM_RASTER_H
#define HGEMM_RASTER_H

#include <stdint.h>

#ifdef __CUDACC__
#define HGEMM_HD __host__ __device__
#else
#define HGEMM_HD
#endif

typedef struct hgemm_tile { uint32_t m, n; } hgemm_tile;

/* Tile of block `id` in [0, tiles_m * tiles_n); group >= 1. */
static inline HGEMM_HD hgemm_tile hgemm_raster(uint32_t id, uint32_t tiles_m,
                                               uint32_t tiles_n, uint32_t group) {
    uint32_t per_group = group * tiles_m;        /* blocks in one full group */
    uint32_t g = id / per_group;
    uint32_t first_n = g * group;                /* first tile-column of this group */
    uint32_t cols = tiles_n - first_n;           /* tile-columns in this group */
    if (cols > group) cols = group;
    uint32_t in_group = id - g * per_group;
    hgemm_tile t;
    t.n = first_n + in_group % cols;
    t.m = in_group / cols;
    return t;
}

static inline HGEMM_HD uint32_t hgemm_ceil_div(uint64_t a, uint32_t b) {
    return (uint32_t)((a + b - 1) / b);
}

#endif /* HGEMM_RASTER_H */
