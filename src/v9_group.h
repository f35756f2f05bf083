/*
 * v9_group.h: how V9's blocks share the k-loops of a group of tiles (host
 * and device; unit-tested on the CPU by tests/cpu/test_v9_group.c).
 *
 * A cluster of S blocks takes T consecutive output tiles (T = 1: the k-loop
 * of one tile cut into S slices; T > 1 with S > T: 96 tiles on 132 SMs as
 * 32 clusters of 4 blocks for 3 tiles each, 128 SMs busy instead of 96).
 * The T k-loops of `steps` steps each are laid end to end, steps t * steps
 * .. (t + 1) * steps - 1 belonging to tile t, and block r runs the range
 * [begin(r), begin(r + 1)) of that line: contiguous, as even as integers
 * allow. With S >= T a range holds at most one tile boundary, so a block
 * has one or two segments, and a tile's contributors are consecutive ranks.
 * Every range is non-empty when T * steps >= S.
 */
#ifndef HGEMM_V9_GROUP_H
#define HGEMM_V9_GROUP_H

#include <stdint.h>

#include "raster.h" /* HGEMM_HD */

/* First step (on the line of T k-loops) of block r of S; begin(S) = T * steps. */
static inline HGEMM_HD uint64_t v9g_begin(uint32_t T, uint64_t steps, uint32_t S, uint32_t r) {
    return (uint64_t)T * steps * r / S;
}

/* The first rank whose range reaches into tile t: the least r with
 * begin(r + 1) > t * steps, that is (r + 1) * T * steps >= S * (t * steps + 1). */
static inline HGEMM_HD uint32_t v9g_first_rank(uint32_t T, uint64_t steps, uint32_t S, uint32_t t) {
    const uint64_t line = (uint64_t)T * steps;
    return (uint32_t)(((uint64_t)S * (t * steps + 1) + line - 1) / line - 1);
}

/* The last rank whose range starts before tile t ends: the greatest r with
 * begin(r) < (t + 1) * steps, that is r * T < S * (t + 1). */
static inline HGEMM_HD uint32_t v9g_last_rank(uint32_t T, uint32_t S, uint32_t t) {
    const uint32_t r = (S * (t + 1) + T - 1) / T - 1;
    return r < S - 1 ? r : S - 1;
}

#endif
