/*
 * launch.c: the one way a launcher starts its kernel.
 *
 * cudaLaunchKernelExC returns the launch's own status, so a good call never
 * reads (or clears) an error the caller left pending, and a failed launch is
 * reported even when an older error is pending. Cluster dimensions travel as a
 * launch attribute, which the triple-chevron syntax cannot express, and so
 * does programmatic dependent launch where a launcher asks for it (V8, V9).
 *
 * A successful cudaFuncSetAttribute clears an error the caller left pending
 * (measured: tests/gpu/test_gpu_edges.c's probe, run 17), so the dynamic
 * shared-memory limit is raised through the driver's cuFuncSetAttribute,
 * reached like cuTensorMapEncodeTiled through the runtime's entry-point query,
 * and only for kernels that need more than the default 48 KB.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "hw.h"
#include "internal.h"

typedef CUresult (*func_set_attribute_fn)(CUfunction, CUfunction_attribute, int);

/* The driver's cuFuncSetAttribute, found once; a failed lookup is retried. */
static _Atomic(func_set_attribute_fn) set_attribute_fn;
static pthread_mutex_t set_attribute_mutex = PTHREAD_MUTEX_INITIALIZER;

static func_set_attribute_fn lookup_set_attribute(void) {
    func_set_attribute_fn fn = atomic_load_explicit(&set_attribute_fn, memory_order_acquire);
    if (fn != NULL || pthread_mutex_lock(&set_attribute_mutex) != 0) return fn;
    fn = atomic_load_explicit(&set_attribute_fn, memory_order_acquire);
    if (fn == NULL) {
        void *p = NULL;
        enum cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
        if (cudaGetDriverEntryPointByVersion("cuFuncSetAttribute", &p, 12000, cudaEnableDefault,
                                             &found) == cudaSuccess &&
            found == cudaDriverEntryPointSuccess && p != NULL) {
            fn = (func_set_attribute_fn)p;
            atomic_store_explicit(&set_attribute_fn, fn, memory_order_release);
        }
    }
    pthread_mutex_unlock(&set_attribute_mutex);
    return fn;
}

/* The runtime makes its primary context current on a thread only at the
 * thread's first runtime call that needs one, so on a thread whose first
 * CUDA work is this library's call (a framework's worker thread, torch's
 * autograd thread) the function lookup and the driver's cuFuncSetAttribute
 * below can fail (as the tensor-map encoder does: src/tensor_map.c). Then
 * the current device's primary context is made current (cudaSetDevice) and
 * the step is tried once more. Returns whether the context could be bound. */
int hgemm__bind_context(void) {
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaSetDevice(dev) != cudaSuccess) {
        (void)cudaGetLastError(); /* this call's own error */
        return 0;
    }
    return 1;
}

static cudaError_t get_function(cudaFunction_t *f, const void *kernel) {
    cudaError_t err = cudaGetFuncBySymbol(f, kernel);
    if (err == cudaSuccess || err == cudaErrorSymbolNotFound) return err;
    (void)cudaGetLastError(); /* this call's own error */
    return hgemm__bind_context() ? cudaGetFuncBySymbol(f, kernel) : err;
}

static CUresult set_attribute(func_set_attribute_fn fn, cudaFunction_t f, CUfunction_attribute attr, int value) {
    CUresult r = fn((CUfunction)f, attr, value);
    if (r == CUDA_SUCCESS || !hgemm__bind_context()) return r;
    return fn((CUfunction)f, attr, value);
}

/* Let `kernel` use `smem` bytes of dynamic shared memory. */
static hgemm_status set_smem_limit(const void *kernel, size_t smem) {
    if (smem <= SMEM_DEFAULT_PER_BLOCK) return HGEMM_SUCCESS;
    func_set_attribute_fn fn = lookup_set_attribute();
    cudaFunction_t f = NULL;
    cudaError_t err = fn ? get_function(&f, kernel) : cudaErrorSymbolNotFound;
    if (err == cudaSuccess)
        return set_attribute(fn, f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem) == CUDA_SUCCESS
                   ? HGEMM_SUCCESS
                   : HGEMM_ERROR_CUDA;
    if (err != cudaErrorSymbolNotFound) return hgemm__status_from_cuda(err);
    /* no driver entry point: the runtime's call, which clears a pending error */
    err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    return err == cudaSuccess ? HGEMM_SUCCESS : hgemm__status_from_cuda(err);
}

/* Let `kernel` launch in clusters of more than 8 blocks (the portable
 * limit), through the driver as set_smem_limit does, so that a caller's
 * pending error stays pending (and a failed lookup of the kernel leaves
 * none of its own). Used by V8's deal to find the GPCs
 * (src/kernels/v8_deal.cu). */
hgemm_status hgemm__allow_large_clusters(const void *kernel) {
    func_set_attribute_fn fn = lookup_set_attribute();
    cudaFunction_t f = NULL;
    if (fn == NULL) return HGEMM_ERROR_NOT_SUPPORTED;
    if (get_function(&f, kernel) != cudaSuccess) {
        (void)cudaGetLastError(); /* this call's own error */
        return HGEMM_ERROR_NOT_SUPPORTED;
    }
    return set_attribute(fn, f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1) == CUDA_SUCCESS
               ? HGEMM_SUCCESS
               : HGEMM_ERROR_NOT_SUPPORTED;
}

/* The launch configuration: `smem` bytes of dynamic shared memory, when
 * cluster > 1 clusters of `cluster` blocks along x, and when pdl != 0
 * programmatic dependent launch (`attr` holds the attributes and must live
 * as long as `cfg`). */
static void fill_config(cudaLaunchConfig_t *cfg, cudaLaunchAttribute attr[2], dim3 grid, unsigned block,
                        size_t smem, unsigned cluster, int pdl, cudaStream_t stream) {
    memset(cfg, 0, sizeof *cfg);
    cfg->gridDim = grid;
    cfg->blockDim.x = block;
    cfg->blockDim.y = 1;
    cfg->blockDim.z = 1;
    cfg->dynamicSmemBytes = smem;
    cfg->stream = stream;
    unsigned n = 0;
    if (cluster > 1) {
        memset(&attr[n], 0, sizeof attr[n]);
        attr[n].id = cudaLaunchAttributeClusterDimension;
        attr[n].val.clusterDim.x = cluster;
        attr[n].val.clusterDim.y = 1;
        attr[n].val.clusterDim.z = 1;
        n++;
    }
    if (pdl) {
        memset(&attr[n], 0, sizeof attr[n]);
        attr[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr[n].val.programmaticStreamSerializationAllowed = 1;
        n++;
    }
    cfg->attrs = n ? attr : NULL;
    cfg->numAttrs = n;
}

hgemm_status hgemm__launch_ready_ex(const void *kernel, dim3 grid, unsigned block, size_t smem,
                                    unsigned cluster, int pdl, cudaStream_t stream, void **args) {
    cudaLaunchConfig_t cfg;
    cudaLaunchAttribute attr[2];
    fill_config(&cfg, attr, grid, block, smem, cluster, pdl, stream);
    cudaError_t err = cudaLaunchKernelExC(&cfg, kernel, args);
    return err == cudaSuccess ? HGEMM_SUCCESS : hgemm__status_from_cuda(err);
}

hgemm_status hgemm__launch_ready(const void *kernel, dim3 grid, unsigned block, size_t smem,
                                 unsigned cluster, cudaStream_t stream, void **args) {
    return hgemm__launch_ready_ex(kernel, grid, block, smem, cluster, 0, stream, args);
}

hgemm_status hgemm__launch_ex(const void *kernel, dim3 grid, unsigned block, size_t smem, unsigned cluster,
                              int pdl, cudaStream_t stream, void **args) {
    hgemm_status st = set_smem_limit(kernel, smem);
    if (st != HGEMM_SUCCESS) return st;
    return hgemm__launch_ready_ex(kernel, grid, block, smem, cluster, pdl, stream, args);
}

hgemm_status hgemm__launch(const void *kernel, dim3 grid, unsigned block, size_t smem,
                           unsigned cluster, cudaStream_t stream, void **args) {
    return hgemm__launch_ex(kernel, grid, block, smem, cluster, 0, stream, args);
}

hgemm_status hgemm__target_sms(int target, int *sms) {
    int dev = 0;
    cudaError_t err = cudaGetDevice(&dev);
    if (err == cudaSuccess) err = cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, dev);
    if (err != cudaSuccess) return hgemm__status_from_cuda(err);
    if (target > 0 && target < *sms) *sms = target;
    return HGEMM_SUCCESS;
}

hgemm_status hgemm__persistent_grid(const void *kernel, unsigned block, size_t smem,
                                    unsigned cluster, uint64_t units, unsigned *grid) {
    hgemm_status st = set_smem_limit(kernel, smem);
    if (st != HGEMM_SUCCESS) return st;
    cudaError_t err;
    int resident = 0; /* clusters (or blocks, when cluster == 1) resident at once */
    if (cluster > 1) {
        cudaLaunchConfig_t cfg;
        cudaLaunchAttribute attr[2];
        dim3 one_cluster;
        one_cluster.x = cluster;
        one_cluster.y = 1;
        one_cluster.z = 1;
        fill_config(&cfg, attr, one_cluster, block, smem, cluster, 0, 0);
        err = cudaOccupancyMaxActiveClusters(&resident, kernel, &cfg);
    } else {
        int dev = 0, sms = 0, per_sm = 0;
        err = cudaGetDevice(&dev);
        if (err == cudaSuccess) err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
        if (err == cudaSuccess)
            err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, (int)block, smem);
        resident = sms * per_sm;
    }
    if (err != cudaSuccess) return hgemm__status_from_cuda(err);
    if (resident < 1) return HGEMM_ERROR_NOT_SUPPORTED;
    const uint64_t n = units < (uint64_t)resident ? units : (uint64_t)resident;
    *grid = (unsigned)n * cluster;
    return HGEMM_SUCCESS;
}
