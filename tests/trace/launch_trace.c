/*
 * hgemm-launch-trace: calls hgemm_gemm as a user would, for each line of
 * stdin, under the stand-in runtime of tests/trace/fake_cudart.c (LD_PRELOAD),
 * and prints what each call asked of CUDA: the plan the library says it runs
 * (hgemm__explain), then the runtime's lines (tensor maps, shared-memory
 * limits, launches, rejections), then the call's status and how many CUDA
 * calls it made. Nothing runs on a GPU; it refuses to start without the
 * stand-in, so it never hands the real runtime its made-up pointers.
 *
 * A line:  KERNEL DTYPE LAYOUT M N K BATCH WS BETA PAD [FAULT [TARGET [CIN]]]
 *   KERNEL  a table name, an ablation, auto or auto-f16acc (as hgemm-bench)
 *   DTYPE   f16 | bf16;  LAYOUT nt | nn | tn | tt (op_a, op_b)
 *   WS      1: the workspace hgemm-bench passes (HGEMM_WORKSPACE_BYTES), 0: none
 *   PAD     elements added to every leading dimension (a multiple of 8 keeps them legal)
 *   FAULT   none (default) | lda | align | null | host | overlap | ldc_in |
 *           tail | short | gap: one bad argument. ldc_in: c_in's leading
 *           dimension 2^39 (with CIN 1); tail: A's allocation 16 bytes short
 *           of its last entry's end; short: A's allocation holds all entries
 *           but the last (BATCH >= 2); gap: A's entries 0 and 2 in two
 *           allocations, entry 1 in the unmapped memory between (BATCH 3)
 *   TARGET  the options' sm_count_target (default 0: every SM)
 *   CIN     1: beta's C read from a separate c_in (its own allocation, ldc_in = ldc)
 * Each operand is its own allocation of exactly the bytes the call may reach,
 * so a tensor map past its end is marked (fake_cudart.c: past-allocation).
 * After each call the runtime's pending error is printed (pending=, the
 * cudaError_t number): the library leaves none of its own.
 * Lines starting with '#' and blank lines are echoed and skipped.
 * HGEMM_TRACE_THREAD=1: each call is made on a new host thread whose first
 * CUDA call it is (no context current there yet, as on a framework's worker
 * thread); the operands are allocated on the main thread.
 * --rows lists every KERNEL name (no stand-in needed).
 *
 * A grouped line:  grouped DTYPE OPB ROWS N K GROUPS SHARED
 *   hgemm_grouped with B's entries stored n x k (OPB t) or k x n (n), packed,
 *   SHARED 1: stride_b 0 (one B for every group); offsets of GROUPS int32.
 *
 * A k-grouped line:  grouped-k DTYPE M N TOTAL_K GROUPS C32
 *   hgemm_grouped_k, A (TOTAL_K x M) and B (TOTAL_K x N) packed (leading
 *   dimensions rounded to 8), C's groups packed one after another, an fp32
 *   C where C32 is 1, beta 1.
 *
 * A grouped FP8 line:  grouped-fp8 MODE CTYPE ROWS N K GROUPS SHARED
 *   hgemm_grouped_fp8, e4m3, MODE and CTYPE as below, packed (lda = ldb = k
 *   rounded to 16, experts n x ldb apart, or one where SHARED is 1), beta 0;
 *   each scale array its exact size.
 *
 * An FP8 line:  fp8 MODE CTYPE M N K TARGET [BETA]
 *   hgemm_gemm_fp8, e4m3 x e4m3, MODE tensor | row | block, CTYPE bf16 | f16 |
 *   f32, packed (lda = ldb = k, ldc = n rounded to 8), TARGET the options'
 *   sm_count_target (0: every SM), beta BETA (default 0.5); each scale array
 *   its exact size.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "hgemm.h"
#include "internal.h"

typedef unsigned long long (*calls_fn)(void);

static int64_t round8(int64_t x) { return (x + 7) / 8 * 8; }

/* Bytes an operand of `rows` x `cols` at leading dimension ld, `batch`
 * entries `stride` apart, reaches (2-byte elements). */
static size_t span(int64_t rows, int64_t cols, int64_t ld, int64_t batch, int64_t stride) {
    if (rows == 0 || cols == 0 || batch == 0) return 16;
    return (size_t)(((batch - 1) * stride + (rows - 1) * ld + cols) * 2);
}

#ifndef TRACE_NO_EXPLAIN
static void print_plan(const hgemm_kernel_info *row, hgemm_dtype dtype, hgemm_op oa, hgemm_op ob, int64_t m,
                       int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t batch, float beta,
                       const hgemm_nt_options *opt) {
    hgemm_explanation e;
    const hgemm_status st = hgemm__explain(row, dtype, oa, ob, m, n, k, lda, ldb, batch, beta, opt, 0, &e);
    printf("plan status=%d row=%s scale_only=%d", (int)st, e.row ? e.row->name : "-", e.scale_only);
    if (e.has_v8_plan)
        printf(" v8 bn=%d cluster=%d stages=%d seam=%d deal=%d split=%d tiles=%u k_tiles=%u clusters=%u workers=%u "
               "dp_tiles=%u sk_workers=%u slices=%u tail_slices=%u reduce=%u swapped=%d",
               e.v8.bn, e.v8.cluster, e.v8.stages, e.v8.seam, e.v8.deal, e.v8.split, e.v8.tiles, e.v8.k_tiles,
               e.v8.clusters, e.v8.workers, e.v8.dp_tiles, e.v8.sk_workers, e.v8.slices, e.v8.tail_slices,
               e.v8.reduce, e.v8.swapped);
    if (e.has_v9_plan)
        printf(" v9 swap=%d bn=%d kb=%d stages=%d long_tiles=%llu short_tiles=%llu split=%u", e.v9.swap, e.v9.bn,
               e.v9.kb, e.v9.stages, (unsigned long long)e.v9.long_tiles, (unsigned long long)e.v9.short_tiles,
               e.v9.split);
    printf("\n");
}
#endif

/* One hgemm call's arguments, and its status, for a call on another thread. */
typedef struct call_args {
    int is_public;
    const hgemm_kernel_info *row;
    hgemm_dtype dtype;
    hgemm_op oa, ob;
    int64_t m, n, k, lda, stride_a, ldb, sb, ldc, sc, batch;
    float beta;
    const void *A, *B;
    void *C;
    const hgemm_nt_options *opt;
    calls_fn calls;
    hgemm_status st;
    unsigned long long after; /* the stand-in's count of CUDA calls, right after */
    cudaError_t pending;      /* the calling thread's, after the call */
} call_args;

static void *make_call(void *arg) {
    call_args *c = (call_args *)arg;
    c->st = c->is_public ? hgemm_gemm(c->row->id, c->dtype, c->oa, c->ob, c->m, c->n, c->k, 1.0f, c->A, c->lda,
                                      c->stride_a, c->B, c->ldb, c->sb, c->beta, c->C, c->ldc, c->sc, c->batch,
                                      c->opt, 0)
                         : hgemm__run_gemm(c->row, c->dtype, c->oa, c->ob, c->m, c->n, c->k, 1.0f, c->A, c->lda,
                                           c->stride_a, c->B, c->ldb, c->sb, c->beta, c->C, c->ldc, c->sc,
                                           c->batch, c->opt, 0);
    c->after = c->calls();
    c->pending = cudaPeekAtLastError();
    return NULL;
}

/* A call's status line: its status, the CUDA calls it made, the error it left pending. */
static void print_status(hgemm_status st, unsigned long long made) {
    printf("status %d calls=%llu pending=%d %s\n", (int)st, made, (int)cudaPeekAtLastError(), hgemm_status_string(st));
}

/* An FP8 line's MODE and CTYPE words. */
static hgemm_scale_mode fp8_mode_named(const char *name) {
    return strcmp(name, "tensor") == 0 ? HGEMM_SCALE_TENSOR
           : strcmp(name, "row") == 0  ? HGEMM_SCALE_ROW
                                       : HGEMM_SCALE_BLOCK;
}

static hgemm_dtype fp8_c_named(const char *name) {
    return strcmp(name, "f32") == 0 ? HGEMM_DTYPE_F32 : strcmp(name, "f16") == 0 ? HGEMM_DTYPE_F16 : HGEMM_DTYPE_BF16;
}

/* The exact lengths of an FP8 call's scale arrays (one expert's for B), as include/hgemm.h lays them out. */
static void fp8_scale_counts(hgemm_scale_mode mode, int64_t m, int64_t n, int64_t k, int64_t *sa_n, int64_t *sb_n) {
    const int64_t kb = (k + 127) / 128;
    *sa_n = mode == HGEMM_SCALE_TENSOR ? 1 : mode == HGEMM_SCALE_ROW ? m : m * kb;
    *sb_n = mode == HGEMM_SCALE_TENSOR ? 1 : mode == HGEMM_SCALE_ROW ? n : (n + 127) / 128 * kb;
}

/* A grouped line (see the header): the call, then its status line. */
static int grouped_call(const char *line, calls_fn calls) {
    char dname[16], opb[8];
    long long rows, n, k, groups;
    int shared;
    if (sscanf(line, "grouped %15s %7s %lld %lld %lld %lld %d", dname, opb, &rows, &n, &k, &groups, &shared) != 7 ||
        (strcmp(dname, "f16") && strcmp(dname, "bf16")) || (strcmp(opb, "t") && strcmp(opb, "n"))) {
        fprintf(stderr, "hgemm-launch-trace: cannot read: %s", line);
        return 1;
    }
    const hgemm_op op_b = opb[0] == 't' ? HGEMM_OP_T : HGEMM_OP_N;
    const int64_t b_rows = op_b == HGEMM_OP_N ? k : n, b_cols = op_b == HGEMM_OP_N ? n : k;
    const int64_t lda = round8(k ? k : 1), ldb = round8(b_cols ? b_cols : 1), ldc = round8(n ? n : 1);
    const int64_t stride_b = shared ? 0 : b_rows * ldb;
    printf("grouped-call %s %s %lld %lld %lld %lld shared=%d\n", dname, opb, rows, n, k, groups, shared);
    void *A = NULL, *B = NULL, *C = NULL, *offs = NULL;
    cudaMalloc(&A, span(rows, k, lda, 1, 0));
    cudaMalloc(&B, span(b_rows, b_cols, ldb, shared ? 1 : groups, stride_b));
    cudaMalloc(&C, span(rows, n, ldc, 1, 0));
    cudaMalloc(&offs, (size_t)(groups ? groups : 1) * 4);
    (void)cudaGetLastError();
    const unsigned long long before = calls();
    const hgemm_status st = hgemm_grouped(HGEMM_KERNEL_AUTO, strcmp(dname, "bf16") ? HGEMM_DTYPE_F16 : HGEMM_DTYPE_BF16,
                                          op_b, rows, n, k, groups, (const int32_t *)offs, 1.0f, A, lda, B, ldb,
                                          stride_b, 0.5f, C, ldc, NULL, 0);
    const unsigned long long made = calls() - before;
    print_status(st, made);
    cudaFree(A);
    cudaFree(B);
    cudaFree(C);
    cudaFree(offs);
    return 0;
}

/* A k-grouped line (see the header): the call, then its status line. */
static int grouped_k_call(const char *line, calls_fn calls) {
    char dname[16];
    long long m, n, total, groups;
    int c32;
    if (sscanf(line, "grouped-k %15s %lld %lld %lld %lld %d", dname, &m, &n, &total, &groups, &c32) != 6 ||
        (strcmp(dname, "f16") && strcmp(dname, "bf16"))) {
        fprintf(stderr, "hgemm-launch-trace: cannot read: %s", line);
        return 1;
    }
    const int64_t lda = round8(m ? m : 1), ldb = round8(n ? n : 1), ldc = round8(n ? n : 1), stride_c = m * ldc;
    printf("grouped-k-call %s %lld %lld %lld %lld c32=%d\n", dname, m, n, total, groups, c32);
    void *A = NULL, *B = NULL, *C = NULL, *offs = NULL;
    cudaMalloc(&A, span(total, m, lda, 1, 0));
    cudaMalloc(&B, span(total, n, ldb, 1, 0));
    cudaMalloc(&C, span(m, n, ldc, groups ? groups : 1, stride_c) * (c32 ? 2 : 1));
    cudaMalloc(&offs, (size_t)(groups ? groups : 1) * 4);
    (void)cudaGetLastError();
    hgemm_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.c_fp32 = c32;
    const unsigned long long before = calls();
    const hgemm_status st = hgemm_grouped_k(HGEMM_KERNEL_AUTO, strcmp(dname, "bf16") ? HGEMM_DTYPE_F16 : HGEMM_DTYPE_BF16,
                                            m, n, total, groups, (const int32_t *)offs, 1.0f, A, lda, B, ldb, 1.0f, C,
                                            ldc, stride_c, &o, 0);
    const unsigned long long made = calls() - before;
    print_status(st, made);
    cudaFree(A);
    cudaFree(B);
    cudaFree(C);
    cudaFree(offs);
    return 0;
}

/* A grouped FP8 line (see the header): the call, then its status line. */
static int grouped_fp8_call(const char *line, calls_fn calls) {
    char mname[16], cname[16];
    long long rows, n, k, groups;
    int shared;
    if (sscanf(line, "grouped-fp8 %15s %15s %lld %lld %lld %lld %d", mname, cname, &rows, &n, &k, &groups,
               &shared) != 7) {
        fprintf(stderr, "hgemm-launch-trace: cannot read: %s", line);
        return 1;
    }
    const hgemm_scale_mode mode = fp8_mode_named(mname);
    const hgemm_dtype ct = fp8_c_named(cname);
    const int64_t ld = k > 16 ? (k + 15) / 16 * 16 : 16, ldc = round8(n ? n : 1);
    const int64_t experts = shared ? 1 : groups, stride_b = shared ? 0 : n * ld;
    int64_t sa_n, sb_n;
    fp8_scale_counts(mode, rows, n, k, &sa_n, &sb_n);
    sb_n *= experts;
    printf("grouped-fp8-call %s %s %lld %lld %lld %lld shared=%d\n", mname, cname, rows, n, k, groups, shared);
    void *A = NULL, *B = NULL, *C = NULL, *offs = NULL, *sa = NULL, *sb = NULL;
    cudaMalloc(&A, rows && k ? (size_t)((rows - 1) * ld + k) : 16);
    cudaMalloc(&B, n && k && experts ? (size_t)((experts - 1) * stride_b + (n - 1) * ld + k) : 16);
    cudaMalloc(&C, span(rows, n, ldc, 1, 0) * (ct == HGEMM_DTYPE_F32 ? 2 : 1));
    cudaMalloc(&offs, (size_t)(groups ? groups : 1) * 4);
    cudaMalloc(&sa, (size_t)(sa_n > 0 ? sa_n : 1) * 4);
    cudaMalloc(&sb, (size_t)(sb_n > 0 ? sb_n : 1) * 4);
    (void)cudaGetLastError();
    const unsigned long long before = calls();
    const hgemm_status st = hgemm_grouped_fp8(HGEMM_KERNEL_AUTO, HGEMM_DTYPE_E4M3, HGEMM_DTYPE_E4M3, ct, rows, n, k,
                                              groups, (const int32_t *)offs, 1.0f, A, ld, B, ld, stride_b, mode,
                                              (const float *)sa, (const float *)sb, 0.0f, C, ldc, NULL, 0);
    const unsigned long long made = calls() - before;
    print_status(st, made);
    cudaFree(A);
    cudaFree(B);
    cudaFree(C);
    cudaFree(offs);
    cudaFree(sa);
    cudaFree(sb);
    return 0;
}

/* An FP8 line (see the header): the call, then its status line. */
static int fp8_call(const char *line, calls_fn calls) {
    char mname[16], cname[16];
    long long m, n, k;
    int target;
    float beta = 0.5f;
    if (sscanf(line, "fp8 %15s %15s %lld %lld %lld %d %f", mname, cname, &m, &n, &k, &target, &beta) < 6) {
        fprintf(stderr, "hgemm-launch-trace: cannot read: %s", line);
        return 1;
    }
    const hgemm_scale_mode mode = fp8_mode_named(mname);
    const hgemm_dtype ct = fp8_c_named(cname);
    const int64_t ld = k > 16 ? k : 16, ldc = round8(n ? n : 1);
    int64_t sa_n, sb_n;
    fp8_scale_counts(mode, m, n, k, &sa_n, &sb_n);
    printf("fp8-call %s %s %lld %lld %lld target=%d beta=%g\n", mname, cname, m, n, k, target, (double)beta);
    void *A = NULL, *B = NULL, *C = NULL, *sa = NULL, *sb = NULL;
    cudaMalloc(&A, (size_t)(m * ld > 0 ? (m - 1) * ld + k : 16));
    cudaMalloc(&B, (size_t)(n * ld > 0 ? (n - 1) * ld + k : 16));
    cudaMalloc(&C, (size_t)(m > 0 && n > 0 ? ((m - 1) * ldc + n) * (ct == HGEMM_DTYPE_F32 ? 4 : 2) : 16));
    cudaMalloc(&sa, (size_t)(sa_n > 0 ? sa_n : 1) * 4);
    cudaMalloc(&sb, (size_t)(sb_n > 0 ? sb_n : 1) * 4);
    (void)cudaGetLastError();
    hgemm_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    o.sm_count_target = target;
    const unsigned long long before = calls();
    const hgemm_status st = hgemm_gemm_fp8(HGEMM_KERNEL_AUTO, HGEMM_DTYPE_E4M3, HGEMM_DTYPE_E4M3, ct, m, n, k, 1.0f, A,
                                           ld, B, ld, mode, (const float *)sa, (const float *)sb, beta, C, ldc, &o, 0);
    const unsigned long long made = calls() - before;
    print_status(st, made);
    cudaFree(A);
    cudaFree(B);
    cudaFree(C);
    cudaFree(sa);
    cudaFree(sb);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "--rows") == 0) { /* every name a line may give, one a line */
        printf("auto\nauto-f16acc\n");
        for (int i = 0; i < hgemm__kernel_count(); i++) printf("%s\n", hgemm__kernel_at(i)->name);
        for (int i = 0; i < hgemm__experiment_count(); i++) printf("%s\n", hgemm__experiment_at(i)->name);
        return 0;
    }
    if (argc != 1) {
        fprintf(stderr, "usage: hgemm-launch-trace [--rows] < calls (see the source's header)\n");
        return 2;
    }
    const calls_fn calls = (calls_fn)dlsym(RTLD_DEFAULT, "hgemm_fake_cudart_calls");
    if (!calls) {
        fprintf(stderr, "hgemm-launch-trace: run it with LD_PRELOAD=<the stand-in libcudart> "
                        "(tests/trace/fake_cudart.c); it never runs on a real GPU\n");
        return 2;
    }
    const char *thread_env = getenv("HGEMM_TRACE_THREAD");
    const int fresh_thread = thread_env && strcmp(thread_env, "1") == 0;
    char line[512];
    int bad = 0;
    while (fgets(line, sizeof line, stdin)) {
        char kname[64], dname[16], layout[16], fault[16] = "none";
        long long m, n, k, batch, pad;
        int ws, target = 0, cin = 0;
        float beta;
        if (line[0] == '#' || line[0] == '\n') {
            fputs(line, stdout);
            continue;
        }
        if (strncmp(line, "grouped ", 8) == 0) {
            bad |= grouped_call(line, calls);
            continue;
        }
        if (strncmp(line, "grouped-k ", 10) == 0) {
            bad |= grouped_k_call(line, calls);
            continue;
        }
        if (strncmp(line, "grouped-fp8 ", 12) == 0) {
            bad |= grouped_fp8_call(line, calls);
            continue;
        }
        if (strncmp(line, "fp8 ", 4) == 0) {
            bad |= fp8_call(line, calls);
            continue;
        }
        const int got = sscanf(line, "%63s %15s %15s %lld %lld %lld %lld %d %f %lld %15s %d %d", kname, dname, layout,
                               &m, &n, &k, &batch, &ws, &beta, &pad, fault, &target, &cin);
        const hgemm_kernel_info *row = got >= 10 ? hgemm__row_by_any_name(kname) : NULL;
        const int f16 = strcmp(dname, "f16") == 0, bf16 = strcmp(dname, "bf16") == 0;
        if (got < 10 || !row || (!f16 && !bf16) || strlen(layout) != 2 || strspn(layout, "nt") != 2) {
            fprintf(stderr, "hgemm-launch-trace: cannot read: %s", line);
            bad = 1;
            continue;
        }
        const hgemm_dtype dtype = f16 ? HGEMM_DTYPE_F16 : HGEMM_DTYPE_BF16;
        const hgemm_op oa = layout[0] == 't' ? HGEMM_OP_T : HGEMM_OP_N;
        const hgemm_op ob = layout[1] == 't' ? HGEMM_OP_T : HGEMM_OP_N;
        const int64_t a_rows = oa == HGEMM_OP_N ? m : k, a_cols = oa == HGEMM_OP_N ? k : m;
        const int64_t b_rows = ob == HGEMM_OP_N ? k : n, b_cols = ob == HGEMM_OP_N ? n : k;
        int64_t lda = round8(a_cols ? a_cols : 1) + pad, ldb = round8(b_cols ? b_cols : 1) + pad;
        const int64_t ldc = round8(n ? n : 1) + pad;
        const int64_t sa = a_rows * lda, sb = b_rows * ldb, sc = m * ldc;
        printf("call %s %s %s %lld %lld %lld %lld ws=%d beta=%g pad=%lld target=%d cin=%d fault=%s\n", row->name,
               dname, layout, m, n, k, batch, ws, beta, pad, target, cin, fault);
        void *A = NULL, *A2 = NULL, *B = NULL, *C = NULL, *W = NULL;
        int64_t stride_a = sa;
        if (strcmp(fault, "tail") == 0) {
            cudaMalloc(&A, span(a_rows, a_cols, lda, batch, sa) - 16);
        } else if (strcmp(fault, "short") == 0 && batch >= 2) {
            cudaMalloc(&A, span(a_rows, a_cols, lda, batch - 1, sa));
        } else if (strcmp(fault, "gap") == 0 && batch == 3) {
            /* entry 0 at A, entry 2 at A2, entry 1 halfway: past A's end, before A2 */
            cudaMalloc(&A, span(a_rows, a_cols, lda, 1, sa));
            cudaMalloc(&A2, span(a_rows, a_cols, lda, 1, sa));
            stride_a = (int64_t)(((uintptr_t)A2 - (uintptr_t)A) / 4);
        } else {
            cudaMalloc(&A, span(a_rows, a_cols, lda, batch, sa));
        }
        cudaMalloc(&B, span(b_rows, b_cols, ldb, batch, sb));
        cudaMalloc(&C, span(m, n, ldc, batch, sc));
        if (ws) cudaMalloc(&W, HGEMM_WORKSPACE_BYTES);
        void *C_in = NULL;
        if (cin) cudaMalloc(&C_in, span(m, n, ldc, batch, sc));
        static char host_c[64];
        const void *a_arg = A;
        void *c_arg = C;
        int64_t ldc_in = cin ? ldc : 0;
        if (strcmp(fault, "lda") == 0) lda = a_cols - 1;
        else if (strcmp(fault, "align") == 0) a_arg = (const char *)A + 2;
        else if (strcmp(fault, "null") == 0) c_arg = NULL;
        else if (strcmp(fault, "host") == 0) c_arg = host_c;
        else if (strcmp(fault, "overlap") == 0) c_arg = (void *)A;
        else if (strcmp(fault, "ldc_in") == 0 && cin) ldc_in = (int64_t)1 << 39;
        else if ((strcmp(fault, "tail") == 0) || (strcmp(fault, "short") == 0 && batch >= 2) ||
                 (strcmp(fault, "gap") == 0 && batch == 3))
            ; /* made above, in A's allocation */
        else if (strcmp(fault, "none") != 0) {
            fprintf(stderr, "hgemm-launch-trace: unknown fault %s\n", fault);
            bad = 1;
            continue;
        }
        const hgemm_nt_options opt = {W, ws ? HGEMM_WORKSPACE_BYTES : 0, target, C_in, ldc_in};
#ifndef TRACE_NO_EXPLAIN
        if (strcmp(fault, "none") == 0) print_plan(row, dtype, oa, ob, m, n, k, lda, ldb, batch, beta, &opt);
#endif
        (void)cudaGetLastError(); /* the driver's own calls leave nothing for the library's */
        const unsigned long long before = calls();
        const int is_public = hgemm__kernel_find(row->id) == row || hgemm__auto_row(row->id) == row;
        call_args c = {is_public, row, dtype, oa, ob, m, n, k, lda, stride_a, ldb, sb, ldc, sc, batch, beta,
                       a_arg, B, c_arg, &opt, calls, HGEMM_ERROR_CUDA, 0, cudaSuccess};
        pthread_t thread;
        if (!fresh_thread) make_call(&c);
        else if (pthread_create(&thread, NULL, make_call, &c) != 0 || pthread_join(thread, NULL) != 0) {
            fprintf(stderr, "hgemm-launch-trace: cannot run a call on a new thread\n");
            return 2;
        }
        const hgemm_status st = c.st;
        const unsigned long long made = c.after - before;
        printf("status %d calls=%llu pending=%d %s\n", (int)st, made, (int)c.pending,
               hgemm_status_string(st));
        cudaFree(A);
        cudaFree(A2);
        cudaFree(B);
        cudaFree(C);
        cudaFree(W);
        cudaFree(C_in);
    }
    return bad ? 1 : 0;
}
