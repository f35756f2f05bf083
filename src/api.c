/*
 * api.c: the entry points' argument checks, the status strings and dispatch
 * (the kernel table: kernel_table.c; AUTO's choice by shape: auto.c). Every check runs
 * before the first CUDA call, so each error path can be tested on a machine
 * with no GPU.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "internal.h"

/* The row a request runs: the table's for an explicit kernel, the choice by
 * shape for AUTO and AUTO_F16ACC (NULL for an unknown id: validate refuses it). */
static const hgemm_kernel_info *resolve(hgemm_kernel kernel, int64_t m, int64_t n, int64_t k) {
    if (kernel == HGEMM_KERNEL_AUTO) kernel = hgemm__auto_choice(m, n, k);
    else if (kernel == HGEMM_KERNEL_AUTO_F16ACC) kernel = hgemm__auto_f16acc_choice(m, n, k);
    return hgemm__kernel_find(kernel);
}

const char *hgemm_kernel_name(hgemm_kernel kernel) {
    if (kernel == HGEMM_KERNEL_AUTO) return "auto";
    if (kernel == HGEMM_KERNEL_AUTO_F16ACC) return "auto-f16acc";
    const hgemm_kernel_info *info = hgemm__kernel_find(kernel);
    return info ? info->name : NULL;
}

const char *hgemm_status_string(hgemm_status status) {
    switch (status) {
    case HGEMM_SUCCESS: return "success";
    case HGEMM_ERROR_INVALID_VALUE:
        return "invalid value: a negative size, a NULL matrix with nonzero size, a leading "
               "dimension smaller than its row, an unknown kernel, or C overlapping A or B";
    case HGEMM_ERROR_MISALIGNED:
        return "misaligned: every matrix must be 16-byte aligned and every leading dimension a "
               "multiple of 8 elements";
    case HGEMM_ERROR_NOT_SUPPORTED: return "not supported: a valid request this kernel cannot serve";
    case HGEMM_ERROR_NO_DEVICE: return "no CUDA device or driver";
    case HGEMM_ERROR_ARCH_MISMATCH:
        return "architecture mismatch: the current device is not compute capability 9.0 (Hopper)";
    case HGEMM_ERROR_CUDA: return "a CUDA call failed";
    }
    return "unknown status";
}

/* One request of any entry point: hgemm_gemm's arguments (hgemm_nt's are
 * fp16, N and T, one entry, strides 0). */
typedef struct request {
    hgemm_kernel kernel;
    hgemm_dtype dtype;
    hgemm_op op_a, op_b;
    int64_t m, n, k;
    float alpha, beta;
    const void *A; int64_t lda, stride_a;
    const void *B; int64_t ldb, stride_b;
    void *C;       int64_t ldc, stride_c;
    int64_t batch;
    const hgemm_nt_options *options; /* never NULL here */
    hgemm_epi epi;                   /* hgemm_gemm_ex's epilogue; zero: none */
} request;

static const hgemm_nt_options NO_OPTIONS = {NULL, 0, 0, NULL, 0};
#define NO_EPI {NULL, 0, HGEMM_ACTIVATION_NONE, 0, 0}

/* Whether the options name a C input apart from C (hgemm_nt_options.c_in). */
static int has_c_in(const request *r) {
    const hgemm_nt_options *o = r->options;
    return o->c_in != NULL && !(o->c_in == (const void *)r->C && o->ldc_in == r->ldc);
}

/* Every rule of include/hgemm.h, in the order its statuses are decided:
 * the values, the sizes and leading dimensions, NULL, alignment, overlaps,
 * then the options. No CUDA call. */
static hgemm_status validate(const request *r) {
    if (r->kernel != HGEMM_KERNEL_AUTO && r->kernel != HGEMM_KERNEL_AUTO_F16ACC &&
        hgemm__kernel_find(r->kernel) == NULL)
        return HGEMM_ERROR_INVALID_VALUE;
    if ((r->dtype != HGEMM_DTYPE_F16 && r->dtype != HGEMM_DTYPE_BF16) ||
        (r->op_a != HGEMM_OP_N && r->op_a != HGEMM_OP_T) || (r->op_b != HGEMM_OP_N && r->op_b != HGEMM_OP_T))
        return HGEMM_ERROR_INVALID_VALUE;
    const int64_t m = r->m, n = r->n, k = r->k, batch = r->batch;
    if (m < 0 || n < 0 || k < 0 || batch < 0 || r->stride_a < 0 || r->stride_b < 0 || r->stride_c < 0)
        return HGEMM_ERROR_INVALID_VALUE;
    /* The stored shapes: rows x cols of A and B as they lie in memory. */
    const int64_t a_rows = r->op_a == HGEMM_OP_N ? m : k, a_cols = r->op_a == HGEMM_OP_N ? k : m;
    const int64_t b_rows = r->op_b == HGEMM_OP_N ? k : n, b_cols = r->op_b == HGEMM_OP_N ? n : k;
    /* A leading dimension is at least its row length, and at least 1. */
    if (r->lda < (a_cols > 1 ? a_cols : 1) || r->ldb < (b_cols > 1 ? b_cols : 1) ||
        r->ldc < (n > 1 ? n : 1))
        return HGEMM_ERROR_INVALID_VALUE;
    const int64_t a_one = hgemm__span_bytes(a_rows, a_cols, r->lda), b_one = hgemm__span_bytes(b_rows, b_cols, r->ldb);
    /* C's elements: 2 bytes, or 4 for an fp32 C (cs 2: n and ldc doubled) */
    const int cs = r->epi.c_f32 ? 2 : 1;
    const int64_t c_one = hgemm__scaled(hgemm__span_bytes(m, n, r->ldc), cs);
    if (a_one < 0 || b_one < 0 || c_one < 0) return HGEMM_ERROR_INVALID_VALUE;
    const int64_t a_all = hgemm__batch_span(a_one, r->stride_a, batch);
    const int64_t b_all = hgemm__batch_span(b_one, r->stride_b, batch);
    const int64_t c_all = hgemm__scaled(hgemm__batch_span(hgemm__span_bytes(m, n, r->ldc), r->stride_c, batch), cs);
    if (a_all < 0 || b_all < 0 || c_all < 0) return HGEMM_ERROR_INVALID_VALUE;
    if ((a_all && r->A == NULL) || (b_all && r->B == NULL) || (c_all && r->C == NULL))
        return HGEMM_ERROR_INVALID_VALUE;
    if (r->lda % 8 || r->ldb % 8 || r->ldc % 8 || r->stride_a % 8 || r->stride_b % 8 || r->stride_c % 8)
        return HGEMM_ERROR_MISALIGNED;
    if ((a_all && hgemm__misaligned(r->A)) || (b_all && hgemm__misaligned(r->B)) || (c_all && hgemm__misaligned(r->C)))
        return HGEMM_ERROR_MISALIGNED;
    /* C's entries are written: no two may share a byte. */
    if (batch > 1 && c_one > 0 && r->stride_c * 2 * cs < c_one) return HGEMM_ERROR_INVALID_VALUE;
    /* C and the operands: exact for one entry of one element size, by
     * address ranges for a batch or an fp32 C. */
    if (batch == 1 && cs == 1) {
        if (hgemm__shares_element(r->C, m, n, r->ldc, r->A, a_rows, a_cols, r->lda) ||
            hgemm__shares_element(r->C, m, n, r->ldc, r->B, b_rows, b_cols, r->ldb))
            return HGEMM_ERROR_INVALID_VALUE;
    } else if (hgemm__overlaps(r->C, c_all, r->A, a_all) || hgemm__overlaps(r->C, c_all, r->B, b_all)) {
        return HGEMM_ERROR_INVALID_VALUE;
    }
    /* The options: an SM target of 0 or more; a workspace of device memory,
     * 16-byte aligned, sharing no byte with any matrix (0 bytes: none). */
    const hgemm_nt_options *o = r->options;
    if (o->sm_count_target < 0) return HGEMM_ERROR_INVALID_VALUE;
    if (o->workspace_bytes) {
        if (o->workspace == NULL || o->workspace_bytes > (size_t)INT64_MAX) return HGEMM_ERROR_INVALID_VALUE;
        if (hgemm__misaligned(o->workspace)) return HGEMM_ERROR_MISALIGNED;
        const int64_t ws = (int64_t)o->workspace_bytes;
        if (hgemm__overlaps(o->workspace, ws, r->A, a_all) || hgemm__overlaps(o->workspace, ws, r->B, b_all) ||
            hgemm__overlaps(o->workspace, ws, r->C, c_all))
            return HGEMM_ERROR_INVALID_VALUE;
    }
    /* A separate C input: C's rules at ldc_in and stride_c, no byte shared
     * with C or the workspace (both written); A and B it may meet. */
    if (has_c_in(r)) {
        if (o->ldc_in < (n > 1 ? n : 1)) return HGEMM_ERROR_INVALID_VALUE;
        const int64_t in_one = hgemm__span_bytes(m, n, o->ldc_in);
        const int64_t in_all = in_one < 0 ? -1 : hgemm__scaled(hgemm__batch_span(in_one, r->stride_c, batch), cs);
        if (in_all < 0) return HGEMM_ERROR_INVALID_VALUE;
        if (o->ldc_in % 8) return HGEMM_ERROR_MISALIGNED;
        if (in_all && hgemm__misaligned(o->c_in)) return HGEMM_ERROR_MISALIGNED;
        /* an fp32 matrix is a 2-byte one of twice the columns and ld */
        if (batch == 1 ? hgemm__shares_element(r->C, m, n * cs, r->ldc * cs, o->c_in, m, n * cs, o->ldc_in * cs)
                       : hgemm__overlaps(r->C, c_all, o->c_in, in_all))
            return HGEMM_ERROR_INVALID_VALUE;
        if (o->workspace_bytes && hgemm__overlaps(o->workspace, (int64_t)o->workspace_bytes, o->c_in, in_all))
            return HGEMM_ERROR_INVALID_VALUE;
    }
    /* The epilogue: a known activation; a bias of n values, 16-byte
     * aligned, sharing no byte with C or the workspace (both written). */
    if ((unsigned)r->epi.act > HGEMM_ACTIVATION_SILU) return HGEMM_ERROR_INVALID_VALUE;
    if (r->epi.bias != NULL) {
        if (hgemm__misaligned(r->epi.bias)) return HGEMM_ERROR_MISALIGNED;
        const int64_t bias_bytes = n * (r->epi.bias_f32 ? 4 : 2);
        if (hgemm__overlaps(r->C, c_all, r->epi.bias, bias_bytes) ||
            (o->workspace_bytes && hgemm__overlaps(o->workspace, (int64_t)o->workspace_bytes, r->epi.bias, bias_bytes)))
            return HGEMM_ERROR_INVALID_VALUE;
    }
    return HGEMM_SUCCESS;
}

/* hgemm_nt's request (fp16, A as stored, B transposed, one entry). */
static request nt_request(hgemm_kernel kernel, int64_t m, int64_t n, int64_t k, float alpha,
                          const void *A, int64_t lda, const void *B, int64_t ldb, float beta,
                          void *C, int64_t ldc, const hgemm_nt_options *options) {
    request r = {kernel, HGEMM_DTYPE_F16, HGEMM_OP_N, HGEMM_OP_T, m, n, k, alpha, beta,
                 A, lda, 0, B, ldb, 0, C, ldc, 0, 1, options ? options : &NO_OPTIONS, NO_EPI};
    return r;
}

hgemm_status hgemm__validate(hgemm_kernel kernel, int64_t m, int64_t n, int64_t k,
                             const void *A, int64_t lda, const void *B, int64_t ldb,
                             const void *C, int64_t ldc) {
    const request r = nt_request(kernel, m, n, k, 1.0f, A, lda, B, ldb, 0.0f,
                                 (void *)(uintptr_t)C, ldc, NULL);
    return validate(&r);
}

/* Each matrix the launch reads or writes, from entry 0's first element to
 * entry batch-1's last (one entry when batch <= 1): C; the C input where
 * beta != 0; A and B where alpha != 0 and k > 0. Sizes and strides passed
 * validate(), so every span exists. */
hgemm_status hgemm__check_pointers(const hgemm_problem *p, int dev) {
    const int64_t batch = p->batch > 1 ? p->batch : 1;
    const int cs = p->epi.c_f32 ? 2 : 1; /* an fp32 C: twice the bytes */
    hgemm_status st =
        hgemm__check_ends(p->C, hgemm__scaled(hgemm__batch_span(hgemm__span_bytes(p->m, p->n, p->ldc), p->stride_c, batch), cs), dev);
    if (st == HGEMM_SUCCESS && p->C_in != NULL && p->beta != 0.0f)
        st = hgemm__check_ends(p->C_in, hgemm__scaled(hgemm__batch_span(hgemm__span_bytes(p->m, p->n, p->ldc_in), p->stride_c, batch), cs), dev);
    if (st == HGEMM_SUCCESS && p->epi.bias != NULL)
        st = hgemm__check_ends(p->epi.bias, p->n * (p->epi.bias_f32 ? 4 : 2), dev);
    if (st == HGEMM_SUCCESS && p->k > 0 && p->alpha != 0.0f) { /* A and B are read */
        const int64_t a_one = p->a_mn ? hgemm__span_bytes(p->k, p->m, p->lda) : hgemm__span_bytes(p->m, p->k, p->lda);
        const int64_t b_one = p->b_mn ? hgemm__span_bytes(p->k, p->n, p->ldb) : hgemm__span_bytes(p->n, p->k, p->ldb);
        st = hgemm__check_ends(p->A, hgemm__batch_span(a_one, p->stride_a, batch), dev);
        if (st == HGEMM_SUCCESS) st = hgemm__check_ends(p->B, hgemm__batch_span(b_one, p->stride_b, batch), dev);
    }
    return st;
}


/* Everything hgemm_nt decides before its first CUDA call, for arguments that
 * passed hgemm__validate: the status, and in *run the launcher to call (NULL
 * when there is nothing to do). `info` is the kernel's row, NULL for AUTO. */
static hgemm_status preflight(const hgemm_kernel_info *info, const hgemm_problem *p,
                              hgemm_launch_fn *run) {
    *run = NULL;
    if (p->m == 0 || p->n == 0) return HGEMM_SUCCESS;
    if (p->m > HGEMM_MAX_DIM || p->n > HGEMM_MAX_DIM || p->k > HGEMM_MAX_DIM) return HGEMM_ERROR_NOT_SUPPORTED;
    /* Nothing to multiply: C = beta * C, and A and B are never read. */
    if (p->k == 0 || p->alpha == 0.0f) {
        *run = hgemm__launch_scale;
        return HGEMM_SUCCESS;
    }
    if (info == NULL) info = hgemm__kernel_find(hgemm__auto_choice(p->m, p->n, p->k));
    /* A row without its own check gets the tensor-map limits of A, B and C. */
    hgemm_status st = info->supports ? info->supports(p) : hgemm__tmap_supports(p, 1);
    if (st == HGEMM_SUCCESS) *run = info->launch;
    return st;
}

hgemm_status hgemm__preflight(hgemm_kernel kernel, int64_t m, int64_t n, int64_t k, float alpha,
                              const void *A, int64_t lda, const void *B, int64_t ldb,
                              const void *C, int64_t ldc) {
    hgemm_status st = hgemm__validate(kernel, m, n, k, A, lda, B, ldb, C, ldc);
    if (st != HGEMM_SUCCESS) return st;
    const hgemm_kernel_info *info = resolve(kernel, m, n, k);
    hgemm_problem p = {m, n, k, alpha, 0.0f, A, lda, B, ldb, (void *)(uintptr_t)C, ldc, NULL, 0, 0,
                       HGEMM_DTYPE_F16, 0, 0, 1, 0, 0, 0, NULL, 0, NO_EPI};
    hgemm_launch_fn run;
    return preflight(info, &p, &run);
}

/* Whether a request is the series' form, which every kernel serves: fp16,
 * A as stored, B transposed (a batch of them runs entry by entry). */
static int is_nt_form(const request *r) {
    return r->dtype == HGEMM_DTYPE_F16 && r->op_a == HGEMM_OP_N && r->op_b == HGEMM_OP_T;
}

/* Whether the kernel is chosen by shape (AUTO, AUTO_F16ACC). */
static int is_chosen(hgemm_kernel kernel) {
    return kernel == HGEMM_KERNEL_AUTO || kernel == HGEMM_KERNEL_AUTO_F16ACC;
}

/* Entry b's matrix of a batch, as an address (A and B may be NULL when k == 0). */
static const void *entry_of(const void *x, int64_t stride, int64_t b) {
    return (const void *)((uintptr_t)x + (uintptr_t)(b * stride * 2));
}

/* The one-entry problem of entry b, for a row that launches entry by entry. */
static hgemm_problem entry_problem(const hgemm_problem *p, const request *r, int64_t b) {
    hgemm_problem e = *p;
    e.batch = 1;
    e.A = entry_of(r->A, r->stride_a, b);
    e.B = entry_of(r->B, r->stride_b, b);
    e.C = (void *)(uintptr_t)entry_of(r->C, r->stride_c, b);
    if (p->C_in) e.C_in = entry_of(p->C_in, r->stride_c, b);
    return e;
}

/* The row a validated request runs and the problem it hands the row's
 * launcher (its batch one where the row takes the entries one by one), as
 * run_validated decides them before any CUDA call; NOT_SUPPORTED where the
 * row does not serve the request. hgemm__explain decides the same way. */
static hgemm_status choose_row(const hgemm_kernel_info **row, int chosen, const request *r, hgemm_problem *out) {
    const hgemm_kernel_info *info = *row;
    const hgemm_nt_options *o = r->options;
    const int nt = is_nt_form(r);
    hgemm_problem p = {r->m, r->n, r->k, r->alpha, r->beta, r->A, r->lda, r->B, r->ldb, r->C, r->ldc,
                       o->workspace_bytes ? o->workspace : NULL, o->workspace_bytes,
                       o->sm_count_target, r->dtype, r->op_a == HGEMM_OP_T, r->op_b == HGEMM_OP_N,
                       r->batch, r->stride_a, r->stride_b, r->stride_c, NULL, 0, NO_EPI};
    if (info == NULL) {
        info = hgemm__kernel_find(hgemm__auto_choice(r->m, r->n, r->k));
        chosen = 1;
    }
    /* AUTO's rows by workspace: split-K on V8 for few long tiles. */
    if (chosen && info->id == HGEMM_KERNEL_V9 && hgemm__auto_prefers_split(r->m, r->n, r->k, o->workspace_bytes))
        info = hgemm__kernel_find(HGEMM_KERNEL_V8);
    /* A separate C input: V8's own row alone reads it (AUTO takes V8), and
     * only where no column tile needs the element-wise epilogue. */
    if (has_c_in(r)) {
        if (chosen) info = hgemm__kernel_find(HGEMM_KERNEL_V8);
        if ((info->launch != hgemm__launch_v8 || r->n % 8 != 0) && r->m > 0 && r->n > 0)
            return HGEMM_ERROR_NOT_SUPPORTED;
        p.C_in = o->c_in;
        p.ldc_in = o->ldc_in;
    }
    /* A fused epilogue or an fp32 C: V8's row alone serves it (AUTO takes
     * V8), a bias or an activation in the NT form, an fp32 C in the TN form
     * without them nor a separate c_in (V8's builds; the scale path serves
     * every form), with no split (its partial sums would need it too): no
     * workspace. */
    if (hgemm__epi_on(&r->epi)) {
        if (chosen) info = hgemm__kernel_find(HGEMM_KERNEL_V8);
        const int act = r->epi.bias != NULL || r->epi.act != HGEMM_ACTIVATION_NONE;
        const int tn = r->op_a == HGEMM_OP_T && r->op_b == HGEMM_OP_N;
        const int zero = r->k == 0 || r->alpha == 0.0f; /* the scale path */
        const int form_ok = r->epi.c_f32 ? !act && !has_c_in(r) && (tn || zero)
                                         : r->op_a == HGEMM_OP_N && r->op_b == HGEMM_OP_T;
        if ((info->launch != hgemm__launch_v8 || !form_ok) && r->m > 0 && r->n > 0)
            return HGEMM_ERROR_NOT_SUPPORTED;
        p.epi = r->epi;
        p.workspace = NULL;
        p.workspace_bytes = 0;
    }
    if (!nt && chosen) {
        hgemm_problem one = p; /* what the row would receive */
        if (!info->batched) one.batch = 1;
        if (!info->forms || (info->supports && info->supports(&one) != HGEMM_SUCCESS))
            info = hgemm__kernel_find(HGEMM_KERNEL_V8);
    }
    /* A batch: one launch of V8 for all of its entries, not one launch per
     * entry of a kernel without batches. 64 x 1024x1024x128: V9 entry by
     * entry 0.375 ms, cuBLAS's batched call 0.052 (run 26). Skinny and tiny
     * entries too (run 131, an H100, beside cuBLAS's batched call): 4096 x
     * 64^3 V9 entry by entry 0.002x, V8 0.54x; 32 x 1 x 4096 x 128 0.073x
     * and 0.66x; 64 x 16 x 1408 x 2048 0.34x and 0.87x; 8 x 64 x 14336 x
     * 4096, whose entries stream 117 MB each, 0.961x and 0.958x. A batch V8
     * cannot take in one launch (strides past its tensor maps) stays with
     * the choice, entry by entry. */
    if (chosen && r->batch > 1 && !info->batched) {
        const hgemm_kernel_info *v8 = hgemm__kernel_find(HGEMM_KERNEL_V8);
        if (v8->supports(&p) == HGEMM_SUCCESS) info = v8; /* else entry by entry, as chosen */
    }
    *row = info;
    *out = p;
    if (!info->forms && !nt && r->m > 0 && r->n > 0) return HGEMM_ERROR_NOT_SUPPORTED;
    if (!info->batched) out->batch = 1;
    return HGEMM_SUCCESS;
}

/* Stands for the library's workspace while a call is planned (never
 * dereferenced; run_validated puts the borrowed one in its place). */
static _Alignas(16) char LIBRARY_WS_PLAN;

/* Whether a call brings no workspace and the library lends one: then `lib`
 * is the request with the library's (planned, not yet borrowed). */
static int library_plan(const request *r, request *lib, hgemm_nt_options *lib_options) {
    if (r->options->workspace_bytes != 0 || !hgemm__library_workspace_on()) return 0;
    *lib_options = *r->options;
    lib_options->workspace = &LIBRARY_WS_PLAN;
    lib_options->workspace_bytes = HGEMM_WORKSPACE_BYTES;
    *lib = *r;
    lib->options = lib_options;
    return 1;
}

/* What every entry point does once validate() passed: `info` is the kernel's
 * row (NULL: AUTO's choice by shape), `chosen` whether AUTO or AUTO_F16ACC
 * picked it. The kernel's limits are decided first (preflight, the same for
 * every entry), then the device once, then the pointers (CUDA calls) of
 * every entry, and only then the launches, in order on the stream: one
 * launch for the whole batch where the row is `batched` (or there is nothing
 * to multiply), one per entry otherwise. So a refusal queues nothing; only
 * a launch failing after the first leaves the entries before it queued.
 * A chosen row that does not serve the form gives way to V8, which serves
 * every form; an explicit one returns NOT_SUPPORTED. */
static hgemm_status run_validated(const hgemm_kernel_info *info, int chosen, const request *r,
                                  cudaStream_t stream) {
    /* A call without a workspace is planned with the library's, borrowed
     * below where V8 runs; where none can be had, planned again without. */
    hgemm_nt_options lib_options;
    request lib = *r;
    const int borrow = library_plan(r, &lib, &lib_options);
    const hgemm_kernel_info *row = info;
    hgemm_problem p;
    hgemm_launch_fn run = NULL;
    hgemm_status st = choose_row(&row, chosen, borrow ? &lib : r, &p);
    if (st == HGEMM_SUCCESS) st = preflight(row, &p, &run);
    if (st != HGEMM_SUCCESS && borrow) { /* the library's workspace never refuses a call: as given */
        row = info;
        st = choose_row(&row, chosen, r, &p);
        if (st == HGEMM_SUCCESS) st = preflight(row, &p, &run);
    }
    if (st != HGEMM_SUCCESS || run == NULL || r->batch == 0) return st;
    int dev = 0;
    st = hgemm__check_device(&dev);
    if (st != HGEMM_SUCCESS) return st;
    if (borrow && p.workspace != NULL && run != hgemm__launch_v8) {
        p.workspace = NULL; /* a row that splits nothing: the plan holds without */
        p.workspace_bytes = 0;
    } else if (borrow && p.workspace != NULL) {
        p.workspace = hgemm__library_workspace(dev, stream);
        if (p.workspace == NULL) {
            row = info;
            st = choose_row(&row, chosen, r, &p);
            if (st == HGEMM_SUCCESS) st = preflight(row, &p, &run);
            if (st != HGEMM_SUCCESS || run == NULL) return st;
        }
    } else if (p.workspace) {
        st = hgemm__check_ends(p.workspace, (int64_t)p.workspace_bytes, dev);
        if (st != HGEMM_SUCCESS) return st;
    }
    info = row;
    if (info->batched || run == hgemm__launch_scale) {
        /* One launch: each matrix from entry 0's first byte to entry
         * batch-1's last. */
        p.batch = r->batch;
        st = hgemm__check_pointers(&p, dev);
        return st == HGEMM_SUCCESS ? run(&p, stream) : st;
    }
    /* One launch per entry: every entry's matrices checked before the first. */
    for (int64_t b = 0; b < r->batch && st == HGEMM_SUCCESS; b++) {
        const hgemm_problem e = entry_problem(&p, r, b);
        st = hgemm__check_pointers(&e, dev);
    }
    for (int64_t b = 0; b < r->batch && st == HGEMM_SUCCESS; b++) {
        const hgemm_problem e = entry_problem(&p, r, b);
        st = run(&e, stream);
    }
    return st;
}

hgemm_status hgemm_nt_ex(hgemm_kernel kernel, int64_t m, int64_t n, int64_t k, float alpha,
                         const void *A, int64_t lda, const void *B, int64_t ldb, float beta,
                         void *C, int64_t ldc, const hgemm_nt_options *options,
                         cudaStream_t stream) {
    const request r = nt_request(kernel, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, options);
    hgemm_status st = validate(&r);
    if (st != HGEMM_SUCCESS) return st;
    return run_validated(resolve(kernel, m, n, k), is_chosen(kernel), &r, stream);
}

hgemm_status hgemm_nt(hgemm_kernel kernel, int64_t m, int64_t n, int64_t k, float alpha,
                      const void *A, int64_t lda, const void *B, int64_t ldb, float beta,
                      void *C, int64_t ldc, cudaStream_t stream) {
    return hgemm_nt_ex(kernel, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, NULL, stream);
}

hgemm_status hgemm_nt_ws(hgemm_kernel kernel, int64_t m, int64_t n, int64_t k, float alpha,
                         const void *A, int64_t lda, const void *B, int64_t ldb, float beta,
                         void *C, int64_t ldc, void *workspace, size_t workspace_bytes,
                         cudaStream_t stream) {
    const hgemm_nt_options options = {workspace, workspace_bytes, 0, NULL, 0};
    return hgemm_nt_ex(kernel, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, &options, stream);
}

/* hgemm_gemm and hgemm_gemm_ex once their options are read: the checks,
 * then the kernel's run (nothing for an empty request) */
static hgemm_status gemm_request(hgemm_kernel kernel, hgemm_dtype dtype, hgemm_op op_a, hgemm_op op_b, int64_t m,
                                 int64_t n, int64_t k, float alpha, const void *A, int64_t lda, int64_t stride_a,
                                 const void *B, int64_t ldb, int64_t stride_b, float beta, void *C, int64_t ldc,
                                 int64_t stride_c, int64_t batch, const hgemm_nt_options *options, hgemm_epi epi,
                                 cudaStream_t stream) {
    const request r = {kernel, dtype, op_a, op_b, m, n, k, alpha, beta, A, lda, stride_a,
                       B, ldb, stride_b, C, ldc, stride_c, batch, options ? options : &NO_OPTIONS, epi};
    hgemm_status st = validate(&r);
    if (st != HGEMM_SUCCESS || batch == 0 || m == 0 || n == 0) return st;
    return run_validated(resolve(kernel, m, n, k), is_chosen(kernel), &r, stream);
}

hgemm_status hgemm_gemm(hgemm_kernel kernel, hgemm_dtype dtype, hgemm_op op_a, hgemm_op op_b,
                        int64_t m, int64_t n, int64_t k, float alpha,
                        const void *A, int64_t lda, int64_t stride_a,
                        const void *B, int64_t ldb, int64_t stride_b,
                        float beta, void *C, int64_t ldc, int64_t stride_c,
                        int64_t batch, const hgemm_nt_options *options, cudaStream_t stream) {
    const hgemm_epi none = NO_EPI;
    return gemm_request(kernel, dtype, op_a, op_b, m, n, k, alpha, A, lda, stride_a, B, ldb, stride_b, beta, C, ldc,
                        stride_c, batch, options, none, stream);
}

/* The bytes of hgemm_options through `c_fp32`: the first version's. */
#define OPTIONS_V1_SIZE (offsetof(hgemm_options, c_fp32) + sizeof(int))

hgemm_status hgemm__read_options(const hgemm_options *options, hgemm_dtype dtype, hgemm_nt_options *nt,
                                 hgemm_epi *epi) {
    const hgemm_nt_options none = NO_OPTIONS;
    const hgemm_epi no_epi = NO_EPI;
    *nt = none;
    *epi = no_epi;
    if (options == NULL) return HGEMM_SUCCESS;
    if (options->size < OPTIONS_V1_SIZE) return HGEMM_ERROR_INVALID_VALUE;
    /* a later version's fields, unknown here: only zeros are understood */
    for (size_t i = sizeof(hgemm_options); i < options->size; i++)
        if (((const unsigned char *)options)[i] != 0) return HGEMM_ERROR_NOT_SUPPORTED;
    nt->workspace = options->workspace;
    nt->workspace_bytes = options->workspace_bytes;
    nt->sm_count_target = options->sm_count_target;
    nt->c_in = options->c_in;
    nt->ldc_in = options->ldc_in;
    epi->act = (int32_t)options->activation;
    epi->c_f32 = options->c_fp32 != 0;
    if (options->bias != NULL) {
        if (options->bias_dtype != dtype && options->bias_dtype != HGEMM_DTYPE_F32) return HGEMM_ERROR_INVALID_VALUE;
        epi->bias = options->bias;
        epi->bias_f32 = options->bias_dtype == HGEMM_DTYPE_F32;
    }
    return HGEMM_SUCCESS;
}

hgemm_status hgemm_gemm_ex(hgemm_kernel kernel, hgemm_dtype dtype, hgemm_op op_a, hgemm_op op_b,
                           int64_t m, int64_t n, int64_t k, float alpha,
                           const void *A, int64_t lda, int64_t stride_a,
                           const void *B, int64_t ldb, int64_t stride_b,
                           float beta, void *C, int64_t ldc, int64_t stride_c,
                           int64_t batch, const hgemm_options *options, cudaStream_t stream) {
    hgemm_nt_options nt;
    hgemm_epi epi;
    const hgemm_status st = hgemm__read_options(options, dtype, &nt, &epi);
    if (st != HGEMM_SUCCESS) return st;
    return gemm_request(kernel, dtype, op_a, op_b, m, n, k, alpha, A, lda, stride_a, B, ldb, stride_b, beta, C, ldc,
                        stride_c, batch, &nt, epi, stream);
}

/* run_validated for a row given by hgemm__run_ws and hgemm__run_gemm: NULL
 * or an auto row ("auto", "auto-f16acc") chooses by shape, as AUTO does */
static hgemm_status run_row(const hgemm_kernel_info *info, const request *r, cudaStream_t stream) {
    const int chosen = info == NULL || info->launch == NULL;
    if (info != NULL && info->launch == NULL) info = resolve(info->id, r->m, r->n, r->k);
    return run_validated(info, chosen, r, stream);
}

hgemm_status hgemm__explain(const hgemm_kernel_info *info, hgemm_dtype dtype, hgemm_op op_a, hgemm_op op_b,
                            int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t batch,
                            float beta, const hgemm_nt_options *options, uint32_t sms,
                            hgemm_explanation *out) {
    memset(out, 0, sizeof *out);
    if (m < 0 || n < 0 || k < 0 || lda < 0 || ldb < 0 || batch < 0 ||
        (unsigned)dtype > HGEMM_DTYPE_BF16 || (unsigned)op_a > HGEMM_OP_T || (unsigned)op_b > HGEMM_OP_T)
        return HGEMM_ERROR_INVALID_VALUE;
    const int chosen = info == NULL || info->launch == NULL;
    if (info != NULL && info->launch == NULL) info = resolve(info->id, m, n, k);
    /* the matrices a call would pass, packed (C's rows rounded up to 8) */
    const int64_t ldc = (n + 7) / 8 * 8;
    const int64_t a_rows = op_a == HGEMM_OP_N ? m : k, b_rows = op_b == HGEMM_OP_N ? k : n;
    const request given = {HGEMM_KERNEL_AUTO, dtype, op_a, op_b, m, n, k, 1.0f, beta, NULL, lda, a_rows * lda,
                           NULL, ldb, b_rows * ldb, NULL, ldc, m * ldc, batch, options ? options : &NO_OPTIONS,
                           NO_EPI};
    /* without a workspace: the library's, where V8 runs (as run_validated) */
    hgemm_nt_options lib_options;
    request lib = given;
    const int borrow = library_plan(&given, &lib, &lib_options);
    hgemm_problem p;
    hgemm_launch_fn run = NULL;
    const hgemm_kernel_info *asked = info;
    hgemm_status st = choose_row(&info, chosen, borrow ? &lib : &given, &p);
    if (st == HGEMM_SUCCESS) st = preflight(info, &p, &run);
    if (st != HGEMM_SUCCESS && borrow) { /* as run_validated: planned again as given */
        info = asked;
        st = choose_row(&info, chosen, &given, &p);
        if (st == HGEMM_SUCCESS) st = preflight(info, &p, &run);
    }
    out->row = info;
    if (st != HGEMM_SUCCESS) return st;
    if (run == NULL || batch == 0) {
        out->row = NULL; /* nothing to multiply */
        return HGEMM_SUCCESS;
    }
    out->scale_only = run == hgemm__launch_scale;
    out->library_workspace = borrow && p.workspace != NULL && run == hgemm__launch_v8;
    if (run == hgemm__launch_v9) {
        out->has_v9_plan = 1;
        return hgemm__v9_explain(&p, sms, &out->v9);
    }
    if (run != hgemm__launch_v8) return HGEMM_SUCCESS;
    out->has_v8_plan = 1;
    return hgemm__v8_explain(&p, sms, &out->v8);
}

hgemm_status hgemm__run(const hgemm_kernel_info *info, int64_t m, int64_t n, int64_t k,
                        float alpha, const void *A, int64_t lda, const void *B, int64_t ldb,
                        float beta, void *C, int64_t ldc, cudaStream_t stream) {
    return hgemm__run_ws(info, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, NULL, 0, stream);
}

hgemm_status hgemm__run_ws(const hgemm_kernel_info *info, int64_t m, int64_t n, int64_t k,
                           float alpha, const void *A, int64_t lda, const void *B, int64_t ldb,
                           float beta, void *C, int64_t ldc, void *workspace,
                           size_t workspace_bytes, cudaStream_t stream) {
    const hgemm_nt_options options = {workspace, workspace_bytes, 0, NULL, 0};
    const request r = nt_request(HGEMM_KERNEL_AUTO, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc,
                                 &options);
    hgemm_status st = validate(&r);
    if (st != HGEMM_SUCCESS) return st;
    return run_row(info, &r, stream);
}

hgemm_status hgemm__run_gemm(const hgemm_kernel_info *info, hgemm_dtype dtype, hgemm_op op_a, hgemm_op op_b,
                             int64_t m, int64_t n, int64_t k, float alpha, const void *A, int64_t lda,
                             int64_t stride_a, const void *B, int64_t ldb, int64_t stride_b, float beta,
                             void *C, int64_t ldc, int64_t stride_c, int64_t batch,
                             const hgemm_nt_options *options, cudaStream_t stream) {
    /* validated as hgemm_gemm validates AUTO's call; the row's own limits
     * (forms, supports) are run_validated's, as for a public kernel */
    const request r = {HGEMM_KERNEL_AUTO, dtype, op_a, op_b, m, n, k, alpha, beta, A, lda, stride_a,
                       B, ldb, stride_b, C, ldc, stride_c, batch, options ? options : &NO_OPTIONS, NO_EPI};
    hgemm_status st = validate(&r);
    if (st != HGEMM_SUCCESS || batch == 0 || m == 0 || n == 0) return st;
    return run_row(info, &r, stream);
}
