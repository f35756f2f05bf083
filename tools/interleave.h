/*
 * interleave.h: the order in which hgemm-bench --interleave runs a run's
 * entries in each slice (tools/hgemm-bench.c, time_interleaved); tested on
 * the CPU by tests/cpu/test_interleave.c.
 *
 * A window's SM clock depends on how much power the window before it drew,
 * so an entry that always follows the same one carries that one's effect
 * (run 96: two builds of one kernel 1.5..2.5% apart in a fixed cyclic
 * order). The slices therefore take the rows of a Williams design (E. J.
 * Williams, "Experimental designs balanced for the estimation of residual
 * effects of treatments", Australian Journal of Scientific Research A 2,
 * 1949): row r is 0, 1, n-1, 2, n-2, ... plus r (mod n); with n odd, rows
 * n .. 2n-1 are rows 0 .. n-1 reversed. Over one cycle of its rows (n of
 * them, 2n with n odd) every entry runs right after every other one equally
 * often within the rows, and at every place equally often.
 *
 * The design balances the pairs within a row only. Run back to back, a
 * row's last entry also precedes the next row's first, and those pairs
 * repeat (with 4 entries the row changes put 3 after 0, 2 after 3, 1 after 2
 * and 0 after 1: each of those pairs twice a cycle, every other pair once). So
 * each slice opens with an untimed lead-in of its first entry
 * (hgemm_interleave_lead): every timed window then follows another entry,
 * each as often, or its own entry's lead-in, as often for every entry.
 *
 * That balances one window back only. A window's clock remembers about
 * 100 ms of the windows before it (run 144, an H100: with windows of four
 * 13 ms launches at 16384^3, the fourth of 4 entries ran 2..3% slower
 * whichever kernel it was; with windows of one launch, run 145, every
 * place was level). So a window is kept short beside that memory: where
 * the asked-for slices would make one longer than a cap, the run takes
 * more (hgemm_interleave_slices), and the windows the memory spans hold
 * every entry in about equal shares.
 */
#ifndef HGEMM_INTERLEAVE_H
#define HGEMM_INTERLEAVE_H

#include <stdint.h>

/* Rows in one cycle of the design for n entries. */
static inline int hgemm_interleave_rows(int n) { return n % 2 ? 2 * n : n; }

/* Which of n entries (n >= 1) runs at place q (0 <= q < n) of slice s >= 0. */
static inline int hgemm_interleave_place(int64_t s, int q, int n) {
    const int row = (int)(s % hgemm_interleave_rows(n));
    if (row >= n) q = n - 1 - q; /* a reversed row */
    const int base = q == 0 ? 0 : q % 2 ? (q + 1) / 2 : n - q / 2;
    return (base + row % n) % n;
}

/* The entry whose untimed lead-in opens slice s: the slice's first. */
static inline int hgemm_interleave_lead(int64_t s, int n) { return hgemm_interleave_place(s, 0, n); }

/* The slices of one run: `asked` (--interleave's N), or more where a window
 * of iters/asked launches (rounded up) of `launch_ms` each would last longer
 * than `max_ms`: the fewest that keep every window within it, in steps of
 * the design's rows for n entries where `asked` is a multiple of them (so
 * the run still covers whole cycles of the design), else in steps of one.
 * At most `limit` (the caller's iters, or fewer: a launch a window is the
 * shortest a window gets), less what a step leaves over; never fewer than
 * asked. max_ms <= 0 or launch_ms <= 0 (no estimate): asked. */
static inline int64_t hgemm_interleave_slices(int64_t asked, int64_t iters, int n, double launch_ms,
                                              double max_ms, int64_t limit) {
    if (!(max_ms > 0.0) || !(launch_ms > 0.0) || asked <= 0 || iters <= 0) return asked;
    const double fit = max_ms / launch_ms; /* launches a window may hold */
    const int64_t per = fit >= (double)iters ? iters : fit >= 1.0 ? (int64_t)fit : 1;
    const int64_t need = (iters + per - 1) / per;
    if (need <= asked) return asked;
    const int rows = hgemm_interleave_rows(n);
    const int64_t step = asked % rows == 0 ? rows : 1;
    int64_t s = (need + step - 1) / step * step;
    if (limit > iters) limit = iters;
    if (s > limit) s = limit / step * step;
    return s > asked ? s : asked;
}

#endif /* HGEMM_INTERLEAVE_H */
