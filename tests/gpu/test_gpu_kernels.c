/*
 * test_gpu_kernels: every kernel of the table (and HGEMM_KERNEL_AUTO) against
 * the fp64 GPU reference, over tile-multiple and ragged shapes, padded leading
 * dimensions, alpha/beta cases, k == 0, m == 0 and n == 0, a non-blocking
 * stream, and a guard band around C (rows above and below, ldc > n) that must
 * still hold the sentinel afterwards.
 *
 * One line per (kernel, case); the first mismatches, with coordinates, on a
 * failure; a last line "N passed, N failed". Exits 77 without an sm_90 GPU
 * and 1 on any failure.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "check.h"
#include "internal.h"

enum {
    EXIT_SKIP = 77,
    LD_ALIGN = 8,       /* hgemm's leading dimensions are multiples of 8 */
    GUARD_ROWS = 8,     /* sentinel rows above and below C */
    GUARD_COLS = 8,     /* ldc is at least n rounded up to 8, plus these */
    SEED_A = 101, SEED_B = 202, SEED_C = 303,
    MAX_KERNELS = 160,
    WHY_LEN = 256,
    NOOP_ROWS = 64,     /* the m == 0 / n == 0 cases: C is a 64 x 64 region */
};

typedef enum c_init { C_NAN, C_RANDOM } c_init;
typedef enum ab_init {
    AB_RANDOM,
    AB_NAN,   /* alpha == 0: A and B must not be read; NaN would show */
    AB_NULL,  /* k == 0: nothing to read, the pointers are NULL */
} ab_init;
typedef enum stream_kind { STREAM_LEGACY, STREAM_NONBLOCKING } stream_kind;

typedef struct test_case {
    const char *what;
    int64_t m, n, k;
    int64_t lda_pad, ldb_pad, ldc_pad; /* elements beyond the tight multiple-of-8 ld */
    float alpha, beta;
    c_init c;
    ab_init ab;
    stream_kind stream;
    int fp32_only; /* past K ~ 14336 fp16 accumulation drifts beyond its atol: fp32 kernels only */
} test_case;

#define PLAIN 0, 0, 0, 1.0f, 0.0f, C_NAN, AB_RANDOM

static const test_case cases[] = {
    /* tile multiples */
    {"tiles", 256, 256, 64, PLAIN, STREAM_LEGACY, 0},
    {"tiles", 512, 768, 1024, PLAIN, STREAM_LEGACY, 0},
    {"tiles", 1024, 1024, 512, PLAIN, STREAM_NONBLOCKING, 0},
    /* ragged */
    {"ragged", 1, 1, 1, PLAIN, STREAM_LEGACY, 0},
    {"ragged", 1, 8, 8, PLAIN, STREAM_LEGACY, 0},
    {"ragged", 8, 1, 8, PLAIN, STREAM_LEGACY, 0},
    {"ragged", 129, 264, 72, PLAIN, STREAM_LEGACY, 0},
    {"ragged", 777, 1032, 520, PLAIN, STREAM_NONBLOCKING, 0},
    {"ragged", 1000, 1000, 1000, PLAIN, STREAM_LEGACY, 0},
    {"ragged k", 300, 520, 100, PLAIN, STREAM_LEGACY, 0},
    {"ragged k", 64, 64, 17, PLAIN, STREAM_LEGACY, 0},
    {"tall", 2304, 136, 200, PLAIN, STREAM_LEGACY, 0},
    {"wide", 72, 2440, 136, PLAIN, STREAM_LEGACY, 0},
    /* more 256x256 tiles than an H200 has SMs (132): V7's persistent blocks
     * take 2 or 3 tiles each; the second mixes right-edge tiles stored
     * directly (n % 8 != 0) with TMA-stored ones, with alpha/beta and padding */
    {"many tiles", 4352, 4352, 64, PLAIN, STREAM_LEGACY, 0},
    {"many tiles", 4400, 4345, 72, 8, 16, 24, 0.5f, -1.5f, C_RANDOM, AB_RANDOM, STREAM_NONBLOCKING, 0},
    /* V8 stores the last parts of a tile's C during the next tile's first
     * k-tiles (beta 0 only; the wide tile three, the 320 tile two), several
     * tiles a block: with 2 k-tiles a tile (v8-wide: two of the three late
     * parts go out in the k-loop, the third after it; v8-320: both in the
     * k-loop; AUTO's 3-stage build has none); with 4, all of them in the
     * k-loop, and right-edge tiles stored directly (n % 8 != 0) between late
     * ones. The wide tile sends them before the k-tile's stage release, the
     * 320 tile and v8-wide-after after it. */
    {"late parts", 4480, 4360, 100, 0, 8, 8, 0.5f, 0.0f, C_NAN, AB_RANDOM, STREAM_NONBLOCKING, 0},
    {"late parts", 4400, 4345, 200, PLAIN, STREAM_LEGACY, 0},
    /* V8's 2-block clusters stack two 128-row tiles: an odd number of tile
     * rows leaves the lower block of the last cluster tiles with no rows;
     * 33 x 17 tiles are 289 cluster tiles, several per persistent cluster */
    {"cluster odd", 4224, 4104, 128, 0, 8, 16, 1.0f, 0.5f, C_RANDOM, AB_RANDOM, STREAM_LEGACY, 0},
    {"cluster odd", 130, 520, 200, PLAIN, STREAM_NONBLOCKING, 0},
    /* V8 swapped (v8_swap: 65..384 rows against a weight 2048 wide or more,
     * beta 0): C^T = B A^T, each part stored transposed; the weight's last
     * tile ragged (n % 8 != 0 with ldc % 8 == 0), m's past 256 in two tiles
     * of 192, split-K over the workspace; with beta != 0 V8 runs unswapped */
    {"swapped", 65, 2048, 64, PLAIN, STREAM_LEGACY, 0},
    {"swapped", 100, 2056, 520, 8, 0, 8, 0.5f, 0.0f, C_NAN, AB_RANDOM, STREAM_NONBLOCKING, 0},
    {"swapped", 192, 4100, 1000, 0, 8, 16, 1.0f, 0.0f, C_NAN, AB_RANDOM, STREAM_LEGACY, 0},
    {"swapped", 256, 2048, 4096, PLAIN, STREAM_NONBLOCKING, 0},
    {"swapped", 300, 4096, 520, 0, 0, 8, 1.0f, 0.0f, C_NAN, AB_RANDOM, STREAM_LEGACY, 0},
    {"swapped", 384, 3000, 200, 8, 8, 0, 2.0f, 0.0f, C_NAN, AB_RANDOM, STREAM_LEGACY, 0},
    {"swapped beta", 200, 4096, 256, 0, 0, 0, 1.0f, 0.5f, C_RANDOM, AB_RANDOM, STREAM_LEGACY, 0},
    /* k from 1 to past 16384 */
    {"k 1", 513, 1000, 1, PLAIN, STREAM_LEGACY, 0},
    {"long k", 256, 512, 16384, PLAIN, STREAM_LEGACY, 1},
    {"long k", 200, 300, 16400, 8, 24, 8, 0.5f, -1.5f, C_RANDOM, AB_RANDOM, STREAM_NONBLOCKING, 1},
    /* V8's split-K with the workspace (a few tiles, long k): 130 rows leave
     * the lower block of the cluster tile 2 rows (8 slices of 8 or 9
     * k-tiles); 100 rows leave it none (8 slices of 8) */
    {"split-k", 130, 264, 4160, 0, 8, 0, 0.5f, 0.25f, C_RANDOM, AB_RANDOM, STREAM_NONBLOCKING, 1},
    {"split-k", 100, 136, 4096, PLAIN, STREAM_LEGACY, 1},
    /* a few slices (stream_k.h's HGEMM_SK_OWNER_SLICES): slice 0's worker
     * adds the others' partial sums in the kernel. On 132 SMs V8 cuts 27,
     * 22 and 16 narrow tiles into 2, 3 and 4 slices (v8-wide: 4, 4, 5); 300
     * rows leave the lower block of the second cluster tile row empty */
    {"split-k few", 520, 1100, 2100, 0, 8, 16, 0.5f, 0.25f, C_RANDOM, AB_RANDOM, STREAM_NONBLOCKING, 0},
    {"split-k few", 300, 1300, 2000, PLAIN, STREAM_LEGACY, 0},
    {"split-k few", 300, 1000, 3000, 8, 0, 8, 1.0f, -1.0f, C_RANDOM, AB_RANDOM, STREAM_NONBLOCKING, 0},
    /* the wide tile's split without clusters (run 71): 8 wide cluster tiles,
     * 16 wide tiles of one block in 8 slices of 64 k-tiles */
    {"split-k wide", 512, 1024, 32768, 0, 8, 0, 0.5f, 0.25f, C_RANDOM, AB_RANDOM, STREAM_NONBLOCKING, 1},
    /* many rounds of long tiles on few SMs: on 4 SMs (v8+sm4, 2 clusters) 15
     * wide tiles of 129 k-tiles are 8 rounds, dealt whole (94% busy); on 132
     * SMs split-K */
    {"long rounds", 700, 1200, 8250, 0, 8, 0, 0.5f, 0.25f, C_RANDOM, AB_RANDOM, STREAM_NONBLOCKING, 0},
    /* the tail split (stream_k.h) with the workspace, one round and a
     * little: 4224 x 1000 (33 tile rows, so the last cluster row's lower
     * block has none) is 68 wide or 320-wide cluster tiles (the last 2 in
     * halves of 16 and 17 k-tiles) and 136 narrow ones (the last 4 in
     * halves); 8320 x 700 is 99 wide or 320-wide ones, the last 33 in
     * halves of 32 and 33 k-tiles, with beta 0 on NaN (the late parts) */
    {"tail split", 4224, 1000, 2100, 0, 8, 16, 0.5f, -1.5f, C_RANDOM, AB_RANDOM, STREAM_NONBLOCKING, 0},
    {"tail split", 8320, 700, 4100, PLAIN, STREAM_LEGACY, 0},
    /* 2500 x 2500 is 100 wide cluster tiles on 66 clusters, the last 34 in
     * thirds (21 or 22 of 65 k-tiles); the last cluster row's lower block
     * has 68 rows and the last tile column 196 (v8-320+ws: 80 tiles, the
     * last 14 in quarters of 16 or 17) */
    {"tail split", 2500, 2500, 4100, 0, 8, 16, 0.5f, -1.5f, C_RANDOM, AB_RANDOM, STREAM_NONBLOCKING, 0},
    {"tail split", 2500, 2500, 4100, PLAIN, STREAM_LEGACY, 0},
    /* padded leading dimensions */
    {"padded ld", 200, 136, 96, 24, 40, 56, 1.0f, 0.0f, C_NAN, AB_RANDOM, STREAM_LEGACY, 0},
    {"padded ld", 333, 257, 130, 8, 16, 8, 1.0f, 0.0f, C_NAN, AB_RANDOM, STREAM_NONBLOCKING, 0},
    /* alpha and beta */
    {"alpha beta", 384, 256, 128, 0, 0, 0, 0.5f, -1.5f, C_RANDOM, AB_RANDOM, STREAM_LEGACY, 0},
    {"alpha beta", 777, 1032, 520, 16, 8, 24, 0.5f, -1.5f, C_RANDOM, AB_RANDOM, STREAM_NONBLOCKING, 0},
    {"alpha 0", 130, 70, 40, 0, 0, 0, 0.0f, 0.75f, C_RANDOM, AB_NAN, STREAM_LEGACY, 0},
    {"alpha 0 beta 0", 64, 64, 64, 0, 0, 0, 0.0f, 0.0f, C_NAN, AB_NAN, STREAM_NONBLOCKING, 0},
    {"k 0", 100, 60, 0, 0, 0, 0, 1.0f, -1.5f, C_RANDOM, AB_NULL, STREAM_LEGACY, 0},
    {"k 0 beta 0", 33, 17, 0, 0, 0, 0, 1.0f, 0.0f, C_NAN, AB_NULL, STREAM_NONBLOCKING, 0},
    /* decode (V9, and AUTO's choice where m or n <= 64): the long side on
     * WGMMA's M, k split over clusters of up to 8 blocks; short sides of 16,
     * 32 and 64 and past 64 (two short tiles), each side of C the short one */
    {"decode", 1, 4096, 4096, PLAIN, STREAM_LEGACY, 0},
    {"decode", 16, 1032, 4104, 8, 16, 24, 0.5f, -1.5f, C_RANDOM, AB_RANDOM, STREAM_NONBLOCKING, 0},
    {"decode", 33, 3000, 2056, PLAIN, STREAM_LEGACY, 0},
    {"decode", 64, 2048, 8192, 0, 8, 0, 1.0f, 0.0f, C_NAN, AB_RANDOM, STREAM_NONBLOCKING, 0},
    {"decode", 100, 1536, 1024, PLAIN, STREAM_LEGACY, 0},
    {"decode n", 2000, 40, 2048, 0, 0, 8, 0.5f, 1.25f, C_RANDOM, AB_RANDOM, STREAM_LEGACY, 0},
    /* V9's deep ring with one block per tile on 132 SMs (96 and 79 tiles:
     * too many for a split of 2), k ragged (65 k-tiles: the last step half
     * zero-filled); the second with m long and n short */
    {"decode deep", 64, 6144, 4100, 0, 8, 0, 0.5f, -1.5f, C_RANDOM, AB_RANDOM, STREAM_NONBLOCKING, 0},
    {"decode deep", 5000, 33, 2056, PLAIN, STREAM_LEGACY, 0},
    {"decode n", 4100, 1, 520, PLAIN, STREAM_NONBLOCKING, 0},
    /* V9's staged epilogue (run 68) where the last 8 columns of a row of C
     * are cut by n: split in 4 with beta, and the deep ring unsplit */
    {"decode ragged", 5, 1001, 520, 0, 8, 8, 0.5f, -1.5f, C_RANDOM, AB_RANDOM, STREAM_NONBLOCKING, 0},
    {"decode ragged", 40, 6100, 1000, 8, 0, 0, 1.0f, 0.0f, C_NAN, AB_RANDOM, STREAM_LEGACY, 0},
    /* V9's 128-wide short tile (65..384 rows against a long side of 4096 or
     * more, k over 2048): split in 2 over the deep ring, k ragged; two short
     * tiles with alpha, beta and padded ld; n the short side, its second tile
     * 2 wide; 224 long tiles on the small blocks, unsplit; three short tiles,
     * the last 44 wide */
    {"batched decode", 100, 4160, 2600, PLAIN, STREAM_LEGACY, 0},
    {"batched decode", 256, 4096, 4104, 8, 16, 24, 0.5f, -1.5f, C_RANDOM, AB_RANDOM, STREAM_NONBLOCKING, 0},
    {"batched decode", 4100, 130, 2056, 0, 0, 8, 1.0f, 0.0f, C_NAN, AB_RANDOM, STREAM_LEGACY, 0},
    {"batched decode", 96, 14336, 2120, PLAIN, STREAM_NONBLOCKING, 0},
    {"batched decode", 300, 4100, 2090, PLAIN, STREAM_LEGACY, 0},
    {"decode k", 7, 520, 65536, PLAIN, STREAM_LEGACY, 1},
    {"decode k", 3, 200, 136, PLAIN, STREAM_NONBLOCKING, 0},
    /* no-ops: C must be left exactly as it was */
    {"m 0", 0, 64, 64, PLAIN, STREAM_LEGACY, 0},
    {"n 0", 64, 0, 64, PLAIN, STREAM_NONBLOCKING, 0},
};
enum { CASE_COUNT = (int)(sizeof(cases) / sizeof(cases[0])) };

typedef struct kernel_under_test {
    hgemm_kernel id;
    const char *name;
    double atol;
    const hgemm_kernel_info *ablation; /* an experiment row (no public id), or NULL */
    void *workspace;                   /* hgemm_nt_ws's (HGEMM_WORKSPACE_BYTES), or NULL: hgemm_nt */
    int repeatable;                    /* a split reduction: a second call must match bitwise */
    int sm_count;                      /* > 0: through hgemm_nt_ex with this SM target */
} kernel_under_test;

/* hgemm_nt for the table's kernels and AUTO; hgemm__run, the same path by
 * row, for the ablations. */
static hgemm_status call_kernel(const kernel_under_test *kt, int64_t m, int64_t n, int64_t k,
                                float alpha, const void *A, int64_t lda, const void *B,
                                int64_t ldb, float beta, void *C, int64_t ldc, cudaStream_t s) {
    const size_t ws_bytes = kt->workspace ? HGEMM_WORKSPACE_BYTES : 0;
    if (kt->sm_count > 0) {
        const hgemm_nt_options options = {kt->workspace, ws_bytes, kt->sm_count, NULL, 0};
        return hgemm_nt_ex(kt->id, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, &options, s);
    }
    if (kt->ablation)
        return hgemm__run_ws(kt->ablation, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc,
                             kt->workspace, ws_bytes, s);
    if (kt->workspace)
        return hgemm_nt_ws(kt->id, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, kt->workspace,
                           ws_bytes, s);
    return hgemm_nt(kt->id, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, s);
}

/* With a workspace, V8 shares tiles between workers (stream-K), and V9 (and
 * AUTO, which picks it for these shapes) splits k over a cluster; the sums are
 * grouped in a fixed order, so a second call must give bitwise the same C.
 * Returns 1 when it does (C reset to its initial state in between). */
static int same_again(const kernel_under_test *kt, const test_case *t, hgemm_check_guarded *g,
                      int64_t m, int64_t n, int64_t k, const void *A, int64_t lda, const void *B,
                      int64_t ldb, int64_t ldc, cudaStream_t stream) {
    const size_t bytes = (size_t)(m * ldc) * 2;
    uint16_t *first = (uint16_t *)malloc(bytes), *second = (uint16_t *)malloc(bytes);
    if (first == NULL || second == NULL) {
        fprintf(stderr, "out of host memory\n");
        exit(1);
    }
    HGEMM_CHECK_CUDA(cudaMemcpy(first, g->C, bytes, cudaMemcpyDeviceToHost));
    if (t->c == C_RANDOM) hgemm_check_fill_random(g->C, m, n, ldc, SEED_C, hgemm_check_unit_scale(1), 0);
    else hgemm_check_fill_pattern(g->C, m, n, ldc, HGEMM_CHECK_NAN, 0);
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    hgemm_status st = call_kernel(kt, m, n, k, t->alpha, A, lda, B, ldb, t->beta, g->C, ldc, stream);
    HGEMM_CHECK_LAUNCH();
    HGEMM_CHECK_CUDA(cudaStreamSynchronize(stream));
    HGEMM_CHECK_CUDA(cudaMemcpy(second, g->C, bytes, cudaMemcpyDeviceToHost));
    int64_t differ = 0, first_at = -1;
    for (int64_t r = 0; r < m; r++)
        for (int64_t c = 0; c < n; c++)
            if (first[r * ldc + c] != second[r * ldc + c]) {
                if (first_at < 0) first_at = r * ldc + c;
                differ++;
            }
    if (differ)
        printf("     second call: %lld elements differ, the first at (%lld, %lld): 0x%04x then 0x%04x\n",
               (long long)differ, (long long)(first_at / ldc), (long long)(first_at % ldc),
               first[first_at], second[first_at]);
    free(first);
    free(second);
    return st == HGEMM_SUCCESS && differ == 0;
}

static int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

static int passed = 0, failed = 0;

static void *dmalloc(size_t bytes) {
    void *p = NULL;
    HGEMM_CHECK_CUDA(cudaMalloc(&p, bytes ? bytes : 1));
    return p;
}

static void case_label(char *out, size_t len, const test_case *t, int64_t lda, int64_t ldb,
                       int64_t ldc) {
    snprintf(out, len, "%-14s %5lldx%-5lldx%-5lld ld %4lld %4lld %4lld  a %-4g b %-5g C %-4s %s",
             t->what, (long long)t->m, (long long)t->n, (long long)t->k, (long long)lda,
             (long long)ldb, (long long)ldc, t->alpha, t->beta, t->c == C_NAN ? "nan" : "rand",
             t->stream == STREAM_NONBLOCKING ? "nb-stream" : "stream 0");
}

/* m == 0 or n == 0: success, and not one bit of the allocation changes. */
static void run_noop(const test_case *t, const kernel_under_test *kt, cudaStream_t stream) {
    const int64_t k = t->k, lda = round_up(max64(k, 1), LD_ALIGN), ldc = NOOP_ROWS + GUARD_COLS;
    char label[WHY_LEN];
    case_label(label, sizeof label, t, lda, lda, ldc);
    void *A = dmalloc((size_t)(NOOP_ROWS * lda) * 2), *B = dmalloc((size_t)(NOOP_ROWS * lda) * 2);
    hgemm_check_fill_random(A, NOOP_ROWS, k, lda, SEED_A, 1.0f, 0);
    hgemm_check_fill_random(B, NOOP_ROWS, k, lda, SEED_B, 1.0f, 0);
    hgemm_check_guarded g;
    hgemm_check_guarded_alloc(&g, NOOP_ROWS, NOOP_ROWS, ldc, GUARD_ROWS);
    hgemm_check_fill_random(g.C, NOOP_ROWS, NOOP_ROWS, ldc, SEED_C, 1.0f, 0);
    size_t bytes = (size_t)((2 * GUARD_ROWS + NOOP_ROWS) * ldc) * 2;
    uint16_t *before = (uint16_t *)malloc(bytes), *after = (uint16_t *)malloc(bytes);
    if (before == NULL || after == NULL) {
        fprintf(stderr, "out of host memory\n");
        exit(1);
    }
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    HGEMM_CHECK_CUDA(cudaMemcpy(before, g.base, bytes, cudaMemcpyDeviceToHost));
    hgemm_status st = call_kernel(kt, t->m, t->n, k, t->alpha, A, lda, B, lda, t->beta, g.C,
                               ldc, stream);
    if (st != HGEMM_SUCCESS) (void)cudaGetLastError();
    HGEMM_CHECK_LAUNCH();
    HGEMM_CHECK_CUDA(cudaStreamSynchronize(stream));
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    HGEMM_CHECK_CUDA(cudaMemcpy(after, g.base, bytes, cudaMemcpyDeviceToHost));
    int64_t changed = 0, first = -1;
    for (size_t i = 0; i < bytes / 2; i++)
        if (before[i] != after[i]) {
            if (first < 0) first = (int64_t)i;
            changed++;
        }
    int ok = st == HGEMM_SUCCESS && changed == 0;
    printf("%s %-6s %s  no-op\n", ok ? "PASS" : "FAIL", kt->name, label);
    if (st != HGEMM_SUCCESS)
        printf("     hgemm_nt returned %d: %s\n", (int)st, hgemm_status_string(st));
    if (changed)
        printf("     %lld elements changed, the first at row %lld, column %lld of the allocation\n",
               (long long)changed, (long long)(first / ldc), (long long)(first % ldc));
    ok ? passed++ : failed++;
    free(before);
    free(after);
    hgemm_check_guarded_free(&g);
    HGEMM_CHECK_CUDA(cudaFree(A));
    HGEMM_CHECK_CUDA(cudaFree(B));
}

/* One case for every kernel: the inputs and the reference are made once. */
static void run_case(const test_case *t, const kernel_under_test *kernels, int n_kernels,
                     cudaStream_t nonblocking) {
    cudaStream_t stream = t->stream == STREAM_NONBLOCKING ? nonblocking : 0;
    if (t->m == 0 || t->n == 0) {
        for (int i = 0; i < n_kernels; i++) run_noop(t, &kernels[i], stream);
        return;
    }
    const int64_t m = t->m, n = t->n, k = t->k;
    const int64_t lda = round_up(max64(k, 1), LD_ALIGN) + t->lda_pad;
    const int64_t ldb = round_up(max64(k, 1), LD_ALIGN) + t->ldb_pad;
    const int64_t ldc = round_up(n, LD_ALIGN) + GUARD_COLS + t->ldc_pad;
    char label[WHY_LEN];
    case_label(label, sizeof label, t, lda, ldb, ldc);

    void *A = NULL, *B = NULL;
    if (t->ab != AB_NULL) {
        A = dmalloc((size_t)(m * lda) * 2);
        B = dmalloc((size_t)(n * ldb) * 2);
        /* NaN everywhere first: padding past k is never to be read. */
        hgemm_check_fill_pattern(A, m, lda, lda, HGEMM_CHECK_NAN, 0);
        hgemm_check_fill_pattern(B, n, ldb, ldb, HGEMM_CHECK_NAN, 0);
        if (t->ab == AB_RANDOM) {
            float s = hgemm_check_unit_scale(k);
            hgemm_check_fill_random(A, m, k, lda, SEED_A, s, 0);
            hgemm_check_fill_random(B, n, k, ldb, SEED_B, s, 0);
        }
    }
    hgemm_check_guarded g;
    hgemm_check_guarded_alloc(&g, m, n, ldc, GUARD_ROWS);
    double *ref = (double *)dmalloc((size_t)(m * n) * sizeof(double));
    /* C0: what C holds before the call (the reference reads it only when beta != 0). */
    if (t->c == C_RANDOM) hgemm_check_fill_random(g.C, m, n, ldc, SEED_C, hgemm_check_unit_scale(1), 0);
    else hgemm_check_fill_pattern(g.C, m, n, ldc, HGEMM_CHECK_NAN, 0);
    hgemm_check_reference(m, n, k, t->alpha, A, lda, B, ldb, t->beta, g.C, ldc, ref, n, 0);
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());

    for (int i = 0; i < n_kernels; i++) {
        const kernel_under_test *kt = &kernels[i];
        if (t->fp32_only && kt->atol != HGEMM_CHECK_ATOL_ACC_F32) {
            printf("n/a  %-6s %s  fp16 accumulation, fp32-only case\n", kt->name, label);
            continue;
        }
        hgemm_check_guarded_reset(&g, 0);
        if (t->c == C_RANDOM) hgemm_check_fill_random(g.C, m, n, ldc, SEED_C, hgemm_check_unit_scale(1), 0);
        else hgemm_check_fill_pattern(g.C, m, n, ldc, HGEMM_CHECK_NAN, 0);
        HGEMM_CHECK_CUDA(cudaDeviceSynchronize());

        hgemm_status st = call_kernel(kt, m, n, k, t->alpha, A, lda, B, ldb, t->beta, g.C, ldc, stream);
        if (st != HGEMM_SUCCESS) {
            printf("FAIL %-6s %s  hgemm_nt returned %d: %s\n", kt->name, label, (int)st,
                   hgemm_status_string(st));
            (void)cudaGetLastError(); /* a failed launch is this kernel's failure, not the test's */
            failed++;
            continue;
        }
        HGEMM_CHECK_LAUNCH();
        HGEMM_CHECK_CUDA(cudaStreamSynchronize(stream));
        hgemm_check_stats s;
        hgemm_check_guard_report rep;
        int ok = hgemm_check_compare(g.C, ldc, ref, n, m, n, kt->atol, HGEMM_CHECK_RTOL, &s, stream);
        int intact = hgemm_check_guard_intact(&g, &rep, stream);
        printf("%s %-6s %s  mean %.2e p99 %.2e max %.2e\n", ok && intact ? "PASS" : "FAIL", kt->name,
               label, s.mean_abs_err, s.p99_abs_err, s.max_abs_err);
        if (!ok) {
            printf("     %lld of %lld elements outside atol %g + rtol %g * |ref| (%lld non-finite)\n",
                   (long long)s.failed, (long long)s.count, kt->atol, HGEMM_CHECK_RTOL,
                   (long long)s.nonfinite);
            hgemm_check_print_mismatches(stdout, &s, "     ");
        }
        if (!intact)
            printf("     guard band: %lld elements outside C changed, the first at row %lld, "
                   "column %lld (0x%04x)\n", (long long)rep.bad, (long long)rep.first_row,
                   (long long)rep.first_col, rep.first_value);
        if (ok && intact && kt->repeatable && !same_again(kt, t, &g, m, n, k, A, lda, B, ldb, ldc, stream)) {
            printf("FAIL %-6s %s  a second call differs (the split sums must be repeatable)\n",
                   kt->name, label);
            ok = 0;
        }
        ok && intact ? passed++ : failed++;
    }
    hgemm_check_guarded_free(&g);
    HGEMM_CHECK_CUDA(cudaFree(ref));
    if (A) HGEMM_CHECK_CUDA(cudaFree(A));
    if (B) HGEMM_CHECK_CUDA(cudaFree(B));
}

/* The next free entry of the kernel list; a list longer than MAX_KERNELS
 * fails the test instead of leaving kernels out. */
static kernel_under_test *next_slot(kernel_under_test *kernels, int *n_kernels) {
    if (*n_kernels >= MAX_KERNELS) {
        fprintf(stderr, "test_gpu_kernels: more than MAX_KERNELS (%d) kernels to test: raise it\n", MAX_KERNELS);
        exit(1);
    }
    return &kernels[(*n_kernels)++];
}

int main(void) {
    char why[WHY_LEN];
    if (!hgemm_check_sm90_available(why, sizeof why)) {
        printf("test_gpu_kernels: skipped: %s\n", why);
        return EXIT_SKIP;
    }
    printf("test_gpu_kernels: %s\n", why);

    /* AUTO first (by shape, V8 or V9: both fp32), then the table. */
    kernel_under_test kernels[MAX_KERNELS];
    int n_kernels = 0;
    const hgemm_kernel_info *auto_info = hgemm__kernel_find(hgemm__auto_kernel());
    *next_slot(kernels, &n_kernels) = (kernel_under_test){
        HGEMM_KERNEL_AUTO, "auto",
        auto_info && auto_info->acc == HGEMM_ACC_F16 ? HGEMM_CHECK_ATOL_ACC_F16 : HGEMM_CHECK_ATOL_ACC_F32,
        NULL, NULL, 1, 0};
    /* AUTO_F16ACC: V7 (fp16 accumulation) or V9 by shape; held to fp16's tolerance */
    *next_slot(kernels, &n_kernels) = (kernel_under_test){HGEMM_KERNEL_AUTO_F16ACC, "auto-f16acc",
                                               HGEMM_CHECK_ATOL_ACC_F16, NULL, NULL, 1, 0};
    for (int i = 0; i < hgemm__kernel_count(); i++) {
        const hgemm_kernel_info *info = hgemm__kernel_at(i);
        *next_slot(kernels, &n_kernels) = (kernel_under_test){
            info->id, info->name,
            info->acc == HGEMM_ACC_F16 ? HGEMM_CHECK_ATOL_ACC_F16 : HGEMM_CHECK_ATOL_ACC_F32, NULL, NULL,
            info->id == HGEMM_KERNEL_V9, 0};
    }
    for (int i = 0; i < hgemm__experiment_count(); i++) {
        const hgemm_kernel_info *info = hgemm__experiment_at(i);
        *next_slot(kernels, &n_kernels) = (kernel_under_test){
            info->id, info->name,
            info->acc == HGEMM_ACC_F16 ? HGEMM_CHECK_ATOL_ACC_F16 : HGEMM_CHECK_ATOL_ACC_F32, info, NULL, 0, 0};
    }
    /* The workspace path (stream-K): AUTO, V8 and its ablations once more
     * through hgemm_nt_ws, each twice per case (bitwise the same C). One
     * zeroed workspace serves them all: every call leaves it ready. */
    void *workspace = NULL;
    HGEMM_CHECK_CUDA(cudaMalloc(&workspace, HGEMM_WORKSPACE_BYTES));
    HGEMM_CHECK_CUDA(cudaMemset(workspace, 0, HGEMM_WORKSPACE_BYTES));
    const int table_end = n_kernels;
    for (int i = 0; i < table_end; i++) {
        if (kernels[i].id != HGEMM_KERNEL_AUTO && kernels[i].id != HGEMM_KERNEL_V8) continue;
        kernel_under_test kt = kernels[i];
        kernel_under_test *slot = next_slot(kernels, &n_kernels);
        static char names[MAX_KERNELS][WHY_LEN];
        char *name = names[slot - kernels];
        snprintf(name, WHY_LEN, "%s+ws", kt.name);
        kt.name = name;
        kt.workspace = workspace;
        kt.repeatable = 1;
        *slot = kt;
    }
    /* hgemm_nt_ex with an SM target (persistent grids capped, as for NCCL's
     * overlap): V8 on 20 and on 4 SMs with the workspace, V7 on 9 */
    const struct { hgemm_kernel id; const char *name; int sms; double atol; void *ws; } capped[] = {
        {HGEMM_KERNEL_V8, "v8+sm20", 20, HGEMM_CHECK_ATOL_ACC_F32, workspace},
        {HGEMM_KERNEL_V8, "v8+sm4", 4, HGEMM_CHECK_ATOL_ACC_F32, workspace},
        {HGEMM_KERNEL_V7, "v7+sm9", 9, HGEMM_CHECK_ATOL_ACC_F16, NULL},
    };
    for (size_t i = 0; i < sizeof capped / sizeof capped[0]; i++)
        *next_slot(kernels, &n_kernels) = (kernel_under_test){capped[i].id, capped[i].name, capped[i].atol, NULL,
                                                   capped[i].ws, capped[i].ws != NULL, capped[i].sms};

    cudaStream_t nonblocking;
    HGEMM_CHECK_CUDA(cudaStreamCreateWithFlags(&nonblocking, cudaStreamNonBlocking));
    for (int c = 0; c < CASE_COUNT; c++) run_case(&cases[c], kernels, n_kernels, nonblocking);
    HGEMM_CHECK_CUDA(cudaStreamDestroy(nonblocking));
    HGEMM_CHECK_CUDA(cudaFree(workspace));

    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
