/*
 * test_gpu_fp8: hgemm_gemm_fp8 (include/hgemm.h) against an fp64 reference
 * of the dequantised operands, with
 *   - every scale mode (tensor, row, 1 x 128 / 128 x 128 blocks), every
 *     output type (bf16, fp16, fp32), e4m3 x e4m3, and e4m3 x e5m2 and
 *     e5m2 x e4m3 with tensor scales (the one mode that takes e5m2);
 *   - m, n and k ragged against the 128 x 128 x 128 tiles (k % 16 == 0),
 *     padded lda, ldb and ldc, m = 1, k = 16384;
 *   - alpha and beta, an fp32 C accumulated with beta = 1, and NaN in C with
 *     beta 0 (never read);
 *   - a guard band: every element of C's buffer outside m x n (the padding
 *     columns, rows past m) must keep its bits;
 *   - k == 0 and alpha == 0: C = beta * C, with every scale NaN (never read);
 *   - a CUDA graph captured once and replayed after A changed on the
 *     device: each replay bitwise equal to a direct call's C (and the
 *     library's results the same run to run);
 *   - each case twice: on the whole GPU (where a case's tiles fill at most
 *     half of it, clusters split k and add up in distributed shared memory;
 *     the five "wide" cases have 128 x 256 tiles enough for the wide build,
 *     whose clusters of two blocks share B: tile rows odd and even; a
 *     16-bit C with beta 0 goes out by TMA, but for a right-edge tile
 *     where n % 8 != 0)
 *     and on 4 SMs (no split; the wide build where n > 128 and there are at
 *     least 4 tiles of 128 x 256; each block walks many tiles).
 *   - hgemm_grouped_fp8: groups of rows (an empty group, a group of one
 *     row, rows in no group, offsets past the rows or decreasing) against
 *     each group's expert or one shared B, every scale mode and C type;
 *     rows in no group must keep their bits.
 * The bound: |C - ref| <= C's rounding of |ref| (half a subnormal step below
 * C's smallest normal) + 2^-10 * sum |a_k b_k|
 * (the tensor core's sums over each 128 of k, kept narrower than fp32,
 * then added in fp32); each case prints its worst error over that sum.
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

enum { EXIT_SKIP = 77, PAD_ROWS = 3 };

typedef struct fp8_case {
    const char *what;
    hgemm_dtype at, bt, ct;
    hgemm_scale_mode mode;
    int64_t m, n, k;
    float alpha, beta;
    int64_t pad_a, pad_b, pad_c; /* extra bytes of lda, ldb; extra elements of ldc */
    int nan_c;                   /* beta 0 and C NaN before the call */
} fp8_case;

#define E4 HGEMM_DTYPE_E4M3
#define E5 HGEMM_DTYPE_E5M2
static const fp8_case cases[] = {
    {"tensor", E4, E4, HGEMM_DTYPE_BF16, HGEMM_SCALE_TENSOR, 300, 264, 1024, 1.0f, 0.0f, 0, 0, 0, 1},
    {"row, padded", E4, E4, HGEMM_DTYPE_F16, HGEMM_SCALE_ROW, 257, 200, 528, 1.0f, 0.5f, 16, 32, 8, 0},
    {"block, k % 128", E4, E4, HGEMM_DTYPE_BF16, HGEMM_SCALE_BLOCK, 384, 384, 1040, 1.0f, 0.0f, 0, 0, 0, 1},
    {"block, fp32 C += ", E4, E4, HGEMM_DTYPE_F32, HGEMM_SCALE_BLOCK, 200, 136, 2048, 1.0f, 1.0f, 0, 16, 8, 0},
    {"tensor, e4m3 x e5m2", E4, E5, HGEMM_DTYPE_BF16, HGEMM_SCALE_TENSOR, 129, 256, 512, 2.0f, 0.0f, 0, 0, 0, 0},
    {"tensor, e5m2 x e4m3", E5, E4, HGEMM_DTYPE_F16, HGEMM_SCALE_TENSOR, 64, 130, 256, 0.5f, -1.0f, 0, 0, 0, 0},
    {"row, m 1", E4, E4, HGEMM_DTYPE_BF16, HGEMM_SCALE_ROW, 1, 520, 1024, 1.0f, 0.0f, 0, 0, 0, 0},
    {"block, k 16384", E4, E4, HGEMM_DTYPE_BF16, HGEMM_SCALE_BLOCK, 256, 256, 16384, 1.0f, 0.0f, 0, 0, 0, 0},
    {"tensor, fp32 C", E4, E4, HGEMM_DTYPE_F32, HGEMM_SCALE_TENSOR, 130, 72, 112, 1.0f, 0.25f, 0, 0, 0, 0},
    {"wide tiles, n ragged", E4, E4, HGEMM_DTYPE_BF16, HGEMM_SCALE_BLOCK, 1152, 4100, 256, 1.0f, 0.5f, 0, 0, 8, 0},
    {"wide, row, fp32 C", E4, E4, HGEMM_DTYPE_F32, HGEMM_SCALE_ROW, 1100, 4352, 160, 1.0f, 0.0f, 0, 0, 0, 1},
    {"wide pairs, even rows", E4, E4, HGEMM_DTYPE_BF16, HGEMM_SCALE_TENSOR, 1280, 3584, 512, 1.0f, 0.0f, 0, 0, 0, 0},
    {"wide, TMA stores, ragged", E4, E4, HGEMM_DTYPE_F16, HGEMM_SCALE_ROW, 1100, 4360, 256, 1.0f, 0.0f, 0, 0, 8, 1},
    {"wide, TMA and n % 8", E4, E4, HGEMM_DTYPE_BF16, HGEMM_SCALE_BLOCK, 1152, 4100, 256, 1.5f, 0.0f, 0, 0, 0, 1},
    {"k 0", E4, E4, HGEMM_DTYPE_BF16, HGEMM_SCALE_BLOCK, 140, 136, 0, 1.0f, -2.0f, 0, 0, 0, 0},
    {"alpha 0", E4, E4, HGEMM_DTYPE_F16, HGEMM_SCALE_ROW, 140, 136, 256, 0.0f, 0.5f, 0, 0, 0, 0},
};

/* The fp8 formats (OCP FP8: e4m3 has no infinities and one NaN pattern
 * per sign, e5m2 is IEEE-like). */
static double fp8_value(hgemm_dtype t, uint8_t x) {
    const int sign = x >> 7;
    const int eb = t == E4 ? 4 : 5, mb = 7 - eb, bias = t == E4 ? 7 : 15;
    const int e = (x >> mb) & ((1 << eb) - 1), f = x & ((1 << mb) - 1);
    double v = e == 0 ? ldexp((double)f, 1 - bias - mb) : ldexp((double)((1 << mb) | f), e - bias - mb);
    return sign ? -v : v;
}

/* A finite value of magnitude about 2^-2 .. 2^2, from a hash. */
static uint8_t fp8_random(hgemm_dtype t, uint64_t seed, uint64_t i) {
    const uint64_t h = hgemm_check_hash(seed, i, 0);
    const int eb = t == E4 ? 4 : 5, mb = 7 - eb, bias = t == E4 ? 7 : 15;
    const int e = bias - 2 + (int)(h % 5);
    const int f = (int)((h >> 8) & ((1u << mb) - 1));
    return (uint8_t)(((h >> 20) & 1) << 7 | (unsigned)e << mb | (unsigned)f);
}

static float scale_random(uint64_t seed, uint64_t i) {
    return 0.5f + (float)(hgemm_check_hash(seed, i, 1) % 1000) / 666.0f; /* 0.5 .. 2 */
}

static size_t c_bytes(hgemm_dtype ct) {
    return ct == HGEMM_DTYPE_F32 ? 4 : 2;
}

static double c_get(hgemm_dtype ct, const void *c, int64_t i) {
    if (ct == HGEMM_DTYPE_F32) return ((const float *)c)[i];
    return hgemm_check_dt_to_f32(ct, ((const uint16_t *)c)[i]);
}

static double c_unit(hgemm_dtype ct) { /* half an ulp at 1 */
    return ct == HGEMM_DTYPE_F32 ? ldexp(1.0, -24) : ct == HGEMM_DTYPE_F16 ? ldexp(1.0, -11) : ldexp(1.0, -8);
}

/* half the spacing of C's subnormals: the rounding of a value below C's smallest normal
 * (fp16's start at 2^-14, 2^-24 apart) */
static double c_floor(hgemm_dtype ct) {
    return ct == HGEMM_DTYPE_F32 ? ldexp(1.0, -150) : ct == HGEMM_DTYPE_F16 ? ldexp(1.0, -25) : ldexp(1.0, -134);
}

static int run_case(const fp8_case *t, int sm_target) {
    const int64_t m = t->m, n = t->n, k = t->k, kb = (k + 127) / 128, nb = (n + 127) / 128;
    const int64_t lda = (k > 16 ? k : 16) + t->pad_a, ldb = (k > 16 ? k : 16) + t->pad_b;
    const int64_t ldc = (n + 7) / 8 * 8 + t->pad_c, c_rows = m + PAD_ROWS;
    const size_t cb = c_bytes(t->ct), c_size = (size_t)(c_rows * ldc) * cb;
    const int64_t sa_n = t->mode == HGEMM_SCALE_TENSOR ? 1 : t->mode == HGEMM_SCALE_ROW ? m : m * kb;
    const int64_t sb_n = t->mode == HGEMM_SCALE_TENSOR ? 1 : t->mode == HGEMM_SCALE_ROW ? n : nb * kb;
    uint8_t *hA = calloc((size_t)(m * lda), 1), *hB = calloc((size_t)(n * ldb), 1);
    float *hsa = malloc((size_t)(sa_n > 0 ? sa_n : 1) * 4), *hsb = malloc((size_t)(sb_n > 0 ? sb_n : 1) * 4);
    unsigned char *hC0 = malloc(c_size), *hC = malloc(c_size);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < k; j++) hA[i * lda + j] = fp8_random(t->at, 11, (uint64_t)(i * k + j));
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < k; j++) hB[i * ldb + j] = fp8_random(t->bt, 12, (uint64_t)(i * k + j));
    for (int64_t i = 0; i < sa_n; i++) hsa[i] = scale_random(13, (uint64_t)i);
    for (int64_t i = 0; i < sb_n; i++) hsb[i] = scale_random(14, (uint64_t)i);
    if (sa_n == 0) hsa[0] = 1.0f;
    if (sb_n == 0) hsb[0] = 1.0f;
    const int scales_unread = k == 0 || t->alpha == 0.0f; /* then NaN scales must not reach C */
    float *dev_sa = hsa, *dev_sb = hsb, nan_sa[1] = {NAN}, nan_sb[1] = {NAN};
    /* C: random where the product lands (NaN for nan_c), a sentinel elsewhere */
    for (int64_t i = 0; i < c_rows; i++)
        for (int64_t j = 0; j < ldc; j++) {
            const int inside = i < m && j < n;
            const float v = inside ? (t->nan_c ? NAN : hgemm_check_random_f32(15, (uint64_t)i, (uint64_t)j, 1.0f))
                                   : -12345.0f;
            const int64_t e = i * ldc + j;
            if (t->ct == HGEMM_DTYPE_F32) ((float *)hC0)[e] = v;
            else ((uint16_t *)hC0)[e] = hgemm_check_f32_to_dt(t->ct, v);
        }
    void *dA, *dB, *dC;
    float *dsa, *dsb;
    HGEMM_CHECK_CUDA(cudaMalloc(&dA, (size_t)(m * lda) + 16));
    HGEMM_CHECK_CUDA(cudaMalloc(&dB, (size_t)(n * ldb) + 16));
    HGEMM_CHECK_CUDA(cudaMalloc(&dC, c_size));
    HGEMM_CHECK_CUDA(cudaMalloc((void **)&dsa, (size_t)(sa_n > 0 ? sa_n : 1) * 4));
    HGEMM_CHECK_CUDA(cudaMalloc((void **)&dsb, (size_t)(sb_n > 0 ? sb_n : 1) * 4));
    HGEMM_CHECK_CUDA(cudaMemcpy(dA, hA, (size_t)(m * lda), cudaMemcpyHostToDevice));
    HGEMM_CHECK_CUDA(cudaMemcpy(dB, hB, (size_t)(n * ldb), cudaMemcpyHostToDevice));
    HGEMM_CHECK_CUDA(cudaMemcpy(dC, hC0, c_size, cudaMemcpyHostToDevice));
    if (scales_unread) {
        for (int64_t i = 0; i < sa_n; i++) hsa[i] = NAN;
        for (int64_t i = 0; i < sb_n; i++) hsb[i] = NAN;
        dev_sa = sa_n > 0 ? hsa : nan_sa;
        dev_sb = sb_n > 0 ? hsb : nan_sb;
    }
    HGEMM_CHECK_CUDA(cudaMemcpy(dsa, dev_sa, (size_t)(sa_n > 0 ? sa_n : 1) * 4, cudaMemcpyHostToDevice));
    HGEMM_CHECK_CUDA(cudaMemcpy(dsb, dev_sb, (size_t)(sb_n > 0 ? sb_n : 1) * 4, cudaMemcpyHostToDevice));
    const float beta = t->nan_c ? 0.0f : t->beta;
    hgemm_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.sm_count_target = sm_target;
    const hgemm_status st = hgemm_gemm_fp8(HGEMM_KERNEL_AUTO, t->at, t->bt, t->ct, m, n, k, t->alpha, dA, lda, dB,
                                           ldb, t->mode, dsa, dsb, beta, dC, ldc, &o, 0);
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    HGEMM_CHECK_CUDA(cudaMemcpy(hC, dC, c_size, cudaMemcpyDeviceToHost));
    /* dequantised operands, in fp64 */
    double *a = malloc(sizeof(double) * (size_t)(m * (k > 0 ? k : 1)));
    double *b = malloc(sizeof(double) * (size_t)(n * (k > 0 ? k : 1)));
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < k; j++) {
            const double s = t->mode == HGEMM_SCALE_TENSOR ? hsa[0]
                             : t->mode == HGEMM_SCALE_ROW  ? hsa[i]
                                                           : hsa[(j / 128) * m + i];
            a[i * k + j] = fp8_value(t->at, hA[i * lda + j]) * s;
        }
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < k; j++) {
            const double s = t->mode == HGEMM_SCALE_TENSOR ? hsb[0]
                             : t->mode == HGEMM_SCALE_ROW  ? hsb[i]
                                                           : hsb[(i / 128) * kb + j / 128];
            b[i * k + j] = fp8_value(t->bt, hB[i * ldb + j]) * s;
        }
    int64_t bad = 0, touched = 0;
    double worst = 0.0;
    for (int64_t i = 0; i < c_rows; i++)
        for (int64_t j = 0; j < ldc; j++) {
            const int64_t e = i * ldc + j;
            if (!(i < m && j < n)) {
                touched += memcmp(hC + (size_t)e * cb, hC0 + (size_t)e * cb, cb) != 0;
                continue;
            }
            double ref = 0.0, mag = 0.0;
            for (int64_t q = 0; q < k; q++) {
                const double p = a[i * k + q] * b[j * k + q];
                ref += p;
                mag += fabs(p);
            }
            ref = t->alpha == 0.0f ? 0.0 : ref * t->alpha; /* alpha 0: the product is not formed */
            mag = t->alpha == 0.0f ? 0.0 : mag * fabs(t->alpha);
            if (beta != 0.0f) ref += beta * c_get(t->ct, hC0, e), mag += fabs(beta * c_get(t->ct, hC0, e));
            const double got = c_get(t->ct, hC, e), err = fabs(got - ref);
            const double bound = 2.0 * c_unit(t->ct) * fabs(ref) + c_floor(t->ct) + ldexp(mag, -10);
            if (!(err <= bound)) {
                if (bad < 5)
                    printf("     C[%lld][%lld] = %.8g, reference %.8g (bound %.3g)\n", (long long)i, (long long)j, got,
                           ref, bound);
                bad++;
            }
            if (mag > 0 && err / mag > worst) worst = err / mag;
        }
    const int pass = st == HGEMM_SUCCESS && bad == 0 && touched == 0;
    printf("%s %-22s %5lld x %5lld x %5lld  alpha %g beta %g  %s  worst |err| / sum|ab| %.2e\n",
           pass ? "PASS" : "FAIL", t->what, (long long)m, (long long)n, (long long)k, (double)t->alpha, (double)beta,
           sm_target ? "4 SMs   " : "all SMs ", worst);
    if (st != HGEMM_SUCCESS) printf("     hgemm_gemm_fp8 returned %s\n", hgemm_status_string(st));
    if (bad) printf("     %lld of %lld elements past the bound\n", (long long)bad, (long long)(m * n));
    if (touched) printf("     %lld elements outside m x n were written\n", (long long)touched);
    HGEMM_CHECK_CUDA(cudaFree(dA));
    HGEMM_CHECK_CUDA(cudaFree(dB));
    HGEMM_CHECK_CUDA(cudaFree(dC));
    HGEMM_CHECK_CUDA(cudaFree(dsa));
    HGEMM_CHECK_CUDA(cudaFree(dsb));
    free(hA), free(hB), free(hsa), free(hsb), free(hC0), free(hC), free(a), free(b);
    return !pass;
}

/* Captured once on a stream of its own (a split shape: a cluster per tile),
 * replayed with new A; each replay's C must equal, bit for bit, a direct
 * call's on the same inputs. */
static int graph_case(void) {
    enum { GM = 256, GN = 384, GK = 2048, GKB = GK / 128 };
    const size_t c_size = (size_t)GM * GN * 2;
    uint8_t *hA = malloc((size_t)GM * GK), *hB = malloc((size_t)GN * GK);
    float hsa[GM * GKB], hsb[((GN + 127) / 128) * GKB];
    for (int i = 0; i < GN * GK; i++) hB[i] = fp8_random(E4, 22, (uint64_t)i);
    for (int i = 0; i < GM * GKB; i++) hsa[i] = scale_random(23, (uint64_t)i);
    for (int i = 0; i < (int)(sizeof hsb / sizeof hsb[0]); i++) hsb[i] = scale_random(24, (uint64_t)i);
    void *dA, *dB, *dC1, *dC2;
    float *dsa, *dsb;
    HGEMM_CHECK_CUDA(cudaMalloc(&dA, (size_t)GM * GK));
    HGEMM_CHECK_CUDA(cudaMalloc(&dB, (size_t)GN * GK));
    HGEMM_CHECK_CUDA(cudaMalloc(&dC1, c_size));
    HGEMM_CHECK_CUDA(cudaMalloc(&dC2, c_size));
    HGEMM_CHECK_CUDA(cudaMalloc((void **)&dsa, sizeof hsa));
    HGEMM_CHECK_CUDA(cudaMalloc((void **)&dsb, sizeof hsb));
    HGEMM_CHECK_CUDA(cudaMemcpy(dB, hB, (size_t)GN * GK, cudaMemcpyHostToDevice));
    HGEMM_CHECK_CUDA(cudaMemcpy(dsa, hsa, sizeof hsa, cudaMemcpyHostToDevice));
    HGEMM_CHECK_CUDA(cudaMemcpy(dsb, hsb, sizeof hsb, cudaMemcpyHostToDevice));
    cudaStream_t s;
    HGEMM_CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    HGEMM_CHECK_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    hgemm_status st = hgemm_gemm_fp8(HGEMM_KERNEL_AUTO, E4, E4, HGEMM_DTYPE_BF16, GM, GN, GK, 1.0f, dA, GK, dB, GK,
                                     HGEMM_SCALE_BLOCK, dsa, dsb, 0.0f, dC2, GN, NULL, s);
    HGEMM_CHECK_CUDA(cudaStreamEndCapture(s, &graph));
    int pass = st == HGEMM_SUCCESS;
    unsigned char *c1 = malloc(c_size), *c2 = malloc(c_size);
    if (pass) {
        HGEMM_CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
        for (int r = 0; r < 2 && pass; r++) {
            for (int i = 0; i < GM * GK; i++) hA[i] = fp8_random(E4, 30 + (uint64_t)r, (uint64_t)i);
            HGEMM_CHECK_CUDA(cudaMemcpyAsync(dA, hA, (size_t)GM * GK, cudaMemcpyHostToDevice, s));
            st = hgemm_gemm_fp8(HGEMM_KERNEL_AUTO, E4, E4, HGEMM_DTYPE_BF16, GM, GN, GK, 1.0f, dA, GK, dB, GK,
                                HGEMM_SCALE_BLOCK, dsa, dsb, 0.0f, dC1, GN, NULL, s);
            HGEMM_CHECK_CUDA(cudaGraphLaunch(exec, s));
            HGEMM_CHECK_CUDA(cudaStreamSynchronize(s));
            HGEMM_CHECK_CUDA(cudaMemcpy(c1, dC1, c_size, cudaMemcpyDeviceToHost));
            HGEMM_CHECK_CUDA(cudaMemcpy(c2, dC2, c_size, cudaMemcpyDeviceToHost));
            int nonzero = 0;
            for (size_t i = 0; i < c_size; i++) nonzero |= c1[i];
            pass = st == HGEMM_SUCCESS && nonzero && memcmp(c1, c2, c_size) == 0;
        }
        HGEMM_CHECK_CUDA(cudaGraphExecDestroy(exec));
    }
    HGEMM_CHECK_CUDA(cudaGraphDestroy(graph));
    HGEMM_CHECK_CUDA(cudaStreamDestroy(s));
    printf("%s %-22s %5d x %5d x %5d  two replays, each bitwise a direct call's C\n", pass ? "PASS" : "FAIL",
           "graph, A changed", GM, GN, GK);
    HGEMM_CHECK_CUDA(cudaFree(dA));
    HGEMM_CHECK_CUDA(cudaFree(dB));
    HGEMM_CHECK_CUDA(cudaFree(dC1));
    HGEMM_CHECK_CUDA(cudaFree(dC2));
    HGEMM_CHECK_CUDA(cudaFree(dsa));
    HGEMM_CHECK_CUDA(cudaFree(dsb));
    free(hA), free(hB), free(c1), free(c2);
    return !pass;
}

/* hgemm_grouped_fp8: groups of rows (some empty, one of one row, rows past
 * the last end in no group), each against its own expert (or one shared B),
 * every scale mode; the reference clamps the offsets as the header says. */
typedef struct gcase {
    const char *what;
    hgemm_dtype ct;
    hgemm_scale_mode mode;
    int64_t rows, n, k;
    int groups;
    int32_t offs[6];
    int shared_b;
    float alpha, beta;
    int nan_c;
} gcase;

static const gcase gcases[] = {
    {"grouped, block", HGEMM_DTYPE_BF16, HGEMM_SCALE_BLOCK, 455, 264, 640, 5, {130, 130, 131, 388, 452}, 0,
     1.0f, 0.0f, 1},
    {"grouped, row, one B", HGEMM_DTYPE_F16, HGEMM_SCALE_ROW, 506, 200, 256, 3, {300, 377, 506}, 1, 1.0f, 0.5f, 0},
    {"grouped, tensor, fp32 +=", HGEMM_DTYPE_F32, HGEMM_SCALE_TENSOR, 265, 136, 1040, 4, {1, 201, 201, 265}, 0,
     0.5f, 1.0f, 0},
    {"grouped, offsets clamped", HGEMM_DTYPE_BF16, HGEMM_SCALE_BLOCK, 300, 384, 512, 3, {100, 50, 400}, 0, 1.0f,
     0.0f, 0},
};

static int grouped_case(const gcase *t, int sm_target) {
    const int64_t rows = t->rows, n = t->n, k = t->k, kb = (k + 127) / 128, nb = (n + 127) / 128;
    const int64_t lda = k + 16, ldb = k, ldc = (n + 7) / 8 * 8 + 8, c_rows = rows + PAD_ROWS;
    const int64_t experts = t->shared_b ? 1 : t->groups, stride_b = t->shared_b ? 0 : n * ldb + 32;
    const size_t cb = c_bytes(t->ct), c_size = (size_t)(c_rows * ldc) * cb;
    const size_t b_bytes = (size_t)((experts - 1) * (stride_b ? stride_b : 0) + n * ldb);
    const int64_t sa_n = t->mode == HGEMM_SCALE_TENSOR ? 1 : t->mode == HGEMM_SCALE_ROW ? rows : rows * kb;
    const int64_t sb_one = t->mode == HGEMM_SCALE_TENSOR ? 1 : t->mode == HGEMM_SCALE_ROW ? n : nb * kb;
    const int64_t sb_n = sb_one * experts;
    uint8_t *hA = calloc((size_t)(rows * lda), 1), *hB = calloc(b_bytes, 1);
    float *hsa = malloc((size_t)sa_n * 4), *hsb = malloc((size_t)sb_n * 4);
    unsigned char *hC0 = malloc(c_size), *hC = malloc(c_size);
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < k; j++) hA[i * lda + j] = fp8_random(E4, 41, (uint64_t)(i * k + j));
    for (size_t i = 0; i < b_bytes; i++) hB[i] = fp8_random(E4, 42, (uint64_t)i);
    for (int64_t i = 0; i < sa_n; i++) hsa[i] = scale_random(43, (uint64_t)i);
    for (int64_t i = 0; i < sb_n; i++) hsb[i] = scale_random(44, (uint64_t)i);
    /* the groups as the kernel clamps them */
    int64_t start[6], end[6], high = 0;
    for (int g = 0; g < t->groups; g++) {
        start[g] = high < rows ? high : rows;
        high = t->offs[g] > high ? t->offs[g] : high;
        end[g] = high < rows ? high : rows;
    }
    for (int64_t i = 0; i < c_rows; i++)
        for (int64_t j = 0; j < ldc; j++) {
            const float v = i < rows && j < n && t->nan_c ? NAN : hgemm_check_random_f32(45, (uint64_t)i, (uint64_t)j, 1.0f);
            const int64_t e = i * ldc + j;
            if (t->ct == HGEMM_DTYPE_F32) ((float *)hC0)[e] = v;
            else ((uint16_t *)hC0)[e] = hgemm_check_f32_to_dt(t->ct, v);
        }
    void *dA, *dB, *dC;
    float *dsa, *dsb;
    int32_t *doffs;
    HGEMM_CHECK_CUDA(cudaMalloc(&dA, (size_t)(rows * lda)));
    HGEMM_CHECK_CUDA(cudaMalloc(&dB, b_bytes));
    HGEMM_CHECK_CUDA(cudaMalloc(&dC, c_size));
    HGEMM_CHECK_CUDA(cudaMalloc((void **)&dsa, (size_t)sa_n * 4));
    HGEMM_CHECK_CUDA(cudaMalloc((void **)&dsb, (size_t)sb_n * 4));
    HGEMM_CHECK_CUDA(cudaMalloc((void **)&doffs, sizeof t->offs));
    HGEMM_CHECK_CUDA(cudaMemcpy(dA, hA, (size_t)(rows * lda), cudaMemcpyHostToDevice));
    HGEMM_CHECK_CUDA(cudaMemcpy(dB, hB, b_bytes, cudaMemcpyHostToDevice));
    HGEMM_CHECK_CUDA(cudaMemcpy(dC, hC0, c_size, cudaMemcpyHostToDevice));
    HGEMM_CHECK_CUDA(cudaMemcpy(dsa, hsa, (size_t)sa_n * 4, cudaMemcpyHostToDevice));
    HGEMM_CHECK_CUDA(cudaMemcpy(dsb, hsb, (size_t)sb_n * 4, cudaMemcpyHostToDevice));
    HGEMM_CHECK_CUDA(cudaMemcpy(doffs, t->offs, sizeof t->offs, cudaMemcpyHostToDevice));
    const float beta = t->nan_c ? 0.0f : t->beta;
    hgemm_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.sm_count_target = sm_target;
    const hgemm_status st = hgemm_grouped_fp8(HGEMM_KERNEL_AUTO, E4, E4, t->ct, rows, n, k, t->groups, doffs,
                                              t->alpha, dA, lda, dB, ldb, stride_b, t->mode, dsa, dsb, beta, dC,
                                              ldc, &o, 0);
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    HGEMM_CHECK_CUDA(cudaMemcpy(hC, dC, c_size, cudaMemcpyDeviceToHost));
    int64_t bad = 0, touched = 0, checked = 0;
    double worst = 0.0;
    for (int64_t i = 0; i < c_rows; i++) {
        int g = -1;
        for (int q = 0; q < t->groups; q++)
            if (i >= start[q] && i < end[q]) g = q;
        const int64_t e_b = t->shared_b ? 0 : g;
        for (int64_t j = 0; j < ldc; j++) {
            const int64_t e = i * ldc + j;
            if (g < 0 || j >= n) {
                touched += memcmp(hC + (size_t)e * cb, hC0 + (size_t)e * cb, cb) != 0;
                continue;
            }
            double ref = 0.0, mag = 0.0;
            for (int64_t q = 0; q < k; q++) {
                const double sa = t->mode == HGEMM_SCALE_TENSOR ? hsa[0]
                                  : t->mode == HGEMM_SCALE_ROW  ? hsa[i]
                                                                : hsa[(q / 128) * rows + i];
                const double sb = t->mode == HGEMM_SCALE_TENSOR ? hsb[e_b]
                                  : t->mode == HGEMM_SCALE_ROW  ? hsb[e_b * n + j]
                                                                : hsb[(e_b * nb + j / 128) * kb + q / 128];
                const double p = fp8_value(E4, hA[i * lda + q]) * sa *
                                 fp8_value(E4, hB[e_b * stride_b + j * ldb + q]) * sb;
                ref += p;
                mag += fabs(p);
            }
            ref *= t->alpha, mag *= fabs(t->alpha);
            if (beta != 0.0f) ref += beta * c_get(t->ct, hC0, e), mag += fabs(beta * c_get(t->ct, hC0, e));
            const double got = c_get(t->ct, hC, e), err = fabs(got - ref);
            const double bound = 2.0 * c_unit(t->ct) * fabs(ref) + c_floor(t->ct) + ldexp(mag, -10);
            checked++;
            if (!(err <= bound)) {
                if (bad < 5)
                    printf("     C[%lld][%lld] (group %d) = %.8g, reference %.8g (bound %.3g)\n", (long long)i,
                           (long long)j, g, got, ref, bound);
                bad++;
            }
            if (mag > 0 && err / mag > worst) worst = err / mag;
        }
    }
    const int pass = st == HGEMM_SUCCESS && bad == 0 && touched == 0;
    printf("%s %-22s %5lld x %5lld x %5lld  %d groups  %s  worst |err| / sum|ab| %.2e\n", pass ? "PASS" : "FAIL",
           t->what, (long long)rows, (long long)n, (long long)k, t->groups, sm_target ? "4 SMs   " : "all SMs ",
           worst);
    if (st != HGEMM_SUCCESS) printf("     hgemm_grouped_fp8 returned %s\n", hgemm_status_string(st));
    if (bad) printf("     %lld of %lld elements past the bound\n", (long long)bad, (long long)checked);
    if (touched) printf("     %lld elements outside the groups' rows were written\n", (long long)touched);
    HGEMM_CHECK_CUDA(cudaFree(dA));
    HGEMM_CHECK_CUDA(cudaFree(dB));
    HGEMM_CHECK_CUDA(cudaFree(dC));
    HGEMM_CHECK_CUDA(cudaFree(dsa));
    HGEMM_CHECK_CUDA(cudaFree(dsb));
    HGEMM_CHECK_CUDA(cudaFree(doffs));
    free(hA), free(hB), free(hsa), free(hsb), free(hC0), free(hC);
    return !pass;
}

int main(void) {
    char why[256] = "";
    if (!hgemm_check_sm90_available(why, sizeof why)) {
        printf("test_gpu_fp8: skipped: %s\n", why);
        return EXIT_SKIP;
    }
    int failures = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        failures += run_case(&cases[i], 0);
        failures += run_case(&cases[i], 4);
    }
    for (size_t i = 0; i < sizeof gcases / sizeof gcases[0]; i++) {
        failures += grouped_case(&gcases[i], 0);
        failures += grouped_case(&gcases[i], 4);
    }
    failures += graph_case();
    failures += cudaGetLastError() != cudaSuccess;
    printf("%s: %d failure%s\n", failures ? "FAIL" : "PASS", failures, failures == 1 ? "" : "s");
    return failures != 0;
}
