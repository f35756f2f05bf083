/*
 * stream_k.h: which work units a persistent worker runs (host and device;
 * unit-tested on the CPU by tests/cpu/test_stream_k.c).
 *
 * `tiles` output tiles of `k_tiles` k-tiles each go to `workers` persistent
 * workers (V8: clusters). Whole tiles dealt round robin leave the last round
 * partly idle when tiles % workers != 0 (2048 tiles on 132 SMs: the 16th
 * round is half empty, 3% of the time). Stream-K (Osama et al., "Stream-K:
 * Work-centric Parallel Decomposition for Dense Matrix-Matrix Multiplication
 * on the GPU", PPoPP 2023) deals the k-iterations of the last tiles instead:
 *
 *   - tiles [0, dp_tiles) are dealt whole, round robin (data-parallel);
 *   - the iterations of tiles [dp_tiles, tiles), numbered tile * k_tiles +
 *     kt, are cut into sk_workers contiguous ranges of equal length (to one
 *     iteration), worker w taking range w.
 *
 * A range may start and end inside a tile, so a tile can be shared by
 * several workers. The worker whose range holds the tile's k-tile 0 owns it:
 * that piece is the last of its range. Every other piece is the first of its
 * worker's range, so each worker leaves at most one partial sum (in its own
 * workspace slot), early, and the owner, late, adds the partials of workers
 * w+1, w+2, ... in that order: the same inputs give bitwise the same C. An
 * owner only waits for workers with a higher index, so no cycle of waits
 * exists (all workers are resident: the grid is sized by occupancy).
 *
 * Split-K, for a few tiles with a long k (every tile would be shared by two
 * workers or more): stream-K's ranges start at a different k in each tile,
 * so the workers that read one A or B slab of k do not read it at the same
 * time, and an owner that adds tens of partial sums alone serializes on them
 * (256 x 256 x 65536: one owner adds 65 partials). Instead each tile's k-loop
 * is cut into `slices` equal slices, the same cut for every tile, and worker
 * w runs slice w / tiles of tile w % tiles, one unit each: at any moment
 * the workers of slice s all read near the same k. Every worker leaves its
 * partial sum in its slot; then the tile's workers reduce it together, each
 * a 1/slices share of the tile's elements, adding slices 0, 1, 2, ... in that
 * order (deterministic, and no worker reads more than one partial's worth).
 * Who adds the slices (`reduce`):
 *   - HGEMM_SK_REDUCE_OWNER, at most HGEMM_SK_OWNER_SLICES slices: the worker
 *     of slice 0 owns the tile, as in stream-K: the others leave their partial
 *     sums and raise their flags, and the owner adds slices 1, 2, ... to its
 *     own, in that order, and stores the tile. All slices run at once, so the
 *     owner waits about as long as the others take to store; it then reads
 *     slices - 1 partials alone, which is why only a few;
 *   - HGEMM_SK_REDUCE_SHARED, more slices: every worker leaves its partial
 *     sum and counts itself in on the tile's counter; once all slices have,
 *     each reduces its 1/slices share of the tile as above (slices 0, 1, 2,
 *     ... in order), in the same launch;
 *   - HGEMM_SK_REDUCE_KERNEL (the v8-split2k ablation): the same shares, in
 *     a second kernel launched after the first.
 *
 * The tail split (hgemm_sk_tail), for many tiles whose last round is partly
 * empty (8192^3 in 256x320 cluster tiles: 832 tiles on 66 workers, 12
 * whole rounds and 40 tiles in a 13th, 3% of the SMs' time idle): the
 * whole rounds go round robin as always, and only the last round's `tail`
 * tiles are cut into `tail_slices` aligned slices of k, so that they spread
 * over every worker (40 tiles in thirds: 120 units, two rounds of a third
 * of a tile instead of one round of a whole one). Unlike stream-K over the
 * last rounds (run 16), every tile before the tail runs whole, in raster
 * order, and the tail's slices start at the same k. Tail unit j, dealt
 * round robin after the whole tiles (worker w: units w, w + workers, ...):
 * the units of slices 1 .. tail_slices-1 come first (j < tail *
 * (tail_slices - 1): slice 1 + j / tail, tail tile j % tail), each leaving
 * its partial sum in slot j; the slice-0 units, the tiles' owners, come
 * last, and each adds its tile's other slices in order (slices 1, 2, ...)
 * and stores the tile. An owner waits only for units numbered below its
 * own, which never wait themselves, so every wait ends (all workers are
 * resident).
 */
#ifndef HGEMM_STREAM_K_H
#define HGEMM_STREAM_K_H

#include <stdint.h>

#include "raster.h" /* HGEMM_HD */

enum {
    HGEMM_SK_MIN_ITERS = 8,        /* k-tiles per worker at least, or a split costs more than it buys */
    /* % of workers busy over whole-tile rounds at or above which nothing is
     * split. Measured (docs/notes/v8-log.md, run 16): splitting the last
     * round when it was 97% full cost 5-30% on 2048^3, 4096^3, 4096 x 4096 x
     * 14336 and 8192 x 8192 x 1024 (the scattered k-ranges lose the L2 reuse
     * of neighbouring tiles, and every shared tile pays an exchange), and
     * gained 2% at 8192^3. Below 60% (fewer tiles than about half the
     * workers, or a last round barely begun), splitting wins even so. */
    HGEMM_SK_MIN_EFFICIENCY = 60,
    /* k-tiles per tile below which nothing is split or shared: a split's
     * exchange of partial sums (or its second launch) and stream-K's
     * exchanges cost more than a short tile's k-loop saves. Measured (an
     * H200, 66 clusters): run 50, 1000^3 (32 narrow tiles of 16 k-tiles)
     * 0.0165 ms in 2 slices with a second kernel against 0.0110 whole, 777 x
     * 1032 x 520 (9 k-tiles) 0.0128 by stream-K against 0.0092, 1024^3
     * 0.0153 against 0.0103; run 54, 1000^3 in 2 slices added by the owner
     * in the same launch 0.0132 against 0.0112 whole. */
    HGEMM_SK_MIN_KTILES = 32,
    /* Split-K with at most this many slices: slice 0's worker adds the
     * others' partial sums itself; more slices: every worker reduces a share
     * (both in the one launch). */
    HGEMM_SK_OWNER_SLICES = 4,
    /* The tail split: at most this many slices (the owner adds the others'
     * partial sums alone, as with HGEMM_SK_OWNER_SLICES), each of at least
     * HGEMM_SK_TAIL_MIN_ITERS k-tiles (an exchange of partial sums costs a
     * few microseconds; 16 k-tiles of a 256-wide tile take about 10), and
     * only where the tail then takes at most 3/4 of a round. */
    HGEMM_SK_TAIL_MAX_SLICES = 4,
    HGEMM_SK_TAIL_MIN_ITERS = 16,
    /* Workers above this are dealt whole tiles: the walk's divisions
     * (hgemm_sk_muldiv) keep to 32 bits for at most this many. */
    HGEMM_SK_MAX_WORKERS = 65535,
};

/* hgemm_sk's `reduce`: who adds a split tile's slices (see above). */
enum {
    HGEMM_SK_REDUCE_KERNEL = 0, /* a second kernel */
    HGEMM_SK_REDUCE_OWNER = 1,  /* slice 0's worker, in the same launch */
    HGEMM_SK_REDUCE_SHARED = 2, /* every slice's worker a share, in the same launch */
};

/* hgemm_sk_plan's `split`: what the workspace may be used for. */
enum {
    HGEMM_SK_NONE = 0,   /* whole tiles only (no workspace) */
    HGEMM_SK_AUTO = 1,   /* split-K for a few long tiles, else stream-K */
    HGEMM_SK_STREAM = 2, /* stream-K only (the v8-streamk ablation) */
    HGEMM_SK_SPLIT_KERNEL = 3, /* as AUTO, but split-K always reduced by a second kernel (v8-split2k) */
    HGEMM_SK_TAIL = 4,   /* whole tiles, then the tail split where it applies (hgemm_sk_tail) */
};

typedef struct hgemm_sk {
    uint32_t tiles;      /* output tiles, in the kernel's raster order */
    uint32_t k_tiles;    /* k-tiles per output tile, >= 1 */
    uint32_t workers;    /* persistent workers; the data-parallel stride */
    uint32_t dp_tiles;   /* tiles dealt whole */
    uint32_t sk_workers; /* workers sharing the rest; 0: none */
    uint32_t slices;     /* >= 2: split-K, each tile's k-loop in this many slices (dp_tiles 0,
                            sk_workers = tiles * slices); 0: stream-K or whole tiles */
    uint32_t reduce;     /* split-K: who adds the slices, an HGEMM_SK_REDUCE_* (0 otherwise) */
    uint32_t tail_slices; /* >= 2: the tail split, tiles [dp_tiles, tiles) in this many slices
                             (sk_workers and slices 0); 0: none */
} hgemm_sk;

/* One piece of work: k-tiles [k_begin, k_end) of output tile `tile`. */
typedef struct hgemm_sk_unit { uint32_t tile, k_begin, k_end; } hgemm_sk_unit;

/* A worker's position in its list of units. */
typedef struct hgemm_sk_walk {
    uint32_t next_dp;  /* next whole tile */
    uint32_t it, end;  /* stream-K iterations still to run, counted from tile dp_tiles: [it, end) */
} hgemm_sk_walk;

/* The slices of split-K for `tiles` tiles: as many as the workers hold (whole
 * slices for every tile) and the k-loop feeds (HGEMM_SK_MIN_ITERS k-tiles
 * each); below 2, split-K does not apply. */
static inline HGEMM_HD uint32_t hgemm_sk_slices(uint32_t tiles, uint32_t k_tiles, uint32_t workers) {
    if (tiles == 0) return 0;
    uint32_t s = workers / tiles;
    if (s > k_tiles / HGEMM_SK_MIN_ITERS) s = k_tiles / HGEMM_SK_MIN_ITERS;
    return s >= 2 ? s : 0;
}

/* The plan. split == HGEMM_SK_NONE (no workspace for partial sums) deals
 * every tile whole, and so does HGEMM_SK_TAIL (whose tail the caller cuts
 * with hgemm_sk_tail, knowing the workspace's slots). */
static inline HGEMM_HD hgemm_sk hgemm_sk_plan(uint32_t tiles, uint32_t k_tiles, uint32_t workers,
                                              int split) {
    hgemm_sk s;
    s.tiles = tiles;
    s.k_tiles = k_tiles;
    s.workers = workers;
    s.dp_tiles = tiles;
    s.sk_workers = 0;
    s.slices = 0;
    s.reduce = HGEMM_SK_REDUCE_KERNEL;
    s.tail_slices = 0;
    if (split == HGEMM_SK_NONE || split == HGEMM_SK_TAIL || workers < 2 || workers > HGEMM_SK_MAX_WORKERS ||
        tiles == 0 || k_tiles < HGEMM_SK_MIN_KTILES)
        return s;
    const uint64_t rounds = (tiles + (uint64_t)workers - 1) / workers;
    if ((uint64_t)tiles * 100 >= rounds * workers * HGEMM_SK_MIN_EFFICIENCY) return s;
    const int may_split = split == HGEMM_SK_AUTO || split == HGEMM_SK_SPLIT_KERNEL;
    const uint32_t slices = may_split ? hgemm_sk_slices(tiles, k_tiles, workers) : 0;
    if (slices) {
        s.dp_tiles = 0;
        s.sk_workers = tiles * slices;
        s.slices = slices;
        s.reduce = split == HGEMM_SK_SPLIT_KERNEL          ? HGEMM_SK_REDUCE_KERNEL
                   : slices <= HGEMM_SK_OWNER_SLICES ? HGEMM_SK_REDUCE_OWNER
                                                     : HGEMM_SK_REDUCE_SHARED;
        return s;
    }
    const uint32_t whole = tiles / workers; /* full rounds; the last of them joins the split */
    const uint32_t dp = whole >= 1 ? (whole - 1) * workers : 0;
    const uint64_t iters = (uint64_t)(tiles - dp) * k_tiles;
    if (iters > UINT32_MAX) return s; /* the walk counts iterations in 32 bits */
    /* As many workers as the iterations keep busy, but never fewer than
     * whole tiles would use: splitting must not serialize tiles. */
    const uint32_t sk_tiles = tiles - dp;
    uint64_t w = iters / HGEMM_SK_MIN_ITERS;
    if (w < sk_tiles) w = sk_tiles;
    if (w > workers) w = workers;
    if (w <= sk_tiles && sk_tiles < workers) return s; /* one whole tile each: nothing shared */
    s.dp_tiles = dp;
    s.sk_workers = (uint32_t)w;
    return s;
}

/* floor(x * w / d) for w <= d <= HGEMM_SK_MAX_WORKERS, in 32-bit arithmetic:
 * with x = q * d + r it is q * w + floor(r * w / d), and r * w < d * d fits.
 * The walk runs on the GPU, where a 64-bit division is a subroutine call
 * (and once spilled its return address, run 158). */
static inline HGEMM_HD uint32_t hgemm_sk_muldiv(uint32_t x, uint32_t w, uint32_t d) {
    const uint32_t q = x / d, r = x - q * d;
    return q * w + r * w / d;
}

/* The first k-tile of slice `slice` of a k-loop of k_tiles cut in `slices`
 * (0 <= slice <= slices): the same cut for every tile. */
static inline HGEMM_HD uint32_t hgemm_sk_cut(uint32_t k_tiles, uint32_t slice, uint32_t slices) {
    return hgemm_sk_muldiv(k_tiles, slice, slices);
}

/* Split-K: the first k-tile of slice `slice` (0 <= slice <= slices). */
static inline HGEMM_HD uint32_t hgemm_sk_slice_begin(const hgemm_sk *s, uint32_t slice) {
    return hgemm_sk_cut(s->k_tiles, slice, s->slices);
}

/* The tail split: how many passes of 1/n of a tile `tail` tiles cut in n
 * slices take, dealt round robin over `workers` (the tail lasts passes / n
 * of a round). */
static inline HGEMM_HD uint32_t hgemm_sk_tail_passes(uint32_t tail, uint32_t n, uint32_t workers) {
    return (uint32_t)(((uint64_t)tail * n + workers - 1) / workers);
}

/* The tail split on a whole-tiles plan (dp_tiles == tiles): where the last
 * round's tiles, cut in 2 .. HGEMM_SK_TAIL_MAX_SLICES slices, take at most
 * 3/4 of a round, cut them in the number of slices that takes least (the
 * fewest on a tie), with at most `max_units` units leaving a partial sum
 * (the workspace's slots). Else the plan stays as it is. */
static inline HGEMM_HD void hgemm_sk_tail(hgemm_sk *s, uint32_t max_units) {
    if (s->dp_tiles != s->tiles || s->sk_workers || s->slices || s->workers < 2 ||
        s->workers > HGEMM_SK_MAX_WORKERS || s->k_tiles < HGEMM_SK_MIN_KTILES)
        return;
    const uint32_t whole = s->tiles / s->workers, tail = s->tiles % s->workers;
    if (whole == 0 || tail == 0) return; /* one partial round: stream-K's and split-K's case */
    /* the tail takes ceil(tail * n / workers) rounds of 1/n of a tile: num / den */
    uint32_t best = 0;
    uint64_t num = 1, den = 1;
    for (uint32_t n = 2; n <= HGEMM_SK_TAIL_MAX_SLICES; n++) {
        if (s->k_tiles / n < HGEMM_SK_TAIL_MIN_ITERS || (uint64_t)tail * (n - 1) > max_units) break;
        const uint64_t rounds = hgemm_sk_tail_passes(tail, n, s->workers);
        if (rounds * den < num * n) {
            best = n;
            num = rounds;
            den = n;
        }
    }
    if (best == 0 || num * 4 > den * 3) return;
    s->dp_tiles = whole * s->workers;
    s->tail_slices = best;
}

/* Whole tiles on fewer workers, the same rounds (since run 100): where a
 * plan deals every tile whole and the last round leaves workers idle, deal
 * them over the fewest workers that still take as many rounds,
 * ceil(tiles / rounds). 4096^3 in 256x256 cluster tiles: 256 tiles on 66
 * workers run 4 rounds, the last with 58 busy; on 64 workers, 4 rounds
 * every one of them full. No worker runs more tiles than before (rounds
 * stay ceil(tiles / workers)); the spare workers idle for the whole call
 * instead of through the last round, so fewer SMs ask L2 for operands at
 * once and the idle ones draw less power. Run 100, against every cluster
 * (v8-allsms) interleaved in one process: 4096^3 0.1824 ms against
 * 0.1836, 6144^3 0.6320 against 0.6382, 8192 x 4096 x 14336 1.3466
 * against 1.3610; seven of eight such shapes 0.5..1.2% faster, one 0.3%
 * slower (docs/notes/v8-log.md). Plans that split or share anything are
 * left alone. */
static inline HGEMM_HD void hgemm_sk_balance(hgemm_sk *s) {
    if (s->dp_tiles != s->tiles || s->sk_workers || s->slices || s->tail_slices || s->tiles <= s->workers) return;
    const uint32_t rounds = (uint32_t)(((uint64_t)s->tiles + s->workers - 1) / s->workers);
    s->workers = (uint32_t)(((uint64_t)s->tiles + rounds - 1) / rounds);
}

/* The tail split: the slot (unit number) of slice `slice` >= 1 of tail tile
 * `tile`, and the slice of a unit of a tail tile that starts at k_begin. */
static inline HGEMM_HD uint32_t hgemm_sk_tail_slot(const hgemm_sk *s, uint32_t tile, uint32_t slice) {
    return (slice - 1) * (s->tiles - s->dp_tiles) + (tile - s->dp_tiles);
}
static inline HGEMM_HD uint32_t hgemm_sk_tail_slice(const hgemm_sk *s, uint32_t k_begin) {
    uint32_t slice = 0;
    while (slice + 1 < s->tail_slices && hgemm_sk_cut(s->k_tiles, slice + 1, s->tail_slices) <= k_begin) slice++;
    return slice;
}

/* Split-K: the slice that worker w runs (of tile w % tiles). */
static inline HGEMM_HD uint32_t hgemm_sk_worker_slice(const hgemm_sk *s, uint32_t w) {
    return w / s->tiles;
}

/* Split-K: the worker that runs slice `slice` of tile `tile`. */
static inline HGEMM_HD uint32_t hgemm_sk_slice_worker(const hgemm_sk *s, uint32_t tile, uint32_t slice) {
    return slice * s->tiles + tile;
}

/* First stream-K iteration of worker w, counted from tile dp_tiles' k-tile 0;
 * 0 <= w <= sk_workers (w == sk_workers: the end). */
static inline HGEMM_HD uint32_t hgemm_sk_begin(const hgemm_sk *s, uint32_t w) {
    /* the iterations fit 32 bits (hgemm_sk_plan) */
    return hgemm_sk_muldiv((s->tiles - s->dp_tiles) * s->k_tiles, w, s->sk_workers);
}

static inline HGEMM_HD hgemm_sk_walk hgemm_sk_start(const hgemm_sk *s, uint32_t w) {
    hgemm_sk_walk wk;
    wk.next_dp = w;
    wk.it = wk.end = 0;
    if (s->slices) { /* split-K: one unit, held in next_dp; end - it counts it */
        wk.end = w < s->sk_workers ? 1 : 0;
        return wk;
    }
    if (s->tail_slices) { /* the tail split: units w, w + workers, ... of [0, end) */
        wk.it = w;
        wk.end = (s->tiles - s->dp_tiles) * s->tail_slices;
        return wk;
    }
    if (w < s->sk_workers) {
        wk.it = hgemm_sk_begin(s, w);
        wk.end = hgemm_sk_begin(s, w + 1);
    }
    return wk;
}

/* The next unit of the walk: whole tiles first, then the stream-K range.
 * Returns 0 when the worker is done. */
static inline HGEMM_HD int hgemm_sk_next(const hgemm_sk *s, hgemm_sk_walk *wk, hgemm_sk_unit *u) {
    if (s->slices) {
        if (wk->it >= wk->end) return 0;
        wk->it = wk->end;
        const uint32_t slice = wk->next_dp / s->tiles;
        u->tile = wk->next_dp - slice * s->tiles;
        u->k_begin = hgemm_sk_slice_begin(s, slice);
        u->k_end = hgemm_sk_slice_begin(s, slice + 1);
        return 1;
    }
    if (wk->next_dp < s->dp_tiles) {
        u->tile = wk->next_dp;
        u->k_begin = 0;
        u->k_end = s->k_tiles;
        wk->next_dp += s->workers;
        return 1;
    }
    if (s->tail_slices) {
        if (wk->it >= wk->end) return 0;
        const uint32_t tail = s->tiles - s->dp_tiles, j = wk->it;
        const uint32_t first_owner = tail * (s->tail_slices - 1);
        const uint32_t slice = j < first_owner ? 1 + j / tail : 0;
        u->tile = s->dp_tiles + (j < first_owner ? j % tail : j - first_owner);
        u->k_begin = hgemm_sk_cut(s->k_tiles, slice, s->tail_slices);
        u->k_end = hgemm_sk_cut(s->k_tiles, slice + 1, s->tail_slices);
        wk->it += s->workers;
        return 1;
    }
    if (wk->it < wk->end) {
        const uint32_t tile = wk->it / s->k_tiles;
        const uint32_t kb = wk->it - tile * s->k_tiles;
        const uint32_t left = wk->end - wk->it;
        const uint32_t ke = left < s->k_tiles - kb ? kb + left : s->k_tiles;
        u->tile = s->dp_tiles + tile;
        u->k_begin = kb;
        u->k_end = ke;
        wk->it += ke - kb;
        return 1;
    }
    return 0;
}

/* The workers whose partial sums the owner of `u` (a unit with k_begin == 0
 * and k_end < k_tiles) adds: w+1 .. *last-1, where w is the owner. */
static inline HGEMM_HD uint32_t hgemm_sk_contributors_end(const hgemm_sk *s, uint32_t w,
                                                          const hgemm_sk_unit *u) {
    const uint32_t tile_end = (u->tile - s->dp_tiles + 1) * s->k_tiles;
    uint32_t v = w + 1;
    while (v < s->sk_workers && hgemm_sk_begin(s, v) < tile_end) v++;
    return v;
}

#endif /* HGEMM_STREAM_K_H */
