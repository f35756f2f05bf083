/*
 * test_strings_table.c: status strings, kernel names and the one kernel
 * table (src/kernel_table.c) that dispatch, the CLI, the tests and the benchmark read.
 */
#include <stdio.h>
#include <string.h>

#include "test_check.h"
#include "internal.h"

enum {
    STATUS_FIRST = HGEMM_SUCCESS,
    STATUS_LAST = HGEMM_ERROR_CUDA,
    STATUS_COUNT = STATUS_LAST - STATUS_FIRST + 1,
    UNKNOWN_STATUS = 99,
    UNKNOWN_KERNEL = 99,
    NAME_CAP = 16,
};

/* The enum as the header spells it; the table must agree with it. */
static const struct {
    hgemm_kernel id;
    const char *name;
} ENUM_NAMES[] = {
    {HGEMM_KERNEL_V0, "v0"}, {HGEMM_KERNEL_V1, "v1"}, {HGEMM_KERNEL_V2, "v2"},
    {HGEMM_KERNEL_V3, "v3"}, {HGEMM_KERNEL_V4, "v4"}, {HGEMM_KERNEL_V5, "v5"},
    {HGEMM_KERNEL_V6, "v6"}, {HGEMM_KERNEL_V7, "v7"}, {HGEMM_KERNEL_V8, "v8"},
    {HGEMM_KERNEL_V9, "v9"},
};
enum { ENUM_NAME_COUNT = (int)(sizeof ENUM_NAMES / sizeof ENUM_NAMES[0]) };

static void test_status_strings(void) {
    const char *seen[STATUS_COUNT];
    for (int s = STATUS_FIRST; s <= STATUS_LAST; s++) {
        const char *str = hgemm_status_string((hgemm_status)s);
        seen[s - STATUS_FIRST] = str;
        check_record(str != NULL && str[0] != '\0', __FILE__, __LINE__, "hgemm_status_string(s)",
                     "status %s (%d) gives %s", check_status_name((hgemm_status)s), s,
                     str ? "\"\"" : "NULL");
    }
    for (int i = 0; i < STATUS_COUNT; i++)
        for (int j = i + 1; j < STATUS_COUNT; j++) {
            int distinct = seen[i] && seen[j] && strcmp(seen[i], seen[j]) != 0;
            check_record(distinct, __FILE__, __LINE__, "distinct status strings",
                         "status %d and %d both give \"%s\"", i, j, seen[i] ? seen[i] : "NULL");
        }
    CHECK_STR(hgemm_status_string(HGEMM_SUCCESS), "success");

    const int unknown[] = {UNKNOWN_STATUS, -1, STATUS_LAST + 1};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        const char *str = hgemm_status_string((hgemm_status)unknown[i]);
        check_record(str != NULL && str[0] != '\0', __FILE__, __LINE__,
                     "hgemm_status_string(unknown)", "status %d gives %s", unknown[i],
                     str ? "\"\"" : "NULL");
    }
}

static void test_kernel_names(void) {
    CHECK_STR(hgemm_kernel_name(HGEMM_KERNEL_AUTO), "auto");
    CHECK_STR(hgemm_kernel_name(HGEMM_KERNEL_AUTO_F16ACC), "auto-f16acc");
    CHECK_STR(hgemm_kernel_name((hgemm_kernel)UNKNOWN_KERNEL), NULL);
    CHECK_STR(hgemm_kernel_name((hgemm_kernel)-1), NULL);
    CHECK_STR(hgemm_kernel_name((hgemm_kernel)(HGEMM_KERNEL_AUTO_F16ACC + 1)), NULL);
    for (int i = 0; i < hgemm__kernel_count(); i++) {
        const hgemm_kernel_info *info = hgemm__kernel_at(i);
        if (!CHECK(info != NULL)) continue;
        CHECK_STR(hgemm_kernel_name(info->id), info->name);
    }
    for (int i = 0; i < ENUM_NAME_COUNT; i++)
        CHECK_STR(hgemm_kernel_name(ENUM_NAMES[i].id), ENUM_NAMES[i].name);
}

static void test_table(void) {
    const int count = hgemm__kernel_count();
    CHECK(count >= ENUM_NAME_COUNT); /* every enumerator has a row */
    CHECK(hgemm__kernel_at(-1) == NULL);
    CHECK(hgemm__kernel_at(count) == NULL);

    for (int i = 0; i < count; i++) {
        const hgemm_kernel_info *info = hgemm__kernel_at(i);
        if (!CHECK(info != NULL)) continue;
        char want[NAME_CAP];
        snprintf(want, sizeof want, "v%d", i);
        CHECK_I64(info->id, HGEMM_KERNEL_V0 + i); /* consecutive from V0 */
        CHECK_STR(info->name, want);              /* "v0".."vN" */
        CHECK(info->acc == HGEMM_ACC_F32 || info->acc == HGEMM_ACC_F16);
        CHECK(info->idea != NULL && info->idea[0] != '\0');
        CHECK(info->launch != NULL);
        CHECK(hgemm__kernel_find(info->id) == info);
        CHECK(hgemm__kernel_by_name(info->name) == info);
        for (int j = i + 1; j < count; j++) {
            const hgemm_kernel_info *other = hgemm__kernel_at(j);
            if (!CHECK(other != NULL)) continue;
            check_record(other->id != info->id, __FILE__, __LINE__, "unique ids",
                         "rows %d and %d share id %d", i, j, (int)info->id);
            check_record(strcmp(other->name, info->name) != 0, __FILE__, __LINE__,
                         "unique names", "rows %d and %d share name \"%s\"", i, j, info->name);
        }
    }
    for (int i = 0; i < ENUM_NAME_COUNT; i++) {
        const hgemm_kernel_info *info = hgemm__kernel_find(ENUM_NAMES[i].id);
        if (!CHECK(info != NULL)) continue;
        CHECK_STR(info->name, ENUM_NAMES[i].name);
        CHECK(hgemm__kernel_by_name(ENUM_NAMES[i].name) == info);
    }

    /* AUTO is not a row; unknown ids and names find nothing. */
    CHECK(hgemm__kernel_find(HGEMM_KERNEL_AUTO) == NULL);
    CHECK(hgemm__kernel_find((hgemm_kernel)UNKNOWN_KERNEL) == NULL);
    CHECK(hgemm__kernel_find((hgemm_kernel)-1) == NULL);
    CHECK(hgemm__kernel_find((hgemm_kernel)(HGEMM_KERNEL_V0 + count)) == NULL);
    const char *bad_names[] = {"", "V0", "v", "v00", "v0 ", " v0", "vx", "cublas32"};
    for (size_t i = 0; i < sizeof bad_names / sizeof bad_names[0]; i++)
        check_record(hgemm__kernel_by_name(bad_names[i]) == NULL, __FILE__, __LINE__,
                     "hgemm__kernel_by_name(bad)", "\"%s\" found a row", bad_names[i]);
    CHECK(hgemm__kernel_by_name(NULL) == NULL);
    /* the tools' lookup: any case, the auto rows, the ablations */
    CHECK(hgemm__row_by_any_name("V5") == hgemm__kernel_find(HGEMM_KERNEL_V5));
    CHECK(hgemm__row_by_any_name("Auto") == hgemm__auto_row(HGEMM_KERNEL_AUTO));
    CHECK(hgemm__row_by_any_name("auto-f16acc") == hgemm__auto_row(HGEMM_KERNEL_AUTO_F16ACC));
#ifdef HGEMM_LAB
    CHECK(hgemm__row_by_any_name("v8-noseam") == hgemm__experiment_by_name("v8-noseam"));
    CHECK(hgemm__row_by_any_name("V8-NOSEAM") == hgemm__experiment_by_name("v8-noseam"));
    CHECK(hgemm__row_by_any_name("v8-noseam") != NULL);
#else
    CHECK(hgemm__row_by_any_name("v8-noseam") == NULL); /* the lab's, not the library's */
#endif
    CHECK(hgemm__row_by_any_name("cublas32") == NULL);
    CHECK(hgemm__row_by_any_name("") == NULL);
    CHECK(hgemm__row_by_any_name(NULL) == NULL);
    char past_end[NAME_CAP];
    snprintf(past_end, sizeof past_end, "v%d", count);
    CHECK(hgemm__kernel_by_name(past_end) == NULL);
}

/* AUTO's choice for one shape: a row of the table that accumulates in fp32. */
static hgemm_kernel auto_for(int64_t m, int64_t n, int64_t k) {
    hgemm_kernel chosen = hgemm__auto_choice(m, n, k);
    const hgemm_kernel_info *info = hgemm__kernel_find(chosen);
    check_record(info != NULL && chosen != HGEMM_KERNEL_AUTO && info->acc == HGEMM_ACC_F32,
                 __FILE__, __LINE__, "auto picks an fp32 row", "%lld x %lld x %lld: kernel %d",
                 (long long)m, (long long)n, (long long)k, (int)chosen);
    return chosen;
}

static void test_auto(void) {
    hgemm_kernel large = hgemm__auto_kernel();
    const hgemm_kernel_info *info = hgemm__kernel_find(large);
    if (!CHECK(info != NULL)) return;
    CHECK_I64(info->acc, HGEMM_ACC_F32);
    /* The table (src/auto.c), on the suite's shapes it was derived from. */
    /* With a whole workspace, few long tiles go to V8's split-K instead of V9. */
    CHECK(hgemm__auto_prefers_split(256, 256, 65536, HGEMM_WORKSPACE_BYTES));
    CHECK(!hgemm__auto_prefers_split(256, 256, 65536, HGEMM_WORKSPACE_BYTES - 1)); /* too little */
    CHECK(!hgemm__auto_prefers_split(256, 256, 16384, HGEMM_WORKSPACE_BYTES));     /* k too short */
    CHECK(!hgemm__auto_prefers_split(64, 1024, 65536, HGEMM_WORKSPACE_BYTES));     /* skinny: V9 */
    CHECK(!hgemm__auto_prefers_split(512, 512, 131072, HGEMM_WORKSPACE_BYTES));    /* V8 already */
    CHECK_I64(auto_for(256, 256, 65536), HGEMM_KERNEL_V9);                        /* without one */
    CHECK_I64(auto_for(1, 4096, 4096), HGEMM_KERNEL_V9);
    CHECK_I64(auto_for(64, 28672, 4096), HGEMM_KERNEL_V9);
    CHECK_I64(auto_for(4096, 1, 4096), HGEMM_KERNEL_V9);
    CHECK_I64(auto_for(1, 1, 1), HGEMM_KERNEL_V9);
    CHECK_I64(auto_for(256, 256, 65536), HGEMM_KERNEL_V9);    /* few tiles, long k */
    CHECK_I64(auto_for(1024, 1024, 512), HGEMM_KERNEL_V9);    /* small: m * n * k = 2^29 */
    CHECK_I64(auto_for(768, 1024, 768), HGEMM_KERNEL_V9);     /* 1.125 * 2^29 */
    CHECK_I64(auto_for(640, 1280, 1024), HGEMM_KERNEL_V8);    /* 1.5625 * 2^29: above (run 78) */
    CHECK_I64(auto_for(1024, 1024, 1024), HGEMM_KERNEL_V8);
    CHECK_I64(auto_for(1024, 1024, 2048), HGEMM_KERNEL_V8);
    CHECK_I64(auto_for(777, 1032, 520), HGEMM_KERNEL_V8);    /* small and ragged (run 50) */
    CHECK_I64(auto_for(1000, 1000, 1000), HGEMM_KERNEL_V8);
    CHECK_I64(auto_for(1024, 1024, 1000), HGEMM_KERNEL_V8);
    CHECK_I64(auto_for(2048, 512, 1024), HGEMM_KERNEL_V8);
    CHECK_I64(auto_for(1024, 512, 256), HGEMM_KERNEL_V9);
    CHECK_I64(auto_for(1024, 1024, 32768), HGEMM_KERNEL_V8);  /* small but long k */
    CHECK_I64(auto_for(512, 512, 512), HGEMM_KERNEL_V8);      /* V8 1.26x there, V9 1.05x */
    CHECK_I64(auto_for(65, 4096, 4096), HGEMM_KERNEL_V8);
    /* batched decode: V9's 128-wide tile at 97..128 rows, n >= 4096, k in 2049..8192 (auto-table.md),
     * but V8 (swapped, v8_swap) against weights 8192..16384 wide */
    CHECK_I64(auto_for(128, 4096, 4096), HGEMM_KERNEL_V9);
    CHECK_I64(auto_for(128, 8191, 4096), HGEMM_KERNEL_V9);
    CHECK_I64(auto_for(128, 8192, 8192), HGEMM_KERNEL_V8);
    CHECK_I64(auto_for(128, 16384, 8192), HGEMM_KERNEL_V8);
    CHECK_I64(auto_for(128, 16385, 8192), HGEMM_KERNEL_V9);
    CHECK_I64(auto_for(128, 28672, 4096), HGEMM_KERNEL_V9);
    CHECK_I64(auto_for(97, 4096, 2049), HGEMM_KERNEL_V9);
    CHECK_I64(auto_for(96, 4096, 4096), HGEMM_KERNEL_V8);     /* 96 rows: V8 led on 4 of 5 shapes */
    CHECK_I64(auto_for(129, 4096, 4096), HGEMM_KERNEL_V8);
    CHECK_I64(auto_for(128, 4096, 14336), HGEMM_KERNEL_V8);   /* k past 8192 */
    CHECK_I64(auto_for(128, 4096, 2048), HGEMM_KERNEL_V8);    /* k at most 2048 */
    CHECK_I64(auto_for(128, 4095, 4096), HGEMM_KERNEL_V8);    /* n short of 4096 */
    CHECK_I64(auto_for(4096, 128, 4096), HGEMM_KERNEL_V8);    /* n the short side: not measured */
    CHECK_I64(auto_for(8192, 8192, 8192), HGEMM_KERNEL_V8);
    CHECK_I64(auto_for(8192, 8192, 8192), large);
    printf("test_strings_table: auto for large shapes is %s\n", info->name);
    /* AUTO_F16ACC: V7 where 256 x 256 tiles fill the GPU and k <= 16384. */
    CHECK_I64(hgemm__auto_f16acc_choice(8192, 8192, 8192), HGEMM_KERNEL_V7);
    CHECK_I64(hgemm__auto_f16acc_choice(2048, 4096, 14336), HGEMM_KERNEL_V7); /* 128 tiles */
    CHECK_I64(hgemm__auto_f16acc_choice(512, 28672, 4096), HGEMM_KERNEL_V7);  /* 224: 85% */
    CHECK_I64(hgemm__auto_f16acc_choice(2048, 6144, 4096), HGEMM_KERNEL_V8);  /* 192: 73% */
    CHECK_I64(hgemm__auto_f16acc_choice(2048, 2048, 2048), HGEMM_KERNEL_V8);  /* 64 tiles */
    CHECK_I64(hgemm__auto_f16acc_choice(8192, 8192, 32768), HGEMM_KERNEL_V8); /* long k */
    CHECK_I64(hgemm__auto_f16acc_choice(1, 4096, 4096), HGEMM_KERNEL_V9);
    CHECK_I64(hgemm__auto_f16acc_choice(1024, 1024, 512), HGEMM_KERNEL_V9);
    CHECK_I64(hgemm__auto_f16acc_choice(1024, 1024, 1024), HGEMM_KERNEL_V8); /* 16 tiles: AUTO's */
}

int main(void) {
    test_status_strings();
    test_kernel_names();
    test_table();
    test_auto();
    return check_finish();
}
