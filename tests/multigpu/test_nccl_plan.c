/*
 * test_nccl_plan: libhgemm_nccl's checks, chunking, fingerprints and
 * agreement on the CPU (no GPU, no communicator), the copy-engine path's
 * conditions (uniform arguments, window look-ups, the agreed key), and the
 * public entry points' answers to NULL contexts and communicators, which
 * come before any CUDA or NCCL call. Prints "N passed, N failed" last; exits 1 on any failure.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "hgemm_nccl.h"
#include "plan.h"

static int passed, failed;

#define EXPECT(cond)                                                                \
    do {                                                                            \
        if (cond) {                                                                 \
            passed++;                                                               \
        } else {                                                                    \
            failed++;                                                               \
            fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #cond);      \
        }                                                                           \
    } while (0)

#define EXPECT_STATUS(got, want)                                                            \
    do {                                                                                    \
        hgemm_nccl_status g_ = (got), w_ = (want);                                          \
        if (g_ == w_) {                                                                     \
            passed++;                                                                       \
        } else {                                                                            \
            failed++;                                                                       \
            fprintf(stderr, "%s:%d: FAILED: %s gave %d (%s), want %d (%s)\n", __FILE__,      \
                    __LINE__, #got, (int)g_, hgemm_nccl_status_string(g_), (int)w_,         \
                    hgemm_nccl_status_string(w_));                                          \
        }                                                                                   \
    } while (0)

/* Fake device addresses: the checks only look at their values. */
#define FAKE(addr) ((void *)(uintptr_t)(addr))
enum {
    K = 200, LDA = 208, N_LOCAL = 136, LDB = 208, LDC = 144, RANKS = 2,
    GIB = 1 << 30
};

static void test_pieces(void) {
    const int64_t sizes[] = {0, 1, 7, 64, 77, 300, 16384};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        for (int chunks = 1; chunks <= HGEMM_NCCL_MAX_CHUNKS; chunks++) {
            const int64_t m = sizes[i];
            int ok = hgemm_nccl_piece_lo(0, chunks, m) == 0 && hgemm_nccl_piece_lo(chunks, chunks, m) == m;
            for (int c = 0; c < chunks && ok; c++) {
                const int64_t rows = hgemm_nccl_piece_lo(c + 1, chunks, m) - hgemm_nccl_piece_lo(c, chunks, m);
                /* Balanced: every piece has floor or ceil of m / chunks rows. */
                ok = rows >= m / chunks && rows <= (m + chunks - 1) / chunks;
            }
            if (!ok) fprintf(stderr, "pieces of m=%lld in %d chunks\n", (long long)m, chunks);
            EXPECT(ok);
        }
    }
    const int64_t counts[] = {300, 0, 77};
    int64_t off[3];
    EXPECT(hgemm_nccl_offsets(counts, 3, off) == 377);
    EXPECT(off[0] == 0 && off[1] == 300 && off[2] == 300);
}

static void test_counts(void) {
    const int64_t good[] = {3, 0}, negative[] = {3, -1}, huge[] = {HGEMM_NCCL_MAX_DIM, 1};
    EXPECT_STATUS(hgemm_nccl_check_counts(good, 2), HGEMM_NCCL_SUCCESS);
    EXPECT_STATUS(hgemm_nccl_check_counts(NULL, 2), HGEMM_NCCL_ERROR_INVALID_VALUE);
    EXPECT_STATUS(hgemm_nccl_check_counts(negative, 2), HGEMM_NCCL_ERROR_INVALID_VALUE);
    EXPECT_STATUS(hgemm_nccl_check_counts(huge, 2), HGEMM_NCCL_ERROR_NOT_SUPPORTED);
}

static const int64_t ag_counts[RANKS] = {300, 77};

/* Rank 1's valid arguments: A rows 300..376 of A_gathered, apart from it. */
static hgemm_nccl_ag_args ag_base(void) {
    hgemm_nccl_ag_args a;
    memset(&a, 0, sizeof a);
    a.rank = 1;
    a.nranks = RANKS;
    a.kernel = HGEMM_KERNEL_AUTO;
    a.chunks = 4;
    a.m_counts = ag_counts;
    a.n_local = N_LOCAL;
    a.k = K;
    a.A_local = FAKE(0x100000000ull);
    a.A_gathered = FAKE(0x200000000ull);
    a.lda = LDA;
    a.B_local = FAKE(0x300000000ull);
    a.ldb = LDB;
    a.C_local = FAKE(0x400000000ull);
    a.ldc = LDC;
    return a;
}

static void test_check_ag(void) {
    hgemm_nccl_ag_args a = ag_base();
    EXPECT_STATUS(hgemm_nccl_check_ag(&a), HGEMM_NCCL_SUCCESS);
    a = ag_base(); a.chunks = 0;
    EXPECT_STATUS(hgemm_nccl_check_ag(&a), HGEMM_NCCL_ERROR_INVALID_VALUE);
    a = ag_base(); a.chunks = HGEMM_NCCL_MAX_CHUNKS + 1;
    EXPECT_STATUS(hgemm_nccl_check_ag(&a), HGEMM_NCCL_ERROR_INVALID_VALUE);
    a = ag_base(); a.kernel = (hgemm_kernel)999;
    EXPECT_STATUS(hgemm_nccl_check_ag(&a), HGEMM_NCCL_ERROR_INVALID_VALUE);
    a = ag_base(); a.m_counts = NULL;
    EXPECT_STATUS(hgemm_nccl_check_ag(&a), HGEMM_NCCL_ERROR_INVALID_VALUE);
    a = ag_base(); a.k = -1;
    EXPECT_STATUS(hgemm_nccl_check_ag(&a), HGEMM_NCCL_ERROR_INVALID_VALUE);
    a = ag_base(); a.lda = K - 8;
    EXPECT_STATUS(hgemm_nccl_check_ag(&a), HGEMM_NCCL_ERROR_INVALID_VALUE);
    a = ag_base(); a.ldc = N_LOCAL - 8;
    EXPECT_STATUS(hgemm_nccl_check_ag(&a), HGEMM_NCCL_ERROR_INVALID_VALUE);
    a = ag_base(); a.A_local = NULL;
    EXPECT_STATUS(hgemm_nccl_check_ag(&a), HGEMM_NCCL_ERROR_INVALID_VALUE);
    a = ag_base(); a.C_local = NULL;
    EXPECT_STATUS(hgemm_nccl_check_ag(&a), HGEMM_NCCL_ERROR_INVALID_VALUE);
    /* A rank with no rows may pass NULL for them. */
    static const int64_t none_here[RANKS] = {300, 0};
    a = ag_base(); a.m_counts = none_here; a.A_local = NULL;
    EXPECT_STATUS(hgemm_nccl_check_ag(&a), HGEMM_NCCL_SUCCESS);
    a = ag_base(); a.lda = LDA + 4;
    EXPECT_STATUS(hgemm_nccl_check_ag(&a), HGEMM_NCCL_ERROR_MISALIGNED);
    a = ag_base(); a.B_local = FAKE(0x300000008ull);
    EXPECT_STATUS(hgemm_nccl_check_ag(&a), HGEMM_NCCL_ERROR_MISALIGNED);
    /* The output may not overlap any input, nor the gathered A the weights. */
    a = ag_base(); a.C_local = FAKE(0x200000000ull + 64);
    EXPECT_STATUS(hgemm_nccl_check_ag(&a), HGEMM_NCCL_ERROR_INVALID_VALUE);
    a = ag_base(); a.B_local = FAKE(0x200000000ull + 4096);
    EXPECT_STATUS(hgemm_nccl_check_ag(&a), HGEMM_NCCL_ERROR_INVALID_VALUE);
    /* In place: exactly this rank's rows of the gathered A. */
    a = ag_base(); a.A_local = (const char *)a.A_gathered + (int64_t)300 * LDA * 2;
    EXPECT_STATUS(hgemm_nccl_check_ag(&a), HGEMM_NCCL_SUCCESS);
    a = ag_base(); a.A_local = (const char *)a.A_gathered + (int64_t)299 * LDA * 2;
    EXPECT_STATUS(hgemm_nccl_check_ag(&a), HGEMM_NCCL_ERROR_INVALID_VALUE);
    /* One row of B: its span stays small while its ld is past hgemm's limit. */
    a = ag_base(); a.n_local = 1; a.ldb = (int64_t)1 << 39;
    EXPECT_STATUS(hgemm_nccl_check_ag(&a), HGEMM_NCCL_ERROR_NOT_SUPPORTED);
    a = ag_base(); a.k = 0; a.A_local = NULL; a.A_gathered = NULL; a.B_local = NULL;
    EXPECT_STATUS(hgemm_nccl_check_ag(&a), HGEMM_NCCL_SUCCESS);
    a = ag_base(); a.rank = 2;
    EXPECT_STATUS(hgemm_nccl_check_ag(&a), HGEMM_NCCL_ERROR_INVALID_VALUE);
}

static const int64_t rs_counts[RANKS] = {256, 256};
enum { RS_N = 100, RS_K = 128, RS_LDC = 104 };

static hgemm_nccl_rs_args rs_base(void) {
    hgemm_nccl_rs_args a;
    memset(&a, 0, sizeof a);
    a.rank = 0;
    a.nranks = RANKS;
    a.kernel = HGEMM_KERNEL_V5;
    a.chunks = 3;
    a.m_counts = rs_counts;
    a.n = RS_N;
    a.k_local = RS_K;
    a.A_local = FAKE(0x100000000ull);
    a.lda = RS_K;
    a.B_local = FAKE(0x300000000ull);
    a.ldb = RS_K;
    a.C_local = FAKE(0x400000000ull);
    a.ldc = RS_LDC;
    a.workspace = FAKE(0x500000000ull);
    a.workspace_bytes = hgemm_nccl_gemm_reducescatter_workspace(512, RS_N);
    return a;
}

static void test_check_rs(void) {
    /* n = 100 rounds up to a leading dimension of 104. */
    EXPECT(hgemm_nccl_workspace_ld(RS_N) == 104);
    EXPECT(hgemm_nccl_workspace_ld(1) == 8 && hgemm_nccl_workspace_ld(8) == 8);
    EXPECT(hgemm_nccl_gemm_reducescatter_workspace(512, RS_N) == (size_t)512 * 104 * 2);
    EXPECT(hgemm_nccl_gemm_reducescatter_workspace(-1, RS_N) == 0);
    EXPECT(hgemm_nccl_gemm_reducescatter_workspace(0, RS_N) == 0);
    EXPECT(hgemm_nccl_gemm_reducescatter_workspace(INT64_MAX, INT64_MAX) == 0);
    hgemm_nccl_rs_args a = rs_base();
    EXPECT_STATUS(hgemm_nccl_check_rs(&a), HGEMM_NCCL_SUCCESS);
    a = rs_base(); a.workspace_bytes -= 2;
    EXPECT_STATUS(hgemm_nccl_check_rs(&a), HGEMM_NCCL_ERROR_INVALID_VALUE);
    a = rs_base(); a.workspace = NULL;
    EXPECT_STATUS(hgemm_nccl_check_rs(&a), HGEMM_NCCL_ERROR_INVALID_VALUE);
    a = rs_base(); a.workspace = FAKE(0x500000008ull);
    EXPECT_STATUS(hgemm_nccl_check_rs(&a), HGEMM_NCCL_ERROR_MISALIGNED);
    a = rs_base(); a.workspace = FAKE(0x400000000ull + 1024);
    EXPECT_STATUS(hgemm_nccl_check_rs(&a), HGEMM_NCCL_ERROR_INVALID_VALUE);
    a = rs_base(); a.C_local = FAKE(0x100000000ull + 512);
    EXPECT_STATUS(hgemm_nccl_check_rs(&a), HGEMM_NCCL_ERROR_INVALID_VALUE);
    a = rs_base(); a.ldc = 96;
    EXPECT_STATUS(hgemm_nccl_check_rs(&a), HGEMM_NCCL_ERROR_INVALID_VALUE);
    a = rs_base(); a.ldb = RS_K + 4;
    EXPECT_STATUS(hgemm_nccl_check_rs(&a), HGEMM_NCCL_ERROR_MISALIGNED);
    /* A rank whose K shard is empty passes no A or B. */
    a = rs_base(); a.k_local = 0; a.A_local = NULL; a.B_local = NULL; a.lda = 8; a.ldb = 8;
    EXPECT_STATUS(hgemm_nccl_check_rs(&a), HGEMM_NCCL_SUCCESS);
    a = rs_base(); a.n = -1;
    EXPECT_STATUS(hgemm_nccl_check_rs(&a), HGEMM_NCCL_ERROR_INVALID_VALUE);
    /* n past what hgemm serves: NOT_SUPPORTED, as hgemm_nt says for the same
     * C (its span exists), whatever the workspace, which such an n does not
     * define; a NULL C is still INVALID_VALUE first, as in hgemm_nt. (An
     * empty K shard, so that B's span stays apart from C's.) */
    static const int64_t one_row[RANKS] = {1, 1};
    const int64_t huge = (int64_t)1 << 40;
    EXPECT(hgemm_nt(HGEMM_KERNEL_V5, 1, huge, 0, 1.0f, NULL, 8, NULL, 8, 0.0f, FAKE(0x400000000ull), huge, NULL) ==
           HGEMM_ERROR_NOT_SUPPORTED);
    a = rs_base(); a.m_counts = one_row; a.n = huge; a.ldc = huge;
    a.k_local = 0; a.A_local = NULL; a.B_local = NULL; a.lda = 8; a.ldb = 8;
    EXPECT_STATUS(hgemm_nccl_check_rs(&a), HGEMM_NCCL_ERROR_NOT_SUPPORTED);
    a.workspace = NULL; a.workspace_bytes = 0;
    EXPECT_STATUS(hgemm_nccl_check_rs(&a), HGEMM_NCCL_ERROR_NOT_SUPPORTED);
    a.C_local = NULL;
    EXPECT_STATUS(hgemm_nccl_check_rs(&a), HGEMM_NCCL_ERROR_INVALID_VALUE);
    a = rs_base(); a.n = HGEMM_NCCL_MAX_DIM + 1; a.ldc = HGEMM_NCCL_MAX_DIM + 9;
    a.k_local = 0; a.A_local = NULL; a.B_local = NULL; a.lda = 8; a.ldb = 8;
    EXPECT_STATUS(hgemm_nccl_check_rs(&a), HGEMM_NCCL_ERROR_NOT_SUPPORTED);
    /* a leading dimension of 2^39: NOT_SUPPORTED, the workspace's size aside */
    a = rs_base(); a.ldc = (int64_t)1 << 39; a.workspace_bytes = 0;
    EXPECT_STATUS(hgemm_nccl_check_rs(&a), HGEMM_NCCL_ERROR_NOT_SUPPORTED);
    /* and a served n with too small a workspace is still refused */
    a = rs_base(); a.workspace_bytes = 0;
    EXPECT_STATUS(hgemm_nccl_check_rs(&a), HGEMM_NCCL_ERROR_INVALID_VALUE);
}

static void test_fingerprints(void) {
    const int64_t c1[RANKS] = {300, 77}, c2[RANKS] = {301, 76};
    const uint64_t base = hgemm_nccl_fingerprint_ag(RANKS, 4, c1, K, LDA);
    EXPECT(base == hgemm_nccl_fingerprint_ag(RANKS, 4, c1, K, LDA));
    EXPECT(base <= HGEMM_NCCL_HASH_MASK);
    EXPECT(base != hgemm_nccl_fingerprint_ag(RANKS, 4, c2, K, LDA));
    EXPECT(base != hgemm_nccl_fingerprint_ag(RANKS, 3, c1, K, LDA));
    EXPECT(base != hgemm_nccl_fingerprint_ag(RANKS, 4, c1, K + 8, LDA));
    EXPECT(base != hgemm_nccl_fingerprint_ag(RANKS, 4, c1, K, LDA + 8));
    EXPECT(base != hgemm_nccl_fingerprint_ag(RANKS, 4, NULL, K, LDA));
    EXPECT(base != hgemm_nccl_fingerprint_rs(RANKS, 4, c1, K));
    EXPECT(hgemm_nccl_fingerprint_rs(RANKS, 4, c1, RS_N) != hgemm_nccl_fingerprint_rs(RANKS, 4, c1, RS_N + 1));
    EXPECT(hgemm_nccl_fingerprint_create(RANKS, HGEMM_NCCL_CHECK_AGREE, 0) !=
           hgemm_nccl_fingerprint_create(RANKS, HGEMM_NCCL_CHECK_LOCAL, 0));
    /* Contexts that differ in copy_engine disagree at creation. */
    EXPECT(hgemm_nccl_fingerprint_create(RANKS, HGEMM_NCCL_CHECK_AGREE, 0) !=
           hgemm_nccl_fingerprint_create(RANKS, HGEMM_NCCL_CHECK_AGREE, 1));
    EXPECT(hgemm_nccl_fingerprint_mem(RANKS, HGEMM_NCCL_OP_MEM_ALLOC) !=
           hgemm_nccl_fingerprint_mem(RANKS, HGEMM_NCCL_OP_MEM_FREE));
}

/* What the all-reduce (max) makes of the ranks' vectors; keys NULL: none. */
static hgemm_nccl_status reduce_and_decode_ce(int nranks, const hgemm_nccl_status *own,
                                              const uint64_t *fp, const hgemm_nccl_ce_key *keys,
                                              int *failed_rank, int *copy_engine) {
    int64_t sum[HGEMM_NCCL_AGREE_SLOTS], v[HGEMM_NCCL_AGREE_SLOTS];
    for (int r = 0; r < nranks; r++) {
        hgemm_nccl_agree_encode(v, own[r], r, nranks, fp[r], keys ? keys[r] : hgemm_nccl_ce_none());
        for (int i = 0; i < HGEMM_NCCL_AGREE_SLOTS; i++) sum[i] = r == 0 || v[i] > sum[i] ? v[i] : sum[i];
    }
    return hgemm_nccl_agree_decode(sum, nranks, failed_rank, copy_engine);
}

static hgemm_nccl_status reduce_and_decode(int nranks, const hgemm_nccl_status *own,
                                           const uint64_t *fp, int *failed_rank) {
    int copy_engine = 7;
    hgemm_nccl_status st = reduce_and_decode_ce(nranks, own, fp, NULL, failed_rank, &copy_engine);
    EXPECT(copy_engine == 0); /* no key: never the copy-engine path */
    return st;
}

static void test_agreement(void) {
    enum { R = 4 };
    const uint64_t same[R] = {42, 42, 42, 42}, differ[R] = {42, 42, 43, 42};
    const uint64_t big[R] = {HGEMM_NCCL_HASH_MASK, HGEMM_NCCL_HASH_MASK, 0, HGEMM_NCCL_HASH_MASK};
    hgemm_nccl_status ok[R] = {0, 0, 0, 0};
    hgemm_nccl_status bad[R] = {HGEMM_NCCL_SUCCESS, HGEMM_NCCL_ERROR_MISALIGNED, HGEMM_NCCL_SUCCESS,
                                HGEMM_NCCL_ERROR_INVALID_VALUE};
    int failed_rank = 7;
    EXPECT_STATUS(reduce_and_decode(R, ok, same, &failed_rank), HGEMM_NCCL_SUCCESS);
    EXPECT(failed_rank == -1);
    EXPECT_STATUS(reduce_and_decode(R, bad, same, &failed_rank), HGEMM_NCCL_ERROR_MISALIGNED);
    EXPECT(failed_rank == 1);
    EXPECT_STATUS(reduce_and_decode(R, ok, differ, &failed_rank), HGEMM_NCCL_ERROR_MISMATCH);
    EXPECT(failed_rank == -1);
    EXPECT_STATUS(reduce_and_decode(R, ok, big, &failed_rank), HGEMM_NCCL_ERROR_MISMATCH);
    /* A mismatch is reported before the ranks' own errors. */
    EXPECT_STATUS(reduce_and_decode(R, bad, differ, &failed_rank), HGEMM_NCCL_ERROR_MISMATCH);
    EXPECT(failed_rank == 1);
    EXPECT_STATUS(reduce_and_decode(1, ok, same, &failed_rank), HGEMM_NCCL_SUCCESS);
}

/* ---- the copy-engine path -------------------------------------------------------- */

static void test_ce_uniform(void) {
    const int64_t even[4] = {256, 256, 256, 256}, ragged[2] = {300, 77}, empty[2] = {0, 0};
    EXPECT(hgemm_nccl_ce_uniform_ag(2, 1, even, K, K));
    EXPECT(hgemm_nccl_ce_uniform_ag(4, 1, even, K, K));
    EXPECT(!hgemm_nccl_ce_uniform_ag(1, 1, even, K, K));      /* nothing to gather */
    EXPECT(!hgemm_nccl_ce_uniform_ag(2, 2, even, K, K));      /* chunks > 1: pieces not back to back */
    EXPECT(!hgemm_nccl_ce_uniform_ag(2, 1, ragged, K, K));    /* ncclAllGather: one count */
    EXPECT(!hgemm_nccl_ce_uniform_ag(2, 1, empty, K, K));
    EXPECT(!hgemm_nccl_ce_uniform_ag(2, 1, even, K, LDA));    /* padded rows: blocks not m * k apart */
    EXPECT(!hgemm_nccl_ce_uniform_ag(2, 1, even, 0, 8));
    EXPECT(!hgemm_nccl_ce_uniform_ag(2, 1, NULL, K, K));
    EXPECT(hgemm_nccl_ce_uniform_rs(2, 1, even, RS_N));
    EXPECT(hgemm_nccl_ce_uniform_rs(4, 1, even, 100));        /* any n: the workspace pads it */
    EXPECT(hgemm_nccl_ce_uniform_rs(2, 3, even, RS_N));         /* 2 ranks: chunked swaps */
    EXPECT(!hgemm_nccl_ce_uniform_rs(4, 3, even, RS_N));        /* more: one all-to-all, 1 chunk */
    EXPECT(!hgemm_nccl_ce_uniform_rs(2, 1, ragged, RS_N));
    EXPECT(!hgemm_nccl_ce_uniform_rs(2, 1, even, 0));
    EXPECT(!hgemm_nccl_ce_uniform_rs(1, 1, even, RS_N));
}

static void test_ce_workspace(void) {
    const size_t one = hgemm_nccl_gemm_reducescatter_workspace(512, 100);
    EXPECT(one == (size_t)512 * 104 * 2);
    EXPECT(hgemm_nccl_gemm_reducescatter_ce_workspace(2, 512, 100) == one);
    EXPECT(hgemm_nccl_gemm_reducescatter_ce_workspace(1, 512, 100) == one);
    EXPECT(hgemm_nccl_gemm_reducescatter_ce_workspace(4, 512, 100) == 2 * one);
    EXPECT(hgemm_nccl_gemm_reducescatter_ce_workspace(0, 512, 100) == 0);
    EXPECT(hgemm_nccl_gemm_reducescatter_ce_workspace(4, 0, 100) == 0);
    EXPECT(hgemm_nccl_gemm_reducescatter_ce_workspace(4, -1, 100) == 0);
}

static void test_window_find(void) {
    const hgemm_nccl_window t[3] = {
        {0x10000, 0x1000, 0, NULL}, {0x40000, 0x8000, 3, NULL}, {UINTPTR_MAX - 0xfff, 0x1000, 4, NULL}};
    int64_t off = -1;
    EXPECT(hgemm_nccl_window_find(t, 3, FAKE(0x10000), 0x1000, &off) == 0 && off == 0);
    EXPECT(hgemm_nccl_window_find(t, 3, FAKE(0x10800), 0x800, &off) == 0 && off == 0x800);
    EXPECT(hgemm_nccl_window_find(t, 3, FAKE(0x10800), 0x801, &off) < 0); /* runs past the end */
    EXPECT(hgemm_nccl_window_find(t, 3, FAKE(0xff00), 0x200, &off) < 0);  /* starts before */
    EXPECT(hgemm_nccl_window_find(t, 3, FAKE(0x11000), 1, &off) < 0);     /* one past the end */
    EXPECT(hgemm_nccl_window_find(t, 3, FAKE(0x44000), 0x4000, &off) == 1 && off == 0x4000);
    EXPECT(hgemm_nccl_window_find(t, 3, FAKE(0x20000), 16, &off) < 0);
    EXPECT(hgemm_nccl_window_find(t, 3, FAKE(UINTPTR_MAX - 0xf), 16, &off) == 2 && off == 0xff0);
    EXPECT(hgemm_nccl_window_find(t, 3, FAKE(UINTPTR_MAX - 0xf), 17, &off) < 0); /* no wrap */
    EXPECT(hgemm_nccl_window_find(t, 3, FAKE(0x10000), 0, &off) < 0);
    EXPECT(hgemm_nccl_window_find(t, 3, NULL, 16, &off) < 0);
    EXPECT(hgemm_nccl_window_find(NULL, 0, FAKE(0x10000), 16, &off) < 0);
}

static void test_ce_keys(void) {
    enum { M = 256, KK = 64, NN = 64, MB = 1 << 20 };
    const int64_t counts[RANKS] = {M, M};
    /* Rank 1: A_gathered (2M x KK) at 0x100000 in window serial 5, A_local elsewhere in serial 2. */
    const hgemm_nccl_window t[2] = {{0x100000, MB, 5, NULL}, {0x800000, MB, 2, NULL}};
    hgemm_nccl_ag_args a;
    memset(&a, 0, sizeof a);
    a.rank = 1;
    a.nranks = RANKS;
    a.chunks = 1;
    a.m_counts = counts;
    a.n_local = NN;
    a.k = KK;
    a.lda = KK;
    a.ldb = KK;
    a.ldc = NN;
    a.A_gathered = FAKE(0x100000 + 0x400);
    a.A_local = FAKE(0x800000);
    a.B_local = FAKE(0x2000000);
    a.C_local = FAKE(0x3000000);
    EXPECT_STATUS(hgemm_nccl_check_ag(&a), HGEMM_NCCL_SUCCESS);
    hgemm_nccl_ce_key key = hgemm_nccl_ce_key_ag(&a, t, 2);
    EXPECT(key.window == 5 && key.offset == 0x400);
    a.A_local = (const char *)a.A_gathered + M * KK * 2; /* in place */
    key = hgemm_nccl_ce_key_ag(&a, t, 2);
    EXPECT(key.window == 5 && key.offset == 0x400);
    a.A_local = FAKE(0x4000000); /* not registered */
    EXPECT(hgemm_nccl_ce_key_ag(&a, t, 2).window == -1);
    a.A_local = FAKE(0x800000);
    a.A_gathered = FAKE(0x100000 + MB - 0x8000); /* 64 KB: runs past its window */
    EXPECT(hgemm_nccl_ce_key_ag(&a, t, 2).window == -1);
    EXPECT(hgemm_nccl_ce_key_ag(&a, NULL, 0).window == -1);

    /* (b): rank 0's workspace at offset 0x1000 of window 2. */
    const size_t ws = hgemm_nccl_gemm_reducescatter_ce_workspace(RANKS, 2 * M, NN);
    hgemm_nccl_rs_args b;
    memset(&b, 0, sizeof b);
    b.rank = 0;
    b.nranks = RANKS;
    b.chunks = 1;
    b.m_counts = counts;
    b.n = NN;
    b.k_local = KK;
    b.lda = KK;
    b.ldb = KK;
    b.ldc = NN;
    b.A_local = FAKE(0x2000000);
    b.B_local = FAKE(0x3000000);
    b.C_local = FAKE(0x4000000);
    b.workspace = FAKE(0x800000 + 0x1000);
    b.workspace_bytes = ws;
    EXPECT_STATUS(hgemm_nccl_check_rs(&b), HGEMM_NCCL_SUCCESS);
    key = hgemm_nccl_ce_key_rs(&b, t, 2);
    EXPECT(key.window == 2 && key.offset == 0x1000);
    b.workspace_bytes = ws - 16; /* too small for the copy-engine layout (and here for any) */
    EXPECT(hgemm_nccl_ce_key_rs(&b, t, 2).window == -1);
    /* Four ranks need two regions: the size the kernel path needs is not enough. */
    const int64_t four[4] = {M, M, M, M};
    b.nranks = 4;
    b.m_counts = four;
    b.workspace_bytes = hgemm_nccl_gemm_reducescatter_workspace(4 * M, NN);
    EXPECT(hgemm_nccl_ce_key_rs(&b, t, 2).window == -1);
    b.workspace_bytes = hgemm_nccl_gemm_reducescatter_ce_workspace(4, 4 * M, NN);
    EXPECT(hgemm_nccl_ce_key_rs(&b, t, 2).window == 2);
    /* The second region may not reach a matrix. */
    b.C_local = (const char *)b.workspace + b.workspace_bytes - 64;
    EXPECT(hgemm_nccl_ce_key_rs(&b, t, 2).window == -1);
}

static void test_ce_agreement(void) {
    enum { R = 3 };
    const uint64_t fp[R] = {9, 9, 9};
    const hgemm_nccl_status ok[R] = {0, 0, 0};
    const hgemm_nccl_status bad[R] = {0, HGEMM_NCCL_ERROR_INVALID_VALUE, 0};
    const hgemm_nccl_ce_key same[R] = {{4, 4096}, {4, 4096}, {4, 4096}};
    const hgemm_nccl_ce_key zero[R] = {{0, 0}, {0, 0}, {0, 0}};
    const hgemm_nccl_ce_key one_out[R] = {{4, 4096}, {-1, 0}, {4, 4096}};
    const hgemm_nccl_ce_key other_offset[R] = {{4, 4096}, {4, 8192}, {4, 4096}};
    const hgemm_nccl_ce_key other_window[R] = {{4, 4096}, {4, 4096}, {3, 4096}};
    const hgemm_nccl_ce_key none[R] = {{-1, 0}, {-1, 0}, {-1, 0}};
    int failed_rank = 0, ce = -1;
    EXPECT_STATUS(reduce_and_decode_ce(R, ok, fp, same, &failed_rank, &ce), HGEMM_NCCL_SUCCESS);
    EXPECT(ce == 1);
    EXPECT_STATUS(reduce_and_decode_ce(R, ok, fp, zero, &failed_rank, &ce), HGEMM_NCCL_SUCCESS);
    EXPECT(ce == 1); /* window serial 0 at offset 0 is a key like any other */
    /* Every rank falls back together when one cannot, or the keys differ. */
    EXPECT_STATUS(reduce_and_decode_ce(R, ok, fp, one_out, &failed_rank, &ce), HGEMM_NCCL_SUCCESS);
    EXPECT(ce == 0);
    EXPECT_STATUS(reduce_and_decode_ce(R, ok, fp, other_offset, &failed_rank, &ce), HGEMM_NCCL_SUCCESS);
    EXPECT(ce == 0);
    EXPECT_STATUS(reduce_and_decode_ce(R, ok, fp, other_window, &failed_rank, &ce), HGEMM_NCCL_SUCCESS);
    EXPECT(ce == 0);
    EXPECT_STATUS(reduce_and_decode_ce(R, ok, fp, none, &failed_rank, &ce), HGEMM_NCCL_SUCCESS);
    EXPECT(ce == 0);
    /* The statuses are decided as without keys. */
    EXPECT_STATUS(reduce_and_decode_ce(R, bad, fp, same, &failed_rank, &ce), HGEMM_NCCL_ERROR_INVALID_VALUE);
    EXPECT(failed_rank == 1);
}

static void test_entry_points(void) {
    const int64_t counts[1] = {8};
    hgemm_nccl_ctx *ctx = FAKE(1);
    EXPECT_STATUS(hgemm_nccl_ctx_create(NULL, NULL, NULL), HGEMM_NCCL_ERROR_INVALID_VALUE);
    EXPECT_STATUS(hgemm_nccl_ctx_create(&ctx, NULL, NULL), HGEMM_NCCL_ERROR_INVALID_VALUE);
    EXPECT(ctx == NULL);
    EXPECT_STATUS(hgemm_nccl_ctx_destroy(NULL), HGEMM_NCCL_SUCCESS);
    EXPECT(hgemm_nccl_failed_rank(NULL) == -1);
    EXPECT(hgemm_nccl_used_copy_engine(NULL) == 0);
    EXPECT_STATUS(hgemm_nccl_ctx_set_trace(NULL, NULL, 0), HGEMM_NCCL_ERROR_INVALID_VALUE);
    EXPECT_STATUS(hgemm_nccl_allgather_gemm(NULL, HGEMM_KERNEL_AUTO, 1, counts, 8, 8, 1.0f, NULL, NULL,
                                            8, NULL, 8, 0.0f, NULL, 8, 0),
                  HGEMM_NCCL_ERROR_INVALID_VALUE);
    EXPECT_STATUS(hgemm_nccl_gemm_reducescatter(NULL, HGEMM_KERNEL_AUTO, 1, counts, 8, 8, 1.0f, NULL,
                                                8, NULL, 8, 0.0f, NULL, 8, NULL, 0, 0),
                  HGEMM_NCCL_ERROR_INVALID_VALUE);
    void *p = FAKE(1);
    EXPECT_STATUS(hgemm_nccl_mem_alloc(NULL, 4096, &p), HGEMM_NCCL_ERROR_INVALID_VALUE);
    EXPECT(p == NULL);
    EXPECT_STATUS(hgemm_nccl_mem_free(NULL, FAKE(4096)), HGEMM_NCCL_ERROR_INVALID_VALUE);
    /* Every status has its own sentence. */
    for (int s = HGEMM_NCCL_SUCCESS; s <= HGEMM_NCCL_ERROR_TIMEOUT; s++) {
        const char *text = hgemm_nccl_status_string((hgemm_nccl_status)s);
        EXPECT(text != NULL && strcmp(text, "unknown status") != 0);
        for (int t = HGEMM_NCCL_SUCCESS; t < s; t++)
            EXPECT(strcmp(text, hgemm_nccl_status_string((hgemm_nccl_status)t)) != 0);
    }
    EXPECT(strcmp(hgemm_nccl_status_string((hgemm_nccl_status)99), "unknown status") == 0);
}

int main(void) {
    test_pieces();
    test_counts();
    test_check_ag();
    test_check_rs();
    test_fingerprints();
    test_agreement();
    test_ce_uniform();
    test_ce_workspace();
    test_window_find();
    test_ce_keys();
    test_ce_agreement();
    test_entry_points();
    printf("test_nccl_plan: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
