/*
 * launch.c: the one way a launcher starts its kernel.
 *
 * cudaLaunchKernelExC returns the launch's own status, so a good call never
 * reads (or clears) an error the caller left pending, and a failed launch is
 * reported even when an older error is pending. Cluster dimensions travel as a
 * launch attribute, which the triple-chevron syntax cannot express.
 */
#include <string.h>

#include <cuda_runtime_api.h>

#include "internal.h"

hgemm_status hgemm__launch(const void *kernel, dim3 grid, unsigned block, size_t smem,
                           unsigned cluster, cudaStream_t stream, void **args) {
    cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           (int)smem);
    if (err != cudaSuccess) return hgemm__status_from_cuda(err);
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = cluster;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cudaLaunchConfig_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDim = grid;
    cfg.blockDim.x = block;
    cfg.blockDim.y = 1;
    cfg.blockDim.z = 1;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    cfg.attrs = cluster > 1 ? &attr : NULL;
    cfg.numAttrs = cluster > 1 ? 1 : 0;
    err = cudaLaunchKernelExC(&cfg, kernel, args);
    return err == cudaSuccess ? HGEMM_SUCCESS : hgemm__status_from_cuda(err);
}

hgemm_status hgemm__persistent_grid(const void *kernel, unsigned block, size_t smem,
                                    unsigned cluster, uint64_t units, unsigned *grid) {
    cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           (int)smem);
    if (err != cudaSuccess) return hgemm__status_from_cuda(err);
    int resident = 0; /* clusters (or blocks, when cluster == 1) resident at once */
    if (cluster > 1) {
        cudaLaunchAttribute attr;
        attr.id = cudaLaunchAttributeClusterDimension;
        attr.val.clusterDim.x = cluster;
        attr.val.clusterDim.y = 1;
        attr.val.clusterDim.z = 1;
        cudaLaunchConfig_t cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.gridDim.x = cluster;
        cfg.gridDim.y = 1;
        cfg.gridDim.z = 1;
        cfg.blockDim.x = block;
        cfg.blockDim.y = 1;
        cfg.blockDim.z = 1;
        cfg.dynamicSmemBytes = smem;
        cfg.attrs = &attr;
        cfg.numAttrs = 1;
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
