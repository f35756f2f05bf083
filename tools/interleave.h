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

#endif /* HGEMM_INTERLEAVE_H */
