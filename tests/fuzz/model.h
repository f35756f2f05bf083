/*
 * model.h: a reference model of hgemm_nt's argument rules, written apart
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

#endif
