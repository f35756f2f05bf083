/*
 * fuzz_validate.c: a fuzz target over hgemm_nt's argument checks. Each input
 * is decoded into a kernel id, sizes, leading dimensions, alpha and pointers
 * (fake addresses, never dereferenced), biased towards the boundaries the
 * rules have; then hgemm__validate and hgemm__preflight must agree with the
 * reference model (model.c), and hgemm_nt must return the model's status, or
 * NO_DEVICE where it would go on to the device and there is none. Any
 * disagreement prints the request and aborts; crashes and undefined behaviour
 * are the sanitizers' to report. The rest of the input then drives
 * hgemm_gemm (element type, operand forms, batch, strides, and the options:
 * workspace, SM target, a separate C input and its leading dimension)
 * against the model's version of the general entry point's rules, then
 * hgemm_grouped, hgemm_gemm_fp8 and hgemm_grouped_fp8 against theirs.
 *
 * Built two ways: with libFuzzer (clang -fsanitize=fuzzer; CI runs it for a
 * bounded time), and with fuzz_main.c, which feeds it deterministic inputs
 * (a CPU test in every build).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "internal.h"
#include "model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct reader {
    const uint8_t *p;
    size_t left;
} reader;

static uint64_t take(reader *r, int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++) {
        v = (v << 8) | (r->left ? *r->p : 0);
        if (r->left) r->p++, r->left--;
    }
    return v;
}

/* Values the rules turn on: 0, 1, tile and grid edges, the size limit, the
 * TMA stride limit, int32 and int64 edges, and negatives. */
static const int64_t EDGES[] = {
    0, 1, 7, 8, 9, 16, 63, 64, 65, 127, 128, 129, 255, 256, 257,
    65535, 65536, INT64_C(65535) * 64, INT64_C(65535) * 64 + 1, INT64_C(65535) * 128,
    INT64_C(65535) * 128 + 1, (INT64_C(1) << 31) - 257, (INT64_C(1) << 31) - 256,
    (INT64_C(1) << 31) - 1, INT64_C(1) << 31, (INT64_C(1) << 31) + 8, INT64_C(1) << 32,
    (INT64_C(1) << 39) - 8, INT64_C(1) << 39, (INT64_C(1) << 39) + 8, INT64_C(1) << 59,
    (INT64_C(1) << 59) - 1, INT64_C(1) << 61, INT64_C(1) << 62, INT64_MAX - 7, INT64_MAX,
    -1, -8, INT64_MIN,
};
enum { N_EDGES = (int)(sizeof EDGES / sizeof EDGES[0]) };

/* A size: small, an edge, a multiple of 8, or any 64-bit value. */
static int64_t size_value(reader *r) {
    const uint64_t sel = take(r, 1);
    switch (sel % 4) {
    case 0: return (int64_t)take(r, 1);
    case 1: return EDGES[take(r, 1) % N_EDGES];
    case 2: return (int64_t)(take(r, 2) * 8);
    default: return (int64_t)take(r, 8);
    }
}

/* A leading dimension for rows of `cols`: tight, tight plus a little, an
 * edge, or any value. */
static int64_t ld_value(reader *r, int64_t cols) {
    const uint64_t sel = take(r, 1);
    const int64_t tight = cols < 1 ? 1 : cols;
    const int64_t rounded = tight > INT64_MAX - 8 ? tight : (tight + 7) / 8 * 8;
    switch (sel % 5) {
    case 0: return rounded;
    case 1: return rounded > INT64_MAX - 2048 ? rounded : rounded + 8 * (int64_t)(take(r, 1) % 256);
    case 2: return (tight > INT64_MAX - 16 ? tight - 16 : tight) + (int64_t)(take(r, 1) % 16) - 8;
    case 3: return EDGES[take(r, 1) % N_EDGES];
    default: return (int64_t)take(r, 8);
    }
}

static const uintptr_t BASE = (uintptr_t)1 << 40;

/* A pointer: NULL, a 16-byte aligned address near BASE, one near another
 * matrix (to reach the overlap rule), a misaligned one, or any value. */
static const void *ptr_value(reader *r, const void *near) {
    const uint64_t sel = take(r, 1);
    switch (sel % 6) {
    case 0: return NULL;
    case 1: return (const void *)(BASE + 16 * (uintptr_t)take(r, 3));
    case 2:
    case 3: {
        const int64_t delta = (int64_t)(int16_t)take(r, 2) * 16;
        const uintptr_t from = near ? (uintptr_t)near : BASE;
        return (const void *)(from + (uintptr_t)delta);
    }
    case 4: return (const void *)(BASE + 16 * (uintptr_t)take(r, 2) + (uintptr_t)(take(r, 1) % 16));
    default: return (const void *)(uintptr_t)take(r, 8);
    }
}

static int gpu_state = -1; /* -1 unknown, 0 none, 1 present */

static void disagree(const char *what, hgemm_status got, hgemm_status want, int kernel, int64_t m,
                     int64_t n, int64_t k, float alpha, const void *A, int64_t lda, const void *B,
                     int64_t ldb, const void *C, int64_t ldc) {
    fprintf(stderr,
            "fuzz_validate: %s returned %d (%s), the model %d (%s)\n"
            "  kernel %d m %lld n %lld k %lld alpha %g\n"
            "  A %p lda %lld  B %p ldb %lld  C %p ldc %lld\n",
            what, (int)got, hgemm_status_string(got), (int)want, hgemm_status_string(want), kernel,
            (long long)m, (long long)n, (long long)k, alpha, A, (long long)lda, B, (long long)ldb,
            C, (long long)ldc);
    abort();
}

/* A batch size: small, an edge, or any value. */
static int64_t batch_value(reader *r) {
    const uint64_t sel = take(r, 1);
    switch (sel % 4) {
    case 0:
    case 1: return (int64_t)(take(r, 1) % 5);
    case 2: return EDGES[take(r, 1) % N_EDGES];
    default: return (int64_t)take(r, 8);
    }
}

/* A batch stride for entries of rows x cols with leading dimension ld: the
 * entry's extent rounded to 8 (entries back to back) plus a little, a little
 * less (C's entries then overlap), 0, an edge, or any value. */
static int64_t stride_value(reader *r, int64_t rows, int64_t cols, int64_t ld) {
    const uint64_t sel = take(r, 1);
    const int64_t tight = rows > 0 && cols > 0 && ld > 0 && rows < (INT64_C(1) << 24) &&
                                  ld < (INT64_C(1) << 24) && cols < (INT64_C(1) << 24)
                              ? ((rows - 1) * ld + cols + 7) / 8 * 8
                              : 8;
    switch (sel % 6) {
    case 0:
    case 1: return tight + 8 * (int64_t)(take(r, 1) % 4);
    case 2: return tight - 8 * (int64_t)(take(r, 1) % 3);
    case 3: return 0;
    case 4: return EDGES[take(r, 1) % N_EDGES];
    default: return (int64_t)take(r, 8);
    }
}

/* An operand form: mostly N (0) or T (1), sometimes an unknown value (-1 or 3). */
static int op_value(reader *r) {
    const uint64_t v = take(r, 1);
    if (v % 16 == 0) return v % 32 == 0 ? -1 : 3;
    return (int)(v % 2);
}

/* hgemm_gemm's options, from the rest of the input: none (NULL, also what
 * an input that ends here reads), all zeros, or each field from its
 * boundaries: a workspace near C or far from every matrix (its size 0, the
 * library's, an edge or any), an SM target (0, small, negative or any int),
 * and a C input (none, C itself, near C or far, at C's leading dimension,
 * a valid one, the TMA limit or any value). */
static const hgemm_nt_options *options_value(reader *r, hgemm_nt_options *o, const void *C, int64_t n,
                                             int64_t ldc) {
    const uint64_t sel = take(r, 1) % 4;
    if (sel == 0) return NULL;
    memset(o, 0, sizeof *o);
    if (sel == 1) return o;
    const uint64_t ws = take(r, 1);
    o->workspace = ws % 3 == 0   ? NULL
                   : ws % 3 == 1 ? (void *)(uintptr_t)ptr_value(r, C)
                                 : (void *)(BASE + ((uintptr_t)1 << 38));
    switch (take(r, 1) % 4) {
    case 0: o->workspace_bytes = 0; break;
    case 1: o->workspace_bytes = HGEMM_WORKSPACE_BYTES; break;
    case 2: o->workspace_bytes = (size_t)EDGES[take(r, 1) % N_EDGES]; break;
    default: o->workspace_bytes = (size_t)take(r, 8); break;
    }
    switch (take(r, 1) % 4) {
    case 0: o->sm_count_target = 0; break;
    case 1: o->sm_count_target = (int)(take(r, 1) % 160); break;
    case 2: o->sm_count_target = -(int)(take(r, 1) % 3) - 1; break;
    default: o->sm_count_target = (int)(uint32_t)take(r, 4); break;
    }
    switch (take(r, 1) % 5) {
    case 0: o->c_in = NULL; break;
    case 1: o->c_in = C; break;
    case 2: o->c_in = ptr_value(r, C); break;
    default: o->c_in = (const void *)(BASE + ((uintptr_t)3 << 37)); break;
    }
    switch (take(r, 1) % 4) {
    case 0: o->ldc_in = ldc; break;
    case 1: o->ldc_in = ld_value(r, n); break;
    case 2: o->ldc_in = (INT64_C(1) << 39) - 8 + 8 * (int64_t)(take(r, 1) % 2); break;
    default: o->ldc_in = (int64_t)take(r, 8); break;
    }
    return o;
}

/* hgemm_gemm against the model: the hgemm_nt request's sizes and pointers,
 * or small sizes and matrices far apart, with an element type, operand
 * forms, leading dimensions for the stored shapes, a batch and strides from
 * the rest of the input. */
static void gemm_case(reader *r, hgemm_kernel id, int64_t m, int64_t n, int64_t k, float alpha,
                      const void *A, const void *B, const void *C) {
    const int small = take(r, 1) % 2;
    if (small) {
        m = (int64_t)take(r, 1), n = (int64_t)take(r, 1), k = (int64_t)take(r, 1);
        A = (const void *)BASE;
        B = (const void *)(BASE + ((uintptr_t)1 << 36));
        C = take(r, 1) % 4 ? (const void *)(BASE + ((uintptr_t)1 << 37)) : ptr_value(r, A);
    }
    const uint64_t dsel = take(r, 1);
    const int dtype = dsel % 8 == 0 ? 2 : (int)(dsel % 2);
    const int op_a = op_value(r), op_b = op_value(r);
    const int64_t ar = op_a == 1 ? k : m, ac = op_a == 1 ? m : k;
    const int64_t br = op_b == 1 ? n : k, bc = op_b == 1 ? k : n;
    /* small sizes: mostly the tight leading dimension, padded a little */
    const int64_t lda = small && take(r, 1) % 4 ? (ac + 7) / 8 * 8 + 8 * (int64_t)(take(r, 1) % 3) + (ac == 0) * 8
                                               : ld_value(r, ac);
    const int64_t ldb = small && take(r, 1) % 4 ? (bc + 7) / 8 * 8 + 8 * (int64_t)(take(r, 1) % 3) + (bc == 0) * 8
                                               : ld_value(r, bc);
    const int64_t ldc = small && take(r, 1) % 4 ? (n + 7) / 8 * 8 + 8 * (int64_t)(take(r, 1) % 3) + (n == 0) * 8
                                               : ld_value(r, n);
    const int64_t batch = batch_value(r);
    const int64_t sa = stride_value(r, ar, ac, lda), sb = stride_value(r, br, bc, ldb);
    const int64_t sc = stride_value(r, m, n, ldc);
    hgemm_nt_options storage;
    const hgemm_nt_options *o = options_value(r, &storage, C, n, ldc);
    int to_device = 0;
    hgemm_status want = model_gemm(id, dtype, op_a, op_b, m, n, k, alpha, A, lda, sa, B, ldb, sb, C,
                                   ldc, sc, batch, o, &to_device);
    if (to_device && gpu_state) return; /* it would launch on fake addresses */
    if (to_device) want = HGEMM_ERROR_NO_DEVICE;
    hgemm_status got = hgemm_gemm(id, (hgemm_dtype)dtype, (hgemm_op)op_a, (hgemm_op)op_b, m, n, k,
                                  alpha, A, lda, sa, B, ldb, sb, 1.0f, (void *)(uintptr_t)C, ldc, sc,
                                  batch, o, NULL);
    if (got != want) {
        fprintf(stderr, "fuzz_validate: hgemm_gemm dtype %d ops %d %d batch %lld strides %lld %lld %lld\n",
                dtype, op_a, op_b, (long long)batch, (long long)sa, (long long)sb, (long long)sc);
        if (o)
            fprintf(stderr, "  options: workspace %p bytes %zu sm_count_target %d c_in %p ldc_in %lld\n",
                    o->workspace, o->workspace_bytes, o->sm_count_target, o->c_in, (long long)o->ldc_in);
        disagree("hgemm_gemm", got, want, (int)id, m, n, k, alpha, A, lda, B, ldb, C, ldc);
    }
}

/* The options of a grouped or FP8 case from the input: a size short of the
 * first version's, a negative SM target, an activation, an fp32 C, a c_in
 * (C itself, or with other_c_in another buffer half the time), a bias of
 * some type, a workspace with or without its pointer; NULL for some inputs. */
static const hgemm_options *ex_options_value(reader *r, hgemm_options *o, const void *C, int64_t ldc,
                                             int other_c_in) {
    memset(o, 0, sizeof *o);
    const uint64_t osel = take(r, 1);
    o->size = osel % 8 == 0 ? 8 : sizeof *o;
    o->sm_count_target = osel % 8 == 1 ? -1 : (int)(take(r, 1) % 3);
    o->activation = osel % 8 == 2 ? (hgemm_activation)(take(r, 1) % 6) : HGEMM_ACTIVATION_NONE;
    if (osel % 8 == 3) o->c_fp32 = 1;
    if (osel % 8 == 4) {
        o->c_in = !other_c_in || take(r, 1) % 2 ? C : (const void *)(BASE + ((uintptr_t)1 << 39));
        o->ldc_in = ldc;
    }
    if (osel % 8 == 5)
        o->bias = (const void *)(BASE + ((uintptr_t)1 << 39)), o->bias_dtype = (hgemm_dtype)(take(r, 1) % 4);
    if (osel % 8 == 6)
        o->workspace_bytes = 64, o->workspace = take(r, 1) % 2 ? NULL : (void *)(BASE + ((uintptr_t)1 << 39));
    return osel % 16 == 7 ? NULL : o;
}

/* hgemm_grouped: sizes, groups, B's layout and stride, the offsets' pointer
 * and the options from the rest of the input, small or edge values. */
static void grouped_case(reader *r, hgemm_kernel id, const void *A, const void *B, const void *C) {
    const int small = take(r, 1) % 2;
    int64_t rows = small ? (int64_t)take(r, 2) % 2000 : size_value(r);
    int64_t n = small ? (int64_t)take(r, 1) * 8 : size_value(r), k = small ? (int64_t)take(r, 1) * 8 : size_value(r);
    const uint64_t gsel = take(r, 1);
    const int64_t groups = gsel % 4 == 0 ? EDGES[take(r, 1) % N_EDGES] : gsel % 4 == 1 ? 1025 : (int64_t)take(r, 1) * 4;
    const int dtype = (int)(take(r, 1) % 3), op_b = op_value(r);
    const int64_t bc = op_b == 0 ? n : k, br = op_b == 0 ? k : n;
    const int64_t lda = small ? (k + 7) / 8 * 8 + (k == 0) * 8 : ld_value(r, k);
    const int64_t ldb = small ? (bc + 7) / 8 * 8 + (bc == 0) * 8 : ld_value(r, bc);
    const int64_t ldc = small ? (n + 7) / 8 * 8 + (n == 0) * 8 : ld_value(r, n);
    const int64_t stride_b = stride_value(r, br, bc, ldb);
    if (small) {
        A = (const void *)BASE;
        B = (const void *)(BASE + ((uintptr_t)1 << 36));
        C = take(r, 1) % 4 ? (const void *)(BASE + ((uintptr_t)1 << 38)) : ptr_value(r, B);
    }
    const void *offs = ptr_value(r, C);
    hgemm_options o;
    const hgemm_options *opt = ex_options_value(r, &o, C, ldc, 1);
    int to_device = 0;
    hgemm_status want = model_grouped(id, dtype, op_b, rows, n, k, groups, offs, A, lda, B, ldb, stride_b, C, ldc,
                                      opt, &to_device);
    if (to_device && gpu_state) return;
    if (to_device) want = HGEMM_ERROR_NO_DEVICE;
    const hgemm_status got = hgemm_grouped(id, (hgemm_dtype)dtype, (hgemm_op)op_b, rows, n, k, groups,
                                           (const int32_t *)offs, 1.0f, A, lda, B, ldb, stride_b, 0.0f,
                                           (void *)(uintptr_t)C, ldc, opt, NULL);
    if (got != want) {
        fprintf(stderr, "fuzz_validate: hgemm_grouped dtype %d op_b %d groups %lld offs %p stride_b %lld\n", dtype,
                op_b, (long long)groups, offs, (long long)stride_b);
        if (opt)
            fprintf(stderr, "  options: size %zu sm %d act %d c_fp32 %d c_in %p ldc_in %lld bias %p/%d ws %p %zu\n",
                    o.size, o.sm_count_target, (int)o.activation, o.c_fp32, o.c_in, (long long)o.ldc_in, o.bias,
                    (int)o.bias_dtype, o.workspace, o.workspace_bytes);
        disagree("hgemm_grouped", got, want, (int)id, rows, n, k, 1.0f, A, lda, B, ldb, C, ldc);
    }
}

/* hgemm_gemm_fp8: types (any of the enum's values and past them), mode, sizes
 * near multiples of 16, the leading dimensions, the scales' pointers and the
 * options, from the rest of the input. */
static void fp8_case(reader *r, hgemm_kernel id, const void *A, const void *B, const void *C) {
    const int small = take(r, 1) % 2;
    const int64_t m = small ? (int64_t)take(r, 2) % 3000 : size_value(r);
    const int64_t n = small ? (int64_t)take(r, 2) % 3000 : size_value(r);
    const int64_t k = small ? (int64_t)take(r, 1) * (take(r, 1) % 4 ? 16 : 8) : size_value(r);
    const int at = (int)(take(r, 1) % 6), bt = (int)(take(r, 1) % 6), ct = (int)(take(r, 1) % 6);
    const int mode = (int)(take(r, 1) % 4);
    int64_t lda = small ? (k + 15) / 16 * 16 + (k == 0) * 16 : ld_value(r, k);
    int64_t ldb = small ? (k + 15) / 16 * 16 + (k == 0) * 16 : ld_value(r, k);
    const int64_t ldc = small ? (n + 7) / 8 * 8 + (n == 0) * 8 : ld_value(r, n);
    if (small && take(r, 1) % 4 == 0) lda += 8; /* a multiple of 8, not 16 */
    if (small) {
        A = (const void *)BASE;
        B = (const void *)(BASE + ((uintptr_t)1 << 36));
        C = take(r, 1) % 4 ? (const void *)(BASE + ((uintptr_t)1 << 38)) : ptr_value(r, B);
    }
    const void *sa = take(r, 1) % 3 ? (const void *)(BASE + ((uintptr_t)1 << 37)) : ptr_value(r, C);
    const void *sb = take(r, 1) % 3 ? (const void *)(BASE + ((uintptr_t)3 << 37)) : ptr_value(r, C);
    hgemm_options o;
    const hgemm_options *opt = ex_options_value(r, &o, C, ldc, 0);
    int to_device = 0;
    hgemm_status want = model_fp8(id, at, bt, ct, mode, m, n, k, A, lda, B, ldb, sa, sb, C, ldc, opt, &to_device);
    if (to_device && gpu_state) return;
    if (to_device) want = HGEMM_ERROR_NO_DEVICE;
    const hgemm_status got =
        hgemm_gemm_fp8(id, (hgemm_dtype)at, (hgemm_dtype)bt, (hgemm_dtype)ct, m, n, k, 1.0f, A, lda, B, ldb,
                       (hgemm_scale_mode)mode, (const float *)sa, (const float *)sb, 0.0f, (void *)(uintptr_t)C, ldc,
                       opt, NULL);
    if (got != want) {
        fprintf(stderr, "fuzz_validate: hgemm_gemm_fp8 types %d %d -> %d mode %d scales %p %p\n", at, bt, ct, mode,
                sa, sb);
        if (opt)
            fprintf(stderr, "  options: size %zu sm %d act %d c_fp32 %d c_in %p ldc_in %lld bias %p/%d ws %p %zu\n",
                    o.size, o.sm_count_target, (int)o.activation, o.c_fp32, o.c_in, (long long)o.ldc_in, o.bias,
                    (int)o.bias_dtype, o.workspace, o.workspace_bytes);
        disagree("hgemm_gemm_fp8", got, want, (int)id, m, n, k, 1.0f, A, lda, B, ldb, C, ldc);
    }
}

/* hgemm_grouped_fp8: types, mode, sizes near multiples of 16, groups, the
 * experts' stride, the offsets' and the scales' pointers and the options,
 * from the rest of the input. */
static void grouped_fp8_case(reader *r, hgemm_kernel id, const void *A, const void *B, const void *C) {
    const int small = take(r, 1) % 2;
    const int64_t rows = small ? (int64_t)take(r, 2) % 3000 : size_value(r);
    const int64_t n = small ? (int64_t)take(r, 2) % 3000 : size_value(r);
    const int64_t k = small ? (int64_t)take(r, 1) * (take(r, 1) % 4 ? 16 : 8) : size_value(r);
    const uint64_t gsel = take(r, 1);
    const int64_t groups = gsel % 4 == 0 ? EDGES[take(r, 1) % N_EDGES] : gsel % 4 == 1 ? 1025 : (int64_t)take(r, 1) * 4;
    const int at = (int)(take(r, 1) % 6), bt = (int)(take(r, 1) % 6), ct = (int)(take(r, 1) % 6);
    const int mode = (int)(take(r, 1) % 4);
    const int64_t lda = small ? (k + 15) / 16 * 16 + (k == 0) * 16 : ld_value(r, k);
    const int64_t ldb = small ? (k + 15) / 16 * 16 + (k == 0) * 16 : ld_value(r, k);
    const int64_t ldc = small ? (n + 7) / 8 * 8 + (n == 0) * 8 : ld_value(r, n);
    const int64_t stride_b = stride_value(r, n, k, ldb);
    if (small) {
        A = (const void *)BASE;
        B = (const void *)(BASE + ((uintptr_t)1 << 36));
        C = take(r, 1) % 4 ? (const void *)(BASE + ((uintptr_t)1 << 38)) : ptr_value(r, B);
    }
    const void *offs = ptr_value(r, C);
    const void *sa = take(r, 1) % 3 ? (const void *)(BASE + ((uintptr_t)1 << 37)) : ptr_value(r, C);
    const void *sb = take(r, 1) % 3 ? (const void *)(BASE + ((uintptr_t)3 << 37)) : ptr_value(r, C);
    hgemm_options o;
    const hgemm_options *opt = ex_options_value(r, &o, C, ldc, 0);
    int to_device = 0;
    hgemm_status want = model_grouped_fp8(id, at, bt, ct, mode, rows, n, k, groups, offs, A, lda, B, ldb, stride_b,
                                          sa, sb, C, ldc, opt, &to_device);
    if (to_device && gpu_state) return;
    if (to_device) want = HGEMM_ERROR_NO_DEVICE;
    const hgemm_status got = hgemm_grouped_fp8(id, (hgemm_dtype)at, (hgemm_dtype)bt, (hgemm_dtype)ct, rows, n, k,
                                               groups, (const int32_t *)offs, 1.0f, A, lda, B, ldb, stride_b,
                                               (hgemm_scale_mode)mode, (const float *)sa, (const float *)sb, 0.0f,
                                               (void *)(uintptr_t)C, ldc, opt, NULL);
    if (got != want) {
        fprintf(stderr, "fuzz_validate: hgemm_grouped_fp8 types %d %d -> %d mode %d groups %lld offs %p stride_b %lld "
                "scales %p %p\n", at, bt, ct, mode, (long long)groups, offs, (long long)stride_b, sa, sb);
        disagree("hgemm_grouped_fp8", got, want, (int)id, rows, n, k, 1.0f, A, lda, B, ldb, C, ldc);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (gpu_state < 0) {
        int count = 0;
        gpu_state = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
        (void)cudaGetLastError();
    }
    reader r = {data, size};
    const int kernel = (int)(take(&r, 1) % (uint64_t)(hgemm__kernel_count() + 3)) - 1;
    const int64_t m = size_value(&r), n = size_value(&r), k = size_value(&r);
    const int64_t lda = ld_value(&r, k), ldb = ld_value(&r, k), ldc = ld_value(&r, n);
    const float alpha = take(&r, 1) % 4 == 0 ? 0.0f : 1.0f;
    const void *A = ptr_value(&r, NULL);
    const void *B = ptr_value(&r, A);
    const void *C = ptr_value(&r, take(&r, 1) % 2 ? A : B);
    const hgemm_kernel id = (hgemm_kernel)kernel;

    hgemm_status got = hgemm__validate(id, m, n, k, A, lda, B, ldb, C, ldc);
    hgemm_status want = model_validate(id, m, n, k, A, lda, B, ldb, C, ldc);
    if (got != want)
        disagree("hgemm__validate", got, want, kernel, m, n, k, alpha, A, lda, B, ldb, C, ldc);
    got = hgemm__preflight(id, m, n, k, alpha, A, lda, B, ldb, C, ldc);
    want = model_preflight(id, m, n, k, alpha, A, lda, B, ldb, C, ldc);
    if (got != want)
        disagree("hgemm__preflight", got, want, kernel, m, n, k, alpha, A, lda, B, ldb, C, ldc);
    /* hgemm_nt up to its first CUDA call: the same status, or (valid, nonempty,
     * servable) the device query's answer. With a GPU such a call would launch
     * on fake addresses: not made. */
    const int to_device = want == HGEMM_SUCCESS && m > 0 && n > 0;
    if (!(to_device && gpu_state)) {
        got = hgemm_nt(id, m, n, k, alpha, A, lda, B, ldb, 1.0f, (void *)(uintptr_t)C, ldc, NULL);
        if (to_device) want = HGEMM_ERROR_NO_DEVICE;
        if (got != want) disagree("hgemm_nt", got, want, kernel, m, n, k, alpha, A, lda, B, ldb, C, ldc);
    }
    gemm_case(&r, id, m, n, k, alpha, A, B, C);
    grouped_case(&r, id, A, B, C);
    fp8_case(&r, id, A, B, C);
    grouped_fp8_case(&r, id, A, B, C);
    return 0;
}
