/*
 * add.h: the sum of (b)'s copy-engine path (src/nccl/add.cu). NCCL has no
 * reduction on copy engines, so the partials arrive as plain blocks and
 * libhgemm_nccl adds them to C itself.
 */
#ifndef HGEMM_NCCL_ADD_H
#define HGEMM_NCCL_ADD_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* On `stream`: C (rows x cols fp16, leading dimension ldc) = round_fp16(C +
 * the sum over p < blocks, p != skip, of R_p), summed in fp32 in the order
 * C, R_0, R_1, ...; R_p (rows x cols, leading dimension ldr) starts p *
 * block elements after R. C and R 16-byte aligned, ldc and ldr multiples of 8
 * (the library's rules). No element outside C's rows x cols is written.
 * Returns the launch's own status (cudaLaunchKernel), never a pending one;
 * rows or cols <= 0, or no block to add, is a no-op. */
cudaError_t hgemm_nccl_add_blocks(void *C, int64_t ldc, const void *R, int64_t block, int64_t ldr,
                                  int blocks, int skip, int64_t rows, int64_t cols,
                                  cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* HGEMM_NCCL_ADD_H */
