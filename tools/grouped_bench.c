/*
 * grouped_bench.c (hgemm-grouped-bench): hgemm_grouped beside what users
 * run without it, in one process, on mixture-of-experts shapes:
 *   hgemm        one hgemm_grouped call (the offsets on the device);
 *   cublas-loop  one cublasGemmEx per non-empty group (the sizes known on
 *                the host: a per-expert loop, what transformers' MoE does).
 * The tokens of each step are routed top-k over the experts by a fixed
 * pseudo-random draw (seeded), so groups are uneven and some are empty.
 * Before timing, hgemm's C is compared with the loop's (|d| <= 1e-2 +
 * 1e-2 |ref|); a shape that fails prints FAIL and is not timed. Entries take
 * turns (tools/interleave.h), one CUDA event pair a window. CSV columns:
 * kernel, model, proj, tokens, experts, top_k, rows, n, k, dtype, run, ms,
 * vs_loop, tflops (the flops of the rows routed).
 *
 *   hgemm-grouped-bench [--dtype f16|bf16] [--tokens N,...] [--repeat N] [--iters N] [--csv FILE]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "check.h"
#include "hgemm_bench_git.h" /* HGEMM_GIT_COMMIT, generated at build time */
#include "hgemm.h"
#include "interleave.h"

enum { ENTRIES = 2, E_HGEMM = 0, E_LOOP = 1, SLICES = 8, MAX_TOKENS = 8, MAX_RUNS = 16 };
static const char *ENTRY_NAMES[ENTRIES] = {"hgemm", "cublas-loop"};

typedef struct moe_shape {
    const char *model, *proj;
    int64_t experts, top_k, n, k; /* one expert's product: rows x k times (n x k)^T */
} moe_shape;

/* DeepSeek-V3 (256 routed experts, top-8, hidden 7168, expert width 2048:
 * gate and up fused), Qwen3-30B-A3B (128, top-8, 2048, 768), Mixtral 8x7B
 * (8, top-2, 4096, 14336) */
static const moe_shape SHAPES[] = {
    {"deepseek-v3", "gate_up", 256, 8, 4096, 7168},  {"deepseek-v3", "down", 256, 8, 7168, 2048},
    {"qwen3-30b-a3b", "gate_up", 128, 8, 1536, 2048}, {"qwen3-30b-a3b", "down", 128, 8, 2048, 768},
    {"mixtral-8x7b", "gate_up", 8, 2, 28672, 4096},  {"mixtral-8x7b", "down", 8, 2, 4096, 14336},
};

/* Rows per expert: each token picks top_k distinct experts by a seeded hash. */
static void route(int64_t tokens, const moe_shape *s, int32_t *ends) {
    int64_t *count = calloc((size_t)s->experts, sizeof(int64_t));
    int *picked = calloc((size_t)s->experts, sizeof(int));
    for (int64_t t = 0; t < tokens; t++) {
        memset(picked, 0, (size_t)s->experts * sizeof(int));
        for (int64_t j = 0, tries = 0; j < s->top_k; tries++) {
            /* skewed: a square of a uniform draw favours low experts, as real routers are uneven */
            const double u = (double)(hgemm_check_hash(7, (uint64_t)t, (uint64_t)tries) >> 11) / 9007199254740992.0;
            const int64_t e = (int64_t)(u * u * (double)s->experts);
            if (picked[e]) continue;
            picked[e] = 1;
            count[e]++;
            j++;
        }
    }
    int64_t sum = 0;
    for (int64_t e = 0; e < s->experts; e++) ends[e] = (int32_t)(sum += count[e]);
    free(count);
    free(picked);
}

typedef struct ctx {
    hgemm_dtype dtype;
    cudaDataType_t cuda_type;
    const moe_shape *s;
    int64_t rows, ld_a, ld_b;
    int32_t *ends, *d_ends;
    void *A, *B, *C[ENTRIES];
    cublasHandle_t blas;
    cudaStream_t stream;
} ctx;

static int run_entry(ctx *c, int e) {
    const moe_shape *s = c->s;
    if (e == E_HGEMM)
        return hgemm_grouped(HGEMM_KERNEL_AUTO, c->dtype, HGEMM_OP_T, c->rows, s->n, s->k, s->experts, c->d_ends, 1.0f,
                             c->A, c->ld_a, c->B, c->ld_b, s->n * c->ld_b, 0.0f, c->C[e], s->n, NULL,
                             c->stream) == HGEMM_SUCCESS;
    const float one = 1.0f, zero = 0.0f;
    for (int64_t g = 0; g < s->experts; g++) {
        const int64_t r0 = g ? c->ends[g - 1] : 0, r = c->ends[g] - r0;
        if (r == 0) continue;
        /* row-major C_g (r x n) = A_g (r x k) B_g^T: column-major C^T = B_g^T... as cuBLAS sees it */
        const char *a = (const char *)c->A + r0 * c->ld_a * 2, *b = (const char *)c->B + g * s->n * c->ld_b * 2;
        char *out = (char *)c->C[e] + r0 * s->n * 2;
        if (cublasGemmEx(c->blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)s->n, (int)r, (int)s->k, &one, b, c->cuda_type,
                         (int)c->ld_b, a, c->cuda_type, (int)c->ld_a, &zero, out, c->cuda_type, (int)s->n,
                         CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS)
            return 0;
    }
    return 1;
}

static int agree(ctx *c, double *worst) {
    return hgemm_check_outputs_agree_dt(c->dtype, c->C[E_HGEMM], c->C[E_LOOP], c->rows, c->s->n, c->s->n, 1e-2, 1e-2,
                                        worst);
}

int main(int argc, char **argv) {
    hgemm_dtype dtype = HGEMM_DTYPE_BF16;
    int64_t tokens[MAX_TOKENS] = {64, 4096};
    int ntokens = 2, repeat = 3, iters = 16;
    const char *csv_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--dtype") && i + 1 < argc) {
            dtype = !strcmp(argv[++i], "f16") ? HGEMM_DTYPE_F16 : HGEMM_DTYPE_BF16;
        } else if (!strcmp(argv[i], "--tokens") && i + 1 < argc) {
            ntokens = 0;
            for (char *p = argv[++i]; *p && ntokens < MAX_TOKENS; p++) {
                tokens[ntokens++] = strtoll(p, &p, 10);
                if (!*p) break;
            }
        } else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) {
            repeat = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--iters") && i + 1 < argc) {
            iters = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--csv") && i + 1 < argc) {
            csv_path = argv[++i];
        } else {
            fprintf(stderr,
                    "usage: %s [--dtype f16|bf16] [--tokens N,...] [--repeat N] [--iters N] [--csv FILE]\n"
                    "  hgemm_grouped against a cuBLAS call per expert, on DeepSeek-V3, Qwen3-30B-A3B and\n"
                    "  Mixtral 8x7B expert products, tokens routed top-k (default tokens 64,4096)\n",
                    argv[0]);
            return 2;
        }
    }
    if (repeat < 1 || repeat > MAX_RUNS || iters < SLICES || iters % SLICES) {
        fprintf(stderr, "--repeat 1..%d and --iters a multiple of %d\n", MAX_RUNS, SLICES);
        return 2;
    }
    char why[256] = "";
    if (!hgemm_check_sm90_available(why, sizeof why)) {
        printf("hgemm-grouped-bench: %s\n", why);
        return 77;
    }
    const char *dname = dtype == HGEMM_DTYPE_BF16 ? "bf16" : "f16";
    FILE *csv = NULL;
    if (csv_path) {
        csv = hgemm_check_csv_create(csv_path, "hgemm-grouped-bench", HGEMM_GIT_COMMIT, argc, argv,
                                     "each ms: one window's launches, interleaved; vs_loop: the loop's ms over this row's");
        if (csv == NULL) return 1;
        fprintf(csv, "kernel,model,proj,tokens,experts,top_k,rows,n,k,dtype,run,ms,vs_loop,tflops\n");
    }
    ctx c;
    memset(&c, 0, sizeof c);
    c.dtype = dtype;
    c.cuda_type = dtype == HGEMM_DTYPE_BF16 ? CUDA_R_16BF : CUDA_R_16F;
    HGEMM_CHECK_CUDA(cudaStreamCreate(&c.stream));
    HGEMM_CHECK_CUBLAS(cublasCreate(&c.blas));
    HGEMM_CHECK_CUBLAS(cublasSetStream(c.blas, c.stream));
    cudaEvent_t ev0, ev1;
    HGEMM_CHECK_CUDA(cudaEventCreate(&ev0));
    HGEMM_CHECK_CUDA(cudaEventCreate(&ev1));
    int failures = 0;
    for (size_t si = 0; si < sizeof SHAPES / sizeof SHAPES[0]; si++)
        for (int ti = 0; ti < ntokens; ti++) {
            const moe_shape *s = &SHAPES[si];
            c.s = s;
            c.ends = malloc((size_t)s->experts * sizeof(int32_t));
            route(tokens[ti], s, c.ends);
            c.rows = tokens[ti] * s->top_k;
            c.ld_a = c.ld_b = (s->k + 7) / 8 * 8;
            HGEMM_CHECK_CUDA(cudaMalloc((void **)&c.d_ends, (size_t)s->experts * sizeof(int32_t)));
            HGEMM_CHECK_CUDA(cudaMemcpy(c.d_ends, c.ends, (size_t)s->experts * sizeof(int32_t), cudaMemcpyHostToDevice));
            HGEMM_CHECK_CUDA(cudaMalloc(&c.A, (size_t)(c.rows * c.ld_a) * 2));
            HGEMM_CHECK_CUDA(cudaMalloc(&c.B, (size_t)(s->experts * s->n * c.ld_b) * 2));
            for (int e = 0; e < ENTRIES; e++) HGEMM_CHECK_CUDA(cudaMalloc(&c.C[e], (size_t)(c.rows * s->n) * 2));
            hgemm_check_fill_random_dt(dtype, c.A, c.rows, s->k, c.ld_a, 1, hgemm_check_unit_scale(s->k), c.stream);
            hgemm_check_fill_random_dt(dtype, c.B, s->experts * s->n, s->k, c.ld_b, 2, hgemm_check_unit_scale(s->k),
                                       c.stream);
            const double flops = 2.0 * (double)c.rows * (double)s->n * (double)s->k;
            int ok = run_entry(&c, E_HGEMM) && run_entry(&c, E_LOOP);
            HGEMM_CHECK_CUDA(cudaStreamSynchronize(c.stream));
            double worst = 0.0;
            ok = ok && agree(&c, &worst);
            printf("%s %s %s %s: %lld tokens, %lld rows x %lld x %lld over %lld experts: max |d| %.2e\n",
                   ok ? "ok" : "FAIL", dname, s->model, s->proj, (long long)tokens[ti], (long long)c.rows,
                   (long long)s->n, (long long)s->k, (long long)s->experts, worst);
            if (!ok) failures++;
            if (ok) {
                for (int e = 0; e < ENTRIES; e++) /* warm-up */
                    for (int w = 0; w < 5; w++) run_entry(&c, e);
                double ms[ENTRIES][MAX_RUNS];
                for (int r = 0; r < repeat; r++) {
                    double total[ENTRIES] = {0};
                    for (int sl = 0; sl < SLICES; sl++)
                        for (int q = 0; q < ENTRIES; q++) {
                            const int e = hgemm_interleave_place(r * SLICES + sl, q, ENTRIES);
                            HGEMM_CHECK_CUDA(cudaEventRecord(ev0, c.stream));
                            for (int it = 0; it < iters / SLICES; it++) run_entry(&c, e);
                            HGEMM_CHECK_CUDA(cudaEventRecord(ev1, c.stream));
                            HGEMM_CHECK_CUDA(cudaEventSynchronize(ev1));
                            float t = 0.0f;
                            HGEMM_CHECK_CUDA(cudaEventElapsedTime(&t, ev0, ev1));
                            total[e] += t;
                        }
                    for (int e = 0; e < ENTRIES; e++) {
                        ms[e][r] = total[e] / iters;
                        if (csv)
                            fprintf(csv, "%s,%s,%s,%lld,%lld,%lld,%lld,%lld,%lld,%s,%d,%.5f,%.4f,%.1f\n",
                                    ENTRY_NAMES[e], s->model, s->proj, (long long)tokens[ti], (long long)s->experts,
                                    (long long)s->top_k, (long long)c.rows, (long long)s->n, (long long)s->k, dname,
                                    r + 1, ms[e][r], total[e] > 0 ? total[E_LOOP] / total[e] : 0.0,
                                    flops / ms[e][r] * 1e-9);
                    }
                }
                for (int e = 0; e < ENTRIES; e++) {
                    double t[MAX_RUNS], v[MAX_RUNS];
                    for (int r = 0; r < repeat; r++) {
                        t[r] = ms[e][r];
                        v[r] = ms[E_LOOP][r] / ms[e][r];
                    }
                    qsort(t, (size_t)repeat, sizeof(double), hgemm_check_cmp_double);
                    qsort(v, (size_t)repeat, sizeof(double), hgemm_check_cmp_double);
                    printf("  %-12s %8.4f ms  %6.1f TFLOP/s  vs loop %.3f [%.3f..%.3f]\n", ENTRY_NAMES[e],
                           t[repeat / 2], flops / t[repeat / 2] * 1e-9, v[repeat / 2], v[0], v[repeat - 1]);
                }
            }
            HGEMM_CHECK_CUDA(cudaFree(c.A));
            HGEMM_CHECK_CUDA(cudaFree(c.B));
            HGEMM_CHECK_CUDA(cudaFree(c.d_ends));
            for (int e = 0; e < ENTRIES; e++) HGEMM_CHECK_CUDA(cudaFree(c.C[e]));
            free(c.ends);
        }
    if (csv) fclose(csv);
    return failures ? 1 : 0;
}
