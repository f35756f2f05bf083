/*
 * test_gpu_grouped: hgemm_grouped (include/hgemm.h), each group against the
 * fp64 reference of its rows, with
 *   - group sizes 0, 1, 127, 128, 129 and larger, rows past the last end,
 *     n and k ragged against the tiles, padded lda and ldc, B in both
 *     layouts, fp16 and bf16, alpha and beta, one group holding every row,
 *     every group the same B (stride_b 0), n <= 128 (the narrow tile);
 *   - C filled with a sentinel before the call: rows in no group must keep
 *     it bitwise, and with beta 0 C is NaN (never read);
 *   - offsets the host cannot check: decreasing, past total_rows (clamped,
 *     include/hgemm.h);
 *   - k == 0 and alpha == 0: C = beta * C in the groups only;
 *   - a CUDA graph captured once and replayed after the offsets changed on
 *     the device: the new groups;
 *   - hgemm_grouped_k (the weight gradients, grouped along k): group sizes
 *     0, 1, 63 and more (a group's last k-tile reaching into the next
 *     group's rows), clamped offsets, NaN C with beta 0, an fp32 C with
 *     beta 1, no rows at all; C's padding between rows and groups untouched.
 * Exit 77 (skipped) without an sm_90 GPU.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "check.h"
#include "hgemm.h"

enum { EXIT_SKIP = 77, MAX_G = 16, SEED_A = 41, SEED_B = 42, SEED_C = 43 };

typedef struct grouped_case {
    const char *what;
    hgemm_dtype dtype;
    hgemm_op op_b;
    int64_t rows, n, k, groups;
    int32_t offs[MAX_G];
    float alpha, beta;
    int64_t pad_a, pad_c; /* extra elements of lda and ldc */
    int shared_b;         /* stride_b 0 */
    int nan_c;            /* beta 0 and C NaN before the call */
} grouped_case;

static const grouped_case cases[] = {
    {"sizes 0,1,127..129", HGEMM_DTYPE_F16, HGEMM_OP_T, 1100, 520, 1000, 8,
     {0, 1, 128, 256, 385, 385, 900, 1000}, 1.5f, 0.5f, 8, 16, 0, 0},
    {"bf16, B k x n", HGEMM_DTYPE_BF16, HGEMM_OP_N, 1100, 520, 1000, 8,
     {0, 1, 128, 256, 385, 385, 900, 1000}, 1.0f, -1.0f, 0, 8, 0, 0},
    {"one group", HGEMM_DTYPE_BF16, HGEMM_OP_T, 777, 1024, 512, 1, {777}, 1.0f, 0.0f, 0, 0, 0, 1},
    {"narrow n, NaN C", HGEMM_DTYPE_F16, HGEMM_OP_N, 600, 72, 264, 5, {10, 200, 200, 450, 600}, 1.0f, 0.0f, 0, 8, 0, 1},
    {"shared B", HGEMM_DTYPE_F16, HGEMM_OP_T, 500, 264, 136, 4, {100, 200, 300, 500}, 2.0f, 0.25f, 0, 0, 1, 0},
    {"decreasing, too far", HGEMM_DTYPE_BF16, HGEMM_OP_T, 400, 256, 200, 5, {150, 60, 300, 280, 9999}, 1.0f, 0.5f, 0, 0, 0, 0},
    {"k 0", HGEMM_DTYPE_F16, HGEMM_OP_T, 300, 136, 0, 3, {100, 100, 250}, 1.0f, -2.0f, 0, 0, 0, 0},
    {"alpha 0", HGEMM_DTYPE_BF16, HGEMM_OP_N, 300, 136, 72, 3, {50, 150, 250}, 0.0f, 0.5f, 0, 0, 0, 0},
    {"experts 8 of 64", HGEMM_DTYPE_BF16, HGEMM_OP_T, 2048, 2048, 1024, 16,
     {96, 300, 301, 512, 700, 700, 960, 1100, 1333, 1400, 1600, 1601, 1790, 1900, 2000, 2048}, 1.0f, 0.0f, 0, 0, 0, 0},
};

/* Group g's rows as the kernel reads the offsets: the running largest end, clamped. */
static void group_rows(const int32_t *offs, int64_t groups, int64_t rows, int64_t *start, int64_t *end) {
    int64_t high = 0;
    for (int64_t g = 0; g < groups; g++) {
        start[g] = high < rows ? high : rows;
        if (offs[g] > high) high = offs[g];
        end[g] = high < rows ? high : rows;
    }
}

typedef struct buffers {
    void *A, *B, *C, *C0;
    int32_t *offs;
    double *ref;
    int64_t lda, ldb, ldc, stride_b;
} buffers;

static void make(buffers *b, const grouped_case *t) {
    const int64_t b_rows = t->op_b == HGEMM_OP_N ? t->k : t->n, b_cols = t->op_b == HGEMM_OP_N ? t->n : t->k;
    b->lda = (t->k + 7) / 8 * 8 + t->pad_a;
    if (b->lda < 8) b->lda = 8;
    b->ldb = b_cols > 8 ? (b_cols + 7) / 8 * 8 : 8; /* at least 1 even for k == 0 */
    b->ldc = (t->n + 7) / 8 * 8 + t->pad_c;
    b->stride_b = t->shared_b ? 0 : b_rows * b->ldb;
    const int64_t entries = t->shared_b ? 1 : t->groups;
    HGEMM_CHECK_CUDA(cudaMalloc(&b->A, (size_t)(t->rows * b->lda) * 2 + 16));
    HGEMM_CHECK_CUDA(cudaMalloc(&b->B, (size_t)(entries * b_rows * b->ldb) * 2 + 16));
    HGEMM_CHECK_CUDA(cudaMalloc(&b->C, (size_t)(t->rows * b->ldc) * 2));
    HGEMM_CHECK_CUDA(cudaMalloc(&b->C0, (size_t)(t->rows * b->ldc) * 2));
    HGEMM_CHECK_CUDA(cudaMalloc((void **)&b->offs, MAX_G * sizeof(int32_t)));
    HGEMM_CHECK_CUDA(cudaMalloc((void **)&b->ref, (size_t)(t->rows * t->n) * sizeof(double) + 8));
    const float scale = hgemm_check_unit_scale(t->k);
    if (t->k > 0) hgemm_check_fill_random_dt(t->dtype, b->A, t->rows, t->k, b->lda, SEED_A, scale, 0);
    for (int64_t e = 0; e < entries && t->k > 0; e++)
        hgemm_check_fill_random_dt(t->dtype, (char *)b->B + e * b_rows * b->ldb * 2, b_rows, b_cols, b->ldb,
                                   SEED_B + (uint64_t)e, scale, 0);
    if (t->nan_c) hgemm_check_fill_nan_dt(t->dtype, b->C0, t->rows, t->n, b->ldc, 0);
    else hgemm_check_fill_random_dt(t->dtype, b->C0, t->rows, t->n, b->ldc, SEED_C, hgemm_check_unit_scale(1), 0);
    HGEMM_CHECK_CUDA(cudaMemcpy(b->offs, t->offs, (size_t)t->groups * sizeof(int32_t), cudaMemcpyHostToDevice));
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
}

static void release(buffers *b) {
    HGEMM_CHECK_CUDA(cudaFree(b->A));
    HGEMM_CHECK_CUDA(cudaFree(b->B));
    HGEMM_CHECK_CUDA(cudaFree(b->C));
    HGEMM_CHECK_CUDA(cudaFree(b->C0));
    HGEMM_CHECK_CUDA(cudaFree(b->offs));
    HGEMM_CHECK_CUDA(cudaFree(b->ref));
}

/* C (after a call with offsets `offs`) against the reference per group, and
 * every row in no group bitwise C0's. */
static int check(const grouped_case *t, const buffers *b, const int32_t *offs, double *worst) {
    int64_t start[MAX_G], end[MAX_G];
    group_rows(offs, t->groups, t->rows, start, end);
    const int64_t b_rows = t->op_b == HGEMM_OP_N ? t->k : t->n;
    int ok = 1;
    char *in_group = calloc((size_t)t->rows, 1);
    for (int64_t g = 0; g < t->groups; g++) {
        const int64_t r0 = start[g], r = end[g] - start[g];
        for (int64_t i = r0; i < r0 + r; i++) in_group[i] = 1;
        if (r == 0) continue;
        const void *Bg = (const char *)b->B + (t->shared_b ? 0 : g * b_rows * b->ldb * 2);
        const double beta = t->nan_c ? 0.0 : t->beta;
        hgemm_check_reference_ex(t->dtype, HGEMM_OP_N, t->op_b, r, t->n, t->k, t->alpha,
                                 (const char *)b->A + r0 * b->lda * 2, b->lda, Bg, b->ldb, beta,
                                 (const char *)b->C0 + r0 * b->ldc * 2, b->ldc, b->ref, t->n, 0);
        hgemm_check_stats st;
        if (!hgemm_check_compare_dt(t->dtype, (const char *)b->C + r0 * b->ldc * 2, b->ldc, b->ref, t->n, r, t->n,
                                    HGEMM_CHECK_ATOL_ACC_F32, HGEMM_CHECK_RTOL, &st, 0)) {
            printf("     group %lld (rows %lld..%lld): %lld of %lld off\n", (long long)g, (long long)r0,
                   (long long)(r0 + r), (long long)st.failed, (long long)st.count);
            hgemm_check_print_mismatches(stdout, &st, "     ");
            ok = 0;
        }
        if (st.max_abs_err > *worst) *worst = st.max_abs_err;
    }
    /* rows in no group: untouched */
    const size_t row_bytes = (size_t)t->n * 2;
    uint16_t *got = malloc(row_bytes), *was = malloc(row_bytes);
    int64_t touched = 0;
    for (int64_t i = 0; i < t->rows; i++) {
        if (in_group[i]) continue;
        HGEMM_CHECK_CUDA(cudaMemcpy(got, (const char *)b->C + i * b->ldc * 2, row_bytes, cudaMemcpyDeviceToHost));
        HGEMM_CHECK_CUDA(cudaMemcpy(was, (const char *)b->C0 + i * b->ldc * 2, row_bytes, cudaMemcpyDeviceToHost));
        if (memcmp(got, was, row_bytes) != 0) touched++;
    }
    if (touched) printf("     %lld rows in no group were written\n", (long long)touched);
    free(got);
    free(was);
    free(in_group);
    return ok && touched == 0;
}

static hgemm_status call(const grouped_case *t, const buffers *b, cudaStream_t stream) {
    return hgemm_grouped(HGEMM_KERNEL_AUTO, t->dtype, t->op_b, t->rows, t->n, t->k, t->groups, b->offs, t->alpha,
                         b->A, b->lda, b->B, b->ldb, b->stride_b, t->nan_c ? 0.0f : t->beta, b->C, b->ldc, NULL,
                         stream);
}

static int run_case(const grouped_case *t) {
    buffers b;
    make(&b, t);
    HGEMM_CHECK_CUDA(cudaMemcpy(b.C, b.C0, (size_t)(t->rows * b.ldc) * 2, cudaMemcpyDeviceToDevice));
    const hgemm_status st = call(t, &b, 0);
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    double worst = 0.0;
    const int pass = st == HGEMM_SUCCESS && check(t, &b, t->offs, &worst);
    printf("%s %-20s %s %c %5lld x %5lld x %5lld, %lld groups, alpha %g beta %g  max %.2e\n", pass ? "PASS" : "FAIL",
           t->what, t->dtype == HGEMM_DTYPE_BF16 ? "bf16" : "fp16", t->op_b == HGEMM_OP_T ? 'T' : 'N',
           (long long)t->rows, (long long)t->n, (long long)t->k, (long long)t->groups, (double)t->alpha,
           (double)t->beta, worst);
    if (st != HGEMM_SUCCESS) printf("     hgemm_grouped returned %s\n", hgemm_status_string(st));
    release(&b);
    return !pass;
}

/* Captured once, replayed with other offsets written on the device. */
static int graph_case(void) {
    grouped_case t = cases[0];
    t.what = "graph, offsets changed";
    buffers b;
    make(&b, &t);
    cudaStream_t s;
    HGEMM_CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    HGEMM_CHECK_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    const hgemm_status st = call(&t, &b, s);
    HGEMM_CHECK_CUDA(cudaStreamEndCapture(s, &graph));
    int pass = st == HGEMM_SUCCESS;
    static const int32_t later[3][MAX_G] = {{0, 0, 0, 0, 0, 0, 0, 1100},
                                            {137, 274, 411, 548, 685, 822, 959, 1096},
                                            {1100, 1100, 1100, 1100, 1100, 1100, 1100, 1100}};
    if (pass) {
        HGEMM_CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
        for (int r = 0; r < 3 && pass; r++) {
            HGEMM_CHECK_CUDA(cudaMemcpyAsync(b.offs, later[r], (size_t)t.groups * sizeof(int32_t),
                                             cudaMemcpyHostToDevice, s));
            HGEMM_CHECK_CUDA(cudaMemcpyAsync(b.C, b.C0, (size_t)(t.rows * b.ldc) * 2, cudaMemcpyDeviceToDevice, s));
            HGEMM_CHECK_CUDA(cudaGraphLaunch(exec, s));
            HGEMM_CHECK_CUDA(cudaStreamSynchronize(s));
            double worst = 0.0;
            pass = check(&t, &b, later[r], &worst);
        }
        HGEMM_CHECK_CUDA(cudaGraphExecDestroy(exec));
    }
    HGEMM_CHECK_CUDA(cudaGraphDestroy(graph));
    HGEMM_CHECK_CUDA(cudaStreamDestroy(s));
    printf("%s %-20s three replays, each its own offsets\n", pass ? "PASS" : "FAIL", t.what);
    release(&b);
    return !pass;
}

/* hgemm_grouped_k: C_g = alpha A_g^T B_g + beta C_g, A (total_k x m) and B
 * (total_k x n) row-major, the groups' rows as hgemm_grouped's (clamped);
 * every group's C written, an empty group's as beta * C. */
typedef struct kgrouped_case {
    const char *what;
    hgemm_dtype dtype;
    int64_t m, n, total_k, groups;
    int32_t offs[MAX_G];
    float alpha, beta;
    int c_f32; /* an fp32 C */
    int nan_c; /* beta 0 and C NaN before the call (16-bit C) */
} kgrouped_case;

static const kgrouped_case kcases[] = {
    {"k-grouped, sizes 0,1,63,136,0,800", HGEMM_DTYPE_BF16, 264, 136, 1000, 6, {0, 1, 64, 200, 200, 1000}, 1.0f,
     0.5f, 0, 0},
    {"k-grouped, clamped, NaN C", HGEMM_DTYPE_F16, 256, 520, 777, 4, {300, 301, 700, 9999}, 1.0f, 0.0f, 0, 1},
    {"k-grouped, fp32 C += ", HGEMM_DTYPE_BF16, 200, 136, 513, 3, {64, 128, 513}, 1.0f, 1.0f, 1, 0},
    {"k-grouped, no rows", HGEMM_DTYPE_F16, 136, 72, 0, 2, {0, 0}, 1.0f, -2.0f, 0, 0},
};

static int kgrouped_run(const kgrouped_case *t) {
    const int64_t m = t->m, n = t->n, tk = t->total_k, lda = (m + 7) / 8 * 8 + 8, ldb = (n + 7) / 8 * 8;
    const int64_t ldc = (n + 7) / 8 * 8 + 8, stride_c = m * ldc + 16, cb = t->c_f32 ? 4 : 2;
    const size_t c_bytes = (size_t)(t->groups * stride_c) * (size_t)cb;
    void *A, *B, *C, *C0;
    int32_t *offs;
    double *ref;
    HGEMM_CHECK_CUDA(cudaMalloc(&A, (size_t)((tk > 0 ? tk : 1) * lda) * 2));
    HGEMM_CHECK_CUDA(cudaMalloc(&B, (size_t)((tk > 0 ? tk : 1) * ldb) * 2));
    HGEMM_CHECK_CUDA(cudaMalloc(&C, c_bytes));
    HGEMM_CHECK_CUDA(cudaMalloc(&C0, c_bytes));
    HGEMM_CHECK_CUDA(cudaMalloc((void **)&offs, MAX_G * sizeof(int32_t)));
    HGEMM_CHECK_CUDA(cudaMalloc((void **)&ref, (size_t)(m * n) * sizeof(double)));
    const float scale = hgemm_check_unit_scale(tk > 0 ? tk : 1);
    if (tk > 0) {
        hgemm_check_fill_random_dt(t->dtype, A, tk, m, lda, SEED_A, scale, 0);
        hgemm_check_fill_random_dt(t->dtype, B, tk, n, ldb, SEED_B, scale, 0);
    }
    unsigned char *h0 = malloc(c_bytes), *h = malloc(c_bytes);
    for (size_t i = 0; i < c_bytes / (size_t)cb; i++) { /* C: random, or NaN, in every byte (padding too) */
        const float v = t->nan_c ? NAN : hgemm_check_random_f32(SEED_C, i / 4096, i % 4096, 1.0f);
        if (t->c_f32) ((float *)h0)[i] = v;
        else ((uint16_t *)h0)[i] = hgemm_check_f32_to_dt(t->dtype, v);
    }
    HGEMM_CHECK_CUDA(cudaMemcpy(C0, h0, c_bytes, cudaMemcpyHostToDevice));
    HGEMM_CHECK_CUDA(cudaMemcpy(C, h0, c_bytes, cudaMemcpyHostToDevice));
    HGEMM_CHECK_CUDA(cudaMemcpy(offs, t->offs, (size_t)t->groups * sizeof(int32_t), cudaMemcpyHostToDevice));
    hgemm_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.c_fp32 = t->c_f32;
    const hgemm_status st = hgemm_grouped_k(HGEMM_KERNEL_AUTO, t->dtype, m, n, tk, t->groups, offs, t->alpha, A, lda,
                                            B, ldb, t->beta, C, ldc, stride_c, &o, 0);
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    HGEMM_CHECK_CUDA(cudaMemcpy(h, C, c_bytes, cudaMemcpyDeviceToHost));
    int64_t start[MAX_G], end[MAX_G];
    group_rows(t->offs, t->groups, tk, start, end);
    double *href = malloc((size_t)(m * n) * sizeof(double));
    int64_t bad = 0, touched = 0;
    double worst = 0.0;
    for (int64_t g = 0; g < t->groups; g++) {
        const int64_t r = end[g] - start[g];
        if (r > 0) { /* alpha A_g^T B_g in fp64, beta added below */
            hgemm_check_reference_ex(t->dtype, HGEMM_OP_T, HGEMM_OP_N, m, n, r, t->alpha,
                                     (const char *)A + start[g] * lda * 2, lda, (const char *)B + start[g] * ldb * 2,
                                     ldb, 0.0, NULL, n, ref, n, 0);
            HGEMM_CHECK_CUDA(cudaMemcpy(href, ref, (size_t)(m * n) * sizeof(double), cudaMemcpyDeviceToHost));
        } else {
            for (int64_t i = 0; i < m * n; i++) href[i] = 0.0;
        }
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < ldc; j++) {
                const int64_t e = g * stride_c + i * ldc + j;
                const double old = t->c_f32 ? ((const float *)h0)[e] : hgemm_check_dt_to_f32(t->dtype, ((const uint16_t *)h0)[e]);
                const double got = t->c_f32 ? ((const float *)h)[e] : hgemm_check_dt_to_f32(t->dtype, ((const uint16_t *)h)[e]);
                if (j >= n) { /* C's padding: untouched */
                    touched += memcmp(h + e * cb, h0 + e * cb, (size_t)cb) != 0;
                    continue;
                }
                const double want = href[i * n + j] + (t->beta != 0.0f ? t->beta * old : 0.0);
                const double err = fabs(got - want);
                if (!(err <= HGEMM_CHECK_ATOL_ACC_F32 + HGEMM_CHECK_RTOL * fabs(want))) {
                    if (bad < 5)
                        printf("     C_%lld[%lld][%lld] = %.6g, reference %.6g\n", (long long)g, (long long)i,
                               (long long)j, got, want);
                    bad++;
                }
                if (err > worst) worst = err;
            }
    }
    const int pass = st == HGEMM_SUCCESS && bad == 0 && touched == 0;
    printf("%s %-34s %s%s %5lld x %5lld, %5lld rows in %lld groups, beta %g  max %.2e\n", pass ? "PASS" : "FAIL",
           t->what, t->dtype == HGEMM_DTYPE_BF16 ? "bf16" : "fp16", t->c_f32 ? "->fp32" : "", (long long)m,
           (long long)n, (long long)tk, (long long)t->groups, (double)t->beta, worst);
    if (st != HGEMM_SUCCESS) printf("     hgemm_grouped_k returned %s\n", hgemm_status_string(st));
    if (bad) printf("     %lld elements past the tolerance\n", (long long)bad);
    if (touched) printf("     %lld padding elements written\n", (long long)touched);
    HGEMM_CHECK_CUDA(cudaFree(A));
    HGEMM_CHECK_CUDA(cudaFree(B));
    HGEMM_CHECK_CUDA(cudaFree(C));
    HGEMM_CHECK_CUDA(cudaFree(C0));
    HGEMM_CHECK_CUDA(cudaFree(offs));
    HGEMM_CHECK_CUDA(cudaFree(ref));
    free(h0), free(h), free(href);
    return !pass;
}

int main(void) {
    char why[256] = "";
    if (!hgemm_check_sm90_available(why, sizeof why)) {
        printf("test_gpu_grouped: skipped: %s\n", why);
        return EXIT_SKIP;
    }
    int failures = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) failures += run_case(&cases[i]);
    for (size_t i = 0; i < sizeof kcases / sizeof kcases[0]; i++) failures += kgrouped_run(&kcases[i]);
    failures += graph_case();
    failures += cudaGetLastError() != cudaSuccess;
    printf("%s: %d failure%s\n", failures ? "FAIL" : "PASS", failures, failures == 1 ? "" : "s");
    return failures != 0;
}
