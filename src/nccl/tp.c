/*
 * tp.c: libhgemm_nccl's contexts, its registered buffers and its two
 * tensor-parallel operations (include/hgemm_nccl.h): NCCL on the context's
 * side stream, hgemm_nt on the caller's stream, CUDA events between them, no
 * host wait except the optional agreement on the arguments. Each operation
 * has two paths: the chunked kernel path (grouped ncclBroadcast / ncclReduce)
 * and the copy-engine path (one ncclAllGather or ncclAlltoAll on registered
 * windows, and for (b) hgemm's own sum, src/nccl/add.cu).
 */
#define _POSIX_C_SOURCE 200809L

#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "add.h"
#include "hgemm.h"
#include "hgemm_nccl.h"
#include "plan.h"

#if !defined(NCCL_VERSION_CODE) || NCCL_VERSION_CODE < 21400
#error "libhgemm_nccl needs NCCL 2.14 or newer"
#endif
/* Symmetric windows (ncclCommWindowRegister) came with NCCL 2.27, the
 * copy-engine collectives that use them with 2.28. Older: hgemm_nccl_mem_alloc
 * is NOT_SUPPORTED, and no call finds a window. */
#define HAVE_WINDOWS (NCCL_VERSION_CODE >= 22700)

enum {
    TRACE_START = 0,       /* trace events: the call's start (caller's stream) */
    TRACE_OWN = 1,         /* (a) this rank's own rows multiplied */
    TRACE_CHUNK = 2,       /* 2 + 2c: chunk c's communication done; 3 + 2c: its GEMMs done */
    ELT = HGEMM_NCCL_ELEMENT_BYTES, /* bytes of an fp16 element */
    SM90_MAJOR = 9,
    SM90_MINOR = 0
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

/* ---- statuses ------------------------------------------------------------ */

/* The status of our own failed CUDA call, whose error is then the pending
 * one: cleared, being reported through the status. */
static hgemm_nccl_status from_cuda(cudaError_t err) {
    if (err == cudaSuccess) return HGEMM_NCCL_SUCCESS;
    (void)cudaGetLastError();
    switch (err) {
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorStubLibrary:
    case cudaErrorDevicesUnavailable:
    case cudaErrorInitializationError:
        return HGEMM_NCCL_ERROR_NO_DEVICE;
    default:
        return HGEMM_NCCL_ERROR_CUDA;
    }
}

static hgemm_nccl_status from_nccl(ncclResult_t r) {
    return r == ncclSuccess ? HGEMM_NCCL_SUCCESS : HGEMM_NCCL_ERROR_NCCL;
}

static hgemm_nccl_status from_hgemm(hgemm_status s) {
    switch (s) {
    case HGEMM_SUCCESS: return HGEMM_NCCL_SUCCESS;
    case HGEMM_ERROR_INVALID_VALUE: return HGEMM_NCCL_ERROR_INVALID_VALUE;
    case HGEMM_ERROR_MISALIGNED: return HGEMM_NCCL_ERROR_MISALIGNED;
    case HGEMM_ERROR_NOT_SUPPORTED: return HGEMM_NCCL_ERROR_NOT_SUPPORTED;
    case HGEMM_ERROR_NO_DEVICE: return HGEMM_NCCL_ERROR_NO_DEVICE;
    case HGEMM_ERROR_ARCH_MISMATCH: return HGEMM_NCCL_ERROR_ARCH_MISMATCH;
    case HGEMM_ERROR_CUDA: return HGEMM_NCCL_ERROR_CUDA;
    }
    return HGEMM_NCCL_ERROR_CUDA;
}

/* Keeps the first error of a call that carries on past errors. */
static void note(hgemm_nccl_status *first, hgemm_nccl_status st) {
    if (*first == HGEMM_NCCL_SUCCESS) *first = st;
}

/* ---- device and pointer checks ------------------------------------------- */

static hgemm_nccl_status check_device(const hgemm_nccl_ctx *ctx) {
    int dev = -1;
    cudaError_t err = cudaGetDevice(&dev);
    if (err != cudaSuccess) return from_cuda(err);
    if (dev != ctx->device) return HGEMM_NCCL_ERROR_INVALID_VALUE;
    if (!ctx->sm90) return HGEMM_NCCL_ERROR_ARCH_MISMATCH;
    return HGEMM_NCCL_SUCCESS;
}

/* A matrix of `bytes` > 0 must be memory of the communicator's device
 * (cudaMalloc'd there, or managed), as hgemm_nt and NCCL need. */
static hgemm_nccl_status check_pointer(const void *p, int64_t bytes, int dev) {
    if (bytes <= 0) return HGEMM_NCCL_SUCCESS;
    struct cudaPointerAttributes attr;
    cudaError_t err = cudaPointerGetAttributes(&attr, p);
    if (err == cudaErrorInvalidValue) {
        (void)cudaGetLastError(); /* this call's own error */
        return HGEMM_NCCL_ERROR_INVALID_VALUE;
    }
    if (err != cudaSuccess) return from_cuda(err);
    if (attr.type == cudaMemoryTypeManaged) return HGEMM_NCCL_SUCCESS;
    if (attr.type == cudaMemoryTypeDevice && attr.device == dev) return HGEMM_NCCL_SUCCESS;
    return HGEMM_NCCL_ERROR_INVALID_VALUE;
}

/* ---- waiting and agreeing -------------------------------------------------- */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Waits on the host for ev (recorded on the side stream) for at most the
 * context's timeout, watching the communicator for asynchronous errors. */
static hgemm_nccl_status wait_bounded(hgemm_nccl_ctx *ctx, cudaEvent_t ev) {
    const double deadline = now_s() + ctx->timeout_s;
    for (;;) {
        cudaError_t err = cudaEventQuery(ev);
        if (err == cudaSuccess) return HGEMM_NCCL_SUCCESS;
        if (err != cudaErrorNotReady) return from_cuda(err);
        ncclResult_t async = ncclSuccess;
        ncclResult_t r = ncclCommGetAsyncError(ctx->comm, &async);
        if (r != ncclSuccess || (async != ncclSuccess && async != ncclInProgress))
            return HGEMM_NCCL_ERROR_NCCL;
        if (now_s() > deadline) {
            ctx->broken = 1;
            return HGEMM_NCCL_ERROR_TIMEOUT;
        }
        sched_yield();
    }
}

/* One all-reduce (max) of every rank's verdict, fingerprint and copy-engine
 * key on the side stream; the status every rank returns, and in
 * *copy_engine (may be NULL) whether every rank may take the copy-engine path. */
static hgemm_nccl_status agree_ce(hgemm_nccl_ctx *ctx, hgemm_nccl_status own, uint64_t fingerprint,
                                  hgemm_nccl_ce_key key, int *copy_engine) {
    const size_t bytes = sizeof(int64_t) * HGEMM_NCCL_AGREE_SLOTS;
    int ce = 0;
    if (copy_engine) *copy_engine = 0;
    hgemm_nccl_agree_encode(ctx->agree_host, own, ctx->rank, ctx->nranks, fingerprint, key);
    cudaError_t err = cudaMemcpyAsync(ctx->agree_dev, ctx->agree_host, bytes, cudaMemcpyHostToDevice,
                                      ctx->side);
    if (err != cudaSuccess) return from_cuda(err);
    ncclResult_t r = ncclAllReduce(ctx->agree_dev, ctx->agree_dev, HGEMM_NCCL_AGREE_SLOTS, ncclInt64,
                                   ncclMax, ctx->comm, ctx->side);
    if (r != ncclSuccess) return from_nccl(r);
    err = cudaMemcpyAsync(ctx->agree_host, ctx->agree_dev, bytes, cudaMemcpyDeviceToHost, ctx->side);
    if (err == cudaSuccess) err = cudaEventRecord(ctx->agreed, ctx->side);
    if (err != cudaSuccess) return from_cuda(err);
    hgemm_nccl_status st = wait_bounded(ctx, ctx->agreed);
    if (st != HGEMM_NCCL_SUCCESS) return st;
    st = hgemm_nccl_agree_decode(ctx->agree_host, ctx->nranks, &ctx->failed_rank, &ce);
    if (getenv("HGEMM_NCCL_DEBUG") != NULL) { /* the exchanged maxima, for a refusal that needs explaining */
        fprintf(stderr, "hgemm_nccl rank %d: agreement", ctx->rank);
        for (int i = 0; i < HGEMM_NCCL_AGREE_SLOTS; i++) fprintf(stderr, " %lld", (long long)ctx->agree_host[i]);
        fprintf(stderr, " -> %d (copy engine %d)\n", (int)st, ce);
    }
    if (copy_engine) *copy_engine = st == HGEMM_NCCL_SUCCESS && ce;
    return st;
}

static hgemm_nccl_status agree(hgemm_nccl_ctx *ctx, hgemm_nccl_status own, uint64_t fingerprint) {
    return agree_ce(ctx, own, fingerprint, hgemm_nccl_ce_none(), NULL);
}

/* `to` waits for everything enqueued on `from` so far. Should the event fail,
 * the host waits instead, so that the order still holds. */
static void order(hgemm_nccl_status *first, cudaEvent_t ev, cudaStream_t from, cudaStream_t to) {
    cudaError_t err = cudaEventRecord(ev, from);
    if (err == cudaSuccess) err = cudaStreamWaitEvent(to, ev, 0);
    if (err != cudaSuccess) {
        note(first, from_cuda(err));
        (void)cudaStreamSynchronize(from);
        (void)cudaGetLastError(); /* ours, already reported */
    }
}

/* The caller's stream waits for what the side stream recorded in `ev`
 * earlier (recorded then, waited for later: the caller's stream enqueues
 * other work in between). Should the wait fail, the host waits for the side
 * stream instead, so that the order still holds. */
static void wait_side(hgemm_nccl_ctx *ctx, hgemm_nccl_status *first, cudaEvent_t ev, cudaStream_t stream) {
    cudaError_t err = cudaStreamWaitEvent(stream, ev, 0);
    if (err != cudaSuccess) {
        note(first, from_cuda(err));
        (void)cudaStreamSynchronize(ctx->side);
        (void)cudaGetLastError(); /* ours, already reported */
    }
}

static void trace(hgemm_nccl_ctx *ctx, hgemm_nccl_status *first, int index, cudaStream_t stream) {
    if (ctx->trace == NULL || index >= ctx->trace_count) return;
    cudaError_t err = cudaEventRecord(ctx->trace[index], stream);
    if (err != cudaSuccess) note(first, from_cuda(err));
}

/* ---- contexts ------------------------------------------------------------------ */

static void release(hgemm_nccl_ctx *ctx) {
    for (int c = 0; c < HGEMM_NCCL_MAX_CHUNKS; c++)
        if (ctx->chunk[c]) (void)cudaEventDestroy(ctx->chunk[c]);
    if (ctx->start) (void)cudaEventDestroy(ctx->start);
    if (ctx->done) (void)cudaEventDestroy(ctx->done);
    if (ctx->agreed) (void)cudaEventDestroy(ctx->agreed);
    if (ctx->side) (void)cudaStreamDestroy(ctx->side);
    if (ctx->agree_dev) (void)cudaFree(ctx->agree_dev);
    if (ctx->agree_host) (void)cudaFreeHost(ctx->agree_host);
    free(ctx->offsets);
    free(ctx);
}

static cudaError_t make_resources(hgemm_nccl_ctx *ctx) {
    const unsigned flags = cudaEventDisableTiming;
    cudaError_t err = cudaStreamCreateWithFlags(&ctx->side, cudaStreamNonBlocking);
    if (err == cudaSuccess) err = cudaEventCreateWithFlags(&ctx->start, flags);
    if (err == cudaSuccess) err = cudaEventCreateWithFlags(&ctx->done, flags);
    if (err == cudaSuccess) err = cudaEventCreateWithFlags(&ctx->agreed, flags);
    for (int c = 0; c < HGEMM_NCCL_MAX_CHUNKS && err == cudaSuccess; c++)
        err = cudaEventCreateWithFlags(&ctx->chunk[c], flags);
    if (err == cudaSuccess)
        err = cudaMalloc((void **)&ctx->agree_dev, sizeof(int64_t) * HGEMM_NCCL_AGREE_SLOTS);
    if (err == cudaSuccess)
        err = cudaMallocHost((void **)&ctx->agree_host, sizeof(int64_t) * HGEMM_NCCL_AGREE_SLOTS);
    int major = 0, minor = 0;
    if (err == cudaSuccess) err = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, ctx->device);
    if (err == cudaSuccess) err = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, ctx->device);
    ctx->sm90 = major == SM90_MAJOR && minor == SM90_MINOR;
    return err;
}

hgemm_nccl_status hgemm_nccl_ctx_create(hgemm_nccl_ctx **out, ncclComm_t comm,
                                        const hgemm_nccl_config *config) {
    if (out == NULL) return HGEMM_NCCL_ERROR_INVALID_VALUE;
    *out = NULL;
    if (comm == NULL) return HGEMM_NCCL_ERROR_INVALID_VALUE;
    const hgemm_nccl_check check = config ? config->check : HGEMM_NCCL_CHECK_AGREE;
    /* A bad mode is this rank's verdict, shared with the others below. */
    const int copy_engine = config ? config->copy_engine : 0;
    hgemm_nccl_status own = (check == HGEMM_NCCL_CHECK_AGREE || check == HGEMM_NCCL_CHECK_LOCAL) &&
                                    !(config && config->gemm_sm_count < 0) &&
                                    (copy_engine == 0 || copy_engine == 1)
                                ? HGEMM_NCCL_SUCCESS
                                : HGEMM_NCCL_ERROR_INVALID_VALUE;
    int nranks = 0, rank = 0, device = -1, current = -1;
    ncclResult_t r = ncclCommCount(comm, &nranks);
    if (r == ncclSuccess) r = ncclCommUserRank(comm, &rank);
    if (r == ncclSuccess) r = ncclCommCuDevice(comm, &device);
    if (r != ncclSuccess) return from_nccl(r);
    cudaError_t err = cudaGetDevice(&current);
    if (err != cudaSuccess) return from_cuda(err);
    /* The side stream must live on the communicator's device, and the
     * library never changes the caller's current device. */
    if (current != device) return HGEMM_NCCL_ERROR_INVALID_VALUE;

    hgemm_nccl_ctx *ctx = calloc(1, sizeof *ctx);
    if (ctx == NULL) return HGEMM_NCCL_ERROR_CUDA;
    ctx->offsets = malloc(sizeof(int64_t) * (size_t)nranks);
    if (ctx->offsets == NULL) {
        free(ctx);
        return HGEMM_NCCL_ERROR_CUDA;
    }
    ctx->comm = comm;
    ctx->rank = rank;
    ctx->nranks = nranks;
    ctx->device = device;
    ctx->check = check;
    ctx->timeout_s = config && config->timeout_s > 0 ? config->timeout_s : HGEMM_NCCL_DEFAULT_TIMEOUT_S;
    ctx->gemm_sm_count = config && config->gemm_sm_count > 0 ? config->gemm_sm_count : 0;
    ctx->copy_engine = copy_engine == 1;
    ctx->failed_rank = -1;
    err = make_resources(ctx);
    if (err != cudaSuccess) {
        hgemm_nccl_status st = from_cuda(err);
        release(ctx);
        return st;
    }
    hgemm_nccl_status st = agree(ctx, own, hgemm_nccl_fingerprint_create(nranks, check, copy_engine));
    if (st == HGEMM_NCCL_ERROR_TIMEOUT) {
        /* The side stream holds a collective that never finishes: freeing what
         * it uses would wait for it. Left as it is (a few hundred bytes). */
        return st;
    }
    if (st != HGEMM_NCCL_SUCCESS) {
        (void)cudaStreamSynchronize(ctx->side);
        release(ctx);
        return st;
    }
    ctx->failed_rank = -1;
    *out = ctx;
    return HGEMM_NCCL_SUCCESS;
}

hgemm_nccl_status hgemm_nccl_ctx_destroy(hgemm_nccl_ctx *ctx) {
    if (ctx == NULL) return HGEMM_NCCL_SUCCESS;
    cudaError_t err = cudaStreamSynchronize(ctx->side);
    hgemm_nccl_status st = from_cuda(err);
    release(ctx);
    return st;
}

int hgemm_nccl_failed_rank(const hgemm_nccl_ctx *ctx) { return ctx ? ctx->failed_rank : -1; }

int hgemm_nccl_used_copy_engine(const hgemm_nccl_ctx *ctx) { return ctx ? ctx->used_copy_engine : 0; }

hgemm_nccl_status hgemm_nccl_ctx_set_trace(hgemm_nccl_ctx *ctx, cudaEvent_t *events, int count) {
    if (ctx == NULL || count < 0 || (count > 0 && events == NULL)) return HGEMM_NCCL_ERROR_INVALID_VALUE;
    ctx->trace = count > 0 ? events : NULL;
    ctx->trace_count = count;
    return HGEMM_NCCL_SUCCESS;
}

/* ---- registered buffers ---------------------------------------------------------- */

/* A window's size is a multiple of this (NCCL_WIN_REQUIRED_ALIGNMENT, 2.27 on). */
#ifdef NCCL_WIN_REQUIRED_ALIGNMENT
enum { WINDOW_ALIGN = NCCL_WIN_REQUIRED_ALIGNMENT };
#else
enum { WINDOW_ALIGN = 4096 };
#endif

/* Under AGREE, the ranks' verdicts and values (sizes, serials) in one
 * exchange; under LOCAL, the rank's own verdict. */
static hgemm_nccl_status agree_mem(hgemm_nccl_ctx *ctx, hgemm_nccl_status own, int op, int64_t value) {
    if (ctx->check != HGEMM_NCCL_CHECK_AGREE) return own;
    const hgemm_nccl_ce_key key = {value, 0};
    int same = 0;
    hgemm_nccl_status st = agree_ce(ctx, own, hgemm_nccl_fingerprint_mem(ctx->nranks, op), key, &same);
    if (st == HGEMM_NCCL_SUCCESS && !same) st = HGEMM_NCCL_ERROR_MISMATCH;
    return st;
}

hgemm_nccl_status hgemm_nccl_mem_alloc(hgemm_nccl_ctx *ctx, size_t bytes, void **ptr) {
    if (ptr != NULL) *ptr = NULL;
    if (ctx == NULL) return HGEMM_NCCL_ERROR_INVALID_VALUE;
    if (ctx->broken) return HGEMM_NCCL_ERROR_TIMEOUT;
    ctx->failed_rank = -1;
    hgemm_nccl_status own = ptr == NULL || bytes == 0 || bytes > (size_t)INT64_MAX - WINDOW_ALIGN ||
                                    ctx->n_windows == HGEMM_NCCL_MAX_MEM
                                ? HGEMM_NCCL_ERROR_INVALID_VALUE
                                : HGEMM_NCCL_SUCCESS;
    if (own == HGEMM_NCCL_SUCCESS) own = check_device(ctx);
    /* Registered whole pages: the size rounded up (the same on every rank). */
    const size_t padded = own == HGEMM_NCCL_SUCCESS ? (bytes + WINDOW_ALIGN - 1) / WINDOW_ALIGN * WINDOW_ALIGN : 0;
    void *p = NULL;
#if HAVE_WINDOWS
    /* Allocated before the agreement, so that a failure is everyone's status
     * and nobody enters the registration alone. */
    if (own == HGEMM_NCCL_SUCCESS && ncclMemAlloc(&p, padded) != ncclSuccess) {
        p = NULL;
        own = HGEMM_NCCL_ERROR_NCCL;
    }
#else
    if (own == HGEMM_NCCL_SUCCESS) own = HGEMM_NCCL_ERROR_NOT_SUPPORTED;
#endif
    hgemm_nccl_status st = agree_mem(ctx, own, HGEMM_NCCL_OP_MEM_ALLOC, (int64_t)padded);
#if HAVE_WINDOWS
    if (st != HGEMM_NCCL_SUCCESS) {
        if (p != NULL) (void)ncclMemFree(p);
        return st;
    }
    /* Every rank that agreed registers: the serials stay in step even if
     * one registration fails. */
    const int64_t serial = ctx->next_serial++;
    ncclWindow_t win = NULL;
    ncclResult_t r = ncclCommWindowRegister(ctx->comm, p, padded, &win, NCCL_WIN_COLL_SYMMETRIC);
    if (r != ncclSuccess) {
        (void)ncclMemFree(p);
        return from_nccl(r);
    }
    hgemm_nccl_window *w = &ctx->windows[ctx->n_windows++];
    w->base = (uintptr_t)p;
    w->bytes = bytes; /* the caller's: a matrix reaching into the padding is not in it */
    w->serial = serial;
    w->handle = (void *)win;
    *ptr = p;
    return HGEMM_NCCL_SUCCESS;
#else
    (void)p;
    return st;
#endif
}

hgemm_nccl_status hgemm_nccl_mem_free(hgemm_nccl_ctx *ctx, void *ptr) {
    if (ctx == NULL) return HGEMM_NCCL_ERROR_INVALID_VALUE;
    if (ctx->broken) return HGEMM_NCCL_ERROR_TIMEOUT;
    ctx->failed_rank = -1;
    int i = 0;
    while (i < ctx->n_windows && (ptr == NULL || ctx->windows[i].base != (uintptr_t)ptr)) i++;
    hgemm_nccl_status own = i < ctx->n_windows ? HGEMM_NCCL_SUCCESS : HGEMM_NCCL_ERROR_INVALID_VALUE;
    if (own == HGEMM_NCCL_SUCCESS) own = check_device(ctx);
    const int64_t serial = i < ctx->n_windows ? ctx->windows[i].serial : -1;
    hgemm_nccl_status st = agree_mem(ctx, own, HGEMM_NCCL_OP_MEM_FREE, serial);
    if (st != HGEMM_NCCL_SUCCESS) return st;
#if HAVE_WINDOWS
    /* Like cudaFree: no work may still use the buffer. */
    hgemm_nccl_status first = from_cuda(cudaDeviceSynchronize());
    ncclResult_t r = ncclCommWindowDeregister(ctx->comm, (ncclWindow_t)ctx->windows[i].handle);
    if (r != ncclSuccess) note(&first, from_nccl(r));
    r = ncclMemFree(ptr);
    if (r != ncclSuccess) note(&first, from_nccl(r));
    ctx->windows[i] = ctx->windows[--ctx->n_windows];
    return first;
#else
    return HGEMM_NCCL_ERROR_NOT_SUPPORTED; /* no window was ever made */
#endif
}

/* ---- (a) all-gather + GEMM ------------------------------------------------------- */

static hgemm_nccl_status ag_pointers(const hgemm_nccl_ctx *ctx, const hgemm_nccl_ag_args *a) {
    int64_t m_total = 0;
    for (int r = 0; r < a->nranks; r++) m_total += a->m_counts[r];
    hgemm_nccl_status st = check_pointer(a->A_local, hgemm_nccl_span_bytes(a->m_counts[a->rank], a->k, a->lda), ctx->device);
    if (st == HGEMM_NCCL_SUCCESS) st = check_pointer(a->A_gathered, hgemm_nccl_span_bytes(m_total, a->k, a->lda), ctx->device);
    if (st == HGEMM_NCCL_SUCCESS) st = check_pointer(a->B_local, hgemm_nccl_span_bytes(a->n_local, a->k, a->ldb), ctx->device);
    if (st == HGEMM_NCCL_SUCCESS) st = check_pointer(a->C_local, hgemm_nccl_span_bytes(m_total, a->n_local, a->ldc), ctx->device);
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
        note(first, from_hgemm(hs));
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
        note(first, from_hgemm(hs));
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

    trace(ctx, &first, TRACE_START, stream);
    if (communicate) {
        /* The side stream may overwrite A_gathered only after the caller's
         * earlier work on the stream (which may still read it). */
        order(&first, ctx->start, stream, ctx->side);
        for (int c = 0; c < chunks; c++) {
            ncclResult_t r = ncclGroupStart();
            if (r != ncclSuccess) note(&first, from_nccl(r));
            for (int s = 0; s < nranks; s++) {
                const int64_t lo = hgemm_nccl_piece_lo(c, chunks, a->m_counts[s]);
                const int64_t rows = hgemm_nccl_piece_lo(c + 1, chunks, a->m_counts[s]) - lo;
                if (rows == 0) continue;
                /* The rows' span: the padding between them travels too. */
                const size_t count = (size_t)((rows - 1) * a->lda + a->k);
                char *recv = full + (off[s] + lo) * a->lda * ELT;
                const void *send = s == me ? row_at(a->A_local, lo, a->lda) : recv;
                r = ncclBroadcast(send, recv, count, ncclFloat16, s, ctx->comm, ctx->side);
                if (r != ncclSuccess) note(&first, from_nccl(r));
            }
            r = ncclGroupEnd();
            if (r != ncclSuccess) note(&first, from_nccl(r));
            cudaError_t err = cudaEventRecord(ctx->chunk[c], ctx->side);
            if (err != cudaSuccess) note(&first, from_cuda(err));
            trace(ctx, &first, TRACE_CHUNK + 2 * c, ctx->side);
        }
    }

    /* The own rows need nothing from the others. */
    ag_gemm(a, alpha, beta, a->m_counts[me], a->A_local, off[me], &options, &first, &gemm_ok, stream);
    trace(ctx, &first, TRACE_OWN, stream);
    for (int c = 0; c < chunks; c++) {
        if (communicate) {
            wait_side(ctx, &first, ctx->chunk[c], stream);
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
        trace(ctx, &first, TRACE_CHUNK + 2 * c + 1, stream);
    }
    /* The caller's stream holds the whole operation from here on. */
    if (communicate) order(&first, ctx->done, ctx->side, stream);
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
    trace(ctx, &first, TRACE_START, stream);
    /* A_gathered may still be read by the caller's earlier work. */
    order(&first, ctx->start, stream, ctx->side);
    /* lda == k: rank s's rows start s * m * lda elements in, as ncclAllGather
     * lays its blocks out. */
    ncclResult_t r = ncclAllGather(a->A_local, (void *)a->A_gathered, (size_t)(m * a->lda), ncclFloat16,
                                   ctx->comm, ctx->side);
    if (r != ncclSuccess) note(&first, from_nccl(r));
    cudaError_t err = cudaEventRecord(ctx->chunk[0], ctx->side);
    if (err != cudaSuccess) note(&first, from_cuda(err));
    trace(ctx, &first, TRACE_CHUNK, ctx->side);

    ag_gemm(a, alpha, beta, m, a->A_local, off[me], &options, &first, &gemm_ok, stream);
    trace(ctx, &first, TRACE_OWN, stream);
    wait_side(ctx, &first, ctx->chunk[0], stream);
    for (int s = 0; s < a->nranks; s++)
        if (s != me)
            ag_gemm(a, alpha, beta, m, row_at(a->A_gathered, off[s], a->lda), off[s], &options, &first,
                    &gemm_ok, stream);
    trace(ctx, &first, TRACE_CHUNK + 1, stream);
    order(&first, ctx->done, ctx->side, stream);
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
    if (st == HGEMM_NCCL_SUCCESS) st = check_device(ctx);
    if (st == HGEMM_NCCL_SUCCESS) st = ag_pointers(ctx, &a);
    /* The copy-engine path: uniform conditions first, then where this rank's
     * buffers lie; under AGREE every rank's key decides for all. */
    hgemm_nccl_ce_key key = hgemm_nccl_ce_none();
    if (st == HGEMM_NCCL_SUCCESS && ctx->copy_engine &&
        hgemm_nccl_ce_uniform_ag(ctx->nranks, chunks, m_counts, k, lda))
        key = hgemm_nccl_ce_key_ag(&a, ctx->windows, ctx->n_windows);
    int ce = key.window >= 0;
    if (ctx->check == HGEMM_NCCL_CHECK_AGREE)
        st = agree_ce(ctx, st, hgemm_nccl_fingerprint_ag(ctx->nranks, chunks, m_counts, k, lda), key, &ce);
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
    hgemm_nccl_status st = check_pointer(a->A_local, hgemm_nccl_span_bytes(m_total, a->k_local, a->lda), ctx->device);
    if (st == HGEMM_NCCL_SUCCESS) st = check_pointer(a->B_local, hgemm_nccl_span_bytes(a->n, a->k_local, a->ldb), ctx->device);
    if (st == HGEMM_NCCL_SUCCESS) st = check_pointer(a->C_local, hgemm_nccl_span_bytes(a->m_counts[a->rank], a->n, a->ldc), ctx->device);
    if (st == HGEMM_NCCL_SUCCESS) st = check_pointer(a->workspace, hgemm_nccl_span_bytes(m_total, a->n, ldw), ctx->device);
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
                note(&s->first, from_cuda(err));
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
        trace(ctx, &s->first, TRACE_CHUNK + 2 * c + 1, stream);
        order(&s->first, ctx->chunk[c], stream, ctx->side);
        ncclResult_t r = ncclGroupStart();
        if (r != ncclSuccess) note(&s->first, from_nccl(r));
        for (int o = 0; o < a->nranks; o++) {
            const int64_t lo = hgemm_nccl_piece_lo(c, chunks, a->m_counts[o]);
            const int64_t rows = hgemm_nccl_piece_lo(c + 1, chunks, a->m_counts[o]) - lo;
            if (rows == 0) continue;
            char *send = W + (ctx->offsets[o] + lo) * ldw * ELT;
            void *recv = o == me && direct ? C + lo * a->ldc * ELT : send;
            const size_t count = (size_t)((rows - 1) * ldw + a->n);
            r = ncclReduce(send, recv, count, ncclFloat16, ncclSum, o, ctx->comm, ctx->side);
            if (r != ncclSuccess) note(&s->first, from_nccl(r));
        }
        r = ncclGroupEnd();
        if (r != ncclSuccess) note(&s->first, from_nccl(r));
        const int64_t lo = hgemm_nccl_piece_lo(c, chunks, a->m_counts[me]);
        const int64_t rows = hgemm_nccl_piece_lo(c + 1, chunks, a->m_counts[me]) - lo;
        if (!direct && rows > 0) {
            cudaError_t err = cudaMemcpy2DAsync(C + lo * a->ldc * ELT, (size_t)a->ldc * ELT,
                                                W + (ctx->offsets[me] + lo) * ldw * ELT, (size_t)ldw * ELT,
                                                (size_t)a->n * ELT, (size_t)rows,
                                                cudaMemcpyDeviceToDevice, ctx->side);
            if (err != cudaSuccess) note(&s->first, from_cuda(err));
        }
        trace(ctx, &s->first, TRACE_CHUNK + 2 * c, ctx->side);
    }
    order(&s->first, ctx->done, ctx->side, stream);
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
    trace(ctx, &first, TRACE_START, stream);
    for (int p = 0; p < nranks; p++)
        if (p != me)
            rs_gemm(a, alpha, 0.0f, m, off[p], W + (size_t)p * (size_t)block * ELT, ldw, &options, &first,
                    &gemm_ok, stream);
    trace(ctx, &first, TRACE_CHUNK + 1, stream);
    /* The partials are written, and the caller's earlier reads of R (the last
     * call's sum) are done: the peers may write R once NCCL lets them. */
    order(&first, ctx->chunk[0], stream, ctx->side);
    ncclResult_t r = ncclAlltoAll(W, R, (size_t)block, ncclFloat16, ctx->comm, ctx->side);
    if (r != ncclSuccess) note(&first, from_nccl(r));
    trace(ctx, &first, TRACE_CHUNK, ctx->side);

    char *C = (char *)a->C_local;
    rs_gemm(a, alpha, beta, m, off[me], C, a->ldc, &options, &first, &gemm_ok, stream);
    trace(ctx, &first, TRACE_OWN, stream);
    order(&first, ctx->done, ctx->side, stream);
    if (gemm_ok) {
        cudaError_t err = hgemm_nccl_add_blocks(C, a->ldc, R, block, ldw, nranks, me, m, a->n, stream);
        if (err != cudaSuccess) note(&first, from_cuda(err));
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
    trace(ctx, &first, TRACE_START, stream);
    rs_gemm(a, alpha, 0.0f, m, off[peer], mine, ldw, &options, &first, &gemm_ok, stream);
    trace(ctx, &first, TRACE_CHUNK + 1, stream);
    order(&first, ctx->chunk[0], stream, ctx->side);
    ncclResult_t r = ncclAllGather(mine, R, count, ncclFloat16, ctx->comm, ctx->side);
    if (r != ncclSuccess) note(&first, from_nccl(r));
    trace(ctx, &first, TRACE_CHUNK, ctx->side);
    cudaError_t err = cudaEventRecord(ctx->chunk[0], ctx->side); /* the swap is in */
    if (err != cudaSuccess) note(&first, from_cuda(err));
    if (!in_place) {
        err = cudaMemcpy2DAsync(C + (size_t)(m1 * a->ldc) * ELT, (size_t)a->ldc * ELT,
                                theirs + (size_t)(m1 * ldw) * ELT, (size_t)ldw * ELT, (size_t)a->n * ELT,
                                (size_t)(m - m1), cudaMemcpyDeviceToDevice, ctx->side);
        if (err != cudaSuccess) note(&first, from_cuda(err));
        err = cudaEventRecord(ctx->chunk[1], ctx->side); /* and copied into C */
        if (err != cudaSuccess) note(&first, from_cuda(err));
    }

    rs_gemm(a, alpha, 0.0f, m1, off[me], C, a->ldc, &options, &first, &gemm_ok, stream);
    wait_side(ctx, &first, ctx->chunk[0], stream);
    if (gemm_ok) {
        err = hgemm_nccl_add_blocks(C, a->ldc, R, (int64_t)count, ldw, 2, me, m1, a->n, stream);
        if (err != cudaSuccess) note(&first, from_cuda(err));
    }
    if (!in_place) wait_side(ctx, &first, ctx->chunk[1], stream); /* the swap (chunk[0]) is waited for above */
    rs_gemm_received(a, alpha, m - m1, off[me] + m1, m1, theirs + (size_t)(m1 * ldw) * ELT, ldw, in_place,
                     &first, &gemm_ok, stream);
    trace(ctx, &first, TRACE_OWN, stream);
    order(&first, ctx->done, ctx->side, stream);
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
    trace(ctx, &first, TRACE_START, stream);
    for (int c = 0; c < chunks; c++) {
        const int64_t lo = hgemm_nccl_piece_lo(c, chunks, m), rows = ROWS(c);
        const size_t count = (size_t)(rows * ldw);
        char *pair = PAIR(c);
        if (rows > 0)
            rs_gemm(a, alpha, 0.0f, rows, off[peer] + lo, pair + (size_t)me * count * ELT, ldw, &options, &first,
                    &gemm_ok, stream);
        trace(ctx, &first, TRACE_CHUNK + 2 * c + 1, stream);
        /* The partial is written, and the caller's earlier reads of the pair
         * (the last call's) are done: the peer may write it now. */
        order(&first, ctx->chunk[c], stream, ctx->side);
        if (rows > 0) {
            ncclResult_t r = ncclAllGather(pair + (size_t)me * count * ELT, pair, count, ncclFloat16, ctx->comm,
                                           ctx->side);
            if (r != ncclSuccess) note(&first, from_nccl(r));
            if (fuse && !in_place) {
                cudaError_t err = cudaMemcpy2DAsync(C + (size_t)(lo * a->ldc) * ELT, (size_t)a->ldc * ELT,
                                                    pair + (size_t)peer * count * ELT, (size_t)ldw * ELT,
                                                    (size_t)a->n * ELT, (size_t)rows, cudaMemcpyDeviceToDevice,
                                                    ctx->side);
                if (err != cudaSuccess) note(&first, from_cuda(err));
            }
        }
        trace(ctx, &first, TRACE_CHUNK + 2 * c, ctx->side);
        /* chunk[c] again, now side -> caller: its wait above is already enqueued */
        cudaError_t err = cudaEventRecord(ctx->chunk[c], ctx->side);
        if (err != cudaSuccess) note(&first, from_cuda(err));
    }
    for (int c = 0; c < chunks; c++) {
        const int64_t lo = hgemm_nccl_piece_lo(c, chunks, m), rows = ROWS(c);
        if (rows == 0) continue;
        const size_t count = (size_t)(rows * ldw);
        char *c_rows = C + (size_t)(lo * a->ldc) * ELT;
        if (fuse) { /* the received partial is in the workspace (or copied into C): the GEMM adds it */
            wait_side(ctx, &first, ctx->chunk[c], stream);
            rs_gemm_received(a, alpha, rows, off[me] + lo, lo, PAIR(c) + (size_t)peer * count * ELT, ldw,
                             in_place, &first, &gemm_ok, stream);
            continue;
        }
        rs_gemm(a, alpha, beta, rows, off[me] + lo, c_rows, a->ldc, &options, &first, &gemm_ok, stream);
        wait_side(ctx, &first, ctx->chunk[c], stream);
        if (gemm_ok) {
            cudaError_t err =
                hgemm_nccl_add_blocks(c_rows, a->ldc, PAIR(c), (int64_t)count, ldw, 2, me, rows, a->n, stream);
            if (err != cudaSuccess) note(&first, from_cuda(err));
        }
    }
    trace(ctx, &first, TRACE_OWN, stream);
    order(&first, ctx->done, ctx->side, stream);
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
    if (st == HGEMM_NCCL_SUCCESS) st = check_device(ctx);
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
            trace(ctx, &s.first, TRACE_START, stream);
            trace(ctx, &s.first, TRACE_OWN, stream);
            rs_compute(ctx, &a, alpha, beta, 0, &s, stream);
            computed = 1;
            st = s.first;
        }
        st = agree_ce(ctx, st, hgemm_nccl_fingerprint_rs(ctx->nranks, chunks, m_counts, n), key, &ce);
    }
    if (st != HGEMM_NCCL_SUCCESS || !work) return st;
    ctx->used_copy_engine = ce;
    if (ce) return ctx->nranks == 2 ? run_rs_ce_two(ctx, &a, alpha, beta, stream) : run_rs_ce(ctx, &a, alpha, beta, stream);
    if (!computed) {
        trace(ctx, &s.first, TRACE_START, stream);
        trace(ctx, &s.first, TRACE_OWN, stream);
    }
    return run_rs(ctx, &a, alpha, beta, computed, &s, stream);
}
