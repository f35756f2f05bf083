/*
 * test_torch_plan: prints python/hgemm/csrc/plan.h's hgemm_plan_make for views
 * read from stdin, one product a line:
 *     DIMS SHAPE... STRIDES...   (three times: a, b, out)
 * and writes one line each:
 *     ok SWAP M N K BATCH OP_A LDA STRIDE_A OP_B LDB STRIDE_B LDC STRIDE_C
 *     error CODE WHICH
 * python/tests/test_cpu_plan.py feeds it random views and compares every line
 * with python/hgemm/_layout.py's plan(), the ctypes path's copy.
 */
#include <stdio.h>

#include "../../python/hgemm/csrc/plan.h"

static int read_view(int64_t *shape, int64_t *strides, hgemm_view *v)
{
    if (scanf("%d", &v->dims) != 1) return 0;
    if (v->dims < 0 || v->dims > HGEMM_PLAN_MAX_DIMS) return -1;
    for (int i = 0; i < v->dims; i++)
        if (scanf("%ld", (long *)&shape[i]) != 1) return -1;
    for (int i = 0; i < v->dims; i++)
        if (scanf("%ld", (long *)&strides[i]) != 1) return -1;
    v->shape = shape;
    v->strides = strides;
    return 1;
}

int main(void)
{
    int64_t shapes[3][HGEMM_PLAN_MAX_DIMS], strides[3][HGEMM_PLAN_MAX_DIMS];
    for (;;) {
        hgemm_view v[3];
        for (int i = 0; i < 3; i++) {
            int r = read_view(shapes[i], strides[i], &v[i]);
            if (r == 0 && i == 0) return 0;
            if (r != 1) {
                fprintf(stderr, "test_torch_plan: malformed input line\n");
                return 2;
            }
        }
        hgemm_plan p = {0};
        int which = 0;
        hgemm_plan_error e = hgemm_plan_make(v[0], v[1], v[2], &p, &which);
        if (e != HGEMM_PLAN_OK)
            printf("error %d %d\n", (int)e, which);
        else
            printf("ok %d %ld %ld %ld %ld %d %ld %ld %d %ld %ld %ld %ld\n", p.swap, (long)p.m, (long)p.n,
                   (long)p.k, (long)p.batch, p.op_a, (long)p.lda, (long)p.stride_a, p.op_b, (long)p.ldb,
                   (long)p.stride_b, (long)p.ldc, (long)p.stride_c);
    }
}
