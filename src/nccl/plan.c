/*
 * plan.c: libhgemm_nccl's argument checks, chunking, fingerprints, the
 * agreement vector and the copy-engine path's conditions; no CUDA or NCCL
 * call (see plan.h).
 */
#include <stdint.h>

#include "plan.h"

int64_t hgemm_nccl_offsets(const int64_t *m_counts, int nranks, int64_t *offsets) {
    int64_t total = 0;
    for (int r = 0; r < nranks; r++) {
        offsets[r] = total;
        total += m_counts[r];
    }
    return total;
}

hgemm_nccl_status hgemm_nccl_check_counts(const int64_t *m_counts, int nranks) {
    if (m_counts == NULL || nranks < 1) return HGEMM_NCCL_ERROR_INVALID_VALUE;
    int64_t total = 0;
    for (int r = 0; r < nranks; r++) {
        if (m_counts[r] < 0) return HGEMM_NCCL_ERROR_INVALID_VALUE;
        /* Each count and the running total stay below 2^62: no overflow. */
        if (m_counts[r] > HGEMM_NCCL_MAX_DIM) return HGEMM_NCCL_ERROR_NOT_SUPPORTED;
        total += m_counts[r];
        if (total > HGEMM_NCCL_MAX_DIM) return HGEMM_NCCL_ERROR_NOT_SUPPORTED;
    }
    return HGEMM_NCCL_SUCCESS;
}

int64_t hgemm_nccl_span_bytes(int64_t rows, int64_t cols, int64_t ld) {
    if (rows < 0 || cols < 0 || ld < 1) return -1;
    if (rows == 0 || cols == 0) return 0;
    if (cols > INT64_MAX / 2) return -1;
    if (rows - 1 > (INT64_MAX / 2 - cols) / ld) return -1;
    return ((rows - 1) * ld + cols) * HGEMM_NCCL_ELEMENT_BYTES;
}

int hgemm_nccl_ranges_meet(const void *a, int64_t a_bytes, const void *b, int64_t b_bytes) {
    if (a_bytes <= 0 || b_bytes <= 0) return 0;
    uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
    /* Distances, not ends: an end near the top of the address space would wrap. */
    return a0 <= b0 ? b0 - a0 < (uintptr_t)a_bytes : a0 - b0 < (uintptr_t)b_bytes;
}

static int misaligned(const void *p, int64_t bytes) {
    return bytes > 0 && ((uintptr_t)p % HGEMM_NCCL_PTR_ALIGN) != 0;
}

static int64_t at_least_one(int64_t x) { return x > 1 ? x : 1; }

static hgemm_nccl_status check_common(int rank, int nranks, hgemm_kernel kernel, int chunks,
                                      const int64_t *m_counts) {
    if (nranks < 1 || rank < 0 || rank >= nranks) return HGEMM_NCCL_ERROR_INVALID_VALUE;
    if (hgemm_kernel_name(kernel) == NULL) return HGEMM_NCCL_ERROR_INVALID_VALUE;
    if (chunks < 1 || chunks > HGEMM_NCCL_MAX_CHUNKS) return HGEMM_NCCL_ERROR_INVALID_VALUE;
    return hgemm_nccl_check_counts(m_counts, nranks);
}

static int ld_too_large(int64_t ld) { return ld >= HGEMM_NCCL_MAX_LD; }

hgemm_nccl_status hgemm_nccl_check_ag(const hgemm_nccl_ag_args *a) {
    hgemm_nccl_status st = check_common(a->rank, a->nranks, a->kernel, a->chunks, a->m_counts);
    if (st != HGEMM_NCCL_SUCCESS) return st;
    if (a->n_local < 0 || a->k < 0) return HGEMM_NCCL_ERROR_INVALID_VALUE;
    if (a->lda < at_least_one(a->k) || a->ldb < at_least_one(a->k) ||
        a->ldc < at_least_one(a->n_local))
        return HGEMM_NCCL_ERROR_INVALID_VALUE;
    int64_t m_total = 0, own_first = 0;
    for (int r = 0; r < a->nranks; r++) {
        if (r == a->rank) own_first = m_total;
        m_total += a->m_counts[r];
    }
    const int64_t m_own = a->m_counts[a->rank];
    const int64_t a_local = hgemm_nccl_span_bytes(m_own, a->k, a->lda);
    const int64_t a_full = hgemm_nccl_span_bytes(m_total, a->k, a->lda);
    const int64_t b_bytes = hgemm_nccl_span_bytes(a->n_local, a->k, a->ldb);
    const int64_t c_bytes = hgemm_nccl_span_bytes(m_total, a->n_local, a->ldc);
    if (a_local < 0 || a_full < 0 || b_bytes < 0 || c_bytes < 0) return HGEMM_NCCL_ERROR_INVALID_VALUE;
    if ((a_local && a->A_local == NULL) || (a_full && a->A_gathered == NULL) ||
        (b_bytes && a->B_local == NULL) || (c_bytes && a->C_local == NULL))
        return HGEMM_NCCL_ERROR_INVALID_VALUE;
    if (a->lda % HGEMM_NCCL_LD_ALIGN || a->ldb % HGEMM_NCCL_LD_ALIGN || a->ldc % HGEMM_NCCL_LD_ALIGN)
        return HGEMM_NCCL_ERROR_MISALIGNED;
    if (misaligned(a->A_local, a_local) || misaligned(a->A_gathered, a_full) ||
        misaligned(a->B_local, b_bytes) || misaligned(a->C_local, c_bytes))
        return HGEMM_NCCL_ERROR_MISALIGNED;
    /* The output shares nothing with the inputs; the gathered A (written)
     * shares nothing with B; the local rows are either exactly this rank's rows
     * of the gathered A (in place) or apart from it. */
    if (hgemm_nccl_ranges_meet(a->C_local, c_bytes, a->A_local, a_local) ||
        hgemm_nccl_ranges_meet(a->C_local, c_bytes, a->A_gathered, a_full) ||
        hgemm_nccl_ranges_meet(a->C_local, c_bytes, a->B_local, b_bytes) ||
        hgemm_nccl_ranges_meet(a->A_gathered, a_full, a->B_local, b_bytes))
        return HGEMM_NCCL_ERROR_INVALID_VALUE;
    const uintptr_t in_place = (uintptr_t)a->A_gathered +
                               (uintptr_t)(own_first * a->lda * HGEMM_NCCL_ELEMENT_BYTES);
    if (hgemm_nccl_ranges_meet(a->A_local, a_local, a->A_gathered, a_full) &&
        (uintptr_t)a->A_local != in_place)
        return HGEMM_NCCL_ERROR_INVALID_VALUE;
    if (m_total > HGEMM_NCCL_MAX_DIM || a->n_local > HGEMM_NCCL_MAX_DIM || a->k > HGEMM_NCCL_MAX_DIM)
        return HGEMM_NCCL_ERROR_NOT_SUPPORTED;
    if (ld_too_large(a->lda) || ld_too_large(a->ldb) || ld_too_large(a->ldc))
        return HGEMM_NCCL_ERROR_NOT_SUPPORTED;
    return HGEMM_NCCL_SUCCESS;
}

size_t hgemm_nccl_gemm_reducescatter_workspace(int64_t m_total, int64_t n) {
    if (m_total < 0 || n < 0) return 0;
    if (m_total == 0 || n == 0) return 0;
    if (n > HGEMM_NCCL_MAX_LD) return 0;
    const uint64_t ld = (uint64_t)hgemm_nccl_workspace_ld(n);
    if ((uint64_t)m_total > SIZE_MAX / HGEMM_NCCL_ELEMENT_BYTES / ld) return 0;
    return (size_t)m_total * (size_t)ld * HGEMM_NCCL_ELEMENT_BYTES;
}

size_t hgemm_nccl_gemm_reducescatter_ce_workspace(int nranks, int64_t m_total, int64_t n) {
    const size_t one = hgemm_nccl_gemm_reducescatter_workspace(m_total, n);
    if (nranks < 1) return 0;
    /* 2 ranks: one region (an in-place all-gather); more: the partials W and
     * the received blocks R, two regions. */
    if (nranks <= 2) return one;
    return one > SIZE_MAX / 2 ? 0 : 2 * one;
}

hgemm_nccl_status hgemm_nccl_check_rs(const hgemm_nccl_rs_args *a) {
    hgemm_nccl_status st = check_common(a->rank, a->nranks, a->kernel, a->chunks, a->m_counts);
    if (st != HGEMM_NCCL_SUCCESS) return st;
    if (a->n < 0 || a->k_local < 0) return HGEMM_NCCL_ERROR_INVALID_VALUE;
    if (a->lda < at_least_one(a->k_local) || a->ldb < at_least_one(a->k_local) ||
        a->ldc < at_least_one(a->n))
        return HGEMM_NCCL_ERROR_INVALID_VALUE;
    int64_t m_total = 0;
    for (int r = 0; r < a->nranks; r++) m_total += a->m_counts[r];
    const int64_t m_own = a->m_counts[a->rank];
    const int64_t a_bytes = hgemm_nccl_span_bytes(m_total, a->k_local, a->lda);
    const int64_t b_bytes = hgemm_nccl_span_bytes(a->n, a->k_local, a->ldb);
    const int64_t c_bytes = hgemm_nccl_span_bytes(m_own, a->n, a->ldc);
    /* The matrices first, by hgemm_nt's rules and in its order (INVALID_VALUE
     * and MISALIGNED, then NOT_SUPPORTED for sizes its kernels do not serve). */
    if (a_bytes < 0 || b_bytes < 0 || c_bytes < 0) return HGEMM_NCCL_ERROR_INVALID_VALUE;
    if ((a_bytes && a->A_local == NULL) || (b_bytes && a->B_local == NULL) || (c_bytes && a->C_local == NULL))
        return HGEMM_NCCL_ERROR_INVALID_VALUE;
    if (a->lda % HGEMM_NCCL_LD_ALIGN || a->ldb % HGEMM_NCCL_LD_ALIGN || a->ldc % HGEMM_NCCL_LD_ALIGN)
        return HGEMM_NCCL_ERROR_MISALIGNED;
    if (misaligned(a->A_local, a_bytes) || misaligned(a->B_local, b_bytes) || misaligned(a->C_local, c_bytes))
        return HGEMM_NCCL_ERROR_MISALIGNED;
    if (hgemm_nccl_ranges_meet(a->C_local, c_bytes, a->A_local, a_bytes) ||
        hgemm_nccl_ranges_meet(a->C_local, c_bytes, a->B_local, b_bytes))
        return HGEMM_NCCL_ERROR_INVALID_VALUE;
    if (m_total > HGEMM_NCCL_MAX_DIM || a->n > HGEMM_NCCL_MAX_DIM || a->k_local > HGEMM_NCCL_MAX_DIM)
        return HGEMM_NCCL_ERROR_NOT_SUPPORTED;
    if (ld_too_large(a->lda) || ld_too_large(a->ldb) || ld_too_large(a->ldc))
        return HGEMM_NCCL_ERROR_NOT_SUPPORTED;
    /* Then the workspace, which a served n defines: the partial product, M
     * rows of n at leading dimension n rounded up to 8; all M rows are asked
     * for, the last one's padding too. */
    const int64_t ldw = hgemm_nccl_workspace_ld(a->n);
    const int64_t w_bytes = hgemm_nccl_span_bytes(m_total, ldw, ldw);
    if (w_bytes < 0 || (w_bytes && a->workspace == NULL)) return HGEMM_NCCL_ERROR_INVALID_VALUE;
    if ((uint64_t)w_bytes > (uint64_t)a->workspace_bytes) return HGEMM_NCCL_ERROR_INVALID_VALUE;
    if (misaligned(a->workspace, w_bytes)) return HGEMM_NCCL_ERROR_MISALIGNED;
    if (hgemm_nccl_ranges_meet(a->workspace, w_bytes, a->A_local, a_bytes) ||
        hgemm_nccl_ranges_meet(a->workspace, w_bytes, a->B_local, b_bytes) ||
        hgemm_nccl_ranges_meet(a->workspace, w_bytes, a->C_local, c_bytes))
        return HGEMM_NCCL_ERROR_INVALID_VALUE;
    return HGEMM_NCCL_SUCCESS;
}

/* The splitmix64 finalizer: a bijective 64-bit mix. */
static uint64_t mix64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

static uint64_t absorb(uint64_t h, uint64_t value) { return mix64(h ^ mix64(value + 0x9e3779b97f4a7c15ull)); }

/* NULL counts hash to a marker no list of counts produces in practice. */
static uint64_t absorb_counts(uint64_t h, int nranks, const int64_t *m_counts) {
    enum { NULL_COUNTS_MARKER = 0x6e756c6c };
    if (m_counts == NULL) return absorb(h, NULL_COUNTS_MARKER);
    for (int r = 0; r < nranks; r++) h = absorb(h, (uint64_t)m_counts[r]);
    return h;
}

uint64_t hgemm_nccl_fingerprint_ag(int nranks, int chunks, const int64_t *m_counts, int64_t k,
                                   int64_t lda) {
    uint64_t h = absorb(0, HGEMM_NCCL_OP_ALLGATHER_GEMM);
    h = absorb(h, (uint64_t)nranks);
    h = absorb(h, (uint64_t)chunks);
    h = absorb_counts(h, nranks, m_counts);
    h = absorb(h, (uint64_t)k);
    h = absorb(h, (uint64_t)lda);
    return h & HGEMM_NCCL_HASH_MASK;
}

uint64_t hgemm_nccl_fingerprint_rs(int nranks, int chunks, const int64_t *m_counts, int64_t n) {
    uint64_t h = absorb(0, HGEMM_NCCL_OP_GEMM_REDUCESCATTER);
    h = absorb(h, (uint64_t)nranks);
    h = absorb(h, (uint64_t)chunks);
    h = absorb_counts(h, nranks, m_counts);
    h = absorb(h, (uint64_t)n);
    return h & HGEMM_NCCL_HASH_MASK;
}

uint64_t hgemm_nccl_fingerprint_create(int nranks, hgemm_nccl_check check, int copy_engine) {
    uint64_t h = absorb(0, HGEMM_NCCL_OP_CREATE);
    h = absorb(h, (uint64_t)nranks);
    h = absorb(h, (uint64_t)check);
    h = absorb(h, (uint64_t)copy_engine);
    return h & HGEMM_NCCL_HASH_MASK;
}

uint64_t hgemm_nccl_fingerprint_mem(int nranks, int op) {
    uint64_t h = absorb(0, (uint64_t)op);
    h = absorb(h, (uint64_t)nranks);
    return h & HGEMM_NCCL_HASH_MASK;
}

/* ---- copy-engine collectives ---------------------------------------------------- */

int hgemm_nccl_window_find(const hgemm_nccl_window *table, int count, const void *p, int64_t bytes,
                           int64_t *offset) {
    if (table == NULL || p == NULL || bytes <= 0) return -1;
    const uintptr_t x = (uintptr_t)p;
    for (int i = 0; i < count; i++) {
        const hgemm_nccl_window *w = &table[i];
        /* Distances, not ends, so that nothing wraps. */
        if (x < w->base || x - w->base >= w->bytes) continue;
        if ((uint64_t)bytes > w->bytes - (x - w->base)) continue;
        *offset = (int64_t)(x - w->base);
        return i;
    }
    return -1;
}

/* Every rank the same count, > 0. */
static int even_counts(int nranks, const int64_t *m_counts) {
    if (m_counts == NULL || nranks < 2 || m_counts[0] <= 0) return 0;
    for (int r = 1; r < nranks; r++)
        if (m_counts[r] != m_counts[0]) return 0;
    return 1;
}

int hgemm_nccl_ce_uniform_ag(int nranks, int chunks, const int64_t *m_counts, int64_t k, int64_t lda) {
    return chunks == 1 && even_counts(nranks, m_counts) && k > 0 && lda == k;
}

int hgemm_nccl_ce_uniform_rs(int nranks, int chunks, const int64_t *m_counts, int64_t n) {
    return (chunks == 1 || nranks == 2) && even_counts(nranks, m_counts) && n > 0;
}

hgemm_nccl_ce_key hgemm_nccl_ce_key_ag(const hgemm_nccl_ag_args *a, const hgemm_nccl_window *table,
                                       int count) {
    hgemm_nccl_ce_key key = hgemm_nccl_ce_none();
    const int64_t m = a->m_counts[a->rank], m_total = m * a->nranks;
    int64_t offset = 0, ignored = 0;
    if (hgemm_nccl_window_find(table, count, a->A_local, hgemm_nccl_span_bytes(m, a->k, a->lda),
                               &ignored) < 0)
        return key;
    const int w = hgemm_nccl_window_find(table, count, a->A_gathered,
                                         hgemm_nccl_span_bytes(m_total, a->k, a->lda), &offset);
    if (w < 0) return key;
    key.window = table[w].serial;
    key.offset = offset;
    return key;
}

hgemm_nccl_ce_key hgemm_nccl_ce_key_rs(const hgemm_nccl_rs_args *a, const hgemm_nccl_window *table,
                                       int count) {
    hgemm_nccl_ce_key key = hgemm_nccl_ce_none();
    const int64_t m_total = a->m_counts[a->rank] * a->nranks;
    const size_t need = hgemm_nccl_gemm_reducescatter_ce_workspace(a->nranks, m_total, a->n);
    if (need == 0 || need > a->workspace_bytes || need > (size_t)INT64_MAX) return key;
    const int64_t w_bytes = (int64_t)need;
    const int64_t a_bytes = hgemm_nccl_span_bytes(m_total, a->k_local, a->lda);
    const int64_t b_bytes = hgemm_nccl_span_bytes(a->n, a->k_local, a->ldb);
    const int64_t c_bytes = hgemm_nccl_span_bytes(a->m_counts[a->rank], a->n, a->ldc);
    /* The check of the arguments covered the first M rows only. */
    if (hgemm_nccl_ranges_meet(a->workspace, w_bytes, a->A_local, a_bytes) ||
        hgemm_nccl_ranges_meet(a->workspace, w_bytes, a->B_local, b_bytes) ||
        hgemm_nccl_ranges_meet(a->workspace, w_bytes, a->C_local, c_bytes))
        return key;
    int64_t offset = 0;
    const int w = hgemm_nccl_window_find(table, count, a->workspace, w_bytes, &offset);
    if (w < 0) return key;
    key.window = table[w].serial;
    key.offset = offset;
    return key;
}

void hgemm_nccl_agree_encode(int64_t v[HGEMM_NCCL_AGREE_SLOTS], hgemm_nccl_status own, int rank,
                             int nranks, uint64_t fingerprint, hgemm_nccl_ce_key key) {
    const int64_t h = (int64_t)(fingerprint & HGEMM_NCCL_HASH_MASK);
    v[HGEMM_NCCL_AGREE_STATUS] = (int64_t)own;
    v[HGEMM_NCCL_AGREE_FAILED] = own != HGEMM_NCCL_SUCCESS ? (int64_t)(nranks - rank) : 0;
    v[HGEMM_NCCL_AGREE_HASH] = h;
    v[HGEMM_NCCL_AGREE_NEG_HASH] = -h;
    /* Not eligible is window -1: below every serial, so the maxima then differ
     * from the negated maxima of the negations unless no rank is eligible. */
    const int64_t window = key.window >= 0 ? key.window : -1;
    const int64_t offset = key.window >= 0 ? key.offset : 0;
    v[HGEMM_NCCL_AGREE_CE_WINDOW] = window;
    v[HGEMM_NCCL_AGREE_CE_NEG_WINDOW] = -window;
    v[HGEMM_NCCL_AGREE_CE_OFFSET] = offset;
    v[HGEMM_NCCL_AGREE_CE_NEG_OFFSET] = -offset;
}

hgemm_nccl_status hgemm_nccl_agree_decode(const int64_t v[HGEMM_NCCL_AGREE_SLOTS], int nranks,
                                          int *failed_rank, int *copy_engine) {
    const int64_t failed = v[HGEMM_NCCL_AGREE_FAILED];
    *failed_rank = failed > 0 && failed <= nranks ? (int)(nranks - failed) : -1;
    *copy_engine = v[HGEMM_NCCL_AGREE_CE_WINDOW] >= 0 &&
                   v[HGEMM_NCCL_AGREE_CE_WINDOW] == -v[HGEMM_NCCL_AGREE_CE_NEG_WINDOW] &&
                   v[HGEMM_NCCL_AGREE_CE_OFFSET] == -v[HGEMM_NCCL_AGREE_CE_NEG_OFFSET];
    if (v[HGEMM_NCCL_AGREE_HASH] != -v[HGEMM_NCCL_AGREE_NEG_HASH]) return HGEMM_NCCL_ERROR_MISMATCH;
    const int64_t st = v[HGEMM_NCCL_AGREE_STATUS];
    if (st < HGEMM_NCCL_SUCCESS || st > HGEMM_NCCL_ERROR_TIMEOUT) return HGEMM_NCCL_ERROR_NCCL;
    return (hgemm_nccl_status)st;
}

const char *hgemm_nccl_status_string(hgemm_nccl_status status) {
    switch (status) {
    case HGEMM_NCCL_SUCCESS: return "success";
    case HGEMM_NCCL_ERROR_INVALID_VALUE:
        return "invalid value: a NULL context, communicator or matrix with nonzero size, a negative "
               "size, a leading dimension smaller than its row, a chunk count out of range, an "
               "unknown kernel, an output overlapping an input, too small a workspace, memory not "
               "of the communicator's device, a current device other than the communicator's, or "
               "for hgemm_nccl_mem_alloc / _free 0 bytes, a NULL or unknown pointer or a full table";
    case HGEMM_NCCL_ERROR_MISALIGNED:
        return "misaligned: every matrix must be 16-byte aligned and every leading dimension a "
               "multiple of 8 elements";
    case HGEMM_NCCL_ERROR_MISMATCH:
        return "mismatch: the ranks passed different values for an argument that must be the "
               "same on every rank (chunks, row counts, and k and lda or n; the check mode or "
               "copy_engine of a new context; the size to hgemm_nccl_mem_alloc or the buffer to "
               "hgemm_nccl_mem_free)";
    case HGEMM_NCCL_ERROR_NOT_SUPPORTED: return "not supported: a valid request beyond hgemm's limits";
    case HGEMM_NCCL_ERROR_NO_DEVICE: return "no CUDA device or driver";
    case HGEMM_NCCL_ERROR_ARCH_MISMATCH:
        return "architecture mismatch: the device is not compute capability 9.0 (Hopper)";
    case HGEMM_NCCL_ERROR_CUDA: return "a CUDA call failed";
    case HGEMM_NCCL_ERROR_NCCL: return "an NCCL call failed or the communicator reports an error";
    case HGEMM_NCCL_ERROR_TIMEOUT:
        return "timeout: the other ranks did not join the collective in time (abort the "
               "communicator before destroying the context)";
    }
    return "unknown status";
}
