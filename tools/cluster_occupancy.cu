/*
 * cluster_occupancy.cu: how many thread-block clusters of 1, 2, 4, 8 and 16
 * one-SM blocks the GPU holds at once (cudaOccupancyMaxActiveClusters), as
 * CSV on stdout. A cluster's blocks must share one GPC, so on a GPU whose
 * GPCs hold different numbers of SMs the answer is less than SMs / size;
 * V8's cluster width has to live with it (docs/notes/v8-log.md, run 73).
 *
 *   build/tools/hgemm-cluster-occupancy > occupancy.csv
 *
 * The probe block has V8's 384 threads and more shared memory than half an
 * SM holds, so that one block takes a whole SM, as V8's do.
 */
#include <stdio.h>
#include <cuda_runtime.h>

#include "check.h" /* HGEMM_CHECK_CUDA */
#include "cluster_config.h" /* probe_config, probe_clusters_of */

enum { MAX_CLUSTER = 16 };

__global__ void probe(int *out) {
    extern __shared__ int smem[];
    if (out) out[threadIdx.x] = smem[threadIdx.x];
}

int main(void) {
    cudaDeviceProp prop;
    HGEMM_CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
    HGEMM_CHECK_CUDA(cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, PROBE_SMEM_BYTES));
    HGEMM_CHECK_CUDA(cudaFuncSetAttribute(probe, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    printf("# tool: hgemm-cluster-occupancy (tools/cluster_occupancy.cu, cudaOccupancyMaxActiveClusters)\n");
    printf("# gpu: %s\n# sm_count: %d\n", prop.name, prop.multiProcessorCount);
    printf("# block: %d threads, %d bytes of dynamic shared memory (one block per SM)\n", PROBE_THREADS,
           PROBE_SMEM_BYTES);
    printf("kernel,cluster,clusters,sms\n");
    for (int size = 1; size <= MAX_CLUSTER; size *= 2) {
        const int clusters = probe_clusters_of((const void *)probe, size);
        printf("probe,%d,%d,%d\n", size, clusters, clusters * size);
    }
    return 0;
}
