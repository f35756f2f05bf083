/*
 * test_gpu_epilogue: hgemm_gemm_ex's fused epilogue (include/hgemm.h),
 * C = act(alpha * A B^T + bias) + beta * C_in, against the fp64 reference
 * with the same function applied in fp64, for every activation, fp16 and
 * bf16, a bias in C's type, in fp32 and none, with
 *   - C filled with NaN before each call (every element must be written)
 *     and guard rows around it that must keep their sentinel;
 *   - the tile widths the epilogue runs (AUTO's 8-row decode and small
 *     products, a 256-wide plan), ragged m, n not a multiple of 8 (the
 *     element-wise store), a batch of 3, beta with C itself and with a
 *     separate c_in, beta 0 over NaN, a workspace (unused: no split);
 *   - nothing to multiply (k == 0, alpha == 0): C = act(bias) + beta * C_in;
 *   - an fp32 C (c_fp32): TN accumulated in place with beta 1, ragged, beta 0
 *     over NaN, a batch, and the scale path in NT and NN, to 1e-3 (a 16-bit
 *     rounding would fail), with guard rows and the padding of each row
 *     kept.
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

enum { EXIT_SKIP = 77, GUARD_ROWS = 3, SEED_A = 31, SEED_B = 32, SEED_C = 33, SEED_BIAS = 34 };
enum { BIAS_NONE = 0, BIAS_C = 1, BIAS_F32 = 2 };
enum { BETA_C = 0, BETA_C_IN = 1 }; /* what beta multiplies: C itself, or a separate c_in */

typedef struct epi_case {
    const char *what;
    hgemm_kernel kernel;
    hgemm_dtype dtype;
    hgemm_activation act;
    int bias;
    int64_t m, n, k, batch;
    float alpha, beta;
    int beta_on;
    int workspace;
} epi_case;

static const epi_case cases[] = {
    {"bias", HGEMM_KERNEL_V8, HGEMM_DTYPE_F16, HGEMM_ACTIVATION_NONE, BIAS_C, 300, 520, 1000, 1, 1.0f, 0.0f, BETA_C, 0},
    {"relu f32 bias", HGEMM_KERNEL_AUTO, HGEMM_DTYPE_BF16, HGEMM_ACTIVATION_RELU, BIAS_F32, 1024, 3072, 1024, 1, 1.0f, 0.0f, BETA_C, 0},
    {"gelu tanh", HGEMM_KERNEL_AUTO, HGEMM_DTYPE_F16, HGEMM_ACTIVATION_GELU_TANH, BIAS_C, 8, 4096, 512, 1, 0.5f, 0.0f, BETA_C, 0},
    {"gelu erf", HGEMM_KERNEL_V8, HGEMM_DTYPE_BF16, HGEMM_ACTIVATION_GELU_ERF, BIAS_NONE, 520, 1000, 700, 1, 1.0f, 0.0f, BETA_C, 0},
    {"silu, n % 8", HGEMM_KERNEL_V8, HGEMM_DTYPE_F16, HGEMM_ACTIVATION_SILU, BIAS_F32, 200, 1001, 300, 1, 1.0f, 0.0f, BETA_C, 0},
    {"gelu, n % 8, beta", HGEMM_KERNEL_AUTO, HGEMM_DTYPE_BF16, HGEMM_ACTIVATION_GELU_TANH, BIAS_C, 130, 259, 520, 1, 1.0f, 1.0f, BETA_C, 0},
    {"relu, residual", HGEMM_KERNEL_V8, HGEMM_DTYPE_F16, HGEMM_ACTIVATION_RELU, BIAS_C, 600, 768, 2048, 1, 1.0f, 1.0f, BETA_C_IN, 0},
    {"silu, batch, beta", HGEMM_KERNEL_AUTO, HGEMM_DTYPE_BF16, HGEMM_ACTIVATION_SILU, BIAS_F32, 130, 264, 200, 3, 1.0f, -0.5f, BETA_C, 0},
    {"bias, batch, c_in", HGEMM_KERNEL_AUTO_F16ACC, HGEMM_DTYPE_F16, HGEMM_ACTIVATION_NONE, BIAS_C, 256, 512, 256, 3, 2.0f, 0.5f, BETA_C_IN, 0},
    {"gelu erf, ws", HGEMM_KERNEL_AUTO, HGEMM_DTYPE_F16, HGEMM_ACTIVATION_GELU_ERF, BIAS_F32, 256, 256, 16384, 1, 1.0f, 0.0f, BETA_C, 1},
    {"wide, tanh", HGEMM_KERNEL_V8, HGEMM_DTYPE_BF16, HGEMM_ACTIVATION_GELU_TANH, BIAS_F32, 2048, 4096, 1024, 1, 1.0f, 0.0f, BETA_C, 0},
    /* more than one wide tile per pair: the seam carries parts 2 and 3 into the next tile (or entry) */
    {"seam, silu, n % 256", HGEMM_KERNEL_V8, HGEMM_DTYPE_F16, HGEMM_ACTIVATION_SILU, BIAS_C, 2000, 2056, 256, 1, 0.5f, 0.0f, BETA_C, 0},
    {"seam, relu, batch", HGEMM_KERNEL_V8, HGEMM_DTYPE_BF16, HGEMM_ACTIVATION_RELU, BIAS_C, 1100, 2304, 192, 2, 1.0f, 0.0f, BETA_C, 0},
    {"seam, gelu erf", HGEMM_KERNEL_AUTO, HGEMM_DTYPE_F16, HGEMM_ACTIVATION_GELU_ERF, BIAS_F32, 4096, 4096, 512, 1, 1.0f, 0.0f, BETA_C, 0},
    {"act only", HGEMM_KERNEL_V8, HGEMM_DTYPE_F16, HGEMM_ACTIVATION_RELU, BIAS_NONE, 128, 256, 64, 1, 1.0f, 0.0f, BETA_C, 0},
    {"k 0", HGEMM_KERNEL_V8, HGEMM_DTYPE_F16, HGEMM_ACTIVATION_GELU_TANH, BIAS_C, 64, 200, 0, 2, 1.0f, 0.5f, BETA_C, 0},
    {"alpha 0, c_in", HGEMM_KERNEL_AUTO, HGEMM_DTYPE_BF16, HGEMM_ACTIVATION_SILU, BIAS_F32, 100, 264, 300, 1, 0.0f, 1.0f, BETA_C_IN, 0},
    {"k 0, beta 0", HGEMM_KERNEL_AUTO, HGEMM_DTYPE_F16, HGEMM_ACTIVATION_RELU, BIAS_C, 33, 72, 0, 1, 1.0f, 0.0f, BETA_C, 0},
};

static double act_ref(hgemm_activation act, double x) {
    switch (act) {
    case HGEMM_ACTIVATION_RELU: return x < 0.0 ? 0.0 : x;
    case HGEMM_ACTIVATION_GELU_TANH: return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    case HGEMM_ACTIVATION_GELU_ERF: return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    case HGEMM_ACTIVATION_SILU: return x / (1.0 + exp(-x));
    default: return x;
    }
}

static const char *act_name(hgemm_activation act) {
    static const char *names[] = {"none", "relu", "gelu-tanh", "gelu-erf", "silu"};
    return names[act];
}

/* bits of one element of a 16-bit matrix on the host, as a double */
static double elem_of(hgemm_dtype dt, const uint16_t *x, int64_t i) { return hgemm_check_dt_to_f32(dt, x[i]); }

static int run_case(const epi_case *t, void *workspace) {
    const hgemm_dtype dt = t->dtype;
    const int64_t m = t->m, n = t->n, k = t->k, batch = t->batch;
    const int64_t lda = k ? (k + 7) / 8 * 8 : 8, ldb = lda, ldc = (n + 7) / 8 * 8 + 8;
    const int64_t stride_a = m * lda, stride_b = n * ldb, stride_c = m * ldc;
    const size_t c_elems = (size_t)(batch * stride_c);
    void *A = NULL, *B = NULL, *in = NULL, *bias = NULL;
    double *ref = NULL;
    HGEMM_CHECK_CUDA(cudaMalloc(&A, (size_t)(batch * stride_a) * 2 + 16));
    HGEMM_CHECK_CUDA(cudaMalloc(&B, (size_t)(batch * stride_b) * 2 + 16));
    HGEMM_CHECK_CUDA(cudaMalloc(&in, c_elems * 2));
    HGEMM_CHECK_CUDA(cudaMalloc(&bias, (size_t)n * 4 + 16));
    HGEMM_CHECK_CUDA(cudaMalloc((void **)&ref, (size_t)(batch * m * n) * sizeof(double)));
    const float scale = hgemm_check_unit_scale(k);
    hgemm_check_guarded g;
    hgemm_check_guarded_alloc_dt(dt, &g, batch * m, n, ldc, GUARD_ROWS);
    /* the C that beta multiplies: c_in, or C itself (random, then the call overwrites it) */
    void *c0 = t->beta_on == BETA_C_IN ? in : g.C;
    for (int64_t b = 0; b < batch; b++) {
        hgemm_check_fill_random_dt(dt, (char *)A + b * stride_a * 2, m, k, lda, SEED_A + (uint64_t)b, scale, 0);
        hgemm_check_fill_random_dt(dt, (char *)B + b * stride_b * 2, n, k, ldb, SEED_B + (uint64_t)b, scale, 0);
        hgemm_check_fill_random_dt(dt, (char *)c0 + b * stride_c * 2, m, n, ldc, SEED_C + (uint64_t)b,
                                   hgemm_check_unit_scale(1), 0);
        hgemm_check_reference_ex(dt, HGEMM_OP_N, HGEMM_OP_T, m, n, k, t->alpha, (char *)A + b * stride_a * 2, lda,
                                 (char *)B + b * stride_b * 2, ldb, 0.0, NULL, 0, ref + b * m * n, n, 0);
    }
    if (t->beta == 0.0f) /* beta 0: C is never read, NaN there must not show */
        for (int64_t b = 0; b < batch; b++) hgemm_check_fill_nan_dt(dt, (char *)c0 + b * stride_c * 2, m, n, ldc, 0);
    /* the bias: random 16-bit values (in C's type, or widened to fp32) */
    uint16_t *bias16 = malloc((size_t)n * 2);
    float *bias32 = malloc((size_t)n * 4);
    if (!bias16 || !bias32) return 1;
    hgemm_check_fill_random_dt(dt, bias, 1, n, n, SEED_BIAS, hgemm_check_unit_scale(1), 0);
    HGEMM_CHECK_CUDA(cudaMemcpy(bias16, bias, (size_t)n * 2, cudaMemcpyDeviceToHost));
    for (int64_t j = 0; j < n; j++) bias32[j] = (float)elem_of(dt, bias16, j);
    if (t->bias == BIAS_F32) HGEMM_CHECK_CUDA(cudaMemcpy(bias, bias32, (size_t)n * 4, cudaMemcpyHostToDevice));
    /* the reference, on the host: act(alpha AB + bias) + beta C0 */
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    double *h_ref = malloc((size_t)(batch * m * n) * sizeof(double));
    uint16_t *h_c0 = malloc(c_elems * 2);
    if (!h_ref || !h_c0) return 1;
    HGEMM_CHECK_CUDA(cudaMemcpy(h_ref, ref, (size_t)(batch * m * n) * sizeof(double), cudaMemcpyDeviceToHost));
    HGEMM_CHECK_CUDA(cudaMemcpy(h_c0, c0, c_elems * 2, cudaMemcpyDeviceToHost));
    for (int64_t b = 0; b < batch; b++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double *r = &h_ref[(b * m + i) * n + j];
                const double pre = *r + (t->bias == BIAS_NONE ? 0.0 : (double)bias32[j]);
                *r = act_ref(t->act, pre);
                if (t->beta != 0.0f) *r += (double)t->beta * elem_of(dt, h_c0, b * stride_c + i * ldc + j);
            }
    if (t->beta_on == BETA_C_IN) /* the output itself: NaN, every element must be written */
        for (int64_t b = 0; b < batch; b++) hgemm_check_fill_nan_dt(dt, (char *)g.C + b * stride_c * 2, m, n, ldc, 0);

    hgemm_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.workspace = t->workspace ? workspace : NULL;
    o.workspace_bytes = t->workspace ? HGEMM_WORKSPACE_BYTES : 0;
    o.c_in = t->beta_on == BETA_C_IN ? in : NULL;
    o.ldc_in = t->beta_on == BETA_C_IN ? ldc : 0;
    o.bias = t->bias == BIAS_NONE ? NULL : bias;
    o.bias_dtype = t->bias == BIAS_F32 ? HGEMM_DTYPE_F32 : dt;
    o.activation = t->act;
    const hgemm_status st = hgemm_gemm_ex(t->kernel, dt, HGEMM_OP_N, HGEMM_OP_T, m, n, k, t->alpha, A, lda, stride_a,
                                          B, ldb, stride_b, t->beta, g.C, ldc, stride_c, batch, &o, 0);
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    int ok = st == HGEMM_SUCCESS;
    double worst = 0.0;
    for (int64_t b = 0; ok && b < batch; b++) {
        hgemm_check_stats stats;
        if (!hgemm_check_compare_dt(dt, (char *)g.C + b * stride_c * 2, ldc, h_ref + b * m * n, n, m, n,
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
    const int pass = ok && guarded;
    printf("%s %-18s %-12s %s %-9s bias %-4s %5lld x %5lld x %5lld batch %lld alpha %g beta %g%s  max %.2e\n",
           pass ? "PASS" : "FAIL", t->what, hgemm_kernel_name(t->kernel), dt == HGEMM_DTYPE_BF16 ? "bf16" : "fp16",
           act_name(t->act), t->bias == BIAS_NONE ? "none" : t->bias == BIAS_F32 ? "f32" : "C's", (long long)m,
           (long long)n, (long long)k, (long long)batch, (double)t->alpha, (double)t->beta,
           t->beta_on == BETA_C_IN ? " (c_in)" : "", worst);
    if (st != HGEMM_SUCCESS) printf("     hgemm_gemm_ex returned %s\n", hgemm_status_string(st));
    if (!guarded)
        printf("     %lld guard elements changed, the first at row %lld col %lld\n", (long long)guard.bad,
               (long long)guard.first_row, (long long)guard.first_col);
    hgemm_check_guarded_free(&g);
    HGEMM_CHECK_CUDA(cudaFree(A));
    HGEMM_CHECK_CUDA(cudaFree(B));
    HGEMM_CHECK_CUDA(cudaFree(in));
    HGEMM_CHECK_CUDA(cudaFree(bias));
    HGEMM_CHECK_CUDA(cudaFree(ref));
    free(bias16);
    free(bias32);
    free(h_ref);
    free(h_c0);
    return !pass;
}

/* An fp32 C (hgemm_options.c_fp32): the TN form's dW = dY^T X accumulated
 * in place (beta 1) into an fp32 C, and the scale path of every form. */
typedef struct f32_case {
    const char *what;
    hgemm_kernel kernel;
    hgemm_dtype dtype;
    hgemm_op op_a, op_b;
    int64_t m, n, k, batch;
    float alpha, beta;
} f32_case;

static const f32_case f32_cases[] = {
    {"dW += dY^T X", HGEMM_KERNEL_AUTO, HGEMM_DTYPE_BF16, HGEMM_OP_T, HGEMM_OP_N, 1024, 4096, 2048, 1, 1.0f, 1.0f},
    {"ragged, fp16", HGEMM_KERNEL_V8, HGEMM_DTYPE_F16, HGEMM_OP_T, HGEMM_OP_N, 300, 1001, 520, 1, 0.5f, -1.0f},
    {"beta 0 over NaN", HGEMM_KERNEL_AUTO, HGEMM_DTYPE_BF16, HGEMM_OP_T, HGEMM_OP_N, 64, 264, 4000, 1, 1.0f, 0.0f},
    {"batch", HGEMM_KERNEL_V8, HGEMM_DTYPE_BF16, HGEMM_OP_T, HGEMM_OP_N, 130, 264, 200, 3, 1.0f, 1.0f},
    {"k 0, NT", HGEMM_KERNEL_AUTO, HGEMM_DTYPE_F16, HGEMM_OP_N, HGEMM_OP_T, 100, 72, 0, 2, 1.0f, 0.5f},
    {"alpha 0, NN", HGEMM_KERNEL_V8, HGEMM_DTYPE_BF16, HGEMM_OP_N, HGEMM_OP_N, 64, 40, 128, 1, 0.0f, 2.0f},
};

enum { F32_GUARD = 2 };
static const float F32_SENTINEL = 12345.0f;

static int run_f32_case(const f32_case *t) {
    const hgemm_dtype dt = t->dtype;
    const int64_t m = t->m, n = t->n, k = t->k, batch = t->batch;
    const int64_t a_rows = t->op_a == HGEMM_OP_N ? m : k, a_cols = t->op_a == HGEMM_OP_N ? k : m;
    const int64_t b_rows = t->op_b == HGEMM_OP_N ? k : n, b_cols = t->op_b == HGEMM_OP_N ? n : k;
    const int64_t lda = a_cols ? (a_cols + 7) / 8 * 8 : 8, ldb = b_cols ? (b_cols + 7) / 8 * 8 : 8;
    const int64_t ldc = (n + 7) / 8 * 8 + 8, stride_a = a_rows * lda, stride_b = b_rows * ldb, stride_c = m * ldc;
    /* C with F32_GUARD rows of sentinel above and below the batch */
    const int64_t rows = batch * m + 2 * F32_GUARD;
    const size_t c_elems = (size_t)(rows * ldc);
    void *A = NULL, *B = NULL;
    float *Cg = NULL;
    double *ref = NULL;
    HGEMM_CHECK_CUDA(cudaMalloc(&A, (size_t)(batch * stride_a) * 2 + 16));
    HGEMM_CHECK_CUDA(cudaMalloc(&B, (size_t)(batch * stride_b) * 2 + 16));
    HGEMM_CHECK_CUDA(cudaMalloc((void **)&Cg, c_elems * 4));
    HGEMM_CHECK_CUDA(cudaMalloc((void **)&ref, (size_t)(batch * m * n) * sizeof(double)));
    const float scale = hgemm_check_unit_scale(k);
    for (int64_t b = 0; b < batch; b++) {
        hgemm_check_fill_random_dt(dt, (char *)A + b * stride_a * 2, a_rows, a_cols, lda, SEED_A + (uint64_t)b, scale, 0);
        hgemm_check_fill_random_dt(dt, (char *)B + b * stride_b * 2, b_rows, b_cols, ldb, SEED_B + (uint64_t)b, scale, 0);
        hgemm_check_reference_ex(dt, t->op_a, t->op_b, m, n, k, t->alpha, (char *)A + b * stride_a * 2, lda,
                                 (char *)B + b * stride_b * 2, ldb, 0.0, NULL, 0, ref + b * m * n, n, 0);
    }
    /* C's starting values: the sentinel everywhere, then per element a
     * small fp32 value (beta != 0) or NaN (beta 0: never read) */
    float *h_c = malloc(c_elems * 4), *h_got = malloc(c_elems * 4);
    double *h_ref = malloc((size_t)(batch * m * n) * sizeof(double));
    if (!h_c || !h_got || !h_ref) return 1;
    for (size_t i = 0; i < c_elems; i++) h_c[i] = F32_SENTINEL;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int64_t r = 0; r < batch * m; r++)
        for (int64_t j = 0; j < n; j++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            h_c[(F32_GUARD + r) * ldc + j] = t->beta != 0.0f ? (float)((int64_t)(x >> 40) - (1 << 23)) / (1 << 23) : NAN;
        }
    HGEMM_CHECK_CUDA(cudaMemcpy(Cg, h_c, c_elems * 4, cudaMemcpyHostToDevice));
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    HGEMM_CHECK_CUDA(cudaMemcpy(h_ref, ref, (size_t)(batch * m * n) * sizeof(double), cudaMemcpyDeviceToHost));
    float *C = Cg + F32_GUARD * ldc;
    hgemm_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.c_fp32 = 1;
    const hgemm_status st = hgemm_gemm_ex(t->kernel, dt, t->op_a, t->op_b, m, n, k, t->alpha, A, lda, stride_a, B, ldb,
                                          stride_b, t->beta, C, ldc, stride_c, batch, &o, 0);
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    HGEMM_CHECK_CUDA(cudaMemcpy(h_got, Cg, c_elems * 4, cudaMemcpyDeviceToHost));
    /* fp32 out: the error of fp32 accumulation alone, far below a 16-bit
     * rounding (bf16: 2^-8 of the value) */
    const double atol = 1e-3, rtol = 1e-3;
    int64_t bad = 0, guard_bad = 0;
    double worst = 0.0;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < ldc; j++) {
            const float got = h_got[r * ldc + j];
            const int64_t cr = r - F32_GUARD; /* C's row across the batch */
            if (cr < 0 || cr >= batch * m || j >= n) {
                if (memcmp(&got, &h_c[r * ldc + j], 4) != 0) guard_bad++;
                continue;
            }
            double want = h_ref[cr * n + j];
            if (t->beta != 0.0f) want += (double)t->beta * h_c[r * ldc + j];
            const double d = fabs((double)got - want);
            if (!(d <= atol + rtol * fabs(want))) {
                if (bad < 5)
                    printf("     C[%lld][%lld] = %.7g, want %.7g\n", (long long)cr, (long long)j, got, want);
                bad++;
            }
            if (d > worst) worst = d;
        }
    const int pass = st == HGEMM_SUCCESS && bad == 0 && guard_bad == 0;
    printf("%s fp32 C %-16s %-5s %s %c%c %5lld x %5lld x %5lld batch %lld alpha %g beta %g  max %.2e\n",
           pass ? "PASS" : "FAIL", t->what, hgemm_kernel_name(t->kernel), dt == HGEMM_DTYPE_BF16 ? "bf16" : "fp16",
           t->op_a == HGEMM_OP_T ? 'T' : 'N', t->op_b == HGEMM_OP_T ? 'T' : 'N', (long long)m, (long long)n,
           (long long)k, (long long)batch, (double)t->alpha, (double)t->beta, worst);
    if (st != HGEMM_SUCCESS) printf("     hgemm_gemm_ex returned %s\n", hgemm_status_string(st));
    if (bad) printf("     %lld elements off\n", (long long)bad);
    if (guard_bad) printf("     %lld elements outside C changed\n", (long long)guard_bad);
    HGEMM_CHECK_CUDA(cudaFree(A));
    HGEMM_CHECK_CUDA(cudaFree(B));
    HGEMM_CHECK_CUDA(cudaFree(Cg));
    HGEMM_CHECK_CUDA(cudaFree(ref));
    free(h_c);
    free(h_got);
    free(h_ref);
    return !pass;
}

int main(void) {
    char why[256] = "";
    if (!hgemm_check_sm90_available(why, sizeof why)) {
        printf("test_gpu_epilogue: skipped: %s\n", why);
        return EXIT_SKIP;
    }
    void *workspace = NULL;
    HGEMM_CHECK_CUDA(cudaMalloc(&workspace, HGEMM_WORKSPACE_BYTES));
    HGEMM_CHECK_CUDA(cudaMemset(workspace, 0, HGEMM_WORKSPACE_BYTES));
    int failed = 0;
    const int count = (int)(sizeof cases / sizeof cases[0]);
    for (int i = 0; i < count; i++) failed += run_case(&cases[i], workspace);
    const int f32_count = (int)(sizeof f32_cases / sizeof f32_cases[0]);
    for (int i = 0; i < f32_count; i++) failed += run_f32_case(&f32_cases[i]);
    HGEMM_CHECK_CUDA(cudaFree(workspace));
    printf("test_gpu_epilogue: %d of %d passed\n", count + f32_count - failed, count + f32_count);
    return failed ? 1 : 0;
}
