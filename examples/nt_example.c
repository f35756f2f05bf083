/*
 * nt_example.c: the smallest complete use of hgemm.
 *
 *     nt_example [kernel]        kernel: auto (default) or a name of the table
 *     nt_example --list          print the kernel names the library knows
 *
 * Allocates A (m x k), B (n x k) and C (m x n) on the GPU, fills A and B on
 * the host, computes C = A * B^T with hgemm_nt, copies C back and checks a few
 * elements against a dot product on the CPU. Every CUDA and hgemm call is
 * checked: a failure prints where and why and exits 1. Without a GPU (or
 * without a Hopper one) it says so and exits 2, like `make bench`.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hgemm.h>

/* Ragged on purpose: no size is a multiple of a tile. The leading dimensions
 * are the row lengths, multiples of 8 as hgemm requires. */
enum { M = 1000, N = 520, K = 264, SPOT_CHECKS = 8 };

#define CUDA_CHECK(call)                                                              \
    do {                                                                              \
        cudaError_t err_ = (call);                                                    \
        if (err_ != cudaSuccess) {                                                    \
            fprintf(stderr, "nt_example: %s:%d: %s: %s\n", __FILE__, __LINE__, #call, \
                    cudaGetErrorString(err_));                                        \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

/* fp16 <-> fp32 by hand: cuda_fp16.h is C++ only. The inputs below are
 * multiples of 1/16 in [-1, 1], which fp16 holds exactly, so float_to_half
 * only has to handle normal numbers and zero; half_to_float takes anything. */
static uint16_t float_to_half(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    int exp = (int)((x >> 23) & 0xffu) - 127 + 15;
    if ((x & 0x7fffffffu) == 0 || exp <= 0) return sign; /* zero (and tiny values) */
    return (uint16_t)(sign | (exp << 10) | ((x >> 13) & 0x3ffu));
}

static float half_to_float(uint16_t h) {
    int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    float v = exp == 0 ? ldexpf((float)mant, -24)                      /* subnormal */
            : exp == 31 ? (mant ? NAN : INFINITY)
            : ldexpf((float)(mant | 0x400), exp - 25);
    return (h & 0x8000) ? -v : v;
}

/* The kernel names, "auto" first, from hgemm's own table: ids 0, 1, ...
 * until hgemm_kernel_name says NULL. */
static void print_kernels(FILE *f) {
    for (int id = 0; hgemm_kernel_name((hgemm_kernel)id) != NULL; id++)
        fprintf(f, " %s", hgemm_kernel_name((hgemm_kernel)id));
    fprintf(f, "\n");
}

/* The kernel named on the command line: hgemm's own table is the list. */
static hgemm_kernel kernel_from_name(const char *name) {
    for (int id = 0; hgemm_kernel_name((hgemm_kernel)id) != NULL; id++)
        if (strcmp(hgemm_kernel_name((hgemm_kernel)id), name) == 0) return (hgemm_kernel)id;
    fprintf(stderr, "nt_example: unknown kernel \"%s\"; known:", name);
    print_kernels(stderr);
    exit(1);
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--list") == 0) {
        printf("nt_example: kernels:");
        print_kernels(stdout);
        return 0;
    }
    hgemm_kernel kernel = argc > 1 ? kernel_from_name(argv[1]) : HGEMM_KERNEL_AUTO;

    int devices = 0;
    cudaError_t err = cudaGetDeviceCount(&devices);
    if (err != cudaSuccess || devices == 0) {
        printf("nt_example: no CUDA device (%s); this example needs an NVIDIA Hopper GPU\n",
               err != cudaSuccess ? cudaGetErrorString(err) : "none found");
        return 2;
    }

    /* Host matrices, row-major fp16: small exact values, different per element. */
    size_t a_elems = (size_t)M * K, b_elems = (size_t)N * K, c_elems = (size_t)M * N;
    uint16_t *a = malloc(a_elems * sizeof *a), *b = malloc(b_elems * sizeof *b);
    uint16_t *c = malloc(c_elems * sizeof *c);
    if (a == NULL || b == NULL || c == NULL) {
        fprintf(stderr, "nt_example: out of host memory\n");
        return 1;
    }
    for (size_t i = 0; i < a_elems; i++) a[i] = float_to_half((float)((int)(i * 7 % 33) - 16) / 16.0f);
    for (size_t i = 0; i < b_elems; i++) b[i] = float_to_half((float)((int)(i * 5 % 31) - 15) / 16.0f);

    void *d_a, *d_b, *d_c;
    CUDA_CHECK(cudaMalloc(&d_a, a_elems * sizeof *a));
    CUDA_CHECK(cudaMalloc(&d_b, b_elems * sizeof *b));
    CUDA_CHECK(cudaMalloc(&d_c, c_elems * sizeof *c));
    CUDA_CHECK(cudaMemcpy(d_a, a, a_elems * sizeof *a, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_b, b, b_elems * sizeof *b, cudaMemcpyHostToDevice));

    /* C = 1 * A * B^T + 0 * C on the default stream. beta == 0: C is not read,
     * so it needs no initialization. */
    hgemm_status st = hgemm_nt(kernel, M, N, K, 1.0f, d_a, K, d_b, K, 0.0f, d_c, N, 0);
    if (st == HGEMM_ERROR_NO_DEVICE || st == HGEMM_ERROR_ARCH_MISMATCH) {
        printf("nt_example: %s; this example needs an NVIDIA Hopper GPU\n", hgemm_status_string(st));
        return 2;
    }
    if (st != HGEMM_SUCCESS) {
        fprintf(stderr, "nt_example: hgemm_nt (%s): %s\n", hgemm_kernel_name(kernel),
                hgemm_status_string(st));
        return 1;
    }
    CUDA_CHECK(cudaGetLastError());
    /* The call is asynchronous; this copy on the same stream waits for it. */
    CUDA_CHECK(cudaMemcpy(c, d_c, c_elems * sizeof *c, cudaMemcpyDeviceToHost));

    /* Spot checks: the corners and a few elements in between, against a dot
     * product in double. Tolerance as in the tests: atol + rtol * |ref| with
     * atol 5e-2 (the tests' tolerance for fp16 accumulation), rtol 1e-2. */
    int failures = 0;
    for (int s = 0; s < SPOT_CHECKS; s++) {
        int i = s == 0 ? 0 : s == 1 ? M - 1 : (s * 379) % M;
        int j = s == 0 ? 0 : s == 1 ? N - 1 : (s * 151) % N;
        double ref = 0.0;
        for (int p = 0; p < K; p++)
            ref += (double)half_to_float(a[(size_t)i * K + p]) * half_to_float(b[(size_t)j * K + p]);
        double got = half_to_float(c[(size_t)i * N + j]);
        int ok = fabs(got - ref) <= 5e-2 + 1e-2 * fabs(ref);
        printf("  C[%4d, %4d] = %10.4f   reference %10.4f   %s\n", i, j, got, ref, ok ? "ok" : "WRONG");
        failures += !ok;
    }

    CUDA_CHECK(cudaFree(d_a));
    CUDA_CHECK(cudaFree(d_b));
    CUDA_CHECK(cudaFree(d_c));
    free(a);
    free(b);
    free(c);
    if (failures) {
        fprintf(stderr, "nt_example: %d of %d spot checks failed\n", failures, SPOT_CHECKS);
        return 1;
    }
    printf("nt_example: %dx%dx%d with kernel %s: all %d spot checks passed\n", M, N, K,
           hgemm_kernel_name(kernel), SPOT_CHECKS);
    return 0;
}
