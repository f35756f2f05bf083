/*
 * library_ws.c: the workspace hgemm owns for calls that bring none (the
 * header's "The library's workspace"). One per (device, stream): the first
 * V8 call on a stream allocates HGEMM_WORKSPACE_BYTES and queues its zero
 * fill on that stream, so calls on different streams never share one and
 * calls on one stream run in order. Streams are told apart by
 * cudaStreamGetId, which no later stream reuses.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "internal.h"

typedef struct lib_ws {
    int device;
    unsigned long long stream_id;
    void *ptr;
} lib_ws;

static pthread_mutex_t table_mutex = PTHREAD_MUTEX_INITIALIZER;
static lib_ws table[HGEMM_LIBRARY_WORKSPACE_STREAMS];
static int used;
static atomic_int disabled;

hgemm_status hgemm_set_library_workspace(int enabled) {
    atomic_store(&disabled, !enabled);
    return HGEMM_SUCCESS;
}

int hgemm__library_workspace_on(void) { return !atomic_load(&disabled); }

void *hgemm__library_workspace(int device, cudaStream_t stream) {
    if (atomic_load(&disabled)) return NULL;
    /* A stream being captured gets none: cudaStreamGetId there fails and
     * invalidates the capture, and so would a cudaMalloc. */
    enum cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(stream, &capture) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    if (capture != cudaStreamCaptureStatusNone) return NULL;
    unsigned long long id = 0;
    if (cudaStreamGetId(stream, &id) != cudaSuccess) {
        (void)cudaGetLastError(); /* not sticky: the call runs without */
        return NULL;
    }
    void *found = NULL;
    if (pthread_mutex_lock(&table_mutex) != 0) return NULL;
    for (int i = 0; i < used && found == NULL; i++)
        if (table[i].device == device && table[i].stream_id == id) found = table[i].ptr;
    if (found == NULL && used < HGEMM_LIBRARY_WORKSPACE_STREAMS) {
        /* Relaxed capture mode for this thread, as an allocator does: a
         * cudaMalloc must not end another thread's graph capture. */
        enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
        void *ptr = NULL;
        if (cudaThreadExchangeStreamCaptureMode(&mode) == cudaSuccess) {
            if (cudaMalloc(&ptr, HGEMM_WORKSPACE_BYTES) != cudaSuccess) ptr = NULL;
            (void)cudaThreadExchangeStreamCaptureMode(&mode);
        }
        /* the fill is queued on the stream */
        if (ptr != NULL && cudaMemsetAsync(ptr, 0, HGEMM_WORKSPACE_BYTES, stream) != cudaSuccess) {
            (void)cudaFree(ptr);
            ptr = NULL;
        }
        if (ptr != NULL) {
            table[used].device = device;
            table[used].stream_id = id;
            table[used].ptr = ptr;
            used++;
            found = ptr;
        } else {
            (void)cudaGetLastError(); /* out of memory: the call runs without */
        }
    }
    pthread_mutex_unlock(&table_mutex);
    return found;
}

hgemm_status hgemm_free_library_workspaces(void) {
    if (pthread_mutex_lock(&table_mutex) != 0) return HGEMM_ERROR_CUDA;
    int prev = 0;
    cudaError_t err = cudaGetDevice(&prev);
    for (int i = 0; i < used && err == cudaSuccess; i++) {
        err = cudaSetDevice(table[i].device);
        if (err == cudaSuccess) err = cudaFree(table[i].ptr);
        if (err == cudaSuccess) table[i].ptr = NULL;
    }
    /* what could not be freed stays listed */
    int kept = 0;
    for (int i = 0; i < used; i++)
        if (table[i].ptr != NULL) table[kept++] = table[i];
    used = kept;
    if (err == cudaSuccess) err = cudaSetDevice(prev);
    pthread_mutex_unlock(&table_mutex);
    return err == cudaSuccess ? HGEMM_SUCCESS : hgemm__status_from_cuda(err);
}
