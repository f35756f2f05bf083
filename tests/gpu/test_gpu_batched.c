/*
 * test_gpu_batched: hgemm_gemm's batches (fp16, NT) against the fp64 GPU
 * reference, entry by entry, for AUTO, V8 and V9: C's entries with gap rows
 * between them that must keep the sentinel, A's entries padded, B shared by
 * every entry (stride 0) or not, beta 0 on NaN-filled C and alpha/beta on
 * random C, and a guard band around the whole batch. AUTO and V8 run each
 * case once more with a workspace (hgemm_nt_options), twice, and the two
 * results must be bitwise the same: there a batch's tiles are one sequence
 * that split-K and the tail split cut across entries. Also the calls that
 * must be refused on a real device (an overlap only a batch has).
 *
 * One line per (kernel, case); "N passed, N failed" last. Exits 77 without
 * an sm_90 GPU and 1 on any failure.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "check.h"
#include "internal.h"

enum {
    EXIT_SKIP = 77,
    GUARD_ROWS = 8,
    GAP_ROWS = 3,       /* sentinel rows between two entries of C */
    A_PAD_ROWS = 2,     /* unused rows between two entries of A */
    SEED_A = 111, SEED_B = 222, SEED_C = 333,
    WHY_LEN = 256,
};

typedef struct batch_case {
    const char *what;
    int64_t m, n, k, batch;
    int shared_b;       /* stride_b = 0: one B for every entry */
    float alpha, beta;  /* beta 0: C starts NaN */
} batch_case;

static const batch_case cases[] = {
    {"batched", 128, 256, 128, 4, 0, 1.0f, 0.0f},
    {"batched ragged", 77, 130, 72, 3, 0, 0.5f, -1.5f},
    {"decode batch", 1, 1032, 520, 5, 1, 1.0f, 0.0f},
    {"attention-like", 64, 64, 128, 16, 0, 1.0f, 0.0f},
    {"shared B", 300, 200, 100, 2, 1, 2.0f, 0.5f},
    /* With the workspace, on 132 SMs (66 clusters): 18 narrow one-block
     * tiles of 65 k-tiles, split-K in 7 slices reduced in the kernel, each
     * tile's C in its own entry */
    {"split-k", 130, 264, 4160, 3, 0, 0.5f, 0.25f},
    /* the tail split across entries: 272 wide cluster tiles, 4 whole
     * rounds and the last 8 (entry 16's) in quarters of 16 and 17 k-tiles;
     * 280 narrow ones (9 tile rows: the last cluster row's lower block has
     * none), the last 16 in halves, with beta 0 on NaN */
    {"tail split", 1000, 1024, 4100, 17, 0, 0.5f, -1.5f},
    {"tail split", 1100, 1000, 2100, 7, 0, 1.0f, 0.0f},
};

static int passed = 0, failed = 0;

/* One case through `kernel`; with `workspace` (HGEMM_WORKSPACE_BYTES, zeroed)
 * twice, the second C compared bitwise with the first. */
static void run(const batch_case *t, hgemm_kernel kernel, const char *name, void *workspace) {
    const int64_t m = t->m, n = t->n, k = t->k, batch = t->batch;
    const int64_t lda = (k + 7) / 8 * 8, ldb = lda, ldc = (n + 7) / 8 * 8 + 8;
    const int64_t stride_a = (m + A_PAD_ROWS) * lda;
    const int64_t stride_b = t->shared_b ? 0 : n * ldb;
    const int64_t rows_c = m + GAP_ROWS, stride_c = rows_c * ldc;
    void *A = NULL, *B = NULL;
    HGEMM_CHECK_CUDA(cudaMalloc(&A, (size_t)(batch * stride_a) * 2));
    HGEMM_CHECK_CUDA(cudaMalloc(&B, (size_t)((t->shared_b ? 1 : batch) * n * ldb) * 2));
    hgemm_check_fill_pattern(A, batch * (m + A_PAD_ROWS), lda, lda, HGEMM_CHECK_NAN, 0);
    const float s = hgemm_check_unit_scale(k);
    for (int64_t b = 0; b < batch; b++) {
        hgemm_check_fill_random((char *)A + b * stride_a * 2, m, k, lda, SEED_A + b, s, 0);
        if (!t->shared_b || b == 0)
            hgemm_check_fill_random((char *)B + b * stride_b * 2, n, k, ldb, SEED_B + b, s, 0);
    }
    /* C: the whole batch as one guarded region of batch * rows_c rows; each
     * entry's m x n block is filled, the gap rows keep the sentinel. */
    hgemm_check_guarded g;
    hgemm_check_guarded_alloc(&g, batch * rows_c, n, ldc, GUARD_ROWS);
    for (int64_t b = 0; b < batch; b++) {
        void *cb = (char *)g.C + b * stride_c * 2;
        if (t->beta != 0.0f) hgemm_check_fill_random(cb, m, n, ldc, SEED_C + b, hgemm_check_unit_scale(1), 0);
        else hgemm_check_fill_pattern(cb, m, n, ldc, HGEMM_CHECK_NAN, 0);
    }
    double *ref = NULL;
    HGEMM_CHECK_CUDA(cudaMalloc((void **)&ref, (size_t)(batch * m * n) * sizeof(double)));
    for (int64_t b = 0; b < batch; b++)
        hgemm_check_reference(m, n, k, t->alpha, (char *)A + b * stride_a * 2, lda,
                              (char *)B + b * stride_b * 2, ldb, t->beta,
                              (char *)g.C + b * stride_c * 2, ldc, ref + b * m * n, n, 0);
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());

    const hgemm_nt_options options = {workspace, workspace ? HGEMM_WORKSPACE_BYTES : 0, 0, NULL, 0};
    const int calls = workspace ? 2 : 1;
    const size_t elems = (size_t)(batch * rows_c * ldc);
    /* C as the last call left it, and with a workspace as the first did */
    uint16_t *host = (uint16_t *)malloc(elems * 2 * (size_t)calls);
    if (host == NULL) {
        fprintf(stderr, "out of host memory\n");
        exit(1);
    }
    uint16_t *first = calls > 1 ? host + elems : NULL;
    /* the second call reads the same C the first did (beta != 0: a copy of
     * it, restored in between) */
    void *c_saved = NULL;
    int64_t differ = 0;
    if (calls > 1) {
        HGEMM_CHECK_CUDA(cudaMalloc(&c_saved, elems * 2));
        HGEMM_CHECK_CUDA(cudaMemcpy(c_saved, g.C, elems * 2, cudaMemcpyDeviceToDevice));
    }
    hgemm_status st = HGEMM_SUCCESS;
    for (int call = 0; call < calls && st == HGEMM_SUCCESS; call++) {
        if (call > 0) {
            HGEMM_CHECK_CUDA(cudaMemcpy(first, g.C, elems * 2, cudaMemcpyDeviceToHost));
            HGEMM_CHECK_CUDA(cudaMemcpy(g.C, c_saved, elems * 2, cudaMemcpyDeviceToDevice));
        }
        st = hgemm_gemm(kernel, HGEMM_DTYPE_F16, HGEMM_OP_N, HGEMM_OP_T, m, n, k, t->alpha, A, lda, stride_a, B,
                        ldb, stride_b, t->beta, g.C, ldc, stride_c, batch, workspace ? &options : NULL, 0);
        HGEMM_CHECK_LAUNCH();
        HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    }
    int ok = st == HGEMM_SUCCESS;
    double worst = 0.0;
    for (int64_t b = 0; ok && b < batch; b++) {
        hgemm_check_stats stats;
        if (!hgemm_check_compare((char *)g.C + b * stride_c * 2, ldc, ref + b * m * n, n, m, n,
                                 HGEMM_CHECK_ATOL_ACC_F32, HGEMM_CHECK_RTOL, &stats, 0)) {
            printf("     entry %lld: %lld elements off\n", (long long)b, (long long)stats.failed);
            hgemm_check_print_mismatches(stdout, &stats, "     ");
            ok = 0;
        }
        if (stats.max_abs_err > worst) worst = stats.max_abs_err;
    }
    /* The gap rows between entries (and the padding columns) keep the
     * sentinel; with the workspace, both calls wrote the same bits. */
    HGEMM_CHECK_CUDA(cudaMemcpy(host, g.C, elems * 2, cudaMemcpyDeviceToHost));
    int64_t touched = 0;
    for (int64_t r = 0; r < batch * rows_c; r++)
        for (int64_t c = 0; c < ldc; c++)
            if ((r % rows_c >= m || c >= n) && host[r * ldc + c] != HGEMM_CHECK_SENTINEL) touched++;
    if (first != NULL && st == HGEMM_SUCCESS)
        for (size_t i = 0; i < elems; i++) differ += host[i] != first[i];
    if (differ) {
        printf("     the second call's C differs from the first's in %lld elements\n", (long long)differ);
        ok = 0;
    }
    free(host);
    if (c_saved) HGEMM_CHECK_CUDA(cudaFree(c_saved));
    hgemm_check_guard_report rep;
    const int intact = hgemm_check_guard_intact(&g, &rep, 0) && touched == 0;
    printf("%s %-7s %-15s %4lld x %4lld x %4lld batch %2lld %s  max %.2e\n",
           ok && intact ? "PASS" : "FAIL", name, t->what, (long long)m, (long long)n, (long long)k,
           (long long)batch, t->shared_b ? "B shared" : "        ", worst);
    if (st != HGEMM_SUCCESS) printf("     hgemm_gemm returned %d: %s\n", (int)st, hgemm_status_string(st));
    if (!intact)
        printf("     %lld elements between the entries and %lld around the batch changed\n",
               (long long)touched, (long long)rep.bad);
    ok && intact ? passed++ : failed++;
    hgemm_check_guarded_free(&g);
    HGEMM_CHECK_CUDA(cudaFree(ref));
    HGEMM_CHECK_CUDA(cudaFree(A));
    HGEMM_CHECK_CUDA(cudaFree(B));
}

/* A batch whose second C entry overlaps the first is refused before any launch. */
static void refused(void) {
    void *buf = NULL;
    HGEMM_CHECK_CUDA(cudaMalloc(&buf, 1 << 20));
    const int64_t m = 16, n = 64, k = 64, ld = 64;
    char *A = (char *)buf, *B = A + 64 * 1024, *C = A + 128 * 1024;
    hgemm_status st = hgemm_gemm(HGEMM_KERNEL_AUTO, HGEMM_DTYPE_F16, HGEMM_OP_N, HGEMM_OP_T, m, n, k,
                                 1.0f, A, ld, m * ld, B, ld, 0, 0.0f, C, ld, (m - 1) * ld, 2, NULL, 0);
    const int ok = st == HGEMM_ERROR_INVALID_VALUE;
    printf("%s        overlapping entries of C refused (status %d)\n", ok ? "PASS" : "FAIL", (int)st);
    ok ? passed++ : failed++;
    HGEMM_CHECK_CUDA(cudaFree(buf));
}

int main(void) {
    char why[WHY_LEN];
    if (!hgemm_check_sm90_available(why, sizeof why)) {
        printf("test_gpu_batched: skipped: %s\n", why);
        return EXIT_SKIP;
    }
    printf("test_gpu_batched: %s\n", why);
    /* one zeroed workspace for every call: each leaves it ready */
    void *workspace = NULL;
    HGEMM_CHECK_CUDA(cudaMalloc(&workspace, HGEMM_WORKSPACE_BYTES));
    HGEMM_CHECK_CUDA(cudaMemset(workspace, 0, HGEMM_WORKSPACE_BYTES));
    const struct { hgemm_kernel id; const char *name; int ws; } kernels[] = {
        {HGEMM_KERNEL_AUTO, "auto", 0}, {HGEMM_KERNEL_V8, "v8", 0}, {HGEMM_KERNEL_V9, "v9", 0},
        {HGEMM_KERNEL_AUTO, "auto+ws", 1}, {HGEMM_KERNEL_V8, "v8+ws", 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
            run(&cases[c], kernels[i].id, kernels[i].name, kernels[i].ws ? workspace : NULL);
    HGEMM_CHECK_CUDA(cudaFree(workspace));
    refused();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
