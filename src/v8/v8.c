/*
 * v8/v8.c: V8's entry points: the table's launcher (hgemm__launch_v8) and a
 * launch under a variant (hgemm__v8_run), dispatched to the element type
 * and form's build (src/v8/<dtype>_<form>.cu).
 */
#include "v8/plan.h"

/* One element type and form's builds (src/v8/launch.cuh, V8_INSTANCE). */
typedef hgemm_status (*v8_entry)(const hgemm_problem *p, const hgemm_v8_variant *v, cudaStream_t stream);
hgemm_status hgemm__v8_f16_nt(const hgemm_problem *p, const hgemm_v8_variant *v, cudaStream_t stream);
hgemm_status hgemm__v8_f16_tt(const hgemm_problem *p, const hgemm_v8_variant *v, cudaStream_t stream);
hgemm_status hgemm__v8_f16_nn(const hgemm_problem *p, const hgemm_v8_variant *v, cudaStream_t stream);
hgemm_status hgemm__v8_f16_tn(const hgemm_problem *p, const hgemm_v8_variant *v, cudaStream_t stream);
hgemm_status hgemm__v8_bf16_nt(const hgemm_problem *p, const hgemm_v8_variant *v, cudaStream_t stream);
hgemm_status hgemm__v8_bf16_tt(const hgemm_problem *p, const hgemm_v8_variant *v, cudaStream_t stream);
hgemm_status hgemm__v8_bf16_nn(const hgemm_problem *p, const hgemm_v8_variant *v, cudaStream_t stream);
hgemm_status hgemm__v8_bf16_tn(const hgemm_problem *p, const hgemm_v8_variant *v, cudaStream_t stream);

/* [bf16][a_mn][b_mn] */
static const v8_entry entries[2][2][2] = {
    {{hgemm__v8_f16_nt, hgemm__v8_f16_nn}, {hgemm__v8_f16_tt, hgemm__v8_f16_tn}},
    {{hgemm__v8_bf16_nt, hgemm__v8_bf16_nn}, {hgemm__v8_bf16_tt, hgemm__v8_bf16_tn}},
};

hgemm_status hgemm__v8_run(const hgemm_problem *p, const hgemm_v8_variant *v, cudaStream_t stream) {
    return entries[p->dtype == HGEMM_DTYPE_BF16][p->a_mn != 0][p->b_mn != 0](p, v, stream);
}

hgemm_status hgemm__launch_v8(const hgemm_problem *p, cudaStream_t stream) {
    static const hgemm_v8_variant table = {0, 0, 0, 0};
    return hgemm__v8_run(p, &table, stream);
}
