/*
 * tensor_map.c: TMA descriptors for 2-D fp16 matrices. The encoder lives in
 * the driver; it is reached once through the runtime's entry-point query, so
 * the library links the CUDA runtime only.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include "internal.h"

enum {
    ELEM_BYTES = 2,        /* fp16 */
    MAX_BOX = 256,         /* elements per box dimension */
    SWIZZLE_SPAN = 128,    /* bytes: a 128B-swizzled box row may not be wider */
    STRIDE_ALIGN = 16,     /* bytes: global strides are multiples of this */
};
static const uint64_t MAX_GLOBAL_DIM = 1ull << 32; /* elements per dimension */
static const uint64_t MAX_STRIDE = 1ull << 40;     /* bytes */

hgemm_status hgemm__tmap_check(const void *ptr, uint64_t rows, uint64_t cols, uint64_t ld,
                               uint32_t box_rows, uint32_t box_cols, int swizzle128) {
    if (ptr == NULL || rows == 0 || cols == 0 || ld < cols) return HGEMM_ERROR_INVALID_VALUE;
    if (box_rows == 0 || box_cols == 0 || box_rows > MAX_BOX || box_cols > MAX_BOX)
        return HGEMM_ERROR_INVALID_VALUE;
    if (((uintptr_t)ptr & 15u) || (ld % (STRIDE_ALIGN / ELEM_BYTES)) != 0) return HGEMM_ERROR_MISALIGNED;
    if ((box_cols * ELEM_BYTES) % 16) return HGEMM_ERROR_INVALID_VALUE;
    if (swizzle128 && box_cols * ELEM_BYTES > SWIZZLE_SPAN) return HGEMM_ERROR_INVALID_VALUE;
    if (rows > MAX_GLOBAL_DIM || cols > MAX_GLOBAL_DIM || ld >= MAX_STRIDE / ELEM_BYTES)
        return HGEMM_ERROR_NOT_SUPPORTED;
    return HGEMM_SUCCESS;
}

/* The driver's encoder, looked up once per process. */
static PFN_cuTensorMapEncodeTiled_v12000 encode_fn;
static cudaError_t encode_lookup_error;
static pthread_once_t encode_once = PTHREAD_ONCE_INIT;

static void lookup_encoder(void) {
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    cudaError_t err = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000,
                                                       cudaEnableDefault, &found);
    if (err == cudaSuccess && (found != cudaDriverEntryPointSuccess || fn == NULL))
        err = cudaErrorSymbolNotFound;
    encode_lookup_error = err;
    if (err == cudaSuccess) encode_fn = (PFN_cuTensorMapEncodeTiled_v12000)fn;
}

hgemm_status hgemm__tmap_encode(CUtensorMap *map, const void *ptr, uint64_t rows, uint64_t cols,
                                uint64_t ld, uint32_t box_rows, uint32_t box_cols, int swizzle128) {
    if (map == NULL) return HGEMM_ERROR_INVALID_VALUE;
    hgemm_status st = hgemm__tmap_check(ptr, rows, cols, ld, box_rows, box_cols, swizzle128);
    if (st != HGEMM_SUCCESS) return st;
    pthread_once(&encode_once, lookup_encoder);
    if (encode_fn == NULL) return hgemm__status_from_cuda(encode_lookup_error);
    cuuint64_t dims[2] = {cols, rows};                /* innermost first */
    cuuint64_t strides[1] = {ld * ELEM_BYTES};        /* bytes between rows */
    cuuint32_t box[2] = {box_cols, box_rows};
    cuuint32_t elem_strides[2] = {1, 1};
    memset(map, 0, sizeof *map);
    CUresult r = encode_fn(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, (void *)ptr, dims, strides, box,
                           elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                           swizzle128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
                           CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    return r == CUDA_SUCCESS ? HGEMM_SUCCESS : HGEMM_ERROR_CUDA;
}
