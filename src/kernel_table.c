/*
 * kernel_table.c: the one kernel table (rows of hgemm_kernel_info, internal.h)
 * and its lookups by index, id and name. AUTO's choice by shape, its rows and
 * dispatch: api.c.
 */
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

/* The one kernel table: dispatch, the CLI, the tests and the benchmark read it. */
static const hgemm_kernel_info kernel_table[] = {
    {HGEMM_KERNEL_V0, "v0", HGEMM_ACC_F32, "TMA loads, ldmatrix + mma.sync from registers", hgemm__launch_v0, hgemm__supports_v0, 0, 0},
    {HGEMM_KERNEL_V1, "v1", HGEMM_ACC_F32, "WGMMA from 128B-swizzled shared memory", hgemm__launch_v1, hgemm__supports_v1, 0, 0},
    {HGEMM_KERNEL_V2, "v2", HGEMM_ACC_F32, "a 4-stage ring of TMA loads ahead of WGMMA", hgemm__launch_v2, hgemm__supports_v2, 0, 0},
    {HGEMM_KERNEL_V3, "v3", HGEMM_ACC_F32, "warp specialization: producer warp, consumer warpgroup", hgemm__launch_v3, hgemm__supports_v3, 0, 0},
    {HGEMM_KERNEL_V4, "v4", HGEMM_ACC_F32, "two consumer warpgroups, pipeline state, raster groups", hgemm__launch_v4, hgemm__supports_v4, 0, 0},
    {HGEMM_KERNEL_V5, "v5", HGEMM_ACC_F32, "one WGMMA group kept in flight, late stage release", hgemm__launch_v5, hgemm__supports_v5, 0, 0},
    {HGEMM_KERNEL_V6, "v6", HGEMM_ACC_F16, "256x256 tile, four consumers, fp16 accumulation, TMA store", hgemm__launch_v6, hgemm__supports_v6, 0, 0},
    {HGEMM_KERNEL_V7, "v7", HGEMM_ACC_F16, "V6 in persistent blocks: the next tile loads during the epilogue", hgemm__launch_v7, hgemm__supports_v7, 0, 0},
    {HGEMM_KERNEL_V8, "v8", HGEMM_ACC_F32, "fp32: persistent, setmaxnreg, 2-block clusters sharing B by multicast", hgemm__launch_v8, hgemm__supports_v8, 1, 1},
    {HGEMM_KERNEL_V9, "v9", HGEMM_ACC_F32, "m or n <= 64: the long operand on WGMMA's M, k split over a cluster, reduced in DSMEM", hgemm__launch_v9, hgemm__supports_v9, 1, 0},
};

enum { KERNEL_COUNT = (int)(sizeof(kernel_table) / sizeof(kernel_table[0])) };

/* Ablations live in the lab (lab/lab.c, a build configured with
 * -DHGEMM_LAB=ON); the library alone has none. */
#ifndef HGEMM_LAB
int hgemm__experiment_count(void) { return 0; }
const hgemm_kernel_info *hgemm__experiment_at(int i) { (void)i; return NULL; }
const hgemm_kernel_info *hgemm__experiment_by_name(const char *name) { (void)name; return NULL; }
#endif

int hgemm__kernel_count(void) { return KERNEL_COUNT; }

const hgemm_kernel_info *hgemm__kernel_at(int i) {
    return (i >= 0 && i < KERNEL_COUNT) ? &kernel_table[i] : NULL;
}

const hgemm_kernel_info *hgemm__kernel_find(hgemm_kernel id) {
    for (int i = 0; i < KERNEL_COUNT; i++)
        if (kernel_table[i].id == id) return &kernel_table[i];
    return NULL;
}

const hgemm_kernel_info *hgemm__kernel_by_name(const char *name) {
    if (name == NULL) return NULL;
    for (int i = 0; i < KERNEL_COUNT; i++)
        if (strcmp(kernel_table[i].name, name) == 0) return &kernel_table[i];
    return NULL;
}

const hgemm_kernel_info *hgemm__row_by_any_name(const char *name) {
    if (name == NULL) return NULL;
    if (strcasecmp(name, "auto") == 0) return hgemm__auto_row(HGEMM_KERNEL_AUTO);
    if (strcasecmp(name, "auto-f16acc") == 0) return hgemm__auto_row(HGEMM_KERNEL_AUTO_F16ACC);
    for (int i = 0; i < KERNEL_COUNT; i++)
        if (strcasecmp(kernel_table[i].name, name) == 0) return &kernel_table[i];
    for (int i = 0; i < hgemm__experiment_count(); i++)
        if (strcasecmp(hgemm__experiment_at(i)->name, name) == 0) return hgemm__experiment_at(i);
    return NULL;
}
