/*
 * model.h: a reference model of hgemm_nt's and hgemm_gemm's rules, written apart
 * from src/api.c from the rules as include/hgemm.h states them, in 128-bit
 * arithmetic: the fuzz target asserts that the library agrees with it.
 */
#ifndef HGEMM_FUZZ_MODEL_H
#define HGEMM_FUZZ_MODEL_H

#include <stdint.h>

#include "internal.h"

/* hgemm__validate's status. */
hgemm_status model_validate(hgemm_kernel kernel, int64_t m, int64_t n, int64_t k, const void *A,
                            int64_t lda, const void *B, int64_t ldb, const void *C, int64_t ldc);

/* hgemm__preflight's status: validate, then what the chosen kernel can serve. */
hgemm_status model_preflight(hgemm_kernel kernel, int64_t m, int64_t n, int64_t k, float alpha,
                             const void *A, int64_t lda, const void *B, int64_t ldb, const void *C,
                             int64_t ldc);

/* hgemm_gemm's status up to its first CUDA call, with options `o` (NULL:
 * none): *to_device is set when the call would go on to the device (a
 * valid, servable, nonempty request), and the status is then SUCCESS.
 * Which kernel serves which element type, form and batch is model.c's
 * serves_forms and serves_batch (V9's reach: V9_FORMS). */
hgemm_status model_gemm(hgemm_kernel kernel, int dtype, int op_a, int op_b, int64_t m, int64_t n,
                        int64_t k, float alpha, const void *A, int64_t lda, int64_t stride_a,
                        const void *B, int64_t ldb, int64_t stride_b, const void *C, int64_t ldc,
                        int64_t stride_c, int64_t batch, const hgemm_nt_options *o, int *to_device);

/* hgemm_grouped's status up to its first CUDA call (*to_device as model_gemm's). */
hgemm_status model_grouped(hgemm_kernel kernel, int dtype, int op_b, int64_t rows, int64_t n, int64_t k,
                           int64_t groups, const void *offs, const void *A, int64_t lda, const void *B,
                           int64_t ldb, int64_t stride_b, const void *C, int64_t ldc, const hgemm_options *o,
                           int *to_device);

/* hgemm_gemm_fp8's status up to its first CUDA call (*to_device as model_gemm's). */
hgemm_status model_fp8(hgemm_kernel kernel, int at, int bt, int ct, int mode, int64_t m, int64_t n, int64_t k,
                       const void *A, int64_t lda, const void *B, int64_t ldb, const void *sa, const void *sb,
                       const void *C, int64_t ldc, const hgemm_options *o, int *to_device);
/* hgemm_grouped_fp8's status up to its first CUDA call (*to_device as model_gemm's). */
hgemm_status model_grouped_fp8(hgemm_kernel kernel, int at, int bt, int ct, int mode, int64_t rows, int64_t n,
                               int64_t k, int64_t groups, const void *offs, const void *A, int64_t lda, const void *B,
                               int64_t ldb, int64_t stride_b, const void *sa, const void *sb, const void *C,
                               int64_t ldc, const hgemm_options *o, int *to_device);

#endif
