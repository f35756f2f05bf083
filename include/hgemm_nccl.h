/*
 * hgemm_nccl: tensor-parallel GEMM across the GPUs of a communicator, with the
 * communication (NCCL) chunked and overlapped with hgemm's kernels.
 *
 * A separate library (libhgemm_nccl) over the public hgemm API: the core
 * library keeps no NCCL dependency. Matrices follow hgemm's one layout
 * (include/hgemm.h): row-major fp16, C = alpha * A * B^T + beta * C, leading
 * dimensions in elements, multiples of 8, pointers 16-byte aligned, memory of
 * the communicator's device.
 *
 * Two operations, each a collective: every rank of the communicator calls it,
 * in the same order relative to its other NCCL operations on that
 * communicator, with the same "uniform" arguments (marked below).
 *
 *   (a) hgemm_nccl_allgather_gemm: the rows of A are split across the ranks
 *       (rank r holds m_counts[r] rows, any split, ragged included). Every rank
 *       gathers all of A (M = sum of m_counts rows) and multiplies it by its
 *       own B shard: C_local (M x n_local) = alpha * A_gathered * B_local^T +
 *       beta * C_local. In a tensor-parallel layer B is the weight split along
 *       its output dimension N ("column parallel").
 *   (b) hgemm_nccl_gemm_reducescatter: A and B are split along K (rank r holds
 *       A_local, M x k_r, and B_local, n x k_r). Every rank computes its
 *       partial product of all M rows; the partials are summed across the
 *       ranks and rank r receives its own row block of the sum: C_local
 *       (m_counts[r] x n) = alpha * sum_ranks A_r * B_r^T + beta * C_local.
 *       In a tensor-parallel layer this is the "row parallel" linear.
 *
 * How the overlap works. Each call splits every rank's row block into
 * `chunks` pieces (piece c of a block of m rows is rows [c*m/chunks,
 * (c+1)*m/chunks)). The communication runs on a side stream owned by the
 * context, one NCCL group per chunk; the GEMMs run on the caller's stream, one
 * hgemm_nt launch per piece; CUDA events order the two. Nothing waits on the
 * host, except the optional argument agreement (below).
 *   (a) The side stream broadcasts piece c of every rank's rows (one
 *       ncclBroadcast per rank, grouped: an all-gather that allows ragged
 *       splits), chunk after chunk. The caller's stream first multiplies the
 *       rank's own rows, which need no communication, then the pieces of
 *       chunk c of the other ranks as soon as chunk c has arrived.
 *   (b) The caller's stream computes chunk c (piece c of every rank's rows,
 *       into the workspace); as soon as it is done, the side stream reduces
 *       each piece to the rank that owns it (one ncclReduce per rank, grouped:
 *       a reduce-scatter that allows ragged splits) while chunk c + 1 computes.
 * The call returns when everything is enqueued; the caller's stream then
 * holds the whole operation (its last work waits for the side stream), so
 * the results are ready when the caller's stream reaches that point, and any
 * later work on the stream may reuse every buffer.
 *
 * Accuracy of (b). hgemm writes fp16 only, so each rank's partial product is
 * accumulated in fp32 inside the kernel and rounded once to fp16; NCCL then
 * sums the fp16 partials in fp16 (ncclFloat16, ncclSum), rounding after each
 * addition. With N ranks an element therefore carries up to N + (N - 1)
 * roundings of half an fp16 ulp instead of one: for outputs of unit size
 * (fp16 ulp 2^-10), about 1e-3 per rounding, well inside DESIGN.md's fp32
 * accumulation tolerance (atol 1e-2, rtol 1e-2) at N = 2..8. For N = 2 the
 * result is exactly round_fp16(P0 + P1) for the two fp16 partials (tested
 * bitwise). A partial can overflow fp16 (65504) where the sum would not, when
 * the ranks' partials cancel; summing fp32 partials would avoid that at twice
 * the traffic, but needs an fp32-output kernel that hgemm does not offer.
 *
 * Checking. Arguments fall in three groups:
 *   - uniform arguments (chunks, m_counts, and for (a) k and lda, for (b) n)
 *     must be equal on every rank: the communication's sizes depend on them;
 *   - local arguments (pointers, the other sizes and leading dimensions,
 *     alpha, beta, kernel, stream) are each rank's own;
 *   - the communicator, through the context.
 * Every rank checks everything it can see before any communication, with the
 * rules of hgemm_nt (sizes, NULL pointers, leading dimensions, alignment,
 * memory of the communicator's device, outputs overlapping inputs). Then:
 *   HGEMM_NCCL_CHECK_AGREE (the default): the ranks exchange their verdicts
 *     and a 62-bit fingerprint of their uniform arguments in one all-reduce of
 *     32 bytes on the context's side stream, and the host waits for it (for
 *     at most the context's timeout). Every rank then returns the same status:
 *     HGEMM_NCCL_ERROR_MISMATCH when the fingerprints differ, else the largest
 *     status any rank found (hgemm_nccl_failed_rank says which rank), else it
 *     enqueues the operation. The wait is for this small collective only,
 *     not for the caller's stream, but NCCL runs a communicator's operations
 *     in order, so it also waits for this communicator's earlier work (in (b),
 *     for the previous call's last reduction; (b) enqueues its first GEMM, on
 *     the workspace only, before it waits, so the GPU does not idle).
 *   HGEMM_NCCL_CHECK_LOCAL: no exchange and no host wait at all. A bad
 *     uniform argument is refused alike on every rank (each checks the same
 *     values), but an error only one rank can see (say a NULL pointer there)
 *     is returned by that rank alone, while the others enqueue communication
 *     that waits for it forever. For code already run under AGREE; and the mode
 *     to use under CUDA graph capture (AGREE waits on the host).
 * After a call has been enqueued, a launch that fails on one rank (a CUDA
 * error) is reported by that rank only; the rank still enqueues all of its
 * communication, so that the others do not hang.
 *
 * A rank that never joins (it crashed, passed a NULL communicator or context,
 * or called something else) cannot be detected without communication: under
 * AGREE and in hgemm_nccl_ctx_create the others give up after the context's
 * timeout with HGEMM_NCCL_ERROR_TIMEOUT; the communicator then holds a
 * collective that will never finish, and must be aborted (ncclCommAbort)
 * before the context is destroyed.
 *
 * Contexts. A context belongs to one communicator and one device (the
 * communicator's, which must be the current device in every call). It holds
 * the side stream, the events and the 32-byte agreement buffers, so that a
 * call allocates nothing and creates nothing. Creating one is a collective
 * that waits on the host; a context is used by one host thread at a time.
 * Several contexts may share a communicator.
 *
 * Status: like hgemm, every status comes from the calls' own return values;
 * the library never exits or aborts.
 */
#ifndef HGEMM_NCCL_H
#define HGEMM_NCCL_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "hgemm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum hgemm_nccl_status {
    HGEMM_NCCL_SUCCESS = 0,
    HGEMM_NCCL_ERROR_INVALID_VALUE,  /* NULL context, communicator or matrix with nonzero size,
                                        negative size, ld too small, chunks out of range,
                                        unknown kernel, an output overlapping an input, too
                                        small a workspace, memory not of the communicator's
                                        device, the current device not the communicator's */
    HGEMM_NCCL_ERROR_MISALIGNED,     /* a pointer not 16-byte aligned or ld % 8 != 0 */
    HGEMM_NCCL_ERROR_MISMATCH,       /* ranks passed different uniform arguments (AGREE only) */
    HGEMM_NCCL_ERROR_NOT_SUPPORTED,  /* valid, but beyond what hgemm's kernels serve */
    HGEMM_NCCL_ERROR_NO_DEVICE,      /* no CUDA device or driver */
    HGEMM_NCCL_ERROR_ARCH_MISMATCH,  /* the device is not compute capability 9.0 */
    HGEMM_NCCL_ERROR_CUDA,           /* a CUDA call failed */
    HGEMM_NCCL_ERROR_NCCL,           /* an NCCL call failed, or the communicator reports an error */
    HGEMM_NCCL_ERROR_TIMEOUT         /* the other ranks did not join within the timeout */
} hgemm_nccl_status;

typedef enum hgemm_nccl_check {
    HGEMM_NCCL_CHECK_AGREE = 0,      /* ranks agree on every call's status (default) */
    HGEMM_NCCL_CHECK_LOCAL = 1       /* each rank checks alone: no exchange, no host wait */
} hgemm_nccl_check;

enum {
    HGEMM_NCCL_MAX_CHUNKS = 64,      /* chunks per call: 1 .. HGEMM_NCCL_MAX_CHUNKS */
    HGEMM_NCCL_DEFAULT_TIMEOUT_S = 60
};

typedef struct hgemm_nccl_config {
    hgemm_nccl_check check;          /* HGEMM_NCCL_CHECK_AGREE or HGEMM_NCCL_CHECK_LOCAL */
    double timeout_s;                /* how long a rank waits for the others (create, AGREE);
                                        <= 0 means HGEMM_NCCL_DEFAULT_TIMEOUT_S */
    int gemm_sm_count;               /* > 0: the GEMMs that run while communication is
                                        in flight use this SM target (hgemm_nt_ex's
                                        sm_count_target), so that a persistent kernel
                                        leaves the other SMs to NCCL's kernels; (a)'s last
                                        chunk and (b)'s first, which run alone, use every
                                        SM. Pair it with ncclConfig_t.maxCTAs <= SMs -
                                        gemm_sm_count on the communicator. 0: every SM
                                        (negative: refused) */
} hgemm_nccl_config;

typedef struct hgemm_nccl_ctx hgemm_nccl_ctx;

/* Collective over `comm`, on the current device, which must be the
 * communicator's. config NULL: AGREE, the default timeout. All ranks must
 * pass the same check mode (refused with MISMATCH otherwise). On success
 * *ctx is the new context; on failure *ctx is NULL. */
hgemm_nccl_status hgemm_nccl_ctx_create(hgemm_nccl_ctx **ctx, ncclComm_t comm,
                                        const hgemm_nccl_config *config);

/* Waits for the context's side stream, then frees what it holds. NULL is a no-op. */
hgemm_nccl_status hgemm_nccl_ctx_destroy(hgemm_nccl_ctx *ctx);

/* After a call refused under AGREE: the lowest rank whose own arguments were
 * refused, or -1 (success, a mismatch, or LOCAL mode). */
int hgemm_nccl_failed_rank(const hgemm_nccl_ctx *ctx);

/* A measurement hook (tools/hgemm-nccl-bench.c draws the timeline from it):
 * from now on each call records events[i] for i < count, where
 *   events[0]       the call's start, on the caller's stream;
 *   events[1]       (a) this rank's own rows multiplied; (b) the same as events[0];
 *   events[2 + 2c]  chunk c's communication done, on the side stream;
 *   events[3 + 2c]  chunk c's GEMMs done, on the caller's stream.
 * The caller creates the events (with timing) on the communicator's device
 * and keeps them alive; a call with more chunks records the first `count`.
 * events NULL and count 0 turn it off. */
hgemm_nccl_status hgemm_nccl_ctx_set_trace(hgemm_nccl_ctx *ctx, cudaEvent_t *events, int count);

/* (a) C_local = alpha * allgather(A_local) * B_local^T + beta * C_local.
 *   uniform:  chunks (1..HGEMM_NCCL_MAX_CHUNKS); m_counts[0..nranks-1], the rows
 *             of A on each rank (>= 0, any split); k; lda (A_local's and
 *             A_gathered's leading dimension).
 *   local:    A_local  (m_counts[rank] x k, lda): this rank's rows;
 *             A_gathered (M x k, lda): receives all rows, rank r's at row
 *             sum(m_counts[0..r-1]). A_local may be this rank's rows of
 *             A_gathered (in place) or must not overlap it. The padding
 *             between k and lda in A_gathered's rows may be overwritten;
 *             B_local (n_local x k, ldb); C_local (M x n_local, ldc).
 */
hgemm_nccl_status hgemm_nccl_allgather_gemm(hgemm_nccl_ctx *ctx, hgemm_kernel kernel, int chunks,
                                            const int64_t *m_counts, int64_t n_local, int64_t k,
                                            float alpha, const void *A_local, void *A_gathered,
                                            int64_t lda, const void *B_local, int64_t ldb,
                                            float beta, void *C_local, int64_t ldc,
                                            cudaStream_t stream);

/* (b) C_local = rows of (alpha * sum_ranks A_local * B_local^T) owned by this
 *     rank, + beta * C_local.
 *   uniform:  chunks; m_counts[0..nranks-1], the rows of the result each rank
 *             receives (>= 0, any split; M = their sum); n.
 *   local:    A_local (M x k_local, lda); B_local (n x k_local, ldb) (k_local
 *             may differ per rank, 0 included); C_local (m_counts[rank] x n, ldc);
 *             workspace: device memory of at least
 *             hgemm_nccl_gemm_reducescatter_workspace(M, n) bytes, 16-byte
 *             aligned, overlapping no matrix: it receives this rank's fp16
 *             partial product. When ldc == n the sum lands in C_local directly,
 *             otherwise in the workspace and is then copied (no element of
 *             C_local outside its m x n region is written either way).
 */
hgemm_nccl_status hgemm_nccl_gemm_reducescatter(hgemm_nccl_ctx *ctx, hgemm_kernel kernel,
                                                int chunks, const int64_t *m_counts, int64_t n,
                                                int64_t k_local, float alpha, const void *A_local,
                                                int64_t lda, const void *B_local, int64_t ldb,
                                                float beta, void *C_local, int64_t ldc,
                                                void *workspace, size_t workspace_bytes,
                                                cudaStream_t stream);

/* Bytes of workspace (b) needs for M rows of n columns: M rows of n rounded
 * up to a multiple of 8 fp16 elements; 0 for an empty or negative size or
 * one whose byte count does not fit in size_t. */
size_t hgemm_nccl_gemm_reducescatter_workspace(int64_t m_total, int64_t n);

/* A short English sentence for a status; never NULL. */
const char *hgemm_nccl_status_string(hgemm_nccl_status status);

#ifdef __cplusplus
}
#endif

#endif /* HGEMM_NCCL_H */
