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
 * The copy-engine path (below) adds the partials itself: each element's
 * partials are summed in fp32 and rounded to fp16 once, so for N = 2 it is
 * the same round_fp16(P0 + P1), bit for bit (fp32 carries 24 bits, at least
 * 2 x 11 + 2, so rounding the fp32 sum of two fp16 values to fp16 rounds as
 * the exact sum would), and for N > 2 one rounding of the sum replaces N - 1
 * fp16 additions (the fp32 sum of more than two terms may itself round, far
 * below fp16's precision).
 *
 * Copy engines. NCCL's collectives are kernels that need SMs, and hgemm's
 * persistent kernels hold every SM, so the transfers queue behind the GEMM
 * (the reason for gemm_sm_count). NCCL 2.28 runs ncclAllGather and
 * ncclAlltoAll (also Gather and Scatter, but no reduction) on the GPUs'
 * copy engines, with no SM at all, when the communicator was created with
 * ncclConfig_t.CTAPolicy = NCCL_CTA_POLICY_ZERO, all its ranks share one
 * node and NVLink, and both buffers lie in windows registered with
 * NCCL_WIN_COLL_SYMMETRIC (hgemm_nccl_mem_alloc makes such memory). With
 * hgemm_nccl_config.copy_engine set, a call takes that path where its
 * arguments allow it, and the GEMMs then run on every SM while the data
 * moves (gemm_sm_count is not applied):
 *   (a) one ncclAllGather(A_local, A_gathered, m * lda) on the side stream,
 *       while the caller's stream multiplies the rank's own rows; then the
 *       other ranks' rows. Own rows are 1/N of the work: with N = 2 they hide
 *       a transfer of up to a GEMM's half; with more ranks the transfer grows
 *       to (N-1)/N of A while the own rows shrink to 1/N of the GEMM, so less
 *       of it hides (the rest waits, with no SM taken from the GEMM). Gather in
 *       place (A_local = this rank's rows of A_gathered): NCCL then has no
 *       local copy of A_local to make, which may run on SMs.
 *   (b) NCCL has no reduction on copy engines, so the sum is hgemm's: the
 *       caller's stream first computes this rank's partials of every other
 *       rank's rows into the workspace; the side stream sends them with one
 *       copy-engine collective while the caller's stream computes the own
 *       rows' partial straight into C_local (alpha, and beta with C_local as
 *       given), then adds the received partials (a small kernel, fp32 sum,
 *       one rounding). N = 2: the peer's rows go to the workspace's block of
 *       this rank and an in-place ncclAllGather swaps the blocks; N > 2: the
 *       partials go to a first region W and ncclAlltoAll(W, R) delivers rank
 *       p's partial of this rank's rows to block p of a second region R (the
 *       own block is copied too, and ignored). The workspace needs
 *       hgemm_nccl_gemm_reducescatter_ce_workspace bytes. On 2 ranks the
 *       swap may be chunked (chunks > 1): chunk c's pair of blocks starts at
 *       workspace row 2 * (c * m / chunks); the peer's rows of chunk c are
 *       computed and swapped in turn, the swaps hiding behind the next
 *       chunks' GEMMs; then the own rows of chunk c once its swap is in.
 *       With beta == 0 the own rows' GEMM adds the received partial
 *       (beta 1 inside the kernel): alpha * (own partial, fp32) + (peer's
 *       partial, fp16) rounded once, one rounding fewer than the kernel
 *       path's fp16 sum, and no pass over C after the last GEMM. With kernel
 *       AUTO, AUTO_F16ACC or V8 and n a multiple of 8, the GEMM reads the
 *       partial where the swap left it (hgemm_nt_options.c_in, V8); with
 *       other kernels or n the side stream first copies it into C_local
 *       (cudaMemcpy2DAsync, which the driver runs as a kernel: it waits for
 *       SMs the GEMMs hold, so this is the slower way). With beta != 0 the
 *       own rows take beta and the small kernel adds each chunk's received
 *       partial. On 2 H200s (M = 16384, N = K = 8192) 2 chunks were the
 *       fastest setting: 1.075x the GEMM alone, against 1.098x at 1 chunk
 *       (docs/tutorial/tp-overlap.md, run 51). At 1 chunk with beta == 0
 *       the own rows go in two parts:
 *       the first (10/16 of the rows reading in place, 11/16 copying; whole
 *       256-row tiles) while the swap runs, then the small kernel adds their
 *       received partial, and the rest's GEMM adds its own with beta = 1,
 *       one rounding fewer on those rows.
 * The path's conditions. Uniform, so every rank checks the same: the context
 * has copy_engine set (agreed at its creation), N >= 2, chunks == 1 (for
 * (b) on exactly 2 ranks, any chunk count), every
 * rank's count equal (> 0), and for (a) k > 0 and lda == k (rank blocks then
 * lie m * lda elements apart, as ncclAllGather lays them out; with more
 * chunks the pieces of different ranks would have to lie back to back, a
 * chunk-major layout of A_gathered that this API does not have), for (b)
 * n > 0. Local: (a) A_local and A_gathered each inside a window of this
 * context, (b) the workspace's first ..._ce_workspace bytes inside one
 * window (within workspace_bytes, meeting no matrix). And across the ranks:
 * NCCL writes a rank's data at the same offset in each peer's window, so the
 * receiving buffer (A_gathered, the workspace) must be at the same offset of
 * the same window (the n-th hgemm_nccl_mem_alloc) on every rank. Under
 * HGEMM_NCCL_CHECK_AGREE the agreement carries each rank's window and offset
 * (-1 where its buffers do not qualify), and the ranks take the copy-engine
 * path only if all of them name the same window and offset; otherwise all
 * take the kernel path, together. Under HGEMM_NCCL_CHECK_LOCAL each rank
 * decides from its own buffers alone: the caller must give every rank
 * buffers alike (all in their windows at the same offsets, or none), else
 * the ranks call different collectives and wait for each other forever (a
 * difference in offsets alone puts the data in the wrong place). A call
 * whose arguments do not qualify takes the kernel path (and gemm_sm_count)
 * unchanged. NCCL offers no way to read a communicator's CTA policy, so the
 * library trusts copy_engine: set on a communicator without
 * NCCL_CTA_POLICY_ZERO, the same collectives run as kernels, correct but
 * fighting the GEMM for SMs.
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
 *     and a 62-bit fingerprint of their uniform arguments (and where their
 *     copy-engine buffers lie) in one all-reduce of 64 bytes on the context's
 *     side stream, and the host waits for it (for
 *     at most the context's timeout). Every rank then returns the same status:
 *     HGEMM_NCCL_ERROR_MISMATCH when the fingerprints differ, else the largest
 *     status any rank found (hgemm_nccl_failed_rank says which rank), else it
 *     enqueues the operation. The wait is for this small collective only,
 *     not for the caller's stream, but NCCL runs a communicator's operations
 *     in order, so it also waits for this communicator's earlier work (in (b),
 *     for the previous call's last reduction; (b) enqueues its first GEMM, on
 *     the workspace only, before it waits, so the GPU does not idle, except
 *     where the copy-engine path may follow: which path, and so where the
 *     partials go, is known only after the agreement).
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
 * the side stream, the events, the 64-byte agreement buffers and the table of
 * the windows made through it, so that a call allocates nothing and creates
 * nothing. Creating one is a collective
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
                                        device, the current device not the communicator's;
                                        mem_alloc / mem_free: 0 bytes, NULL or unknown pointer */
    HGEMM_NCCL_ERROR_MISALIGNED,     /* a pointer not 16-byte aligned or ld % 8 != 0 */
    HGEMM_NCCL_ERROR_MISMATCH,       /* ranks passed different uniform arguments, sizes to
                                        mem_alloc or buffers to mem_free (AGREE only), or
                                        created contexts with different modes */
    HGEMM_NCCL_ERROR_NOT_SUPPORTED,  /* valid, but beyond what hgemm's kernels serve (or, for
                                        mem_alloc, an NCCL older than 2.27) */
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
    HGEMM_NCCL_DEFAULT_TIMEOUT_S = 60,
    HGEMM_NCCL_MAX_MEM = 32          /* hgemm_nccl_mem_alloc buffers a context holds at once */
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
    int copy_engine;                 /* 1: the communicator was created with
                                        ncclConfig_t.CTAPolicy = NCCL_CTA_POLICY_ZERO: use
                                        NCCL's copy-engine collectives where the buffers
                                        allow ("Copy engines" above; NCCL cannot be asked,
                                        so this is trusted). 0: never. The same on every
                                        rank (MISMATCH otherwise); other values refused */
} hgemm_nccl_config;

typedef struct hgemm_nccl_ctx hgemm_nccl_ctx;

/* Collective over `comm`, on the current device, which must be the
 * communicator's. config NULL: AGREE, the default timeout. All ranks must
 * pass the same check mode (refused with MISMATCH otherwise). On success
 * *ctx is the new context; on failure *ctx is NULL. */
hgemm_nccl_status hgemm_nccl_ctx_create(hgemm_nccl_ctx **ctx, ncclComm_t comm,
                                        const hgemm_nccl_config *config);

/* Waits for the context's side stream, then frees what it holds. NULL is a no-op.
 * Not a collective, so it leaves the hgemm_nccl_mem_alloc buffers alone (freeing
 * them is collective): hgemm_nccl_mem_free them first, or they stay allocated
 * and registered with the communicator. */
hgemm_nccl_status hgemm_nccl_ctx_destroy(hgemm_nccl_ctx *ctx);

/* After a call refused under AGREE: the lowest rank whose own arguments were
 * refused, or -1 (success, a mismatch, or LOCAL mode). */
int hgemm_nccl_failed_rank(const hgemm_nccl_ctx *ctx);

/* 1 when the context's last hgemm_nccl_allgather_gemm or _gemm_reducescatter
 * call took the copy-engine path ("Copy engines" above), else 0 (also for
 * NULL). It says which collective the library called, not how NCCL ran it:
 * NCCL itself decides whether its copy engines serve it. */
int hgemm_nccl_used_copy_engine(const hgemm_nccl_ctx *ctx);

/* A measurement hook (tools/hgemm-nccl-bench.c draws the timeline from it):
 * from now on each call records events[i] for i < count, where
 *   events[0]       the call's start, on the caller's stream;
 *   events[1]       (a) this rank's own rows multiplied; (b) the same as events[0];
 *   events[2 + 2c]  chunk c's communication done, on the side stream;
 *   events[3 + 2c]  chunk c's GEMMs done, on the caller's stream.
 * (b) on the copy-engine path: events[1] the own rows' GEMM done, events[3]
 * the other ranks' rows' partials done (before they are sent).
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
 *   Checked as hgemm_nt checks: A_local, B_local and C_local first
 *   (INVALID_VALUE, MISALIGNED), then sizes hgemm's kernels do not serve (n
 *   or k_local above 2^31 - 257, a leading dimension of 2^39 or more:
 *   NOT_SUPPORTED, as hgemm_nt returns for them; a count or M above that is
 *   NOT_SUPPORTED before anything else), then the workspace, whose size only
 *   a served n defines.
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

/* Bytes of workspace (b)'s copy-engine path needs on nranks ranks: the same
 * as hgemm_nccl_gemm_reducescatter_workspace for 2 (and 1) ranks, twice that
 * for more (the partials sent and those received); 0 where that one is 0. */
size_t hgemm_nccl_gemm_reducescatter_ce_workspace(int nranks, int64_t m_total, int64_t n);

/* Collective: device memory for the copy-engine path, from ncclMemAlloc,
 * registered as a symmetric window of the context's communicator
 * (ncclCommWindowRegister, NCCL_WIN_COLL_SYMMETRIC), which needs every rank
 * to call with the same size, in the same order. The context remembers it
 * (at most HGEMM_NCCL_MAX_MEM at once); other contexts, even of the same
 * communicator, see ordinary memory. On success *ptr is the buffer (at least
 * 16-byte aligned), else NULL. INVALID_VALUE: a NULL context or ptr, 0 bytes,
 * the table full; MISMATCH (AGREE): the ranks asked for different sizes;
 * NCCL: the allocation or the registration failed. Under AGREE the ranks
 * agree after allocating and before registering, so a refusal or a failed
 * allocation on one rank is every rank's status and nobody is left in the
 * registration; under LOCAL such a rank returns alone and the others wait in
 * the registration (as for LOCAL's other local errors). Waits on the host. */
hgemm_nccl_status hgemm_nccl_mem_alloc(hgemm_nccl_ctx *ctx, size_t bytes, void **ptr);

/* Collective: waits for the device (like cudaFree), deregisters the window
 * and frees ptr, which must be what hgemm_nccl_mem_alloc returned on this
 * context; every rank frees its n-th buffer together. INVALID_VALUE: NULL
 * context, NULL or an unknown pointer (nothing is freed); MISMATCH (AGREE):
 * the ranks freed different buffers. */
hgemm_nccl_status hgemm_nccl_mem_free(hgemm_nccl_ctx *ctx, void *ptr);

/* A short English sentence for a status; never NULL. */
const char *hgemm_nccl_status_string(hgemm_nccl_status status);

#ifdef __cplusplus
}
#endif

#endif /* HGEMM_NCCL_H */
