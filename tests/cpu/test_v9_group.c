/*
 * test_v9_group.c: V9's groups of tiles (src/v9_group.h). Over T = 1..8
 * tiles, S = T..8 blocks and k-loops of 1..70 steps with T * steps >= S:
 * the ranges cover the line of T k-loops exactly once, in rank order, each
 * non-empty and holding at most one tile boundary; the first and last ranks
 * of each tile are exactly the ranks whose ranges meet it (brute force), and
 * every rank strictly between them meets it too.
 */
#include <stdint.h>
#include <stdio.h>

#include "test_check.h"
#include "v9_group.h"

static void test_cover(void) {
    int all = 1;
    for (uint32_t T = 1; T <= 8 && all; T++)
        for (uint32_t S = T; S <= 8 && all; S++)
            for (uint64_t steps = 1; steps <= 70 && all; steps++) {
                if (T * steps < S) continue;
                all &= CHECK_MSG(v9g_begin(T, steps, S, 0) == 0 && v9g_begin(T, steps, S, S) == T * steps,
                                 "T %u S %u steps %llu: the line's ends", T, S, (unsigned long long)steps);
                for (uint32_t r = 0; r < S && all; r++) {
                    const uint64_t b = v9g_begin(T, steps, S, r), e = v9g_begin(T, steps, S, r + 1);
                    all &= CHECK_MSG(e > b, "T %u S %u steps %llu: rank %u empty", T, S,
                                     (unsigned long long)steps, r);
                    /* at most one boundary: the range's first and last steps lie in
                     * the same tile or in neighbouring ones */
                    all &= CHECK_MSG((e - 1) / steps - b / steps <= 1,
                                     "T %u S %u steps %llu: rank %u crosses two boundaries", T, S,
                                     (unsigned long long)steps, r);
                }
                for (uint32_t t = 0; t < T && all; t++) {
                    uint32_t lo = S, hi = 0;
                    for (uint32_t r = 0; r < S; r++) {
                        const uint64_t b = v9g_begin(T, steps, S, r), e = v9g_begin(T, steps, S, r + 1);
                        if (b < (t + 1) * steps && e > t * steps) {
                            if (lo == S) lo = r;
                            all &= CHECK_MSG(lo == r || hi + 1 == r, "T %u S %u steps %llu tile %u: gap at rank %u",
                                             T, S, (unsigned long long)steps, t, r);
                            hi = r;
                        }
                    }
                    all &= CHECK_MSG(v9g_first_rank(T, steps, S, t) == lo && v9g_last_rank(T, S, t) == hi,
                                     "T %u S %u steps %llu tile %u: ranks %u..%u, expected %u..%u", T, S,
                                     (unsigned long long)steps, t, v9g_first_rank(T, steps, S, t),
                                     v9g_last_rank(T, S, t), lo, hi);
                }
            }
    CHECK(all);
}

static void test_examples(void) {
    /* 3 tiles of 32 steps over 4 blocks: 24 steps each; tile 1 is ranks 1 and 2 */
    CHECK_U64(v9g_begin(3, 32, 4, 1), 24);
    CHECK_U64(v9g_begin(3, 32, 4, 2), 48);
    CHECK_U64(v9g_first_rank(3, 32, 4, 1), 1);
    CHECK_U64(v9g_last_rank(3, 4, 1), 2);
    /* one tile over 2 blocks (V9's split): both ranks */
    CHECK_U64(v9g_first_rank(1, 16, 2, 0), 0);
    CHECK_U64(v9g_last_rank(1, 2, 0), 1);
}

int main(void) {
    test_cover();
    test_examples();
    return check_finish();
}
