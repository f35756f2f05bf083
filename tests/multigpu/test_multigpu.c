/*
 * test_multigpu: libhgemm_nccl on real GPUs, one host thread per rank in one
 * process (ncclCommInitAll over the first N devices).
 *
 *   test_multigpu allgather      N = 2: (a) against hgemm_nt on the whole gathered A
 *   test_multigpu reducescatter  N = 2: (b) against the fp16 sum of hgemm_nt's partials
 *   test_multigpu single         N = 1: both operations, the degenerate communicator
 *   test_multigpu errors         N = 2: bad arguments give every rank the same status
 *   test_multigpu copyengine     N = 2, a communicator with NCCL_CTA_POLICY_ZERO and
 *                                buffers from hgemm_nccl_mem_alloc: the copy-engine
 *                                paths (bitwise, as above), the calls that must fall
 *                                back (ragged, chunks, lda > k, a rank's buffers not in
 *                                windows or at another offset) and hgemm_nccl_mem_alloc's
 *                                and _free's statuses
 *
 * Bitwise where the same kernel computes the same elements: with V5 (one block
 * per tile, no split of K, so an element's bits do not depend on how many rows
 * a launch has), (a) must equal hgemm_nt(V5) on the gathered A, and (b) for
 * N <= 2 must equal round_fp16(P0 + P1) of the ranks' hgemm_nt(V5) partials
 * (NCCL adds two fp16 values once, rounding to nearest). With AUTO the result
 * is compared with an fp64 reference at DESIGN.md's tolerances. Every case
 * also checks that nothing outside C's m x n region was written (padding
 * columns hold a sentinel) and, for (a), that the gathered A is exact.
 * Splits: even, ragged, and a rank with no rows; several chunk counts; beta 0
 * and not; leading dimensions with padding; in place; both check modes. Each
 * case also says which path the call must take (hgemm_nccl_used_copy_engine).
 *
 * Exit status: 0 passed, 1 failed, 77 skipped (fewer GPUs than the mode
 * needs, or not sm_90). NVLink multicast (NVLS) is kept off unless
 * NCCL_NVLS_ENABLE is already set.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "check.h"
#include "hgemm.h"
#include "hgemm_nccl.h"

enum {
    MAX_RANKS = 8,
    EXIT_SKIP = 77,
    SEED_A = 0xa11ce,
    SEED_B = 0xb0b,
    SEED_C = 0xc0c,
    MAX_SHOWN = 5,           /* mismatches printed per comparison */
    TIMEOUT_TEST_S = 2,      /* the context timeout the timeout case uses */
    LOCAL_GEMM_SMS = 40,     /* the LOCAL context's GEMM SM target (hgemm_nt_ex) */
    WHY_LEN = 256,
    WINDOW_SHIFT = 4096      /* how much further into its window WIN_SHIFTED puts rank 1's buffers */
};

/* Where a case's collective buffers come from. Every rank allocates the
 * windows whatever it uses (hgemm_nccl_mem_alloc and _free are collective). */
typedef enum windows {
    WIN_NONE = 0,            /* cudaMalloc */
    WIN_ALL,                 /* every rank's from hgemm_nccl_mem_alloc */
    WIN_RANK0,               /* rank 0's from windows, rank 1's from cudaMalloc */
    WIN_SHIFTED              /* every rank's from windows, rank 1's WINDOW_SHIFT further in */
} windows;

#define CHECK_NCCL(call)                                                                         \
    do {                                                                                         \
        ncclResult_t r_ = (call);                                                                \
        if (r_ != ncclSuccess) {                                                                 \
            fprintf(stderr, "%s:%d: NCCL error %d (%s) in %s\n", __FILE__, __LINE__, (int)r_,     \
                    ncclGetErrorString(r_), #call);                                              \
            exit(1);                                                                             \
        }                                                                                        \
    } while (0)

/* ---- the ranks --------------------------------------------------------------- */

struct world;

typedef struct rank_state {
    struct world *w;
    int rank, nranks, device;
    ncclComm_t comm;
    cudaStream_t stream;
    hgemm_nccl_ctx *agree, *local;   /* one context per check mode */
    int failures;
} rank_state;

typedef struct world {
    int nranks;
    pthread_barrier_t barrier;
    rank_state ranks[MAX_RANKS];
    uint16_t *partials[MAX_RANKS];   /* (b): each rank's partial product, on the host */
    void (*body)(struct world *, rank_state *);
    int copy_engine;                 /* communicators with NCCL_CTA_POLICY_ZERO, contexts with copy_engine */
} world;

static void barrier(world *w) { pthread_barrier_wait(&w->barrier); }

#define FAIL(rs, ...)                                                                             \
    do {                                                                                          \
        fprintf(stderr, "rank %d: %s:%d: ", (rs)->rank, __FILE__, __LINE__);                      \
        fprintf(stderr, __VA_ARGS__);                                                             \
        fputc('\n', stderr);                                                                      \
        (rs)->failures++;                                                                         \
    } while (0)

#define EXPECT_STATUS(rs, got, want, what)                                                        \
    do {                                                                                          \
        hgemm_nccl_status g_ = (got), w_ = (want);                                                \
        if (g_ != w_)                                                                             \
            FAIL(rs, "%s: got %s, want %s", what, hgemm_nccl_status_string(g_),                   \
                 hgemm_nccl_status_string(w_));                                                   \
    } while (0)

static void *dev_alloc(size_t bytes) {
    void *p = NULL;
    HGEMM_CHECK_CUDA(cudaMalloc(&p, bytes ? bytes : 16));
    return p;
}

/* A case's buffer of `bytes`: from the window *win (allocated on every rank
 * when w != WIN_NONE) where the case puts this rank's buffers there, else
 * from cudaMalloc (*own, freed by case_free). */
static void *case_alloc(rank_state *rs, hgemm_nccl_ctx *ctx, windows w, size_t bytes, void **win, void **own) {
    *win = *own = NULL;
    if (w != WIN_NONE) {
        hgemm_nccl_status st = hgemm_nccl_mem_alloc(ctx, bytes + WINDOW_SHIFT, win);
        if (st != HGEMM_NCCL_SUCCESS) {
            fprintf(stderr, "rank %d: hgemm_nccl_mem_alloc: %s\n", rs->rank, hgemm_nccl_status_string(st));
            exit(1);
        }
        if (w == WIN_ALL || (w == WIN_RANK0 && rs->rank == 0)) return *win;
        if (w == WIN_SHIFTED) return (char *)*win + (rs->rank == 1 ? WINDOW_SHIFT : 0);
    }
    *own = dev_alloc(bytes);
    return *own;
}

static void case_free(rank_state *rs, hgemm_nccl_ctx *ctx, void *win, void *own) {
    if (win != NULL) EXPECT_STATUS(rs, hgemm_nccl_mem_free(ctx, win), HGEMM_NCCL_SUCCESS, "hgemm_nccl_mem_free");
    if (own != NULL) HGEMM_CHECK_CUDA(cudaFree(own));
}

static void expect_path(rank_state *rs, const char *what, hgemm_nccl_ctx *ctx, int want) {
    const int got = hgemm_nccl_used_copy_engine(ctx);
    if (got != want) FAIL(rs, "%s: took the %s path, want the %s path", what, got ? "copy-engine" : "kernel",
                          want ? "copy-engine" : "kernel");
}

static uint16_t *host_copy(const void *dev, int64_t rows, int64_t ld) {
    size_t bytes = (size_t)(rows > 0 ? rows : 1) * (size_t)ld * 2;
    uint16_t *h = malloc(bytes);
    if (h == NULL) {
        fprintf(stderr, "out of host memory\n");
        exit(1);
    }
    if (rows > 0) HGEMM_CHECK_CUDA(cudaMemcpy(h, dev, (size_t)rows * (size_t)ld * 2, cudaMemcpyDeviceToHost));
    return h;
}

/* Bitwise: the rows x cols region of got (ldg, device) against want (ldw, host). */
static void expect_bits(rank_state *rs, const char *what, const void *got_dev, int64_t ldg,
                        const uint16_t *want, int64_t ldw, int64_t rows, int64_t cols) {
    uint16_t *got = host_copy(got_dev, rows, ldg);
    int64_t bad = 0;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            if (got[i * ldg + j] != want[i * ldw + j]) {
                if (bad < MAX_SHOWN)
                    fprintf(stderr, "rank %d: %s: (%lld, %lld) = 0x%04x, want 0x%04x (%g vs %g)\n",
                            rs->rank, what, (long long)i, (long long)j, got[i * ldg + j],
                            want[i * ldw + j], hgemm_check_f16_to_f32(got[i * ldg + j]),
                            hgemm_check_f16_to_f32(want[i * ldw + j]));
                bad++;
            }
    if (bad) FAIL(rs, "%s: %lld of %lld elements differ", what, (long long)bad, (long long)(rows * cols));
    free(got);
}

/* Columns cols..ld-1 of every row still hold the sentinel. */
static void expect_padding(rank_state *rs, const char *what, const void *dev, int64_t rows,
                           int64_t cols, int64_t ld) {
    uint16_t *h = host_copy(dev, rows, ld);
    int64_t bad = 0;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = cols; j < ld; j++) bad += h[i * ld + j] != HGEMM_CHECK_SENTINEL;
    if (bad) FAIL(rs, "%s: %lld padding elements written", what, (long long)bad);
    free(h);
}

/* Against an fp64 reference, at the tolerance of fp32-accumulating kernels. */
static void expect_close(rank_state *rs, const char *what, const void *C, int64_t ldc,
                         const void *A, int64_t lda, const void *B, int64_t ldb, const void *C0,
                         int64_t m, int64_t n, int64_t k, float alpha, float beta) {
    double *ref = NULL;
    HGEMM_CHECK_CUDA(cudaMalloc((void **)&ref, (size_t)(m > 0 ? m : 1) * (size_t)(n > 0 ? n : 1) * sizeof(double)));
    hgemm_check_reference(m, n, k, alpha, A, lda, B, ldb, beta, C0, ldc, ref, n > 0 ? n : 1, rs->stream);
    hgemm_check_stats st;
    if (!hgemm_check_compare(C, ldc, ref, n > 0 ? n : 1, m, n, HGEMM_CHECK_ATOL_ACC_F32, HGEMM_CHECK_RTOL,
                             &st, rs->stream)) {
        FAIL(rs, "%s: %lld of %lld elements outside tolerance (max abs err %g)", what,
             (long long)st.failed, (long long)st.count, st.max_abs_err);
        hgemm_check_print_mismatches(stderr, &st, "    ");
    }
    HGEMM_CHECK_CUDA(cudaFree(ref));
}

/* x (exact in double) rounded to the nearest fp16, ties to even. */
static uint16_t f16_from_double(double x) {
    enum { F16_MANT_BITS = 10, F16_MIN_EXP = -14, F16_INF = 0x7c00, F16_NAN = 0x7e00, SIGN = 0x8000 };
    const double overflow = 65520.0; /* halfway between 65504 and 2^16: rounds to infinity */
    if (isnan(x)) return F16_NAN;
    const uint16_t sign = signbit(x) ? SIGN : 0;
    const double a = fabs(x);
    if (a >= overflow) return (uint16_t)(sign | F16_INF);
    int e = 0;
    (void)frexp(a, &e); /* a = f * 2^e, f in [0.5, 1) */
    int exp = e - 1;
    if (exp < F16_MIN_EXP) exp = F16_MIN_EXP;
    const double quantum = ldexp(1.0, exp - F16_MANT_BITS);
    const double r = nearbyint(a / quantum) * quantum; /* the default mode: to nearest, ties even */
    return (uint16_t)(sign | hgemm_check_f32_to_f16((float)r));
}

/* ---- (a) all-gather + GEMM ------------------------------------------------------- */

typedef struct ag_case {
    const char *name;
    int64_t counts[MAX_RANKS];
    int chunks;
    hgemm_kernel kernel;     /* V5: bitwise; AUTO: against fp64 */
    float alpha, beta;
    int in_place;            /* A_local is this rank's rows of A_gathered */
    int local_check;         /* use the HGEMM_NCCL_CHECK_LOCAL context */
    int dense;               /* lda == k (else AG_LDA > AG_K) */
    windows win;
    int want_ce;             /* the call must take the copy-engine path */
} ag_case;

enum { AG_K = 200, AG_LDA = 208, AG_PAD = 8 };

static int64_t ag_n_local(int rank) { return rank == 0 ? 136 : 64; }

static void run_ag_case(world *w, rank_state *rs, const ag_case *tc) {
    const int me = rs->rank;
    int64_t M = 0, first = 0;
    for (int r = 0; r < w->nranks; r++) {
        if (r == me) first = M;
        M += tc->counts[r];
    }
    const int64_t m_me = tc->counts[me], n = ag_n_local(me), k = AG_K, lda = tc->dense ? AG_K : AG_LDA;
    /* hgemm_nccl_mem_alloc takes one size on every rank: the largest count's */
    int64_t m_most = 0;
    for (int r = 0; r < w->nranks; r++) m_most = tc->counts[r] > m_most ? tc->counts[r] : m_most;
    const int64_t ldb = k + AG_PAD, ldc = n + AG_PAD;
    const float scale = hgemm_check_unit_scale(k);
    hgemm_nccl_ctx *ctx = tc->local_check ? rs->local : rs->agree;
    /* The whole A, the same on every rank (the same seed), gives the reference. */
    void *A_ref = dev_alloc((size_t)M * lda * 2);
    void *full_win = NULL, *full_own = NULL, *own_win = NULL, *own_own = NULL;
    void *A_full = case_alloc(rs, ctx, tc->win, (size_t)M * lda * 2, &full_win, &full_own);
    void *A_own = tc->in_place ? (char *)A_full + first * lda * 2
                               : case_alloc(rs, ctx, tc->win, (size_t)(m_most ? m_most : 1) * lda * 2, &own_win, &own_own);
    void *B = dev_alloc((size_t)n * ldb * 2);
    void *C = dev_alloc((size_t)M * ldc * 2), *C_ref = dev_alloc((size_t)M * ldc * 2);
    void *C0 = dev_alloc((size_t)M * ldc * 2);
    hgemm_check_fill_pattern(A_ref, M, lda, lda, 0, rs->stream);
    hgemm_check_fill_random(A_ref, M, k, lda, SEED_A, scale, rs->stream);
    hgemm_check_fill_pattern(A_full, M, lda, lda, HGEMM_CHECK_SENTINEL, rs->stream);
    if (m_me)
        HGEMM_CHECK_CUDA(cudaMemcpy2DAsync(A_own, (size_t)lda * 2, (char *)A_ref + first * lda * 2,
                                           (size_t)lda * 2, (size_t)k * 2, (size_t)m_me,
                                           cudaMemcpyDeviceToDevice, rs->stream));
    hgemm_check_fill_random(B, n, k, ldb, SEED_B + (uint64_t)me, scale, rs->stream);
    hgemm_check_fill_pattern(C0, M, ldc, ldc, HGEMM_CHECK_SENTINEL, rs->stream);
    if (tc->beta != 0.0f)
        hgemm_check_fill_random(C0, M, n, ldc, SEED_C + (uint64_t)me, 1.0f, rs->stream);
    else
        hgemm_check_fill_pattern(C0, M, n, ldc, HGEMM_CHECK_NAN, rs->stream); /* never read */
    HGEMM_CHECK_CUDA(cudaMemcpyAsync(C, C0, (size_t)M * ldc * 2, cudaMemcpyDeviceToDevice, rs->stream));
    HGEMM_CHECK_CUDA(cudaMemcpyAsync(C_ref, C0, (size_t)M * ldc * 2, cudaMemcpyDeviceToDevice, rs->stream));
    HGEMM_CHECK_CUDA(cudaStreamSynchronize(rs->stream));
    barrier(w);

    hgemm_nccl_status st = hgemm_nccl_allgather_gemm(ctx, tc->kernel, tc->chunks, tc->counts, n, k,
                                                     tc->alpha, A_own, A_full, lda, B, ldb, tc->beta,
                                                     C, ldc, rs->stream);
    EXPECT_STATUS(rs, st, HGEMM_NCCL_SUCCESS, tc->name);
    expect_path(rs, tc->name, ctx, tc->want_ce);
    HGEMM_CHECK_CUDA(cudaStreamSynchronize(rs->stream));

    char what[WHY_LEN];
    /* The gathered A: every element of the k columns, bitwise. */
    uint16_t *want_a = host_copy(A_ref, M, lda);
    snprintf(what, sizeof what, "%s: gathered A", tc->name);
    expect_bits(rs, what, A_full, lda, want_a, lda, M, k);
    free(want_a);
    snprintf(what, sizeof what, "%s: C padding", tc->name);
    expect_padding(rs, what, C, M, n, ldc);
    if (tc->kernel == HGEMM_KERNEL_AUTO) {
        snprintf(what, sizeof what, "%s: C against fp64", tc->name);
        expect_close(rs, what, C, ldc, A_ref, lda, B, ldb, C0, M, n, k, tc->alpha, tc->beta);
    } else {
        hgemm_status hs = hgemm_nt(tc->kernel, M, n, k, tc->alpha, A_ref, lda, B, ldb, tc->beta, C_ref, ldc,
                                   rs->stream);
        if (hs != HGEMM_SUCCESS) FAIL(rs, "%s: reference hgemm_nt: %s", tc->name, hgemm_status_string(hs));
        HGEMM_CHECK_CUDA(cudaStreamSynchronize(rs->stream));
        uint16_t *want = host_copy(C_ref, M, ldc);
        snprintf(what, sizeof what, "%s: C against hgemm_nt on the gathered A", tc->name);
        expect_bits(rs, what, C, ldc, want, ldc, M, n);
        free(want);
    }
    barrier(w);
    HGEMM_CHECK_CUDA(cudaFree(A_ref));
    /* In the order of allocation on every rank: freeing is collective. */
    case_free(rs, ctx, full_win, full_own);
    if (!tc->in_place) case_free(rs, ctx, own_win, own_own);
    HGEMM_CHECK_CUDA(cudaFree(B));
    HGEMM_CHECK_CUDA(cudaFree(C));
    HGEMM_CHECK_CUDA(cudaFree(C_ref));
    HGEMM_CHECK_CUDA(cudaFree(C0));
}

static void body_allgather(world *w, rank_state *rs) {
    const ag_case cases[] = {
        {"ag even, 1 chunk", {256, 256}, 1, HGEMM_KERNEL_V5, 1.0f, 0.0f, 0, 0, 0, WIN_NONE, 0},
        {"ag even, 4 chunks, beta, in place", {256, 256}, 4, HGEMM_KERNEL_V5, 0.75f, 0.5f, 1, 0, 0, WIN_NONE, 0},
        {"ag ragged 300/77, 3 chunks", {300, 77}, 3, HGEMM_KERNEL_V5, 1.0f, 0.0f, 0, 0, 0, WIN_NONE, 0},
        {"ag rank 0 empty, 2 chunks", {0, 129}, 2, HGEMM_KERNEL_V5, 1.0f, 0.0f, 0, 0, 0, WIN_NONE, 0},
        {"ag ragged, more chunks than rows", {5, 3}, 8, HGEMM_KERNEL_V5, 1.0f, 0.0f, 0, 0, 0, WIN_NONE, 0},
        {"ag ragged 301/211, 5 chunks, local check", {301, 211}, 5, HGEMM_KERNEL_V5, 1.0f, 0.0f, 0, 1, 0, WIN_NONE, 0},
        {"ag auto, ragged 301/211, 5 chunks, beta", {301, 211}, 5, HGEMM_KERNEL_AUTO, 1.0f, 1.0f, 0, 0, 0, WIN_NONE, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_ag_case(w, rs, &cases[i]);
}

/* ---- (b) GEMM + reduce-scatter ----------------------------------------------------- */

typedef struct rs_case {
    const char *name;
    int64_t counts[MAX_RANKS];   /* rows of the result each rank receives */
    int64_t k_split[MAX_RANKS];  /* each rank's K shard (multiples of 8: they are column views) */
    int64_t n;
    int chunks;
    hgemm_kernel kernel;
    float alpha, beta;
    int ldc_pad;                 /* 0: ldc == n, the sum lands in C directly */
    int local_check;
    windows win;                 /* where the workspace comes from */
    int want_ce;
} rs_case;

static void run_rs_case(world *w, rank_state *rs, const rs_case *tc) {
    const int me = rs->rank, nranks = w->nranks;
    int64_t M = 0, first = 0, K = 0, k_first = 0;
    for (int r = 0; r < nranks; r++) {
        if (r == me) {
            first = M;
            k_first = K;
        }
        M += tc->counts[r];
        K += tc->k_split[r];
    }
    const int64_t m_me = tc->counts[me], k_me = tc->k_split[me], n = tc->n;
    const int64_t lda = K + AG_PAD, ldb = K + AG_PAD, ldc = n + tc->ldc_pad;
    const int64_t ldp = (n + 7) / 8 * 8; /* the reference partial's leading dimension */
    const float scale = hgemm_check_unit_scale(K);
    /* The whole A and B, the same on every rank; this rank's K shard is a column view. */
    void *A = dev_alloc((size_t)M * lda * 2), *B = dev_alloc((size_t)n * ldb * 2);
    void *C = dev_alloc((size_t)(m_me ? m_me : 1) * ldc * 2), *C0 = dev_alloc((size_t)(m_me ? m_me : 1) * ldc * 2);
    void *P = dev_alloc((size_t)M * ldp * 2);
    hgemm_nccl_ctx *ctx = tc->local_check ? rs->local : rs->agree;
    const size_t ws_bytes = tc->win != WIN_NONE ? hgemm_nccl_gemm_reducescatter_ce_workspace(nranks, M, n)
                                                : hgemm_nccl_gemm_reducescatter_workspace(M, n);
    void *ws_win = NULL, *ws_own = NULL;
    void *ws = case_alloc(rs, ctx, tc->win, ws_bytes, &ws_win, &ws_own);
    hgemm_check_fill_random(A, M, K, lda, SEED_A, scale, rs->stream);
    hgemm_check_fill_random(B, n, K, ldb, SEED_B, scale, rs->stream);
    const void *A_me = (const char *)A + k_first * 2, *B_me = (const char *)B + k_first * 2;
    hgemm_check_fill_pattern(C0, m_me, ldc, ldc, HGEMM_CHECK_SENTINEL, rs->stream);
    if (tc->beta != 0.0f)
        hgemm_check_fill_random(C0, m_me, n, ldc, SEED_C + (uint64_t)me, 1.0f, rs->stream);
    else
        hgemm_check_fill_pattern(C0, m_me, n, ldc, HGEMM_CHECK_NAN, rs->stream);
    HGEMM_CHECK_CUDA(cudaMemcpyAsync(C, C0, (size_t)(m_me ? m_me : 1) * ldc * 2, cudaMemcpyDeviceToDevice, rs->stream));
    hgemm_check_fill_pattern(ws, (int64_t)(ws_bytes / 2), 1, 1, HGEMM_CHECK_NAN, rs->stream);

    /* This rank's partial as the library should compute it: all rows with
     * beta 0, then its own rows again from beta * C0. */
    hgemm_status hs = hgemm_nt(HGEMM_KERNEL_V5, M, n, k_me, tc->alpha, A_me, lda, B_me, ldb, 0.0f, P, ldp, rs->stream);
    if (hs == HGEMM_SUCCESS && tc->beta != 0.0f && m_me) {
        void *own = (char *)P + first * ldp * 2;
        HGEMM_CHECK_CUDA(cudaMemcpy2DAsync(own, (size_t)ldp * 2, C0, (size_t)ldc * 2, (size_t)n * 2, (size_t)m_me,
                                           cudaMemcpyDeviceToDevice, rs->stream));
        hs = hgemm_nt(HGEMM_KERNEL_V5, m_me, n, k_me, tc->alpha, (const char *)A_me + first * lda * 2, lda, B_me,
                      ldb, tc->beta, own, ldp, rs->stream);
    }
    if (hs != HGEMM_SUCCESS) FAIL(rs, "%s: reference partial: %s", tc->name, hgemm_status_string(hs));
    HGEMM_CHECK_CUDA(cudaStreamSynchronize(rs->stream));
    w->partials[me] = host_copy(P, M, ldp);
    barrier(w);

    hgemm_nccl_status st = hgemm_nccl_gemm_reducescatter(ctx, tc->kernel, tc->chunks, tc->counts, n, k_me,
                                                         tc->alpha, A_me, lda, B_me, ldb, tc->beta, C, ldc,
                                                         ws, ws_bytes, rs->stream);
    EXPECT_STATUS(rs, st, HGEMM_NCCL_SUCCESS, tc->name);
    expect_path(rs, tc->name, ctx, tc->want_ce);
    HGEMM_CHECK_CUDA(cudaStreamSynchronize(rs->stream));

    char what[WHY_LEN];
    snprintf(what, sizeof what, "%s: C padding", tc->name);
    expect_padding(rs, what, C, m_me, n, ldc);
    /* Where the own rows' GEMM adds the received partial itself (copy
     * engines, 2 ranks, beta 0: chunked swaps, or the split of the own rows
     * at 1 chunk, which starts at 373 rows of V5's 11/16 cut; the cases have
     * at most 264 or at least 700), the sum is alpha * P (fp32) + the
     * peer's fp16 partial, rounded once: one rounding fewer than the fp16 sum
     * of the two partials, so held to fp64 rather than to those bits. */
    const int fused = tc->want_ce && nranks == 2 && tc->beta == 0.0f && (tc->chunks > 1 || m_me >= 373);
    if (tc->kernel == HGEMM_KERNEL_AUTO || fused) {
        snprintf(what, sizeof what, "%s: C against fp64", tc->name);
        expect_close(rs, what, C, ldc, (const char *)A + first * lda * 2, lda, B, ldb, C0, m_me, n, K,
                     tc->alpha, tc->beta);
    } else if (nranks <= 2) {
        /* One fp16 addition per element: round_fp16(P0 + P1), exactly. */
        uint16_t *want = malloc((size_t)(m_me ? m_me : 1) * (size_t)ldp * 2);
        if (want == NULL) exit(1);
        for (int64_t i = 0; i < m_me; i++)
            for (int64_t j = 0; j < n; j++) {
                double sum = 0.0;
                for (int r = 0; r < nranks; r++)
                    sum += hgemm_check_f16_to_f32(w->partials[r][(first + i) * ldp + j]);
                want[i * ldp + j] = nranks == 1 ? w->partials[0][(first + i) * ldp + j] : f16_from_double(sum);
            }
        snprintf(what, sizeof what, "%s: C against the fp16 sum of the partials", tc->name);
        expect_bits(rs, what, C, ldc, want, ldp, m_me, n);
        free(want);
    }
    barrier(w);
    free(w->partials[me]);
    w->partials[me] = NULL;
    HGEMM_CHECK_CUDA(cudaFree(A));
    HGEMM_CHECK_CUDA(cudaFree(B));
    HGEMM_CHECK_CUDA(cudaFree(C));
    HGEMM_CHECK_CUDA(cudaFree(C0));
    HGEMM_CHECK_CUDA(cudaFree(P));
    case_free(rs, ctx, ws_win, ws_own);
}

static void body_reducescatter(world *w, rank_state *rs) {
    const rs_case cases[] = {
        {"rs even, 1 chunk, direct", {256, 256}, {192, 192}, 256, 1, HGEMM_KERNEL_V5, 1.0f, 0.0f, 0, 0, WIN_NONE, 0},
        {"rs even, 4 chunks, beta, ldc padded", {256, 256}, {256, 128}, 256, 4, HGEMM_KERNEL_V5, 0.75f, 0.5f, 8, 0, WIN_NONE, 0},
        {"rs ragged 300/77, n 100, 3 chunks", {300, 77}, {128, 256}, 100, 3, HGEMM_KERNEL_V5, 1.0f, 0.0f, 4, 0, WIN_NONE, 0},
        {"rs rank 0 receives nothing, rank 1 has no K", {0, 129}, {384, 0}, 136, 2, HGEMM_KERNEL_V5, 1.0f, 0.0f, 0, 0, WIN_NONE, 0},
        {"rs ragged 301/211, 5 chunks, local check", {301, 211}, {200, 184}, 128, 5, HGEMM_KERNEL_V5, 1.0f, 0.0f, 0, 1, WIN_NONE, 0},
        {"rs auto, ragged 301/211, 5 chunks, beta", {301, 211}, {200, 184}, 128, 5, HGEMM_KERNEL_AUTO, 1.0f, 1.0f, 8, 0, WIN_NONE, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_rs_case(w, rs, &cases[i]);
}

/* ---- N = 1 ---------------------------------------------------------------------------- */

static void body_single(world *w, rank_state *rs) {
    const ag_case ag[] = {
        {"single ag, 3 chunks", {333}, 3, HGEMM_KERNEL_V5, 1.0f, 0.0f, 0, 0, 0, WIN_NONE, 0},
        {"single ag, in place, beta, local check", {128}, 2, HGEMM_KERNEL_V5, 1.0f, 0.5f, 1, 1, 0, WIN_NONE, 0},
        {"single ag auto", {200}, 1, HGEMM_KERNEL_AUTO, 1.0f, 0.0f, 0, 0, 0, WIN_NONE, 0},
    };
    for (size_t i = 0; i < sizeof ag / sizeof ag[0]; i++) run_ag_case(w, rs, &ag[i]);
    const rs_case rsc[] = {
        {"single rs, 3 chunks, beta", {333}, {256}, 136, 3, HGEMM_KERNEL_V5, 1.0f, 0.5f, 8, 0, WIN_NONE, 0},
        {"single rs, direct, local check", {128}, {128}, 128, 2, HGEMM_KERNEL_V5, 1.0f, 0.0f, 0, 1, WIN_NONE, 0},
        {"single rs auto", {200}, {192}, 128, 1, HGEMM_KERNEL_AUTO, 1.0f, 0.0f, 0, 0, WIN_NONE, 0},
    };
    for (size_t i = 0; i < sizeof rsc / sizeof rsc[0]; i++) run_rs_case(w, rs, &rsc[i]);
}

/* ---- bad arguments ---------------------------------------------------------------------- */

enum { E_ROWS = 64, E_K = 64, E_N = 64 };

typedef struct err_bufs {
    void *A_own, *A_full, *B, *C, *ws;
    size_t ws_bytes;
} err_bufs;

/* One (a) call in which rank `who` (or every rank, -1) changes one argument. */
typedef enum twist {
    NONE, NULL_A, MISALIGNED_C, COUNTS, CHUNKS, K_DIFFERS, CHUNKS_ZERO, HOST_C, C_OVERLAPS_A
} twist;

static hgemm_nccl_status ag_twisted(rank_state *rs, hgemm_nccl_ctx *ctx, const err_bufs *b, twist t,
                                    int who) {
    const int mine = who < 0 || who == rs->rank;
    int64_t counts[MAX_RANKS];
    for (int r = 0; r < MAX_RANKS; r++) counts[r] = E_ROWS;
    int chunks = 2;
    int64_t k = E_K;
    const void *A_own = b->A_own;
    void *C = b->C;
    static _Alignas(16) uint16_t host_c[(size_t)MAX_RANKS * E_ROWS * E_N];
    if (mine) switch (t) {
        case NULL_A: A_own = NULL; break;
        case MISALIGNED_C: C = (char *)C + 2; break;
        case COUNTS: counts[0] = E_ROWS - 8; break;
        case CHUNKS: chunks = 3; break;
        case K_DIFFERS: k = E_K - 8; break;
        case CHUNKS_ZERO: chunks = 0; break;
        case HOST_C: C = host_c; break;
        case C_OVERLAPS_A: C = b->A_full; break;
        case NONE: break;
        }
    return hgemm_nccl_allgather_gemm(ctx, HGEMM_KERNEL_V5, chunks, counts, E_N, k, 1.0f, A_own, b->A_full, E_K,
                                     b->B, E_K, 0.0f, C, E_N, rs->stream);
}

static void body_errors(world *w, rank_state *rs) {
    const int nranks = w->nranks;
    err_bufs b;
    b.A_own = dev_alloc((size_t)E_ROWS * E_K * 2);
    b.A_full = dev_alloc((size_t)nranks * E_ROWS * E_K * 2);
    b.B = dev_alloc((size_t)E_N * E_K * 2);
    b.C = dev_alloc((size_t)nranks * E_ROWS * E_N * 2 + 16);
    b.ws_bytes = hgemm_nccl_gemm_reducescatter_workspace((int64_t)nranks * E_ROWS, E_N);
    b.ws = dev_alloc(b.ws_bytes);
    hgemm_check_fill_random(b.A_own, E_ROWS, E_K, E_K, SEED_A + (uint64_t)rs->rank, hgemm_check_unit_scale(E_K), rs->stream);
    hgemm_check_fill_random(b.B, E_N, E_K, E_K, SEED_B, hgemm_check_unit_scale(E_K), rs->stream);
    HGEMM_CHECK_CUDA(cudaStreamSynchronize(rs->stream));

    /* Under AGREE every rank returns the same status, whichever rank erred. */
    const struct {
        twist t;
        int who;
        hgemm_nccl_status want;
        int failed_rank;
        const char *what;
    } agree_cases[] = {
        {NONE, -1, HGEMM_NCCL_SUCCESS, -1, "valid call"},
        {NULL_A, 1, HGEMM_NCCL_ERROR_INVALID_VALUE, 1, "rank 1 passes a NULL A"},
        {MISALIGNED_C, 0, HGEMM_NCCL_ERROR_MISALIGNED, 0, "rank 0 passes a misaligned C"},
        {HOST_C, 1, HGEMM_NCCL_ERROR_INVALID_VALUE, 1, "rank 1 passes host memory as C"},
        {C_OVERLAPS_A, 0, HGEMM_NCCL_ERROR_INVALID_VALUE, 0, "rank 0's C overlaps its gathered A"},
        {COUNTS, 1, HGEMM_NCCL_ERROR_MISMATCH, -1, "rank 1 disagrees on the row counts"},
        {CHUNKS, 0, HGEMM_NCCL_ERROR_MISMATCH, -1, "rank 0 disagrees on the chunk count"},
        {K_DIFFERS, 1, HGEMM_NCCL_ERROR_MISMATCH, -1, "rank 1 disagrees on k"},
        {CHUNKS_ZERO, -1, HGEMM_NCCL_ERROR_INVALID_VALUE, 0, "every rank passes 0 chunks"},
        {NONE, -1, HGEMM_NCCL_SUCCESS, -1, "valid call after the refusals"},
    };
    for (size_t i = 0; i < sizeof agree_cases / sizeof agree_cases[0]; i++) {
        barrier(w);
        hgemm_nccl_status st = ag_twisted(rs, rs->agree, &b, agree_cases[i].t, agree_cases[i].who);
        EXPECT_STATUS(rs, st, agree_cases[i].want, agree_cases[i].what);
        if (hgemm_nccl_failed_rank(rs->agree) != agree_cases[i].failed_rank)
            FAIL(rs, "%s: failed rank %d, want %d", agree_cases[i].what, hgemm_nccl_failed_rank(rs->agree),
                 agree_cases[i].failed_rank);
        HGEMM_CHECK_CUDA(cudaStreamSynchronize(rs->stream));
    }

    /* (b) under AGREE: rank 1's workspace is too small. */
    barrier(w);
    int64_t counts[MAX_RANKS];
    for (int r = 0; r < MAX_RANKS; r++) counts[r] = E_ROWS;
    hgemm_nccl_status st = hgemm_nccl_gemm_reducescatter(rs->agree, HGEMM_KERNEL_V5, 2, counts, E_N, E_K, 1.0f,
                                                         b.A_full, E_K, b.B, E_K, 0.0f, b.C, E_N, b.ws,
                                                         rs->rank == 1 ? b.ws_bytes - 16 : b.ws_bytes, rs->stream);
    EXPECT_STATUS(rs, st, HGEMM_NCCL_ERROR_INVALID_VALUE, "rs: rank 1's workspace too small");
    HGEMM_CHECK_CUDA(cudaStreamSynchronize(rs->stream));

    /* Under LOCAL, a bad uniform argument is refused alike without any exchange. */
    barrier(w);
    st = ag_twisted(rs, rs->local, &b, CHUNKS_ZERO, -1);
    EXPECT_STATUS(rs, st, HGEMM_NCCL_ERROR_INVALID_VALUE, "local check: 0 chunks everywhere");
    st = ag_twisted(rs, NULL, &b, NONE, -1);
    EXPECT_STATUS(rs, st, HGEMM_NCCL_ERROR_INVALID_VALUE, "NULL context");

    /* Contexts of different check modes on the ranks: refused at creation. */
    barrier(w);
    hgemm_nccl_config mixed = {rs->rank == 0 ? HGEMM_NCCL_CHECK_AGREE : HGEMM_NCCL_CHECK_LOCAL, 0.0, 0, 0};
    hgemm_nccl_ctx *odd = NULL;
    st = hgemm_nccl_ctx_create(&odd, rs->comm, &mixed);
    EXPECT_STATUS(rs, st, HGEMM_NCCL_ERROR_MISMATCH, "contexts of different check modes");
    if (odd != NULL) FAIL(rs, "a refused context was returned");

    /* A negative GEMM SM target: refused at creation, by every rank alike. */
    barrier(w);
    hgemm_nccl_config negative = {HGEMM_NCCL_CHECK_AGREE, 0.0, -1, 0};
    st = hgemm_nccl_ctx_create(&odd, rs->comm, &negative);
    EXPECT_STATUS(rs, st, HGEMM_NCCL_ERROR_INVALID_VALUE, "a negative gemm_sm_count");
    if (odd != NULL) FAIL(rs, "a refused context was returned");

    /* A rank that does not come: the other gives up after its timeout. Rank 1
     * then joins late with a bad argument, so that the pending agreement
     * completes (refused) and nobody is left waiting. */
    barrier(w);
    hgemm_nccl_config quick = {HGEMM_NCCL_CHECK_AGREE, TIMEOUT_TEST_S, 0, 0};
    hgemm_nccl_ctx *ctx = NULL;
    st = hgemm_nccl_ctx_create(&ctx, rs->comm, &quick);
    EXPECT_STATUS(rs, st, HGEMM_NCCL_SUCCESS, "context with a short timeout");
    barrier(w);
    if (ctx != NULL && rs->rank == 0) {
        st = ag_twisted(rs, ctx, &b, NONE, -1);
        EXPECT_STATUS(rs, st, HGEMM_NCCL_ERROR_TIMEOUT, "rank 0 alone");
        st = ag_twisted(rs, ctx, &b, NONE, -1);
        EXPECT_STATUS(rs, st, HGEMM_NCCL_ERROR_TIMEOUT, "a context that timed out stays refused");
    }
    barrier(w);
    if (ctx != NULL && rs->rank != 0) {
        /* Same uniform arguments (so no mismatch), a NULL A of its own. */
        st = ag_twisted(rs, ctx, &b, NULL_A, -1);
        EXPECT_STATUS(rs, st, HGEMM_NCCL_ERROR_INVALID_VALUE, "late rank with a bad argument");
    }
    EXPECT_STATUS(rs, hgemm_nccl_ctx_destroy(ctx), HGEMM_NCCL_SUCCESS, "destroying the timed-out context");
    barrier(w);
    /* The communicator is still good. */
    st = ag_twisted(rs, rs->agree, &b, NONE, -1);
    EXPECT_STATUS(rs, st, HGEMM_NCCL_SUCCESS, "valid call after the timeout");
    HGEMM_CHECK_CUDA(cudaStreamSynchronize(rs->stream));

    HGEMM_CHECK_CUDA(cudaFree(b.A_own));
    HGEMM_CHECK_CUDA(cudaFree(b.A_full));
    HGEMM_CHECK_CUDA(cudaFree(b.B));
    HGEMM_CHECK_CUDA(cudaFree(b.C));
    HGEMM_CHECK_CUDA(cudaFree(b.ws));
}

/* ---- copy engines (NCCL_CTA_POLICY_ZERO) ----------------------------------------------- */

/* hgemm_nccl_mem_alloc's and _free's statuses, the same on every rank (AGREE). */
static void mem_errors(world *w, rank_state *rs) {
    hgemm_nccl_ctx *ctx = rs->agree;
    const int one = rs->rank == 1;
    enum { PAGE = 4096 };
    void *p = &p; /* set to NULL by every refusal */
    barrier(w);
    EXPECT_STATUS(rs, hgemm_nccl_mem_alloc(ctx, 0, &p), HGEMM_NCCL_ERROR_INVALID_VALUE, "mem_alloc of 0 bytes");
    if (p != NULL) FAIL(rs, "a refused mem_alloc left *ptr set");
    EXPECT_STATUS(rs, hgemm_nccl_mem_alloc(ctx, one ? 0 : PAGE, &p), HGEMM_NCCL_ERROR_INVALID_VALUE,
                  "rank 1 asks for 0 bytes");
    if (hgemm_nccl_failed_rank(ctx) != 1) FAIL(rs, "mem_alloc: failed rank %d, want 1", hgemm_nccl_failed_rank(ctx));
    EXPECT_STATUS(rs, hgemm_nccl_mem_alloc(ctx, one ? 3 * PAGE : PAGE, &p), HGEMM_NCCL_ERROR_MISMATCH,
                  "ranks ask for different sizes");
    EXPECT_STATUS(rs, hgemm_nccl_mem_alloc(ctx, PAGE, NULL), HGEMM_NCCL_ERROR_INVALID_VALUE, "mem_alloc into NULL");
    void *x = NULL, *y = NULL;
    EXPECT_STATUS(rs, hgemm_nccl_mem_alloc(ctx, 1000, &x), HGEMM_NCCL_SUCCESS, "mem_alloc x");
    EXPECT_STATUS(rs, hgemm_nccl_mem_alloc(ctx, 1000, &y), HGEMM_NCCL_SUCCESS, "mem_alloc y");
    if (x == NULL || y == NULL || ((uintptr_t)x | (uintptr_t)y) % 16) FAIL(rs, "mem_alloc: %p, %p", x, y);
    EXPECT_STATUS(rs, hgemm_nccl_mem_free(ctx, one ? y : x), HGEMM_NCCL_ERROR_MISMATCH, "ranks free different buffers");
    EXPECT_STATUS(rs, hgemm_nccl_mem_free(ctx, NULL), HGEMM_NCCL_ERROR_INVALID_VALUE, "mem_free(NULL)");
    EXPECT_STATUS(rs, hgemm_nccl_mem_free(ctx, (char *)x + 16), HGEMM_NCCL_ERROR_INVALID_VALUE,
                  "mem_free inside a buffer");
    void *plain = dev_alloc(PAGE);
    EXPECT_STATUS(rs, hgemm_nccl_mem_free(ctx, plain), HGEMM_NCCL_ERROR_INVALID_VALUE, "mem_free of cudaMalloc memory");
    HGEMM_CHECK_CUDA(cudaFree(plain));
    /* Another context does not know them (LOCAL: no exchange, each refuses alike). */
    EXPECT_STATUS(rs, hgemm_nccl_mem_free(rs->local, x), HGEMM_NCCL_ERROR_INVALID_VALUE, "mem_free on another context");
    EXPECT_STATUS(rs, hgemm_nccl_mem_free(ctx, x), HGEMM_NCCL_SUCCESS, "mem_free x");
    EXPECT_STATUS(rs, hgemm_nccl_mem_free(ctx, x), HGEMM_NCCL_ERROR_INVALID_VALUE, "mem_free x twice");
    EXPECT_STATUS(rs, hgemm_nccl_mem_free(ctx, y), HGEMM_NCCL_SUCCESS, "mem_free y");
    /* The table holds HGEMM_NCCL_MAX_MEM buffers. */
    void *many[HGEMM_NCCL_MAX_MEM];
    for (int i = 0; i < HGEMM_NCCL_MAX_MEM; i++)
        EXPECT_STATUS(rs, hgemm_nccl_mem_alloc(ctx, PAGE, &many[i]), HGEMM_NCCL_SUCCESS, "mem_alloc up to the limit");
    EXPECT_STATUS(rs, hgemm_nccl_mem_alloc(ctx, PAGE, &p), HGEMM_NCCL_ERROR_INVALID_VALUE, "mem_alloc past the limit");
    for (int i = 0; i < HGEMM_NCCL_MAX_MEM; i++)
        EXPECT_STATUS(rs, hgemm_nccl_mem_free(ctx, many[i]), HGEMM_NCCL_SUCCESS, "mem_free down from the limit");

    /* copy_engine: 0 or 1, the same on every rank. */
    barrier(w);
    hgemm_nccl_ctx *odd = NULL;
    hgemm_nccl_config two = {HGEMM_NCCL_CHECK_AGREE, 0.0, 0, 2};
    EXPECT_STATUS(rs, hgemm_nccl_ctx_create(&odd, rs->comm, &two), HGEMM_NCCL_ERROR_INVALID_VALUE, "copy_engine 2");
    hgemm_nccl_config mixed = {HGEMM_NCCL_CHECK_AGREE, 0.0, 0, one};
    EXPECT_STATUS(rs, hgemm_nccl_ctx_create(&odd, rs->comm, &mixed), HGEMM_NCCL_ERROR_MISMATCH,
                  "copy_engine set on one rank only");
    if (odd != NULL) FAIL(rs, "a refused context was returned");
}

static void body_copyengine(world *w, rank_state *rs) {
    /* name, counts, chunks, kernel, alpha, beta, in place, local, dense, windows, copy-engine path */
    const ag_case ag[] = {
        {"ce ag", {256, 256}, 1, HGEMM_KERNEL_V5, 1.0f, 0.0f, 0, 0, 1, WIN_ALL, 1},
        {"ce ag, in place, beta", {256, 256}, 1, HGEMM_KERNEL_V5, 0.75f, 0.5f, 1, 0, 1, WIN_ALL, 1},
        {"ce ag, local check", {264, 264}, 1, HGEMM_KERNEL_V5, 1.0f, 0.0f, 1, 1, 1, WIN_ALL, 1},
        {"ce ag auto, beta", {520, 520}, 1, HGEMM_KERNEL_AUTO, 1.0f, 1.0f, 0, 0, 1, WIN_ALL, 1},
        {"ce ag, ragged: kernel path", {300, 77}, 1, HGEMM_KERNEL_V5, 1.0f, 0.0f, 0, 0, 1, WIN_ALL, 0},
        {"ce ag, 2 chunks: kernel path", {256, 256}, 2, HGEMM_KERNEL_V5, 1.0f, 0.5f, 1, 0, 1, WIN_ALL, 0},
        {"ce ag, lda > k: kernel path", {256, 256}, 1, HGEMM_KERNEL_V5, 1.0f, 0.0f, 0, 0, 0, WIN_ALL, 0},
        {"ce ag, cudaMalloc: kernel path", {256, 256}, 1, HGEMM_KERNEL_V5, 1.0f, 0.0f, 0, 0, 1, WIN_NONE, 0},
        {"ce ag, rank 1 not in windows: all on the kernel path", {256, 256}, 1, HGEMM_KERNEL_V5, 1.0f, 0.0f, 0, 0,
         1, WIN_RANK0, 0},
        {"ce ag, offsets differ: all on the kernel path", {256, 256}, 1, HGEMM_KERNEL_V5, 1.0f, 0.0f, 0, 0, 1,
         WIN_SHIFTED, 0},
    };
    for (size_t i = 0; i < sizeof ag / sizeof ag[0]; i++) run_ag_case(w, rs, &ag[i]);
    /* name, counts, k split, n, chunks, kernel, alpha, beta, ldc pad, local, windows, copy-engine path */
    const rs_case rsc[] = {
        {"ce rs, beta, ldc padded", {256, 256}, {192, 192}, 256, 1, HGEMM_KERNEL_V5, 0.75f, 0.5f, 8, 0, WIN_ALL, 1},
        {"ce rs, n 100", {256, 256}, {128, 256}, 100, 1, HGEMM_KERNEL_V5, 1.0f, 0.0f, 4, 0, WIN_ALL, 1},
        {"ce rs, direct, rank 1 has no K", {128, 128}, {384, 0}, 136, 1, HGEMM_KERNEL_V5, 1.0f, 0.0f, 0, 0, WIN_ALL,
         1},
        {"ce rs, local check", {200, 200}, {200, 184}, 128, 1, HGEMM_KERNEL_V5, 1.0f, 0.0f, 0, 1, WIN_ALL, 1},
        {"ce rs auto, beta", {301, 301}, {200, 184}, 128, 1, HGEMM_KERNEL_AUTO, 1.0f, 1.0f, 8, 0, WIN_ALL, 1},
        {"ce rs, ragged: kernel path", {300, 77}, {128, 256}, 100, 1, HGEMM_KERNEL_V5, 1.0f, 0.5f, 4, 0, WIN_ALL, 0},
        /* chunked swaps on 2 ranks: beta 0 lets the own rows' GEMM add the
         * received partial (one rounding fewer: held to fp64, not bitwise) */
        {"ce rs auto, 3 chunks, the sum in the GEMM", {256, 256}, {192, 192}, 256, 3, HGEMM_KERNEL_AUTO, 1.0f, 0.0f,
         0, 0, WIN_ALL, 1},
        {"ce rs auto, more chunks than rows", {5, 5}, {64, 72}, 64, 8, HGEMM_KERNEL_AUTO, 1.0f, 0.0f, 8, 0, WIN_ALL,
         1},
        {"ce rs auto, 2 chunks, local check", {264, 264}, {200, 184}, 136, 2, HGEMM_KERNEL_AUTO, 0.5f, 0.0f, 0, 1,
         WIN_ALL, 1},
        /* 1 chunk, beta 0, enough rows: the own rows in two parts, the
         * second adding the received partial inside its GEMM */
        {"ce rs auto, 1024 rows, the sum split", {1024, 1024}, {192, 200}, 264, 1, HGEMM_KERNEL_AUTO, 1.0f, 0.0f, 8,
         0, WIN_ALL, 1},
        {"ce rs auto, 700 rows, the sum split, local check", {700, 700}, {128, 136}, 100, 1, HGEMM_KERNEL_AUTO, 0.5f,
         0.0f, 4, 1, WIN_ALL, 1},
        /* nothing to multiply on a rank (no K, or alpha 0): its own rows'
         * GEMM is C = 1 * the received partial, read as its C input */
        {"ce rs auto, 3 chunks, rank 1 has no K: the sum in the GEMM", {256, 256}, {192, 0}, 256, 3,
         HGEMM_KERNEL_AUTO, 1.0f, 0.0f, 0, 0, WIN_ALL, 1},
        {"ce rs auto, 1024 rows, rank 1 has no K: the sum split", {1024, 1024}, {192, 0}, 264, 1,
         HGEMM_KERNEL_AUTO, 1.0f, 0.0f, 8, 0, WIN_ALL, 1},
        {"ce rs auto, alpha 0, 2 chunks", {256, 256}, {192, 192}, 256, 2, HGEMM_KERNEL_AUTO, 0.0f, 0.0f, 0, 0,
         WIN_ALL, 1},
        /* V5 reads no separate C input: the received partial is copied into
         * C_local first (chunked, and the split at 1 chunk) */
        {"ce rs v5, 2 chunks, the sum in the GEMM by a copy", {256, 256}, {192, 192}, 264, 2, HGEMM_KERNEL_V5, 1.0f,
         0.0f, 8, 0, WIN_ALL, 1},
        {"ce rs v5, 1024 rows, the sum split by a copy", {1024, 1024}, {192, 200}, 264, 1, HGEMM_KERNEL_V5, 1.0f,
         0.0f, 0, 0, WIN_ALL, 1},
        /* beta != 0: the own rows take it, the add kernel sums: bitwise */
        {"ce rs, 4 chunks, beta", {256, 256}, {192, 192}, 256, 4, HGEMM_KERNEL_V5, 0.75f, 0.5f, 8, 0, WIN_ALL, 1},
        {"ce rs, cudaMalloc: kernel path", {256, 256}, {192, 192}, 256, 1, HGEMM_KERNEL_V5, 1.0f, 0.0f, 0, 0,
         WIN_NONE, 0},
        {"ce rs, rank 1 not in windows: all on the kernel path", {256, 256}, {192, 192}, 256, 1, HGEMM_KERNEL_V5,
         1.0f, 0.0f, 0, 0, WIN_RANK0, 0},
        {"ce rs, offsets differ: all on the kernel path", {256, 256}, {192, 192}, 256, 1, HGEMM_KERNEL_V5, 1.0f,
         0.0f, 8, 0, WIN_SHIFTED, 0},
    };
    for (size_t i = 0; i < sizeof rsc / sizeof rsc[0]; i++) run_rs_case(w, rs, &rsc[i]);
    mem_errors(w, rs);
}

/* ---- main ----------------------------------------------------------------------------- */

static void *rank_main(void *arg) {
    rank_state *rs = arg;
    world *w = rs->w;
    HGEMM_CHECK_CUDA(cudaSetDevice(rs->device));
    HGEMM_CHECK_CUDA(cudaStreamCreateWithFlags(&rs->stream, cudaStreamNonBlocking));
    /* The LOCAL context also caps its GEMMs' SMs (the overlap's setting), so
     * every test run through it checks that path too. */
    hgemm_nccl_config agree = {HGEMM_NCCL_CHECK_AGREE, 0.0, 0, w->copy_engine};
    hgemm_nccl_config local = {HGEMM_NCCL_CHECK_LOCAL, 0.0, LOCAL_GEMM_SMS, w->copy_engine};
    hgemm_nccl_status st = hgemm_nccl_ctx_create(&rs->agree, rs->comm, &agree);
    EXPECT_STATUS(rs, st, HGEMM_NCCL_SUCCESS, "create (agree)");
    st = hgemm_nccl_ctx_create(&rs->local, rs->comm, &local);
    EXPECT_STATUS(rs, st, HGEMM_NCCL_SUCCESS, "create (local)");
    if (rs->agree && rs->local) w->body(w, rs);
    EXPECT_STATUS(rs, hgemm_nccl_ctx_destroy(rs->agree), HGEMM_NCCL_SUCCESS, "destroy (agree)");
    EXPECT_STATUS(rs, hgemm_nccl_ctx_destroy(rs->local), HGEMM_NCCL_SUCCESS, "destroy (local)");
    HGEMM_CHECK_CUDA(cudaStreamDestroy(rs->stream));
    return NULL;
}

/* How many of the first devices are sm_90; the reason in why when fewer than need. */
static int usable_gpus(int need, char *why, size_t why_len) {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(why, why_len, "no CUDA device or driver");
        return 0;
    }
    for (int d = 0; d < count && d < need; d++) {
        HGEMM_CHECK_CUDA(cudaSetDevice(d));
        if (!hgemm_check_sm90_available(why, why_len)) return d;
    }
    if (count < need) snprintf(why, why_len, "%d GPU(s), %d needed", count, need);
    return count < need ? count : need;
}

int main(int argc, char **argv) {
    setenv("NCCL_NVLS_ENABLE", "0", 0); /* NVLink multicast off unless asked for */
    const char *mode = argc > 1 ? argv[1] : "";
    world *w = calloc(1, sizeof *w);
    if (w == NULL) return 1;
    int need = 2;
    if (strcmp(mode, "allgather") == 0) w->body = body_allgather;
    else if (strcmp(mode, "reducescatter") == 0) w->body = body_reducescatter;
    else if (strcmp(mode, "errors") == 0) w->body = body_errors;
    else if (strcmp(mode, "copyengine") == 0) {
        w->body = body_copyengine;
        w->copy_engine = 1;
    } else if (strcmp(mode, "single") == 0) {
        w->body = body_single;
        need = 1;
    } else {
        fprintf(stderr, "usage: %s allgather|reducescatter|single|errors|copyengine\n", argv[0]);
        return 1;
    }
#if NCCL_VERSION_CODE < 22800
    if (w->copy_engine) {
        printf("test_multigpu %s: skipped: NCCL %d has no copy-engine collectives (2.28 on)\n", mode,
               NCCL_VERSION_CODE);
        return EXIT_SKIP;
    }
#endif
    char why[WHY_LEN] = "";
    if (usable_gpus(need, why, sizeof why) < need) {
        printf("test_multigpu %s: skipped: %s\n", mode, why);
        return EXIT_SKIP;
    }
    w->nranks = need;
    int devs[MAX_RANKS];
    ncclComm_t comms[MAX_RANKS];
    for (int r = 0; r < need; r++) devs[r] = r;
    if (w->copy_engine) {
#if NCCL_VERSION_CODE >= 22800
        /* Zero-SM policy: NCCL's copy engines where the buffers allow. */
        ncclUniqueId id;
        CHECK_NCCL(ncclGetUniqueId(&id));
        CHECK_NCCL(ncclGroupStart());
        for (int r = 0; r < need; r++) {
            ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
            cfg.CTAPolicy = NCCL_CTA_POLICY_ZERO;
            HGEMM_CHECK_CUDA(cudaSetDevice(devs[r]));
            CHECK_NCCL(ncclCommInitRankConfig(&comms[r], need, id, r, &cfg));
        }
        CHECK_NCCL(ncclGroupEnd());
#endif
    } else {
        CHECK_NCCL(ncclCommInitAll(comms, need, devs));
    }
    pthread_barrier_init(&w->barrier, NULL, (unsigned)need);
    pthread_t threads[MAX_RANKS];
    for (int r = 0; r < need; r++) {
        w->ranks[r].w = w;
        w->ranks[r].rank = r;
        w->ranks[r].nranks = need;
        w->ranks[r].device = devs[r];
        w->ranks[r].comm = comms[r];
        if (pthread_create(&threads[r], NULL, rank_main, &w->ranks[r]) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            return 1;
        }
    }
    int failures = 0;
    for (int r = 0; r < need; r++) {
        pthread_join(threads[r], NULL);
        failures += w->ranks[r].failures;
    }
    for (int r = 0; r < need; r++) CHECK_NCCL(ncclCommDestroy(comms[r]));
    pthread_barrier_destroy(&w->barrier);
    printf("test_multigpu %s on %d GPU(s): %s (%d failure(s))\n", mode, need, failures ? "FAILED" : "passed",
           failures);
    free(w);
    return failures ? 1 : 0;
}
