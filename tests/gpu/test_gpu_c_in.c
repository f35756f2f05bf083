/*
 * test_gpu_c_in: hgemm_nt_options.c_in, a C input apart from the output
 * (include/hgemm.h): C = alpha * op(A) op(B) + beta * c_in, checked against the
 * fp64 reference computed from c_in, with
 *   - C filled with NaN before each call, so that any element the kernel did
 *     not write fails, and guard rows and columns around C that must keep
 *     their sentinel;
 *   - c_in compared byte for byte before and after (never written);
 *   - AUTO and AUTO_F16ACC taking V8 at shapes where they would choose V9
 *     (skinny, small), fp16 and bf16, NT and NN, a batch of 3 (c_in's
 *     entries stride_c apart), a padded ldc_in, beta 0 with a NaN c_in (not
 *     read), and a long k with a workspace (V8 then splits no k-loop);
 *   - nothing to multiply, k == 0 or alpha == 0 (C = beta * c_in), for each
 *     kernel that takes a c_in (V8, AUTO, AUTO_F16ACC), a batch among them:
 *     C is NaN before the call, so a kernel that scaled C instead fails.
 * Exit 77 (skipped) without an sm_90 GPU.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "check.h"
#include "hgemm.h"

enum { EXIT_SKIP = 77, GUARD_ROWS = 3, SEED_A = 11, SEED_B = 12, SEED_C = 13 };

typedef struct c_in_case {
    const char *what;
    hgemm_kernel kernel;
    hgemm_dtype dtype;
    hgemm_op op_a, op_b;
    int64_t m, n, k, batch;
    float alpha, beta;
    int64_t ldc, ldc_in; /* ldc_in <= ldc for batches (entries stride_c = m * ldc apart) */
    int workspace;
    int nan_c_in;        /* c_in full of NaN (beta 0: must not be read) */
} c_in_case;

static const c_in_case cases[] = {
    {"ragged m, padded", HGEMM_KERNEL_V8, HGEMM_DTYPE_F16, HGEMM_OP_N, HGEMM_OP_T, 300, 520, 1000, 1, 1.5f, 0.5f, 528, 640, 0, 0},
    {"skinny, AUTO", HGEMM_KERNEL_AUTO, HGEMM_DTYPE_F16, HGEMM_OP_N, HGEMM_OP_T, 16, 4096, 512, 1, 1.0f, 1.0f, 4096, 4104, 0, 0},
    {"small, F16ACC", HGEMM_KERNEL_AUTO_F16ACC, HGEMM_DTYPE_F16, HGEMM_OP_N, HGEMM_OP_T, 1000, 1024, 512, 1, 1.0f, 1.0f, 1032, 1024, 0, 0},
    {"bf16 NN batch", HGEMM_KERNEL_V8, HGEMM_DTYPE_BF16, HGEMM_OP_N, HGEMM_OP_N, 130, 264, 200, 3, 1.0f, -2.0f, 272, 264, 0, 0},
    {"long k, ws", HGEMM_KERNEL_V8, HGEMM_DTYPE_F16, HGEMM_OP_N, HGEMM_OP_T, 256, 256, 16384, 1, 1.0f, 1.0f, 256, 264, 1, 0},
    {"beta 0, NaN in", HGEMM_KERNEL_V8, HGEMM_DTYPE_F16, HGEMM_OP_N, HGEMM_OP_T, 200, 256, 300, 1, 1.0f, 0.0f, 256, 256, 0, 1},
    {"k 0", HGEMM_KERNEL_V8, HGEMM_DTYPE_F16, HGEMM_OP_N, HGEMM_OP_T, 200, 256, 0, 1, 1.0f, 0.5f, 256, 264, 0, 0},
    {"alpha 0", HGEMM_KERNEL_V8, HGEMM_DTYPE_F16, HGEMM_OP_N, HGEMM_OP_T, 300, 520, 1000, 1, 0.0f, -1.5f, 528, 520, 1, 0},
    {"k 0, AUTO", HGEMM_KERNEL_AUTO, HGEMM_DTYPE_F16, HGEMM_OP_N, HGEMM_OP_T, 16, 4096, 0, 1, 1.0f, 1.0f, 4096, 4104, 0, 0},
    {"alpha 0, AUTO", HGEMM_KERNEL_AUTO, HGEMM_DTYPE_BF16, HGEMM_OP_T, HGEMM_OP_N, 130, 264, 200, 3, 0.0f, 2.0f, 272, 264, 1, 0},
    {"k 0, F16ACC", HGEMM_KERNEL_AUTO_F16ACC, HGEMM_DTYPE_BF16, HGEMM_OP_N, HGEMM_OP_N, 64, 128, 0, 2, 2.0f, -0.25f, 136, 128, 0, 0},
    {"alpha 0, F16ACC", HGEMM_KERNEL_AUTO_F16ACC, HGEMM_DTYPE_F16, HGEMM_OP_N, HGEMM_OP_T, 1000, 1024, 512, 1, 0.0f, 1.0f, 1032, 1024, 0, 0},
    {"k 0, beta 0", HGEMM_KERNEL_V8, HGEMM_DTYPE_F16, HGEMM_OP_N, HGEMM_OP_T, 100, 64, 0, 2, 1.0f, 0.0f, 64, 64, 0, 1},
};

static int run_case(const c_in_case *t, void *workspace) {
    const hgemm_dtype dt = t->dtype;
    const int64_t m = t->m, n = t->n, k = t->k, batch = t->batch;
    const int64_t a_rows = t->op_a == HGEMM_OP_N ? m : k, a_cols = t->op_a == HGEMM_OP_N ? k : m;
    const int64_t b_rows = t->op_b == HGEMM_OP_N ? k : n, b_cols = t->op_b == HGEMM_OP_N ? n : k;
    /* k == 0: no columns, the smallest leading dimension the library takes */
    const int64_t lda = a_cols ? (a_cols + 7) / 8 * 8 : 8, ldb = b_cols ? (b_cols + 7) / 8 * 8 : 8;
    const int64_t stride_a = a_rows * lda, stride_b = b_rows * ldb, stride_c = m * t->ldc;
    void *A = NULL, *B = NULL, *in = NULL;
    double *ref = NULL;
    const size_t in_elems = (size_t)((batch - 1) * stride_c + m * t->ldc_in);
    HGEMM_CHECK_CUDA(cudaMalloc(&A, (size_t)(batch * stride_a) * 2 + 16));
    HGEMM_CHECK_CUDA(cudaMalloc(&B, (size_t)(batch * stride_b) * 2 + 16));
    HGEMM_CHECK_CUDA(cudaMalloc(&in, in_elems * 2));
    HGEMM_CHECK_CUDA(cudaMalloc((void **)&ref, (size_t)(batch * m * n) * sizeof(double)));
    const float scale = hgemm_check_unit_scale(k);
    hgemm_check_fill_nan_dt(dt, in, 1, (int64_t)in_elems, (int64_t)in_elems, 0);
    for (int64_t b = 0; b < batch; b++) {
        hgemm_check_fill_random_dt(dt, (char *)A + b * stride_a * 2, a_rows, a_cols, lda, SEED_A + (uint64_t)b, scale, 0);
        hgemm_check_fill_random_dt(dt, (char *)B + b * stride_b * 2, b_rows, b_cols, ldb, SEED_B + (uint64_t)b, scale, 0);
        if (!t->nan_c_in)
            hgemm_check_fill_random_dt(dt, (char *)in + b * stride_c * 2, m, n, t->ldc_in, SEED_C + (uint64_t)b,
                                       hgemm_check_unit_scale(1), 0);
        hgemm_check_reference_ex(dt, t->op_a, t->op_b, m, n, k, t->alpha, (char *)A + b * stride_a * 2, lda,
                                 (char *)B + b * stride_b * 2, ldb, t->beta, (char *)in + b * stride_c * 2,
                                 t->ldc_in, ref + b * m * n, n, 0);
    }
    hgemm_check_guarded g;
    hgemm_check_guarded_alloc_dt(dt, &g, batch * m, n, t->ldc, GUARD_ROWS);
    for (int64_t b = 0; b < batch; b++) /* the outputs: NaN, every element must be written */
        hgemm_check_fill_nan_dt(dt, (char *)g.C + b * stride_c * 2, m, n, t->ldc, 0);
    uint16_t *before = malloc(in_elems * 2), *after = malloc(in_elems * 2);
    if (!before || !after) return 1;
    HGEMM_CHECK_CUDA(cudaMemcpy(before, in, in_elems * 2, cudaMemcpyDeviceToHost));

    const hgemm_nt_options o = {workspace, t->workspace ? HGEMM_WORKSPACE_BYTES : 0, 0, in, t->ldc_in};
    const hgemm_status st = hgemm_gemm(t->kernel, dt, t->op_a, t->op_b, m, n, k, t->alpha, A, lda, stride_a, B,
                                       ldb, stride_b, t->beta, g.C, t->ldc, stride_c, batch, &o, 0);
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    int ok = st == HGEMM_SUCCESS;
    double worst = 0.0;
    for (int64_t b = 0; ok && b < batch; b++) {
        hgemm_check_stats stats;
        if (!hgemm_check_compare_dt(dt, (char *)g.C + b * stride_c * 2, t->ldc, ref + b * m * n, n, m, n,
                                    HGEMM_CHECK_ATOL_ACC_F32, HGEMM_CHECK_RTOL, &stats, 0)) {
            printf("     entry %lld: %lld of %lld elements off (%lld not finite)\n", (long long)b,
                   (long long)stats.failed, (long long)stats.count, (long long)stats.nonfinite);
            hgemm_check_print_mismatches(stdout, &stats, "     ");
            ok = 0;
        }
        if (stats.max_abs_err > worst) worst = stats.max_abs_err;
    }
    hgemm_check_guard_report guard;
    const int guarded = hgemm_check_guard_intact(&g, &guard, 0);
    HGEMM_CHECK_CUDA(cudaMemcpy(after, in, in_elems * 2, cudaMemcpyDeviceToHost));
    const int in_same = memcmp(before, after, in_elems * 2) == 0;
    const int pass = ok && guarded && in_same;
    printf("%s %-16s %-12s %s%c%c %5lld x %5lld x %5lld batch %lld ldc %lld ldc_in %lld alpha %g beta %g  max %.2e\n",
           pass ? "PASS" : "FAIL", t->what, hgemm_kernel_name(t->kernel), dt == HGEMM_DTYPE_BF16 ? "bf16 " : "fp16 ",
           t->op_a == HGEMM_OP_T ? 'T' : 'N', t->op_b == HGEMM_OP_T ? 'T' : 'N', (long long)m, (long long)n,
           (long long)k, (long long)batch, (long long)t->ldc, (long long)t->ldc_in, (double)t->alpha,
           (double)t->beta, worst);
    if (st != HGEMM_SUCCESS) printf("     hgemm_gemm returned %s\n", hgemm_status_string(st));
    if (!guarded)
        printf("     %lld guard elements changed, the first at row %lld col %lld\n", (long long)guard.bad,
               (long long)guard.first_row, (long long)guard.first_col);
    if (!in_same) printf("     c_in was written\n");
    hgemm_check_guarded_free(&g);
    HGEMM_CHECK_CUDA(cudaFree(A));
    HGEMM_CHECK_CUDA(cudaFree(B));
    HGEMM_CHECK_CUDA(cudaFree(in));
    HGEMM_CHECK_CUDA(cudaFree(ref));
    free(before);
    free(after);
    return !pass;
}

int main(void) {
    char why[256] = "";
    if (!hgemm_check_sm90_available(why, sizeof why)) {
        printf("test_gpu_c_in: skipped: %s\n", why);
        return EXIT_SKIP;
    }
    void *workspace = NULL;
    HGEMM_CHECK_CUDA(cudaMalloc(&workspace, HGEMM_WORKSPACE_BYTES));
    HGEMM_CHECK_CUDA(cudaMemset(workspace, 0, HGEMM_WORKSPACE_BYTES));
    int failed = 0;
    const int count = (int)(sizeof cases / sizeof cases[0]);
    for (int i = 0; i < count; i++) failed += run_case(&cases[i], workspace);
    HGEMM_CHECK_CUDA(cudaFree(workspace));
    printf("test_gpu_c_in: %d of %d passed\n", count - failed, count);
    return failed ? 1 : 0;
}
