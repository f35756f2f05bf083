/*
 * fake_cudart.c: a stand-in for the CUDA runtime (built as libcudart.so.<major>,
 * loaded with LD_PRELOAD in front of the real one) that runs no kernel and
 * touches no GPU, but records what the library asks of the runtime and the
 * driver, and refuses what the real ones refuse:
 *
 *   launch  kernel, grid, block, dynamic shared memory, cluster, PDL, and a
 *           64-bit hash of each parameter's bytes (their sizes read from the
 *           kernel's own .nv.info in the fatbinary the library registers);
 *   tmap    each cuTensorMapEncodeTiled, with its fields, checked against the
 *           driver's documented limits (cuda.h, above cuTensorMapEncodeTiled);
 *   attr    each raise of a kernel's dynamic shared-memory limit, and each
 *           kernel let launch clusters of up to 16 (non-portable sizes);
 *   stream  each stream created or destroyed (handles only: nothing runs,
 *           no stream is ever being captured);
 *   reject  a call the real runtime or driver would fail, with the reason
 *           (and the call then fails here too);
 *   context the runtime's lazy binding of the primary context to a host
 *           thread: a thread has none current until it makes a runtime call
 *           that needs one (cudaSetDevice, an allocation, a stream or event,
 *           a copy, a launch, cudaFuncSetAttribute), and a driver call
 *           (cuFuncSetAttribute) without one is refused with
 *           CUDA_ERROR_INVALID_CONTEXT, as the driver does;
 *   inject  a call failed on request: HGEMM_FAKE_FAIL=NAME fails every call
 *           of the runtime function NAME, NAME:N only its N-th (from 1), with
 *           the error the real one would give (and leaves pending, as it
 *           does), for the paths a GPU seldom takes (the functions that
 *           consult it are those that call injected()).
 *
 * One line per event on stdout, so a driver's own lines interleave in order
 * (tests/trace/launch_trace.c). Device memory is address space only
 * (cudaMalloc hands out addresses that are never mapped): a host read of one
 * crashes, which is itself a finding. The device: compute capability 9.0,
 * HGEMM_FAKE_SMS SMs (default 132), and an occupancy model of an sm_90 SM
 * (65536 registers, 2048 threads, 32 blocks, 228 KB of shared memory with
 * 1 KB reserved per block, at most 227 KB a block).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

enum {
    MAX_FUNCS = 4096,
    MAX_PARAMS = 64,
    MAX_VARS = 256,
    MAX_ALLOCS = 4096,
    SMEM_PER_SM = 233472,    /* 228 KB */
    SMEM_PER_BLOCK = 232448, /* 227 KB, the opt-in maximum */
    SMEM_RESERVED = 1024,    /* per block */
    SMEM_DEFAULT = 49152,    /* without the opt-in */
    REGS_PER_SM = 65536,
    THREADS_PER_SM = 2048,
    BLOCKS_PER_SM = 32,
};

typedef struct func {
    const void *host;        /* the host stub's address: what launches name */
    char name[512];          /* mangled */
    int known;               /* found in a registered fatbinary's ELF */
    int n_params;
    uint16_t param_size[MAX_PARAMS];
    int regs;                /* per thread */
    size_t static_smem;
    int max_dynamic_smem;    /* the attribute; SMEM_DEFAULT until raised */
    int large_clusters;      /* clusters of up to 16 allowed (the non-portable attribute) */
} func;

typedef struct var {
    const void *host;
    char name[256];
    size_t size;
} var;

typedef struct alloc {
    uintptr_t base;
    size_t size;
} alloc;

static func funcs[MAX_FUNCS];
static int n_funcs;
static var vars[MAX_VARS];
static int n_vars;
static alloc allocs[MAX_ALLOCS];
static int n_allocs;
enum { FIRST_ADDRESS = 0x7a0000000000ull };
static uintptr_t next_address = (uintptr_t)FIRST_ADDRESS;
static cudaError_t last_error = cudaSuccess;
static unsigned long long api_calls;

/* The registered fatbinaries' ELF images, kept to look kernels up by name. */
typedef struct image {
    const unsigned char *elf;
    size_t size;
} image;
static image images[256];
static int n_images;

/* Read by the driver: that this stand-in, not the real runtime, is loaded. */
unsigned long long hgemm_fake_cudart_calls(void) { return api_calls; }

/* Whether this host thread has the primary context current (see the header). */
static __thread int context_current;
static void bind_context(void) { context_current = 1; }

static cudaError_t fail(cudaError_t err) {
    last_error = err;
    return err;
}

static cudaError_t reject(cudaError_t err, const char *what, const char *why) {
    printf("reject %s: %s\n", what, why);
    return fail(err);
}

/* Whether this call of `name` is to fail (HGEMM_FAKE_FAIL); counts the calls
 * of the function named there. */
static int injected(const char *name) {
    static unsigned long long seen;
    const char *spec = getenv("HGEMM_FAKE_FAIL");
    if (!spec) return 0;
    const char *colon = strchr(spec, ':');
    const size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
    if (strlen(name) != len || strncmp(spec, name, len) != 0) return 0;
    seen++;
    const unsigned long long nth = colon ? strtoull(colon + 1, NULL, 10) : 0;
    if (nth && seen != nth) return 0;
    printf("inject %s %llu\n", name, seen);
    return 1;
}

static uint64_t fnv1a(const void *p, size_t n, uint64_t h) {
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    return h;
}
#define FNV_START 0xcbf29ce484222325ull

static int sm_count(void) {
    const char *s = getenv("HGEMM_FAKE_SMS");
    int n = s ? atoi(s) : 132;
    return n > 0 ? n : 132;
}

/* ---- the fatbinary: each kernel's parameter sizes, registers, static shared memory ---- */

/* zstd, for the compressed cubins, from the system's library when there is one. */
typedef size_t (*zstd_decompress_fn)(void *, size_t, const void *, size_t);
typedef unsigned long long (*zstd_size_fn)(const void *, size_t);
typedef size_t (*zstd_frame_fn)(const void *, size_t);

static const unsigned char *decompress(const unsigned char *src, size_t n, size_t *out_n) {
    static void *lib;
    if (!lib) lib = dlopen("libzstd.so.1", RTLD_NOW);
    if (!lib) {
        printf("reject fatbinary: %s\n", dlerror());
        return NULL;
    }
    zstd_decompress_fn dec = (zstd_decompress_fn)dlsym(lib, "ZSTD_decompress");
    zstd_size_fn size = (zstd_size_fn)dlsym(lib, "ZSTD_getFrameContentSize");
    zstd_frame_fn frame = (zstd_frame_fn)dlsym(lib, "ZSTD_findFrameCompressedSize");
    if (!dec || !size || !frame) return NULL;
    const size_t framed = frame(src, n); /* the payload may be padded past the frame */
    if (framed <= n) n = framed;
    unsigned long long want = size(src, n);
    if (want == 0 || want > ((unsigned long long)1 << 31)) {
        printf("reject fatbinary: a compressed cubin of unknown size (%llu)\n", want);
        return NULL;
    }
    unsigned char *dst = (unsigned char *)malloc((size_t)want);
    if (!dst) return NULL;
    size_t got = dec(dst, (size_t)want, src, n);
    if (got != want) {
        printf("reject fatbinary: a compressed cubin that does not decompress\n");
        free(dst);
        return NULL;
    }
    *out_n = got;
    return dst;
}

static uint16_t rd16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const unsigned char *p) { return (uint32_t)rd16(p) | (uint32_t)rd16(p + 2) << 16; }
static uint64_t rd64(const unsigned char *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

static void add_image(const unsigned char *elf, size_t size) {
    if (size < 64 || memcmp(elf, "\x7f" "ELF", 4) != 0 || elf[4] != 2) return; /* ELF64 only */
    if (n_images < (int)(sizeof images / sizeof images[0])) images[n_images++] = (image){elf, size};
}

/* A section of an ELF image by name: its bytes and size (NULL if none), and its sh_info. */
static const unsigned char *elf_section(const image *im, const char *name, size_t *size, uint32_t *info) {
    const unsigned char *e = im->elf;
    const uint64_t shoff = rd64(e + 0x28);
    const unsigned shentsize = rd16(e + 0x3a), shnum = rd16(e + 0x3c), shstrndx = rd16(e + 0x3e);
    if (shoff + (uint64_t)shnum * shentsize > im->size || shstrndx >= shnum) return NULL;
    const unsigned char *strsh = e + shoff + (uint64_t)shstrndx * shentsize;
    const uint64_t stroff = rd64(strsh + 0x18), strsize = rd64(strsh + 0x20);
    for (unsigned s = 0; s < shnum; s++) {
        const unsigned char *sh = e + shoff + (uint64_t)s * shentsize;
        const uint32_t nm = rd32(sh);
        if (nm >= strsize || stroff + strsize > im->size) continue;
        const char *sname = (const char *)e + stroff + nm;
        if (strnlen(sname, strsize - nm) == strsize - nm || strcmp(sname, name) != 0) continue;
        const uint32_t type = rd32(sh + 4);
        const uint64_t off = rd64(sh + 0x18), sz = rd64(sh + 0x20);
        if (info) *info = rd32(sh + 0x2c);
        *size = (size_t)sz;
        if (type == 8 /* SHT_NOBITS */) return e; /* only its size counts */
        if (off + sz > im->size) return NULL;
        return e + off;
    }
    return NULL;
}

/* Fill f's parameter sizes (EIATTR_KPARAM_INFO, 0x17: index, ordinal, offset,
 * and the size in the top 14 bits of the last word), registers (the .text
 * section's sh_info >> 24) and static shared memory (.nv.shared.<name>). */
static void describe(func *f) {
    char sec[600];
    for (int i = 0; i < n_images && !f->known; i++) {
        size_t size = 0;
        snprintf(sec, sizeof sec, ".nv.info.%s", f->name);
        const unsigned char *b = elf_section(&images[i], sec, &size, NULL);
        if (!b) continue;
        int n = 0;
        for (size_t p = 0; p + 2 <= size;) {
            const unsigned fmt = b[p], attr = b[p + 1];
            if (fmt == 1) { /* no value */
                p += 2;
            } else if (fmt == 2 || fmt == 3) { /* a byte or a half-word value */
                p += 4;
            } else if (fmt == 4) { /* a sized value */
                if (p + 4 > size) break;
                const unsigned len = rd16(b + p + 2);
                if (p + 4 + len > size) break;
                if (attr == 0x17 && len >= 12) {
                    const unsigned ordinal = rd16(b + p + 8);
                    const unsigned bytes = rd32(b + p + 12) >> 18;
                    if (ordinal < MAX_PARAMS) {
                        f->param_size[ordinal] = (uint16_t)bytes;
                        if ((int)ordinal + 1 > n) n = (int)ordinal + 1;
                    }
                }
                p += 4 + len;
            } else {
                break; /* padding */
            }
        }
        f->n_params = n;
        uint32_t info = 0;
        snprintf(sec, sizeof sec, ".text.%s", f->name);
        if (elf_section(&images[i], sec, &size, &info)) f->regs = (int)(info >> 24);
        snprintf(sec, sizeof sec, ".nv.shared.%s", f->name);
        size = 0;
        if (elf_section(&images[i], sec, &size, NULL)) f->static_smem = size;
        f->known = 1;
    }
}

void **__cudaRegisterFatBinary(void *wrapper) {
    api_calls++;
    const struct {
        int magic, version;
        const unsigned char *data;
        void *unused;
    } *w = wrapper;
    const unsigned char *fb = w->data;
    if (fb && rd32(fb) == 0xBA55ED50u) {
        const unsigned hsize = rd16(fb + 6);
        const uint64_t total = rd64(fb + 8);
        for (uint64_t off = hsize; off + 16 <= hsize + total;) {
            const unsigned char *ent = fb + off;
            const unsigned kind = rd16(ent), ehsize = rd32(ent + 4);
            const uint64_t psize = rd64(ent + 8);
            const unsigned char *payload = ent + ehsize;
            if (kind == 2) { /* a cubin */
                if (psize >= 4 && memcmp(payload, "\x7f" "ELF", 4) == 0) {
                    add_image(payload, (size_t)psize);
                } else if (psize >= 4 && rd32(payload) == 0xFD2FB528u) { /* zstd */
                    size_t n = 0;
                    const unsigned char *elf = decompress(payload, (size_t)psize, &n);
                    if (elf) add_image(elf, n);
                    else printf("reject fatbinary: a compressed cubin, and no libzstd.so.1 to read it\n");
                }
            }
            off += ehsize + psize;
        }
    }
    static void *handle = (void *)&handle;
    return (void **)&handle;
}

void __cudaRegisterFatBinaryEnd(void **handle) { (void)handle; }
void __cudaUnregisterFatBinary(void **handle) { (void)handle; }

void __cudaRegisterFunction(void **handle, const char *host, char *device, const char *name, int limit,
                            uint3 *tid, uint3 *bid, dim3 *bdim, dim3 *gdim, int *wsize) {
    (void)handle, (void)device, (void)limit, (void)tid, (void)bid, (void)bdim, (void)gdim, (void)wsize;
    if (n_funcs == MAX_FUNCS) return;
    func *f = &funcs[n_funcs++];
    memset(f, 0, sizeof *f);
    f->host = host;
    snprintf(f->name, sizeof f->name, "%s", name);
    f->max_dynamic_smem = SMEM_DEFAULT;
}

void __cudaRegisterVar(void **handle, char *host, char *device, const char *name, int ext, size_t size,
                       int constant, int global) {
    (void)handle, (void)device, (void)ext, (void)constant, (void)global;
    if (n_vars == MAX_VARS) return;
    var *v = &vars[n_vars++];
    v->host = host;
    snprintf(v->name, sizeof v->name, "%s", name);
    v->size = size;
}

static func *find_func(const void *host) {
    for (int i = 0; i < n_funcs; i++)
        if (funcs[i].host == host) {
            if (!funcs[i].known) describe(&funcs[i]);
            return funcs[i].known ? &funcs[i] : NULL;
        }
    return NULL;
}

/* ---- the device ---- */

cudaError_t cudaGetDeviceCount(int *n) {
    api_calls++;
    *n = 1;
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int *dev) {
    api_calls++;
    *dev = 0;
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int dev) {
    bind_context();
    api_calls++;
    return dev == 0 ? cudaSuccess : fail(cudaErrorInvalidDevice);
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int dev) {
    api_calls++;
    if (dev != 0) return fail(cudaErrorInvalidDevice);
    switch (attr) {
    case cudaDevAttrComputeCapabilityMajor: *value = 9; return cudaSuccess;
    case cudaDevAttrComputeCapabilityMinor: *value = 0; return cudaSuccess;
    case cudaDevAttrMultiProcessorCount: *value = sm_count(); return cudaSuccess;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = SMEM_PER_BLOCK; return cudaSuccess;
    case cudaDevAttrMaxThreadsPerBlock: *value = 1024; return cudaSuccess;
    default: {
        char why[64];
        snprintf(why, sizeof why, "attribute %d is not modelled", (int)attr);
        return reject(cudaErrorInvalidValue, "cudaDeviceGetAttribute", why);
    }
    }
}

cudaError_t cudaGetLastError(void) {
    api_calls++;
    cudaError_t e = last_error;
    last_error = cudaSuccess;
    return e;
}

cudaError_t cudaPeekAtLastError(void) {
    api_calls++;
    return last_error;
}

const char *cudaGetErrorString(cudaError_t err) { return err == cudaSuccess ? "no error" : "an error (fake runtime)"; }
const char *cudaGetErrorName(cudaError_t err) { return err == cudaSuccess ? "cudaSuccess" : "cudaError (fake runtime)"; }

cudaError_t cudaDeviceSynchronize(void) {
    api_calls++;
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t s) {
    (void)s;
    api_calls++;
    return cudaSuccess;
}

/* Streams: handles only (nothing runs, so nothing orders); never capturing. */
static uintptr_t next_stream = 0x5000;

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags) {
    bind_context();
    api_calls++;
    if (!s) return reject(cudaErrorInvalidValue, "cudaStreamCreateWithFlags", "a null handle pointer");
    if (injected("cudaStreamCreateWithFlags")) return fail(cudaErrorMemoryAllocation);
    *s = (cudaStream_t)next_stream;
    next_stream += 0x10;
    printf("stream create %#llx flags=%u\n", (unsigned long long)(uintptr_t)*s, flags);
    return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t s) {
    api_calls++;
    printf("stream destroy %#llx\n", (unsigned long long)(uintptr_t)s);
    return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t s, enum cudaStreamCaptureStatus *status) {
    (void)s;
    api_calls++;
    if (injected("cudaStreamIsCapturing")) return fail(cudaErrorInvalidResourceHandle);
    *status = cudaStreamCaptureStatusNone;
    return cudaSuccess;
}

/* A stream's id: its handle's value (the legacy stream's, 0, is 1). */
cudaError_t cudaStreamGetId(cudaStream_t s, unsigned long long *id) {
    api_calls++;
    if (!id) return reject(cudaErrorInvalidValue, "cudaStreamGetId", "a null id pointer");
    if (injected("cudaStreamGetId")) return fail(cudaErrorInvalidResourceHandle);
    *id = s ? (unsigned long long)(uintptr_t)s : 1ull;
    return cudaSuccess;
}

/* Events: handles only, as streams. */
static uintptr_t next_event = 0x6000;

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned flags) {
    bind_context();
    api_calls++;
    if (!e) return reject(cudaErrorInvalidValue, "cudaEventCreateWithFlags", "a null handle pointer");
    if (injected("cudaEventCreateWithFlags")) return fail(cudaErrorMemoryAllocation);
    *e = (cudaEvent_t)next_event;
    next_event += 0x10;
    printf("event create %#llx flags=%u\n", (unsigned long long)(uintptr_t)*e, flags);
    return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t e) {
    api_calls++;
    printf("event destroy %#llx\n", (unsigned long long)(uintptr_t)e);
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
    api_calls++;
    if (!e) return reject(cudaErrorInvalidResourceHandle, "cudaEventRecord", "no event");
    if (injected("cudaEventRecord")) return fail(cudaErrorInvalidResourceHandle);
    printf("event record %#llx stream=%#llx\n", (unsigned long long)(uintptr_t)e, (unsigned long long)(uintptr_t)s);
    return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned flags) {
    api_calls++;
    if (!e) return reject(cudaErrorInvalidResourceHandle, "cudaStreamWaitEvent", "no event");
    if (flags != 0) return reject(cudaErrorInvalidValue, "cudaStreamWaitEvent", "flags not modelled");
    if (injected("cudaStreamWaitEvent")) return fail(cudaErrorInvalidResourceHandle);
    printf("stream %#llx waits for event %#llx\n", (unsigned long long)(uintptr_t)s, (unsigned long long)(uintptr_t)e);
    return cudaSuccess;
}

/* The thread's capture mode: kept, and swapped as the runtime swaps it. */
static enum cudaStreamCaptureMode capture_mode = cudaStreamCaptureModeGlobal;

cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode) {
    api_calls++;
    if (!mode) return reject(cudaErrorInvalidValue, "cudaThreadExchangeStreamCaptureMode", "a null mode pointer");
    if (injected("cudaThreadExchangeStreamCaptureMode")) return fail(cudaErrorInvalidValue);
    const enum cudaStreamCaptureMode old = capture_mode;
    capture_mode = *mode;
    *mode = old;
    return cudaSuccess;
}

/* ---- memory: address space only ---- */

cudaError_t cudaMalloc(void **p, size_t size) {
    bind_context();
    api_calls++;
    if (n_allocs == MAX_ALLOCS) return fail(cudaErrorMemoryAllocation);
    const uintptr_t base = next_address;
    next_address += ((size + 0xfffff) & ~(uintptr_t)0xfffff) + 0x100000; /* 1 MB apart, 1 MB gaps */
    allocs[n_allocs++] = (alloc){base, size};
    *p = (void *)base;
    printf("malloc %#llx %zu\n", (unsigned long long)base, size);
    return cudaSuccess;
}

/* Pinned host memory: plain host memory, never given back (the library
 * keeps its few bytes for the process). */
cudaError_t cudaHostAlloc(void **p, size_t size, unsigned flags) {
    bind_context();
    api_calls++;
    if (!p) return reject(cudaErrorInvalidValue, "cudaHostAlloc", "a null pointer");
    if (injected("cudaHostAlloc")) return fail(cudaErrorMemoryAllocation);
    *p = calloc(1, size ? size : 1);
    if (!*p) return fail(cudaErrorMemoryAllocation);
    printf("host alloc %zu flags=%u\n", size, flags);
    return cudaSuccess;
}

cudaError_t cudaFree(void *p) {
    bind_context();
    api_calls++;
    if (!p) return cudaSuccess;
    for (int i = 0; i < n_allocs; i++)
        if (allocs[i].base == (uintptr_t)p) {
            allocs[i] = allocs[--n_allocs];
            /* all given back: the next allocations get the same addresses
               again, so two calls that allocate alike compare byte for byte */
            if (n_allocs == 0) next_address = (uintptr_t)FIRST_ADDRESS;
            return cudaSuccess;
        }
    return reject(cudaErrorInvalidValue, "cudaFree", "not an allocation's start");
}

static const alloc *find_alloc(const void *p) {
    for (int i = 0; i < n_allocs; i++)
        if ((uintptr_t)p >= allocs[i].base && (uintptr_t)p < allocs[i].base + allocs[i].size + 1) return &allocs[i];
    return NULL;
}

/* A fill: recorded, and refused outside one allocation. */
cudaError_t cudaMemsetAsync(void *p, int value, size_t count, cudaStream_t s) {
    bind_context();
    api_calls++;
    const alloc *a = find_alloc(p);
    if (!a || (uintptr_t)p + count > a->base + a->size)
        return reject(cudaErrorInvalidValue, "cudaMemsetAsync", "not inside one allocation");
    if (injected("cudaMemsetAsync")) return fail(cudaErrorInvalidValue);
    printf("memset %#llx %zu value=%d stream=%#llx\n", (unsigned long long)(uintptr_t)p, count, value,
           (unsigned long long)(uintptr_t)s);
    return cudaSuccess;
}

cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *a, const void *p) {
    api_calls++;
    memset(a, 0, sizeof *a);
    if (find_alloc(p)) {
        a->type = cudaMemoryTypeDevice;
        a->device = 0;
        a->devicePointer = (void *)p;
    } else {
        a->type = cudaMemoryTypeUnregistered;
        a->device = -2;
        a->hostPointer = (void *)p;
    }
    return cudaSuccess;
}

static const var *find_var(const void *host) {
    for (int i = 0; i < n_vars; i++)
        if (vars[i].host == host) return &vars[i];
    return NULL;
}

/* The registered variable `symbol`, if [offset, offset + count) lies in it; else NULL after a rejection. */
static const var *symbol_range(const void *symbol, size_t count, size_t offset, const char *who) {
    const var *v = find_var(symbol);
    if (!v) reject(cudaErrorInvalidSymbol, who, "not a registered variable");
    else if (offset + count > v->size) reject(cudaErrorInvalidValue, who, "past the variable's end");
    else return v;
    return NULL;
}

cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset,
                               enum cudaMemcpyKind kind) {
    api_calls++;
    (void)kind;
    const var *v = symbol_range(symbol, count, offset, "cudaMemcpyToSymbol");
    if (!v) return last_error;
    printf("to-symbol %s %zu+%zu %016llx\n", v->name, offset, count,
           (unsigned long long)fnv1a(src, count, FNV_START));
    return cudaSuccess;
}

cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset,
                                 enum cudaMemcpyKind kind) {
    api_calls++;
    (void)kind;
    if (!symbol_range(symbol, count, offset, "cudaMemcpyFromSymbol")) return last_error;
    memset(dst, 0, count); /* the device's memory is not kept: zeros */
    return cudaSuccess;
}

cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t count, size_t offset,
                                      enum cudaMemcpyKind kind, cudaStream_t stream) {
    bind_context();
    (void)stream;
    api_calls++;
    (void)kind;
    if (!symbol_range(symbol, count, offset, "cudaMemcpyFromSymbolAsync")) return last_error;
    if (injected("cudaMemcpyFromSymbolAsync")) return fail(cudaErrorLaunchFailure);
    memset(dst, 0, count); /* zeros, as cudaMemcpyFromSymbol's */
    return cudaSuccess;
}

/* ---- kernels ---- */

cudaError_t cudaGetFuncBySymbol(cudaFunction_t *out, const void *symbol) {
    api_calls++;
    func *f = find_func(symbol);
    if (!f) return reject(cudaErrorInvalidDeviceFunction, "cudaGetFuncBySymbol", "not a registered kernel");
    if (injected("cudaGetFuncBySymbol")) return fail(cudaErrorInvalidDeviceFunction);
    *out = (cudaFunction_t)f;
    return cudaSuccess;
}

/* The most blocks a cluster of f's may hold: 8, or 16 once allowed. */
static unsigned cluster_limit(const func *f) { return f->large_clusters ? 16u : 8u; }

static cudaError_t set_max_dynamic(func *f, int value, const char *who) {
    if (value < 0 || (size_t)value + f->static_smem > SMEM_PER_BLOCK)
        return reject(cudaErrorInvalidValue, who, "dynamic shared memory past 227 KB with the static");
    f->max_dynamic_smem = value;
    printf("attr %s max_dynamic_smem=%d\n", f->name, value);
    return cudaSuccess;
}

static CUresult fake_cuFuncSetAttribute(CUfunction handle, CUfunction_attribute attr, int value) {
    api_calls++;
    if (!context_current) { /* a driver error: the runtime's pending one stays as it is */
        printf("reject cuFuncSetAttribute: no context current on this thread\n");
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    func *f = (func *)handle;
    if (f < funcs || f >= funcs + n_funcs) {
        reject(cudaErrorInvalidValue, "cuFuncSetAttribute", "not a function handle");
        return CUDA_ERROR_INVALID_HANDLE;
    }
    if (attr == CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED) {
        f->large_clusters = value != 0;
        printf("attr %s non_portable_cluster_size=%d\n", f->name, value);
        return CUDA_SUCCESS;
    }
    if (attr != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) {
        reject(cudaErrorInvalidValue, "cuFuncSetAttribute", "attribute not modelled");
        return CUDA_ERROR_INVALID_VALUE;
    }
    return set_max_dynamic(f, value, "cuFuncSetAttribute") == cudaSuccess ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

cudaError_t cudaFuncSetAttribute(const void *symbol, enum cudaFuncAttribute attr, int value) {
    bind_context();
    api_calls++;
    func *f = find_func(symbol);
    if (!f) return reject(cudaErrorInvalidDeviceFunction, "cudaFuncSetAttribute", "not a registered kernel");
    if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize)
        return reject(cudaErrorInvalidValue, "cudaFuncSetAttribute", "attribute not modelled");
    return set_max_dynamic(f, value, "cudaFuncSetAttribute");
}

/* Blocks of f an SM holds at once with `threads` threads and `smem` dynamic bytes. */
static int blocks_per_sm(const func *f, int threads, size_t smem) {
    if (threads < 1 || threads > 1024) return 0;
    const size_t shared = f->static_smem + smem;
    if (shared > SMEM_PER_BLOCK) return 0;
    const int warps = (threads + 31) / 32;
    const int regs_per_warp = ((f->regs > 0 ? f->regs : 1) * 32 + 255) / 256 * 256;
    int n = BLOCKS_PER_SM;
    const int by_threads = THREADS_PER_SM / (warps * 32);
    const int by_regs = REGS_PER_SM / (regs_per_warp * warps);
    const int by_smem = (int)(SMEM_PER_SM / (shared + SMEM_RESERVED));
    if (by_threads < n) n = by_threads;
    if (by_regs < n) n = by_regs;
    if (by_smem < n) n = by_smem;
    return n;
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, const void *symbol, int threads, size_t smem) {
    api_calls++;
    func *f = find_func(symbol);
    if (!f) return reject(cudaErrorInvalidDeviceFunction, "cudaOccupancyMaxActiveBlocksPerMultiprocessor", "not a registered kernel");
    *n = blocks_per_sm(f, threads, smem);
    return cudaSuccess;
}

static unsigned config_cluster(const cudaLaunchConfig_t *cfg, int *pdl, int *bad) {
    unsigned cluster = 1;
    *pdl = 0;
    *bad = 0;
    for (unsigned i = 0; i < cfg->numAttrs; i++) {
        const cudaLaunchAttribute *a = &cfg->attrs[i];
        if (a->id == cudaLaunchAttributeClusterDimension) {
            if (a->val.clusterDim.y != 1 || a->val.clusterDim.z != 1) *bad = 1;
            cluster = a->val.clusterDim.x;
        } else if (a->id == cudaLaunchAttributeProgrammaticStreamSerialization) {
            *pdl = a->val.programmaticStreamSerializationAllowed;
        } else {
            *bad = 1;
        }
    }
    return cluster;
}

cudaError_t cudaOccupancyMaxActiveClusters(int *n, const void *symbol, const cudaLaunchConfig_t *cfg) {
    api_calls++;
    func *f = find_func(symbol);
    if (!f) return reject(cudaErrorInvalidDeviceFunction, "cudaOccupancyMaxActiveClusters", "not a registered kernel");
    if (injected("cudaOccupancyMaxActiveClusters")) return fail(cudaErrorInvalidValue);
    int pdl = 0, bad = 0;
    const unsigned cluster = config_cluster(cfg, &pdl, &bad);
    if (bad || cluster < 1 || cluster > cluster_limit(f))
        return reject(cudaErrorInvalidValue, "cudaOccupancyMaxActiveClusters", "a cluster shape not modelled");
    if (cfg->dynamicSmemBytes > (size_t)f->max_dynamic_smem)
        return reject(cudaErrorInvalidValue, "cudaOccupancyMaxActiveClusters", "more dynamic shared memory than the kernel's limit");
    const int per_sm = blocks_per_sm(f, (int)(cfg->blockDim.x * cfg->blockDim.y * cfg->blockDim.z), cfg->dynamicSmemBytes);
    *n = per_sm * sm_count() / (int)cluster;
    return cudaSuccess;
}

/* The tensor maps encoded so far (their ids, the hash each map holds in its
 * first 8 bytes, the rest zero): a kernel parameter that is one prints as it. */
enum { MAP_IDS = 4096 };
static uint64_t map_ids[MAP_IDS]; /* a ring */
static unsigned map_next;

static uint64_t encoded_map(const void *param, size_t size) {
    if (size != sizeof(CUtensorMap)) return 0;
    const unsigned char *b = (const unsigned char *)param;
    for (size_t i = 8; i < size; i++)
        if (b[i]) return 0;
    uint64_t id;
    memcpy(&id, b, sizeof id);
    for (int i = 0; i < MAP_IDS && id; i++)
        if (map_ids[i] == id) return id;
    return 0;
}

/* One launch: checked as the runtime checks it, then written out. */
static cudaError_t launch(const char *who, const void *symbol, dim3 grid, dim3 block, size_t smem, unsigned cluster,
                          int pdl, int bad_attr, cudaStream_t stream, void **args) {
    func *f = find_func(symbol);
    if (!f) return reject(cudaErrorInvalidDeviceFunction, who, "not a registered kernel");
    const unsigned long long threads = (unsigned long long)block.x * block.y * block.z;
    if (bad_attr) return reject(cudaErrorInvalidValue, who, "a launch attribute not modelled");
    if (grid.x == 0 || grid.y == 0 || grid.z == 0 || block.x == 0 || block.y == 0 || block.z == 0)
        return reject(cudaErrorInvalidConfiguration, who, "an empty grid or block");
    if (grid.y > 65535 || grid.z > 65535 || grid.x > 0x7fffffffu)
        return reject(cudaErrorInvalidConfiguration, who, "a grid dimension past its limit");
    if (threads > 1024) return reject(cudaErrorInvalidConfiguration, who, "more than 1024 threads a block");
    if (smem > (size_t)f->max_dynamic_smem)
        return reject(cudaErrorInvalidValue, who, "more dynamic shared memory than the kernel's limit");
    if (cluster < 1 || cluster > cluster_limit(f))
        return reject(cudaErrorInvalidClusterSize, who, "a cluster past 8 blocks (16 with the non-portable attribute)");
    if (grid.x % cluster != 0) return reject(cudaErrorInvalidClusterSize, who, "a grid not a whole number of clusters");
    if (blocks_per_sm(f, (int)threads, smem) < 1)
        return reject(cudaErrorLaunchOutOfResources, who, "no SM holds one block (registers, threads or shared memory)");
    if (f->n_params > 0 && !args) return reject(cudaErrorInvalidValue, who, "parameters without an argument array");
    printf("launch %s grid=%u,%u,%u block=%u,%u,%u smem=%zu cluster=%u pdl=%d stream=%#llx params=", f->name,
           grid.x, grid.y, grid.z, block.x, block.y, block.z, smem, cluster, pdl,
           (unsigned long long)(uintptr_t)stream);
    for (int i = 0; i < f->n_params; i++) {
        const uint64_t map = encoded_map(args[i], f->param_size[i]);
        if (map)
            printf("%smap:%016llx", i ? "," : "", (unsigned long long)map);
        else
            printf("%s%u:%016llx", i ? "," : "", f->param_size[i],
                   (unsigned long long)fnv1a(args[i], f->param_size[i], FNV_START));
    }
    printf("\n");
    return cudaSuccess;
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *cfg, const void *symbol, void **args) {
    bind_context();
    api_calls++;
    int pdl = 0, bad = 0;
    const unsigned cluster = config_cluster(cfg, &pdl, &bad);
    return launch("cudaLaunchKernelExC", symbol, cfg->gridDim, cfg->blockDim, cfg->dynamicSmemBytes, cluster, pdl,
                  bad, cfg->stream, args);
}

/* The triple-chevron path: the stub pushes, pops, then launches by handle. */
static struct {
    dim3 grid, block;
    size_t smem;
    cudaStream_t stream;
    int set;
} pushed;

unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t smem, struct CUstream_st *stream) {
    api_calls++;
    pushed.grid = grid;
    pushed.block = block;
    pushed.smem = smem;
    pushed.stream = stream;
    pushed.set = 1;
    return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *smem, void *stream) {
    api_calls++;
    if (!pushed.set) return fail(cudaErrorInvalidConfiguration);
    *grid = pushed.grid;
    *block = pushed.block;
    *smem = pushed.smem;
    *(cudaStream_t *)stream = pushed.stream;
    pushed.set = 0;
    return cudaSuccess;
}

cudaError_t __cudaGetKernel(cudaKernel_t *out, const void *symbol) {
    api_calls++;
    *out = (cudaKernel_t)symbol; /* the handle is the stub's address */
    return cudaSuccess;
}

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void **args, size_t smem,
                               cudaStream_t stream) {
    api_calls++;
    return launch("<<<>>>", (const void *)kernel, grid, block, smem, 1, 0, 0, stream, args);
}

cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block, void **args, size_t smem,
                                    cudaStream_t stream) {
    return __cudaLaunchKernel(kernel, grid, block, args, smem, stream);
}

/* ---- the driver's tensor maps ---- */

static unsigned element_bytes(CUtensorMapDataType t) {
    switch (t) {
    case CU_TENSOR_MAP_DATA_TYPE_UINT8: return 1;
    case CU_TENSOR_MAP_DATA_TYPE_UINT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16: return 2;
    case CU_TENSOR_MAP_DATA_TYPE_UINT32:
    case CU_TENSOR_MAP_DATA_TYPE_INT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ: return 4;
    case CU_TENSOR_MAP_DATA_TYPE_INT64:
    case CU_TENSOR_MAP_DATA_TYPE_UINT64:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT64: return 8;
    default: return 0;
    }
}

static CUresult tmap_reject(const char *why) {
    reject(cudaErrorInvalidValue, "cuTensorMapEncodeTiled", why);
    return CUDA_ERROR_INVALID_VALUE;
}

static CUresult fake_cuTensorMapEncodeTiled(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank,
                                            void *address, const cuuint64_t *dims, const cuuint64_t *strides,
                                            const cuuint32_t *box, const cuuint32_t *estrides,
                                            CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                            CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
    api_calls++;
    if (!context_current) { /* as the driver answers on an H100 */
        printf("reject cuTensorMapEncodeTiled: no context current on this thread\n");
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    const unsigned bytes = element_bytes(type);
    if (!bytes) return tmap_reject("a data type not modelled");
    if (rank < 1 || rank > 5) return tmap_reject("rank outside 1..5");
    if (interleave != CU_TENSOR_MAP_INTERLEAVE_NONE) return tmap_reject("interleave not modelled");
    if ((uintptr_t)address % 16 != 0) return tmap_reject("the global address is not 16-byte aligned");
    if (!find_alloc(address)) return tmap_reject("the global address is not device memory");
    uint64_t extent = 0; /* the last byte the map reaches, from address */
    for (unsigned i = 0; i < rank; i++) {
        if (dims[i] == 0 || dims[i] > ((uint64_t)1 << 32)) return tmap_reject("a global dimension outside 1..2^32");
        if (box[i] == 0 || box[i] > 256) return tmap_reject("a box dimension outside 1..256");
        if (estrides[i] == 0 || estrides[i] > 8) return tmap_reject("an element stride outside 1..8");
        const uint64_t stride = i == 0 ? bytes : strides[i - 1];
        if (i > 0) {
            if (stride % 16 != 0) return tmap_reject("a global stride not a multiple of 16 bytes");
            if (stride >= ((uint64_t)1 << 40)) return tmap_reject("a global stride of 2^40 bytes or more");
        }
        extent += (dims[i] - 1) * stride;
    }
    extent += bytes;
    if ((uint64_t)box[0] * bytes % 16 != 0) return tmap_reject("the box's inner extent is not a multiple of 16 bytes");
    const uint64_t inner = (uint64_t)box[0] * bytes;
    if ((swizzle == CU_TENSOR_MAP_SWIZZLE_32B && inner > 32) || (swizzle == CU_TENSOR_MAP_SWIZZLE_64B && inner > 64) ||
        (swizzle == CU_TENSOR_MAP_SWIZZLE_128B && inner > 128))
        return tmap_reject("the box's inner extent is wider than the swizzle span");
    const alloc *a = find_alloc(address);
    const int outside = (uintptr_t)address + extent > a->base + a->size;
    uint64_t h = fnv1a(&type, sizeof type, FNV_START);
    h = fnv1a(&rank, sizeof rank, h);
    h = fnv1a(&address, sizeof address, h);
    h = fnv1a(dims, rank * sizeof *dims, h);
    h = fnv1a(strides, (rank - 1) * sizeof *strides, h);
    h = fnv1a(box, rank * sizeof *box, h);
    h = fnv1a(estrides, rank * sizeof *estrides, h);
    h = fnv1a(&swizzle, sizeof swizzle, h);
    h = fnv1a(&l2, sizeof l2, h);
    h = fnv1a(&oob, sizeof oob, h);
    memset(map, 0, sizeof *map);
    memcpy(map, &h, sizeof h);
    map_ids[map_next++ % MAP_IDS] = h;
    printf("tmap %016llx type=%d addr=%#llx dims=", (unsigned long long)h, (int)type,
           (unsigned long long)(uintptr_t)address);
    for (unsigned i = 0; i < rank; i++) printf("%s%llu", i ? "," : "", (unsigned long long)dims[i]);
    printf(" strides=");
    for (unsigned i = 0; i + 1 < rank; i++) printf("%s%llu", i ? "," : "", (unsigned long long)strides[i]);
    printf(" box=");
    for (unsigned i = 0; i < rank; i++) printf("%s%u", i ? "," : "", box[i]);
    printf(" swizzle=%d l2=%d oob=%d%s\n", (int)swizzle, (int)l2, (int)oob,
           outside ? " past-allocation" : "");
    return CUDA_SUCCESS;
}

cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **out, unsigned version,
                                             unsigned long long flags, enum cudaDriverEntryPointQueryResult *status) {
    api_calls++;
    (void)version, (void)flags;
    *out = NULL;
    if (strcmp(symbol, "cuTensorMapEncodeTiled") == 0) *out = (void *)fake_cuTensorMapEncodeTiled;
    else if (strcmp(symbol, "cuFuncSetAttribute") == 0) *out = (void *)fake_cuFuncSetAttribute;
    if (status) *status = *out ? cudaDriverEntryPointSuccess : cudaDriverEntryPointSymbolNotFound;
    if (!*out) printf("reject cudaGetDriverEntryPointByVersion: %s is not modelled\n", symbol);
    return cudaSuccess;
}
