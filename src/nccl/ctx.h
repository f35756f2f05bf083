/*
 * ctx.h: what the two halves of libhgemm_nccl share (ctx.c: contexts,
 * statuses, waits, the agreement, registered buffers; tp.c: the two
 * tensor-parallel operations): the context's layout, the trace and element
 * constants, and the helpers, which libhgemm_nccl.so does not export.
 */
#ifndef HGEMM_NCCL_CTX_H
#define HGEMM_NCCL_CTX_H

#include <stdint.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "hgemm.h"
#include "hgemm_nccl.h"
#include "plan.h"

#ifdef __cplusplus
extern "C" {
#endif

#if !defined(NCCL_VERSION_CODE) || NCCL_VERSION_CODE < 21400
#error "libhgemm_nccl needs NCCL 2.14 or newer"
#endif

enum {
    TRACE_START = 0,       /* trace events: the call's start (caller's stream) */
    TRACE_OWN = 1,         /* (a) this rank's own rows multiplied */
    TRACE_CHUNK = 2,       /* 2 + 2c: chunk c's communication done; 3 + 2c: its GEMMs done */
    ELT = HGEMM_NCCL_ELEMENT_BYTES  /* bytes of an fp16 element */
};

struct hgemm_nccl_ctx {
    ncclComm_t comm;
    int rank, nranks, device, sm90;
    hgemm_nccl_check check;
    double timeout_s;
    int gemm_sm_count;               /* the GEMMs' SM target (hgemm_nt_ex), 0: all */
    int copy_engine;                 /* hgemm_nccl_config.copy_engine, agreed at creation */
    int used_copy_engine;            /* the last (a) or (b) call took the copy-engine path */
    int broken;                      /* a collective timed out: every later call refuses */
    int failed_rank;                 /* of the last call refused under AGREE */
    int64_t *offsets;                /* [nranks]: each rank's first row, for the call in hand */
    cudaStream_t side;               /* NCCL runs here */
    cudaEvent_t start, done, agreed; /* call start (caller's stream), side stream done, agreement copied back */
    cudaEvent_t chunk[HGEMM_NCCL_MAX_CHUNKS];
    int64_t *agree_dev;              /* [HGEMM_NCCL_AGREE_SLOTS] on the device */
    int64_t *agree_host;             /* the same, pinned */
    cudaEvent_t *trace;              /* hgemm_nccl_ctx_set_trace; NULL: off */
    int trace_count;
    hgemm_nccl_window windows[HGEMM_NCCL_MAX_MEM]; /* hgemm_nccl_mem_alloc's, in no order */
    int n_windows;
    int64_t next_serial;             /* the next window's serial: the same on every rank */
};

/* Internal to libhgemm_nccl: kept out of libhgemm_nccl.so's dynamic symbols. */
#define HGEMM_NCCL_INTERNAL __attribute__((visibility("hidden")))

/* Statuses: of our own failed CUDA call (its pending error cleared), of an
 * NCCL call, of an hgemm call; note keeps the first error of a call. */
HGEMM_NCCL_INTERNAL hgemm_nccl_status hgemm_nccl__from_cuda(cudaError_t err);
HGEMM_NCCL_INTERNAL hgemm_nccl_status hgemm_nccl__from_nccl(ncclResult_t r);
HGEMM_NCCL_INTERNAL hgemm_nccl_status hgemm_nccl__from_hgemm(hgemm_status s);
HGEMM_NCCL_INTERNAL void hgemm_nccl__note(hgemm_nccl_status *first, hgemm_nccl_status st);

/* The current device is the context's, an sm_90 one; a matrix of `bytes` > 0
 * is memory of device `dev` (or managed). */
HGEMM_NCCL_INTERNAL hgemm_nccl_status hgemm_nccl__check_device(const hgemm_nccl_ctx *ctx);
HGEMM_NCCL_INTERNAL hgemm_nccl_status hgemm_nccl__check_pointer(const void *p, int64_t bytes, int dev);

/* The ranks' agreement on verdict, fingerprint and copy-engine key. */
HGEMM_NCCL_INTERNAL hgemm_nccl_status hgemm_nccl__agree_ce(hgemm_nccl_ctx *ctx, hgemm_nccl_status own,
                                                           uint64_t fingerprint, hgemm_nccl_ce_key key,
                                                           int *copy_engine);

/* Order between streams (`to` after `from`; the caller's stream after an
 * event of the side stream) and trace events; failures go to *first. */
HGEMM_NCCL_INTERNAL void hgemm_nccl__order(hgemm_nccl_status *first, cudaEvent_t ev, cudaStream_t from,
                                           cudaStream_t to);
HGEMM_NCCL_INTERNAL void hgemm_nccl__wait_side(hgemm_nccl_ctx *ctx, hgemm_nccl_status *first, cudaEvent_t ev,
                                               cudaStream_t stream);
HGEMM_NCCL_INTERNAL void hgemm_nccl__trace(hgemm_nccl_ctx *ctx, hgemm_nccl_status *first, int index,
                                           cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* HGEMM_NCCL_CTX_H */
