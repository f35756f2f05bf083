/*
 * test_v8_plan.c: V8's planner (src/v8/plan.h), on the CPU. The workspace's
 * layout: the flags of every grid up to 512 blocks fit, those of up to 256
 * sit before the in-kernel reduction's counters, the counters inside the
 * flags' bytes, the partial sums after them, the
 * same offsets whatever the grid; v8_workspace_fits and v8_tail_max_units
 * by that layout. The builds: the table's choices at shapes the notes name
 * (docs/notes/v8-design.txt) on 132 SMs, v8_stages for each, and a variant
 * changes only what it names (no_seam: the seam; all_workers: the balance).
 * The epilogue's builds: 128 or 256 wide in pairs, no split, fp32 C 256 wide.
 * v8_swap: the products it swaps, the swapped product and its build, and
 * the schedules the swapped kernel serves.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "v8/plan.h"
#include "test_check.h"

static hgemm_problem problem(int64_t m, int64_t n, int64_t k, void *ws, size_t ws_bytes) {
    hgemm_problem p;
    memset(&p, 0, sizeof p);
    p.m = m, p.n = n, p.k = k, p.alpha = 1.0f, p.lda = k, p.ldb = k, p.ldc = n, p.batch = 1;
    p.workspace = ws, p.workspace_bytes = ws_bytes;
    return p;
}

static void test_layout(void) {
    const v8_workspace_layout w = v8_workspace();
    CHECK(w.flag_bytes == V8_FLAG_BYTES && w.flags * sizeof(uint32_t) == w.flag_bytes);
    CHECK(w.partials_offset == w.flag_bytes); /* the partials after the flags, whatever the grid */
    CHECK(w.partials_offset % 16 == 0);       /* float4 loads and bulk copies of a slot */
    CHECK(w.split_slot_floats == (size_t)V8_WG_M * V8_BN && w.split_slot_floats >= v8_tail_slot_floats(256));
    CHECK(v8_tail_slot_floats(320) > w.split_slot_floats); /* why the 320 tile splits only its tail */
    /* the flags hold 512 blocks' slots (two consumers each); with the
     * in-kernel reduction's counters, 256 blocks' end where they begin
     * (v8_counters_fit refuses more: the second kernel reduces instead) */
    CHECK(512u * V8_CONSUMERS <= w.flags);
    CHECK(256u * V8_CONSUMERS <= w.count_first && w.count_first < w.flags);
    char ws;
    const size_t need = w.partials_offset + (size_t)132 * V8_CONSUMERS * w.split_slot_floats * sizeof(float);
    hgemm_problem p = problem(512, 512, 131072, &ws, need);
    CHECK(v8_workspace_fits(&p, 132));
    CHECK(!v8_workspace_fits(&p, 134)); /* one more cluster's slots do not fit */
    p.workspace_bytes = need - 1;
    CHECK(!v8_workspace_fits(&p, 132));
    p.workspace_bytes = need;
    CHECK(!v8_workspace_fits(&p, 513)); /* more blocks than flags */
    p.workspace = NULL;
    CHECK(!v8_workspace_fits(&p, 2));
    /* the tail split's units: bounded by the flags and by the bytes */
    p.workspace = &ws;
    p.workspace_bytes = w.partials_offset + (size_t)10 * 2 * V8_CONSUMERS * v8_tail_slot_floats(256) * sizeof(float);
    CHECK(v8_tail_max_units(&p, 256, 2) == 10);
    p.workspace_bytes = (size_t)1 << 40;
    CHECK(v8_tail_max_units(&p, 256, 2) == w.flags / (2 * V8_CONSUMERS));
    /* the in-kernel reduction's counters: two per tile part after count_first */
    CHECK(v8_counters_fit(132, 16, 2));
    CHECK(!v8_counters_fit(w.count_first / V8_CONSUMERS + 1, 1, 2));
    const uint32_t tiles_max = (w.flags - w.count_first) / (2 * 2 * V8_CONSUMERS);
    CHECK(v8_counters_fit(132, tiles_max, 2) && !v8_counters_fit(132, tiles_max + 1, 2));
}

static void test_builds(void) {
    static const hgemm_v8_variant table = {0, 0, 0, 0};
    /* 8192^3, no workspace: the wide tile, 4 stages, in pairs, with the seam */
    hgemm_problem p = problem(8192, 8192, 8192, NULL, 0);
    v8_build b = v8_choose_build(&p, &table, 132);
    CHECK(b.bn == 256 && b.cluster == 2 && b.deep == 2 && b.seam && b.split == HGEMM_SK_AUTO);
    CHECK(v8_stages(b.bn, b.deep) == 4);
    hgemm_v8_variant v = table;
    v.no_seam = 1;
    const v8_build nb = v8_choose_build(&p, &v, 132);
    CHECK(nb.bn == 256 && nb.deep == 2 && !nb.seam && !nb.deal);
    /* a k-loop of two k-tiles: the wide tile with 3 stages */
    p = problem(8192, 8192, 128, NULL, 0);
    b = v8_choose_build(&p, &table, 132);
    CHECK(b.bn == 256 && b.deep == 0 && !b.seam && v8_stages(b.bn, b.deep) == 3);
    /* 512 x 4096 x 4096: one round of 64 narrow tiles against half the clusters idle */
    p = problem(512, 4096, 4096, NULL, 0);
    b = v8_choose_build(&p, &table, 132);
    CHECK(b.bn == 128 && b.cluster == 2 && v8_stages(b.bn, b.deep) == 5);
    /* 512 x 6144 x 4096: 192 */
    p = problem(512, 6144, 4096, NULL, 0);
    CHECK(v8_choose_build(&p, &table, 132).bn == 192);
    /* 1024^3: the quarter tile (16 k-tiles, rows of 64-element multiples) */
    p = problem(1024, 1024, 1024, NULL, 0);
    b = v8_choose_build(&p, &table, 132);
    CHECK(b.bn == 64 && v8_stages(b.bn, b.deep) == 8);
    /* B stored MN-major never takes 192, 64 or 320 */
    p = problem(1024, 1024, 1024, NULL, 0);
    p.b_mn = 1;
    b = v8_choose_build(&p, &table, 132);
    CHECK(b.bn == 256 || b.bn == 128);
    /* schedules: whole tiles of 8192^3 on 66 pairs, balanced or on every cluster */
    p = problem(8192, 8192, 8192, NULL, 0);
    const uint32_t tiles = 32 * 32;
    v8_schedule s = v8_schedule_for(&p, &table, tiles, 132, 2, 256, HGEMM_SK_AUTO, 1);
    CHECK(s.split == HGEMM_SK_NONE && s.seam && s.busy == s.sk.workers && s.busy <= 66);
    v.no_seam = 0;
    v.all_workers = 1;
    const v8_schedule all = v8_schedule_for(&p, &v, tiles, 132, 2, 256, HGEMM_SK_AUTO, 1);
    CHECK(all.busy == 66 && all.busy >= s.busy);
    /* the variant's knobs reach the launch as they are, or the table's */
    CHECK(v8_pdl_mode(&table) == HGEMM_PDL_EXIT && v8_raster(&table) == V8_RASTER);
    v.pdl = HGEMM_PDL_OFF;
    v.raster = 4;
    CHECK(v8_pdl_mode(&v) == HGEMM_PDL_OFF && v8_raster(&v) == 4);
    CHECK(v8_whole_clusters(1, 2) == 2 && v8_whole_clusters(131, 2) == 130 && v8_whole_clusters(132, 1) == 132);
}

/* The fused epilogue's and the fp32 C's builds: 128 or 256 wide (fp32 C:
 * 256), in pairs, never split, whatever the plain table would take there */
static void test_epilogue_builds(void) {
    static const hgemm_v8_variant table = {0, 0, 0, 0};
    static const int64_t shapes[][3] = {{8192, 8192, 8192}, {512, 4096, 4096}, {512, 6144, 4096},
                                        {1024, 1024, 1024}, {8, 4096, 4096},    {256, 256, 65536}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int kind = 0; kind < 3; kind++) {
            hgemm_problem p = problem(shapes[i][0], shapes[i][1], shapes[i][2], NULL, 0);
            if (kind == 0) p.epi.act = HGEMM_ACTIVATION_GELU_TANH;
            if (kind == 1) p.epi.bias = (const void *)(uintptr_t)0x10000;
            if (kind == 2) p.epi.c_f32 = 1, p.a_mn = 1, p.b_mn = 1;
            const v8_build b = v8_choose_build(&p, &table, 132);
            const v8_build plain = v8_choose_build(&(hgemm_problem){.m = p.m, .n = p.n, .k = p.k, .alpha = 1.0f,
                                                                    .lda = p.k, .ldb = p.k, .ldc = p.n, .batch = 1},
                                                   &table, 132);
            CHECK_MSG(b.epi && b.cluster == 2 && b.split == HGEMM_SK_NONE && !b.seam && !b.deal &&
                          (b.bn == 256 ? b.deep == 2 : b.bn == 128 && b.deep == 0) && (kind != 2 || b.bn == 256),
                      "%lld x %lld x %lld, kind %d: bn %d cluster %d deep %d split %d seam %d", (long long)p.m,
                      (long long)p.n, (long long)p.k, kind, b.bn, b.cluster, b.deep, b.split, b.seam);
            CHECK_MSG(!plain.epi, "the plain problem takes the table's build");
            /* the epilogue takes the narrow build where the table would go 128 or 64 wide */
            if (kind < 2) CHECK_MSG((b.bn == 128) == (plain.bn <= 128), "bn %d against the table's %d", b.bn, plain.bn);
        }
}

/* v8_swap: which products run swapped, and the swapped product and build */
static void test_swap(void) {
    static const hgemm_v8_variant table = {0, 0, 0, 0};
    static char ws[16], a[16], b[16], c[16];
    hgemm_problem p = problem(192, 4096, 4096, ws, sizeof ws), q;
    p.A = a, p.B = b, p.C = c, p.lda = 4104, p.ldb = 4112, p.ldc = 4096;
    v8_build sb;
    CHECK(v8_swap(&p, &q, &sb));
    CHECK(q.m == 4096 && q.n == 192 && q.k == 4096 && q.A == b && q.B == a && q.lda == 4112 && q.ldb == 4104);
    CHECK(q.C == c && q.ldc == 4096); /* C as given: the kernel stores it transposed */
    CHECK(sb.bn == 192 && sb.cluster == 2 && sb.deep == 0 && !sb.seam && !sb.deal && !sb.epi);
    /* the tile that holds m's rows: 128 up to 128, 192 up to 192, two of 192 past 256 */
    p.m = 65;
    CHECK(v8_swap(&p, &q, &sb) && sb.bn == 128);
    p.m = 128;
    CHECK(v8_swap(&p, &q, &sb) && sb.bn == 128);
    p.m = 300;
    CHECK(v8_swap(&p, &q, &sb) && sb.bn == 192);
    p.m = 384, p.n = 8192;
    CHECK(v8_swap(&p, &q, &sb) && sb.bn == 192);
    p.n = 8200; /* two tiles only up to 8192 wide */
    CHECK(!v8_swap(&p, &q, &sb));
    p.m = 256, p.n = 4096; /* 193..256: not swapped */
    CHECK(!v8_swap(&p, &q, &sb));
    p.m = 64; /* V9's */
    CHECK(!v8_swap(&p, &q, &sb));
    p.m = 385;
    CHECK(!v8_swap(&p, &q, &sb));
    p.m = 192, p.n = 16384;
    CHECK(v8_swap(&p, &q, &sb));
    p.n = 16392;
    CHECK(!v8_swap(&p, &q, &sb));
    p.n = 2040;
    CHECK(!v8_swap(&p, &q, &sb));
    /* what the swapped kernel does not serve */
    const hgemm_problem ok = problem(192, 4096, 4096, ws, sizeof ws);
    hgemm_problem r = ok;
    r.C = c, r.ldc = 4096;
    CHECK(v8_swap(&r, &q, &sb));
    r.n = 4100, r.ldc = 4104; /* TMA stores whole 16-byte chunks: a row of C must end on one */
    CHECK(!v8_swap(&r, &q, &sb));
    r = ok, r.C = c, r.ldc = 4100;
    CHECK(!v8_swap(&r, &q, &sb));
    r = ok, r.C = c + 2, r.ldc = 4096;
    CHECK(!v8_swap(&r, &q, &sb));
    r = ok, r.C = c, r.ldc = 4096, r.workspace = NULL;
    CHECK(!v8_swap(&r, &q, &sb));
    r = ok, r.C = c, r.ldc = 4096, r.beta = 0.5f;
    CHECK(!v8_swap(&r, &q, &sb));
    r = ok, r.C = c, r.ldc = 4096, r.b_mn = 1;
    CHECK(!v8_swap(&r, &q, &sb));
    r = ok, r.C = c, r.ldc = 4096, r.a_mn = 1;
    CHECK(!v8_swap(&r, &q, &sb));
    r = ok, r.C = c, r.ldc = 4096, r.batch = 2;
    CHECK(!v8_swap(&r, &q, &sb));
    r = ok, r.C = c, r.ldc = 4096, r.epi.act = HGEMM_ACTIVATION_RELU;
    CHECK(!v8_swap(&r, &q, &sb));
    r = ok, r.C = c, r.ldc = 4096, r.C_in = c;
    CHECK(!v8_swap(&r, &q, &sb));
    /* its schedule: a split whose slice 0 adds the others' (4 slices of 16 pair tiles on 132 SMs) */
    r = ok, r.C = c, r.ldc = 4096, r.workspace_bytes = HGEMM_WORKSPACE_BYTES; /* planned only, never touched */
    CHECK(v8_swap(&r, &q, &sb));
    const v8_schedule sc = v8_schedule_for(&q, &table, 16, 132, 2, sb.bn, sb.split, 0);
    CHECK(sc.sk.slices == 4 && sc.sk.reduce == HGEMM_SK_REDUCE_OWNER && v8_swap_schedule_ok(&sc.sk));
    hgemm_sk shared = sc.sk;
    shared.reduce = HGEMM_SK_REDUCE_SHARED;
    CHECK(!v8_swap_schedule_ok(&shared));
    shared.slices = 0;
    CHECK(v8_swap_schedule_ok(&shared));
}

int main(void) {
    test_layout();
    test_builds();
    test_epilogue_builds();
    test_swap();
    return check_finish();
}
