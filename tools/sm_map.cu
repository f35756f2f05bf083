/*
 * sm_map.cu: on which SMs the blocks of a cluster launch land, as CSV on
 * stdout, for scripts/sm_groups.py to read.
 *
 *   build/tools/hgemm-sm-map > sm-map.csv
 *   python3 scripts/sm_groups.py sm-map.csv
 *
 * Every block has V8's 384 threads and more shared memory than half an SM
 * holds, so that one block takes a whole SM, as V8's do (cluster_config.h).
 * Each block's first thread records its SM (%smid), its rank in its cluster
 * and when it started, then spins for a fixed time so that every cluster of
 * the grid is resident at once, as a persistent grid's are. Launched, a few
 * times each:
 *   - "pairs": clusters of 2 on every SM (V8's grid at most shapes), and
 *     "pairs64": 64 of them (V8's grid where 4 rounds fill 64 clusters,
 *     4096^3). Do a pair's two blocks sit on one TPC, and does a cluster
 *     index land on the same SMs launch after launch?
 *   - "c4", "c8", "c16": every cluster of 4, 8 and 16 blocks the GPU holds.
 *     A cluster's blocks share one GPC, so the SMs seen together in these
 *     clusters, joined, are the GPCs (or parts of them), which tells in
 *     which GPC each pair above ran. Whether clusters that share an operand
 *     also share a GPC may decide how many of their identical loads are
 *     merged before L2 (docs/notes/v8-log.md, run 87 and the plan after
 *     run 131).
 */
#include <stdio.h>
#include <stdint.h>
#include <cuda_runtime.h>

#include "check.h" /* HGEMM_CHECK_CUDA, hgemm_check_sm90_available */
#include "cluster_config.h"
#include "ptx/cluster.cuh" /* cluster_ctarank */
#include "ptx/common.cuh"  /* sm_id */

enum {
    LAUNCHES = 6,          /* of each configuration */
    SPIN_NS = 200 * 1000,  /* each block's stay: far longer than a grid takes to start */
    PAIRS64_CLUSTERS = 64, /* V8's grid at 4096^3 (hgemm_sk_balance) */
    REC_WORDS = 3,         /* per block: SM, rank in the cluster, start ns */
};

/* rec[REC_WORDS * block]: SM, rank, start (global timer, ns) */
__global__ void where(unsigned long long *rec, unsigned long long ns) {
    extern __shared__ int smem[];
    if (threadIdx.x == 0) {
        unsigned long long t;
        const unsigned long long t0 = probe_stay(ns, &t);
        rec[REC_WORDS * blockIdx.x] = sm_id();
        rec[REC_WORDS * blockIdx.x + 1] = cluster_ctarank();
        rec[REC_WORDS * blockIdx.x + 2] = t0;
        smem[0] = (int)t; /* the shared memory is allocated, so it is used */
    }
}

/* `launches` launches of `clusters` clusters of `size`, one CSV row a block */
static void map(const char *name, int size, int clusters, unsigned long long *d_rec, unsigned long long *h_rec) {
    const int blocks = size * clusters;
    for (int l = 0; l < LAUNCHES; l++) {
        cudaLaunchAttribute attr;
        const cudaLaunchConfig_t cfg = probe_config(&attr, blocks, size, 0);
        HGEMM_CHECK_CUDA(cudaMemset(d_rec, 0xff, sizeof(unsigned long long) * REC_WORDS * blocks));
        HGEMM_CHECK_CUDA(cudaLaunchKernelEx(&cfg, where, d_rec, (unsigned long long)SPIN_NS));
        HGEMM_CHECK_CUDA(cudaGetLastError());
        HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
        HGEMM_CHECK_CUDA(cudaMemcpy(h_rec, d_rec, sizeof(unsigned long long) * REC_WORDS * blocks,
                                    cudaMemcpyDeviceToHost));
        unsigned long long t0 = ~0ull;
        for (int b = 0; b < blocks; b++)
            if (h_rec[REC_WORDS * b + 2] < t0) t0 = h_rec[REC_WORDS * b + 2];
        for (int b = 0; b < blocks; b++)
            printf("%s,%d,%d,%d,%d,%llu,%llu,%llu\n", name, size, l + 1, b, b / size, h_rec[REC_WORDS * b + 1],
                   h_rec[REC_WORDS * b], h_rec[REC_WORDS * b + 2] - t0);
    }
}

int main(void) {
    char why[256];
    if (!hgemm_check_sm90_available(why, sizeof why)) {
        fprintf(stderr, "hgemm-sm-map: %s\n", why);
        return 2;
    }
    cudaDeviceProp prop;
    HGEMM_CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
    HGEMM_CHECK_CUDA(cudaFuncSetAttribute(where, cudaFuncAttributeMaxDynamicSharedMemorySize, PROBE_SMEM_BYTES));
    HGEMM_CHECK_CUDA(cudaFuncSetAttribute(where, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    const int pairs = probe_clusters_of((const void *)where, 2);
    const int sizes[] = {4, 8, 16};
    int most = 2 * pairs;
    for (int i = 0; i < 3; i++) {
        const int n = sizes[i] * probe_clusters_of((const void *)where, sizes[i]);
        if (n > most) most = n;
    }
    unsigned long long *d_rec = NULL, *h_rec = NULL;
    HGEMM_CHECK_CUDA(cudaMalloc((void **)&d_rec, sizeof(unsigned long long) * REC_WORDS * most));
    h_rec = (unsigned long long *)malloc(sizeof(unsigned long long) * REC_WORDS * most);
    if (!h_rec) {
        fprintf(stderr, "hgemm-sm-map: out of host memory\n");
        return 1;
    }
    printf("# tool: hgemm-sm-map (tools/sm_map.cu)\n");
    printf("# gpu: %s\n# sm_count: %d\n", prop.name, prop.multiProcessorCount);
    printf("# block: %d threads, %d bytes of dynamic shared memory (one block per SM), %d us each\n",
           PROBE_THREADS, PROBE_SMEM_BYTES, SPIN_NS / 1000);
    printf("config,cluster_size,launch,block,cluster,rank,smid,start_ns\n");
    map("pairs", 2, pairs, d_rec, h_rec);
    if (pairs > PAIRS64_CLUSTERS) map("pairs64", 2, PAIRS64_CLUSTERS, d_rec, h_rec);
    for (int i = 0; i < 3; i++) {
        const int n = probe_clusters_of((const void *)where, sizes[i]);
        if (n > 0) {
            char name[8];
            snprintf(name, sizeof name, "c%d", sizes[i]);
            map(name, sizes[i], n, d_rec, h_rec);
        }
    }
    free(h_rec);
    HGEMM_CHECK_CUDA(cudaFree(d_rec));
    return 0;
}
