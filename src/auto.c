/*
 * auto.c: AUTO's and AUTO_F16ACC's choice of kernel by shape (and by
 * workspace), and their rows for the tools. Plain C, no CUDA call: the CPU
 * tests (tests/cpu) check every rule's bounds.
 */
#include <stddef.h>
#include <stdint.h>

#include "internal.h"

/* AUTO's and AUTO_F16ACC's choices by shape. Derived from the measured llm
 * suite on an H200 (bench/results/2026-11-30-h200-run21-suite.csv: 47
 * shapes, V8 and V9 beside cuBLAS COMPUTE_32F in the same process; each
 * rule's shapes and ratios are in docs/notes/auto-table.md):
 *   - min(m, n) <= 64 (decode): V9 on all 23 such shapes, 0.67..1.38x
 *     cuBLAS where V8 runs 0.42..0.62x;
 *   - m * n <= 2^16 (a few output tiles, k long): V9, 0.59x at
 *     256 x 256 x 65536 where V8's stream-K owner adds 65 partial sums, 0.15x;
 *   - 2^18 < m * n <= 2^20 with k <= 2048 (small products): V9, 0.67..1.67x
 *     where V8's 128 x 256 tiles fill 16..32 of 66 clusters, 0.59..0.92x;
 *     since run 50 only where m, n and k are multiples of 64: V8's narrow
 *     tile in one launch (no split of short k-loops, stream_k.h) took 777 x
 *     1032 x 520 in 9.2 us and 1000^3 in 11.0..12.9 where V9 took 12.8 and
 *     15.1..15.5, and V9 kept 1024^3 (9.5 us against 10.3..11.2; 512^3 level);
 *     since run 78 only where m * n * k <= 1.25 * 2^29: on the class's 9
 *     shapes of bench/shapes/small-aligned.txt V8 (its narrow and quarter
 *     tiles, its block start without memory barriers) took the 5 above that
 *     bound in 9.0..13.5 us against V9's 10.3..18.2 (1024^3: 9.0 against
 *     11.2; 1024 x 1024 x 2048: 13.5 against 17.5), and V9 the 4 below it
 *     (1024 x 1024 x 512: 7.3..7.4 against 8.0; the closest, 768 x 1024 x
 *     768: 8.1..9.4 against 9.2; V9's two figures are AUTO's and the v9
 *     entry's; bench/results/2026-12-01-h200-run78-small-aligned.csv);
 *   - 97..128 rows (m) against a weight of at least 4096 (n) with k in
 *     2049..8192 (batched decode): V9's 128-wide short tile, 0.847..0.948x
 *     cuBLAS where V8 with the library's workspace ran 0.777..0.928x on
 *     the class's three such shapes (128 x 4096 x 4096, 128 x 8192 x 8192,
 *     128 x 28672 x 4096, on an H100; docs/notes/auto-table.md); V8 kept
 *     the rest of bench/shapes/mid-m.txt (96 and 192..256 rows, k of 14336
 *     and 28672), where it led; but weights 8192..16384 wide go to V8
 *     swapped (v8_swap): 128 x 8192 x 8192 0.933x against V9's 0.754x
 *     on an H200 (docs/notes/auto-table.md);
 *   - everything else: V8.
 * AUTO_F16ACC (fp16 accumulation allowed) takes V7 where it beat V8 there:
 * enough 256 x 256 tiles to fill an H200's 132 SMs (at least 128 tiles,
 * and its rounds of 132 at least 3/4 full on average), and k <= 16384 (V7 failed the check's
 * fp16 tolerance at k = 32768..131072); elsewhere AUTO's choice. */
enum {
    AUTO_SKINNY_SIDE = 64,
    AUTO_FEW_TILES_MN = 1 << 16,
    AUTO_SMALL_MN_LOW = 1 << 18, AUTO_SMALL_MN_HIGH = 1 << 20, AUTO_SMALL_K = 2048, AUTO_SMALL_ALIGN = 64,
    AUTO_SMALL_WORK = 5 << 27, /* m * n * k: 1.25 * 2^29 */
    AUTO_BATCHED_M_LOW = 96, AUTO_BATCHED_M_HIGH = 128, AUTO_BATCHED_N = 4096, AUTO_BATCHED_K_LOW = 2048,
    AUTO_BATCHED_K_HIGH = 8192,
    AUTO_BATCHED_SWAP_N_LOW = 8192, AUTO_BATCHED_SWAP_N_HIGH = 16384, /* V8 swapped there (v8_swap) */
    F16ACC_TILE = 256, F16ACC_MIN_TILES = 128, F16ACC_SMS = 132, F16ACC_MAX_K = 16384,
};

hgemm_kernel hgemm__auto_choice(int64_t m, int64_t n, int64_t k) {
    const int64_t short_side = m < n ? m : n;
    if (short_side <= AUTO_SKINNY_SIDE) return HGEMM_KERNEL_V9;
    if (m > AUTO_BATCHED_M_LOW && m <= AUTO_BATCHED_M_HIGH && n >= AUTO_BATCHED_N && k > AUTO_BATCHED_K_LOW &&
        k <= AUTO_BATCHED_K_HIGH && (n < AUTO_BATCHED_SWAP_N_LOW || n > AUTO_BATCHED_SWAP_N_HIGH))
        return HGEMM_KERNEL_V9;
    /* both sides > 64 and each at most 2^31: the product fits int64 */
    const int64_t mn = m * n;
    if (mn <= AUTO_FEW_TILES_MN) return HGEMM_KERNEL_V9;
    /* in this branch mn <= 2^20 and k <= 2048: mn * k fits easily */
    if (mn > AUTO_SMALL_MN_LOW && mn <= AUTO_SMALL_MN_HIGH && k <= AUTO_SMALL_K && m % AUTO_SMALL_ALIGN == 0 &&
        n % AUTO_SMALL_ALIGN == 0 && k % AUTO_SMALL_ALIGN == 0 && mn * k <= AUTO_SMALL_WORK)
        return HGEMM_KERNEL_V9;
    return HGEMM_KERNEL_V8;
}

/* With a workspace of HGEMM_WORKSPACE_BYTES or more, V8 cuts the k-loop of
 * a few long tiles into slices over every SM (split-K) and beats V9 there:
 * 256 x 256 x 65536 0.766x cuBLAS COMPUTE_32F against V9's 0.609x (run 33,
 * bench/results/2026-11-30-h200-run33-splitk.csv, the same process). So
 * where the table says V9 for few tiles (m * n <= 2^16) and k is long
 * (>= 2^15), a call with such a workspace takes V8. */
enum { AUTO_WS_LONG_K = 1 << 15 };
int hgemm__auto_prefers_split(int64_t m, int64_t n, int64_t k, size_t workspace_bytes) {
    return workspace_bytes >= HGEMM_WORKSPACE_BYTES && k >= AUTO_WS_LONG_K && m > AUTO_SKINNY_SIDE &&
           n > AUTO_SKINNY_SIDE && m * n <= AUTO_FEW_TILES_MN;
}

hgemm_kernel hgemm__auto_f16acc_choice(int64_t m, int64_t n, int64_t k) {
    const hgemm_kernel fp32 = hgemm__auto_choice(m, n, k);
    if (fp32 != HGEMM_KERNEL_V8 || k > F16ACC_MAX_K) return fp32;
    const int64_t tiles = ((m + F16ACC_TILE - 1) / F16ACC_TILE) * ((n + F16ACC_TILE - 1) / F16ACC_TILE);
    const int64_t rounds = (tiles + F16ACC_SMS - 1) / F16ACC_SMS;
    if (tiles >= F16ACC_MIN_TILES && 4 * tiles >= 3 * rounds * F16ACC_SMS) return HGEMM_KERNEL_V7;
    return fp32;
}

/* AUTO and AUTO_F16ACC as rows, for the tools (the bench lists and runs
 * them beside the table's kernels): no launcher of their own, so
 * hgemm__run_ws resolves them by shape as hgemm_nt does. */
static const hgemm_kernel_info auto_rows[] = {
    {HGEMM_KERNEL_AUTO, "auto", HGEMM_ACC_F32, "by shape, the fastest fp32-accumulating kernel", NULL, NULL, 0, 0},
    {HGEMM_KERNEL_AUTO_F16ACC, "auto-f16acc", HGEMM_ACC_F16, "by shape, the fastest kernel; fp16 accumulation allowed", NULL, NULL, 0, 0},
};

const hgemm_kernel_info *hgemm__auto_row(hgemm_kernel id) {
    for (size_t i = 0; i < sizeof auto_rows / sizeof auto_rows[0]; i++)
        if (auto_rows[i].id == id) return &auto_rows[i];
    return NULL;
}

hgemm_kernel hgemm__auto_kernel(void) {
    const int64_t large = AUTO_SMALL_MN_HIGH; /* past every bound of the table: both sides */
    return hgemm__auto_choice(large, large, large);
}

