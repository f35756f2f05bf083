/*
 * deal.h: the GPC-aware deal (V8_EXP_GPC, the v8-gpc row): which worker each
 * cluster of a persistent launch of pairs plays, so that the clusters one
 * GPC holds play neighbouring workers.
 *
 * V8 gives worker w the units w, w + workers, ... (stream_k.h), and its
 * raster groups (raster.h) give `group` neighbouring workers one row of A
 * tiles at a time. The hardware deals a launch's clusters to the GPCs in
 * turn (run 131: neighbouring cluster indexes on different GPCs), so the
 * clusters that load one row of A together sit in different GPCs, and L2's
 * request coalescer, which merges the loads blocks make alone but never a
 * multicast (runs 132, 133), merged 6% of A's sectors where cuBLAS's order
 * got a third to a half. The deal measures once per device where each
 * cluster index lands (src/kernels/v8_deal.cu) and sorts the clusters by
 * their group of SMs; cluster c then plays the worker at its place in that
 * order. A permutation deals every unit once, so a launch whose clusters
 * land elsewhere (beside another kernel) loses only the merging.
 *
 * The groups: the SMs of a cluster share a GPC, so the SMs that launches of
 * clusters of 16, 8 and 4 blocks put together, joined, are GPCs or parts of
 * them (tools/sm_map.cu measured the same on an H100: seven groups of 16
 * SMs, one of 8, 12 SMs in none).
 *
 * Host only, plain C (the library's launcher includes it from C++);
 * tests/cpu/test_deal.c checks it.
 */
#ifndef HGEMM_DEAL_H
#define HGEMM_DEAL_H

#include <stdint.h>

enum {
    HGEMM_DEAL_MAX = 128,      /* clusters a deal covers (a kernel parameter of this many bytes) */
    HGEMM_DEAL_MAX_SMS = 1024, /* SM ids a map may hold */
};

/* Every SM its own group. */
static inline void hgemm_deal_groups_init(uint16_t *root, uint32_t sms) {
    for (uint32_t s = 0; s < sms; s++) root[s] = (uint16_t)s;
}

/* The group of SM s: its root, the paths halved on the way. */
static inline uint32_t hgemm_deal_find(uint16_t *root, uint32_t s) {
    while (root[s] != s) {
        root[s] = root[root[s]];
        s = root[s];
    }
    return s;
}

/* One launch's blocks, in clusters of `size`: block b ran on SM
 * sm_of_block[b]. The SMs of each whole cluster join one group (the lower
 * root stays the root). Returns 0, joining nothing, if an SM id is not below
 * `sms` or `size` is 0. */
static inline int hgemm_deal_join(uint16_t *root, uint32_t sms, const uint16_t *sm_of_block, uint32_t blocks,
                                  uint32_t size) {
    if (size == 0) return 0;
    for (uint32_t b = 0; b < blocks; b++)
        if (sm_of_block[b] >= sms) return 0;
    for (uint32_t c = 0; c + size <= blocks; c += size)
        for (uint32_t b = c + 1; b < c + size; b++) {
            const uint32_t x = hgemm_deal_find(root, sm_of_block[c]), y = hgemm_deal_find(root, sm_of_block[b]);
            if (x < y) root[y] = (uint16_t)x;
            else if (y < x) root[x] = (uint16_t)y;
        }
    return 1;
}

/* The deal's order for a launch of `clusters` pairs whose cluster c ran its
 * first block on SM sm_of_block[2c]: the clusters sorted by group, the
 * groups with the most of these clusters first (ties: the group whose first
 * cluster comes first), in cluster order within a group. order[i] is the
 * cluster at place i. Groups of equal size come whole, one after another,
 * so with groups of 8 pairs and raster groups 8 tiles wide one GPC's
 * clusters play the 8 workers that share a row of A. Returns 0 if clusters
 * is above HGEMM_DEAL_MAX or an SM id is not below `sms`. */
static inline int hgemm_deal_order(uint16_t *root, uint32_t sms, const uint16_t *sm_of_block, uint32_t clusters,
                                   uint8_t *order) {
    uint32_t group[HGEMM_DEAL_MAX], count[HGEMM_DEAL_MAX], first[HGEMM_DEAL_MAX];
    if (clusters > HGEMM_DEAL_MAX) return 0;
    for (uint32_t c = 0; c < clusters; c++) {
        if (sm_of_block[2 * c] >= sms) return 0;
        group[c] = hgemm_deal_find(root, sm_of_block[2 * c]);
    }
    /* per cluster: how many clusters its group holds, and the group's first */
    for (uint32_t c = 0; c < clusters; c++) {
        count[c] = 0;
        first[c] = c;
        for (uint32_t d = 0; d < clusters; d++)
            if (group[d] == group[c]) {
                count[c]++;
                if (d < first[c]) first[c] = d;
            }
    }
    /* place of c: the clusters ahead of it (more in their group, or as many
     * and an earlier first, or the same group and an earlier index) */
    for (uint32_t c = 0; c < clusters; c++) {
        uint32_t place = 0;
        for (uint32_t d = 0; d < clusters; d++) {
            const int ahead = count[d] > count[c] || (count[d] == count[c] && first[d] < first[c]) ||
                              (first[d] == first[c] && d < c);
            place += ahead ? 1u : 0u;
        }
        order[place] = (uint8_t)c;
    }
    return 1;
}

/* The workers of a launch of `clusters` pairs from the order of a map of
 * `mapped` (the first `clusters` cluster indexes of a launch land where a
 * full launch's do: run 131, 64 and 66 pairs): the order without the
 * clusters at or past `clusters`, numbered. worker[c] is the worker cluster
 * c plays; a bijection of [0, clusters). Returns 0, with worker[c] = c, if
 * clusters is above `mapped`. */
static inline int hgemm_deal_workers(const uint8_t *order, uint32_t mapped, uint32_t clusters, uint8_t *worker) {
    if (clusters > mapped || clusters > HGEMM_DEAL_MAX) {
        for (uint32_t c = 0; c < clusters && c < HGEMM_DEAL_MAX; c++) worker[c] = (uint8_t)c;
        return 0;
    }
    uint32_t next = 0;
    for (uint32_t i = 0; i < mapped; i++)
        if (order[i] < clusters) worker[order[i]] = (uint8_t)next++;
    return 1;
}

/* Whether a launch of `blocks` blocks ran every block on its own SM: the
 * probe's grid was resident all at once, as V8's persistent grid is. On a
 * GPU busy with other work some blocks wait for SMs others have left, and
 * the map would show where this launch happened to go, not where an idle
 * GPU puts a lone launch; the deal then measures again on a later call
 * (src/kernels/v8_deal.cu). */
static inline int hgemm_deal_distinct(const uint16_t *sm_of_block, uint32_t blocks) {
    unsigned char seen[HGEMM_DEAL_MAX_SMS];
    if (blocks > HGEMM_DEAL_MAX_SMS) return 0;
    for (uint32_t s = 0; s < HGEMM_DEAL_MAX_SMS; s++) seen[s] = 0;
    for (uint32_t b = 0; b < blocks; b++) {
        if (sm_of_block[b] >= HGEMM_DEAL_MAX_SMS || seen[sm_of_block[b]]) return 0;
        seen[sm_of_block[b]] = 1;
    }
    return 1;
}

/* Whether worker[0 .. n) is a permutation of [0, n) (n at most
 * HGEMM_DEAL_MAX): what every deal must be, or a launch would run some
 * units twice and others never. */
static inline int hgemm_deal_is_permutation(const uint8_t *worker, uint32_t n) {
    unsigned char seen[HGEMM_DEAL_MAX];
    if (n > HGEMM_DEAL_MAX) return 0;
    for (uint32_t c = 0; c < n; c++) seen[c] = 0;
    for (uint32_t c = 0; c < n; c++) {
        if (worker[c] >= n || seen[worker[c]]) return 0;
        seen[worker[c]] = 1;
    }
    return 1;
}

#endif /* HGEMM_DEAL_H */
