/*
 * hgemm: fp16 matrix multiply for NVIDIA Hopper (sm_90a).
 *
 *     C[m,n] = alpha * sum_k A[m,k] * B[n,k] + beta * C[m,n]
 *
 * The one layout hgemm serves ("NT"): A (m x k), B (n x k) and C (m x n) are
 * row-major IEEE fp16 matrices, so both operands are contiguous along k (the
 * layout of `x @ W.T` in PyTorch). Leading dimensions are in elements.
 *
 * Rules:
 *   - any m, n, k >= 0; m == 0 or n == 0 does nothing; k == 0 gives C = beta*C;
 *   - no element of C outside the m x n region is ever written;
 *   - beta == 0 never reads C; alpha and beta are applied in fp32;
 *   - pointers must be 16-byte aligned and leading dimensions multiples of 8;
 *   - every argument is checked before any CUDA call; the library never exits;
 *   - the call is asynchronous on `stream`, like cuBLAS, and thread-safe.
 */
#ifndef HGEMM_H
#define HGEMM_H

#include <stdint.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum hgemm_status {
    HGEMM_SUCCESS = 0,
    HGEMM_ERROR_INVALID_VALUE,  /* negative size, NULL with nonzero size,
                                   ld too small, unknown kernel, C overlaps A/B */
    HGEMM_ERROR_MISALIGNED,     /* pointer not 16-byte aligned, ld % 8 != 0 */
    HGEMM_ERROR_NOT_SUPPORTED,  /* valid request this kernel cannot serve */
    HGEMM_ERROR_NO_DEVICE,      /* no CUDA device or driver */
    HGEMM_ERROR_ARCH_MISMATCH,  /* current device is not compute capability 9.0 */
    HGEMM_ERROR_CUDA            /* a CUDA call failed */
} hgemm_status;

typedef enum hgemm_kernel {
    HGEMM_KERNEL_AUTO = 0,      /* fastest kernel that accumulates in fp32 */
    HGEMM_KERNEL_V0, HGEMM_KERNEL_V1, HGEMM_KERNEL_V2, HGEMM_KERNEL_V3,
    HGEMM_KERNEL_V4, HGEMM_KERNEL_V5, HGEMM_KERNEL_V6,
    HGEMM_KERNEL_V7, HGEMM_KERNEL_V8
    /* later versions append here; never renumber */
} hgemm_kernel;

/* C = alpha * A * B^T + beta * C on `stream` with the chosen kernel. */
hgemm_status hgemm_nt(hgemm_kernel kernel, int64_t m, int64_t n, int64_t k,
                      float alpha, const void *A, int64_t lda,
                      const void *B, int64_t ldb,
                      float beta, void *C, int64_t ldc,
                      cudaStream_t stream);

/* A short English sentence for a status; never NULL. */
const char *hgemm_status_string(hgemm_status status);

/* The kernel's short name ("v6"; "auto" for HGEMM_KERNEL_AUTO), NULL if unknown. */
const char *hgemm_kernel_name(hgemm_kernel kernel);

#ifdef __cplusplus
}
#endif

#endif /* HGEMM_H */
