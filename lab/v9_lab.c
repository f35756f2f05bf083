/*
 * lab/v9_lab.c: V9's ablations (lab/lab.c's rows; built with -DHGEMM_LAB=ON
 * only): V9 with one idea taken out, or a deeper stage, each the table's V9
 * under a variant (hgemm_v9_variant); what each measured is in
 * docs/notes/v9-log.md.
 */
#include "lab.h"

/* The table's variant: no knob turned. */
static const hgemm_v9_variant V9_TABLE = {0, 0, 0, 0, 0, 0, 0};

hgemm_status hgemm__launch_v9_nosplit(const hgemm_problem *p, cudaStream_t stream) {
    hgemm_v9_variant v = V9_TABLE;
    v.no_split = 1;
    return hgemm__v9_run(p, &v, stream);
}

hgemm_status hgemm__launch_v9_noswap(const hgemm_problem *p, cudaStream_t stream) {
    hgemm_v9_variant v = V9_TABLE;
    v.no_swap = 1;
    return hgemm__v9_run(p, &v, stream);
}

hgemm_status hgemm__launch_v9_deep(const hgemm_problem *p, cudaStream_t stream) {
    hgemm_v9_variant v = V9_TABLE;
    v.deep = 1;
    return hgemm__v9_run(p, &v, stream);
}

hgemm_status hgemm__launch_v9_shallow(const hgemm_problem *p, cudaStream_t stream) {
    hgemm_v9_variant v = V9_TABLE;
    v.deep = -1;
    return hgemm__v9_run(p, &v, stream);
}

hgemm_status hgemm__launch_v9_k128(const hgemm_problem *p, cudaStream_t stream) {
    hgemm_v9_variant v = V9_TABLE;
    v.kb = 2;
    return hgemm__v9_run(p, &v, stream);
}

hgemm_status hgemm__launch_v9_norot(const hgemm_problem *p, cudaStream_t stream) {
    hgemm_v9_variant v = V9_TABLE;
    v.no_rotate = 1;
    return hgemm__v9_run(p, &v, stream);
}

hgemm_status hgemm__launch_v9_scalar(const hgemm_problem *p, cudaStream_t stream) {
    hgemm_v9_variant v = V9_TABLE;
    v.no_stage = 1;
    return hgemm__v9_run(p, &v, stream);
}

/* V9 with one way of programmatic dependent launch (HGEMM_PDL_*): without
 * the attribute (v9-nopdl: V9 through run 79), or triggering the next kernel
 * right after each block's wait (v9-pdl-start; the table's V9 triggers after
 * its last load). */
hgemm_status hgemm__launch_v9_nopdl(const hgemm_problem *p, cudaStream_t stream) {
    hgemm_v9_variant v = V9_TABLE;
    v.pdl = HGEMM_PDL_OFF;
    return hgemm__v9_run(p, &v, stream);
}

hgemm_status hgemm__launch_v9_pdl_start(const hgemm_problem *p, cudaStream_t stream) {
    hgemm_v9_variant v = V9_TABLE;
    v.pdl = HGEMM_PDL_START;
    return hgemm__v9_run(p, &v, stream);
}
