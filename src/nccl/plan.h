/*
 * plan.h: the parts of libhgemm_nccl that need neither a GPU nor NCCL, so that
 * they are unit-tested on the CPU (tests/multigpu/test_nccl_plan.c): the
 * argument checks that come before any CUDA or NCCL call, how a rank's rows
 * are cut into chunks, the fingerprint of the uniform arguments, the
 * agreement vector the ranks all-reduce under HGEMM_NCCL_CHECK_AGREE, and
 * whether a call may take NCCL's copy-engine collectives (the uniform
 * conditions, and where this rank's buffers lie in its registered windows).
 */
#ifndef HGEMM_NCCL_PLAN_H
#define HGEMM_NCCL_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "hgemm_nccl.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    HGEMM_NCCL_LD_ALIGN = 8,           /* elements: hgemm's leading-dimension rule */
    HGEMM_NCCL_PTR_ALIGN = 16,         /* bytes: hgemm's pointer rule */
    HGEMM_NCCL_ELEMENT_BYTES = 2,      /* fp16 */
    HGEMM_NCCL_OP_ALLGATHER_GEMM = 1,  /* operation ids, part of the fingerprint */
    HGEMM_NCCL_OP_GEMM_REDUCESCATTER = 2,
    HGEMM_NCCL_OP_CREATE = 3,
    HGEMM_NCCL_OP_MEM_ALLOC = 4,
    HGEMM_NCCL_OP_MEM_FREE = 5,
    /* The agreement vector: int64 slots, all-reduced with ncclMax. */
    HGEMM_NCCL_AGREE_STATUS = 0,       /* the rank's own status */
    HGEMM_NCCL_AGREE_FAILED = 1,       /* nranks - rank where the rank's status is an error, else 0 */
    HGEMM_NCCL_AGREE_HASH = 2,         /* the fingerprint h */
    HGEMM_NCCL_AGREE_NEG_HASH = 3,     /* -h: max(h) == -max(-h) iff every rank has the same h */
    HGEMM_NCCL_AGREE_CE_WINDOW = 4,    /* the copy-engine key's window (-1: not eligible here) */
    HGEMM_NCCL_AGREE_CE_NEG_WINDOW = 5,
    HGEMM_NCCL_AGREE_CE_OFFSET = 6,    /* the copy-engine key's offset */
    HGEMM_NCCL_AGREE_CE_NEG_OFFSET = 7,
    HGEMM_NCCL_AGREE_SLOTS = 8
};

/* hgemm serves sizes up to INT32_MAX less its largest tile side (256), and
 * leading dimensions below 2^39 elements (the tensor-map stride limit). */
#define HGEMM_NCCL_MAX_DIM ((int64_t)INT32_MAX - 256)
#define HGEMM_NCCL_MAX_LD ((int64_t)1 << 39)
#define HGEMM_NCCL_HASH_MASK (((uint64_t)1 << 62) - 1)

/* The workspace's leading dimension for n columns: n rounded up to hgemm's
 * multiple of 8 (at least 8), so that hgemm can write the partial product. */
static inline int64_t hgemm_nccl_workspace_ld(int64_t n) {
    const int64_t up = (n + HGEMM_NCCL_LD_ALIGN - 1) / HGEMM_NCCL_LD_ALIGN * HGEMM_NCCL_LD_ALIGN;
    return up > HGEMM_NCCL_LD_ALIGN ? up : HGEMM_NCCL_LD_ALIGN;
}

/* First row of piece c when m rows are cut into `chunks` pieces:
 * c * m / chunks; piece c is [lo(c), lo(c + 1)). */
static inline int64_t hgemm_nccl_piece_lo(int c, int chunks, int64_t m) {
    return (int64_t)c * m / chunks;
}

/* Each rank's first row (offsets[r], r < nranks) and the total (the return
 * value), from counts that passed hgemm_nccl_check_counts. */
int64_t hgemm_nccl_offsets(const int64_t *m_counts, int nranks, int64_t *offsets);

/* The counts: non-NULL, each >= 0, the total within hgemm's limit. */
hgemm_nccl_status hgemm_nccl_check_counts(const int64_t *m_counts, int nranks);

/* The arguments of hgemm_nccl_allgather_gemm as one rank sees them. */
typedef struct hgemm_nccl_ag_args {
    int rank, nranks;
    hgemm_kernel kernel;
    int chunks;
    const int64_t *m_counts;
    int64_t n_local, k;
    const void *A_local, *A_gathered;
    int64_t lda;
    const void *B_local;
    int64_t ldb;
    const void *C_local;
    int64_t ldc;
} hgemm_nccl_ag_args;

/* The arguments of hgemm_nccl_gemm_reducescatter as one rank sees them. */
typedef struct hgemm_nccl_rs_args {
    int rank, nranks;
    hgemm_kernel kernel;
    int chunks;
    const int64_t *m_counts;
    int64_t n, k_local;
    const void *A_local;
    int64_t lda;
    const void *B_local;
    int64_t ldb;
    const void *C_local;
    int64_t ldc;
    const void *workspace;
    size_t workspace_bytes;
} hgemm_nccl_rs_args;

/* Every check that needs no CUDA call (the order of hgemm_nt's: invalid
 * values, then alignment, then overlaps, then limits). */
hgemm_nccl_status hgemm_nccl_check_ag(const hgemm_nccl_ag_args *a);
hgemm_nccl_status hgemm_nccl_check_rs(const hgemm_nccl_rs_args *a);

/* The fingerprint (62 bits) of the uniform arguments; counts may be NULL. */
uint64_t hgemm_nccl_fingerprint_ag(int nranks, int chunks, const int64_t *m_counts, int64_t k,
                                   int64_t lda);
uint64_t hgemm_nccl_fingerprint_rs(int nranks, int chunks, const int64_t *m_counts, int64_t n);
uint64_t hgemm_nccl_fingerprint_create(int nranks, hgemm_nccl_check check, int copy_engine);
/* hgemm_nccl_mem_alloc (op HGEMM_NCCL_OP_MEM_ALLOC) and hgemm_nccl_mem_free
 * (HGEMM_NCCL_OP_MEM_FREE). The size asked for, or the serial of the window
 * freed, travels in the copy-engine key's slots instead (hgemm_nccl_ce_key
 * {value, 0}), so that a rank's refusal is everyone's status (a differing
 * fingerprint would say MISMATCH first) and different values among ranks
 * that all accept are a MISMATCH the caller decides from *copy_engine. */
uint64_t hgemm_nccl_fingerprint_mem(int nranks, int op);

/* ---- copy-engine collectives ---------------------------------------------------- */

/* One registered window: [base, base + bytes). serial numbers the context's
 * registrations in order; registration is collective, so the n-th window of
 * every rank has the same serial (and, from NCCL, the same size). */
typedef struct hgemm_nccl_window {
    uintptr_t base;
    size_t bytes;
    int64_t serial;
    void *handle;                      /* the ncclWindow_t (NCCL 2.27 on) */
} hgemm_nccl_window;

/* The index in table[0..count-1] of the window that holds the whole byte
 * range [p, p + bytes) (bytes > 0), its offset in that window in *offset;
 * -1 when no window holds it. */
int hgemm_nccl_window_find(const hgemm_nccl_window *table, int count, const void *p, int64_t bytes,
                           int64_t *offset);

/* Where this rank's collective buffer lies: the window's serial and the
 * offset of the buffer the peers write into (NCCL's symmetric windows put a
 * rank's data at the same offset in every peer's window, so the offsets must
 * agree). window -1: this rank cannot take the copy-engine path. */
typedef struct hgemm_nccl_ce_key {
    int64_t window, offset;
} hgemm_nccl_ce_key;

/* Whether the uniform arguments allow the copy-engine path, so that every
 * rank answers the same: at least 2 ranks, one chunk (for (b) on exactly 2
 * ranks any number: the swaps are chunked), every rank the same number of
 * rows (> 0), and for (a) k > 0 and lda == k (rank blocks then sit m * lda
 * elements apart, as ncclAllGather lays them), for (b) n > 0. */
int hgemm_nccl_ce_uniform_ag(int nranks, int chunks, const int64_t *m_counts, int64_t k, int64_t lda);
int hgemm_nccl_ce_uniform_rs(int nranks, int chunks, const int64_t *m_counts, int64_t n);

/* This rank's key for arguments that passed hgemm_nccl_check_ag / _rs and
 * the uniform test above. (a): A_local and A_gathered each inside a window;
 * the key is A_gathered's. (b): the workspace's first
 * hgemm_nccl_gemm_reducescatter_ce_workspace bytes inside one window, within
 * workspace_bytes, meeting no matrix; the key is the workspace's. */
hgemm_nccl_ce_key hgemm_nccl_ce_key_ag(const hgemm_nccl_ag_args *a, const hgemm_nccl_window *table,
                                       int count);
hgemm_nccl_ce_key hgemm_nccl_ce_key_rs(const hgemm_nccl_rs_args *a, const hgemm_nccl_window *table,
                                       int count);

/* The key of a rank that takes no copy-engine path. */
static inline hgemm_nccl_ce_key hgemm_nccl_ce_none(void) {
    const hgemm_nccl_ce_key none = {-1, 0};
    return none;
}

/* This rank's agreement vector. */
void hgemm_nccl_agree_encode(int64_t v[HGEMM_NCCL_AGREE_SLOTS], hgemm_nccl_status own, int rank,
                             int nranks, uint64_t fingerprint, hgemm_nccl_ce_key key);

/* The status every rank returns, from the all-reduced (max) vector: MISMATCH
 * when the fingerprints differ, else the largest status of any rank. The
 * lowest failing rank (-1 if none) goes to *failed_rank; *copy_engine is 1
 * when every rank's key names the same window (>= 0) at the same offset. */
hgemm_nccl_status hgemm_nccl_agree_decode(const int64_t v[HGEMM_NCCL_AGREE_SLOTS], int nranks,
                                          int *failed_rank, int *copy_engine);

/* Bytes spanned by a rows x cols fp16 matrix with leading dimension ld
 * ((rows - 1) * ld + cols elements); 0 when empty; -1 when it cannot exist. */
int64_t hgemm_nccl_span_bytes(int64_t rows, int64_t cols, int64_t ld);

/* Whether two byte ranges meet (empty ranges meet nothing). */
int hgemm_nccl_ranges_meet(const void *a, int64_t a_bytes, const void *b, int64_t b_bytes);

#ifdef __cplusplus
}
#endif

#endif /* HGEMM_NCCL_PLAN_H */
