/*
 * ctx.c: libhgemm_nccl's contexts and registered buffers
 * (include/hgemm_nccl.h), and what its operations (tp.c) share with them:
 * statuses, device and pointer checks, bounded waits on the side stream, the
 * ranks' agreement under HGEMM_NCCL_CHECK_AGREE, order between streams.
 */
#define _POSIX_C_SOURCE 200809L

#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "ctx.h"
#include "hgemm.h"
#include "hgemm_nccl.h"
#include "plan.h"

/* Symmetric windows (ncclCommWindowRegister) came with NCCL 2.27, the
 * copy-engine collectives that use them with 2.28. Older: hgemm_nccl_mem_alloc
 * is NOT_SUPPORTED, and no call finds a window. */
#define HAVE_WINDOWS (NCCL_VERSION_CODE >= 22700)

enum { SM90_MAJOR = 9, SM90_MINOR = 0 };

/* ---- statuses ------------------------------------------------------------ */

/* The status of our own failed CUDA call, whose error is then the pending
 * one: cleared, being reported through the status. */
hgemm_nccl_status hgemm_nccl__from_cuda(cudaError_t err) {
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

hgemm_nccl_status hgemm_nccl__from_nccl(ncclResult_t r) {
    return r == ncclSuccess ? HGEMM_NCCL_SUCCESS : HGEMM_NCCL_ERROR_NCCL;
}

hgemm_nccl_status hgemm_nccl__from_hgemm(hgemm_status s) {
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
void hgemm_nccl__note(hgemm_nccl_status *first, hgemm_nccl_status st) {
    if (*first == HGEMM_NCCL_SUCCESS) *first = st;
}

/* ---- device and pointer checks ------------------------------------------- */

hgemm_nccl_status hgemm_nccl__check_device(const hgemm_nccl_ctx *ctx) {
    int dev = -1;
    cudaError_t err = cudaGetDevice(&dev);
    if (err != cudaSuccess) return hgemm_nccl__from_cuda(err);
    if (dev != ctx->device) return HGEMM_NCCL_ERROR_INVALID_VALUE;
    if (!ctx->sm90) return HGEMM_NCCL_ERROR_ARCH_MISMATCH;
    return HGEMM_NCCL_SUCCESS;
}

/* A matrix of `bytes` > 0 must be memory of the communicator's device
 * (cudaMalloc'd there, or managed), as hgemm_nt and NCCL need. */
hgemm_nccl_status hgemm_nccl__check_pointer(const void *p, int64_t bytes, int dev) {
    if (bytes <= 0) return HGEMM_NCCL_SUCCESS;
    struct cudaPointerAttributes attr;
    cudaError_t err = cudaPointerGetAttributes(&attr, p);
    if (err == cudaErrorInvalidValue) {
        (void)cudaGetLastError(); /* this call's own error */
        return HGEMM_NCCL_ERROR_INVALID_VALUE;
    }
    if (err != cudaSuccess) return hgemm_nccl__from_cuda(err);
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
        if (err != cudaErrorNotReady) return hgemm_nccl__from_cuda(err);
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
hgemm_nccl_status hgemm_nccl__agree_ce(hgemm_nccl_ctx *ctx, hgemm_nccl_status own, uint64_t fingerprint,
                                       hgemm_nccl_ce_key key, int *copy_engine) {
    const size_t bytes = sizeof(int64_t) * HGEMM_NCCL_AGREE_SLOTS;
    int ce = 0;
    if (copy_engine) *copy_engine = 0;
    hgemm_nccl_agree_encode(ctx->agree_host, own, ctx->rank, ctx->nranks, fingerprint, key);
    cudaError_t err = cudaMemcpyAsync(ctx->agree_dev, ctx->agree_host, bytes, cudaMemcpyHostToDevice,
                                      ctx->side);
    if (err != cudaSuccess) return hgemm_nccl__from_cuda(err);
    ncclResult_t r = ncclAllReduce(ctx->agree_dev, ctx->agree_dev, HGEMM_NCCL_AGREE_SLOTS, ncclInt64,
                                   ncclMax, ctx->comm, ctx->side);
    if (r != ncclSuccess) return hgemm_nccl__from_nccl(r);
    err = cudaMemcpyAsync(ctx->agree_host, ctx->agree_dev, bytes, cudaMemcpyDeviceToHost, ctx->side);
    if (err == cudaSuccess) err = cudaEventRecord(ctx->agreed, ctx->side);
    if (err != cudaSuccess) return hgemm_nccl__from_cuda(err);
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
    return hgemm_nccl__agree_ce(ctx, own, fingerprint, hgemm_nccl_ce_none(), NULL);
}

/* `to` waits for everything enqueued on `from` so far. Should the event fail,
 * the host waits instead, so that the order still holds. */
void hgemm_nccl__order(hgemm_nccl_status *first, cudaEvent_t ev, cudaStream_t from, cudaStream_t to) {
    cudaError_t err = cudaEventRecord(ev, from);
    if (err == cudaSuccess) err = cudaStreamWaitEvent(to, ev, 0);
    if (err != cudaSuccess) {
        hgemm_nccl__note(first, hgemm_nccl__from_cuda(err));
        (void)cudaStreamSynchronize(from);
        (void)cudaGetLastError(); /* ours, already reported */
    }
}

/* The caller's stream waits for what the side stream recorded in `ev`
 * earlier (recorded then, waited for later: the caller's stream enqueues
 * other work in between). Should the wait fail, the host waits for the side
 * stream instead, so that the order still holds. */
void hgemm_nccl__wait_side(hgemm_nccl_ctx *ctx, hgemm_nccl_status *first, cudaEvent_t ev, cudaStream_t stream) {
    cudaError_t err = cudaStreamWaitEvent(stream, ev, 0);
    if (err != cudaSuccess) {
        hgemm_nccl__note(first, hgemm_nccl__from_cuda(err));
        (void)cudaStreamSynchronize(ctx->side);
        (void)cudaGetLastError(); /* ours, already reported */
    }
}

void hgemm_nccl__trace(hgemm_nccl_ctx *ctx, hgemm_nccl_status *first, int index, cudaStream_t stream) {
    if (ctx->trace == NULL || index >= ctx->trace_count) return;
    cudaError_t err = cudaEventRecord(ctx->trace[index], stream);
    if (err != cudaSuccess) hgemm_nccl__note(first, hgemm_nccl__from_cuda(err));
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
    if (r != ncclSuccess) return hgemm_nccl__from_nccl(r);
    cudaError_t err = cudaGetDevice(&current);
    if (err != cudaSuccess) return hgemm_nccl__from_cuda(err);
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
        hgemm_nccl_status st = hgemm_nccl__from_cuda(err);
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
    hgemm_nccl_status st = hgemm_nccl__from_cuda(err);
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
    hgemm_nccl_status st = hgemm_nccl__agree_ce(ctx, own, hgemm_nccl_fingerprint_mem(ctx->nranks, op), key, &same);
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
    if (own == HGEMM_NCCL_SUCCESS) own = hgemm_nccl__check_device(ctx);
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
        return hgemm_nccl__from_nccl(r);
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
    if (own == HGEMM_NCCL_SUCCESS) own = hgemm_nccl__check_device(ctx);
    const int64_t serial = i < ctx->n_windows ? ctx->windows[i].serial : -1;
    hgemm_nccl_status st = agree_mem(ctx, own, HGEMM_NCCL_OP_MEM_FREE, serial);
    if (st != HGEMM_NCCL_SUCCESS) return st;
#if HAVE_WINDOWS
    /* Like cudaFree: no work may still use the buffer. */
    hgemm_nccl_status first = hgemm_nccl__from_cuda(cudaDeviceSynchronize());
    ncclResult_t r = ncclCommWindowDeregister(ctx->comm, (ncclWindow_t)ctx->windows[i].handle);
    if (r != ncclSuccess) hgemm_nccl__note(&first, hgemm_nccl__from_nccl(r));
    r = ncclMemFree(ptr);
    if (r != ncclSuccess) hgemm_nccl__note(&first, hgemm_nccl__from_nccl(r));
    ctx->windows[i] = ctx->windows[--ctx->n_windows];
    return first;
#else
    return HGEMM_NCCL_ERROR_NOT_SUPPORTED; /* no window was ever made */
#endif
}
