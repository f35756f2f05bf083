/*
 * test_explain.c: hgemm__explain, what a call would run, decided without a
 * device (the bench's --explain): the row AUTO takes, the table V8's tile,
 * cluster, ring, seam and work plan, and V9's cut, on a GPU of 132 SMs. The shapes
 * are those whose choice V8's width rule and plan document in their
 * comments (src/kernels/v8_fp32_cluster.cu, src/stream_k.h), so a change
 * of rule shows here as a changed decision, not only as a changed time.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "stream_k.h"
#include "test_check.h"

enum { SMS = 132, PAIRS = SMS / 2 };

static const hgemm_nt_options *with_workspace(void) {
    static char stand_in; /* never dereferenced: only whether it is set */
    static hgemm_nt_options ws;
    ws.workspace = &stand_in;
    ws.workspace_bytes = HGEMM_WORKSPACE_BYTES;
    return &ws;
}

/* AUTO, fp16 NT, packed operands, beta 0 */
static hgemm_status explain(int64_t m, int64_t n, int64_t k, const hgemm_nt_options *o, hgemm_explanation *e) {
    return hgemm__explain(NULL, HGEMM_DTYPE_F16, HGEMM_OP_N, HGEMM_OP_T, m, n, k, (k + 7) / 8 * 8,
                          (k + 7) / 8 * 8, 1, 0.0f, o, SMS, e);
}

static void test_the_wide_tile_in_whole_rounds(void) {
    hgemm_explanation e;
    /* 4096^3: 256 cluster tiles, 4 rounds on 64 of the 66 pairs (hgemm_sk_balance) */
    CHECK_STATUS(explain(4096, 4096, 4096, with_workspace(), &e), HGEMM_SUCCESS);
    CHECK_STR(e.row ? e.row->name : NULL, "v8");
    CHECK(e.has_v8_plan);
    CHECK_I64(e.v8.bn, 256);
    CHECK_I64(e.v8.cluster, 2);
    CHECK_I64(e.v8.stages, 4);
    CHECK_I64(e.v8.seam, 1);
    CHECK_I64(e.v8.tiles, 256);
    CHECK_I64(e.v8.k_tiles, 64);
    CHECK_I64(e.v8.workers, 64);
    CHECK_I64(e.v8.clusters, 64);
    CHECK_I64(e.v8.sk_workers + e.v8.slices + e.v8.tail_slices, 0);
    /* 4096 x 4096 x 14336 likewise, 224 k-tiles a tile */
    CHECK_STATUS(explain(4096, 4096, 14336, with_workspace(), &e), HGEMM_SUCCESS);
    CHECK_I64(e.v8.bn, 256);
    CHECK_I64(e.v8.k_tiles, 224);
    CHECK_I64(e.v8.clusters, 64);
    /* beta != 0: the seam does not pay (v8_seam_pays) */
    CHECK_STATUS(hgemm__explain(NULL, HGEMM_DTYPE_F16, HGEMM_OP_N, HGEMM_OP_T, 4096, 4096, 4096, 4096, 4096, 1,
                                0.5f, with_workspace(), SMS, &e),
                 HGEMM_SUCCESS);
    CHECK_I64(e.v8.seam, 0);
}

static void test_the_tail_split_needs_the_workspace(void) {
    hgemm_explanation e;
    /* 8192^3: 1024 tiles, 15 whole rounds on 66 pairs, the last 34 in slices */
    CHECK_STATUS(explain(8192, 8192, 8192, with_workspace(), &e), HGEMM_SUCCESS);
    CHECK_I64(e.v8.bn, 256);
    CHECK_I64(e.v8.tiles, 1024);
    CHECK_I64(e.v8.workers, PAIRS);
    CHECK_I64(e.v8.dp_tiles, 15 * PAIRS);
    CHECK(e.v8.tail_slices >= 2);
    CHECK_I64(e.v8.deal, 1); /* the seam build deals by GPC */
    CHECK_I64(e.library_workspace, 0);
    /* none given: the library's, the same plan */
    CHECK_STATUS(explain(8192, 8192, 8192, NULL, &e), HGEMM_SUCCESS);
    CHECK_I64(e.library_workspace, 1);
    CHECK_I64(e.v8.dp_tiles, 15 * PAIRS);
    CHECK(e.v8.tail_slices >= 2);
    /* the library's turned off: whole tiles, 16 rounds, on the 64 pairs that take as many */
    hgemm_set_library_workspace(0);
    CHECK_STATUS(explain(8192, 8192, 8192, NULL, &e), HGEMM_SUCCESS);
    hgemm_set_library_workspace(1);
    CHECK_I64(e.library_workspace, 0);
    CHECK_I64(e.v8.tail_slices, 0);
    CHECK_I64(e.v8.split, HGEMM_SK_NONE);
    CHECK_I64(e.v8.dp_tiles, 1024);
    CHECK_I64(e.v8.workers, 64);
}

/* Few long tiles without a workspace: AUTO takes V8's split-K in the
 * library's workspace; with it turned off, V9 (its cluster split). */
static void test_few_long_tiles_borrow_the_library_workspace(void) {
    hgemm_explanation e;
    CHECK_STATUS(explain(256, 256, 65536, NULL, &e), HGEMM_SUCCESS);
    CHECK_I64(e.row->id, HGEMM_KERNEL_V8);
    CHECK_I64(e.library_workspace, 1);
    CHECK(e.v8.slices >= 2);
    hgemm_set_library_workspace(0);
    CHECK_STATUS(explain(256, 256, 65536, NULL, &e), HGEMM_SUCCESS);
    hgemm_set_library_workspace(1);
    CHECK_I64(e.row->id, HGEMM_KERNEL_V9);
    CHECK_I64(e.library_workspace, 0);
    /* V9 splits in a cluster, no workspace: none borrowed */
    CHECK_STATUS(explain(1, 4096, 4096, NULL, &e), HGEMM_SUCCESS);
    CHECK_I64(e.row->id, HGEMM_KERNEL_V9);
    CHECK_I64(e.library_workspace, 0);
}

/* Shapes whose V8 build the width rule and the plan document, with the
 * workspace; -1: not checked. */
typedef struct documented {
    int64_t m, n, k;
    int bn, cluster, stages, seam;
    int64_t tiles, clusters, slices, reduce;
    const char *why;
} documented;

static const documented DOCUMENTED[] = {
    {4096, 14336, 4096, 256, 2, 4, 1, 896, PAIRS, 0, -1,
     "the wide tile and the tail split, 896 cluster tiles (the 320 tile's 720 through run 136)"},
    {512, 4096, 4096, 128, -1, -1, -1, -1, -1, -1, -1, "one round of 64 narrow tiles, not 32 wide ones"},
    {512, 6144, 4096, 192, -1, -1, -1, -1, -1, -1, -1, "64 tiles 192 wide"},
    {1024, 1024, 1024, 64, -1, -1, -1, -1, -1, -1, -1, "rows on 128-byte lines: the quarter tile"},
    {1000, 1000, 1000, 128, -1, -1, -1, -1, -1, -1, -1, "rows off 128-byte lines: not the quarter tile"},
    {8192, 8192, 128, 256, 2, 3, 0, -1, -1, -1, -1, "k <= 128: 3 stages, C staged whole, no seam"},
    {256, 256, 65536, 128, 1, -1, -1, -1, -1, 33, HGEMM_SK_REDUCE_SHARED,
     "narrow tiles without clusters, 33 slices, reduced in the launch"},
    {1024, 1024, 16384, 256, 2, -1, 0, -1, -1, 4, HGEMM_SK_REDUCE_OWNER,
     "wide tiles in pairs, 4 slices, slice 0's worker adds them"},
};

static void test_the_documented_builds(void) {
    for (size_t i = 0; i < sizeof DOCUMENTED / sizeof DOCUMENTED[0]; i++) {
        const documented *c = &DOCUMENTED[i];
        hgemm_explanation e;
        CHECK_MSG(explain(c->m, c->n, c->k, with_workspace(), &e) == HGEMM_SUCCESS && e.has_v8_plan,
                  "%lld x %lld x %lld: no V8 plan", (long long)c->m, (long long)c->n, (long long)c->k);
        const int64_t want[] = {c->bn, c->cluster, c->stages, c->seam, c->tiles, c->clusters, c->slices, c->reduce};
        const int64_t got[] = {e.v8.bn, e.v8.cluster, e.v8.stages, e.v8.seam,
                               e.v8.tiles, e.v8.clusters, e.v8.slices, e.v8.reduce};
        static const char *const what[] = {"bn", "cluster", "stages", "seam", "tiles", "clusters", "slices", "reduce"};
        for (size_t j = 0; j < sizeof want / sizeof want[0]; j++)
            if (want[j] >= 0)
                CHECK_MSG(got[j] == want[j], "%lld x %lld x %lld (%s): %s %lld, want %lld", (long long)c->m,
                          (long long)c->n, (long long)c->k, c->why, what[j], (long long)got[j], (long long)want[j]);
    }
}

static void test_rows_and_edges(void) {
    hgemm_explanation e;
    /* decode: V9, m on WGMMA's N; 64 tiles split in 2 over a cluster; 448 tiles not split */
    CHECK_STATUS(explain(1, 4096, 4096, with_workspace(), &e), HGEMM_SUCCESS);
    CHECK_STR(e.row ? e.row->name : NULL, "v9");
    CHECK(!e.has_v8_plan && e.has_v9_plan);
    CHECK_I64(e.v9.swap, 1);
    CHECK_I64(e.v9.bn, 16);
    CHECK_I64(e.v9.long_tiles * e.v9.short_tiles, 64);
    CHECK_I64(e.v9.split, 2);
    CHECK_STATUS(explain(1, 28672, 4096, with_workspace(), &e), HGEMM_SUCCESS);
    CHECK_I64(e.v9.long_tiles, 448);
    CHECK_I64(e.v9.split, 1);
    CHECK_STATUS(explain(4096, 64, 4096, with_workspace(), &e), HGEMM_SUCCESS);
    CHECK_I64(e.v9.swap, 0); /* n is the short side: A's rows on WGMMA's M as stored */
    CHECK_I64(e.v9.bn, 64);
    /* nothing to multiply; k == 0 only scales C */
    CHECK_STATUS(explain(0, 4096, 4096, NULL, &e), HGEMM_SUCCESS);
    CHECK(e.row == NULL);
    CHECK_STATUS(explain(64, 64, 0, NULL, &e), HGEMM_SUCCESS);
    CHECK(e.scale_only);
    /* a kernel asked for a form it does not serve */
    const hgemm_kernel_info *v7 = hgemm__kernel_find(HGEMM_KERNEL_V7);
    CHECK_STATUS(hgemm__explain(v7, HGEMM_DTYPE_F16, HGEMM_OP_N, HGEMM_OP_N, 256, 256, 256, 256, 256, 1, 0.0f, NULL,
                                SMS, &e),
                 HGEMM_ERROR_NOT_SUPPORTED);
    CHECK(e.row == v7);
    /* AUTO in a form its choice does not serve takes V8 */
    CHECK_STATUS(hgemm__explain(NULL, HGEMM_DTYPE_BF16, HGEMM_OP_T, HGEMM_OP_N, 4096, 4096, 4096, 4096, 4096, 1,
                                0.0f, with_workspace(), SMS, &e),
                 HGEMM_SUCCESS);
    CHECK_STR(e.row ? e.row->name : NULL, "v8");
    CHECK(e.has_v8_plan);
    CHECK(e.v8.bn != 320 && e.v8.bn != 192 && e.v8.bn != 64); /* MN-major B: 256 or 128 only */
    /* the SM target: 64 SMs, 32 pairs */
    hgemm_nt_options capped = *with_workspace();
    capped.sm_count_target = 64;
    CHECK_STATUS(explain(4096, 4096, 4096, &capped, &e), HGEMM_SUCCESS);
    CHECK_I64(e.v8.sms, 64);
    CHECK(e.v8.workers <= 32);
    /* bad values */
    CHECK_STATUS(explain(-1, 4096, 4096, NULL, &e), HGEMM_ERROR_INVALID_VALUE);
    CHECK_STATUS(hgemm__explain(NULL, (hgemm_dtype)7, HGEMM_OP_N, HGEMM_OP_T, 64, 64, 64, 64, 64, 1, 0.0f, NULL,
                                SMS, &e),
                 HGEMM_ERROR_INVALID_VALUE);
}

int main(void) {
    test_the_wide_tile_in_whole_rounds();
    test_the_tail_split_needs_the_workspace();
    test_few_long_tiles_borrow_the_library_workspace();
    test_the_documented_builds();
    test_rows_and_edges();
    return check_finish();
}
