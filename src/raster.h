/*
 * raster.h: which output tile a block computes.
 *
 * A 1-D grid walks the (tiles_m x tiles_n) tile grid in raster groups: a
 * group is `group` tile-rows tall; inside it the tile-row changes fastest, so
 * consecutive blocks reuse the same B tile (one column of tiles) and the same
 * `group` A tiles, which then stay in L2. The last group may be shorter.
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
    uint32_t per_group = group * tiles_n;        /* blocks in one full group */
    uint32_t first_m = (id / per_group) * group; /* first tile-row of this group */
    uint32_t rows = tiles_m - first_m;           /* tile-rows in this group */
    if (rows > group) rows = group;
    uint32_t in_group = id - (id / per_group) * per_group;
    hgemm_tile t;
    t.m = first_m + in_group % rows;
    t.n = in_group / rows;
    return t;
}

static inline HGEMM_HD uint32_t hgemm_ceil_div(uint64_t a, uint32_t b) {
    return (uint32_t)((a + b - 1) / b);
}

#endif /* HGEMM_RASTER_H */
