/*
 * cluster_config.h: the launch configuration of the cluster probes
 * (tools/cluster_occupancy.cu, tools/cluster_concurrency.cu): a grid of
 * `blocks` blocks of V8's 384 threads in clusters of `cluster`, each block
 * with more shared memory than half an SM holds, so that one block takes a
 * whole SM as V8's do.
 */
#ifndef HGEMM_TOOLS_CLUSTER_CONFIG_H
#define HGEMM_TOOLS_CLUSTER_CONFIG_H

#include <cuda_runtime.h>

#include "check.h"          /* HGEMM_CHECK_CUDA */
#include "ptx/common.cuh" /* globaltimer_ns */

enum { PROBE_THREADS = 384, PROBE_SMEM_BYTES = 225 * 1024 };

/* `attr` must outlive the returned configuration, which points at it. */
static inline cudaLaunchConfig_t probe_config(cudaLaunchAttribute *attr, int blocks, int cluster,
                                              cudaStream_t stream) {
    attr->id = cudaLaunchAttributeClusterDimension;
    attr->val.clusterDim.x = cluster;
    attr->val.clusterDim.y = 1;
    attr->val.clusterDim.z = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(blocks);
    cfg.blockDim = dim3(PROBE_THREADS);
    cfg.dynamicSmemBytes = PROBE_SMEM_BYTES;
    cfg.stream = stream;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return cfg;
}

/* How many clusters of `size` blocks of the probe `kernel` the GPU holds at
 * once (cudaOccupancyMaxActiveClusters). */
static inline int probe_clusters_of(const void *kernel, int size) {
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t cfg = probe_config(&attr, size, size, 0);
    int n = 0;
    HGEMM_CHECK_CUDA(cudaOccupancyMaxActiveClusters(&n, kernel, &cfg));
    return n;
}

/* A probe block's stay on its SM: spin for `ns` of the global timer
 * (bounded: it ends once ns have passed). Returns the start, *end the last
 * reading. */
static __device__ __forceinline__ unsigned long long probe_stay(unsigned long long ns, unsigned long long *end) {
    const unsigned long long t0 = globaltimer_ns();
    unsigned long long t;
    do t = globaltimer_ns(); while (t - t0 < ns);
    *end = t;
    return t0;
}

#endif /* HGEMM_TOOLS_CLUSTER_CONFIG_H */
