/*
 * checks.c: what every entry point asks of its memory arguments: the byte
 * spans of matrices and batches, overlaps and shared elements, alignment,
 * and the CUDA-side checks (the device, where a pointer's memory lives).
 */
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "internal.h"

/* Bytes spanned by a row-major (rows x cols) fp16 matrix with leading
 * dimension ld; 0 when it is empty; -1 when the span cannot exist in memory. */
int64_t hgemm__span_bytes(int64_t rows, int64_t cols, int64_t ld) {
    if (rows == 0 || cols == 0) return 0;
    if (cols > INT64_MAX / 2) return -1;
    if (rows - 1 > (INT64_MAX / 2 - cols) / ld) return -1;
    return ((rows - 1) * ld + cols) * 2;
}

int hgemm__overlaps(const void *a, int64_t a_bytes, const void *b, int64_t b_bytes) {
    if (a_bytes == 0 || b_bytes == 0) return 0;
    uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
    /* Distances, not ends: an end near the top of the address space would wrap. */
    return a0 <= b0 ? b0 - a0 < (uintptr_t)a_bytes : a0 - b0 < (uintptr_t)b_bytes;
}

/* Whether the row-major fp16 views X (xr x xc, leading dimension xld, at x)
 * and Y (yr x yc, yld, at y) share an element; both 16-byte aligned, spans
 * valid. Byte ranges that do not meet share nothing. Otherwise, when both
 * views step by the same leading dimension L (a single row steps by any), the
 * answer is exact. With Y's first element d elements after X's, Y's row i'
 * ([d + i'L, d + i'L + yc)) meets X's row i ([iL, iL + xc)) iff t = i - i'
 * has d - xc < tL < d + yc, and t ranges over [1 - yr, xr - 1]: take the
 * smallest t above the lower bound and test it against the other three.
 * Different leading dimensions are not decided: meeting ranges count as shared. */
int hgemm__shares_element(const void *x, int64_t xr, int64_t xc, int64_t xld, const void *y,
                          int64_t yr, int64_t yc, int64_t yld) {
    if (!hgemm__overlaps(x, hgemm__span_bytes(xr, xc, xld), y, hgemm__span_bytes(yr, yc, yld))) return 0;
    if (xr == 1) xld = yld;
    if (yr == 1) yld = xld;
    if (xld != yld) return 1;
    const int64_t L = xld;
    /* The ranges meet, so |y - x| < the larger span <= INT64_MAX bytes; even,
     * since both are 16-byte aligned. Every quantity below stays within
     * +-2^62 elements: no overflow. */
    const uintptr_t ux = (uintptr_t)x, uy = (uintptr_t)y;
    const int64_t d = uy >= ux ? (int64_t)((uy - ux) / 2) : -(int64_t)((ux - uy) / 2);
    const int64_t low = d - xc; /* tL must be above this */
    int64_t t = low / L;        /* floor(low / L) + 1: the smallest t with tL > low */
    if (t * L > low) t--;
    t++;
    if (t < 1 - yr) t = 1 - yr;
    return t <= xr - 1 && t * L < d + yc;
}

int hgemm__misaligned(const void *p) { return ((uintptr_t)p & 15u) != 0; }

/* A span of 2-byte elements (span_bytes, batch_span) in elements `scale`
 * times as wide (1; 2 for an fp32 C): -1 where it cannot exist. */
int64_t hgemm__scaled(int64_t bytes, int scale) {
    if (bytes < 0 || (scale == 2 && bytes > INT64_MAX / 2)) return -1;
    return bytes * scale;
}

/* Bytes from entry 0's first element to the end of entry batch-1 of a batch
 * of matrices each spanning `one` bytes, `stride` elements apart; -1 when
 * that cannot exist in memory. */
int64_t hgemm__batch_span(int64_t one, int64_t stride, int64_t batch) {
    if (one == 0 || batch == 0) return 0;
    /* (batch - 1) * stride * 2 <= INT64_MAX - one, without overflow */
    if (batch > 1 && stride > (INT64_MAX - one) / 2 / (batch - 1)) return -1;
    return (batch - 1) * stride * 2 + one;
}

/* The status for a failed CUDA call: "no device or driver" where that is
 * what CUDA says, otherwise a CUDA error. Only called with the error of the
 * library's own failed call, which is then the pending one: it is cleared,
 * being reported through the status. A good call never reads or clears the
 * caller's pending error (every status comes from a call's return value). */
hgemm_status hgemm__status_from_cuda(cudaError_t err) {
    if (err == cudaSuccess) return HGEMM_SUCCESS;
    (void)cudaGetLastError();
    switch (err) {
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorStubLibrary:
    case cudaErrorDevicesUnavailable:
    case cudaErrorInitializationError:
        return HGEMM_ERROR_NO_DEVICE;
    default:
        return HGEMM_ERROR_CUDA;
    }
}

/* The current device must exist and be compute capability 9.0. */
hgemm_status hgemm__check_device(int *dev) {
    int major = 0, minor = 0;
    cudaError_t err = cudaGetDevice(dev);
    if (err == cudaSuccess) err = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, *dev);
    if (err == cudaSuccess) err = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, *dev);
    if (err != cudaSuccess) return hgemm__status_from_cuda(err);
    if (major != 9 || minor != 0) return HGEMM_ERROR_ARCH_MISMATCH;
    return HGEMM_SUCCESS;
}

/* A byte the kernel reads or writes must be global memory of device `dev`:
 * cudaMalloc'd there, or managed. A host pointer (pinned or not) or another
 * device's memory would make TMA fault and leave the context broken. */
static hgemm_status check_pointer(const void *ptr, int dev) {
    struct cudaPointerAttributes attr;
    cudaError_t err = cudaPointerGetAttributes(&attr, ptr);
    /* CUDA before 11.0 answered a plain host pointer with InvalidValue;
     * later versions with success and cudaMemoryTypeUnregistered. */
    if (err == cudaErrorInvalidValue) {
        (void)cudaGetLastError(); /* this call's own error */
        return HGEMM_ERROR_INVALID_VALUE;
    }
    if (err != cudaSuccess) return hgemm__status_from_cuda(err);
    if (attr.type == cudaMemoryTypeManaged) return HGEMM_SUCCESS;
    if (attr.type == cudaMemoryTypeDevice && attr.device == dev) return HGEMM_SUCCESS;
    return HGEMM_ERROR_INVALID_VALUE;
}

/* The first and the last of `bytes` bytes from ptr (none when bytes is 0):
 * the bytes between are not asked about (a query per page would cost more
 * than the launch). */
hgemm_status hgemm__check_ends(const void *ptr, int64_t bytes, int dev) {
    if (bytes <= 0) return HGEMM_SUCCESS;
    hgemm_status st = check_pointer(ptr, dev);
    if (st == HGEMM_SUCCESS && bytes > 1)
        st = check_pointer((const void *)((uintptr_t)ptr + (uintptr_t)(bytes - 1)), dev);
    return st;
}

