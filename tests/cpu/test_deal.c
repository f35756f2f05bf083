/*
 * test_deal.c: the GPC-aware deal (src/deal.h) on a map shaped like the one
 * tools/sm_map.cu measured on an H100 (bench/results/...-run131-sm-map.csv):
 * 132 SMs; pairs 0..3 on SMs 124..131, pairs 4..63 on SMs 0..119 in order,
 * pairs 64 and 65 on SMs 120..123; GPC groups of SMs: (smid / 2) mod 8 below
 * SM 64, 1 + ((smid - 64) / 2) mod 7 from 64 to 119 (seven groups of 16 SMs,
 * one of 8), SMs 120..131 in no cluster of 4 or more.
 *
 * Checked: every deal is a bijection; the groups come out of clusters of 16,
 * 8 and 4 as measured, and not from clusters of 8 alone where a GPC holds 16;
 * with the deal, the workers V8's raster walk gives one row of A at 4096^3 (64
 * pairs, raster groups of 8) sit in one group; bad input leaves the identity;
 * a probe with an SM twice (not all resident at once) is no map.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "test_check.h"
#include "deal.h"
#include "raster.h"

enum {
    SMS = 132,
    PAIRS = 66,
    LOOSE_FIRST = 120, /* SMs 120..131: in no cluster of 4 or more */
    GROUPS = 8,
    RASTER = 8,        /* V8's raster group, cluster tiles */
    TILES_4096 = 16,   /* 4096 / 256: cluster tiles a side at 4096^3 */
    BUSY_4096 = 64,    /* pairs V8 launches at 4096^3 (4 rounds) */
};

/* The GPC group of SM s, or -1 for the loose ones. */
static int gpc_of(uint32_t s) {
    if (s >= LOOSE_FIRST) return -1;
    if (s < 64) return (int)((s / 2) % 8);
    return 1 + (int)(((s - 64) / 2) % 7);
}

/* SM of each block of a launch of PAIRS pairs, as measured. */
static void pair_map(uint16_t *sm) {
    for (uint32_t c = 0; c < PAIRS; c++) {
        uint32_t first;
        if (c < 4) first = 124 + 2 * c;
        else if (c < 64) first = 2 * (c - 4);
        else first = 120 + 2 * (c - 64);
        sm[2 * c] = (uint16_t)first;
        sm[2 * c + 1] = (uint16_t)(first + 1);
    }
}

/* A launch of clusters of `size`: each group's SMs cut into whole clusters,
 * group by group (a GPC holds a cluster whole; the rest of a group sits
 * idle). Returns the blocks. */
static uint32_t cluster_map(uint32_t size, uint16_t *sm) {
    uint32_t blocks = 0;
    for (int g = 0; g < GROUPS; g++) {
        uint16_t in[SMS];
        uint32_t n = 0;
        for (uint32_t s = 0; s < SMS; s++)
            if (gpc_of(s) == g) in[n++] = (uint16_t)s;
        for (uint32_t i = 0; i + size <= n; i += size)
            for (uint32_t b = 0; b < size; b++) sm[blocks++] = in[i + b];
    }
    return blocks;
}

/* The map as v8_deal.cu builds it, from clusters of the sizes in `sizes`. */
static int build(const uint32_t *sizes, int nsizes, uint16_t *root, uint8_t *order) {
    uint16_t pairs[2 * PAIRS], sm[SMS];
    pair_map(pairs);
    hgemm_deal_groups_init(root, SMS);
    int ok = hgemm_deal_join(root, SMS, pairs, 2 * PAIRS, 2);
    for (int i = 0; i < nsizes; i++) {
        const uint32_t blocks = cluster_map(sizes[i], sm);
        ok = ok && hgemm_deal_join(root, SMS, sm, blocks, sizes[i]);
    }
    return ok && hgemm_deal_order(root, SMS, pairs, PAIRS, order);
}

static void test_union(void) {
    uint16_t root[8];
    hgemm_deal_groups_init(root, 8);
    const uint16_t a[4] = {5, 2, 7, 6};
    CHECK(hgemm_deal_join(root, 8, a, 4, 2));
    CHECK_U64(hgemm_deal_find(root, 5), 2);
    CHECK_U64(hgemm_deal_find(root, 7), 6);
    const uint16_t b[2] = {6, 5};
    CHECK(hgemm_deal_join(root, 8, b, 2, 2));
    CHECK_U64(hgemm_deal_find(root, 7), 2);
    CHECK_U64(hgemm_deal_find(root, 0), 0);
    /* an SM past the count joins nothing */
    const uint16_t bad[2] = {0, 8};
    CHECK(!hgemm_deal_join(root, 8, bad, 2, 2));
    CHECK_U64(hgemm_deal_find(root, 0), 0);
    CHECK(!hgemm_deal_join(root, 8, a, 4, 0));
}

/* The measured map: groups from clusters of 16, 8 and 4. */
static void test_h100_map(void) {
    const uint32_t sizes[3] = {16, 8, 4};
    uint16_t root[SMS];
    uint8_t order[HGEMM_DEAL_MAX];
    CHECK(build(sizes, 3, root, order));
    CHECK(hgemm_deal_is_permutation(order, PAIRS));
    /* the SMs of one GPC share a root, the loose SMs keep their own pair's */
    for (uint32_t s = 0; s < SMS; s++)
        for (uint32_t t = s + 1; t < SMS; t++) {
            const int same = hgemm_deal_find(root, s) == hgemm_deal_find(root, t);
            const int want = gpc_of(s) >= 0 ? gpc_of(s) == gpc_of(t) : s / 2 == t / 2;
            if (same != want) {
                CHECK_MSG(0, "SMs %u and %u: joined %d, want %d", s, t, same, want);
                return;
            }
        }
    /* seven groups of 8 pairs first, in the order of their first pair
     * (groups 1..7: pairs 5..11), then group 0 (4 pairs), then the loose */
    uint16_t pairs[2 * PAIRS];
    pair_map(pairs);
    for (uint32_t i = 0; i < 56; i++)
        CHECK_MSG(gpc_of(pairs[2 * order[i]]) == (int)(1 + i / 8), "place %u: pair %u in group %d", i, order[i],
                  gpc_of(pairs[2 * order[i]]));
    for (uint32_t i = 56; i < 60; i++) CHECK(gpc_of(pairs[2 * order[i]]) == 0);
    for (uint32_t i = 60; i < PAIRS; i++) CHECK(gpc_of(pairs[2 * order[i]]) == -1);
    /* within a group, cluster order */
    for (uint32_t i = 1; i < 56; i++)
        if (i % 8) CHECK(order[i] > order[i - 1]);

    /* every launch size: a bijection; the full map's deal at 66 */
    for (uint32_t n = 1; n <= PAIRS; n++) {
        uint8_t w[HGEMM_DEAL_MAX];
        CHECK(hgemm_deal_workers(order, PAIRS, n, w));
        CHECK_MSG(hgemm_deal_is_permutation(w, n), "%u pairs", n);
    }

    /* 4096^3: 64 pairs, 4 rounds of 64 tiles in raster groups of 8 cluster
     * tiles. Worker w's tile of round r is r * 64 + w (stream_k.h's whole
     * tiles); each GPC of 8 pairs then holds one row of A tiles, every round */
    uint8_t w[HGEMM_DEAL_MAX];
    CHECK(hgemm_deal_workers(order, PAIRS, BUSY_4096, w));
    for (uint32_t r = 0; r < 4; r++)
        for (uint32_t c = 0; c < BUSY_4096; c++) {
            const int g = gpc_of(pairs[2 * c]);
            if (g < 1) continue; /* group 0 and the loose pairs hold fewer than 8 */
            const hgemm_tile t = hgemm_raster(r * BUSY_4096 + w[c], TILES_4096, TILES_4096, RASTER);
            /* the first pair of the same group */
            for (uint32_t d = 0; d < c; d++)
                if (gpc_of(pairs[2 * d]) == g) {
                    const hgemm_tile u = hgemm_raster(r * BUSY_4096 + w[d], TILES_4096, TILES_4096, RASTER);
                    CHECK_MSG(t.m == u.m, "round %u: pairs %u and %u (group %d) on A rows %u and %u", r, c, d, g,
                              t.m, u.m);
                    break;
                }
        }
    /* without the deal, the same pairs sit on 8 different rows of A */
    uint32_t rows_of_group1 = 0;
    uint32_t seen_rows = 0;
    for (uint32_t c = 0; c < BUSY_4096; c++)
        if (gpc_of(pairs[2 * c]) == 1) {
            const hgemm_tile t = hgemm_raster(c, TILES_4096, TILES_4096, RASTER);
            if (!(seen_rows & (1u << t.m))) rows_of_group1++;
            seen_rows |= 1u << t.m;
        }
    CHECK_U64(rows_of_group1, 8);
}

/* Clusters of 8 alone split each GPC of 16 SMs in two groups that nothing
 * joins: the deal still keeps each group's pairs together. */
static void test_halves(void) {
    const uint32_t sizes[2] = {8, 4};
    uint16_t root[SMS];
    uint8_t order[HGEMM_DEAL_MAX];
    CHECK(build(sizes, 2, root, order));
    CHECK(hgemm_deal_is_permutation(order, PAIRS));
    CHECK(hgemm_deal_find(root, 2) != hgemm_deal_find(root, 64)); /* one GPC (group 1), two halves */
    uint16_t pairs[2 * PAIRS];
    pair_map(pairs);
    /* 15 groups of 4 pairs, then the loose: every run of 4 in one GPC */
    for (uint32_t i = 0; i < 60; i += 4)
        for (uint32_t j = 1; j < 4; j++)
            CHECK(hgemm_deal_find(root, pairs[2 * order[i + j]]) == hgemm_deal_find(root, pairs[2 * order[i]]));
}

static void test_bad_input(void) {
    uint8_t order[HGEMM_DEAL_MAX], w[HGEMM_DEAL_MAX];
    /* the permutation check itself: a repeat, a worker out of range, too many */
    const uint8_t twice[3] = {0, 2, 0}, past[3] = {0, 1, 3}, good[3] = {2, 0, 1};
    CHECK(!hgemm_deal_is_permutation(twice, 3));
    CHECK(!hgemm_deal_is_permutation(past, 3));
    CHECK(hgemm_deal_is_permutation(good, 3));
    CHECK(!hgemm_deal_is_permutation(w, HGEMM_DEAL_MAX + 1));
    for (uint32_t i = 0; i < HGEMM_DEAL_MAX; i++) order[i] = (uint8_t)(HGEMM_DEAL_MAX - 1 - i);
    /* more clusters than the map: the identity, reported */
    memset(w, 0xff, sizeof w);
    CHECK(!hgemm_deal_workers(order, 10, 11, w));
    for (uint32_t c = 0; c < 11; c++) CHECK_U64(w[c], c);
    /* fewer: the order's clusters below the count, numbered */
    const uint8_t small[4] = {3, 1, 0, 2};
    CHECK(hgemm_deal_workers(small, 4, 3, w));
    CHECK_U64(w[1], 0);
    CHECK_U64(w[0], 1);
    CHECK_U64(w[2], 2);
    /* an order of more clusters than a deal holds is refused */
    uint16_t root[SMS], sm[2 * (HGEMM_DEAL_MAX + 1)];
    hgemm_deal_groups_init(root, SMS);
    for (uint32_t b = 0; b < 2 * (HGEMM_DEAL_MAX + 1); b++) sm[b] = (uint16_t)(b % SMS);
    CHECK(!hgemm_deal_order(root, SMS, sm, HGEMM_DEAL_MAX + 1, order));
    sm[0] = SMS;
    CHECK(!hgemm_deal_order(root, SMS, sm, 4, order));
}

/* A probe whose blocks did not all run at once (an SM twice) is not a map. */
static void test_distinct(void) {
    uint16_t sm[2 * PAIRS];
    pair_map(sm);
    CHECK(hgemm_deal_distinct(sm, 2 * PAIRS));
    CHECK(hgemm_deal_distinct(sm, 0));
    sm[2 * PAIRS - 1] = sm[0]; /* the last pair's second block on the first's SM */
    CHECK(!hgemm_deal_distinct(sm, 2 * PAIRS));
    CHECK(hgemm_deal_distinct(sm, 2 * PAIRS - 1));
    sm[0] = HGEMM_DEAL_MAX_SMS; /* an id past any map */
    CHECK(!hgemm_deal_distinct(sm, 1));
    CHECK(!hgemm_deal_distinct(sm, HGEMM_DEAL_MAX_SMS + 1));
}

int main(void) {
    test_union();
    test_h100_map();
    test_halves();
    test_bad_input();
    test_distinct();
    return check_finish();
}
