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

#endif /* HGEMM_TOOLS_CLUSTER_CONFIG_H */
