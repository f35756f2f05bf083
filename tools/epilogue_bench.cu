/*
 * epilogue_bench.cu (hgemm-epilogue-bench): the fused epilogue's cost, in
 * one process. For each shape and epilogue, four entries timed in turns
 * (tools/interleave.h's order, one CUDA event pair a window):
 *   hgemm        AUTO through hgemm_gemm_ex with the bias and activation;
 *   hgemm-plain  AUTO's plain product (hgemm_gemm, a workspace, no epilogue);
 *   cublaslt     cublasLtMatmul with the same epilogue (BIAS, RELU_BIAS,
 *                GELU_BIAS; cuBLASLt has no erf GELU and no SiLU: absent there);
 *   unfused      cublasGemmEx, then one element-wise pass of bias and activation.
 * fp16 or bf16, NT (nn.Linear's product), bias in C's type, beta 0, fp32
 * accumulation throughout.
 * --wgrad: instead, the weight gradient accumulated into fp32 (TN, dW += dY^T X:
 * A stored K x M, B K x N, C M x N fp32, beta 1, c_fp32), four entries again:
 *   hgemm        AUTO through hgemm_gemm_ex with c_fp32, beta 1;
 *   hgemm-plain  AUTO's TN product into C's 16-bit type, beta 0;
 *   cublaslt     cublasGemmEx with an fp32 C and beta 1 (the column "vs_cublaslt");
 *   unfused      cublasGemmEx into a 16-bit C, then one pass adding it into fp32.
 * The check: hgemm's fp32 C against cuBLAS's, one call each from the same C
 * (|d| <= 1e-3 + 1e-3 |ref|). Before timing, hgemm's C is compared with the
 * unfused sequence's (|d| <= 1e-2 + 1e-2 |ref|); a shape that fails prints
 * FAIL and is not timed. CSV columns: kernel, epilogue, m, n, k, dtype, run,
 * ms, vs_plain, vs_unfused, vs_cublaslt (the run's hgemm-plain, unfused and
 * cublaslt over this row's ms), tflops.
 *
 *   hgemm-epilogue-bench [--dtype f16|bf16] [--epilogues LIST | --wgrad] [--repeat N]
 *                        [--iters N] [--csv FILE] [M N K ...]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include "check.h"
#include "hgemm_bench_git.h" /* HGEMM_GIT_COMMIT, generated at build time */
#include "elem.cuh"
#include "epilogue_act.cuh"
#include "hgemm.h"
#include "interleave.h"

enum { ENTRIES = 4, E_HGEMM = 0, E_PLAIN = 1, E_LT = 2, E_UNFUSED = 3, SLICES = 8, MAX_SHAPES = 32 };
static const char *ENTRY_NAMES[ENTRIES] = {"hgemm", "hgemm-plain", "cublaslt", "unfused"};

typedef struct epilogue_kind {
    const char *name;
    hgemm_activation act;
    int lt; /* cublasLtEpilogue_t, or -1: cuBLASLt has none */
} epilogue_kind;

static const epilogue_kind EPILOGUES[] = {
    {"bias", HGEMM_ACTIVATION_NONE, CUBLASLT_EPILOGUE_BIAS},
    {"relu-bias", HGEMM_ACTIVATION_RELU, CUBLASLT_EPILOGUE_RELU_BIAS},
    {"gelu-bias", HGEMM_ACTIVATION_GELU_TANH, CUBLASLT_EPILOGUE_GELU_BIAS},
    {"gelu-erf-bias", HGEMM_ACTIVATION_GELU_ERF, -1},
    {"silu-bias", HGEMM_ACTIVATION_SILU, -1},
};
/* --wgrad's one kind: not an activation, a form (TN, fp32 C, beta 1) */
static const epilogue_kind WGRAD = {"wgrad-f32", HGEMM_ACTIVATION_NONE, -1};
enum { EPILOGUE_COUNT = sizeof EPILOGUES / sizeof EPILOGUES[0] };

/* The unfused sequence's second pass: C = act(C + bias), row-major m x n at ldc */
template <typename T, int ACT>
__global__ void bias_act_kernel(T *c, const T *bias, int64_t m, int64_t n, int64_t ldc) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < m * n; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t row = i / n, col = i - row * n;
        T *p = c + row * ldc + col;
        *p = elem<T>::from_float(epi_act<ACT>(elem<T>::to_float(*p) + elem<T>::to_float(bias[col])));
    }
}

template <typename T>
static void bias_act(hgemm_activation act, T *c, const T *bias, int64_t m, int64_t n, int64_t ldc,
                     cudaStream_t stream) {
    const int threads = 256;
    const int64_t want = (m * n + threads - 1) / threads;
    const unsigned blocks = (unsigned)(want < 4096 ? want : 4096);
    switch (act) {
    case HGEMM_ACTIVATION_RELU: bias_act_kernel<T, HGEMM_ACTIVATION_RELU><<<blocks, threads, 0, stream>>>(c, bias, m, n, ldc); break;
    case HGEMM_ACTIVATION_GELU_TANH: bias_act_kernel<T, HGEMM_ACTIVATION_GELU_TANH><<<blocks, threads, 0, stream>>>(c, bias, m, n, ldc); break;
    case HGEMM_ACTIVATION_GELU_ERF: bias_act_kernel<T, HGEMM_ACTIVATION_GELU_ERF><<<blocks, threads, 0, stream>>>(c, bias, m, n, ldc); break;
    case HGEMM_ACTIVATION_SILU: bias_act_kernel<T, HGEMM_ACTIVATION_SILU><<<blocks, threads, 0, stream>>>(c, bias, m, n, ldc); break;
    default: bias_act_kernel<T, HGEMM_ACTIVATION_NONE><<<blocks, threads, 0, stream>>>(c, bias, m, n, ldc); break;
    }
}

/* --wgrad's unfused second pass: acc (fp32) += c (16-bit), both row-major m x n at ldc */
template <typename T>
__global__ void accumulate_kernel(float *acc, const T *c, int64_t m, int64_t n, int64_t ldc) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < m * n; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t row = i / n, at = row * ldc + (i - row * n);
        acc[at] += elem<T>::to_float(c[at]);
    }
}

/* the largest |x - ref| and how many exceed atol + rtol |ref|, over m x n fp32 at ldc */
__global__ void compare_f32_kernel(const float *x, const float *ref, int64_t m, int64_t n, int64_t ldc, float atol,
                                   float rtol, float *worst, unsigned long long *bad) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < m * n; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t row = i / n, at = row * ldc + (i - row * n);
        const float d = fabsf(x[at] - ref[at]);
        if (!(d <= atol + rtol * fabsf(ref[at]))) atomicAdd(bad, 1ull); /* NaN counts as bad */
        if (d == d) atomicMax((unsigned int *)worst, __float_as_uint(d)); /* d >= 0: bits order as values */
    }
}

typedef struct ctx {
    hgemm_dtype dtype;
    cudaDataType_t cuda_type;
    int64_t m, n, k, ld_ab, ldc;
    int wgrad;        /* --wgrad: TN, fp32 C, beta 1 (A is K x M at lda, B K x N at ldb) */
    int64_t lda, ldb; /* --wgrad's */
    void *A, *B, *bias, *C[ENTRIES], *tmp, *workspace, *lt_workspace;
    size_t lt_workspace_bytes;
    cublasHandle_t blas;
    cublasLtHandle_t lt;
    cublasLtMatmulDesc_t lt_op;
    cublasLtMatrixLayout_t lt_a, lt_b, lt_c;
    cublasLtMatmulAlgo_t lt_algo;
    int lt_ok;
    const epilogue_kind *epi;
    cudaStream_t stream;
} ctx;

/* cuBLASLt's row-major NT: D^T (n x m, column-major) = B (n x k rows: a k x n column-major
 * matrix, transposed) times A^T (k x m column-major); its bias runs along D^T's rows: C's columns */
static void lt_setup(ctx *c) {
    c->lt_ok = 0;
    if (c->epi->lt < 0) return;
    HGEMM_CHECK_CUBLAS(cublasLtMatmulDescCreate(&c->lt_op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    HGEMM_CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(c->lt_op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    HGEMM_CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(c->lt_op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    const cublasLtEpilogue_t ep = (cublasLtEpilogue_t)c->epi->lt;
    HGEMM_CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(c->lt_op, CUBLASLT_MATMUL_DESC_EPILOGUE, &ep, sizeof ep));
    HGEMM_CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(c->lt_op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &c->bias, sizeof c->bias));
    HGEMM_CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&c->lt_a, c->cuda_type, (uint64_t)c->k, (uint64_t)c->n, c->ld_ab));
    HGEMM_CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&c->lt_b, c->cuda_type, (uint64_t)c->k, (uint64_t)c->m, c->ld_ab));
    HGEMM_CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&c->lt_c, c->cuda_type, (uint64_t)c->n, (uint64_t)c->m, c->ldc));
    cublasLtMatmulPreference_t pref;
    HGEMM_CHECK_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
    HGEMM_CHECK_CUBLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                      &c->lt_workspace_bytes, sizeof c->lt_workspace_bytes));
    cublasLtMatmulHeuristicResult_t result;
    int found = 0;
    const cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(c->lt, c->lt_op, c->lt_a, c->lt_b, c->lt_c, c->lt_c, pref,
                                                            1, &result, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    if (s != CUBLAS_STATUS_SUCCESS || found == 0) {
        printf("# cuBLASLt: no algorithm for %s at %lld x %lld x %lld (status %d)\n", c->epi->name, (long long)c->m,
               (long long)c->n, (long long)c->k, (int)s);
        return;
    }
    c->lt_algo = result.algo;
    c->lt_ok = 1;
}

static void lt_teardown(ctx *c) {
    if (c->epi->lt < 0) return;
    cublasLtMatrixLayoutDestroy(c->lt_a);
    cublasLtMatrixLayoutDestroy(c->lt_b);
    cublasLtMatrixLayoutDestroy(c->lt_c);
    cublasLtMatmulDescDestroy(c->lt_op);
}

static int run_wgrad_entry(ctx *c, int e) {
    const float one = 1.0f, zero = 0.0f;
    switch (e) {
    case E_HGEMM: {
        hgemm_options o;
        memset(&o, 0, sizeof o);
        o.size = sizeof o;
        o.c_fp32 = 1; /* no workspace: an fp32 C is never split (hgemm_gemm_ex) */
        return hgemm_gemm_ex(HGEMM_KERNEL_AUTO, c->dtype, HGEMM_OP_T, HGEMM_OP_N, c->m, c->n, c->k, 1.0f, c->A, c->lda,
                             0, c->B, c->ldb, 0, 1.0f, c->C[e], c->ldc, 0, 1, &o, c->stream) == HGEMM_SUCCESS;
    }
    case E_PLAIN: {
        const hgemm_nt_options o = {c->workspace, HGEMM_WORKSPACE_BYTES, 0, NULL, 0};
        return hgemm_gemm(HGEMM_KERNEL_AUTO, c->dtype, HGEMM_OP_T, HGEMM_OP_N, c->m, c->n, c->k, 1.0f, c->A, c->lda, 0,
                          c->B, c->ldb, 0, 0.0f, c->C[e], c->ldc, 0, 1, &o, c->stream) == HGEMM_SUCCESS;
    }
    case E_LT: /* column-major: C^T (n x m) = B^T (n x k, B as stored) times A (k x m, A as stored, transposed) */
        return cublasGemmEx(c->blas, CUBLAS_OP_N, CUBLAS_OP_T, (int)c->n, (int)c->m, (int)c->k, &one, c->B,
                            c->cuda_type, (int)c->ldb, c->A, c->cuda_type, (int)c->lda, &one, c->C[e], CUDA_R_32F,
                            (int)c->ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS;
    default: {
        if (cublasGemmEx(c->blas, CUBLAS_OP_N, CUBLAS_OP_T, (int)c->n, (int)c->m, (int)c->k, &one, c->B, c->cuda_type,
                         (int)c->ldb, c->A, c->cuda_type, (int)c->lda, &zero, c->tmp, c->cuda_type, (int)c->ldc,
                         CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS)
            return 0;
        const int threads = 256;
        const int64_t want = (c->m * c->n + threads - 1) / threads;
        const unsigned blocks = (unsigned)(want < 4096 ? want : 4096);
        if (c->dtype == HGEMM_DTYPE_BF16)
            accumulate_kernel<__nv_bfloat16><<<blocks, threads, 0, c->stream>>>(
                (float *)c->C[e], (const __nv_bfloat16 *)c->tmp, c->m, c->n, c->ldc);
        else
            accumulate_kernel<__half><<<blocks, threads, 0, c->stream>>>((float *)c->C[e], (const __half *)c->tmp,
                                                                         c->m, c->n, c->ldc);
        return cudaGetLastError() == cudaSuccess;
    }
    }
}

static int run_entry(ctx *c, int e) {
    const float one = 1.0f, zero = 0.0f;
    if (c->wgrad) return run_wgrad_entry(c, e);
    switch (e) {
    case E_HGEMM: {
        hgemm_options o;
        memset(&o, 0, sizeof o);
        o.size = sizeof o;
        o.bias = c->bias;
        o.bias_dtype = c->dtype;
        o.activation = c->epi->act;
        return hgemm_gemm_ex(HGEMM_KERNEL_AUTO, c->dtype, HGEMM_OP_N, HGEMM_OP_T, c->m, c->n, c->k, 1.0f, c->A,
                             c->ld_ab, 0, c->B, c->ld_ab, 0, 0.0f, c->C[e], c->ldc, 0, 1, &o, c->stream) == HGEMM_SUCCESS;
    }
    case E_PLAIN: {
        const hgemm_nt_options o = {c->workspace, HGEMM_WORKSPACE_BYTES, 0, NULL, 0};
        return hgemm_gemm(HGEMM_KERNEL_AUTO, c->dtype, HGEMM_OP_N, HGEMM_OP_T, c->m, c->n, c->k, 1.0f, c->A, c->ld_ab,
                          0, c->B, c->ld_ab, 0, 0.0f, c->C[e], c->ldc, 0, 1, &o, c->stream) == HGEMM_SUCCESS;
    }
    case E_LT:
        return cublasLtMatmul(c->lt, c->lt_op, &one, c->B, c->lt_a, c->A, c->lt_b, &zero, c->C[e], c->lt_c, c->C[e],
                              c->lt_c, &c->lt_algo, c->lt_workspace, c->lt_workspace_bytes,
                              c->stream) == CUBLAS_STATUS_SUCCESS;
    default:
        if (cublasGemmEx(c->blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)c->n, (int)c->m, (int)c->k, &one, c->B, c->cuda_type,
                         (int)c->ld_ab, c->A, c->cuda_type, (int)c->ld_ab, &zero, c->C[e], c->cuda_type, (int)c->ldc,
                         CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS)
            return 0;
        if (c->dtype == HGEMM_DTYPE_BF16)
            bias_act(c->epi->act, (__nv_bfloat16 *)c->C[e], (const __nv_bfloat16 *)c->bias, c->m, c->n, c->ldc,
                     c->stream);
        else
            bias_act(c->epi->act, (__half *)c->C[e], (const __half *)c->bias, c->m, c->n, c->ldc, c->stream);
        return cudaGetLastError() == cudaSuccess;
    }
}

/* --wgrad: hgemm's fp32 C against cuBLAS's, each one call from the same C (C[E_HGEMM] and C[E_LT]
 * filled alike before) */
static int wgrad_agree(ctx *c, double *worst) {
    float *dev_worst;
    unsigned long long *dev_bad;
    HGEMM_CHECK_CUDA(cudaMalloc(&dev_worst, 2 * sizeof(float) + sizeof(unsigned long long)));
    dev_bad = (unsigned long long *)(dev_worst + 2);
    HGEMM_CHECK_CUDA(cudaMemsetAsync(dev_worst, 0, 2 * sizeof(float) + sizeof(unsigned long long), c->stream));
    compare_f32_kernel<<<1024, 256, 0, c->stream>>>((const float *)c->C[E_HGEMM], (const float *)c->C[E_LT], c->m,
                                                    c->n, c->ldc, 1e-3f, 1e-3f, dev_worst, dev_bad);
    HGEMM_CHECK_CUDA(cudaGetLastError());
    float w = 0.0f;
    unsigned long long bad = 0;
    HGEMM_CHECK_CUDA(cudaMemcpyAsync(&w, dev_worst, sizeof w, cudaMemcpyDeviceToHost, c->stream));
    HGEMM_CHECK_CUDA(cudaMemcpyAsync(&bad, dev_bad, sizeof bad, cudaMemcpyDeviceToHost, c->stream));
    HGEMM_CHECK_CUDA(cudaStreamSynchronize(c->stream));
    HGEMM_CHECK_CUDA(cudaFree(dev_worst));
    *worst = w;
    return bad == 0;
}

/* hgemm's C (and cuBLASLt's) against the unfused sequence's */
static int outputs_agree(ctx *c, int e, double *worst) {
    if (c->wgrad) return wgrad_agree(c, worst);
    return hgemm_check_outputs_agree_dt(c->dtype, c->C[e], c->C[E_UNFUSED], c->m, c->n, c->ldc, 1e-2, 1e-2, worst);
}

int main(int argc, char **argv) {
    hgemm_dtype dtype = HGEMM_DTYPE_BF16;
    const char *epilogues = "bias,relu-bias,gelu-bias,gelu-erf-bias,silu-bias", *csv_path = NULL;
    int repeat = 3, iters = 40, wgrad = 0;
    int64_t shapes[MAX_SHAPES][3];
    int nshapes = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--dtype") && i + 1 < argc) {
            i++;
            dtype = !strcmp(argv[i], "f16") ? HGEMM_DTYPE_F16 : HGEMM_DTYPE_BF16;
        } else if (!strcmp(argv[i], "--wgrad")) {
            wgrad = 1;
        } else if (!strcmp(argv[i], "--epilogues") && i + 1 < argc) {
            epilogues = argv[++i];
        } else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) {
            repeat = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--iters") && i + 1 < argc) {
            iters = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--csv") && i + 1 < argc) {
            csv_path = argv[++i];
        } else if (i + 2 < argc && nshapes < MAX_SHAPES && atoll(argv[i]) > 0) {
            for (int j = 0; j < 3; j++) shapes[nshapes][j] = atoll(argv[i + j]);
            nshapes++;
            i += 2;
        } else {
            fprintf(stderr,
                    "usage: %s [--dtype f16|bf16] [--epilogues LIST | --wgrad] [--repeat N] [--iters N] [--csv FILE] "
                    "[M N K ...]\n"
                    "  epilogues: bias, relu-bias, gelu-bias (tanh), gelu-erf-bias, silu-bias\n"
                    "  --wgrad: instead, dW += dY^T X into fp32 (TN, c_fp32, beta 1) beside cuBLAS's fp32 C\n"
                    "  default shapes: 8192^3 and four Llama 3 8B prefill products at 4096 tokens\n",
                    argv[0]);
            return 2;
        }
    }
    if (nshapes == 0) {
        static const int64_t defaults[5][3] = {
            {8192, 8192, 8192}, {4096, 6144, 4096}, {4096, 4096, 4096}, {4096, 28672, 4096}, {4096, 4096, 14336}};
        memcpy(shapes, defaults, sizeof defaults);
        nshapes = 5;
    }
    if (repeat < 1 || iters < SLICES || iters % SLICES) {
        fprintf(stderr, "--repeat >= 1 and --iters a multiple of %d\n", SLICES);
        return 2;
    }
    char why[256] = "";
    if (!hgemm_check_sm90_available(why, sizeof why)) {
        printf("hgemm-epilogue-bench: %s\n", why);
        return 77;
    }
    FILE *csv = NULL;
    if (csv_path) {
        csv = hgemm_check_csv_create(csv_path, "hgemm-epilogue-bench", HGEMM_GIT_COMMIT, argc, argv,
                                     "each ms: one window's launches, interleaved with the shape's other entries; "
                                     "vs_*: that entry's ms over this row's");
        if (csv == NULL) return 1;
        fprintf(csv, "kernel,epilogue,m,n,k,dtype,run,ms,vs_plain,vs_unfused,vs_cublaslt,tflops\n");
    }
    ctx c;
    memset(&c, 0, sizeof c);
    c.dtype = dtype;
    c.wgrad = wgrad;
    c.cuda_type = dtype == HGEMM_DTYPE_BF16 ? CUDA_R_16BF : CUDA_R_16F;
    HGEMM_CHECK_CUDA(cudaStreamCreate(&c.stream));
    HGEMM_CHECK_CUBLAS(cublasCreate(&c.blas));
    HGEMM_CHECK_CUBLAS(cublasSetStream(c.blas, c.stream));
    HGEMM_CHECK_CUBLAS(cublasLtCreate(&c.lt));
    c.lt_workspace_bytes = HGEMM_WORKSPACE_BYTES;
    HGEMM_CHECK_CUDA(cudaMalloc(&c.workspace, HGEMM_WORKSPACE_BYTES));
    HGEMM_CHECK_CUDA(cudaMemset(c.workspace, 0, HGEMM_WORKSPACE_BYTES));
    HGEMM_CHECK_CUDA(cudaMalloc(&c.lt_workspace, c.lt_workspace_bytes));
    cudaEvent_t ev0, ev1;
    HGEMM_CHECK_CUDA(cudaEventCreate(&ev0));
    HGEMM_CHECK_CUDA(cudaEventCreate(&ev1));
    const char *dname = dtype == HGEMM_DTYPE_BF16 ? "bf16" : "f16";
    int failures = 0;
    for (int s = 0; s < nshapes; s++) {
        c.m = shapes[s][0];
        c.n = shapes[s][1];
        c.k = shapes[s][2];
        c.ld_ab = (c.k + 7) / 8 * 8;
        c.ldc = (c.n + 7) / 8 * 8;
        c.lda = (c.m + 7) / 8 * 8;
        c.ldb = c.ldc;
        /* --wgrad: A is K x M and B K x N as stored, C fp32 */
        const int64_t a_elems = wgrad ? c.k * c.lda : c.m * c.ld_ab, b_elems = wgrad ? c.k * c.ldb : c.n * c.ld_ab;
        HGEMM_CHECK_CUDA(cudaMalloc(&c.A, (size_t)a_elems * 2));
        HGEMM_CHECK_CUDA(cudaMalloc(&c.B, (size_t)b_elems * 2));
        HGEMM_CHECK_CUDA(cudaMalloc(&c.bias, (size_t)c.ldc * 2));
        HGEMM_CHECK_CUDA(cudaMalloc(&c.tmp, (size_t)(c.m * c.ldc) * 2));
        for (int e = 0; e < ENTRIES; e++) HGEMM_CHECK_CUDA(cudaMalloc(&c.C[e], (size_t)(c.m * c.ldc) * (wgrad ? 4 : 2)));
        if (wgrad) {
            hgemm_check_fill_random_dt(dtype, c.A, c.k, c.m, c.lda, 1, hgemm_check_unit_scale(c.k), c.stream);
            hgemm_check_fill_random_dt(dtype, c.B, c.k, c.n, c.ldb, 2, hgemm_check_unit_scale(c.k), c.stream);
            /* the accumulators start equal: zero, then one product each is what the check compares */
            for (int e = 0; e < ENTRIES; e++)
                HGEMM_CHECK_CUDA(cudaMemsetAsync(c.C[e], 0, (size_t)(c.m * c.ldc) * 4, c.stream));
        } else {
            hgemm_check_fill_random_dt(dtype, c.A, c.m, c.k, c.ld_ab, 1, hgemm_check_unit_scale(c.k), c.stream);
            hgemm_check_fill_random_dt(dtype, c.B, c.n, c.k, c.ld_ab, 2, hgemm_check_unit_scale(c.k), c.stream);
        }
        hgemm_check_fill_random_dt(dtype, c.bias, 1, c.n, c.ldc, 3, hgemm_check_unit_scale(1), c.stream);
        const double flops = 2.0 * (double)c.m * (double)c.n * (double)c.k;
        for (int p = 0; p < (wgrad ? 1 : EPILOGUE_COUNT); p++) {
            if (!wgrad && !strstr(epilogues, EPILOGUES[p].name)) continue;
            /* "gelu-bias" is a substring of nothing else; "bias" alone must be the whole item */
            if (!wgrad && !strcmp(EPILOGUES[p].name, "bias")) {
                char list[256];
                snprintf(list, sizeof list, ",%s,", epilogues);
                if (!strstr(list, ",bias,")) continue;
            }
            c.epi = wgrad ? &WGRAD : &EPILOGUES[p];
            lt_setup(&c);
            if (wgrad) c.lt_ok = 1; /* the slot runs cublasGemmEx's fp32 C */
            int present[ENTRIES] = {1, 1, c.lt_ok, 1}, ids[ENTRIES], count = 0;
            for (int e = 0; e < ENTRIES; e++)
                if (present[e]) ids[count++] = e;
            for (int q = 0; q < count; q++)
                if (!run_entry(&c, ids[q])) {
                    printf("FAIL %s %s at %lld x %lld x %lld: the call failed\n", ENTRY_NAMES[ids[q]], c.epi->name,
                           (long long)c.m, (long long)c.n, (long long)c.k);
                    return 1;
                }
            HGEMM_CHECK_CUDA(cudaStreamSynchronize(c.stream));
            double worst = 0.0, worst_lt = 0.0;
            const int ok = outputs_agree(&c, E_HGEMM, &worst),
                      ok_lt = wgrad || !c.lt_ok || outputs_agree(&c, E_LT, &worst_lt);
            printf("%s %s %s %lld x %lld x %lld: hgemm against %s max |d| %.2e%s", ok ? "ok" : "FAIL", dname,
                   c.epi->name, (long long)c.m, (long long)c.n, (long long)c.k,
                   wgrad ? "cuBLAS's fp32 C" : "the unfused sequence", worst, ok_lt ? "" : " (cuBLASLt off too)");
            if (c.lt_ok && !wgrad) printf(", cuBLASLt %.2e", worst_lt);
            printf("\n");
            if (!ok) {
                failures++;
                lt_teardown(&c);
                continue;
            }
            for (int q = 0; q < count; q++) /* warm-up */
                for (int w = 0; w < 10; w++) run_entry(&c, ids[q]);
            double ms[ENTRIES][16];
            const int runs = repeat < 16 ? repeat : 16;
            for (int r = 0; r < runs; r++) {
                double total[ENTRIES] = {0};
                for (int sl = 0; sl < SLICES; sl++)
                    for (int q = 0; q < count; q++) {
                        const int e = ids[hgemm_interleave_place(r * SLICES + sl, q, count)];
                        HGEMM_CHECK_CUDA(cudaEventRecord(ev0, c.stream));
                        for (int it = 0; it < iters / SLICES; it++) run_entry(&c, e);
                        HGEMM_CHECK_CUDA(cudaEventRecord(ev1, c.stream));
                        HGEMM_CHECK_CUDA(cudaEventSynchronize(ev1));
                        float t = 0.0f;
                        HGEMM_CHECK_CUDA(cudaEventElapsedTime(&t, ev0, ev1));
                        total[e] += t;
                    }
                for (int q = 0; q < count; q++) ms[ids[q]][r] = total[ids[q]] / iters;
                for (int q = 0; q < count; q++) {
                    const int e = ids[q];
                    const double lt = c.lt_ok ? ms[E_LT][r] / ms[e][r] : 0.0;
                    if (csv)
                        fprintf(csv, "%s,%s,%lld,%lld,%lld,%s,%d,%.5f,%.4f,%.4f,%.4f,%.1f\n", ENTRY_NAMES[e],
                                c.epi->name, (long long)c.m, (long long)c.n, (long long)c.k, dname, r + 1, ms[e][r],
                                ms[E_PLAIN][r] / ms[e][r], ms[E_UNFUSED][r] / ms[e][r], lt,
                                flops / ms[e][r] * 1e-9);
                }
            }
            for (int q = 0; q < count; q++) {
                const int e = ids[q];
                double sorted[16], ratio_plain[16], ratio_unf[16], ratio_lt[16];
                for (int r = 0; r < runs; r++) {
                    sorted[r] = ms[e][r];
                    ratio_plain[r] = ms[E_PLAIN][r] / ms[e][r];
                    ratio_unf[r] = ms[E_UNFUSED][r] / ms[e][r];
                    ratio_lt[r] = c.lt_ok ? ms[E_LT][r] / ms[e][r] : 0.0;
                }
                qsort(sorted, (size_t)runs, sizeof(double), hgemm_check_cmp_double);
                qsort(ratio_plain, (size_t)runs, sizeof(double), hgemm_check_cmp_double);
                qsort(ratio_unf, (size_t)runs, sizeof(double), hgemm_check_cmp_double);
                qsort(ratio_lt, (size_t)runs, sizeof(double), hgemm_check_cmp_double);
                printf("  %-12s %8.4f ms  %6.1f TFLOP/s  vs plain %.3f [%.3f..%.3f]  vs unfused %.3f [%.3f..%.3f]",
                       ENTRY_NAMES[e], sorted[runs / 2], flops / sorted[runs / 2] * 1e-9, ratio_plain[runs / 2],
                       ratio_plain[0], ratio_plain[runs - 1], ratio_unf[runs / 2], ratio_unf[0], ratio_unf[runs - 1]);
                if (c.lt_ok) printf("  vs cuBLASLt %.3f [%.3f..%.3f]", ratio_lt[runs / 2], ratio_lt[0], ratio_lt[runs - 1]);
                printf("\n");
            }
            lt_teardown(&c);
        }
        HGEMM_CHECK_CUDA(cudaFree(c.A));
        HGEMM_CHECK_CUDA(cudaFree(c.B));
        HGEMM_CHECK_CUDA(cudaFree(c.bias));
        HGEMM_CHECK_CUDA(cudaFree(c.tmp));
        for (int e = 0; e < ENTRIES; e++) HGEMM_CHECK_CUDA(cudaFree(c.C[e]));
    }
    if (csv) fclose(csv);
    return failures ? 1 : 0;
}
