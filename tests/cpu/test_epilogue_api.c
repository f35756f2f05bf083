/*
 * test_epilogue_api.c: what hgemm_gemm_ex decides before any CUDA call, on
 * the CPU, at fake 16-byte aligned addresses that are never dereferenced:
 *   - the options' size: below the first version's INVALID_VALUE; larger
 *     than the library's struct with a nonzero byte past it NOT_SUPPORTED,
 *     with zeros there the same as the library's own size;
 *   - an unknown activation, and a bias type that is neither C's nor fp32,
 *     INVALID_VALUE; a misaligned bias MISALIGNED; a bias sharing a byte with
 *     C or the workspace INVALID_VALUE (with A it may);
 *   - a bias or an activation: V8 and AUTO serve it in the NT form, every
 *     other kernel and form is NOT_SUPPORTED (k == 0 and alpha == 0
 *     included); m == 0 is SUCCESS with nothing to do;
 *   - an fp32 C: V8 and AUTO in the TN form, alone (no bias, activation or
 *     separate c_in), every form where nothing is multiplied; C's spans at
 *     4 bytes an element (an operand inside them, a batch stride too short
 *     for them: INVALID_VALUE);
 *   - NULL options and all-zero options are hgemm_gemm.
 * Requests that would go on to the device return NO_DEVICE where there is
 * none and are skipped (counted) where there is a GPU.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "test_check.h"
#include "internal.h"

enum { M = 64, N = 48, K = 40, LD = 64, PAD_BYTES = 64 };

static const uintptr_t ADDR_A = (uintptr_t)1 << 40, ADDR_B = (uintptr_t)2 << 40, ADDR_C = (uintptr_t)3 << 40,
                       ADDR_BIAS = (uintptr_t)4 << 40, ADDR_WS = (uintptr_t)5 << 40;

static int gpu_present, skipped;

typedef struct req {
    hgemm_kernel kernel;
    hgemm_dtype dtype;
    hgemm_op op_a, op_b;
    int64_t m, k;
    float alpha;
} req;

/* A with ld LD (m x k or k x m), B likewise, C m x N at ld LD: one entry. */
static hgemm_status call(const req *r, const hgemm_options *o) {
    return hgemm_gemm_ex(r->kernel, r->dtype, r->op_a, r->op_b, r->m, N, r->k, r->alpha, (const void *)ADDR_A, LD, 0,
                         (const void *)ADDR_B, LD, 0, 0.0f, (void *)ADDR_C, LD, 0, 1, o, 0);
}

static void expect(const char *file, int line, const char *what, const req *r, const hgemm_options *o,
                   hgemm_status want) {
    char expr[256];
    snprintf(expr, sizeof expr, "%s: hgemm_gemm_ex(%s, %s %c%c, %lld x %d x %lld)", what,
             hgemm_kernel_name(r->kernel), r->dtype == HGEMM_DTYPE_BF16 ? "bf16" : "f16",
             r->op_a == HGEMM_OP_N ? 'N' : 'T', r->op_b == HGEMM_OP_N ? 'N' : 'T', (long long)r->m, N,
             (long long)r->k);
    if (want == HGEMM_SUCCESS && r->m > 0) {
        if (gpu_present) {
            skipped++;
            return;
        }
        want = HGEMM_ERROR_NO_DEVICE;
    }
    check_status(call(r, o), want, expr, file, line);
}
#define EXPECT(what, r, o, want) expect(__FILE__, __LINE__, (what), (r), (o), (want))

static hgemm_options options_with(const void *bias, hgemm_dtype bias_dtype, hgemm_activation act) {
    hgemm_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.bias = bias;
    o.bias_dtype = bias_dtype;
    o.activation = act;
    return o;
}

static const req NT = {HGEMM_KERNEL_V8, HGEMM_DTYPE_F16, HGEMM_OP_N, HGEMM_OP_T, M, K, 1.0f};

static void test_size(void) {
    hgemm_options o = options_with((const void *)ADDR_BIAS, HGEMM_DTYPE_F16, HGEMM_ACTIVATION_RELU);
    o.size = offsetof(hgemm_options, activation); /* the last field cut off */
    EXPECT("size short of the first version", &NT, &o, HGEMM_ERROR_INVALID_VALUE);
    o.size = 0;
    EXPECT("size 0", &NT, &o, HGEMM_ERROR_INVALID_VALUE);
    o.size = offsetof(hgemm_options, c_fp32);
    EXPECT("size short of c_fp32", &NT, &o, HGEMM_ERROR_INVALID_VALUE);
    o.size = offsetof(hgemm_options, c_fp32) + sizeof(int);
    EXPECT("the first version's size", &NT, &o, HGEMM_SUCCESS);
    /* a caller compiled against a later, longer struct */
    unsigned char longer[sizeof(hgemm_options) + PAD_BYTES];
    memset(longer, 0, sizeof longer);
    hgemm_options *l = (hgemm_options *)(void *)longer;
    *l = options_with((const void *)ADDR_BIAS, HGEMM_DTYPE_F16, HGEMM_ACTIVATION_RELU);
    l->size = sizeof longer;
    EXPECT("a longer struct, zeros past the library's", &NT, l, HGEMM_SUCCESS);
    longer[sizeof longer - 1] = 1;
    EXPECT("a longer struct, a field the library does not know", &NT, l, HGEMM_ERROR_NOT_SUPPORTED);
}

static void test_values(void) {
    hgemm_options o = options_with(NULL, HGEMM_DTYPE_F16, (hgemm_activation)5);
    EXPECT("activation 5", &NT, &o, HGEMM_ERROR_INVALID_VALUE);
    o.activation = (hgemm_activation)-1;
    EXPECT("activation -1", &NT, &o, HGEMM_ERROR_INVALID_VALUE);
    for (int a = HGEMM_ACTIVATION_NONE; a <= HGEMM_ACTIVATION_SILU; a++) {
        o.activation = (hgemm_activation)a;
        EXPECT("each activation", &NT, &o, HGEMM_SUCCESS);
    }
    o = options_with((const void *)ADDR_BIAS, HGEMM_DTYPE_BF16, HGEMM_ACTIVATION_NONE);
    EXPECT("a bf16 bias for fp16 C", &NT, &o, HGEMM_ERROR_INVALID_VALUE);
    o.bias_dtype = (hgemm_dtype)7;
    EXPECT("an unknown bias type", &NT, &o, HGEMM_ERROR_INVALID_VALUE);
    o.bias_dtype = HGEMM_DTYPE_F32;
    EXPECT("an fp32 bias", &NT, &o, HGEMM_SUCCESS);
    req bf = NT;
    bf.dtype = HGEMM_DTYPE_BF16;
    o.bias_dtype = HGEMM_DTYPE_BF16;
    EXPECT("a bf16 bias for bf16 C", &bf, &o, HGEMM_SUCCESS);
    o.bias_dtype = HGEMM_DTYPE_F16;
    EXPECT("an fp16 bias for bf16 C", &bf, &o, HGEMM_ERROR_INVALID_VALUE);
    /* bias_dtype is read only with a bias */
    o = options_with(NULL, (hgemm_dtype)7, HGEMM_ACTIVATION_GELU_TANH);
    EXPECT("no bias, its type unread", &NT, &o, HGEMM_SUCCESS);
}

static void test_bias_memory(void) {
    hgemm_options o = options_with((const void *)(ADDR_BIAS + 8), HGEMM_DTYPE_F16, HGEMM_ACTIVATION_NONE);
    EXPECT("bias 8 bytes off", &NT, &o, HGEMM_ERROR_MISALIGNED);
    o.bias = (const void *)(ADDR_C + 16 * LD); /* inside C's rows */
    EXPECT("bias inside C", &NT, &o, HGEMM_ERROR_INVALID_VALUE);
    o.bias = (const void *)(ADDR_C - N * 2); /* just before C: its last byte meets nothing */
    EXPECT("bias ending where C starts", &NT, &o, HGEMM_SUCCESS);
    o.bias = (const void *)(ADDR_C - N * 2 + 16); /* its last 16 bytes are C's first */
    EXPECT("bias running into C", &NT, &o, HGEMM_ERROR_INVALID_VALUE);
    o.bias_dtype = HGEMM_DTYPE_F32;
    o.bias = (const void *)(ADDR_C - N * 2); /* fp32: twice as long, into C */
    EXPECT("an fp32 bias running into C", &NT, &o, HGEMM_ERROR_INVALID_VALUE);
    o.bias = (const void *)ADDR_A;
    EXPECT("bias inside A (only read)", &NT, &o, HGEMM_SUCCESS);
    o.bias = (const void *)ADDR_WS;
    o.workspace = (void *)ADDR_WS;
    o.workspace_bytes = 1 << 20;
    EXPECT("bias inside the workspace", &NT, &o, HGEMM_ERROR_INVALID_VALUE);
    o.bias = (const void *)ADDR_BIAS;
    EXPECT("bias and a workspace apart", &NT, &o, HGEMM_SUCCESS);
}

static void test_kernels_and_forms(void) {
    const hgemm_options bias = options_with((const void *)ADDR_BIAS, HGEMM_DTYPE_F32, HGEMM_ACTIVATION_NONE);
    const hgemm_options act = options_with(NULL, HGEMM_DTYPE_F16, HGEMM_ACTIVATION_SILU);
    const hgemm_options none = options_with(NULL, HGEMM_DTYPE_F16, HGEMM_ACTIVATION_NONE);
    const hgemm_kernel others[] = {HGEMM_KERNEL_V0, HGEMM_KERNEL_V5, HGEMM_KERNEL_V7, HGEMM_KERNEL_V9};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        req r = NT;
        r.kernel = others[i];
        EXPECT("a bias on a kernel without epilogues", &r, &bias, HGEMM_ERROR_NOT_SUPPORTED);
        EXPECT("an activation on a kernel without epilogues", &r, &act, HGEMM_ERROR_NOT_SUPPORTED);
        EXPECT("no epilogue: the kernel's own call", &r, &none, HGEMM_SUCCESS);
        EXPECT("NULL options: the kernel's own call", &r, NULL, HGEMM_SUCCESS);
        r.k = 0;
        EXPECT("a bias with k == 0 on a kernel without epilogues", &r, &bias, HGEMM_ERROR_NOT_SUPPORTED);
        r.k = K;
        r.alpha = 0.0f;
        EXPECT("a bias with alpha == 0 on a kernel without epilogues", &r, &bias, HGEMM_ERROR_NOT_SUPPORTED);
        r.m = 0;
        EXPECT("m == 0: nothing to do", &r, &bias, HGEMM_SUCCESS);
    }
    const hgemm_kernel chosen[] = {HGEMM_KERNEL_AUTO, HGEMM_KERNEL_AUTO_F16ACC, HGEMM_KERNEL_V8};
    for (size_t i = 0; i < sizeof chosen / sizeof chosen[0]; i++) {
        req r = NT;
        r.kernel = chosen[i];
        EXPECT("a bias on V8 or AUTO, NT", &r, &bias, HGEMM_SUCCESS);
        r.m = 8; /* decode: AUTO would take V9, and takes V8 for the epilogue */
        EXPECT("an activation at m = 8", &r, &act, HGEMM_SUCCESS);
        r.m = M;
        r.k = 0;
        EXPECT("a bias with k == 0 (act(bias) + beta C)", &r, &bias, HGEMM_SUCCESS);
        r.k = K;
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++) {
                if (a == HGEMM_OP_N && b == HGEMM_OP_T) continue;
                r.op_a = (hgemm_op)a;
                r.op_b = (hgemm_op)b;
                EXPECT("a bias in a form other than NT", &r, &bias, HGEMM_ERROR_NOT_SUPPORTED);
                EXPECT("an activation in a form other than NT", &r, &act, HGEMM_ERROR_NOT_SUPPORTED);
                EXPECT("no epilogue in that form", &r, &none, HGEMM_SUCCESS);
            }
    }
}

static void test_fp32_c(void) {
    hgemm_options o = options_with(NULL, HGEMM_DTYPE_F16, HGEMM_ACTIVATION_NONE);
    o.c_fp32 = 1;
    const req TN = {HGEMM_KERNEL_V8, HGEMM_DTYPE_BF16, HGEMM_OP_T, HGEMM_OP_N, M, K, 1.0f};
    EXPECT("fp32 C, TN, V8", &TN, &o, HGEMM_SUCCESS);
    req r = TN;
    r.kernel = HGEMM_KERNEL_AUTO;
    EXPECT("fp32 C, TN, AUTO", &r, &o, HGEMM_SUCCESS);
    r.m = 8; /* AUTO would take V9 */
    EXPECT("fp32 C, TN, AUTO at m = 8", &r, &o, HGEMM_SUCCESS);
    r = TN;
    r.kernel = HGEMM_KERNEL_V9;
    EXPECT("fp32 C on V9", &r, &o, HGEMM_ERROR_NOT_SUPPORTED);
    r.kernel = HGEMM_KERNEL_V5;
    EXPECT("fp32 C on V5", &r, &o, HGEMM_ERROR_NOT_SUPPORTED);
    EXPECT("fp32 C, NT, V8", &NT, &o, HGEMM_ERROR_NOT_SUPPORTED);
    r = NT;
    r.k = 0;
    EXPECT("fp32 C, NT, k == 0 (the scale path)", &r, &o, HGEMM_SUCCESS);
    r.k = K;
    r.alpha = 0.0f;
    EXPECT("fp32 C, NT, alpha == 0 (the scale path)", &r, &o, HGEMM_SUCCESS);
    o.bias = (const void *)ADDR_BIAS;
    o.bias_dtype = HGEMM_DTYPE_F32;
    EXPECT("fp32 C with a bias", &TN, &o, HGEMM_ERROR_NOT_SUPPORTED);
    o.bias = NULL;
    o.activation = HGEMM_ACTIVATION_RELU;
    EXPECT("fp32 C with an activation", &TN, &o, HGEMM_ERROR_NOT_SUPPORTED);
    o.activation = HGEMM_ACTIVATION_NONE;
    o.c_in = (const void *)ADDR_BIAS;
    o.ldc_in = LD;
    EXPECT("fp32 C with a separate c_in", &TN, &o, HGEMM_ERROR_NOT_SUPPORTED);
    o.c_in = NULL;
    o.ldc_in = 0;
    /* C's span at 4 bytes an element: (M - 1) * LD + N elements of fp32 */
    const int64_t c16 = ((int64_t)(M - 1) * LD + N) * 2;
    for (int f32 = 0; f32 < 2; f32++) {
        o.c_fp32 = f32;
        const hgemm_status want = f32 ? HGEMM_ERROR_INVALID_VALUE : HGEMM_SUCCESS;
        /* B starts just past C's 2-byte span: inside an fp32 C's */
        const uintptr_t b_at = ADDR_C + (uintptr_t)(c16 + 16);
        const hgemm_status got = hgemm_gemm_ex(HGEMM_KERNEL_V8, HGEMM_DTYPE_BF16, HGEMM_OP_T, HGEMM_OP_N, M, N, K,
                                               1.0f, (const void *)ADDR_A, LD, 0, (const void *)b_at, LD, 0, 0.0f,
                                               (void *)ADDR_C, LD, 0, 1, &o, 0);
        if (!(want == HGEMM_SUCCESS && gpu_present))
            CHECK_MSG(got == (want == HGEMM_SUCCESS ? HGEMM_ERROR_NO_DEVICE : want),
                      "B just past a 2-byte C, c_fp32 %d: %s", f32, check_status_name(got));
        /* a batch of 2 whose C entries are one 2-byte C apart: they meet as fp32 */
        const int64_t stride = ((int64_t)M * LD);
        const hgemm_status batched = hgemm_gemm_ex(HGEMM_KERNEL_V8, HGEMM_DTYPE_BF16, HGEMM_OP_T, HGEMM_OP_N, M, N, K,
                                                   1.0f, (const void *)ADDR_A, LD, (int64_t)K * LD,
                                                   (const void *)ADDR_B, LD, (int64_t)K * LD, 0.0f, (void *)ADDR_C, LD,
                                                   stride / 2, 2, &o, 0);
        CHECK_MSG(batched == HGEMM_ERROR_INVALID_VALUE, "C entries half a C apart, c_fp32 %d: %s", f32,
                  check_status_name(batched));
        const hgemm_status apart = hgemm_gemm_ex(HGEMM_KERNEL_V8, HGEMM_DTYPE_BF16, HGEMM_OP_T, HGEMM_OP_N, M, N, K,
                                                 1.0f, (const void *)ADDR_A, LD, (int64_t)K * LD, (const void *)ADDR_B,
                                                 LD, (int64_t)K * LD, 0.0f, (void *)ADDR_C, LD, stride, 2, &o, 0);
        if (!gpu_present)
            CHECK_MSG(apart == HGEMM_ERROR_NO_DEVICE, "C entries a C apart, c_fp32 %d: %s", f32,
                      check_status_name(apart));
    }
}

/* hgemm_gemm_ex with no options, or with no epilogue, decides as hgemm_gemm does */
static void test_same_as_gemm(void) {
    const hgemm_options none = options_with(NULL, HGEMM_DTYPE_F16, HGEMM_ACTIVATION_NONE);
    const int64_t lds[] = {LD, LD + 4, N - 8};
    for (size_t i = 0; i < sizeof lds / sizeof lds[0]; i++) {
        const hgemm_status g = hgemm_gemm(HGEMM_KERNEL_V5, HGEMM_DTYPE_F16, HGEMM_OP_N, HGEMM_OP_T, M, N, K, 1.0f,
                                          (const void *)ADDR_A, lds[i], 0, (const void *)ADDR_B, LD, 0, 0.0f,
                                          (void *)ADDR_C, LD, 0, 1, NULL, 0);
        for (int with = 0; with < 2; with++) {
            const hgemm_status x = hgemm_gemm_ex(HGEMM_KERNEL_V5, HGEMM_DTYPE_F16, HGEMM_OP_N, HGEMM_OP_T, M, N, K,
                                                 1.0f, (const void *)ADDR_A, lds[i], 0, (const void *)ADDR_B, LD, 0,
                                                 0.0f, (void *)ADDR_C, LD, 0, 1, with ? &none : NULL, 0);
            CHECK_MSG(x == g, "lda %lld, options %s: hgemm_gemm %s, hgemm_gemm_ex %s", (long long)lds[i],
                      with ? "zero" : "NULL", check_status_name(g), check_status_name(x));
        }
    }
}

int main(void) {
    gpu_present = check_gpu_present();
    printf("test_epilogue_api: %s\n", gpu_present ? "a CUDA device is present"
                                                  : "no CUDA device or driver: servable requests must "
                                                    "return HGEMM_ERROR_NO_DEVICE");
    test_size();
    test_values();
    test_bias_memory();
    test_kernels_and_forms();
    test_fp32_c();
    test_same_as_gemm();
    if (skipped) printf("test_epilogue_api: skipped %d servable requests (a GPU is present)\n", skipped);
    return check_finish();
}
