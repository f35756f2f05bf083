/*
 * test_interleave.c: the order of hgemm-bench --interleave's slices
 * (tools/interleave.h). For every count of entries from 1 to MAX_N, over
 * one cycle of the design's rows: each row runs every entry once, every
 * entry runs at every place equally often, and every entry runs right after
 * every other one equally often (never after itself); the cycle repeats.
 * And the period as the GPU runs it, each slice opened by its lead-in: over
 * a cycle every timed window follows every other entry equally often, or
 * its own entry (the lead-in) as often for every entry, where the slices
 * back to back would repeat the row changes' pairs. And the slices a run
 * takes under a cap on a window's length (hgemm_interleave_slices).
 */
#include <stdint.h>
#include <string.h>

#include "interleave.h"
#include "test_check.h"

enum { MAX_N = 66 }; /* hgemm-bench times at most 2 baselines and 64 kernels */

static int after[MAX_N][MAX_N], at[MAX_N][MAX_N];

static int check_design(int n) {
    const int rows = hgemm_interleave_rows(n);
    memset(after, 0, sizeof after);
    memset(at, 0, sizeof at);
    for (int s = 0; s < rows; s++) {
        int seen[MAX_N] = {0};
        for (int q = 0; q < n; q++) {
            const int e = hgemm_interleave_place(s, q, n);
            if (!CHECK_MSG(e >= 0 && e < n && !seen[e], "n %d row %d place %d: entry %d", n, s, q, e)) return 0;
            seen[e] = 1;
            at[e][q]++;
            if (q > 0) after[hgemm_interleave_place(s, q - 1, n)][e]++;
            if (!CHECK_MSG(hgemm_interleave_place(s + rows, q, n) == e, "n %d: row %d does not repeat", n, s))
                return 0;
        }
    }
    const int places = rows / n, follows = n > 1 ? rows * (n - 1) / (n * (n - 1)) : 0;
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            if (!CHECK_MSG(at[a][b] == places, "n %d: entry %d at place %d %d times, not %d", n, a, b, at[a][b],
                           places))
                return 0;
            const int want = a == b ? 0 : follows;
            if (!CHECK_MSG(after[a][b] == want, "n %d: entry %d right after %d %d times, not %d", n, b, a,
                           after[a][b], want))
                return 0;
        }
    return 1;
}

/* The period as hgemm-bench runs it: `cycles` cycles of rows, each slice a
 * lead-in (untimed) and its windows (timed) when `lead`, else the windows
 * alone. Counts, in after[a][b], the timed windows of b right after a
 * launch of a (the first slice's first window without `lead` follows the
 * warm-ups, not counted). */
static void count_period(int n, int cycles, int lead) {
    memset(after, 0, sizeof after);
    int prev = -1;
    for (int64_t s = 0; s < (int64_t)cycles * hgemm_interleave_rows(n); s++) {
        if (lead) prev = hgemm_interleave_lead(s, n);
        for (int q = 0; q < n; q++) {
            const int e = hgemm_interleave_place(s, q, n);
            if (prev >= 0) after[prev][e]++;
            prev = e;
        }
    }
}

static int check_period(int n) {
    const int rows = hgemm_interleave_rows(n), cycles = 2;
    if (!CHECK_MSG(hgemm_interleave_lead(1, n) == hgemm_interleave_place(1, 0, n), "n %d: lead-in", n))
        return 0;
    count_period(n, cycles, 1);
    const int self = cycles * rows / n, other = n > 1 ? cycles * rows / n : 0;
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            const int want = a == b ? self : other;
            if (!CHECK_MSG(after[a][b] == want, "n %d with lead-ins: %d right after %d %d times, not %d", n, b, a,
                           after[a][b], want))
                return 0;
        }
    return 1;
}

/* hgemm_interleave_slices over a grid of runs: never fewer than asked nor
 * more than the limit allows; a multiple of the rows where asked is one;
 * where it is not clamped, every window within the cap (or one launch) and
 * one step fewer would not be. */
static int check_slices(void) {
    static const int64_t asked_list[] = {2, 3, 4, 6, 8, 12, 32};
    static const int64_t iters_list[] = {8, 30, 32, 48, 100, 1000};
    static const double launch_list[] = {0.01, 0.8, 1.6, 3.3, 13.1, 52.0};
    static const double cap_list[] = {1.0, 15.0, 100.0};
    for (int n = 1; n <= 6; n++)
        for (size_t ai = 0; ai < sizeof asked_list / sizeof asked_list[0]; ai++)
            for (size_t ii = 0; ii < sizeof iters_list / sizeof iters_list[0]; ii++)
                for (size_t li = 0; li < sizeof launch_list / sizeof launch_list[0]; li++)
                    for (size_t ci = 0; ci < sizeof cap_list / sizeof cap_list[0]; ci++) {
                        const int64_t asked = asked_list[ai], iters = iters_list[ii], limit = 1000;
                        if (asked > iters) continue; /* hgemm-bench refuses it */
                        const double launch = launch_list[li], cap = cap_list[ci];
                        const int64_t s = hgemm_interleave_slices(asked, iters, n, launch, cap, limit);
                        const int rows = hgemm_interleave_rows(n);
                        const int64_t step = asked % rows == 0 ? rows : 1, top = iters / step * step;
                        if (!CHECK_MSG(s >= asked && s <= (top > asked ? top : asked),
                                       "n %d asked %lld iters %lld: %lld slices", n, (long long)asked,
                                       (long long)iters, (long long)s))
                            return 0;
                        if (!CHECK_MSG(s % step == 0, "n %d asked %lld: %lld slices, not a multiple of %lld", n,
                                       (long long)asked, (long long)s, (long long)step))
                            return 0;
                        const int64_t window = (iters + s - 1) / s; /* launches in the longest window */
                        if (s < top &&
                            !CHECK_MSG(window == 1 || (double)window * launch <= cap,
                                       "n %d asked %lld iters %lld launch %g cap %g: windows of %lld launches",
                                       n, (long long)asked, (long long)iters, launch, cap, (long long)window))
                            return 0;
                        const int64_t fewer = s - step, wider = fewer > 0 ? (iters + fewer - 1) / fewer : 0;
                        if (s > asked && s < top &&
                            !CHECK_MSG(fewer > 0 && (double)wider * launch > cap,
                                       "n %d asked %lld iters %lld launch %g cap %g: %lld slices would do", n,
                                       (long long)asked, (long long)iters, launch, cap, (long long)fewer))
                            return 0;
                    }
    /* The runs behind the cap (4 entries, 15 ms): 16384^3's 13.1 ms launches
     * go one a window; 8192^3's 1.6 ms ones stay 8 slices of 6 (9.6 ms) */
    CHECK_I64(hgemm_interleave_slices(8, 32, 4, 13.1, 15.0, 1000), 32);
    CHECK_I64(hgemm_interleave_slices(8, 48, 4, 1.6, 15.0, 1000), 8);
    CHECK_I64(hgemm_interleave_slices(8, 32, 4, 4.0, 15.0, 1000), 12); /* 3 launches, 12 ms */
    CHECK_I64(hgemm_interleave_slices(8, 30, 4, 13.1, 15.0, 1000), 28); /* 32 > 30 launches: 28 */
    CHECK_I64(hgemm_interleave_slices(3, 6, 3, 1.0, 0.5, 1000), 6); /* 3 is no multiple of 6 rows */
    CHECK_I64(hgemm_interleave_slices(8, 5000, 4, 10.0, 15.0, 1000), 1000); /* the limit */
    CHECK_I64(hgemm_interleave_slices(8, 32, 4, 13.1, 0.0, 1000), 8);  /* no cap */
    CHECK_I64(hgemm_interleave_slices(8, 32, 4, 0.0, 15.0, 1000), 8);  /* no estimate */
    return 1;
}

int main(void) {
    check_slices();
    for (int n = 1; n <= MAX_N; n++)
        if (!check_design(n) || !check_period(n)) break;
    /* Without the lead-ins, 4 entries: the row changes (0 -> 3, 3 -> 2, 2 -> 1,
     * 1 -> 0) come on top of the rows' pairs, so those pairs run twice a cycle
     * and the rest once; 0 -> 3 four times in two cycles, as run 142 had it. */
    count_period(4, 2, 0);
    CHECK_I64(after[0][3], 4);
    CHECK_I64(after[3][2], 4);
    CHECK_I64(after[2][1], 4);
    CHECK_I64(after[1][0], 3); /* the first window follows the warm-ups */
    CHECK_I64(after[0][1], 2);
    CHECK_I64(after[3][3], 0);
    /* The first rows for 4 and 3 entries, written out. */
    static const int four[4][4] = {{0, 1, 3, 2}, {1, 2, 0, 3}, {2, 3, 1, 0}, {3, 0, 2, 1}};
    for (int s = 0; s < 4; s++)
        for (int q = 0; q < 4; q++) CHECK_I64(hgemm_interleave_place(s, q, 4), four[s][q]);
    static const int three[6][3] = {{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}, {0, 2, 1}, {1, 0, 2}};
    for (int s = 0; s < 6; s++)
        for (int q = 0; q < 3; q++) CHECK_I64(hgemm_interleave_place(s, q, 3), three[s][q]);
    return check_finish();
}
