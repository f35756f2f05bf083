/*
 * check_host.c: the CPU half of hgemm_check (see check.h): host random data,
 * the fp64 CPU reference (fp16 and bf16, every operand form), host comparison
 * with quickselect, printing, and the device probe. C11.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "check.h"

enum { SM90_MAJOR = 9, SM90_MINOR = 0 };

float hgemm_check_unit_scale(int64_t k) {
    double kk = k > 0 ? (double)k : 1.0;
    return (float)(sqrt(3.0) * pow(kk, -0.25));
}

void hgemm_check_random_host_dt(hgemm_dtype dtype, uint16_t *dst, int64_t rows, int64_t cols,
                                int64_t ld, uint64_t seed, float scale) {
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++)
            dst[r * ld + c] = hgemm_check_random_dt(dtype, seed, (uint64_t)r, (uint64_t)c, scale);
}

void hgemm_check_random_host(uint16_t *dst, int64_t rows, int64_t cols, int64_t ld, uint64_t seed,
                             float scale) {
    hgemm_check_random_host_dt(HGEMM_DTYPE_F16, dst, rows, cols, ld, seed, scale);
}

static double to_f64(hgemm_dtype dtype, uint16_t h) { return (double)hgemm_check_dt_to_f32(dtype, h); }

/* Each output summed in k order, like the GPU reference: the fp16 and bf16
 * products are exact in double, so both give the same bits. op_a(A)[r, i] and
 * op_b(B)[i, c] are read where each form stores them. */
void hgemm_check_reference_cpu_ex(hgemm_dtype dtype, hgemm_op op_a, hgemm_op op_b, int64_t m,
                                  int64_t n, int64_t k, double alpha, const uint16_t *A,
                                  int64_t lda, const uint16_t *B, int64_t ldb, double beta,
                                  const uint16_t *C0, int64_t ldc0, double *ref, int64_t ldref) {
    if (alpha == 0.0) k = 0; /* BLAS: A and B are not read */
    /* Steps between consecutive r (or c) and consecutive i in each operand. */
    const int64_t a_r = op_a == HGEMM_OP_N ? lda : 1, a_i = op_a == HGEMM_OP_N ? 1 : lda;
    const int64_t b_c = op_b == HGEMM_OP_T ? ldb : 1, b_i = op_b == HGEMM_OP_T ? 1 : ldb;
    for (int64_t r = 0; r < m; r++) {
        for (int64_t c = 0; c < n; c++) {
            double acc = 0.0;
            for (int64_t i = 0; i < k; i++) {
                double p = to_f64(dtype, A[r * a_r + i * a_i]) * to_f64(dtype, B[c * b_c + i * b_i]);
                acc += p;
            }
            double v = alpha * acc;
            if (beta != 0.0) {
                double t = beta * to_f64(dtype, C0[r * ldc0 + c]);
                v += t;
            }
            ref[r * ldref + c] = v;
        }
    }
}

void hgemm_check_reference_cpu(int64_t m, int64_t n, int64_t k, double alpha, const uint16_t *A,
                               int64_t lda, const uint16_t *B, int64_t ldb, double beta,
                               const uint16_t *C0, int64_t ldc0, double *ref, int64_t ldref) {
    hgemm_check_reference_cpu_ex(HGEMM_DTYPE_F16, HGEMM_OP_N, HGEMM_OP_T, m, n, k, alpha, A, lda, B,
                                 ldb, beta, C0, ldc0, ref, ldref);
}

static void swap_d(double *a, double *b) {
    double t = *a;
    *a = *b;
    *b = t;
}

/* Hoare-style quickselect with a median-of-three pivot; iterative. */
double hgemm_check_select(double *v, int64_t count, int64_t rank) {
    int64_t lo = 0, hi = count - 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (v[mid] < v[lo]) swap_d(&v[mid], &v[lo]);
        if (v[hi] < v[lo]) swap_d(&v[hi], &v[lo]);
        if (v[hi] < v[mid]) swap_d(&v[hi], &v[mid]);
        double pivot = v[mid];
        int64_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot) i++;
            while (pivot < v[j]) j--;
            if (i <= j) {
                swap_d(&v[i], &v[j]);
                i++;
                j--;
            }
        }
        /* Now v[lo..j] <= pivot <= v[i..hi], and v[j+1..i-1] == pivot. */
        if (rank <= j) hi = j;
        else if (rank >= i) lo = i;
        else return v[rank];
    }
    return v[rank];
}

int hgemm_check_compare_host_dt(hgemm_dtype dtype, const uint16_t *C, int64_t ldc,
                                const double *ref, int64_t ldref, int64_t m, int64_t n,
                                double atol, double rtol, hgemm_check_stats *out) {
    memset(out, 0, sizeof *out);
    if (m <= 0 || n <= 0) return 1;
    out->count = m * n;
    double *err = (double *)malloc((size_t)out->count * sizeof(double));
    if (err == NULL) {
        fprintf(stderr, "%s:%d: out of host memory\n", __FILE__, __LINE__);
        exit(1);
    }
    double sum = 0.0;
    for (int64_t r = 0; r < m; r++) {
        for (int64_t c = 0; c < n; c++) {
            double got = to_f64(dtype, C[r * ldc + c]), want = ref[r * ldref + c];
            double e = isfinite(got) && isfinite(want) ? fabs(got - want) : INFINITY;
            err[r * n + c] = e;
            sum += e;
            if (e > out->max_abs_err) out->max_abs_err = e;
            if (!isfinite(got)) out->nonfinite++;
            if (!(fabs(got - want) <= atol + rtol * fabs(want))) {
                if (out->mismatches_shown < HGEMM_CHECK_MAX_MISMATCHES) {
                    hgemm_check_mismatch *mm = &out->mismatches[out->mismatches_shown++];
                    mm->row = r;
                    mm->col = c;
                    mm->got = got;
                    mm->want = want;
                }
                out->failed++;
            }
        }
    }
    out->mean_abs_err = sum / (double)out->count;
    out->p99_abs_err = hgemm_check_select(err, out->count, hgemm_check_p99_rank(out->count));
    free(err);
    return out->failed == 0;
}

int hgemm_check_compare_host(const uint16_t *C, int64_t ldc, const double *ref, int64_t ldref,
                             int64_t m, int64_t n, double atol, double rtol,
                             hgemm_check_stats *out) {
    return hgemm_check_compare_host_dt(HGEMM_DTYPE_F16, C, ldc, ref, ldref, m, n, atol, rtol, out);
}

void hgemm_check_print_mismatches(FILE *f, const hgemm_check_stats *s, const char *indent) {
    for (int i = 0; i < s->mismatches_shown; i++) {
        const hgemm_check_mismatch *mm = &s->mismatches[i];
        fprintf(f, "%sC[%lld, %lld] = %.6g, reference %.6g, error %.3g\n", indent,
                (long long)mm->row, (long long)mm->col, mm->got, mm->want, fabs(mm->got - mm->want));
    }
    if (s->failed > s->mismatches_shown)
        fprintf(f, "%s... %lld mismatches in all (%lld non-finite) of %lld elements\n", indent,
                (long long)s->failed, (long long)s->nonfinite, (long long)s->count);
}

int hgemm_check_sm90_available(char *why, size_t why_len) {
    int count = 0, dev = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        snprintf(why, why_len, "no usable CUDA device (%s: %s)", cudaGetErrorName(err),
                 cudaGetErrorString(err));
        (void)cudaGetLastError();
        return 0;
    }
    if (count == 0) {
        snprintf(why, why_len, "no CUDA device found");
        return 0;
    }
    struct cudaDeviceProp prop;
    err = cudaGetDevice(&dev);
    if (err == cudaSuccess) err = cudaGetDeviceProperties(&prop, dev);
    if (err != cudaSuccess) {
        snprintf(why, why_len, "cannot query CUDA device %d (%s)", dev, cudaGetErrorString(err));
        (void)cudaGetLastError();
        return 0;
    }
    if (prop.major != SM90_MAJOR || prop.minor != SM90_MINOR) {
        snprintf(why, why_len,
                 "CUDA device %d (%s) is compute capability %d.%d; hgemm needs 9.0 (Hopper, sm_90a)",
                 dev, prop.name, prop.major, prop.minor);
        return 0;
    }
    snprintf(why, why_len, "CUDA device %d (%s) is compute capability 9.0", dev, prop.name);
    return 1;
}

void hgemm_check_command_line(int argc, char **argv, char *out, size_t len) {
    size_t used = 0;
    if (len == 0) return;
    out[0] = '\0';
    for (int i = 0; i < argc && used + 1 < len; i++) {
        const char *a = argv[i];
        const int quote = *a == '\0' || strpbrk(a, " \t'\"$\\*?;&|<>()") != NULL;
        const int w = snprintf(out + used, len - used, "%s%s%s%s", i ? " " : "", quote ? "'" : "", a,
                               quote ? "'" : "");
        if (w < 0) break;
        used += (size_t)w;
    }
}

void hgemm_check_cublas_(int status, const char *what, const char *file, int line) {
    if (status == 0) return;
    fprintf(stderr, "%s:%d: %s: cuBLAS status %d\n", file, line, what, status);
    exit(1);
}

FILE *hgemm_check_csv_create(const char *path, const char *tool, const char *git_commit, int argc, char **argv,
                             const char *note) {
    FILE *csv = fopen(path, "w");
    if (csv == NULL) {
        perror(path);
        return NULL;
    }
    struct cudaDeviceProp prop;
    HGEMM_CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
    char command[1024];
    hgemm_check_command_line(argc, argv, command, sizeof command);
    fprintf(csv, "# tool: %s\n# git_commit: %s\n# command: %s\n# gpu: %s\n", tool, git_commit, command, prop.name);
    if (note != NULL) fprintf(csv, "# %s\n", note);
    return csv;
}

int hgemm_check_outputs_agree_dt(hgemm_dtype dtype, const void *got, const void *ref, int64_t m, int64_t n,
                                 int64_t ld, double atol, double rtol, double *worst) {
    const size_t elems = (size_t)((m > 0 ? m - 1 : 0) * ld + n);
    uint16_t *g = malloc(elems * 2), *r = malloc(elems * 2);
    if (!g || !r) {
        fprintf(stderr, "hgemm_check_outputs_agree_dt: out of host memory\n");
        exit(1);
    }
    HGEMM_CHECK_CUDA(cudaMemcpy(g, got, elems * 2, cudaMemcpyDeviceToHost));
    HGEMM_CHECK_CUDA(cudaMemcpy(r, ref, elems * 2, cudaMemcpyDeviceToHost));
    int64_t bad = 0;
    *worst = 0.0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            const double x = hgemm_check_dt_to_f32(dtype, g[i * ld + j]), y = hgemm_check_dt_to_f32(dtype, r[i * ld + j]);
            const double d = fabs(x - y);
            if (!(d <= atol + rtol * fabs(y))) bad++;
            if (d > *worst || d != d) *worst = d;
        }
    free(g);
    free(r);
    return bad == 0;
}

int hgemm_check_cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

