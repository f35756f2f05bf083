/*
 * test_gpu_reference: the GPU half of hgemm_check against its CPU half.
 *   - the device random fill is bit-identical to the host generator;
 *   - the fp64 GPU reference equals the CPU reference on small ragged shapes
 *     (both sum in k order with exact products: the same bits are expected);
 *   - the GPU comparison (exact p99 by radix select) gives the same statistics
 *     as the host one (quickselect), and finds injected errors where they are;
 *   - guard-band checks see a write outside the region and nothing inside;
 *   - the same for bf16 and for every operand form (NN, NT, TN, TT) of the
 *     general reference: fills, reference bits, comparison, bf16 guards;
 *   - the reference handles 8192^3 in well under two seconds.
 * Exits 77 without an sm_90 GPU, 1 on any failure.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "check.h"
#include "test_check.h"

enum {
    EXIT_SKIP = 77,
    SEED_A = 11, SEED_B = 22, SEED_C = 33,
    GUARD_ROWS = 3,
    BIG = 8192,                   /* the reference's speed test: BIG^3 */
    BIG_LIMIT_MS = 2000,
    WHY_LEN = 256,
};

typedef struct ref_case {
    int64_t m, n, k, lda, ldb, ldc;
    double alpha, beta;
} ref_case;

static void *dmalloc(size_t bytes) {
    void *p = NULL;
    HGEMM_CHECK_CUDA(cudaMalloc(&p, bytes ? bytes : 1));
    return p;
}

static void *hmalloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (p == NULL) {
        fprintf(stderr, "out of host memory\n");
        exit(1);
    }
    return p;
}

static void same_stats(const char *what, const hgemm_check_stats *g, const hgemm_check_stats *c) {
    CHECK_MSG(g->count == c->count && g->failed == c->failed && g->nonfinite == c->nonfinite,
           "%s: count %lld/%lld failed %lld/%lld nonfinite %lld/%lld", what, (long long)g->count,
           (long long)c->count, (long long)g->failed, (long long)c->failed, (long long)g->nonfinite,
           (long long)c->nonfinite);
    CHECK_MSG(g->max_abs_err == c->max_abs_err, "%s: max %.17g vs %.17g", what, g->max_abs_err, c->max_abs_err);
    CHECK_MSG(g->p99_abs_err == c->p99_abs_err, "%s: p99 %.17g vs %.17g", what, g->p99_abs_err, c->p99_abs_err);
    CHECK_MSG(g->mean_abs_err == c->mean_abs_err ||
               fabs(g->mean_abs_err - c->mean_abs_err) <= 1e-12 * fabs(c->mean_abs_err),
           "%s: mean %.17g vs %.17g", what, g->mean_abs_err, c->mean_abs_err);
    CHECK_MSG(g->mismatches_shown == c->mismatches_shown, "%s: %d vs %d mismatches shown", what,
           g->mismatches_shown, c->mismatches_shown);
    for (int i = 0; i < g->mismatches_shown && i < c->mismatches_shown; i++) {
        const hgemm_check_mismatch *x = &g->mismatches[i], *y = &c->mismatches[i];
        CHECK_MSG(x->row == y->row && x->col == y->col &&
                   (x->got == y->got || (isnan(x->got) && isnan(y->got))) && x->want == y->want,
               "%s: mismatch %d at (%lld, %lld) vs (%lld, %lld)", what, i, (long long)x->row,
               (long long)x->col, (long long)y->row, (long long)y->col);
    }
}

static void test_case(const ref_case *t) {
    printf("reference %lld x %lld x %lld, lda %lld ldb %lld ldc %lld, alpha %g beta %g\n",
           (long long)t->m, (long long)t->n, (long long)t->k, (long long)t->lda, (long long)t->ldb,
           (long long)t->ldc, t->alpha, t->beta);
    size_t a_n = (size_t)(t->m * t->lda), b_n = (size_t)(t->n * t->ldb), c_n = (size_t)(t->m * t->ldc);
    size_t r_n = (size_t)(t->m * t->n);
    uint16_t *dA = (uint16_t *)dmalloc(a_n * 2), *dB = (uint16_t *)dmalloc(b_n * 2);
    uint16_t *dC = (uint16_t *)dmalloc(c_n * 2);
    double *dref = (double *)dmalloc(r_n * sizeof(double));
    uint16_t *A = (uint16_t *)hmalloc(a_n * 2), *B = (uint16_t *)hmalloc(b_n * 2);
    uint16_t *C = (uint16_t *)hmalloc(c_n * 2), *back = (uint16_t *)hmalloc((a_n > c_n ? a_n : c_n) * 2);
    double *ref = (double *)hmalloc(r_n * sizeof(double)), *gref = (double *)hmalloc(r_n * sizeof(double));

    /* NaN padding on both sides: neither reference may read it. */
    float sa = hgemm_check_unit_scale(t->k);
    hgemm_check_fill_pattern(dA, t->m, t->lda, t->lda, HGEMM_CHECK_NAN, 0);
    hgemm_check_fill_pattern(dB, t->n, t->ldb, t->ldb, HGEMM_CHECK_NAN, 0);
    hgemm_check_fill_pattern(dC, t->m, t->ldc, t->ldc, HGEMM_CHECK_NAN, 0);
    hgemm_check_fill_random(dA, t->m, t->k, t->lda, SEED_A, sa, 0);
    hgemm_check_fill_random(dB, t->n, t->k, t->ldb, SEED_B, sa, 0);
    hgemm_check_fill_random(dC, t->m, t->n, t->ldc, SEED_C, hgemm_check_unit_scale(1), 0);
    for (size_t i = 0; i < a_n; i++) A[i] = HGEMM_CHECK_NAN;
    for (size_t i = 0; i < b_n; i++) B[i] = HGEMM_CHECK_NAN;
    for (size_t i = 0; i < c_n; i++) C[i] = HGEMM_CHECK_NAN;
    hgemm_check_random_host(A, t->m, t->k, t->lda, SEED_A, sa);
    hgemm_check_random_host(B, t->n, t->k, t->ldb, SEED_B, sa);
    hgemm_check_random_host(C, t->m, t->n, t->ldc, SEED_C, hgemm_check_unit_scale(1));

    HGEMM_CHECK_CUDA(cudaMemcpy(back, dA, a_n * 2, cudaMemcpyDeviceToHost));
    CHECK_MSG(memcmp(back, A, a_n * 2) == 0, "device and host random A differ");
    HGEMM_CHECK_CUDA(cudaMemcpy(back, dC, c_n * 2, cudaMemcpyDeviceToHost));
    CHECK_MSG(memcmp(back, C, c_n * 2) == 0, "device and host random C differ");

    hgemm_check_reference(t->m, t->n, t->k, t->alpha, dA, t->lda, dB, t->ldb, t->beta, dC, t->ldc,
                          dref, t->n, 0);
    HGEMM_CHECK_CUDA(cudaMemcpy(gref, dref, r_n * sizeof(double), cudaMemcpyDeviceToHost));
    hgemm_check_reference_cpu(t->m, t->n, t->k, t->alpha, A, t->lda, B, t->ldb, t->beta, C, t->ldc,
                              ref, t->n);
    double worst = 0;
    int64_t differ = 0;
    for (size_t i = 0; i < r_n; i++) {
        double e = fabs(gref[i] - ref[i]);
        differ += gref[i] != ref[i];
        if (!(e <= 1e-12 * (1 + fabs(ref[i])))) worst = INFINITY;
        else worst = fmax(worst, e);
    }
    printf("  GPU vs CPU reference: %lld of %zu differ, max difference %.3g\n", (long long)differ,
           r_n, worst);
    CHECK_MSG(worst <= 1e-12 * 8, "GPU reference differs from the CPU reference: %.3g", worst);

    /* Comparison: C = the reference rounded to fp16, then three injected errors. */
    for (int64_t r = 0; r < t->m; r++)
        for (int64_t c = 0; c < t->n; c++) C[r * t->ldc + c] = hgemm_check_f32_to_f16((float)ref[r * t->n + c]);
    HGEMM_CHECK_CUDA(cudaMemcpy(dC, C, c_n * 2, cudaMemcpyHostToDevice));
    hgemm_check_stats gs, cs;
    int gok = hgemm_check_compare(dC, t->ldc, dref, t->n, t->m, t->n, 1e-2, 1e-2, &gs, 0);
    int cok = hgemm_check_compare_host(C, t->ldc, ref, t->n, t->m, t->n, 1e-2, 1e-2, &cs);
    CHECK_MSG(gok && cok, "rounded reference passes: %d %d", gok, cok);
    same_stats("rounded", &gs, &cs);
    printf("  rounded: mean %.3g p99 %.3g max %.3g\n", gs.mean_abs_err, gs.p99_abs_err, gs.max_abs_err);
    /* The host reference, passed from host memory, gives the same. */
    hgemm_check_compare(dC, t->ldc, ref, t->n, t->m, t->n, 1e-2, 1e-2, &gs, 0);
    same_stats("host ref", &gs, &cs);

    int64_t r1 = t->m / 2, c1 = t->n / 3, r2 = t->m - 1, c2 = t->n - 1;
    C[r1 * t->ldc + c1] = hgemm_check_f32_to_f16((float)ref[r1 * t->n + c1] + 0.5f);
    C[r2 * t->ldc + c2] = HGEMM_CHECK_NAN;
    C[0] = 0xfc00; /* -inf */
    HGEMM_CHECK_CUDA(cudaMemcpy(dC, C, c_n * 2, cudaMemcpyHostToDevice));
    gok = hgemm_check_compare(dC, t->ldc, dref, t->n, t->m, t->n, 1e-2, 1e-2, &gs, 0);
    cok = hgemm_check_compare_host(C, t->ldc, ref, t->n, t->m, t->n, 1e-2, 1e-2, &cs);
    int64_t want_failed = t->m * t->n >= 3 ? 3 : t->m * t->n;
    CHECK_MSG(!gok && !cok && gs.failed == want_failed, "injected: %lld failures, want %lld",
           (long long)gs.failed, (long long)want_failed);
    CHECK_MSG(gs.mismatches_shown >= 1 && gs.mismatches[0].row == 0 && gs.mismatches[0].col == 0,
           "the first mismatch is (0, 0)");
    CHECK_MSG(isinf(gs.max_abs_err), "max %g", gs.max_abs_err);
    same_stats("injected", &gs, &cs);
    hgemm_check_print_mismatches(stdout, &gs, "    expected: ");

    free(A);
    free(B);
    free(C);
    free(back);
    free(ref);
    free(gref);
    HGEMM_CHECK_CUDA(cudaFree(dA));
    HGEMM_CHECK_CUDA(cudaFree(dB));
    HGEMM_CHECK_CUDA(cudaFree(dC));
    HGEMM_CHECK_CUDA(cudaFree(dref));
}

/* Many equal errors and a long tail: p99 and max from the GPU equal the host's. */
static void test_p99_distribution(void) {
    enum { M = 517, N = 389, LDC = 392 };
    size_t c_n = (size_t)M * LDC;
    uint16_t *C = (uint16_t *)hmalloc(c_n * 2), *dC = (uint16_t *)dmalloc(c_n * 2);
    double *ref = (double *)hmalloc((size_t)M * N * sizeof(double));
    double *dref = (double *)dmalloc((size_t)M * N * sizeof(double));
    for (int r = 0; r < M; r++)
        for (int c = 0; c < N; c++) {
            uint64_t x = hgemm_check_hash(7, (uint64_t)r, (uint64_t)c);
            /* |ref| < 1 (fp16 spacing <= 2^-11); a third exact, the rest spread
             * over a few hundred distinct errors below 0.1, one in 1000 off by 2 */
            ref[r * N + c] = (double)(x % 1000) * 0x1p-10;
            double err = x % 3 == 0 ? 0.0 : (double)((x >> 20) % 400) * 0x1p-12;
            if ((x >> 40) % 1000 == 0) err = 2.0;
            C[r * LDC + c] = hgemm_check_f32_to_f16((float)(ref[r * N + c] + err));
        }
    HGEMM_CHECK_CUDA(cudaMemcpy(dC, C, c_n * 2, cudaMemcpyHostToDevice));
    HGEMM_CHECK_CUDA(cudaMemcpy(dref, ref, (size_t)M * N * sizeof(double), cudaMemcpyHostToDevice));
    hgemm_check_stats gs, cs;
    hgemm_check_compare(dC, LDC, dref, N, M, N, 1e-2, 1e-2, &gs, 0);
    hgemm_check_compare_host(C, LDC, ref, N, M, N, 1e-2, 1e-2, &cs);
    printf("distribution: mean %.6g p99 %.6g max %.6g, %lld failed\n", gs.mean_abs_err,
           gs.p99_abs_err, gs.max_abs_err, (long long)gs.failed);
    same_stats("distribution", &gs, &cs);
    CHECK_MSG(gs.failed > 0 && gs.p99_abs_err > 0 && gs.p99_abs_err < gs.max_abs_err,
           "a spread of errors: p99 %g max %g", gs.p99_abs_err, gs.max_abs_err);
    free(C);
    free(ref);
    HGEMM_CHECK_CUDA(cudaFree(dC));
    HGEMM_CHECK_CUDA(cudaFree(dref));
}

static void poke(const hgemm_check_guarded *g, int64_t row, int64_t col, uint16_t v) {
    HGEMM_CHECK_CUDA(cudaMemcpy((uint16_t *)g->C + row * g->ld + col, &v, 2, cudaMemcpyHostToDevice));
}

static void test_guard(void) {
    enum { M = 45, N = 37, LD = 48 };
    hgemm_check_guarded g;
    hgemm_check_guarded_alloc(&g, M, N, LD, GUARD_ROWS);
    hgemm_check_guard_report rep;
    CHECK_MSG(hgemm_check_guard_intact(&g, &rep, 0) && rep.bad == 0, "fresh allocation is intact");
    hgemm_check_fill_random(g.C, M, N, LD, SEED_C, 1.0f, 0);
    poke(&g, 0, 0, 0x1234);
    poke(&g, M - 1, N - 1, 0x1234);
    CHECK_MSG(hgemm_check_guard_intact(&g, &rep, 0), "writes inside the region are fine: %lld bad", (long long)rep.bad);
    poke(&g, -1, 5, 0x3c00);
    CHECK_MSG(!hgemm_check_guard_intact(&g, &rep, 0) && rep.bad == 1 && rep.first_row == -1 &&
               rep.first_col == 5 && rep.first_value == 0x3c00,
           "a write above C: bad %lld at (%lld, %lld)", (long long)rep.bad, (long long)rep.first_row,
           (long long)rep.first_col);
    poke(&g, -1, 5, HGEMM_CHECK_SENTINEL);
    poke(&g, 7, N, 0);          /* the ld padding */
    poke(&g, M + GUARD_ROWS - 1, LD - 1, 0); /* the last element of the allocation */
    CHECK_MSG(!hgemm_check_guard_intact(&g, &rep, 0) && rep.bad == 2 && rep.first_row == 7 &&
               rep.first_col == N,
           "writes right of and below C: bad %lld, first (%lld, %lld)", (long long)rep.bad,
           (long long)rep.first_row, (long long)rep.first_col);
    hgemm_check_guarded_reset(&g, 0);
    CHECK_MSG(hgemm_check_guard_intact(&g, &rep, 0), "reset restores the sentinel");
    hgemm_check_guarded_free(&g);
}

/* Stores the logical rows x k matrix src (ld k) on the device as an operand
 * in form op: as it is (N), or transposed (T: k x rows). Padding: NaN. */
static uint16_t *device_form(hgemm_dtype dt, hgemm_op op, const uint16_t *src, int64_t rows, int64_t k,
                             int64_t *ld, uint16_t **host) {
    const int64_t r = op == HGEMM_OP_N ? rows : k, c = op == HGEMM_OP_N ? k : rows;
    *ld = (c + 7) / 8 * 8 + 8;
    const size_t elems = (size_t)(r * *ld);
    uint16_t *x = (uint16_t *)hmalloc(elems * 2);
    for (size_t i = 0; i < elems; i++) x[i] = hgemm_check_nan_dt(dt);
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < k; j++) {
            if (op == HGEMM_OP_N) x[i * *ld + j] = src[i * k + j];
            else x[j * *ld + i] = src[i * k + j];
        }
    uint16_t *d = (uint16_t *)dmalloc(elems * 2);
    HGEMM_CHECK_CUDA(cudaMemcpy(d, x, elems * 2, cudaMemcpyHostToDevice));
    *host = x;
    return d;
}

/* fp16 and bf16, every form: the device fill equals the host one, the GPU
 * reference equals the CPU one bit for bit (and the NT form's, for the same
 * logical operands), the GPU comparison of a bf16 C equals the host's, and a
 * bf16 guarded C keeps the bf16 sentinel. */
static void test_forms(void) {
    enum { M = 70, N = 131, K = 45 };
    static const hgemm_dtype dtypes[2] = {HGEMM_DTYPE_F16, HGEMM_DTYPE_BF16};
    static const hgemm_op ops[2] = {HGEMM_OP_N, HGEMM_OP_T};
    for (int di = 0; di < 2; di++) {
        const hgemm_dtype dt = dtypes[di];
        const char *dn = dt == HGEMM_DTYPE_BF16 ? "bf16" : "fp16";
        /* The logical A (M x K), Bt (N x K) and C0 (M x N), made on the device. */
        uint16_t *dA = (uint16_t *)dmalloc((size_t)M * K * 2), *dBt = (uint16_t *)dmalloc((size_t)N * K * 2);
        uint16_t *dC = (uint16_t *)dmalloc((size_t)M * N * 2);
        hgemm_check_fill_random_dt(dt, dA, M, K, K, SEED_A, hgemm_check_unit_scale(K), 0);
        hgemm_check_fill_random_dt(dt, dBt, N, K, K, SEED_B, hgemm_check_unit_scale(K), 0);
        hgemm_check_fill_random_dt(dt, dC, M, N, N, SEED_C, hgemm_check_unit_scale(1), 0);
        uint16_t *A = (uint16_t *)hmalloc((size_t)M * K * 2), *Bt = (uint16_t *)hmalloc((size_t)N * K * 2);
        uint16_t *C = (uint16_t *)hmalloc((size_t)M * N * 2), *back = (uint16_t *)hmalloc((size_t)M * N * 2);
        hgemm_check_random_host_dt(dt, A, M, K, K, SEED_A, hgemm_check_unit_scale(K));
        hgemm_check_random_host_dt(dt, Bt, N, K, K, SEED_B, hgemm_check_unit_scale(K));
        hgemm_check_random_host_dt(dt, C, M, N, N, SEED_C, hgemm_check_unit_scale(1));
        HGEMM_CHECK_CUDA(cudaMemcpy(back, dA, (size_t)M * K * 2, cudaMemcpyDeviceToHost));
        CHECK_MSG(memcmp(back, A, (size_t)M * K * 2) == 0, "%s: device and host random A differ", dn);
        HGEMM_CHECK_CUDA(cudaMemcpy(back, dC, (size_t)M * N * 2, cudaMemcpyDeviceToHost));
        CHECK_MSG(memcmp(back, C, (size_t)M * N * 2) == 0, "%s: device and host random C differ", dn);

        double *dref = (double *)dmalloc((size_t)M * N * sizeof(double));
        double *nt = (double *)hmalloc((size_t)M * N * sizeof(double));
        double *gref = (double *)hmalloc((size_t)M * N * sizeof(double));
        double *cref = (double *)hmalloc((size_t)M * N * sizeof(double));
        hgemm_check_reference_cpu_ex(dt, HGEMM_OP_N, HGEMM_OP_T, M, N, K, -1.25, A, K, Bt, K, 0.5, C, N, nt, N);
        for (int fa = 0; fa < 2; fa++)
            for (int fb = 0; fb < 2; fb++) {
                const hgemm_op oa = ops[fa], ob = ops[fb];
                int64_t lda, ldb;
                uint16_t *hA, *hB;
                uint16_t *fA = device_form(dt, oa, A, M, K, &lda, &hA);
                uint16_t *fB = device_form(dt, ob == HGEMM_OP_N ? HGEMM_OP_T : HGEMM_OP_N, Bt, N, K, &ldb, &hB);
                hgemm_check_reference_ex(dt, oa, ob, M, N, K, -1.25, fA, lda, fB, ldb, 0.5, dC, N, dref, N, 0);
                HGEMM_CHECK_CUDA(cudaMemcpy(gref, dref, (size_t)M * N * sizeof(double), cudaMemcpyDeviceToHost));
                hgemm_check_reference_cpu_ex(dt, oa, ob, M, N, K, -1.25, hA, lda, hB, ldb, 0.5, C, N, cref, N);
                int64_t vs_cpu = 0, vs_nt = 0;
                for (int64_t i = 0; i < (int64_t)M * N; i++) {
                    vs_cpu += gref[i] != cref[i];
                    vs_nt += gref[i] != nt[i];
                }
                printf("reference %s %c%c: %lld outputs differ from the CPU's, %lld from NT's\n", dn,
                       oa == HGEMM_OP_N ? 'N' : 'T', ob == HGEMM_OP_N ? 'N' : 'T', (long long)vs_cpu,
                       (long long)vs_nt);
                CHECK_MSG(vs_cpu == 0 && vs_nt == 0, "%s form %d%d: %lld / %lld differ", dn, fa, fb,
                          (long long)vs_cpu, (long long)vs_nt);
                free(hA);
                free(hB);
                HGEMM_CHECK_CUDA(cudaFree(fA));
                HGEMM_CHECK_CUDA(cudaFree(fB));
            }

        /* Comparison: C = the reference rounded to dt, then injected errors. */
        for (int64_t i = 0; i < (int64_t)M * N; i++) C[i] = hgemm_check_f32_to_dt(dt, (float)nt[i]);
        C[5 * N + 7] = hgemm_check_f32_to_dt(dt, (float)nt[5 * N + 7] + 0.5f);
        C[(M - 1) * N + N - 1] = hgemm_check_nan_dt(dt);
        HGEMM_CHECK_CUDA(cudaMemcpy(dC, C, (size_t)M * N * 2, cudaMemcpyHostToDevice));
        HGEMM_CHECK_CUDA(cudaMemcpy(dref, nt, (size_t)M * N * sizeof(double), cudaMemcpyHostToDevice));
        hgemm_check_stats gs, cs;
        int gok = hgemm_check_compare_dt(dt, dC, N, dref, N, M, N, HGEMM_CHECK_ATOL_ACC_F32, HGEMM_CHECK_RTOL,
                                         &gs, 0);
        int cok = hgemm_check_compare_host_dt(dt, C, N, nt, N, M, N, HGEMM_CHECK_ATOL_ACC_F32, HGEMM_CHECK_RTOL,
                                              &cs);
        CHECK_MSG(!gok && !cok && gs.failed == 2 && gs.nonfinite == 1, "%s injected: %lld failed", dn,
                  (long long)gs.failed);
        same_stats(dn, &gs, &cs);
        hgemm_check_print_mismatches(stdout, &gs, "    expected: ");

        /* A bf16 (or fp16) guarded C: its own sentinel, checked and restored. */
        hgemm_check_guarded g;
        hgemm_check_guarded_alloc_dt(dt, &g, 9, 13, 24, GUARD_ROWS);
        hgemm_check_guard_report rep;
        CHECK_MSG(g.sentinel == hgemm_check_sentinel_dt(dt) && hgemm_check_guard_intact(&g, &rep, 0),
                  "%s guarded: fresh allocation intact", dn);
        hgemm_check_fill_nan_dt(dt, g.C, 9, 13, 24, 0);
        CHECK_MSG(hgemm_check_guard_intact(&g, &rep, 0), "%s guarded: the region may change", dn);
        hgemm_check_fill_sentinel_dt(dt == HGEMM_DTYPE_BF16 ? HGEMM_DTYPE_F16 : HGEMM_DTYPE_BF16,
                                     (uint16_t *)g.C + 8 * 24 + 13, 1, 1, 1, 0);
        CHECK_MSG(!hgemm_check_guard_intact(&g, &rep, 0) && rep.bad == 1 && rep.first_row == 8 &&
                      rep.first_col == 13,
                  "%s guarded: the other type's sentinel in the padding is a change", dn);
        hgemm_check_guarded_reset(&g, 0);
        CHECK_MSG(hgemm_check_guard_intact(&g, &rep, 0), "%s guarded: reset", dn);
        hgemm_check_guarded_free(&g);

        free(A);
        free(Bt);
        free(C);
        free(back);
        free(nt);
        free(gref);
        free(cref);
        HGEMM_CHECK_CUDA(cudaFree(dA));
        HGEMM_CHECK_CUDA(cudaFree(dBt));
        HGEMM_CHECK_CUDA(cudaFree(dC));
        HGEMM_CHECK_CUDA(cudaFree(dref));
    }
}

static void test_reference_speed(void) {
    size_t elems = (size_t)BIG * BIG;
    uint16_t *dA = (uint16_t *)dmalloc(elems * 2), *dB = (uint16_t *)dmalloc(elems * 2);
    double *dref = (double *)dmalloc(elems * sizeof(double));
    float s = hgemm_check_unit_scale(BIG);
    hgemm_check_fill_random(dA, BIG, BIG, BIG, SEED_A, s, 0);
    hgemm_check_fill_random(dB, BIG, BIG, BIG, SEED_B, s, 0);
    cudaEvent_t start, stop;
    HGEMM_CHECK_CUDA(cudaEventCreate(&start));
    HGEMM_CHECK_CUDA(cudaEventCreate(&stop));
    HGEMM_CHECK_CUDA(cudaEventRecord(start, 0));
    hgemm_check_reference(BIG, BIG, BIG, 1.0, dA, BIG, dB, BIG, 0.0, NULL, 0, dref, BIG, 0);
    HGEMM_CHECK_CUDA(cudaEventRecord(stop, 0));
    HGEMM_CHECK_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    HGEMM_CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    /* One output checked on the CPU, the last (ragged nothing, but far from the start). */
    uint16_t *a = (uint16_t *)hmalloc((size_t)BIG * 2), *b = (uint16_t *)hmalloc((size_t)BIG * 2);
    HGEMM_CHECK_CUDA(cudaMemcpy(a, dA + (size_t)(BIG - 1) * BIG, (size_t)BIG * 2, cudaMemcpyDeviceToHost));
    HGEMM_CHECK_CUDA(cudaMemcpy(b, dB + (size_t)(BIG - 2) * BIG, (size_t)BIG * 2, cudaMemcpyDeviceToHost));
    double one, got;
    hgemm_check_reference_cpu(1, 1, BIG, 1.0, a, BIG, b, BIG, 0.0, NULL, 0, &one, 1);
    HGEMM_CHECK_CUDA(cudaMemcpy(&got, dref + elems - 2, sizeof got, cudaMemcpyDeviceToHost));
    printf("reference %d^3: %.1f ms (%.2f TFLOP/s fp64); ref[%d, %d] = %.17g (CPU %.17g)\n", BIG,
           ms, 2.0 * BIG * BIG * (double)BIG / (ms * 1e-3) / 1e12, BIG - 1, BIG - 2, got, one);
    CHECK_MSG(ms < BIG_LIMIT_MS, "the reference took %.1f ms at %d^3", ms, BIG);
    CHECK_MSG(got == one, "GPU %.17g vs CPU %.17g", got, one);
    free(a);
    free(b);
    HGEMM_CHECK_CUDA(cudaEventDestroy(start));
    HGEMM_CHECK_CUDA(cudaEventDestroy(stop));
    HGEMM_CHECK_CUDA(cudaFree(dA));
    HGEMM_CHECK_CUDA(cudaFree(dB));
    HGEMM_CHECK_CUDA(cudaFree(dref));
}

int main(void) {
    char why[WHY_LEN];
    if (!hgemm_check_sm90_available(why, sizeof why)) {
        printf("test_gpu_reference: skipped: %s\n", why);
        return EXIT_SKIP;
    }
    static const ref_case cases[] = {
        {37, 45, 29, 32, 40, 48, 1.0, 0.0},
        {130, 67, 300, 312, 304, 72, 0.5, -1.5},
        {1, 1, 1, 8, 8, 8, 1.0, 0.0},
        {65, 129, 17, 24, 24, 136, -2.0, 0.25},
        {64, 64, 0, 8, 8, 64, 1.0, -1.5},   /* k == 0: beta * C0 */
        {33, 17, 40, 40, 40, 24, 0.0, 2.0}, /* alpha == 0: beta * C0, A and B not read */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) test_case(&cases[i]);
    test_p99_distribution();
    test_guard();
    test_forms();
    test_reference_speed();
    return check_finish();
}
