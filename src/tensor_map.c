/*
 * tensor_map.c: TMA descriptors for 2-D fp16, bf16 and fp8 matrices, and
 * for batches of them as 3-D tensors. The encoder lives in
 * the driver; it is reached through the runtime's entry-point query, so the
 * library links the CUDA runtime only. A found encoder is kept for the life
 * of the process; a failed lookup is not, and the next call tries again.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include "hw.h"
#include "internal.h"

/* Every map's L2 promotion: 256 bytes, unless a diagnostic build says
 * otherwise (CMake's HGEMM_TMAP_L2_PROMOTION: 128, or 0 for none). */
#if !defined(HGEMM_TMAP_L2_PROMOTION) || HGEMM_TMAP_L2_PROMOTION == 256
#define TMAP_L2_PROMOTION CU_TENSOR_MAP_L2_PROMOTION_L2_256B
#elif HGEMM_TMAP_L2_PROMOTION == 128
#define TMAP_L2_PROMOTION CU_TENSOR_MAP_L2_PROMOTION_L2_128B
#elif HGEMM_TMAP_L2_PROMOTION == 0
#define TMAP_L2_PROMOTION CU_TENSOR_MAP_L2_PROMOTION_NONE
#else
#error "HGEMM_TMAP_L2_PROMOTION: 256, 128 or 0"
#endif

enum { ELEM_BYTES = 2 }; /* fp16 and bf16; the fp8 types are one byte */

static unsigned elem_bytes(hgemm_dtype dtype) {
    return dtype == HGEMM_DTYPE_E4M3 || dtype == HGEMM_DTYPE_E5M2 ? 1u : ELEM_BYTES;
}

/* cuTensorMapEncodeTiled's limits on the tensor itself (hw.h): each dimension
 * at most 2^32 elements, the row stride below 2^40 bytes. */
static int tensor_fits(uint64_t rows, uint64_t cols, uint64_t ld, unsigned eb) {
    return rows <= TMA_MAX_GLOBAL_DIM && cols <= TMA_MAX_GLOBAL_DIM && ld < TMA_MAX_STRIDE / eb;
}

static hgemm_status check_bytes(const void *ptr, uint64_t rows, uint64_t cols, uint64_t ld, uint32_t box_rows,
                                uint32_t box_cols, int swizzle128, unsigned eb) {
    if (ptr == NULL || rows == 0 || cols == 0 || ld < cols) return HGEMM_ERROR_INVALID_VALUE;
    if (box_rows == 0 || box_cols == 0 || box_rows > TMA_MAX_BOX_DIM || box_cols > TMA_MAX_BOX_DIM)
        return HGEMM_ERROR_INVALID_VALUE;
    if ((uintptr_t)ptr % TMA_ALIGN || (ld % (TMA_ALIGN / eb)) != 0) return HGEMM_ERROR_MISALIGNED;
    if ((box_cols * eb) % TMA_ALIGN) return HGEMM_ERROR_INVALID_VALUE;
    if (swizzle128 && box_cols * eb > SW128_ROW_BYTES) return HGEMM_ERROR_INVALID_VALUE;
    return tensor_fits(rows, cols, ld, eb) ? HGEMM_SUCCESS : HGEMM_ERROR_NOT_SUPPORTED;
}

hgemm_status hgemm__tmap_check(const void *ptr, uint64_t rows, uint64_t cols, uint64_t ld,
                               uint32_t box_rows, uint32_t box_cols, int swizzle128) {
    return check_bytes(ptr, rows, cols, ld, box_rows, box_cols, swizzle128, ELEM_BYTES);
}

/* A batch as the third dimension: at most 2^32 entries, the entry stride
 * below 2^40 bytes. */
static int batch_fits(int64_t batch, int64_t stride, unsigned eb) {
    return batch <= 1 || ((uint64_t)batch <= TMA_MAX_GLOBAL_DIM && (uint64_t)stride < TMA_MAX_STRIDE / eb);
}

/* The TMA limits a valid problem can meet (api.c has checked everything else,
 * and that m, n, k fit int32): the leading dimensions and the batch. The
 * operands as stored: (m, k) or (k, m) for A, (n, k) or (k, n) for B; a
 * separate C input (m, n) at ldc_in, loaded through its own map whoever
 * stores C. */
hgemm_status hgemm__tmap_supports(const hgemm_problem *p, int c_by_tma) {
    if (p->m < 0 || p->n < 0 || p->k < 0 || p->lda < 0 || p->ldb < 0 || p->ldc < 0 ||
        p->stride_a < 0 || p->stride_b < 0 || p->stride_c < 0 || (p->C_in != NULL && p->ldc_in < 0))
        return HGEMM_ERROR_INVALID_VALUE;
    const uint64_t m = (uint64_t)p->m, n = (uint64_t)p->n, k = (uint64_t)p->k;
    int fits = tensor_fits(p->a_mn ? k : m, p->a_mn ? m : k, (uint64_t)p->lda, ELEM_BYTES) &&
               tensor_fits(p->b_mn ? k : n, p->b_mn ? n : k, (uint64_t)p->ldb, ELEM_BYTES) &&
               batch_fits(p->batch, p->stride_a, ELEM_BYTES) && batch_fits(p->batch, p->stride_b, ELEM_BYTES);
    if (c_by_tma)
        fits = fits && tensor_fits(m, n, (uint64_t)p->ldc, ELEM_BYTES) && batch_fits(p->batch, p->stride_c, ELEM_BYTES);
    if (p->C_in != NULL)
        fits = fits && tensor_fits(m, n, (uint64_t)p->ldc_in, ELEM_BYTES) && batch_fits(p->batch, p->stride_c, ELEM_BYTES);
    return fits ? HGEMM_SUCCESS : HGEMM_ERROR_NOT_SUPPORTED;
}

/* The driver's encoder. Once found it never changes, so readers load it
 * without a lock; a lookup happens under the mutex, and only while none has
 * succeeded, so a failure (no driver yet, say) is retried by the next call. */
static _Atomic(PFN_cuTensorMapEncodeTiled_v12000) encode_fn;
static atomic_long lookup_attempts;
static pthread_mutex_t lookup_mutex = PTHREAD_MUTEX_INITIALIZER;

static cudaError_t lookup_encoder(PFN_cuTensorMapEncodeTiled_v12000 *out) {
    *out = atomic_load_explicit(&encode_fn, memory_order_acquire);
    if (*out != NULL) return cudaSuccess;
    if (pthread_mutex_lock(&lookup_mutex) != 0) return cudaErrorUnknown;
    cudaError_t err = cudaSuccess;
    *out = atomic_load_explicit(&encode_fn, memory_order_acquire);
    if (*out == NULL) { /* no other thread has found it meanwhile */
        void *fn = NULL;
        enum cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
        atomic_fetch_add_explicit(&lookup_attempts, 1, memory_order_relaxed);
        err = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000,
                                               cudaEnableDefault, &found);
        if (err == cudaSuccess && (found != cudaDriverEntryPointSuccess || fn == NULL))
            err = cudaErrorSymbolNotFound;
        if (err == cudaSuccess) {
            *out = (PFN_cuTensorMapEncodeTiled_v12000)fn;
            atomic_store_explicit(&encode_fn, *out, memory_order_release);
        }
    }
    pthread_mutex_unlock(&lookup_mutex);
    return err;
}

long hgemm__tmap_lookup_attempts(void) {
    return atomic_load_explicit(&lookup_attempts, memory_order_relaxed);
}

/* rank 2: one matrix; rank 3: `count` of them, `stride` elements apart. */
static hgemm_status encode_rank(CUtensorMap *map, hgemm_dtype dtype, unsigned rank, const void *ptr,
                                uint64_t rows, uint64_t cols, uint64_t ld, uint64_t count,
                                uint64_t stride, uint32_t box_rows, uint32_t box_cols, int swizzle128) {
    if (map == NULL || (dtype != HGEMM_DTYPE_F16 && dtype != HGEMM_DTYPE_BF16 && elem_bytes(dtype) != 1))
        return HGEMM_ERROR_INVALID_VALUE;
    const unsigned eb = elem_bytes(dtype);
    hgemm_status st = check_bytes(ptr, rows, cols, ld, box_rows, box_cols, swizzle128, eb);
    if (st != HGEMM_SUCCESS) return st;
    if (count == 0) return HGEMM_ERROR_INVALID_VALUE;
    if (count > 1 && (stride % (TMA_ALIGN / eb) != 0)) return HGEMM_ERROR_MISALIGNED;
    if (!batch_fits((int64_t)count, (int64_t)stride, eb)) return HGEMM_ERROR_NOT_SUPPORTED;
    PFN_cuTensorMapEncodeTiled_v12000 encode = NULL;
    cudaError_t err = lookup_encoder(&encode);
    if (err != cudaSuccess) return hgemm__status_from_cuda(err);
    /* A single entry's third stride is never followed; the row stride is a
     * valid value for it. */
    if (count == 1) stride = ld;
    cuuint64_t dims[3] = {cols, rows, count};                           /* innermost first */
    cuuint64_t strides[2] = {ld * eb, stride * eb};                     /* bytes between rows, entries */
    cuuint32_t box[3] = {box_cols, box_rows, 1};
    cuuint32_t elem_strides[3] = {1, 1, 1};
    memset(map, 0, sizeof *map);
    /* fp8 travels as bytes: TMA only moves it */
    const CUtensorMapDataType type = eb == 1                     ? CU_TENSOR_MAP_DATA_TYPE_UINT8
                                     : dtype == HGEMM_DTYPE_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                                                 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    const CUtensorMapSwizzle swizzle = swizzle128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE;
    /* a second try where the driver finds no context current: a thread whose
     * first CUDA work this is (hgemm__bind_context binds the runtime's) */
    CUresult r = CUDA_ERROR_INVALID_CONTEXT;
    for (int attempt = 0; attempt < 2 && r == CUDA_ERROR_INVALID_CONTEXT; attempt++) {
        if (attempt > 0 && !hgemm__bind_context()) break;
        r = encode(map, type, rank, (void *)ptr, dims, strides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                   swizzle, TMAP_L2_PROMOTION, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    }
    return r == CUDA_SUCCESS ? HGEMM_SUCCESS : HGEMM_ERROR_CUDA;
}

hgemm_status hgemm__tmap_encode(CUtensorMap *map, const void *ptr, uint64_t rows, uint64_t cols,
                                uint64_t ld, uint32_t box_rows, uint32_t box_cols, int swizzle128) {
    return encode_rank(map, HGEMM_DTYPE_F16, 2, ptr, rows, cols, ld, 1, 0, box_rows, box_cols, swizzle128);
}

hgemm_status hgemm__tmap_encode_dt(CUtensorMap *map, hgemm_dtype dtype, const void *ptr, uint64_t rows,
                                   uint64_t cols, uint64_t ld, uint32_t box_rows, uint32_t box_cols,
                                   int swizzle128) {
    return encode_rank(map, dtype, 2, ptr, rows, cols, ld, 1, 0, box_rows, box_cols, swizzle128);
}

hgemm_status hgemm__tmap_encode_batch(CUtensorMap *map, hgemm_dtype dtype, const void *ptr,
                                      uint64_t rows, uint64_t cols, uint64_t ld, uint64_t count,
                                      uint64_t stride, uint32_t box_rows, uint32_t box_cols,
                                      int swizzle128) {
    return encode_rank(map, dtype, 3, ptr, rows, cols, ld, count, stride, box_rows, box_cols, swizzle128);
}
