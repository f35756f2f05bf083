/*
 * test_raster.c: hgemm_raster (src/raster.h) maps the block ids
 * [0, tiles_m * tiles_n) one-to-one onto the tile grid, in raster groups
 * `group` tile-columns wide walked row by row; hgemm_ceil_div rounds up.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "test_check.h"
#include "raster.h"

enum {
    SMALL_MAX = 12,       /* every tiles_m, tiles_n in [1, SMALL_MAX] ... */
    GROUP_MAX = 14,       /* ... with every group in [1, GROUP_MAX] */
    KERNEL_GROUP = 8,     /* the raster group the kernels use */
    LARGE_TILES = 64,     /* an 8192^2 C in 128x128 tiles */
    MESSAGE_CAP = 160,
};

/* What hgemm_raster must give, written the long way: groups `group`
 * tile-columns wide (the last one narrower), row-major inside a group. */
static hgemm_tile model(uint32_t id, uint32_t tiles_m, uint32_t tiles_n, uint32_t group) {
    uint32_t first_n = 0;
    for (;;) {
        uint32_t cols = tiles_n - first_n < group ? tiles_n - first_n : group;
        if (id < cols * tiles_m) {
            hgemm_tile t = {id / cols, first_n + id % cols};
            return t;
        }
        id -= cols * tiles_m;
        first_n += cols;
    }
}

/* One grid: bijection, agreement with the model, and the walk inside full
 * groups. Each property is one check that names the first bad id. */
static void check_grid(uint32_t tiles_m, uint32_t tiles_n, uint32_t group) {
    const uint32_t total = tiles_m * tiles_n;
    unsigned char *seen = calloc(total, 1);
    if (!CHECK(seen != NULL)) return;
    char bijection[MESSAGE_CAP] = "", order[MESSAGE_CAP] = "", walk[MESSAGE_CAP] = "";
    for (uint32_t id = 0; id < total; id++) {
        hgemm_tile t = hgemm_raster(id, tiles_m, tiles_n, group);
        int in_grid = t.m < tiles_m && t.n < tiles_n;
        if (!bijection[0] && (!in_grid || seen[t.m * tiles_n + t.n]))
            snprintf(bijection, sizeof bijection, "id %u -> tile (%u, %u) %s", id, t.m, t.n,
                     in_grid ? "already taken" : "out of range");
        if (in_grid) seen[t.m * tiles_n + t.n] = 1;

        hgemm_tile want = model(id, tiles_m, tiles_n, group);
        if (!order[0] && (t.m != want.m || t.n != want.n))
            snprintf(order, sizeof order, "id %u -> (%u, %u), want (%u, %u)", id, t.m, t.n,
                     want.m, want.n);

        /* Inside a full group, `group` consecutive ids share tile m and walk n. */
        uint32_t first_n = id / (group * tiles_m) * group;
        if (!walk[0] && first_n + group <= tiles_n && id % group != 0) {
            hgemm_tile prev = hgemm_raster(id - 1, tiles_m, tiles_n, group);
            if (t.m != prev.m || t.n != prev.n + 1)
                snprintf(walk, sizeof walk, "id %u -> (%u, %u) after (%u, %u)", id, t.m, t.n,
                         prev.m, prev.n);
        }
    }
    uint32_t covered = 0;
    for (uint32_t i = 0; i < total; i++) covered += seen[i];
    free(seen);
    if (!bijection[0] && covered != total)
        snprintf(bijection, sizeof bijection, "%u of %u tiles covered", covered, total);
    check_record(!bijection[0], __FILE__, __LINE__, "bijection", "grid %ux%u group %u: %s",
                 tiles_m, tiles_n, group, bijection);
    check_record(!order[0], __FILE__, __LINE__, "raster order", "grid %ux%u group %u: %s",
                 tiles_m, tiles_n, group, order);
    check_record(!walk[0], __FILE__, __LINE__, "walk in a full group", "grid %ux%u group %u: %s",
                 tiles_m, tiles_n, group, walk);
}

static void test_grids(void) {
    for (uint32_t tm = 1; tm <= SMALL_MAX; tm++)
        for (uint32_t tn = 1; tn <= SMALL_MAX; tn++)
            for (uint32_t g = 1; g <= GROUP_MAX; g++) check_grid(tm, tn, g);
    const uint32_t large[][3] = {
        {LARGE_TILES, LARGE_TILES, KERNEL_GROUP},     /* groups all full */
        {LARGE_TILES, LARGE_TILES + 1, KERNEL_GROUP}, /* a one-column last group */
        {33, 17, KERNEL_GROUP},                       /* ragged both ways */
        {1, 100, KERNEL_GROUP},                       /* one tile-row */
        {100, 1, KERNEL_GROUP},                       /* one tile-column */
        {LARGE_TILES, LARGE_TILES, 1},
        {LARGE_TILES, LARGE_TILES, LARGE_TILES},      /* one group */
        {9, 7, 1000},                                 /* group far above tiles_n */
        /* the 320 tile's cluster-tile grid at 8192^3 in every width v8-320-r* walks */
        {32, 26, 1}, {32, 26, 2}, {32, 26, 4}, {32, 26, 8}, {32, 26, 16}, {32, 26, 32},
    };
    for (size_t i = 0; i < sizeof large / sizeof large[0]; i++)
        check_grid(large[i][0], large[i][1], large[i][2]);
}

/* The two ends of the family, stated without the model. */
static void test_special_groups(void) {
    const uint32_t tm = 5, tn = 7, above = tn + 3;
    char row_major[MESSAGE_CAP] = "", column_major[MESSAGE_CAP] = "";
    for (uint32_t id = 0; id < tm * tn; id++) {
        hgemm_tile t = hgemm_raster(id, tm, tn, above); /* group > tiles_n: row by row */
        if (!row_major[0] && (t.m != id / tn || t.n != id % tn))
            snprintf(row_major, sizeof row_major, "id %u -> (%u, %u)", id, t.m, t.n);
        t = hgemm_raster(id, tm, tn, 1); /* group 1: column by column */
        if (!column_major[0] && (t.m != id % tm || t.n != id / tm))
            snprintf(column_major, sizeof column_major, "id %u -> (%u, %u)", id, t.m, t.n);
    }
    check_record(!row_major[0], __FILE__, __LINE__, "group > tiles_n is row-major", "%s", row_major);
    check_record(!column_major[0], __FILE__, __LINE__, "group 1 is column-major", "%s",
                 column_major);
    for (uint32_t g = 1; g <= GROUP_MAX; g++) {
        hgemm_tile t = hgemm_raster(0, 1, 1, g);
        check_record(t.m == 0 && t.n == 0, __FILE__, __LINE__, "1x1 grid",
                     "group %u: id 0 -> (%u, %u)", g, t.m, t.n);
    }
}

static void test_ceil_div(void) {
    CHECK_U64(hgemm_ceil_div(0, 1), 0);
    CHECK_U64(hgemm_ceil_div(1, 1), 1);
    CHECK_U64(hgemm_ceil_div(0, 128), 0);
    CHECK_U64(hgemm_ceil_div(1, 128), 1);
    CHECK_U64(hgemm_ceil_div(127, 128), 1);
    CHECK_U64(hgemm_ceil_div(128, 128), 1);
    CHECK_U64(hgemm_ceil_div(129, 128), 2);
    CHECK_U64(hgemm_ceil_div(8192, 256), 32);
    CHECK_U64(hgemm_ceil_div(8193, 256), 33);
    CHECK_U64(hgemm_ceil_div(1000, 7), 143);
    CHECK_U64(hgemm_ceil_div(INT32_MAX, 64), UINT32_C(1) << 25);
    CHECK_U64(hgemm_ceil_div(UINT32_MAX, 1), UINT32_MAX);
    CHECK_U64(hgemm_ceil_div(UINT32_MAX, UINT32_MAX), 1);
    /* The dividend is 64-bit: no overflow in a + b - 1. */
    CHECK_U64(hgemm_ceil_div((uint64_t)UINT32_MAX * 128, 128), UINT32_MAX);
    CHECK_U64(hgemm_ceil_div((uint64_t)UINT32_MAX * 128 - 1, 128), UINT32_MAX);
    CHECK_U64(hgemm_ceil_div(UINT64_C(1) << 40, UINT32_C(1) << 20), UINT32_C(1) << 20);
}

int main(void) {
    test_grids();
    test_special_groups();
    test_ceil_div();
    return check_finish();
}
