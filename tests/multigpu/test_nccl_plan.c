/*
 * test_nccl_plan: libhgemm_nccl's checks, chunking, fingerprints and
 * agreement on the CPU (no GPU, no communicator), and the public entry points'
 * answers to NULL contexts and communicators, which come before any CUDA or
 * NCCL call. Prints "N passed, N failed" last; exits 1 on any failure.
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
    EXPECT(hgemm_nccl_fingerprint_create(RANKS, HGEMM_NCCL_CHECK_AGREE) !=
           hgemm_nccl_fingerprint_create(RANKS, HGEMM_NCCL_CHECK_LOCAL));
}

/* What the all-reduce (max) makes of the ranks' vectors. */
static hgemm_nccl_status reduce_and_decode(int nranks, const hgemm_nccl_status *own,
                                           const uint64_t *fp, int *failed_rank) {
    int64_t sum[HGEMM_NCCL_AGREE_SLOTS], v[HGEMM_NCCL_AGREE_SLOTS];
    for (int r = 0; r < nranks; r++) {
        hgemm_nccl_agree_encode(v, own[r], r, nranks, fp[r]);
        for (int i = 0; i < HGEMM_NCCL_AGREE_SLOTS; i++) sum[i] = r == 0 || v[i] > sum[i] ? v[i] : sum[i];
    }
    return hgemm_nccl_agree_decode(sum, nranks, failed_rank);
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

static void test_entry_points(void) {
    const int64_t counts[1] = {8};
    hgemm_nccl_ctx *ctx = FAKE(1);
    EXPECT_STATUS(hgemm_nccl_ctx_create(NULL, NULL, NULL), HGEMM_NCCL_ERROR_INVALID_VALUE);
    EXPECT_STATUS(hgemm_nccl_ctx_create(&ctx, NULL, NULL), HGEMM_NCCL_ERROR_INVALID_VALUE);
    EXPECT(ctx == NULL);
    EXPECT_STATUS(hgemm_nccl_ctx_destroy(NULL), HGEMM_NCCL_SUCCESS);
    EXPECT(hgemm_nccl_failed_rank(NULL) == -1);
    EXPECT_STATUS(hgemm_nccl_ctx_set_trace(NULL, NULL, 0), HGEMM_NCCL_ERROR_INVALID_VALUE);
    EXPECT_STATUS(hgemm_nccl_allgather_gemm(NULL, HGEMM_KERNEL_AUTO, 1, counts, 8, 8, 1.0f, NULL, NULL,
                                            8, NULL, 8, 0.0f, NULL, 8, 0),
                  HGEMM_NCCL_ERROR_INVALID_VALUE);
    EXPECT_STATUS(hgemm_nccl_gemm_reducescatter(NULL, HGEMM_KERNEL_AUTO, 1, counts, 8, 8, 1.0f, NULL,
                                                8, NULL, 8, 0.0f, NULL, 8, NULL, 0, 0),
                  HGEMM_NCCL_ERROR_INVALID_VALUE);
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
    test_entry_points();
    printf("test_nccl_plan: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
