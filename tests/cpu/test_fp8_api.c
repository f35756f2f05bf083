/*
 * test_fp8_api.c: what hgemm_gemm_fp8 decides before any CUDA call, on the
 * CPU, at fake aligned addresses that are never dereferenced:
 *   - unknown kernel, type or scale mode, fp16 or bf16 inputs, an fp8 C,
 *     negative sizes or SM target, leading dimensions short of k or n, NULL
 *     matrices where they are read, NULL scales: INVALID_VALUE;
 *   - k, lda or ldb not multiples of 16, ldc not of 8, a matrix not 16-byte
 *     aligned, a scale array not 4-byte aligned: MISALIGNED;
 *   - C sharing a byte with A, B or a scale array: INVALID_VALUE;
 *   - a kernel other than AUTO, e5m2 x e5m2, e5m2 with row or block scales, a bias, an activation, a c_in,
 *     a workspace, an fp32 C asked for through the options, a size past what
 *     the kernel addresses: NOT_SUPPORTED;
 *   - nothing to do (m or n zero): SUCCESS;
 *   - hgemm_grouped_fp8's own: groups, offsets and stride_b (negative,
 *     NULL, misaligned), C on the last expert, on the offsets or on the
 *     last expert's block scales (INVALID_VALUE), e5m2, a named kernel,
 *     too many groups, a bias (NOT_SUPPORTED).
 * Requests that would go on to the device return NO_DEVICE where there is
 * none and are skipped (counted) where there is a GPU.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "test_check.h"
#include "internal.h"
#include "fp8/plan.h"

enum { M = 300, N = 264, K = 512 };

static const uintptr_t ADDR_A = (uintptr_t)1 << 40, ADDR_B = (uintptr_t)2 << 40, ADDR_C = (uintptr_t)3 << 40,
                       ADDR_SA = (uintptr_t)4 << 40, ADDR_SB = (uintptr_t)5 << 40;

static int gpu_present, skipped;

typedef struct freq {
    hgemm_kernel kernel;
    hgemm_dtype at, bt, ct;
    hgemm_scale_mode mode;
    int64_t m, n, k;
    uintptr_t A; int64_t lda;
    uintptr_t B; int64_t ldb;
    uintptr_t sa, sb;
    uintptr_t C; int64_t ldc;
} freq;

/* e4m3 x e4m3 -> bf16, block scales, packed */
static freq base(void) {
    freq r = {HGEMM_KERNEL_AUTO, HGEMM_DTYPE_E4M3, HGEMM_DTYPE_E4M3, HGEMM_DTYPE_BF16, HGEMM_SCALE_BLOCK,
              M, N, K, ADDR_A, K, ADDR_B, K, ADDR_SA, ADDR_SB, ADDR_C, N};
    return r;
}

static void expect(const char *file, int line, const char *what, const freq *r, const hgemm_options *o,
                   hgemm_status want) {
    if (want == HGEMM_SUCCESS && r->m > 0 && r->n > 0) {
        if (gpu_present) {
            skipped++;
            return;
        }
        want = HGEMM_ERROR_NO_DEVICE;
    }
    const hgemm_status got =
        hgemm_gemm_fp8(r->kernel, r->at, r->bt, r->ct, r->m, r->n, r->k, 1.0f, (const void *)r->A, r->lda,
                       (const void *)r->B, r->ldb, r->mode, (const float *)r->sa, (const float *)r->sb, 0.5f,
                       (void *)r->C, r->ldc, o, 0);
    check_status(got, want, what, file, line);
}
#define EXPECT(what, r, o, want) expect(__FILE__, __LINE__, (what), (r), (o), (want))

static void test_values(void) {
    freq r = base();
    EXPECT("a valid call", &r, NULL, HGEMM_SUCCESS);
    r = base(), r.mode = HGEMM_SCALE_TENSOR, r.ct = HGEMM_DTYPE_F32;
    EXPECT("tensor scales, fp32 C", &r, NULL, HGEMM_SUCCESS);
    r = base(), r.mode = HGEMM_SCALE_ROW, r.ct = HGEMM_DTYPE_F16;
    EXPECT("row scales, fp16 C", &r, NULL, HGEMM_SUCCESS);
    r = base(), r.bt = HGEMM_DTYPE_E5M2, r.mode = HGEMM_SCALE_TENSOR;
    EXPECT("e4m3 x e5m2, tensor scales", &r, NULL, HGEMM_SUCCESS);
    r = base(), r.at = HGEMM_DTYPE_E5M2, r.mode = HGEMM_SCALE_TENSOR, r.ct = HGEMM_DTYPE_F32;
    EXPECT("e5m2 x e4m3, tensor scales, fp32 C", &r, NULL, HGEMM_SUCCESS);
    r = base(), r.kernel = (hgemm_kernel)999;
    EXPECT("unknown kernel", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = base(), r.at = HGEMM_DTYPE_BF16;
    EXPECT("bf16 A", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = base(), r.bt = (hgemm_dtype)9;
    EXPECT("unknown B type", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = base(), r.ct = HGEMM_DTYPE_E4M3;
    EXPECT("an fp8 C", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = base(), r.mode = (hgemm_scale_mode)3;
    EXPECT("unknown scale mode", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = base(), r.m = -1;
    EXPECT("negative m", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = base(), r.k = -16;
    EXPECT("negative k", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = base(), r.lda = K - 16;
    EXPECT("lda < k", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = base(), r.ldb = K - 16;
    EXPECT("ldb < k", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = base(), r.ldc = N - 8;
    EXPECT("ldc < n", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = base(), r.A = 0;
    EXPECT("NULL A", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = base(), r.C = 0;
    EXPECT("NULL C", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = base(), r.sa = 0;
    EXPECT("NULL scale_a", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = base(), r.sb = 0, r.mode = HGEMM_SCALE_TENSOR;
    EXPECT("NULL scale_b", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    hgemm_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.sm_count_target = -1;
    r = base();
    EXPECT("negative SM target", &r, &o, HGEMM_ERROR_INVALID_VALUE);
    o.sm_count_target = 0;
    o.size = 8;
    EXPECT("options' size short of the first version", &r, &o, HGEMM_ERROR_INVALID_VALUE);
    o.size = sizeof o;
    o.sm_count_target = 16;
    EXPECT("an SM target", &r, &o, HGEMM_SUCCESS);
}

static void test_alignment(void) {
    freq r = base();
    r.k = K - 8, r.lda = K, r.ldb = K;
    EXPECT("k % 16", &r, NULL, HGEMM_ERROR_MISALIGNED);
    r = base(), r.lda = K + 8;
    EXPECT("lda % 16", &r, NULL, HGEMM_ERROR_MISALIGNED);
    r = base(), r.ldb = K + 8;
    EXPECT("ldb % 16", &r, NULL, HGEMM_ERROR_MISALIGNED);
    r = base(), r.lda = K + 16;
    EXPECT("lda padded by 16", &r, NULL, HGEMM_SUCCESS);
    r = base(), r.ldc = N + 4;
    EXPECT("ldc % 8", &r, NULL, HGEMM_ERROR_MISALIGNED);
    r = base(), r.A = ADDR_A + 8;
    EXPECT("A at 8 bytes", &r, NULL, HGEMM_ERROR_MISALIGNED);
    r = base(), r.C = ADDR_C + 8;
    EXPECT("C at 8 bytes", &r, NULL, HGEMM_ERROR_MISALIGNED);
    r = base(), r.sa = ADDR_SA + 2;
    EXPECT("scale_a at 2 bytes", &r, NULL, HGEMM_ERROR_MISALIGNED);
    r = base(), r.sb = ADDR_SB + 4;
    EXPECT("scale_b at 4 bytes", &r, NULL, HGEMM_SUCCESS);
}

static void test_overlaps(void) {
    freq r = base();
    r.C = ADDR_A + (uintptr_t)(M * K) - 16; /* C's first bytes in A's last row */
    EXPECT("C inside A", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = base(), r.C = ADDR_A + (uintptr_t)(M * K);
    EXPECT("C right after A", &r, NULL, HGEMM_SUCCESS);
    r = base(), r.sb = ADDR_C + 64;
    EXPECT("scale_b inside C", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    /* A's block scales: m * ceil(k / 128) floats */
    r = base(), r.C = ADDR_SA + (uintptr_t)(M * (K / 128) * 4) - 16;
    EXPECT("C over scale_a's last block", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = base(), r.C = ADDR_SA + (uintptr_t)(M * (K / 128) * 4);
    EXPECT("C right after scale_a", &r, NULL, HGEMM_SUCCESS);
    r = base(), r.sa = ADDR_B + 64;
    EXPECT("scale_a inside B (only read)", &r, NULL, HGEMM_SUCCESS);
}

static void test_not_supported(void) {
    freq r = base();
    r.kernel = HGEMM_KERNEL_V8;
    EXPECT("V8 named", &r, NULL, HGEMM_ERROR_NOT_SUPPORTED);
    r = base(), r.at = HGEMM_DTYPE_E5M2, r.bt = HGEMM_DTYPE_E5M2;
    EXPECT("e5m2 x e5m2", &r, NULL, HGEMM_ERROR_NOT_SUPPORTED);
    r = base(), r.bt = HGEMM_DTYPE_E5M2;
    EXPECT("e5m2 with block scales", &r, NULL, HGEMM_ERROR_NOT_SUPPORTED);
    r = base(), r.at = HGEMM_DTYPE_E5M2, r.mode = HGEMM_SCALE_ROW;
    EXPECT("e5m2 with row scales", &r, NULL, HGEMM_ERROR_NOT_SUPPORTED);
    r = base(), r.m = (int64_t)1 << 31, r.C = (uintptr_t)1 << 46, r.A = (uintptr_t)1 << 45, r.mode = HGEMM_SCALE_TENSOR;
    EXPECT("m past int32", &r, NULL, HGEMM_ERROR_NOT_SUPPORTED);
    hgemm_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    r = base();
    o.activation = HGEMM_ACTIVATION_GELU_TANH;
    EXPECT("an activation", &r, &o, HGEMM_ERROR_NOT_SUPPORTED);
    o.activation = HGEMM_ACTIVATION_NONE;
    o.bias = (const void *)((uintptr_t)6 << 40);
    o.bias_dtype = HGEMM_DTYPE_F32;
    EXPECT("a bias", &r, &o, HGEMM_ERROR_NOT_SUPPORTED);
    o.bias = NULL;
    o.c_fp32 = 1;
    EXPECT("c_fp32 in the options", &r, &o, HGEMM_ERROR_NOT_SUPPORTED);
    o.c_fp32 = 0;
    o.c_in = (const void *)((uintptr_t)7 << 40);
    o.ldc_in = N;
    EXPECT("a c_in", &r, &o, HGEMM_ERROR_NOT_SUPPORTED);
    o.c_in = NULL;
    o.workspace = (void *)((uintptr_t)8 << 40);
    o.workspace_bytes = 1 << 20;
    EXPECT("a workspace", &r, &o, HGEMM_ERROR_NOT_SUPPORTED);
}

static void test_nothing_to_do(void) {
    freq r = base();
    r.m = 0;
    EXPECT("no rows", &r, NULL, HGEMM_SUCCESS);
    r = base(), r.n = 0;
    EXPECT("no columns", &r, NULL, HGEMM_SUCCESS);
    r = base(), r.k = 0, r.lda = 16, r.ldb = 16;
    EXPECT("k 0: C = beta C", &r, NULL, HGEMM_SUCCESS);
    /* the entry points of fp16 and bf16 refuse the fp8 types */
    const hgemm_status got = hgemm_gemm(HGEMM_KERNEL_AUTO, HGEMM_DTYPE_E4M3, HGEMM_OP_N, HGEMM_OP_T, M, N, K, 1.0f,
                                        (const void *)ADDR_A, K, 0, (const void *)ADDR_B, K, 0, 0.0f,
                                        (void *)ADDR_C, N, 0, 1, NULL, 0);
    check_status(got, HGEMM_ERROR_INVALID_VALUE, "hgemm_gemm with e4m3", __FILE__, __LINE__);
}

/* The split plan (hgemm__fp8_split_log): clusters only where the tiles fill
 * at most half the SMs, as many blocks as fill them, up to 8, each with at
 * least 4 stages of k. */
static void test_split(void) {
    static const struct {
        uint64_t tiles;
        int64_t k_tiles;
        int sms, want;
    } cases[] = {
        {9, 8, 132, 1},      /* 300 x 264 x 1024: two slices of 4 */
        {4, 128, 132, 3},    /* 256 x 256 x 16384: eight */
        {17, 56, 132, 2},    /* 64 x 2112 x 7168: four fill 68 SMs, eight would need 136 */
        {66, 56, 132, 1},    /* exactly half the SMs */
        {67, 56, 132, 0},    /* more than half */
        {4, 7, 132, 0},      /* too little k */
        {4, 15, 132, 1},     /* k for two slices of at least 4, not four */
        {1, 1000, 4, 2},     /* an SM target of 4 */
        {0, 100, 132, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const int got = hgemm__fp8_split_log(cases[i].tiles, cases[i].k_tiles, cases[i].sms);
        char what[96];
        snprintf(what, sizeof what, "split of %llu tiles, %lld k-tiles, %d SMs", (unsigned long long)cases[i].tiles,
                 (long long)cases[i].k_tiles, cases[i].sms);
        check_i64(got, cases[i].want, what, __FILE__, __LINE__);
    }
}

/* hgemm_grouped_fp8: 4 groups of M rows in all, experts N x K apart by stride_b bytes. */
enum { G = 4 };
static const uintptr_t ADDR_OFFS = (uintptr_t)6 << 40;

typedef struct greq {
    hgemm_kernel kernel;
    hgemm_dtype at, bt, ct;
    hgemm_scale_mode mode;
    int64_t rows, n, k, groups;
    uintptr_t offs;
    uintptr_t A; int64_t lda;
    uintptr_t B; int64_t ldb, stride_b;
    uintptr_t sa, sb;
    uintptr_t C; int64_t ldc;
} greq;

static greq gbase(void) {
    greq r = {HGEMM_KERNEL_AUTO, HGEMM_DTYPE_E4M3, HGEMM_DTYPE_E4M3, HGEMM_DTYPE_BF16, HGEMM_SCALE_BLOCK,
              M, N, K, G, ADDR_OFFS, ADDR_A, K, ADDR_B, K, (int64_t)N * K, ADDR_SA, ADDR_SB, ADDR_C, N};
    return r;
}

static void gexpect(const char *file, int line, const char *what, const greq *r, const hgemm_options *o,
                    hgemm_status want) {
    if (want == HGEMM_SUCCESS && r->rows > 0 && r->n > 0 && r->groups > 0) {
        if (gpu_present) {
            skipped++;
            return;
        }
        want = HGEMM_ERROR_NO_DEVICE;
    }
    const hgemm_status got = hgemm_grouped_fp8(
        r->kernel, r->at, r->bt, r->ct, r->rows, r->n, r->k, r->groups, (const int32_t *)r->offs, 1.0f,
        (const void *)r->A, r->lda, (const void *)r->B, r->ldb, r->stride_b, r->mode, (const float *)r->sa,
        (const float *)r->sb, 0.0f, (void *)r->C, r->ldc, o, 0);
    check_status(got, want, what, file, line);
}
#define GEXPECT(what, r, o, want) gexpect(__FILE__, __LINE__, (what), (r), (o), (want))

static void test_grouped(void) {
    greq r = gbase();
    GEXPECT("grouped: a valid call", &r, NULL, HGEMM_SUCCESS);
    r.mode = HGEMM_SCALE_ROW, r.ct = HGEMM_DTYPE_F32;
    GEXPECT("grouped: row scales, fp32 C", &r, NULL, HGEMM_SUCCESS);
    r = gbase(), r.mode = HGEMM_SCALE_TENSOR, r.stride_b = 0;
    GEXPECT("grouped: one B for every group", &r, NULL, HGEMM_SUCCESS);
    r = gbase(), r.groups = 0;
    GEXPECT("grouped: no groups", &r, NULL, HGEMM_SUCCESS);
    r = gbase(), r.rows = 0;
    GEXPECT("grouped: no rows", &r, NULL, HGEMM_SUCCESS);
    r = gbase(), r.k = 0, r.lda = 16, r.ldb = 16, r.stride_b = (int64_t)N * 16;
    GEXPECT("grouped: k 0", &r, NULL, HGEMM_SUCCESS);
    /* invalid values */
    r = gbase(), r.at = HGEMM_DTYPE_BF16;
    GEXPECT("grouped: a bf16 A", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = gbase(), r.ct = HGEMM_DTYPE_E4M3;
    GEXPECT("grouped: an fp8 C", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = gbase(), r.mode = (hgemm_scale_mode)3;
    GEXPECT("grouped: an unknown mode", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = gbase(), r.groups = -1;
    GEXPECT("grouped: negative groups", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = gbase(), r.stride_b = -16;
    GEXPECT("grouped: negative stride_b", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = gbase(), r.offs = 0;
    GEXPECT("grouped: NULL offsets", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = gbase(), r.sb = 0;
    GEXPECT("grouped: NULL scale_b", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = gbase(), r.ldb = K - 16;
    GEXPECT("grouped: ldb short of k", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    /* alignment */
    r = gbase(), r.stride_b = (int64_t)N * K + 8;
    GEXPECT("grouped: stride_b not a multiple of 16", &r, NULL, HGEMM_ERROR_MISALIGNED);
    r = gbase(), r.offs = ADDR_OFFS + 2;
    GEXPECT("grouped: offsets not 4-byte aligned", &r, NULL, HGEMM_ERROR_MISALIGNED);
    r = gbase(), r.sa = ADDR_SA + 2;
    GEXPECT("grouped: scale_a not 4-byte aligned", &r, NULL, HGEMM_ERROR_MISALIGNED);
    r = gbase(), r.k = K + 8, r.lda = K + 16, r.ldb = K + 16;
    GEXPECT("grouped: k not a multiple of 16", &r, NULL, HGEMM_ERROR_MISALIGNED);
    /* C sharing bytes: with the last expert (stride_b counts), the offsets, B's scales */
    r = gbase(), r.C = ADDR_B + (uintptr_t)(G - 1) * N * K;
    GEXPECT("grouped: C on the last expert", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = gbase(), r.C = ADDR_OFFS;
    GEXPECT("grouped: C on the offsets", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = gbase(), r.C = ADDR_SB + (uintptr_t)(G * ((N + 127) / 128) * (K / 128)) * 4 - 16;
    GEXPECT("grouped: C on B's last four block scales", &r, NULL, HGEMM_ERROR_INVALID_VALUE);
    r = gbase(), r.stride_b = 0, r.C = ADDR_SB + (uintptr_t)(((N + 127) / 128) * (K / 128)) * 4;
    GEXPECT("grouped: C past one expert's scales, stride_b 0", &r, NULL, HGEMM_SUCCESS);
    /* not supported */
    r = gbase(), r.kernel = HGEMM_KERNEL_V8;
    GEXPECT("grouped: a named kernel", &r, NULL, HGEMM_ERROR_NOT_SUPPORTED);
    r = gbase(), r.bt = HGEMM_DTYPE_E5M2, r.mode = HGEMM_SCALE_TENSOR;
    GEXPECT("grouped: e5m2 B", &r, NULL, HGEMM_ERROR_NOT_SUPPORTED);
    r = gbase(), r.groups = HGEMM_GROUPED_MAX_GROUPS + 1, r.rows = M;
    GEXPECT("grouped: past the most groups", &r, NULL, HGEMM_ERROR_NOT_SUPPORTED);
    hgemm_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.bias = (const void *)((uintptr_t)7 << 40);
    o.bias_dtype = HGEMM_DTYPE_F32;
    r = gbase();
    GEXPECT("grouped: a bias", &r, &o, HGEMM_ERROR_NOT_SUPPORTED);
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.sm_count_target = 4;
    GEXPECT("grouped: an SM target", &r, &o, HGEMM_SUCCESS);
}

/* The wide build's plan (hgemm__fp8_wide): n over 128 and a full wave of 128 x 256 tiles. */
static void test_wide(void) {
    CHECK_I64(hgemm__fp8_wide(4096, 7168, 132), 1);
    CHECK_I64(hgemm__fp8_wide(1152, 4100, 132), 1);  /* 9 x 17 = 153 tiles */
    CHECK_I64(hgemm__fp8_wide(1024, 4096, 132), 0);  /* 8 x 16 = 128 tiles: short of a wave */
    CHECK_I64(hgemm__fp8_wide(128, 24576, 132), 0);  /* 96 tiles */
    CHECK_I64(hgemm__fp8_wide(300, 264, 4), 1);      /* 3 x 2 tiles on 4 SMs */
    CHECK_I64(hgemm__fp8_wide(100000, 128, 132), 0); /* one narrow tile wide */
}

int main(void) {
    gpu_present = check_gpu_present();
    test_values();
    test_alignment();
    test_overlaps();
    test_not_supported();
    test_nothing_to_do();
    test_split();
    test_wide();
    test_grouped();
    if (skipped) printf("%d valid calls skipped: a GPU is present\n", skipped);
    return check_finish();
}
