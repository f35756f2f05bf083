/*
 * test_gpu_edges: the contract of include/hgemm.h at its edges, on the GPU.
 * One mode per run (ctest runs each as its own test, so that "the process's
 * first call" means what it says):
 *
 *   threads   from a cold start (no hgemm call yet), THREADS host threads
 *             call hgemm_nt at once, every kernel: half on streams of their
 *             own, half with hgemm's call their first CUDA call, on the legacy
 *             stream (no context current there yet, as on a framework's
 *             worker thread);
 *   graph     the process's first hgemm_nt is captured in a CUDA graph
 *             (global capture mode); then every kernel is captured the same way;
 *   contract  a caller's pending CUDA error survives a good call (and a
 *             refused one); alpha * acc + beta * C in fp32, rounded once
 *             (m = n = k = 64, A = B = 1, alpha 2048, beta 2, C -60000 ->
 *             11072); alpha / beta NaN and Inf; k = 65536 and 65544 with
 *             exact integer data that counts every k-tile; host pointers and
 *             pinned host pointers are refused with INVALID_VALUE and the
 *             context still works afterwards; another device's memory too
 *             where there are two GPUs;
 *   large     leading dimensions past 2^31 elements (A, B and C in turn),
 *             and a C of more than 2^32 elements, checked in full;
 *   managed   A, B and C in managed memory are served;
 *   cost      prints the host cost per hgemm_nt call and of its pointer check.
 *
 * Every kernel of the table and HGEMM_KERNEL_AUTO, unless a case says
 * otherwise. Prints one line per check, the first mismatches on a failure,
 * and "N passed, N failed" last. Exits 77 without an sm_90 GPU, 1 on any
 * failure, 2 on a bad command line.
 */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "check.h"
#include "internal.h"

enum {
    EXIT_SKIP = 77,
    EXIT_USAGE = 2,
    WHY_LEN = 256,
    MAX_KERNELS = 64,
    MAX_SHOWN = 4,        /* mismatches printed per failed check */
    LD_ALIGN = 8,
    SEED_A = 11, SEED_B = 22, SEED_C = 33,
    /* threads */
    THREADS = 16, THREAD_CALLS = 4, THREAD_M = 300, THREAD_N = 264, THREAD_K = 200,
    /* graph */
    GRAPH_M = 520, GRAPH_N = 392, GRAPH_K = 136,
    /* exact cases: 64 x 64 tiles stored by TMA, 64 x 60 stored directly */
    EXACT_M = 64, EXACT_N = 64, EXACT_N_RAGGED = 60, EXACT_K = 64,
    /* k = 65536: every 64-wide k-tile adds exactly 0 or 1 */
    LONG_K = 65536, LONG_K_RAGGED = 65544, LONG_M = 320, LONG_N = 264, K_TILE = 64,
    /* cost */
    COST_CALLS = 20000, COST_WARMUP = 100, COST_SIZE = 64,
};

/* A failed cudaMalloc of this many bytes: a non-sticky error left pending. */
static const size_t ABSURD_BYTES = (size_t)1 << 62;
/* Leading dimensions past 2^31 elements (multiples of 8). */
static const int64_t HUGE_LD = (INT64_C(1) << 31) + 64;
/* A C of more than 2^32 elements: 65792 x 65536 = 2^32 + 2^24. */
static const int64_t BIG_M = 65792, BIG_N = 65536, BIG_K = 64;

typedef struct kernel_under_test {
    hgemm_kernel id;
    const char *name;
    double atol;
} kernel_under_test;

static kernel_under_test kernels[MAX_KERNELS];
static int n_kernels;
static int passed, failed;

static void record(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void record(int ok, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    printf("%s ", ok ? "PASS" : "FAIL");
    vprintf(fmt, args);
    printf("\n");
    va_end(args);
    fflush(stdout);
    ok ? passed++ : failed++;
}

static void list_kernels(void) {
    const hgemm_kernel_info *auto_info = hgemm__kernel_find(hgemm__auto_kernel());
    kernels[n_kernels++] = (kernel_under_test){
        HGEMM_KERNEL_AUTO, "auto",
        auto_info && auto_info->acc == HGEMM_ACC_F16 ? HGEMM_CHECK_ATOL_ACC_F16 : HGEMM_CHECK_ATOL_ACC_F32};
    for (int i = 0; i < hgemm__kernel_count(); i++) {
        const hgemm_kernel_info *info = hgemm__kernel_at(i);
        if (n_kernels >= MAX_KERNELS) { /* fail rather than leave kernels out */
            fprintf(stderr, "test_gpu_edges: more than MAX_KERNELS (%d) kernels to test: raise it\n", MAX_KERNELS);
            exit(1);
        }
        kernels[n_kernels++] = (kernel_under_test){
            info->id, info->name,
            info->acc == HGEMM_ACC_F16 ? HGEMM_CHECK_ATOL_ACC_F16 : HGEMM_CHECK_ATOL_ACC_F32};
    }
}

static void *dmalloc(size_t bytes) {
    void *p = NULL;
    HGEMM_CHECK_CUDA(cudaMalloc(&p, bytes ? bytes : 1));
    return p;
}

static void *hmalloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (p == NULL) {
        fprintf(stderr, "out of host memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

static int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

/* ---- a random problem and its fp64 reference ------------------------------ */

typedef struct problem {
    int64_t m, n, k, lda, ldb, ldc;
    void *A, *B;
    hgemm_check_guarded g; /* C with a guard band */
    double *ref;           /* alpha * A * B^T (beta = 0), m x n */
} problem;

static void problem_make(problem *p, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                         int64_t ldc, int64_t guard_rows) {
    p->m = m, p->n = n, p->k = k, p->lda = lda, p->ldb = ldb, p->ldc = ldc;
    p->A = dmalloc((size_t)((m - 1) * lda + k) * 2);
    p->B = dmalloc((size_t)((n - 1) * ldb + k) * 2);
    const float s = hgemm_check_unit_scale(k);
    hgemm_check_fill_random(p->A, m, k, lda, SEED_A, s, 0);
    hgemm_check_fill_random(p->B, n, k, ldb, SEED_B, s, 0);
    hgemm_check_guarded_alloc(&p->g, m, n, ldc, guard_rows);
    p->ref = (double *)dmalloc((size_t)(m * n) * sizeof(double));
    hgemm_check_reference(m, n, k, 1.0, p->A, lda, p->B, ldb, 0.0, NULL, ldc, p->ref, n, 0);
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
}

static void problem_free(problem *p) {
    HGEMM_CHECK_CUDA(cudaFree(p->A));
    HGEMM_CHECK_CUDA(cudaFree(p->B));
    HGEMM_CHECK_CUDA(cudaFree(p->ref));
    hgemm_check_guarded_free(&p->g);
}

/* C (NaN first) = A * B^T with kernel kt on stream: 1 when right and the
 * guard band is intact. */
static int problem_check(const problem *p, const kernel_under_test *kt, cudaStream_t stream,
                         const char *what) {
    hgemm_check_stats s;
    hgemm_check_guard_report rep;
    int ok = hgemm_check_compare(p->g.C, p->ldc, p->ref, p->n, p->m, p->n, kt->atol,
                                 HGEMM_CHECK_RTOL, &s, stream);
    int intact = hgemm_check_guard_intact(&p->g, &rep, stream);
    record(ok && intact, "%-6s %-34s %lldx%lldx%lld ld %lld %lld %lld  max err %.2e", kt->name,
           what, (long long)p->m, (long long)p->n, (long long)p->k, (long long)p->lda,
           (long long)p->ldb, (long long)p->ldc, s.max_abs_err);
    if (!ok) hgemm_check_print_mismatches(stdout, &s, "     ");
    if (!intact)
        printf("     guard band: %lld elements changed, the first at row %lld, column %lld\n",
               (long long)rep.bad, (long long)rep.first_row, (long long)rep.first_col);
    return ok && intact;
}

static void problem_poison(const problem *p, cudaStream_t stream) {
    hgemm_check_guarded_reset(&p->g, stream);
    hgemm_check_fill_pattern(p->g.C, p->m, p->n, p->ldc, HGEMM_CHECK_NAN, stream);
}

/* One call and its check. */
static void problem_run(const problem *p, const kernel_under_test *kt, const char *what) {
    problem_poison(p, 0);
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    hgemm_status st = hgemm_nt(kt->id, p->m, p->n, p->k, 1.0f, p->A, p->lda, p->B, p->ldb, 0.0f,
                               p->g.C, p->ldc, 0);
    if (st != HGEMM_SUCCESS) {
        record(0, "%-6s %-34s hgemm_nt returned %s", kt->name, what, hgemm_status_string(st));
        return;
    }
    HGEMM_CHECK_LAUNCH();
    problem_check(p, kt, 0, what);
}

/* ---- threads: many host threads, own streams, cold start --------------------- */

typedef struct thread_job {
    const problem *p;
    const kernel_under_test *kt;
    pthread_barrier_t *start;
    hgemm_status st;
    cudaError_t err;
    int bare; /* no CUDA call before hgemm's, on the legacy stream: a framework's worker thread */
} thread_job;

static void *thread_main(void *arg) {
    thread_job *job = (thread_job *)arg;
    cudaStream_t stream = 0;
    job->err = job->bare ? cudaSuccess : cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    pthread_barrier_wait(job->start);
    if (job->err != cudaSuccess) return NULL;
    job->st = HGEMM_SUCCESS;
    for (int i = 0; i < THREAD_CALLS && job->st == HGEMM_SUCCESS; i++)
        job->st = hgemm_nt(job->kt->id, job->p->m, job->p->n, job->p->k, 1.0f, job->p->A,
                           job->p->lda, job->p->B, job->p->ldb, 0.0f, job->p->g.C, job->p->ldc,
                           stream);
    cudaError_t e = cudaStreamSynchronize(stream);
    if (job->err == cudaSuccess) job->err = e;
    if (!job->bare) {
        e = cudaStreamDestroy(stream);
        if (job->err == cudaSuccess) job->err = e;
    }
    return NULL;
}

static void mode_threads(void) {
    static problem probs[THREADS];
    thread_job jobs[THREADS];
    pthread_t tids[THREADS];
    pthread_barrier_t start;
    for (int t = 0; t < THREADS; t++) {
        problem_make(&probs[t], THREAD_M + t, THREAD_N, THREAD_K, round_up(THREAD_K, LD_ALIGN),
                     round_up(THREAD_K, LD_ALIGN), round_up(THREAD_N, LD_ALIGN) + LD_ALIGN, 1);
        problem_poison(&probs[t], 0);
    }
    HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
    pthread_barrier_init(&start, NULL, THREADS);
    for (int t = 0; t < THREADS; t++) {
        jobs[t] = (thread_job){&probs[t], &kernels[t % n_kernels], &start, HGEMM_ERROR_CUDA,
                               cudaSuccess, t % 2};
        if (pthread_create(&tids[t], NULL, thread_main, &jobs[t]) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            exit(1);
        }
    }
    for (int t = 0; t < THREADS; t++) pthread_join(tids[t], NULL);
    pthread_barrier_destroy(&start);
    for (int t = 0; t < THREADS; t++) {
        char what[WHY_LEN];
        snprintf(what, sizeof what, jobs[t].bare ? "thread %d, first CUDA call, stream 0" : "thread %d, own stream, cold start", t);
        if (jobs[t].st != HGEMM_SUCCESS || jobs[t].err != cudaSuccess)
            record(0, "%-6s %-34s hgemm_nt: %s, CUDA: %s", jobs[t].kt->name, what,
                   hgemm_status_string(jobs[t].st), cudaGetErrorString(jobs[t].err));
        else
            problem_check(&probs[t], jobs[t].kt, 0, what);
        problem_free(&probs[t]);
    }
}

/* ---- graph: capture, the process's first call included --------------------- */

static void mode_graph(void) {
    problem p;
    problem_make(&p, GRAPH_M, GRAPH_N, GRAPH_K, GRAPH_K + LD_ALIGN, GRAPH_K, GRAPH_N + LD_ALIGN, 2);
    cudaStream_t stream;
    HGEMM_CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    for (int i = 0; i < n_kernels; i++) {
        const kernel_under_test *kt = &kernels[i];
        problem_poison(&p, stream);
        HGEMM_CHECK_CUDA(cudaStreamSynchronize(stream));
        cudaGraph_t graph = NULL;
        HGEMM_CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
        hgemm_status st = hgemm_nt(kt->id, p.m, p.n, p.k, 1.0f, p.A, p.lda, p.B, p.ldb, 0.0f,
                                   p.g.C, p.ldc, stream);
        cudaError_t end = cudaStreamEndCapture(stream, &graph);
        const char *what = i == 0 ? "captured, the process's first call" : "captured in a graph";
        if (st != HGEMM_SUCCESS || end != cudaSuccess) {
            record(0, "%-6s %-34s hgemm_nt: %s, cudaStreamEndCapture: %s", kt->name, what,
                   hgemm_status_string(st), cudaGetErrorString(end));
            (void)cudaGetLastError();
            if (graph) HGEMM_CHECK_CUDA(cudaGraphDestroy(graph));
            continue;
        }
        cudaGraphExec_t exec;
        HGEMM_CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
        HGEMM_CHECK_CUDA(cudaGraphLaunch(exec, stream)); /* twice: beta = 0, the same C */
        HGEMM_CHECK_CUDA(cudaGraphLaunch(exec, stream));
        problem_check(&p, kt, stream, what);
        HGEMM_CHECK_CUDA(cudaGraphExecDestroy(exec));
        HGEMM_CHECK_CUDA(cudaGraphDestroy(graph));
    }
    HGEMM_CHECK_CUDA(cudaStreamDestroy(stream));
    problem_free(&p);
}

/* ---- exact cases: alpha/beta, NaN, Inf ------------------------------------- */

/* A[i][*] = a_row(i) for every k, B = 1, C[i][j] = c_col(j): acc = k * a_row(i),
 * and C must become fp16(alpha * acc + beta * C) computed in fp32 (only
 * alpha * acc when beta == 0; beta * C when k == 0 or alpha == 0). */
typedef struct exact_case {
    const char *what;
    int64_t n, k;
    float alpha, beta;
    float a_vals[3]; /* a_row(i) = a_vals[i % 3] */
    float c_vals[3]; /* c_col(j) = c_vals[j % 3] */
} exact_case;

static const float NAN_F = NAN, INF_F = INFINITY;

static float f16_round(float x) { return hgemm_check_f16_to_f32(hgemm_check_f32_to_f16(x)); }

static void fill_host(uint16_t *h, int64_t rows, int64_t cols, int64_t ld, const float vals[3],
                      int by_row) {
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < ld; c++)
            h[r * ld + c] = c < cols ? hgemm_check_f32_to_f16(vals[(by_row ? r : c) % 3])
                                     : (uint16_t)HGEMM_CHECK_SENTINEL;
}

/* Same class: both NaN, or bit-identical. */
static int same_f16(uint16_t got, uint16_t want) {
    const int got_nan = (got & 0x7c00u) == 0x7c00u && (got & 0x3ffu);
    const int want_nan = (want & 0x7c00u) == 0x7c00u && (want & 0x3ffu);
    return got_nan || want_nan ? got_nan && want_nan : got == want;
}

static void run_exact(const exact_case *e, const kernel_under_test *kt) {
    const int64_t m = EXACT_M, n = e->n, k = e->k, ld_k = round_up(k > 0 ? k : 1, LD_ALIGN);
    const int64_t ldc = round_up(n, LD_ALIGN) + LD_ALIGN;
    const float ones[3] = {1.0f, 1.0f, 1.0f};
    uint16_t *hA = hmalloc((size_t)(m * ld_k) * 2), *hB = hmalloc((size_t)(n * ld_k) * 2);
    uint16_t *hC = hmalloc((size_t)(m * ldc) * 2), *out = hmalloc((size_t)(m * ldc) * 2);
    fill_host(hA, m, k, ld_k, e->a_vals, 1);
    fill_host(hB, n, k, ld_k, ones, 1);
    fill_host(hC, m, n, ldc, e->c_vals, 0);
    void *A = dmalloc((size_t)(m * ld_k) * 2), *B = dmalloc((size_t)(n * ld_k) * 2);
    void *C = dmalloc((size_t)(m * ldc) * 2);
    HGEMM_CHECK_CUDA(cudaMemcpy(A, hA, (size_t)(m * ld_k) * 2, cudaMemcpyHostToDevice));
    HGEMM_CHECK_CUDA(cudaMemcpy(B, hB, (size_t)(n * ld_k) * 2, cudaMemcpyHostToDevice));
    HGEMM_CHECK_CUDA(cudaMemcpy(C, hC, (size_t)(m * ldc) * 2, cudaMemcpyHostToDevice));
    hgemm_status st = hgemm_nt(kt->id, m, n, k, e->alpha, A, ld_k, B, ld_k, e->beta, C, ldc, 0);
    int bad = 0;
    if (st == HGEMM_SUCCESS) {
        HGEMM_CHECK_LAUNCH();
        HGEMM_CHECK_CUDA(cudaMemcpy(out, C, (size_t)(m * ldc) * 2, cudaMemcpyDeviceToHost));
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < ldc; j++) {
                uint16_t want = hC[i * ldc + j]; /* padding: untouched */
                if (j < n) {
                    const float c0 = hgemm_check_f16_to_f32(hC[i * ldc + j]);
                    const int multiply = k > 0 && e->alpha != 0.0f;
                    const float acc = multiply ? (float)k * f16_round(e->a_vals[i % 3]) : 0.0f;
                    float v = multiply ? e->alpha * acc : 0.0f;
                    if (e->beta != 0.0f) v += e->beta * c0;
                    want = hgemm_check_f32_to_f16(v);
                }
                const uint16_t got = out[i * ldc + j];
                if (j < n ? !same_f16(got, want) : got != want) { /* padding: bit for bit */
                    if (bad < MAX_SHOWN)
                        printf("     C[%lld][%lld] = 0x%04x (%g), want 0x%04x (%g)\n", (long long)i,
                               (long long)j, out[i * ldc + j],
                               hgemm_check_f16_to_f32(out[i * ldc + j]), want,
                               hgemm_check_f16_to_f32(want));
                    bad++;
                }
            }
    }
    record(st == HGEMM_SUCCESS && bad == 0, "%-6s %-34s n %lld k %lld alpha %g beta %g%s%s",
           kt->name, e->what, (long long)n, (long long)k, e->alpha, e->beta,
           st == HGEMM_SUCCESS ? "" : ": ", st == HGEMM_SUCCESS ? "" : hgemm_status_string(st));
    free(hA), free(hB), free(hC), free(out);
    HGEMM_CHECK_CUDA(cudaFree(A));
    HGEMM_CHECK_CUDA(cudaFree(B));
    HGEMM_CHECK_CUDA(cudaFree(C));
}

static void contract_exact(void) {
    const exact_case cases[] = {
        /* issue 11: 2048 * 64 = 131072 is past fp16, the sum 11072 is not */
        {"fp32 epilogue, one rounding", EXACT_N, EXACT_K, 2048.0f, 2.0f, {1, 1, 1}, {-60000, -60000, -60000}},
        {"fp32 epilogue, one rounding", EXACT_N_RAGGED, EXACT_K, 2048.0f, 2.0f, {1, 1, 1}, {-60000, -60000, -60000}},
        {"alpha NaN", EXACT_N, EXACT_K, NAN_F, 0.0f, {-1, 0, 1}, {1, 1, 1}},
        {"alpha +Inf: +-Inf, NaN at acc 0", EXACT_N, EXACT_K, INF_F, 0.0f, {-1, 0, 1}, {1, 1, 1}},
        {"alpha -Inf", EXACT_N_RAGGED, EXACT_K, -INF_F, 0.0f, {-1, 0, 1}, {1, 1, 1}},
        {"beta NaN", EXACT_N, EXACT_K, 1.0f, NAN_F, {-1, 0, 1}, {-1, 0, 1}},
        {"beta +Inf: +-Inf, NaN at C 0", EXACT_N, EXACT_K, 1.0f, INF_F, {-1, 0, 1}, {-1, 0, 1}},
        {"beta -Inf", EXACT_N_RAGGED, EXACT_K, 1.0f, -INF_F, {-1, 0, 1}, {-1, 0, 1}},
        {"alpha Inf + beta Inf", EXACT_N, EXACT_K, INF_F, INF_F, {-1, 0, 1}, {-1, 0, 1}},
        {"alpha 0: A, B not read (Inf)", EXACT_N, EXACT_K, 0.0f, 1.0f, {INFINITY, NAN, 1}, {-1, 0, 1}},
        {"k 0: alpha NaN not applied", EXACT_N, 0, NAN_F, 2.0f, {1, 1, 1}, {-1, 0.5f, 3}},
        {"beta 0: C NaN not read", EXACT_N, EXACT_K, 1.0f, 0.0f, {-1, 0, 1}, {NAN, NAN, NAN}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int i = 0; i < n_kernels; i++) run_exact(&cases[c], &kernels[i]);
}

/* ---- k = 65536: exact counts of k-tiles ------------------------------------- */

/* A[i][kk] = 1 where kk % 64 == i % 64, else 0; B[j][kk] = 1 where
 * (kk / 64 + j) % 3 != 0: C[i][j] counts the k-tiles t (with t*64 + i%64 < k)
 * for which (t + j) % 3 != 0, at most 1025 < 2048, exact even in fp16. A
 * skipped or repeated k-tile changes the count. */
static void contract_long_k(int64_t k) {
    const int64_t m = LONG_M, n = LONG_N, ld = round_up(k, LD_ALIGN), ldc = round_up(n, LD_ALIGN);
    uint16_t *hA = hmalloc((size_t)(m * ld) * 2), *hB = hmalloc((size_t)(n * ld) * 2);
    uint16_t *out = hmalloc((size_t)(m * ldc) * 2);
    const uint16_t ONE = hgemm_check_f32_to_f16(1.0f), ZERO = 0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t kk = 0; kk < ld; kk++) hA[i * ld + kk] = kk < k && kk % K_TILE == i % K_TILE ? ONE : ZERO;
    for (int64_t j = 0; j < n; j++)
        for (int64_t kk = 0; kk < ld; kk++) hB[j * ld + kk] = kk < k && (kk / K_TILE + j) % 3 ? ONE : ZERO;
    void *A = dmalloc((size_t)(m * ld) * 2), *B = dmalloc((size_t)(n * ld) * 2);
    void *C = dmalloc((size_t)(m * ldc) * 2);
    HGEMM_CHECK_CUDA(cudaMemcpy(A, hA, (size_t)(m * ld) * 2, cudaMemcpyHostToDevice));
    HGEMM_CHECK_CUDA(cudaMemcpy(B, hB, (size_t)(n * ld) * 2, cudaMemcpyHostToDevice));
    /* The count depends on i % 64 and j % 3 only. */
    int64_t want[K_TILE][3];
    for (int64_t r = 0; r < K_TILE; r++)
        for (int64_t c = 0; c < 3; c++) {
            want[r][c] = 0;
            for (int64_t tile = 0; tile * K_TILE + r < k; tile++) want[r][c] += (tile + c) % 3 != 0;
        }
    for (int t = 0; t < n_kernels; t++) {
        const kernel_under_test *kt = &kernels[t];
        hgemm_check_fill_pattern(C, m, ldc, ldc, HGEMM_CHECK_NAN, 0);
        hgemm_status st = hgemm_nt(kt->id, m, n, k, 1.0f, A, ld, B, ld, 0.0f, C, ldc, 0);
        int bad = 0;
        if (st == HGEMM_SUCCESS) {
            HGEMM_CHECK_LAUNCH();
            HGEMM_CHECK_CUDA(cudaMemcpy(out, C, (size_t)(m * ldc) * 2, cudaMemcpyDeviceToHost));
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < n; j++) {
                    const int64_t count = want[i % K_TILE][j % 3];
                    const float got = hgemm_check_f16_to_f32(out[i * ldc + j]);
                    if (got != (float)count) {
                        if (bad < MAX_SHOWN)
                            printf("     C[%lld][%lld] = %g, want %lld\n", (long long)i,
                                   (long long)j, got, (long long)count);
                        bad++;
                    }
                }
        }
        record(st == HGEMM_SUCCESS && bad == 0, "%-6s %-34s %lldx%lldx%lld%s%s", kt->name,
               "long k, every k-tile counted", (long long)m, (long long)n, (long long)k,
               st == HGEMM_SUCCESS ? "" : ": ", st == HGEMM_SUCCESS ? "" : hgemm_status_string(st));
    }
    free(hA), free(hB), free(out);
    HGEMM_CHECK_CUDA(cudaFree(A));
    HGEMM_CHECK_CUDA(cudaFree(B));
    HGEMM_CHECK_CUDA(cudaFree(C));
}

/* ---- the caller's pending error ----------------------------------------------- */

/* Which of the runtime calls hgemm_nt makes keeps a pending error pending:
 * printed, so that a failure of the check below can be traced to a call. */
static void probe_pending_error(const void *dptr) {
    enum { PROBE_THREADS = 256, CALLS = 6 };
    int dev = 0, value = 0, blocks = 0;
    struct cudaPointerAttributes attr;
    const void *kernel = hgemm__scale_kernel();
    unsigned char empty_args[64] = {0}; /* its arguments with m = n = 0: the kernel does nothing */
    void *params[] = {empty_args};
    cudaLaunchConfig_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDim.x = cfg.gridDim.y = cfg.gridDim.z = 1;
    cfg.blockDim.x = PROBE_THREADS;
    cfg.blockDim.y = cfg.blockDim.z = 1;
    const char *names[CALLS] = {"cudaGetDevice", "cudaDeviceGetAttribute", "cudaPointerGetAttributes",
                                "cudaFuncSetAttribute", "cudaOccupancyMaxActiveBlocksPerMultiprocessor",
                                "cudaLaunchKernelExC"};
    for (int call = 0; call < CALLS; call++) {
        void *absurd = NULL;
        const cudaError_t pending = cudaMalloc(&absurd, ABSURD_BYTES);
        cudaError_t rc = cudaSuccess;
        if (call == 0) rc = cudaGetDevice(&dev);
        if (call == 1) rc = cudaDeviceGetAttribute(&value, cudaDevAttrMultiProcessorCount, dev);
        if (call == 2) rc = cudaPointerGetAttributes(&attr, dptr);
        if (call == 3) rc = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 0);
        if (call == 4) rc = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, PROBE_THREADS, 0);
        if (call == 5) rc = cudaLaunchKernelExC(&cfg, kernel, params);
        const cudaError_t after = cudaPeekAtLastError();
        (void)cudaGetLastError();
        printf("     probe: pending %s, then %s -> %s: %s\n", cudaGetErrorName(pending), names[call],
               cudaGetErrorName(rc), after == pending ? "still pending" : "cleared");
    }
}

static void contract_pending_error(void) {
    problem p;
    problem_make(&p, GRAPH_M, GRAPH_N, GRAPH_K, GRAPH_K, GRAPH_K, GRAPH_N + LD_ALIGN, 1);
    for (int i = 0; i < n_kernels; i++) {
        const kernel_under_test *kt = &kernels[i];
        problem_poison(&p, 0);
        HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
        void *absurd = NULL;
        const cudaError_t pending = cudaMalloc(&absurd, ABSURD_BYTES); /* fails, non-sticky */
        /* A refused call (no CUDA call made) and a good one: neither touches it. */
        hgemm_status refused = hgemm_nt(kt->id, p.m, p.n, p.k, 1.0f, p.A, p.lda, p.B, p.ldb, 0.0f,
                                        p.g.C, -1, 0);
        hgemm_status st = hgemm_nt(kt->id, p.m, p.n, p.k, 1.0f, p.A, p.lda, p.B, p.ldb, 0.0f,
                                   p.g.C, p.ldc, 0);
        const cudaError_t after = cudaPeekAtLastError(); /* still the caller's */
        const cudaError_t sync = cudaDeviceSynchronize();
        (void)cudaGetLastError(); /* the test's own cleanup */
        const int ok = pending != cudaSuccess && refused == HGEMM_ERROR_INVALID_VALUE &&
                       st == HGEMM_SUCCESS && after == pending &&
                       (sync == cudaSuccess || sync == pending);
        record(ok, "%-6s %-34s hgemm_nt: %s; afterwards %s (pending: %s)", kt->name,
               "caller's pending error left alone", hgemm_status_string(st),
               cudaGetErrorName(after), cudaGetErrorName(pending));
        if (st == HGEMM_SUCCESS) problem_check(&p, kt, 0, "... and C is right");
        if (!ok && i == 0) probe_pending_error(p.A);
    }
    problem_free(&p);
}

/* ---- host pointers and other devices' memory ------------------------------------ */

static void expect_refused(const kernel_under_test *kt, const char *what, const void *A,
                           const void *B, void *C, int64_t ld) {
    hgemm_status st = hgemm_nt(kt->id, EXACT_M, EXACT_N, EXACT_K, 1.0f, A, ld, B, ld, 0.0f, C, ld, 0);
    cudaError_t pending = cudaGetLastError();
    cudaError_t sync = cudaDeviceSynchronize();
    record(st == HGEMM_ERROR_INVALID_VALUE && pending == cudaSuccess && sync == cudaSuccess,
           "%-6s %-34s %s; then %s, %s", kt->name, what, hgemm_status_string(st),
           cudaGetErrorName(pending), cudaGetErrorName(sync));
}

static void contract_pointers(void) {
    const int64_t ld = EXACT_K, bytes = EXACT_M * EXACT_K * 2;
    void *dA = dmalloc((size_t)bytes), *dB = dmalloc((size_t)bytes), *dC = dmalloc((size_t)bytes);
    void *host = NULL, *pinned = NULL;
    if (posix_memalign(&host, 64, (size_t)bytes) != 0) exit(1);
    memset(host, 0, (size_t)bytes);
    HGEMM_CHECK_CUDA(cudaMallocHost(&pinned, (size_t)bytes));
    int devices = 0, dev = 0;
    HGEMM_CHECK_CUDA(cudaGetDeviceCount(&devices));
    HGEMM_CHECK_CUDA(cudaGetDevice(&dev));
    void *other = NULL;
    if (devices > 1) {
        HGEMM_CHECK_CUDA(cudaSetDevice((dev + 1) % devices));
        other = dmalloc((size_t)bytes);
        HGEMM_CHECK_CUDA(cudaSetDevice(dev));
    } else {
        printf("     (one GPU: another device's memory is not tried)\n");
    }
    for (int i = 0; i < n_kernels; i++) {
        const kernel_under_test *kt = &kernels[i];
        expect_refused(kt, "host C", dA, dB, host, ld);
        expect_refused(kt, "host A", host, dB, dC, ld);
        expect_refused(kt, "host B", dA, host, dC, ld);
        expect_refused(kt, "pinned host C", dA, dB, pinned, ld);
        expect_refused(kt, "pinned host A", pinned, dB, dC, ld);
        if (other) expect_refused(kt, "another device's C", dA, dB, other, ld);
        if (other) expect_refused(kt, "another device's B", dA, other, dC, ld);
    }
    /* The context still works. */
    problem p;
    problem_make(&p, GRAPH_M, GRAPH_N, GRAPH_K, GRAPH_K, GRAPH_K, GRAPH_N, 1);
    for (int i = 0; i < n_kernels; i++) problem_run(&p, &kernels[i], "after the refused pointers");
    problem_free(&p);
    free(host);
    HGEMM_CHECK_CUDA(cudaFreeHost(pinned));
    HGEMM_CHECK_CUDA(cudaFree(dA));
    HGEMM_CHECK_CUDA(cudaFree(dB));
    HGEMM_CHECK_CUDA(cudaFree(dC));
    if (other) {
        HGEMM_CHECK_CUDA(cudaSetDevice((dev + 1) % devices));
        HGEMM_CHECK_CUDA(cudaFree(other));
        HGEMM_CHECK_CUDA(cudaSetDevice(dev));
    }
}

static void mode_contract(void) {
    contract_pending_error();
    contract_exact();
    contract_long_k(LONG_K);
    contract_long_k(LONG_K_RAGGED);
    contract_pointers();
}

/* ---- large: leading dimensions past 2^31, C past 2^32 elements --------------- */

static void mode_large(void) {
    enum { FEW = 5, SOME = 300, SOME_LD = 304, SMALL_K = 96 }; /* leading dimensions are multiples of 8 */
    const struct { const char *what; int64_t m, n, lda, ldb, ldc; } lds[] = {
        {"lda past 2^31 elements", FEW, SOME, HUGE_LD, SMALL_K, SOME_LD},
        {"ldb past 2^31 elements", SOME, FEW, SMALL_K, HUGE_LD, SOME_LD},
        {"ldc past 2^31 elements", FEW, SOME, SMALL_K, SMALL_K, HUGE_LD},
    };
    for (size_t c = 0; c < sizeof lds / sizeof lds[0]; c++) {
        problem p;
        problem_make(&p, lds[c].m, lds[c].n, SMALL_K, lds[c].lda, lds[c].ldb, lds[c].ldc, 1);
        for (int i = 0; i < n_kernels; i++) problem_run(&p, &kernels[i], lds[c].what);
        problem_free(&p);
    }
    problem p;
    problem_make(&p, BIG_M, BIG_N, BIG_K, BIG_K, BIG_K, BIG_N + LD_ALIGN, 1);
    for (int i = 0; i < n_kernels; i++) problem_run(&p, &kernels[i], "C past 2^32 elements");
    problem_free(&p);
}

/* ---- managed memory ----------------------------------------------------------- */

static void mode_managed(void) {
    const int64_t m = GRAPH_M, n = GRAPH_N, k = GRAPH_K;
    void *A, *B, *C;
    HGEMM_CHECK_CUDA(cudaMallocManaged(&A, (size_t)(m * k) * 2, cudaMemAttachGlobal));
    HGEMM_CHECK_CUDA(cudaMallocManaged(&B, (size_t)(n * k) * 2, cudaMemAttachGlobal));
    HGEMM_CHECK_CUDA(cudaMallocManaged(&C, (size_t)(m * n) * 2, cudaMemAttachGlobal));
    double *ref = (double *)dmalloc((size_t)(m * n) * sizeof(double));
    const float s = hgemm_check_unit_scale(k);
    hgemm_check_fill_random(A, m, k, k, SEED_A, s, 0);
    hgemm_check_fill_random(B, n, k, k, SEED_B, s, 0);
    hgemm_check_reference(m, n, k, 1.0, A, k, B, k, 0.0, NULL, n, ref, n, 0);
    for (int i = 0; i < n_kernels; i++) {
        const kernel_under_test *kt = &kernels[i];
        hgemm_check_fill_pattern(C, m, n, n, HGEMM_CHECK_NAN, 0);
        hgemm_status st = hgemm_nt(kt->id, m, n, k, 1.0f, A, k, B, k, 0.0f, C, n, 0);
        hgemm_check_stats stats;
        int ok = st == HGEMM_SUCCESS &&
                 hgemm_check_compare(C, n, ref, n, m, n, kt->atol, HGEMM_CHECK_RTOL, &stats, 0);
        record(ok, "%-6s %-34s %s", kt->name, "managed A, B and C", hgemm_status_string(st));
        if (st == HGEMM_SUCCESS && !ok) hgemm_check_print_mismatches(stdout, &stats, "     ");
    }
    HGEMM_CHECK_CUDA(cudaFree(A));
    HGEMM_CHECK_CUDA(cudaFree(B));
    HGEMM_CHECK_CUDA(cudaFree(C));
    HGEMM_CHECK_CUDA(cudaFree(ref));
}

/* ---- cost: host time per call -------------------------------------------------- */

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void mode_cost(void) {
    const int64_t s = COST_SIZE;
    void *A = dmalloc((size_t)(s * s) * 2), *B = dmalloc((size_t)(s * s) * 2);
    void *C = dmalloc((size_t)(s * s) * 2);
    hgemm_check_fill_random(A, s, s, s, SEED_A, 1.0f, 0);
    hgemm_check_fill_random(B, s, s, s, SEED_B, 1.0f, 0);
    int dev = 0;
    HGEMM_CHECK_CUDA(cudaGetDevice(&dev));
    const hgemm_problem p = {s, s, s, 1.0f, 0.0f, A, s, B, s, C, s, NULL, 0, 0, HGEMM_DTYPE_F16, 0, 0, 1, 0, 0, 0, NULL, 0, {NULL, 0, 0, 0, 0}};
    for (int i = 0; i < n_kernels; i++) {
        const kernel_under_test *kt = &kernels[i];
        hgemm_status st = HGEMM_SUCCESS;
        for (int c = 0; c < COST_WARMUP && st == HGEMM_SUCCESS; c++)
            st = hgemm_nt(kt->id, s, s, s, 1.0f, A, s, B, s, 0.0f, C, s, 0);
        HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
        double t0 = now_ns();
        for (int c = 0; c < COST_CALLS && st == HGEMM_SUCCESS; c++)
            st = hgemm_nt(kt->id, s, s, s, 1.0f, A, s, B, s, 0.0f, C, s, 0);
        const double call_ns = (now_ns() - t0) / COST_CALLS;
        HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
        hgemm_status pst = HGEMM_SUCCESS;
        t0 = now_ns();
        for (int c = 0; c < COST_CALLS && pst == HGEMM_SUCCESS; c++) pst = hgemm__check_pointers(&p, dev);
        const double check_ns = (now_ns() - t0) / COST_CALLS;
        record(st == HGEMM_SUCCESS && pst == HGEMM_SUCCESS,
               "%-6s host cost per hgemm_nt call (%lldx%lldx%lld, %d calls): %.0f ns with the "
               "pointer check, of which the check %.0f ns (6 cudaPointerGetAttributes: each matrix's first "
               "and last byte); without "
               "it %.0f ns", kt->name, (long long)s, (long long)s, (long long)s, COST_CALLS,
               call_ns, check_ns, call_ns - check_ns);
    }
    HGEMM_CHECK_CUDA(cudaFree(A));
    HGEMM_CHECK_CUDA(cudaFree(B));
    HGEMM_CHECK_CUDA(cudaFree(C));
}

int main(int argc, char **argv) {
    static const struct { const char *name; void (*run)(void); } modes[] = {
        {"threads", mode_threads}, {"graph", mode_graph},     {"contract", mode_contract},
        {"large", mode_large},     {"managed", mode_managed}, {"cost", mode_cost},
    };
    const int n_modes = (int)(sizeof modes / sizeof modes[0]);
    int mode = -1;
    for (int i = 0; argc == 2 && i < n_modes; i++)
        if (strcmp(argv[1], modes[i].name) == 0) mode = i;
    if (mode < 0) {
        fprintf(stderr, "usage: %s threads|graph|contract|large|managed|cost\n", argv[0]);
        return EXIT_USAGE;
    }
    char why[WHY_LEN];
    if (!hgemm_check_sm90_available(why, sizeof why)) {
        printf("test_gpu_edges %s: skipped: %s\n", modes[mode].name, why);
        return EXIT_SKIP;
    }
    printf("test_gpu_edges %s: %s\n", modes[mode].name, why);
    list_kernels();
    modes[mode].run();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
