/*
 * cluster_concurrency.cu: whether two grids of clusters of different sizes
 * share the GPU at once. Grid A takes every cluster of 4 one-SM blocks the
 * GPU holds (cudaOccupancyMaxActiveClusters), grid B clusters of 2 (or
 * single blocks) on the SMs A leaves; each block spins for a fixed time and
 * records its SM and its start and end (the global timer). Printed per
 * scenario (launch order, stream priorities, a pending fork): when each
 * grid's blocks started and ended, relative to A's first start, and how
 * many SMs the two grids used together (docs/notes/v8-log.md, run 105).
 *
 *   build/tools/hgemm-cluster-concurrency > concurrency.csv
 */
#include <stdio.h>
#include <stdint.h>
#include <cuda_runtime.h>

#include "check.h" /* HGEMM_CHECK_CUDA */
#include "cluster_config.h"
#include "ptx/common.cuh" /* sm_id */

enum { MAX_BLOCKS = 1024, MAX_SMS = 1024 /* %smid's range counted here */ };

/* rec[3 * block]: SM, start ns, end ns */
__global__ void spin(unsigned long long *rec, unsigned long long ns) {
    extern __shared__ int smem[];
    if (threadIdx.x == 0) {
        unsigned long long t;
        const unsigned long long t0 = probe_stay(ns, &t);
        rec[3 * blockIdx.x] = sm_id();
        rec[3 * blockIdx.x + 1] = t0;
        rec[3 * blockIdx.x + 2] = t;
        smem[0] = (int)t;
    }
}

static void launch(int blocks, int cluster, cudaStream_t s, unsigned long long *rec, unsigned long long ns) {
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t cfg = probe_config(&attr, blocks, cluster, s);
    HGEMM_CHECK_CUDA(cudaLaunchKernelEx(&cfg, spin, rec, ns));
}

typedef struct span { double start_min, start_max, end_max; } span;

static span span_of(const unsigned long long *rec, int blocks, unsigned long long t0, int *sm_used) {
    span s = {1e30, -1e30, -1e30};
    for (int b = 0; b < blocks; b++) {
        /* signed: a block of B may start before A's first */
        const double st = (double)(long long)(rec[3 * b + 1] - t0) / 1e3;
        const double en = (double)(long long)(rec[3 * b + 2] - t0) / 1e3;
        if (st < s.start_min) s.start_min = st;
        if (st > s.start_max) s.start_max = st;
        if (en > s.end_max) s.end_max = en;
        sm_used[rec[3 * b] % MAX_SMS] = 1;
    }
    return s;
}

int main(void) {
    cudaDeviceProp prop;
    HGEMM_CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
    HGEMM_CHECK_CUDA(cudaFuncSetAttribute(spin, cudaFuncAttributeMaxDynamicSharedMemorySize, PROBE_SMEM_BYTES));
    const int sms = prop.multiProcessorCount, c4 = probe_clusters_of((const void *)spin, 4), a_blocks = 4 * c4;
    const int spare = sms - a_blocks;
    int lowest = 0, highest = 0;
    HGEMM_CHECK_CUDA(cudaDeviceGetStreamPriorityRange(&lowest, &highest));
    cudaStream_t hi, lo, user;
    HGEMM_CHECK_CUDA(cudaStreamCreateWithPriority(&hi, cudaStreamNonBlocking, highest));
    HGEMM_CHECK_CUDA(cudaStreamCreateWithPriority(&lo, cudaStreamNonBlocking, lowest));
    HGEMM_CHECK_CUDA(cudaStreamCreateWithPriority(&user, cudaStreamNonBlocking, lowest));
    cudaEvent_t fork;
    HGEMM_CHECK_CUDA(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    unsigned long long *rec_a, *rec_b, *rec_w, *host;
    HGEMM_CHECK_CUDA(cudaMalloc(&rec_a, MAX_BLOCKS * 3 * sizeof(unsigned long long)));
    HGEMM_CHECK_CUDA(cudaMalloc(&rec_b, MAX_BLOCKS * 3 * sizeof(unsigned long long)));
    HGEMM_CHECK_CUDA(cudaMalloc(&rec_w, MAX_BLOCKS * 3 * sizeof(unsigned long long)));
    HGEMM_CHECK_CUDA(cudaMallocHost(&host, 2 * MAX_BLOCKS * 3 * sizeof(unsigned long long)));
    printf("# tool: hgemm-cluster-concurrency (tools/cluster_concurrency.cu)\n");
    printf("# gpu: %s\n# sm_count: %d\n# clusters of 4 resident: %d (%d SMs); spare SMs: %d\n", prop.name, sms, c4,
           a_blocks, spare);
    printf("# times in us from grid A's first block start; A spins 2000 us a block, B 1000 us\n");
    printf("scenario,b_cluster,a_start_max,a_end,b_start_min,b_start_max,b_end,sms_used\n");
    const unsigned long long ns_a = 2000000ull, ns_b = 1000000ull;
    /* scenarios: 0 A (high) then B (low); 1 B (low) then A (high); 2 A then B, same
     * stream priority (both low); 3 both behind a fork from a busy stream, A (high)
     * first; 4 as 3 with B on the busy stream itself (v8-mix's order) */
    const char *names[5] = {"a_hi_first", "b_lo_first", "same_priority", "fork_a_first", "fork_b_on_user"};
    for (int bc = 2; bc >= 1; bc--) {
        const int b_blocks = spare / bc * bc;
        if (b_blocks < 1) continue;
        for (int sc = 0; sc < 5; sc++) {
            HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
            cudaStream_t sa = sc == 2 ? lo : hi, sb = sc == 2 ? user : lo;
            if (sc >= 3) {
                launch(sms, 1, user, rec_w, 500000ull); /* the caller's earlier work */
                HGEMM_CHECK_CUDA(cudaEventRecord(fork, user));
                HGEMM_CHECK_CUDA(cudaStreamWaitEvent(hi, fork, 0));
                HGEMM_CHECK_CUDA(cudaStreamWaitEvent(lo, fork, 0));
                if (sc == 4) sb = user;
            }
            if (sc == 1) {
                launch(b_blocks, bc, sb, rec_b, ns_b);
                launch(a_blocks, 4, sa, rec_a, ns_a);
            } else {
                launch(a_blocks, 4, sa, rec_a, ns_a);
                launch(b_blocks, bc, sb, rec_b, ns_b);
            }
            HGEMM_CHECK_CUDA(cudaDeviceSynchronize());
            HGEMM_CHECK_CUDA(cudaMemcpy(host, rec_a, a_blocks * 3 * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
            HGEMM_CHECK_CUDA(cudaMemcpy(host + MAX_BLOCKS * 3, rec_b, b_blocks * 3 * sizeof(unsigned long long),
                                        cudaMemcpyDeviceToHost));
            unsigned long long t0 = ~0ull;
            for (int b = 0; b < a_blocks; b++)
                if (host[3 * b + 1] < t0) t0 = host[3 * b + 1];
            int used[MAX_SMS] = {0};
            const span a = span_of(host, a_blocks, t0, used);
            const span b = span_of(host + MAX_BLOCKS * 3, b_blocks, t0, used);
            int n_used = 0;
            for (int i = 0; i < MAX_SMS; i++) n_used += used[i];
            printf("%s,%d,%.1f,%.1f,%.1f,%.1f,%.1f,%d\n", names[sc], bc, a.start_max, a.end_max, b.start_min,
                   b.start_max, b.end_max, n_used);
        }
    }
    return 0;
}
