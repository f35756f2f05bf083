/*
 * lab/v9_lab.c: V9's ablations (lab/lab.c's rows; built with -DHGEMM_LAB=ON
 * only): V9 with one idea taken out, or a deeper stage, each the table's V9
 * under a variant (hgemm_v9_variant); what each measured is in
 * docs/notes/v9-log.md.
 */
#include "lab.h"

/* The table's variant: no knob turned. */
static const hgemm_v9_variant V9_TABLE = {0, 0, 0, 0, 0, 0, 0};

/* A row's launcher: the table's V9 with one knob set. */
#define V9_LAB(name, knob, value)                                                           \
    hgemm_status hgemm__launch_v9_##name(const hgemm_problem *p, cudaStream_t stream) {     \
        hgemm_v9_variant v = V9_TABLE;                                                      \
        v.knob = value;                                                                     \
        return hgemm__v9_run(p, &v, stream);                                                \
    }

V9_LAB(nosplit, no_split, 1)
V9_LAB(noswap, no_swap, 1)
V9_LAB(deep, deep, 1)
V9_LAB(shallow, deep, -1)
V9_LAB(k128, kb, 2)
V9_LAB(norot, no_rotate, 1)
V9_LAB(scalar, no_stage, 1)
/* Programmatic dependent launch: without the attribute (v9-nopdl: V9 through
 * run 79), or triggering the next kernel right after each block's wait
 * (v9-pdl-start; the table's V9 triggers after its last load). */
V9_LAB(nopdl, pdl, HGEMM_PDL_OFF)
V9_LAB(pdl_start, pdl, HGEMM_PDL_START)
