/*
 * test_stream_k.c: the stream-K plan and walk (src/stream_k.h). Over many
 * (tiles, k_tiles, workers): every (tile, k-tile) is run by exactly one
 * worker; whole tiles go round robin; each worker's stream-K iterations are
 * one contiguous range of near-equal length (to one iteration); a worker runs
 * at most one piece that does not start at k-tile 0 and it is its first
 * stream-K unit; the owner of a shared tile (the piece at k-tile 0) is that
 * worker's last unit, and hgemm_sk_contributors_end names exactly the
 * workers that ran the tile's other pieces. Also the plan's choices: no split
 * without a workspace, none when whole rounds are busy enough, none below
 * HGEMM_SK_MIN_ITERS iterations per worker.
 *
 * Split-K (HGEMM_SK_AUTO, a few tiles with a long k): every worker below
 * sk_workers = tiles * slices runs exactly one unit, slice w / tiles of tile
 * w % tiles, every tile is cut the same way, each slice has at least
 * HGEMM_SK_MIN_ITERS k-tiles, and every (tile, k-tile) is run once; the
 * slices are as many as the workers and the k-loop allow; slice 0's worker
 * adds the others (HGEMM_SK_REDUCE_OWNER) exactly where there are at most
 * HGEMM_SK_OWNER_SLICES of them in AUTO, every worker a share in the same
 * launch (HGEMM_SK_REDUCE_SHARED) where there are more, and a second
 * kernel (HGEMM_SK_REDUCE_KERNEL) only in HGEMM_SK_SPLIT_KERNEL; nothing
 * is split or shared with a k-loop shorter than HGEMM_SK_MIN_KTILES.
 * HGEMM_SK_STREAM never splits that way, and its stream-K plans pass the
 * checks above.
 *
 * The tail split (hgemm_sk_tail): see check_tail; and its choices at the
 * shapes it was made for.
 *
 * Balance (hgemm_sk_balance): a whole-tiles plan goes to the fewest workers
 * that take as many rounds, each tile run once by a worker below that
 * count; a plan that splits, shares or cuts its tail is left as it was.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream_k.h"
#include "test_check.h"

enum {
    MAX_TILES = 300,
    MAX_K = 40,
    TAIL_MAX_K = 160,      /* the tail split's k-loops: slices of HGEMM_SK_TAIL_MIN_ITERS and more */
    MAX_WORKERS = 70,
    NO_WORKER = 0xffff,
    H200_CLUSTERS = 66,    /* V8: 132 SMs in 2-block clusters */
    TILES_8192 = 1024,     /* 8192^3 in V8's 256x256 cluster tiles */
    K_TILES_8192 = 128,
};

static uint16_t owner_of[MAX_TILES * TAIL_MAX_K]; /* which worker ran (tile, kt) */

/* A split-K plan: returns 0 at the first broken property (reported). */
static int check_split(const hgemm_sk *s, uint32_t tiles, uint32_t k_tiles, uint32_t workers) {
    const uint32_t total = tiles * k_tiles;
    for (uint32_t i = 0; i < total; i++) owner_of[i] = NO_WORKER;
    uint32_t expect = workers / tiles;
    if (expect > k_tiles / HGEMM_SK_MIN_ITERS) expect = k_tiles / HGEMM_SK_MIN_ITERS;
    if (!CHECK_MSG(s->slices == expect && s->slices >= 2 && s->dp_tiles == 0 &&
                       s->sk_workers == tiles * s->slices && s->sk_workers <= workers,
                   "tiles %u k %u workers %u: slices %u (expected %u), dp %u, sk %u", tiles, k_tiles,
                   workers, s->slices, expect, s->dp_tiles, s->sk_workers))
        return 0;
    for (uint32_t w = 0; w < workers; w++) {
        hgemm_sk_walk wk = hgemm_sk_start(s, w);
        hgemm_sk_unit u;
        int units = 0;
        while (hgemm_sk_next(s, &wk, &u)) {
            units++;
            const uint32_t slice = w / tiles;
            if (!CHECK_MSG(hgemm_sk_worker_slice(s, w) == slice, "worker %u: slice %u, expected %u", w,
                           hgemm_sk_worker_slice(s, w), slice))
                return 0;
            if (!CHECK_MSG(u.tile == w % tiles && u.k_begin == hgemm_sk_slice_begin(s, slice) &&
                               u.k_end == hgemm_sk_slice_begin(s, slice + 1) &&
                               u.k_end - u.k_begin >= HGEMM_SK_MIN_ITERS &&
                               hgemm_sk_slice_worker(s, u.tile, slice) == w,
                           "tiles %u k %u workers %u: worker %u unit (%u, %u..%u)", tiles, k_tiles,
                           workers, w, u.tile, u.k_begin, u.k_end))
                return 0;
            for (uint32_t kt = u.k_begin; kt < u.k_end; kt++) {
                uint16_t *o = &owner_of[u.tile * k_tiles + kt];
                if (!CHECK_MSG(*o == NO_WORKER, "split: (%u, %u) run twice", u.tile, kt)) return 0;
                *o = (uint16_t)w;
            }
        }
        if (!CHECK_MSG(units == (w < s->sk_workers ? 1 : 0), "split: worker %u ran %d units", w, units))
            return 0;
    }
    for (uint32_t i = 0; i < total; i++)
        if (!CHECK_MSG(owner_of[i] != NO_WORKER, "split: (%u, %u) never run", i / k_tiles, i % k_tiles))
            return 0;
    return 1;
}

/* Everything about one plan; returns 0 at the first broken property (reported). */
static int check_plan(uint32_t tiles, uint32_t k_tiles, uint32_t workers, int mode) {
    const hgemm_sk s = hgemm_sk_plan(tiles, k_tiles, workers, mode);
    const int may_split = mode == HGEMM_SK_AUTO || mode == HGEMM_SK_SPLIT_KERNEL;
    if (s.slices) {
        if (!CHECK_MSG(may_split, "tiles %u k %u workers %u: split-K in mode %d", tiles, k_tiles, workers,
                       mode))
            return 0;
        /* The owner adds the slices in the kernel only for a few of them, and never in
         * HGEMM_SK_SPLIT_KERNEL (the second kernel's ablation). */
        const uint32_t reduce = mode == HGEMM_SK_SPLIT_KERNEL              ? HGEMM_SK_REDUCE_KERNEL
                                : s.slices <= HGEMM_SK_OWNER_SLICES ? HGEMM_SK_REDUCE_OWNER
                                                                    : HGEMM_SK_REDUCE_SHARED;
        if (!CHECK_MSG(s.reduce == reduce, "tiles %u k %u workers %u mode %d: reduce %u with %u slices",
                       tiles, k_tiles, workers, mode, s.reduce, s.slices))
            return 0;
        if (!CHECK_MSG(k_tiles >= HGEMM_SK_MIN_KTILES,
                       "tiles %u k %u workers %u: a split of a short k-loop", tiles, k_tiles, workers))
            return 0;
        return check_split(&s, tiles, k_tiles, workers);
    }
    if (!CHECK_MSG(s.sk_workers == 0 || k_tiles >= HGEMM_SK_MIN_KTILES,
                   "tiles %u k %u workers %u: stream-K on a short k-loop", tiles, k_tiles, workers))
        return 0;
    if (!CHECK_MSG(s.reduce == HGEMM_SK_REDUCE_KERNEL, "tiles %u k %u workers %u: reduce %u without split-K",
                   tiles, k_tiles, workers, s.reduce))
        return 0;
    /* HGEMM_SK_AUTO falls back to stream-K only where split-K cannot apply. */
    if (may_split && s.sk_workers &&
        !CHECK_MSG(hgemm_sk_slices(tiles, k_tiles, workers) < 2,
                   "tiles %u k %u workers %u: stream-K where split-K applies", tiles, k_tiles, workers))
        return 0;
    const uint32_t total = tiles * k_tiles;
    for (uint32_t i = 0; i < total; i++) owner_of[i] = NO_WORKER;
    if (!CHECK_MSG(s.dp_tiles <= tiles && s.sk_workers <= workers &&
                       (s.dp_tiles % workers == 0 || s.dp_tiles == tiles),
                   "tiles %u k %u workers %u: dp %u sk %u", tiles, k_tiles, workers, s.dp_tiles,
                   s.sk_workers))
        return 0;
    /* Splitting never leaves workers idle that whole tiles would have used. */
    const uint32_t sk_tiles = tiles - s.dp_tiles;
    if (!CHECK_MSG(s.sk_workers == 0 || s.sk_workers >= (sk_tiles < workers ? sk_tiles : workers),
                   "tiles %u k %u workers %u: %u stream-K workers for %u tiles", tiles, k_tiles,
                   workers, s.sk_workers, sk_tiles))
        return 0;
    uint64_t min_sk = UINT64_MAX, max_sk = 0;
    for (uint32_t w = 0; w < workers; w++) {
        hgemm_sk_walk wk = hgemm_sk_start(&s, w);
        hgemm_sk_unit u, prev = {0, 0, 0};
        uint64_t sk_iters = 0;
        int sk_units = 0, last_was_owner_piece = 0;
        uint32_t expect_dp = w;
        while (hgemm_sk_next(&s, &wk, &u)) {
            if (!CHECK_MSG(u.tile < tiles && u.k_begin < u.k_end && u.k_end <= k_tiles,
                           "tiles %u k %u workers %u: worker %u unit (%u, %u..%u)", tiles, k_tiles,
                           workers, w, u.tile, u.k_begin, u.k_end))
                return 0;
            if (u.tile < s.dp_tiles) {
                if (!CHECK_MSG(u.tile == expect_dp && u.k_begin == 0 && u.k_end == k_tiles && sk_units == 0,
                               "worker %u: whole tile %u, expected %u", w, u.tile, expect_dp))
                    return 0;
                expect_dp += workers;
            } else {
                if (!CHECK_MSG(u.k_begin == 0 || sk_units == 0,
                               "tiles %u k %u workers %u: worker %u piece (%u, %u..%u) not first",
                               tiles, k_tiles, workers, w, u.tile, u.k_begin, u.k_end))
                    return 0;
                if (!CHECK_MSG(!last_was_owner_piece,
                               "tiles %u k %u workers %u: worker %u runs on after owning a shared tile",
                               tiles, k_tiles, workers, w))
                    return 0;
                if (sk_units > 0 && !CHECK_MSG(u.tile == prev.tile + 1 && u.k_begin == 0 &&
                                                   prev.k_end == k_tiles,
                                               "worker %u: range not contiguous", w))
                    return 0;
                if (u.k_begin == 0 && u.k_end < k_tiles) last_was_owner_piece = 1;
                sk_units++;
                sk_iters += u.k_end - u.k_begin;
                prev = u;
            }
            for (uint32_t kt = u.k_begin; kt < u.k_end; kt++) {
                uint16_t *o = &owner_of[u.tile * k_tiles + kt];
                if (!CHECK_MSG(*o == NO_WORKER, "tiles %u k %u workers %u: (%u, %u) run by %u and %u",
                               tiles, k_tiles, workers, u.tile, kt, *o, w))
                    return 0;
                *o = (uint16_t)w;
            }
        }
        if (!CHECK_MSG(expect_dp >= s.dp_tiles, "worker %u: whole tiles missing", w)) return 0;
        if (w < s.sk_workers) {
            if (sk_iters < min_sk) min_sk = sk_iters;
            if (sk_iters > max_sk) max_sk = sk_iters;
            if (!CHECK_MSG(sk_iters >= HGEMM_SK_MIN_ITERS || sk_iters >= k_tiles,
                           "worker %u: only %llu iterations", w, (unsigned long long)sk_iters))
                return 0;
        } else if (!CHECK_MSG(sk_iters == 0, "worker %u past sk_workers ran stream-K work", w)) {
            return 0;
        }
    }
    for (uint32_t i = 0; i < total; i++)
        if (!CHECK_MSG(owner_of[i] != NO_WORKER, "tiles %u k %u workers %u: (%u, %u) never run", tiles,
                       k_tiles, workers, i / k_tiles, i % k_tiles))
            return 0;
    if (s.sk_workers && !CHECK_MSG(max_sk - min_sk <= 1, "stream-K ranges %llu..%llu",
                                   (unsigned long long)min_sk, (unsigned long long)max_sk))
        return 0;
    /* Contributors: for every shared tile, the owner (the worker of k-tile 0)
     * names the workers of every other k-tile of it, in order, and no more. */
    for (uint32_t t = s.dp_tiles; t < tiles; t++) {
        const uint32_t w = owner_of[t * k_tiles];
        uint32_t kend = 0;
        while (kend < k_tiles && owner_of[t * k_tiles + kend] == w) kend++;
        if (kend == k_tiles) continue; /* whole */
        hgemm_sk_unit u = {t, 0, kend};
        const uint32_t end = hgemm_sk_contributors_end(&s, w, &u);
        if (!CHECK_MSG(end - 1 == owner_of[t * k_tiles + k_tiles - 1],
                       "tiles %u k %u workers %u: tile %u contributors end %u, last k-tile by %u",
                       tiles, k_tiles, workers, t, end, owner_of[t * k_tiles + k_tiles - 1]))
            return 0;
        for (uint32_t kt = kend; kt < k_tiles; kt++) {
            const uint32_t v = owner_of[t * k_tiles + kt];
            if (!CHECK_MSG(v > w && v < end, "tile %u k-tile %u by %u, outside %u..%u", t, kt, v,
                           w + 1, end - 1))
                return 0;
        }
    }
    return 1;
}

static void test_properties(void) {
    int all = 1;
    for (uint32_t workers = 1; workers <= MAX_WORKERS && all; workers += (workers < 10 ? 1 : 7))
        for (uint32_t tiles = 1; tiles <= MAX_TILES && all; tiles += (tiles < 20 ? 1 : 13))
            for (uint32_t k = 1; k <= MAX_K && all; k += (k < 10 ? 1 : 9))
                for (int mode = HGEMM_SK_AUTO; mode <= HGEMM_SK_SPLIT_KERNEL && all; mode++)
                    all = check_plan(tiles, k, workers, mode);
    CHECK(all);
}

static void test_choices(void) {
    /* No workspace: everything whole. */
    hgemm_sk s = hgemm_sk_plan(TILES_8192, K_TILES_8192, H200_CLUSTERS, 0);
    CHECK_U64(s.dp_tiles, TILES_8192);
    CHECK_U64(s.sk_workers, 0);
    /* 8192^3 on 66 clusters: 15.5 rounds, 97% busy: whole tiles. */
    s = hgemm_sk_plan(TILES_8192, K_TILES_8192, H200_CLUSTERS, 1);
    CHECK_U64(s.dp_tiles, TILES_8192);
    CHECK_U64(s.sk_workers, 0);
    /* One tile more than clusters: two rounds 51% busy; all 67 tiles shared by all 66. */
    s = hgemm_sk_plan(H200_CLUSTERS + 1, K_TILES_8192, H200_CLUSTERS, 1);
    CHECK_U64(s.dp_tiles, 0);
    CHECK_U64(s.sk_workers, H200_CLUSTERS);
    /* 2 rounds + a little (140 tiles: 71% busy): whole tiles. */
    s = hgemm_sk_plan(2 * H200_CLUSTERS + 8, K_TILES_8192, H200_CLUSTERS, 1);
    CHECK_U64(s.sk_workers, 0);
    /* 3 rounds + 2 tiles (200 tiles, 4 rounds: 76% busy): whole tiles; 2
     * rounds + 2 (134 tiles, 3 rounds: 68%) too; 1 round + 2 (68, 2 rounds:
     * 52%): the last 68 shared, no whole round first. */
    s = hgemm_sk_plan(3 * H200_CLUSTERS + 2, K_TILES_8192, H200_CLUSTERS, 1);
    CHECK_U64(s.sk_workers, 0);
    s = hgemm_sk_plan(H200_CLUSTERS + 2, K_TILES_8192, H200_CLUSTERS, 1);
    CHECK_U64(s.dp_tiles, 0);
    CHECK_U64(s.sk_workers, H200_CLUSTERS);
    /* Whole rounds: nothing to share. */
    s = hgemm_sk_plan(16 * H200_CLUSTERS, K_TILES_8192, H200_CLUSTERS, 1);
    CHECK_U64(s.sk_workers, 0);
    /* One tile with a long k (256 x 256 x 65536): split-K over every worker,
     * 66 slices of 15 or 16 k-tiles; stream-K (the ablation) shares it too. */
    s = hgemm_sk_plan(1, 1024, H200_CLUSTERS, HGEMM_SK_AUTO);
    CHECK_U64(s.dp_tiles, 0);
    CHECK_U64(s.slices, H200_CLUSTERS);
    CHECK_U64(s.sk_workers, H200_CLUSTERS);
    CHECK_U64(s.reduce, HGEMM_SK_REDUCE_SHARED); /* 66 slices: every worker reduces a share */
    s = hgemm_sk_plan(1, 1024, H200_CLUSTERS, HGEMM_SK_STREAM);
    CHECK_U64(s.slices, 0);
    CHECK_U64(s.sk_workers, H200_CLUSTERS);
    /* 1024 x 1024 x 32768 (16 wide cluster tiles, 512 k-tiles): 4 slices
     * each, 64 of the 66 clusters busy. */
    s = hgemm_sk_plan(16, 512, H200_CLUSTERS, HGEMM_SK_AUTO);
    CHECK_U64(s.slices, 4);
    CHECK_U64(s.sk_workers, 64);
    CHECK_U64(s.reduce, HGEMM_SK_REDUCE_OWNER); /* 4 slices: slice 0's worker adds the other 3 */
    s = hgemm_sk_plan(16, 512, H200_CLUSTERS, HGEMM_SK_SPLIT_KERNEL);
    CHECK_U64(s.slices, 4);
    CHECK_U64(s.reduce, HGEMM_SK_REDUCE_KERNEL);
    /* 512 x 4096 x 14336 (32 wide cluster tiles, 224 k-tiles): 2 slices, the owner adds. */
    s = hgemm_sk_plan(32, 224, H200_CLUSTERS, HGEMM_SK_AUTO);
    CHECK_U64(s.slices, 2);
    CHECK_U64(s.reduce, HGEMM_SK_REDUCE_OWNER);
    /* 4 tiles (512 x 512 x 131072): 16 slices, each worker reduces a share. */
    s = hgemm_sk_plan(4, 2048, H200_CLUSTERS, HGEMM_SK_AUTO);
    CHECK_U64(s.slices, 16);
    CHECK_U64(s.reduce, HGEMM_SK_REDUCE_SHARED);
    /* 34 tiles: one worker each at most (66 / 34 = 1), so stream-K. */
    s = hgemm_sk_plan(34, 512, H200_CLUSTERS, HGEMM_SK_AUTO);
    CHECK_U64(s.slices, 0);
    CHECK_U64(s.sk_workers, H200_CLUSTERS);
    /* One tile, 4 k-tiles: too little to split. */
    s = hgemm_sk_plan(1, 4, H200_CLUSTERS, 1);
    CHECK_U64(s.sk_workers, 0);
    /* 16 tiles of 16 k-tiles (1024^3): too short to pay for a split of any
     * kind (runs 50 and 54), whole tiles. */
    for (int mode = HGEMM_SK_AUTO; mode <= HGEMM_SK_SPLIT_KERNEL; mode++) {
        s = hgemm_sk_plan(16, 16, H200_CLUSTERS, mode);
        CHECK_U64(s.slices, 0);
        CHECK_U64(s.sk_workers, 0);
    }
    /* 36 tiles of 9 k-tiles (777 x 1032 x 520, narrow): no stream-K either. */
    s = hgemm_sk_plan(36, 9, H200_CLUSTERS, 1);
    CHECK_U64(s.sk_workers, 0);
    /* 16 tiles of HGEMM_SK_MIN_KTILES k-tiles: split, 4 slices of 8, the owner adds. */
    s = hgemm_sk_plan(16, HGEMM_SK_MIN_KTILES, H200_CLUSTERS, 1);
    CHECK_U64(s.slices, 4);
    CHECK_U64(s.sk_workers, 64);
    CHECK_U64(s.reduce, HGEMM_SK_REDUCE_OWNER);
    /* 16 tiles of one k-tile: nothing to share, whole tiles. */
    s = hgemm_sk_plan(16, 1, H200_CLUSTERS, 1);
    CHECK_U64(s.sk_workers, 0);
    /* 289 tiles of one k-tile (4352^2, k = 64): 88% busy, whole tiles. */
    s = hgemm_sk_plan(289, 1, H200_CLUSTERS, 1);
    CHECK_U64(s.sk_workers, 0);
}

/* The tail split on one whole-tiles plan; returns 0 at the first broken
 * property (reported): where it applies, the whole rounds go round robin as
 * before, the last round's tiles are cut in aligned slices of at least
 * HGEMM_SK_TAIL_MIN_ITERS k-tiles that take at most 3/4 of a round and
 * need at most max_units slots, every (tile, k-tile) runs once, and each
 * worker runs its whole tiles, then units of slices past the first, then
 * at most one owner's unit (slice 0), last: so no owner waits for a unit
 * that comes after an owner's. Slots name each non-owner unit once. */
static int check_tail(uint32_t tiles, uint32_t k_tiles, uint32_t workers, uint32_t max_units) {
    hgemm_sk s = hgemm_sk_plan(tiles, k_tiles, workers, HGEMM_SK_TAIL);
    if (!CHECK_MSG(s.dp_tiles == tiles && s.sk_workers == 0 && s.slices == 0 && s.tail_slices == 0,
                   "tiles %u k %u workers %u: HGEMM_SK_TAIL's plan is not whole tiles", tiles, k_tiles, workers))
        return 0;
    hgemm_sk_tail(&s, max_units);
    if (s.tail_slices == 0)
        return CHECK_MSG(s.dp_tiles == tiles, "tiles %u k %u workers %u: dp %u without a tail", tiles, k_tiles,
                         workers, s.dp_tiles);
    const uint32_t n = s.tail_slices, tail = tiles - s.dp_tiles;
    if (!CHECK_MSG(n >= 2 && n <= HGEMM_SK_TAIL_MAX_SLICES && s.dp_tiles == tiles / workers * workers &&
                       tail == tiles % workers && tail > 0 && s.dp_tiles > 0 &&
                       k_tiles / n >= HGEMM_SK_TAIL_MIN_ITERS && tail * (n - 1) <= max_units &&
                       (tail * n + workers - 1) / workers * 4 <= 3 * n,
                   "tiles %u k %u workers %u units %u: tail of %u tiles in %u slices, dp %u", tiles, k_tiles,
                   workers, max_units, tail, n, s.dp_tiles))
        return 0;
    const uint32_t total = tiles * k_tiles;
    for (uint32_t i = 0; i < total; i++) owner_of[i] = NO_WORKER;
    static uint8_t slot_used[MAX_TILES * HGEMM_SK_TAIL_MAX_SLICES];
    memset(slot_used, 0, sizeof slot_used);
    for (uint32_t w = 0; w < workers; w++) {
        hgemm_sk_walk wk = hgemm_sk_start(&s, w);
        hgemm_sk_unit u;
        uint32_t expect_dp = w;
        int stage = 0; /* 0: whole tiles, 1: slices past the first, 2: an owner's unit (the last) */
        while (hgemm_sk_next(&s, &wk, &u)) {
            if (!CHECK_MSG(stage < 2, "tiles %u k %u workers %u: worker %u runs on after an owner's unit", tiles,
                           k_tiles, workers, w))
                return 0;
            if (u.tile < s.dp_tiles) {
                if (!CHECK_MSG(stage == 0 && u.tile == expect_dp && u.k_begin == 0 && u.k_end == k_tiles,
                               "worker %u: whole tile %u, expected %u", w, u.tile, expect_dp))
                    return 0;
                expect_dp += workers;
            } else {
                const uint32_t slice = hgemm_sk_tail_slice(&s, u.k_begin);
                if (!CHECK_MSG(u.tile < tiles && u.k_begin == hgemm_sk_cut(k_tiles, slice, n) &&
                                   u.k_end == hgemm_sk_cut(k_tiles, slice + 1, n),
                               "tiles %u k %u workers %u: worker %u unit (%u, %u..%u)", tiles, k_tiles, workers,
                               w, u.tile, u.k_begin, u.k_end))
                    return 0;
                if (slice > 0) {
                    const uint32_t slot = hgemm_sk_tail_slot(&s, u.tile, slice);
                    if (!CHECK_MSG(slot < tail * (n - 1) && !slot_used[slot], "tile %u slice %u: slot %u", u.tile,
                                   slice, slot))
                        return 0;
                    slot_used[slot] = 1;
                    if (!CHECK_MSG(stage <= 1, "worker %u: a slice past the first after its owner's unit", w))
                        return 0;
                    stage = 1;
                } else {
                    stage = 2;
                }
            }
            for (uint32_t kt = u.k_begin; kt < u.k_end; kt++) {
                uint16_t *o = &owner_of[u.tile * k_tiles + kt];
                if (!CHECK_MSG(*o == NO_WORKER, "tail: (%u, %u) run twice", u.tile, kt)) return 0;
                *o = (uint16_t)w;
            }
        }
        if (!CHECK_MSG(expect_dp >= s.dp_tiles, "tail: worker %u's whole tiles missing", w)) return 0;
    }
    for (uint32_t i = 0; i < total; i++)
        if (!CHECK_MSG(owner_of[i] != NO_WORKER, "tail: (%u, %u) never run", i / k_tiles, i % k_tiles)) return 0;
    return 1;
}

static void test_tail(void) {
    int all = 1;
    for (uint32_t workers = 2; workers <= MAX_WORKERS && all; workers += (workers < 10 ? 1 : 7))
        for (uint32_t tiles = 1; tiles <= MAX_TILES && all; tiles += (tiles < 20 ? 1 : 13))
            for (uint32_t k = 16; k <= TAIL_MAX_K && all; k += 16)
                for (uint32_t units = 0; units <= 3 * MAX_WORKERS && all; units += 40)
                    all = check_tail(tiles, k, workers, units);
    CHECK(all);
    /* The shapes it was made for, on 66 clusters (HGEMM_SK_TAIL: the 320
     * tile's mode; AUTO: the other widths'). */
    static const struct {
        uint32_t tiles, k_tiles;
        int mode;
        uint32_t max_units, dp_tiles, tail_slices;
    } cases[] = {
        /* 8192^3 in 256x320 cluster tiles: 12 whole rounds, the last 40 tiles in
         * thirds (two rounds of a third) */
        {832, 128, HGEMM_SK_TAIL, 1000, 792, 3},
        /* the same with room for 79 units only: halves would take a whole round */
        {832, 128, HGEMM_SK_TAIL, 79, 832, 0},
        /* 8192 x 6144 x 4096 in 256x256: 11 rounds, the last 42 tiles in thirds */
        {768, 64, HGEMM_SK_AUTO, 1000, 726, 3},
        /* 4096^3 in 256x256: 58 tiles left, a whole round in 2, 3 or 4 slices */
        {256, 64, HGEMM_SK_AUTO, 1000, 256, 0},
        /* 4096^3 in 256x320: 10 tiles past 3 rounds, one round of a quarter */
        {208, 64, HGEMM_SK_TAIL, 1000, 198, 4},
        /* too few k-tiles for two slices of HGEMM_SK_TAIL_MIN_ITERS */
        {832, 31, HGEMM_SK_TAIL, 1000, 832, 0},
        /* split-K's plan (16 long tiles in 4 slices) is left alone */
        {16, 512, HGEMM_SK_AUTO, 1000, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        hgemm_sk s = hgemm_sk_plan(cases[i].tiles, cases[i].k_tiles, H200_CLUSTERS, cases[i].mode);
        const uint32_t slices = s.slices;
        hgemm_sk_tail(&s, cases[i].max_units);
        CHECK_MSG(s.dp_tiles == cases[i].dp_tiles && s.tail_slices == cases[i].tail_slices &&
                      s.slices == slices,
                  "%u tiles of %u k-tiles, %u units: dp %u, tail in %u (expected %u, %u)", cases[i].tiles,
                  cases[i].k_tiles, cases[i].max_units, s.dp_tiles, s.tail_slices, cases[i].dp_tiles,
                  cases[i].tail_slices);
    }
}

/* hgemm_sk_balance on one plan; returns 0 at the first broken property. */
static int check_balance(uint32_t tiles, uint32_t k_tiles, uint32_t workers, int mode) {
    hgemm_sk s = hgemm_sk_plan(tiles, k_tiles, workers, mode);
    if (mode == HGEMM_SK_AUTO) hgemm_sk_tail(&s, 1000);
    const hgemm_sk before = s;
    hgemm_sk_balance(&s);
    const int whole = before.dp_tiles == tiles && !before.sk_workers && !before.slices && !before.tail_slices;
    if (!whole || tiles <= workers)
        return CHECK_MSG(memcmp(&s, &before, sizeof s) == 0, "tiles %u k %u workers %u mode %d: plan changed", tiles,
                         k_tiles, workers, mode);
    const uint32_t rounds = (tiles + workers - 1) / workers, w = s.workers;
    if (!CHECK_MSG(w >= 1 && w <= workers && (tiles + w - 1) / w == rounds && (w == 1 || (tiles + w - 2) / (w - 1) > rounds) &&
                       s.dp_tiles == tiles && s.tiles == tiles && s.k_tiles == k_tiles,
                   "tiles %u workers %u: balanced onto %u (rounds %u)", tiles, workers, w, rounds))
        return 0;
    static uint8_t seen[MAX_TILES];
    memset(seen, 0, sizeof seen);
    for (uint32_t v = 0; v < w; v++) {
        hgemm_sk_walk wk = hgemm_sk_start(&s, v);
        hgemm_sk_unit u;
        uint32_t n = 0;
        while (hgemm_sk_next(&s, &wk, &u)) {
            if (!CHECK_MSG(u.tile < tiles && !seen[u.tile] && u.k_begin == 0 && u.k_end == k_tiles,
                           "balanced: worker %u unit (%u, %u..%u)", v, u.tile, u.k_begin, u.k_end))
                return 0;
            seen[u.tile] = 1;
            n++;
        }
        if (!CHECK_MSG(n <= rounds, "balanced: worker %u runs %u tiles, rounds %u", v, n, rounds)) return 0;
    }
    for (uint32_t t = 0; t < tiles; t++)
        if (!CHECK_MSG(seen[t], "balanced: tile %u never run", t)) return 0;
    return 1;
}

static void test_balance(void) {
    int all = 1;
    for (uint32_t workers = 1; workers <= MAX_WORKERS && all; workers += (workers < 10 ? 1 : 7))
        for (uint32_t tiles = 1; tiles <= MAX_TILES && all; tiles += (tiles < 20 ? 1 : 13))
            for (int mode = HGEMM_SK_NONE; mode <= HGEMM_SK_AUTO && all; mode++)
                for (uint32_t k = 1; k <= 129 && all; k += 64) all = check_balance(tiles, k, workers, mode);
    CHECK(all);
    /* The shapes it was made for, 256x256 cluster tiles on 66 clusters. */
    static const struct {
        uint32_t tiles, k_tiles;
        int mode;
        uint32_t max_units, workers;
    } cases[] = {
        /* (V8's 32 MiB workspace holds 127 wide units) */
        {256, 64, HGEMM_SK_AUTO, 127, 64},   /* 4096^3: 4 rounds, the tail too big to cut */
        {576, 96, HGEMM_SK_AUTO, 127, 64},   /* 6144^3: 9 rounds (quarters would need 144 units) */
        {576, 96, HGEMM_SK_AUTO, 1000, 66},  /* ... which, where they fit, cut the tail instead */
        {512, 224, HGEMM_SK_AUTO, 127, 64},  /* 8192 x 4096 x 14336: 8 rounds */
        {768, 64, HGEMM_SK_AUTO, 127, 66},   /* 8192 x 6144 x 4096: the tail split, left alone */
        {1024, 128, HGEMM_SK_NONE, 127, 64}, /* 8192^3 without a workspace: 16 rounds */
        {1024, 128, HGEMM_SK_AUTO, 127, 66}, /* 8192^3 with one: the tail split */
        {660, 64, HGEMM_SK_AUTO, 127, 66},   /* every round full */
        {40, 64, HGEMM_SK_NONE, 127, 66},    /* one partial round: launch_v8 runs one cluster per tile */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        hgemm_sk s = hgemm_sk_plan(cases[i].tiles, cases[i].k_tiles, H200_CLUSTERS, cases[i].mode);
        if (cases[i].mode == HGEMM_SK_AUTO) hgemm_sk_tail(&s, cases[i].max_units);
        hgemm_sk_balance(&s);
        CHECK_MSG(s.workers == cases[i].workers, "%u tiles of %u k-tiles: %u workers (expected %u)", cases[i].tiles,
                  cases[i].k_tiles, s.workers, cases[i].workers);
    }
}

/* hgemm_sk_muldiv against the 64-bit quotient: every w <= d for divisors
 * up to HGEMM_SK_MAX_WORKERS, x from 0 to UINT32_MAX (the iteration counts
 * the plan allows), and the plan deals no more workers than that. */
static void test_muldiv(void) {
    static const uint32_t xs[] = {0, 1, 31, 4096, 1000003, 123456789, 2147483647u, 2147483648u, 4294967295u};
    static const uint32_t ds[] = {1, 2, 3, 7, 66, 132, 255, 1024, 4099, 65521, HGEMM_SK_MAX_WORKERS};
    int bad = 0;
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++)
        for (size_t j = 0; j < sizeof ds / sizeof ds[0]; j++) {
            const uint32_t d = ds[j], step = d > 600 ? d / 300 : 1;
            for (uint32_t w = 0; w <= d; w += (w + step > d && w < d) ? d - w : step) {
                const uint64_t want = (uint64_t)xs[i] * w / d;
                if (hgemm_sk_muldiv(xs[i], w, d) != want && bad++ < 5)
                    CHECK_MSG(0, "muldiv(%u, %u, %u) = %u, expected %llu", xs[i], w, d,
                              hgemm_sk_muldiv(xs[i], w, d), (unsigned long long)want);
                if (w == d) break;
            }
        }
    CHECK_U64(bad, 0);
    hgemm_sk s = hgemm_sk_plan(HGEMM_SK_MAX_WORKERS + 2, 64, HGEMM_SK_MAX_WORKERS + 1, HGEMM_SK_AUTO);
    CHECK_U64(s.sk_workers, 0);
    CHECK_U64(s.slices, 0);
    CHECK_U64(s.dp_tiles, HGEMM_SK_MAX_WORKERS + 2);
    hgemm_sk_tail(&s, 1u << 30);
    CHECK_U64(s.tail_slices, 0);
    /* one worker fewer splits: the cap is what stopped it */
    s = hgemm_sk_plan(HGEMM_SK_MAX_WORKERS + 1, 64, HGEMM_SK_MAX_WORKERS, HGEMM_SK_AUTO);
    CHECK_MSG(s.sk_workers != 0, "tiles %u on %u workers: no split", HGEMM_SK_MAX_WORKERS + 1,
              HGEMM_SK_MAX_WORKERS);
}

int main(void) {
    test_muldiv();
    test_choices();
    test_properties();
    test_tail();
    test_balance();
    return check_finish();
}
