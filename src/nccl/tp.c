/*
 * tp.c: libhgemm_nccl's two tensor-parallel operations (include/hgemm_nccl.h):
 * NCCL on the context's side stream, hgemm_nt on the caller's stream, CUDA
 * events between them, no host wait except the optional agreement on the
 * arguments. Each operation has two paths: the chunked kernel path (grouped
 * ncclBroadcast / ncclReduce) and the copy-engine path (one ncclAllGather or
 * ncclAlltoAll on registered windows, and for (b) hgemm's own sum,
 * src/nccl/add.cu). Contexts and the helpers both share: ctx.c.
 */
#include <stdint.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "add.h"
#include "ctx.h"
#include "hgemm.h"
#include "hgemm_nccl.h"
#include "plan.h"

/* ---- (a) all-gather + GEMM ------------------------------------------------------- */

static hgemm_nccl_status ag_pointers(const hgemm_nccl_ctx *ctx, const hgemm_nccl_ag_args *a) {
    int64_t m_total = 0;
    for (int r = 0; r < a->nranks; r++) m_total += a->m_counts[r];
    const int dev = ctx->device;
    hgemm_nccl_status st =
        hgemm_nccl__check_pointer(a->A_local, hgemm_nccl_span_bytes(a->m_counts[a->rank], a->k, a->lda), dev);
    if (st == HGEMM_NCCL_SUCCESS)
        st = hgemm_nccl__check_pointer(a->A_gathered, hgemm_nccl_span_bytes(m_total, a->k, a->lda), dev);
    if (st == HGEMM_NCCL_SUCCESS)
        st = hgemm_nccl__check_pointer(a->B_local, hgemm_nccl_span_bytes(a->n_local, a->k, a->ldb), dev);
    if (st == HGEMM_NCCL_SUCCESS)
        st = hgemm_nccl__check_pointer(a->C_local, hgemm_nccl_span_bytes(m_total, a->n_local, a->ldc), dev);
    return st;
}

static const char *row_at(const void *base, int64_t row, int64_t ld) {
    return (const char *)base + row * ld * HGEMM_NCCL_ELEMENT_BYTES;
}

/* One GEMM of (a): `rows` rows of A into C_local from row c_row, unless an
 * earlier one failed (*gemm_ok 0); the first failure goes to *first. */
static void ag_gemm(const hgemm_nccl_ag_args *a, float alpha, float beta, int64_t rows, const void *A,
                    int64_t c_row, const hgemm_nt_options *options, hgemm_nccl_status *first,
                    int *gemm_ok, cudaStream_t stream) {
    if (!*gemm_ok) return;
    char *C = (char *)a->C_local;
    hgemm_status hs = hgemm_nt_ex(a->kernel, rows, a->n_local, a->k, alpha, A, a->lda, a->B_local,
                                  a->ldb, beta, C + c_row * a->ldc * ELT, a->ldc, options, stream);
    if (hs != HGEMM_SUCCESS) {
        hgemm_nccl__note(first, hgemm_nccl__from_hgemm(hs));
        *gemm_ok = 0;
    }
}

/* One GEMM of (b): `rows` rows of A_local from row a_row, times B_local,
 * into C (ldc) with beta, unless an earlier one failed (*gemm_ok 0); the
 * first failure goes to *first. */
static void rs_gemm(const hgemm_nccl_rs_args *a, float alpha, float beta, int64_t rows, int64_t a_row, void *C,
                    int64_t ldc, const hgemm_nt_options *options, hgemm_nccl_status *first, int *gemm_ok,
                    cudaStream_t stream) {
    if (!*gemm_ok) return;
    hgemm_status hs = hgemm_nt_ex(a->kernel, rows, a->n, a->k_local, alpha, row_at(a->A_local, a_row, a->lda),
                                  a->lda, a->B_local, a->ldb, beta, C, ldc, options, stream);
    if (hs != HGEMM_SUCCESS) {
        hgemm_nccl__note(first, hgemm_nccl__from_hgemm(hs));
        *gemm_ok = 0;
    }
}

/* The side stream broadcasts chunk after chunk; the caller's stream multiplies
 * the rank's own rows first, then each chunk of the others' rows once it has
 * arrived. Every NCCL call is made whatever failed before it. */
static hgemm_nccl_status run_ag(hgemm_nccl_ctx *ctx, const hgemm_nccl_ag_args *a, float alpha,
                                float beta, cudaStream_t stream) {
    hgemm_nccl_status first = HGEMM_NCCL_SUCCESS;
    const int me = a->rank, nranks = a->nranks, chunks = a->chunks;
    const int64_t *off = ctx->offsets;
    const int communicate = a->k > 0; /* no columns, nothing to send (the same on every rank) */
    char *full = (char *)a->A_gathered;
    int gemm_ok = 1;
    /* The GEMMs that run while chunks are in flight leave SMs to NCCL; the
     * last chunk's run after every transfer and take them all. */
    hgemm_nt_options options = {NULL, 0, communicate ? ctx->gemm_sm_count : 0, NULL, 0};

    hgemm_nccl__trace(ctx, &first, TRACE_START, stream);
    if (communicate) {
        /* The side stream may overwrite A_gathered only after the caller's
         * earlier work on the stream (which may still read it). */
        hgemm_nccl__order(&first, ctx->start, stream, ctx->side);
        for (int c = 0; c < chunks; c++) {
            ncclResult_t r = ncclGroupStart();
            if (r != ncclSuccess) hgemm_nccl__note(&first, hgemm_nccl__from_nccl(r));
            for (int s = 0; s < nranks; s++) {
                const int64_t lo = hgemm_nccl_piece_lo(c, chunks, a->m_counts[s]);
                const int64_t rows = hgemm_nccl_piece_lo(c + 1, chunks, a->m_counts[s]) - lo;
                if (rows == 0) continue;
                /* The rows' span: the padding between them travels too. */
                const size_t count = (size_t)((rows - 1) * a->lda + a->k);
                char *recv = full + (off[s] + lo) * a->lda * ELT;
                const void *send = s == me ? row_at(a->A_local, lo, a->lda) : recv;
                r = ncclBroadcast(send, recv, count, ncclFloat16, s, ctx->comm, ctx->side);
                if (r != ncclSuccess) hgemm_nccl__note(&first, hgemm_nccl__from_nccl(r));
            }
            r = ncclGroupEnd();
            if (r != ncclSuccess) hgemm_nccl__note(&first, hgemm_nccl__from_nccl(r));
            cudaError_t err = cudaEventRecord(ctx->chunk[c], ctx->side);
            if (err != cudaSuccess) hgemm_nccl__note(&first, hgemm_nccl__from_cuda(err));
            hgemm_nccl__trace(ctx, &first, TRACE_CHUNK + 2 * c, ctx->side);
        }
    }

    /* The own rows need nothing from the others. */
    ag_gemm(a, alpha, beta, a->m_counts[me], a->A_local, off[me], &options, &first, &gemm_ok, stream);
    hgemm_nccl__trace(ctx, &first, TRACE_OWN, stream);
    for (int c = 0; c < chunks; c++) {
        if (communicate) {
            hgemm_nccl__wait_side(ctx, &first, ctx->chunk[c], stream);
        }
        if (c == chunks - 1) options.sm_count_target = 0;
        for (int s = 0; s < nranks; s++) {
            if (s == me) continue;
            const int64_t lo = hgemm_nccl_piece_lo(c, chunks, a->m_counts[s]);
            const int64_t rows = hgemm_nccl_piece_lo(c + 1, chunks, a->m_counts[s]) - lo;
            if (rows == 0) continue;
            ag_gemm(a, alpha, beta, rows, row_at(full, off[s] + lo, a->lda), off[s] + lo, &options,
                    &first, &gemm_ok, stream);
        }
        hgemm_nccl__trace(ctx, &first, TRACE_CHUNK + 2 * c + 1, stream);
    }
    /* The caller's stream holds the whole operation from here on. */
    if (communicate) hgemm_nccl__order(&first, ctx->done, ctx->side, stream);
    return first;
}

/* The copy-engine path of (a) (hgemm_nccl.h, "Copy engines"): one
 * ncclAllGather on the side stream, which NCCL runs on the copy engines,
 * while the own rows are multiplied on every SM; then the others' rows. */
static hgemm_nccl_status run_ag_ce(hgemm_nccl_ctx *ctx, const hgemm_nccl_ag_args *a, float alpha,
                                   float beta, cudaStream_t stream) {
    hgemm_nccl_status first = HGEMM_NCCL_SUCCESS;
    const int me = a->rank;
    const int64_t *off = ctx->offsets, m = a->m_counts[me];
    const hgemm_nt_options options = {NULL, 0, 0, NULL, 0}; /* no SM goes to NCCL */
    int gemm_ok = 1;
    hgemm_nccl__trace(ctx, &first, TRACE_START, stream);
    /* A_gathered may still be read by the caller's earlier work. */
    hgemm_nccl__order(&first, ctx->start, stream, ctx->side);
    /* lda == k: rank s's rows start s * m * lda elements in, as ncclAllGather
     * lays its blocks out. */
    ncclResult_t r = ncclAllGather(a->A_local, (void *)a->A_gathered, (size_t)(m * a->lda), ncclFloat16,
                                   ctx->comm, ctx->side);
    if (r != ncclSuccess) hgemm_nccl__note(&first, hgemm_nccl__from_nccl(r));
    cudaError_t err = cudaEventRecord(ctx->chunk[0], ctx->side);
    if (err != cudaSuccess) hgemm_nccl__note(&first, hgemm_nccl__from_cuda(err));
    hgemm_nccl__trace(ctx, &first, TRACE_CHUNK, ctx->side);

    ag_gemm(a, alpha, beta, m, a->A_local, off[me], &options, &first, &gemm_ok, stream);
    hgemm_nccl__trace(ctx, &first, TRACE_OWN, stream);
    hgemm_nccl__wait_side(ctx, &first, ctx->chunk[0], stream);
    for (int s = 0; s < a->nranks; s++)
        if (s != me)
            ag_gemm(a, alpha, beta, m, row_at(a->A_gathered, off[s], a->lda), off[s], &options, &first,
                    &gemm_ok, stream);
    hgemm_nccl__trace(ctx, &first, TRACE_CHUNK + 1, stream);
    hgemm_nccl__order(&first, ctx->done, ctx->side, stream);
    return first;
}

hgemm_nccl_status hgemm_nccl_allgather_gemm(hgemm_nccl_ctx *ctx, hgemm_kernel kernel, int chunks,
                                            const int64_t *m_counts, int64_t n_local, int64_t k,
                                            float alpha, const void *A_local, void *A_gathered,
                                            int64_t lda, const void *B_local, int64_t ldb,
                                            float beta, void *C_local, int64_t ldc,
                                            cudaStream_t stream) {
    if (ctx == NULL) return HGEMM_NCCL_ERROR_INVALID_VALUE;
    if (ctx->broken) return HGEMM_NCCL_ERROR_TIMEOUT;
    ctx->failed_rank = -1;
    ctx->used_copy_engine = 0;
    const hgemm_nccl_ag_args a = {ctx->rank, ctx->nranks, kernel,  chunks,     m_counts, n_local,
                                  k,         A_local,     A_gathered, lda,     B_local,  ldb,
                                  C_local,   ldc};
    hgemm_nccl_status st = hgemm_nccl_check_ag(&a);
    if (st == HGEMM_NCCL_SUCCESS) st = hgemm_nccl__check_device(ctx);
    if (st == HGEMM_NCCL_SUCCESS) st = ag_pointers(ctx, &a);
    /* The copy-engine path: uniform conditions first, then where this rank's
     * buffers lie; under AGREE every rank's key decides for all. */
    hgemm_nccl_ce_key key = hgemm_nccl_ce_none();
    if (st == HGEMM_NCCL_SUCCESS && ctx->copy_engine &&
        hgemm_nccl_ce_uniform_ag(ctx->nranks, chunks, m_counts, k, lda))
        key = hgemm_nccl_ce_key_ag(&a, ctx->windows, ctx->n_windows);
    int ce = key.window >= 0;
    if (ctx->check == HGEMM_NCCL_CHECK_AGREE)
        st = hgemm_nccl__agree_ce(ctx, st, hgemm_nccl_fingerprint_ag(ctx->nranks, chunks, m_counts, k, lda), key, &ce);
    if (st != HGEMM_NCCL_SUCCESS) return st;
    if (hgemm_nccl_offsets(m_counts, ctx->nranks, ctx->offsets) == 0) return HGEMM_NCCL_SUCCESS;
    ctx->used_copy_engine = ce;
    return ce ? run_ag_ce(ctx, &a, alpha, beta, stream) : run_ag(ctx, &a, alpha, beta, stream);
}

/* ---- (b) GEMM + reduce-scatter ------------------------------------------------------ */

static hgemm_nccl_status rs_pointers(const hgemm_nccl_ctx *ctx, const hgemm_nccl_rs_args *a) {
    int64_t m_total = 0;
    for (int r = 0; r < a->nranks; r++) m_total += a->m_counts[r];
    const int64_t ldw = hgemm_nccl_workspace_ld(a->n);
    const int dev = ctx->device;
    hgemm_nccl_status st =
        hgemm_nccl__check_pointer(a->A_local, hgemm_nccl_span_bytes(m_total, a->k_local, a->lda), dev);
    if (st == HGEMM_NCCL_SUCCESS)
        st = hgemm_nccl__check_pointer(a->B_local, hgemm_nccl_span_bytes(a->n, a->k_local, a->ldb), dev);
    if (st == HGEMM_NCCL_SUCCESS)
        st = hgemm_nccl__check_pointer(a->C_local, hgemm_nccl_span_bytes(a->m_counts[a->rank], a->n, a->ldc), dev);
    if (st == HGEMM_NCCL_SUCCESS)
        st = hgemm_nccl__check_pointer(a->workspace, hgemm_nccl_span_bytes(m_total, a->n, ldw), dev);
    return st;
}

typedef struct rs_state {
    hgemm_nccl_status first;
    int gemm_ok;
} rs_state;

/* Chunk c's partial products into the workspace, on the caller's stream: piece
 * c of every rank's rows. The rank's own rows start from beta * C_local (a
 * copy of C_local's rows, then hgemm with beta), so that the sum carries it once. */
static void rs_compute(hgemm_nccl_ctx *ctx, const hgemm_nccl_rs_args *a, float alpha, float beta,
                       int c, rs_state *s, cudaStream_t stream) {
    const int64_t ldw = hgemm_nccl_workspace_ld(a->n);
    char *W = (char *)a->workspace;
    for (int r = 0; r < a->nranks && s->gemm_ok; r++) {
        const int64_t lo = hgemm_nccl_piece_lo(c, a->chunks, a->m_counts[r]);
        const int64_t rows = hgemm_nccl_piece_lo(c + 1, a->chunks, a->m_counts[r]) - lo;
        if (rows == 0) continue;
        const int64_t row = ctx->offsets[r] + lo;
        float b = 0.0f;
        if (r == a->rank && beta != 0.0f) {
            cudaError_t err = cudaMemcpy2DAsync(W + row * ldw * ELT, (size_t)ldw * ELT,
                                                row_at(a->C_local, lo, a->ldc), (size_t)a->ldc * ELT,
                                                (size_t)a->n * ELT, (size_t)rows,
                                                cudaMemcpyDeviceToDevice, stream);
            if (err != cudaSuccess) {
                hgemm_nccl__note(&s->first, hgemm_nccl__from_cuda(err));
                s->gemm_ok = 0;
                break;
            }
            b = beta;
        }
        /* Chunk 0 computes before any reduction runs: every SM. The later
         * ones run beside the previous chunk's reduction and leave SMs to it. */
        const hgemm_nt_options options = {NULL, 0, c > 0 ? ctx->gemm_sm_count : 0, NULL, 0};
        rs_gemm(a, alpha, b, rows, row, W + row * ldw * ELT, ldw, &options, &s->first, &s->gemm_ok, stream);
    }
}

/* Chunk after chunk: the caller's stream computes chunk c, then the side
 * stream reduces each of its pieces to the rank that owns it while the
 * caller's stream computes chunk c + 1. `computed` chunks were enqueued
 * already (the first one, under AGREE). */
static hgemm_nccl_status run_rs(hgemm_nccl_ctx *ctx, const hgemm_nccl_rs_args *a, float alpha,
                                float beta, int computed, rs_state *s, cudaStream_t stream) {
    const int me = a->rank, chunks = a->chunks;
    const int64_t ldw = hgemm_nccl_workspace_ld(a->n);
    const int direct = a->ldc == a->n; /* the sum lands in C_local itself */
    char *W = (char *)a->workspace;
    char *C = (char *)a->C_local;
    for (int c = 0; c < chunks; c++) {
        if (c >= computed) rs_compute(ctx, a, alpha, beta, c, s, stream);
        hgemm_nccl__trace(ctx, &s->first, TRACE_CHUNK + 2 * c + 1, stream);
        hgemm_nccl__order(&s->first, ctx->chunk[c], stream, ctx->side);
        ncclResult_t r = ncclGroupStart();
        if (r != ncclSuccess) hgemm_nccl__note(&s->first, hgemm_nccl__from_nccl(r));
        for (int o = 0; o < a->nranks; o++) {
            const int64_t lo = hgemm_nccl_piece_lo(c, chunks, a->m_counts[o]);
            const int64_t rows = hgemm_nccl_piece_lo(c + 1, chunks, a->m_counts[o]) - lo;
            if (rows == 0) continue;
            char *send = W + (ctx->offsets[o] + lo) * ldw * ELT;
            void *recv = o == me && direct ? C + lo * a->ldc * ELT : send;
            const size_t count = (size_t)((rows - 1) * ldw + a->n);
            r = ncclReduce(send, recv, count, ncclFloat16, ncclSum, o, ctx->comm, ctx->side);
            if (r != ncclSuccess) hgemm_nccl__note(&s->first, hgemm_nccl__from_nccl(r));
        }
        r = ncclGroupEnd();
        if (r != ncclSuccess) hgemm_nccl__note(&s->first, hgemm_nccl__from_nccl(r));
        const int64_t lo = hgemm_nccl_piece_lo(c, chunks, a->m_counts[me]);
        const int64_t rows = hgemm_nccl_piece_lo(c + 1, chunks, a->m_counts[me]) - lo;
        if (!direct && rows > 0) {
            cudaError_t err = cudaMemcpy2DAsync(C + lo * a->ldc * ELT, (size_t)a->ldc * ELT,
                                                W + (ctx->offsets[me] + lo) * ldw * ELT, (size_t)ldw * ELT,
                                                (size_t)a->n * ELT, (size_t)rows,
                                                cudaMemcpyDeviceToDevice, ctx->side);
            if (err != cudaSuccess) hgemm_nccl__note(&s->first, hgemm_nccl__from_cuda(err));
        }
        hgemm_nccl__trace(ctx, &s->first, TRACE_CHUNK + 2 * c, ctx->side);
    }
    hgemm_nccl__order(&s->first, ctx->done, ctx->side, stream);
    return s->first;
}

/* The copy-engine path of (b) on more than 2 ranks (hgemm_nccl.h, "Copy
 * engines"; 2 ranks: run_rs_ce_two). The workspace holds R, M rows of ldw,
 * block p (rows p m ..) receiving rank p's partial of this rank's rows, and
 * a second region W of the same shape with the partials this rank sends,
 * block p for rank p; ncclAlltoAll(W, R) delivers them (and copies W's own
 * block, unused, to R's). Every SM computes: the others' partials, then,
 * while the transfer runs, the own rows straight into C_local; then C_local
 * += the received blocks. */
static hgemm_nccl_status run_rs_ce(hgemm_nccl_ctx *ctx, const hgemm_nccl_rs_args *a, float alpha,
                                   float beta, cudaStream_t stream) {
    hgemm_nccl_status first = HGEMM_NCCL_SUCCESS;
    const int me = a->rank, nranks = a->nranks;
    const int64_t m = a->m_counts[me], ldw = hgemm_nccl_workspace_ld(a->n), block = m * ldw;
    const int64_t *off = ctx->offsets;
    char *R = (char *)a->workspace;
    char *W = R + (size_t)nranks * (size_t)block * ELT;
    const hgemm_nt_options options = {NULL, 0, 0, NULL, 0};
    int gemm_ok = 1;
    hgemm_nccl__trace(ctx, &first, TRACE_START, stream);
    for (int p = 0; p < nranks; p++)
        if (p != me)
            rs_gemm(a, alpha, 0.0f, m, off[p], W + (size_t)p * (size_t)block * ELT, ldw, &options, &first,
                    &gemm_ok, stream);
    hgemm_nccl__trace(ctx, &first, TRACE_CHUNK + 1, stream);
    /* The partials are written, and the caller's earlier reads of R (the last
     * call's sum) are done: the peers may write R once NCCL lets them. */
    hgemm_nccl__order(&first, ctx->chunk[0], stream, ctx->side);
    ncclResult_t r = ncclAlltoAll(W, R, (size_t)block, ncclFloat16, ctx->comm, ctx->side);
    if (r != ncclSuccess) hgemm_nccl__note(&first, hgemm_nccl__from_nccl(r));
    hgemm_nccl__trace(ctx, &first, TRACE_CHUNK, ctx->side);

    char *C = (char *)a->C_local;
    rs_gemm(a, alpha, beta, m, off[me], C, a->ldc, &options, &first, &gemm_ok, stream);
    hgemm_nccl__trace(ctx, &first, TRACE_OWN, stream);
    hgemm_nccl__order(&first, ctx->done, ctx->side, stream);
    if (gemm_ok) {
        cudaError_t err = hgemm_nccl_add_blocks(C, a->ldc, R, block, ldw, nranks, me, m, a->n, stream);
        if (err != cudaSuccess) hgemm_nccl__note(&first, hgemm_nccl__from_cuda(err));
    }
    return first;
}

/* Whether this rank's own-row GEMMs may read the received partial straight
 * from the workspace as their C input (hgemm_nt_options.c_in): V8 serves it,
 * where n is a multiple of 8; AUTO and AUTO_F16ACC take V8 for it. Local: the
 * NCCL calls are the same either way (the other way copies the partial into
 * C_local first). */
static int c_in_ok(const hgemm_nccl_rs_args *a) {
    const int kernel_ok = a->kernel == HGEMM_KERNEL_AUTO || a->kernel == HGEMM_KERNEL_AUTO_F16ACC ||
                          a->kernel == HGEMM_KERNEL_V8;
    return kernel_ok && a->n % HGEMM_NCCL_LD_ALIGN == 0;
}

/* The own rows [lo, lo + rows) of C_local (rows a_row.. of A_local), with
 * their received partial at `theirs` (the workspace block the swap filled,
 * leading dimension ldw) summed by the GEMM: alpha * own partial + 1 *
 * received. Reads the block in place where in_place (c_in_ok: no copy);
 * otherwise the caller has copied it into those rows of C_local. */
static void rs_gemm_received(const hgemm_nccl_rs_args *a, float alpha, int64_t rows, int64_t a_row, int64_t lo,
                             const char *theirs, int64_t ldw, int in_place, hgemm_nccl_status *first,
                             int *gemm_ok, cudaStream_t stream) {
    hgemm_nt_options options = {NULL, 0, 0, NULL, 0};
    if (in_place) {
        options.c_in = theirs;
        options.ldc_in = ldw;
    }
    rs_gemm(a, alpha, 1.0f, rows, a_row, (char *)a->C_local + (size_t)(lo * a->ldc) * ELT, a->ldc, &options,
            first, gemm_ok, stream);
}

/* (b) on 2 ranks, 1 chunk, beta == 0, with copy engines: the own rows in two
 * parts so that most of the sum rides inside the GEMM. The swap (one
 * in-place ncclAllGather, as run_rs_ce_two at 1 chunk) runs while the first
 * part of the own rows multiplies; the small kernel then adds the received
 * partial of the first part, and the second part's GEMM adds its own with
 * beta = 1. Where c_in_ok the second part reads its received partial in the
 * workspace (no copy), and the first part is RS_FIRST_NUM_IN / RS_FIRST_DEN
 * of the own rows; otherwise the side stream copies the partial into C_local
 * first and the first part is RS_FIRST_NUM / RS_FIRST_DEN, long enough to
 * hide swap and copy. Both are rounded down to whole 256-row cluster tiles.
 * Run 35 measured the swap at about 0.6 of the own rows' GEMM. With the
 * copy, the first part at 9/16 (run 39) left the second waiting for it:
 * (b) 1.12x the GEMM alone, against 1.10x at 11/16 (run 38); run 42 showed
 * why: cudaMemcpy2DAsync between two buffers of one GPU ran as a kernel,
 * which waited for SMs until the first part's GEMM ended. Returns 0
 * (nothing enqueued) where the cut is empty. */
enum { RS_FIRST_NUM = 11, RS_FIRST_NUM_IN = 10, RS_FIRST_DEN = 16, RS_TILE_ROWS = 256 };

static int run_rs_ce_split_own(hgemm_nccl_ctx *ctx, const hgemm_nccl_rs_args *a, float alpha,
                               cudaStream_t stream, hgemm_nccl_status *out) {
    const int me = a->rank, peer = 1 - me, in_place = c_in_ok(a);
    const int64_t m = a->m_counts[me], ldw = hgemm_nccl_workspace_ld(a->n);
    const int64_t m1 = m * (in_place ? RS_FIRST_NUM_IN : RS_FIRST_NUM) / RS_FIRST_DEN / RS_TILE_ROWS * RS_TILE_ROWS;
    if (m1 <= 0 || m1 >= m) return 0;
    hgemm_nccl_status first = HGEMM_NCCL_SUCCESS;
    const int64_t *off = ctx->offsets;
    char *R = (char *)a->workspace;
    char *C = (char *)a->C_local;
    const size_t count = (size_t)(m * ldw);
    char *mine = R + (size_t)me * count * ELT, *theirs = R + (size_t)peer * count * ELT;
    const hgemm_nt_options options = {NULL, 0, 0, NULL, 0};
    int gemm_ok = 1;
    hgemm_nccl__trace(ctx, &first, TRACE_START, stream);
    rs_gemm(a, alpha, 0.0f, m, off[peer], mine, ldw, &options, &first, &gemm_ok, stream);
    hgemm_nccl__trace(ctx, &first, TRACE_CHUNK + 1, stream);
    hgemm_nccl__order(&first, ctx->chunk[0], stream, ctx->side);
    ncclResult_t r = ncclAllGather(mine, R, count, ncclFloat16, ctx->comm, ctx->side);
    if (r != ncclSuccess) hgemm_nccl__note(&first, hgemm_nccl__from_nccl(r));
    hgemm_nccl__trace(ctx, &first, TRACE_CHUNK, ctx->side);
    cudaError_t err = cudaEventRecord(ctx->chunk[0], ctx->side); /* the swap is in */
    if (err != cudaSuccess) hgemm_nccl__note(&first, hgemm_nccl__from_cuda(err));
    if (!in_place) {
        err = cudaMemcpy2DAsync(C + (size_t)(m1 * a->ldc) * ELT, (size_t)a->ldc * ELT,
                                theirs + (size_t)(m1 * ldw) * ELT, (size_t)ldw * ELT, (size_t)a->n * ELT,
                                (size_t)(m - m1), cudaMemcpyDeviceToDevice, ctx->side);
        if (err != cudaSuccess) hgemm_nccl__note(&first, hgemm_nccl__from_cuda(err));
        err = cudaEventRecord(ctx->chunk[1], ctx->side); /* and copied into C */
        if (err != cudaSuccess) hgemm_nccl__note(&first, hgemm_nccl__from_cuda(err));
    }

    rs_gemm(a, alpha, 0.0f, m1, off[me], C, a->ldc, &options, &first, &gemm_ok, stream);
    hgemm_nccl__wait_side(ctx, &first, ctx->chunk[0], stream);
    if (gemm_ok) {
        err = hgemm_nccl_add_blocks(C, a->ldc, R, (int64_t)count, ldw, 2, me, m1, a->n, stream);
        if (err != cudaSuccess) hgemm_nccl__note(&first, hgemm_nccl__from_cuda(err));
    }
    /* the swap (chunk[0]) is waited for above */
    if (!in_place) hgemm_nccl__wait_side(ctx, &first, ctx->chunk[1], stream);
    rs_gemm_received(a, alpha, m - m1, off[me] + m1, m1, theirs + (size_t)(m1 * ldw) * ELT, ldw, in_place,
                     &first, &gemm_ok, stream);
    hgemm_nccl__trace(ctx, &first, TRACE_OWN, stream);
    hgemm_nccl__order(&first, ctx->done, ctx->side, stream);
    *out = first;
    return 1;
}

/* The copy-engine path of (b) on 2 ranks (hgemm_nccl.h, "Copy engines").
 * The workspace holds M rows of ldw; chunk c's pair of blocks starts at row
 * 2 * lo(c) (lo: the chunk's first row within a rank's block), block r of
 * the pair at rows_c * ldw elements per r: this rank computes the peer's
 * rows of chunk c into its own block, and an in-place ncclAllGather swaps
 * the pair, leaving the peer's partial of this rank's rows in the other
 * block. Every SM computes: first the peer's rows, chunk after chunk, each
 * chunk's swap starting as soon as its GEMM is done; then the own rows,
 * chunk c once its swap is in. With beta == 0 the own rows' GEMM adds the
 * received block with beta = 1: read in place as its C input where c_in_ok,
 * else copied into C_local first (cudaMemcpy2DAsync on the side stream), so
 * nothing runs after the last GEMM (from 2 chunks on: the first own chunk's
 * swap then hides behind the last peer chunk's GEMM); otherwise the own rows
 * take the caller's beta and a small kernel adds each received block (fp32,
 * one rounding). */
static hgemm_nccl_status run_rs_ce_two(hgemm_nccl_ctx *ctx, const hgemm_nccl_rs_args *a, float alpha,
                                       float beta, cudaStream_t stream) {
    hgemm_nccl_status first = HGEMM_NCCL_SUCCESS;
    const int me = a->rank, peer = 1 - me, chunks = a->chunks, in_place = c_in_ok(a);
    const int64_t m = a->m_counts[me], ldw = hgemm_nccl_workspace_ld(a->n);
    const int64_t *off = ctx->offsets;
    char *R = (char *)a->workspace;
    char *C = (char *)a->C_local;
    /* Local (the NCCL calls are the same either way): at 1 chunk the own
     * rows would wait for the whole swap, so part of the sum stays a pass
     * of its own (run_rs_ce_split_own). */
    const int fuse = beta == 0.0f && chunks > 1;
    hgemm_nccl_status split_status = HGEMM_NCCL_SUCCESS;
    if (chunks == 1 && beta == 0.0f && run_rs_ce_split_own(ctx, a, alpha, stream, &split_status))
        return split_status;
    const hgemm_nt_options options = {NULL, 0, 0, NULL, 0};
    int gemm_ok = 1;
#define PAIR(c) (R + (size_t)(2 * hgemm_nccl_piece_lo((c), chunks, m) * ldw) * ELT)
#define ROWS(c) (hgemm_nccl_piece_lo((c) + 1, chunks, m) - hgemm_nccl_piece_lo((c), chunks, m))
    hgemm_nccl__trace(ctx, &first, TRACE_START, stream);
    for (int c = 0; c < chunks; c++) {
        const int64_t lo = hgemm_nccl_piece_lo(c, chunks, m), rows = ROWS(c);
        const size_t count = (size_t)(rows * ldw);
        char *pair = PAIR(c);
        if (rows > 0)
            rs_gemm(a, alpha, 0.0f, rows, off[peer] + lo, pair + (size_t)me * count * ELT, ldw, &options, &first,
                    &gemm_ok, stream);
        hgemm_nccl__trace(ctx, &first, TRACE_CHUNK + 2 * c + 1, stream);
        /* The partial is written, and the caller's earlier reads of the pair
         * (the last call's) are done: the peer may write it now. */
        hgemm_nccl__order(&first, ctx->chunk[c], stream, ctx->side);
        if (rows > 0) {
            ncclResult_t r = ncclAllGather(pair + (size_t)me * count * ELT, pair, count, ncclFloat16, ctx->comm,
                                           ctx->side);
            if (r != ncclSuccess) hgemm_nccl__note(&first, hgemm_nccl__from_nccl(r));
            if (fuse && !in_place) {
                cudaError_t err = cudaMemcpy2DAsync(C + (size_t)(lo * a->ldc) * ELT, (size_t)a->ldc * ELT,
                                                    pair + (size_t)peer * count * ELT, (size_t)ldw * ELT,
                                                    (size_t)a->n * ELT, (size_t)rows, cudaMemcpyDeviceToDevice,
                                                    ctx->side);
                if (err != cudaSuccess) hgemm_nccl__note(&first, hgemm_nccl__from_cuda(err));
            }
        }
        hgemm_nccl__trace(ctx, &first, TRACE_CHUNK + 2 * c, ctx->side);
        /* chunk[c] again, now side -> caller: its wait above is already enqueued */
        cudaError_t err = cudaEventRecord(ctx->chunk[c], ctx->side);
        if (err != cudaSuccess) hgemm_nccl__note(&first, hgemm_nccl__from_cuda(err));
    }
    for (int c = 0; c < chunks; c++) {
        const int64_t lo = hgemm_nccl_piece_lo(c, chunks, m), rows = ROWS(c);
        if (rows == 0) continue;
        const size_t count = (size_t)(rows * ldw);
        char *c_rows = C + (size_t)(lo * a->ldc) * ELT;
        if (fuse) { /* the received partial is in the workspace (or copied into C): the GEMM adds it */
            hgemm_nccl__wait_side(ctx, &first, ctx->chunk[c], stream);
            rs_gemm_received(a, alpha, rows, off[me] + lo, lo, PAIR(c) + (size_t)peer * count * ELT, ldw,
                             in_place, &first, &gemm_ok, stream);
            continue;
        }
        rs_gemm(a, alpha, beta, rows, off[me] + lo, c_rows, a->ldc, &options, &first, &gemm_ok, stream);
        hgemm_nccl__wait_side(ctx, &first, ctx->chunk[c], stream);
        if (gemm_ok) {
            cudaError_t err =
                hgemm_nccl_add_blocks(c_rows, a->ldc, PAIR(c), (int64_t)count, ldw, 2, me, rows, a->n, stream);
            if (err != cudaSuccess) hgemm_nccl__note(&first, hgemm_nccl__from_cuda(err));
        }
    }
    hgemm_nccl__trace(ctx, &first, TRACE_OWN, stream);
    hgemm_nccl__order(&first, ctx->done, ctx->side, stream);
#undef PAIR
#undef ROWS
    return first;
}

hgemm_nccl_status hgemm_nccl_gemm_reducescatter(hgemm_nccl_ctx *ctx, hgemm_kernel kernel,
                                                int chunks, const int64_t *m_counts, int64_t n,
                                                int64_t k_local, float alpha, const void *A_local,
                                                int64_t lda, const void *B_local, int64_t ldb,
                                                float beta, void *C_local, int64_t ldc,
                                                void *workspace, size_t workspace_bytes,
                                                cudaStream_t stream) {
    if (ctx == NULL) return HGEMM_NCCL_ERROR_INVALID_VALUE;
    if (ctx->broken) return HGEMM_NCCL_ERROR_TIMEOUT;
    ctx->failed_rank = -1;
    ctx->used_copy_engine = 0;
    const hgemm_nccl_rs_args a = {ctx->rank, ctx->nranks, kernel, chunks, m_counts, n,
                                  k_local,   A_local,     lda,    B_local, ldb,     C_local,
                                  ldc,       workspace,   workspace_bytes};
    hgemm_nccl_status st = hgemm_nccl_check_rs(&a);
    if (st == HGEMM_NCCL_SUCCESS) st = hgemm_nccl__check_device(ctx);
    if (st == HGEMM_NCCL_SUCCESS) st = rs_pointers(ctx, &a);
    /* The copy-engine path: as in (a). */
    const int ce_uniform = st == HGEMM_NCCL_SUCCESS && ctx->copy_engine &&
                           hgemm_nccl_ce_uniform_rs(ctx->nranks, chunks, m_counts, n);
    const hgemm_nccl_ce_key key = ce_uniform ? hgemm_nccl_ce_key_rs(&a, ctx->windows, ctx->n_windows)
                                             : hgemm_nccl_ce_none();
    int ce = key.window >= 0;
    rs_state s = {HGEMM_NCCL_SUCCESS, 1};
    int computed = 0;
    const int work = st == HGEMM_NCCL_SUCCESS &&
                     hgemm_nccl_offsets(m_counts, ctx->nranks, ctx->offsets) > 0 && n > 0;
    if (ctx->check == HGEMM_NCCL_CHECK_AGREE) {
        /* The first chunk writes the workspace only: enqueued before the
         * host waits, so that the GPU has work while it does. Not where the
         * copy-engine path may follow: its partials go elsewhere, and which
         * path is taken is known only after the agreement. */
        if (work && !ce_uniform) {
            hgemm_nccl__trace(ctx, &s.first, TRACE_START, stream);
            hgemm_nccl__trace(ctx, &s.first, TRACE_OWN, stream);
            rs_compute(ctx, &a, alpha, beta, 0, &s, stream);
            computed = 1;
            st = s.first;
        }
        st = hgemm_nccl__agree_ce(ctx, st, hgemm_nccl_fingerprint_rs(ctx->nranks, chunks, m_counts, n), key, &ce);
    }
    if (st != HGEMM_NCCL_SUCCESS || !work) return st;
    ctx->used_copy_engine = ce;
    if (ce) return ctx->nranks == 2 ? run_rs_ce_two(ctx, &a, alpha, beta, stream) : run_rs_ce(ctx, &a, alpha, beta, stream);
    if (!computed) {
        hgemm_nccl__trace(ctx, &s.first, TRACE_START, stream);
        hgemm_nccl__trace(ctx, &s.first, TRACE_OWN, stream);
    }
    return run_rs(ctx, &a, alpha, beta, computed, &s, stream);
}
