/*
 * test_reference_cpu: the CPU half of hgemm_check, on the CPU only (runs in
 * CI): fp16 and bf16 conversion, the poison and guard patterns, the random
 * generator's determinism and scale in both element types, the fp64 CPU
 * reference on hand-computed cases and in every operand form, quickselect,
 * the host comparison (fp16 and bf16 C) and the bf16 tolerance. Prints each
 * failed check with its line; exits 1 on any.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "test_check.h"

enum {
    SEED = 12345,
    RANDOM_FLOATS = 2000000,   /* conversion property test */
    SAMPLE_ROWS = 1000,        /* distribution test: 1000 x 1000 values */
    SAMPLE_COLS = 1000,
    VAR_ROWS = 64,             /* unit-variance test: 64 x 64 outputs, k = 1024 */
    VAR_K = 1024,
    SELECT_TRIALS = 200,
    SELECT_MAX = 300,
    F16_PATTERNS = 1 << 16,    /* also every bf16 pattern */
    FORM_M = 13, FORM_N = 21, FORM_K = 19, /* the operand-form test's shape */
    FORM_PAD = 5,              /* padding after each stored row */
    REF_PAD_MARK = 12345,      /* written into padding of ref, must survive */
};

static uint16_t h(float f) { return hgemm_check_f32_to_f16(f); }
static double d(uint16_t x) { return (double)hgemm_check_f16_to_f32(x); }

/* Deterministic test-side pseudo random numbers (not the generator under test). */
static uint64_t rng_state = 0x243f6a8885a308d3ull;
static uint64_t rng(void) {
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return hgemm_check_mix64(rng_state);
}

static void test_f16_conversion(void) {
    CHECK_MSG(h(0.0f) == 0x0000, "0x%04x", h(0.0f));
    CHECK_MSG(h(-0.0f) == 0x8000, "0x%04x", h(-0.0f));
    CHECK_MSG(h(1.0f) == 0x3c00, "0x%04x", h(1.0f));
    CHECK_MSG(h(-2.0f) == 0xc000, "0x%04x", h(-2.0f));
    CHECK_MSG(h(0.1f) == 0x2e66, "0x%04x", h(0.1f));
    CHECK_MSG(h(65504.0f) == 0x7bff, "0x%04x", h(65504.0f));
    CHECK_MSG(h(65519.0f) == 0x7bff, "0x%04x", h(65519.0f));
    CHECK_MSG(h(65520.0f) == 0x7c00, "ties to even: to infinity, 0x%04x", h(65520.0f));
    CHECK_MSG(h(1e30f) == 0x7c00 && h(-1e30f) == 0xfc00, "overflow");
    CHECK_MSG(h(INFINITY) == 0x7c00 && h(-INFINITY) == 0xfc00, "infinities");
    CHECK_MSG((h(NAN) & 0x7fff) == 0x7e00, "NaN, 0x%04x", h(NAN));
    CHECK_MSG(h(1.0f + 0x1p-11f) == 0x3c00, "tie to even (down), 0x%04x", h(1.0f + 0x1p-11f));
    CHECK_MSG(h(1.0f + 3 * 0x1p-11f) == 0x3c02, "tie to even (up), 0x%04x", h(1.0f + 3 * 0x1p-11f));
    CHECK_MSG(h(1.0f + 0x1p-11f + 0x1p-20f) == 0x3c01, "above a tie, 0x%04x", h(1.0f + 0x1p-11f + 0x1p-20f));
    CHECK_MSG(h(0x1p-14f) == 0x0400, "smallest normal, 0x%04x", h(0x1p-14f));
    CHECK_MSG(h(0x1p-24f) == 0x0001, "smallest subnormal, 0x%04x", h(0x1p-24f));
    CHECK_MSG(h(0x1p-25f) == 0x0000, "half the smallest subnormal ties to 0, 0x%04x", h(0x1p-25f));
    CHECK_MSG(h(0x1.000002p-25f) == 0x0001, "just above, 0x%04x", h(0x1.000002p-25f));
    CHECK_MSG(h(3 * 0x1p-25f) == 0x0002, "subnormal tie to even, 0x%04x", h(3 * 0x1p-25f));
    CHECK_MSG(h(-5 * 0x1p-24f) == 0x8005, "negative subnormal, 0x%04x", h(-5 * 0x1p-24f));
    CHECK_MSG(h(0x1p-14f - 0x1p-25f) == 0x0400, "rounds up into the normals, 0x%04x", h(0x1p-14f - 0x1p-25f));
    CHECK_MSG(d(0x3555) == 0x1.554p-2, "%.17g", d(0x3555));
    CHECK_MSG(d(0x0001) == 0x1p-24, "%.17g", d(0x0001));
    CHECK_MSG(isinf(d(0xfc00)) && d(0xfc00) < 0, "-inf");
    CHECK_MSG(isnan(d(0x7e00)) && isnan(d(HGEMM_CHECK_SENTINEL)), "NaN patterns");

    /* Every fp16 value survives fp16 -> fp32 -> fp16. */
    int bad = 0;
    for (int x = 0; x < F16_PATTERNS; x++) {
        float f = hgemm_check_f16_to_f32((uint16_t)x);
        if (isnan(f)) {
            bad += (h(f) & 0x7fff) != 0x7e00;
            continue;
        }
        bad += h(f) != (uint16_t)x;
    }
    CHECK_MSG(bad == 0, "%d fp16 values did not round-trip", bad);

    /* Random fp32 values: the result is the nearest fp16 (ties to even). */
    bad = 0;
    for (int i = 0; i < RANDOM_FLOATS; i++) {
        uint32_t bits = (uint32_t)rng();
        bits = (bits & 0x80000000u) | (0x30000000u + bits % (0x47800000u - 0x30000000u));
        float f = hgemm_check_bits_f32(bits);
        uint16_t r = h(f);
        double v = (double)f, e = fabs(d(r) - v);
        uint16_t mag = r & 0x7fff;
        if (mag == 0x7c00) { /* overflow: only from >= 65520 */
            bad += fabs(v) < 65520.0;
            continue;
        }
        /* The neighbours in magnitude must be no closer (and not as close unless r is even). */
        uint16_t sign = r & 0x8000;
        for (int step = -1; step <= 1; step += 2) {
            int nb = (int)mag + step;
            if (nb < 0 || nb >= 0x7c00) continue;
            double en = fabs(d((uint16_t)(sign | nb)) - v);
            if (en < e || (en == e && (r & 1))) bad++;
        }
    }
    CHECK_MSG(bad == 0, "%d random floats were not rounded to the nearest fp16", bad);
}

static uint16_t bf(float f) { return hgemm_check_f32_to_bf16(f); }
static double dbf(uint16_t x) { return (double)hgemm_check_bf16_to_f32(x); }
static float fbits(uint32_t u) { return hgemm_check_bits_f32(u); }

static void test_bf16_conversion(void) {
    CHECK_MSG(bf(0.0f) == 0x0000 && bf(-0.0f) == 0x8000, "zeros 0x%04x 0x%04x", bf(0.0f), bf(-0.0f));
    CHECK_MSG(bf(1.0f) == 0x3f80 && bf(-2.0f) == 0xc000, "0x%04x 0x%04x", bf(1.0f), bf(-2.0f));
    CHECK_MSG(bf(0.1f) == 0x3dcd, "0.1 (0x3dcccccd rounds up), 0x%04x", bf(0.1f));
    CHECK_MSG(bf(fbits(0x3f808000u)) == 0x3f80, "tie to even (down), 0x%04x", bf(fbits(0x3f808000u)));
    CHECK_MSG(bf(fbits(0x3f818000u)) == 0x3f82, "tie to even (up), 0x%04x", bf(fbits(0x3f818000u)));
    CHECK_MSG(bf(fbits(0x3f808001u)) == 0x3f81, "above a tie, 0x%04x", bf(fbits(0x3f808001u)));
    CHECK_MSG(bf(fbits(0x3f807fffu)) == 0x3f80, "below a tie, 0x%04x", bf(fbits(0x3f807fffu)));
    CHECK_MSG(bf(fbits(0x7f7f7fffu)) == 0x7f7f, "largest finite, 0x%04x", bf(fbits(0x7f7f7fffu)));
    CHECK_MSG(bf(fbits(0x7f7f8000u)) == 0x7f80, "ties to even: to infinity, 0x%04x", bf(fbits(0x7f7f8000u)));
    CHECK_MSG(bf(fbits(0x7f7fffffu)) == 0x7f80 && bf(fbits(0xff7fffffu)) == 0xff80, "FLT_MAX overflows");
    CHECK_MSG(bf(INFINITY) == 0x7f80 && bf(-INFINITY) == 0xff80, "infinities");
    CHECK_MSG(bf(NAN) == (HGEMM_CHECK_NAN_BF16 | (bf(NAN) & 0x8000)), "NaN, 0x%04x", bf(NAN));
    CHECK_MSG(bf(fbits(0xffc00000u)) == 0xffc0, "-NaN keeps its sign, 0x%04x", bf(fbits(0xffc00000u)));
    /* Cutting a signalling NaN with a low payload would give infinity. */
    CHECK_MSG(bf(fbits(0x7f800001u)) == 0x7fc0, "signalling NaN -> quiet, 0x%04x", bf(fbits(0x7f800001u)));
    CHECK_MSG(bf(fbits(0x00008000u)) == 0x0000, "subnormal tie to even (0), 0x%04x", bf(fbits(0x00008000u)));
    CHECK_MSG(bf(fbits(0x00018000u)) == 0x0002, "subnormal tie to even (up), 0x%04x", bf(fbits(0x00018000u)));
    CHECK_MSG(bf(fbits(0x007fffffu)) == 0x0080, "rounds up into the normals, 0x%04x", bf(fbits(0x007fffffu)));
    CHECK_MSG(dbf(0x3f80) == 1.0 && dbf(0x0001) == 0x1p-133 && dbf(0x7f7f) == 0x1.fep127,
              "%.17g %.17g %.17g", dbf(0x3f80), dbf(0x0001), dbf(0x7f7f));
    CHECK_MSG(isinf(dbf(0xff80)) && dbf(0xff80) < 0, "-inf");

    /* The patterns: each a NaN of its type, quiet or signalling as check.h says. */
    CHECK_MSG(isnan(dbf(HGEMM_CHECK_NAN_BF16)) && (HGEMM_CHECK_NAN_BF16 & 0x40), "bf16 poison is a quiet NaN");
    CHECK_MSG(isnan(dbf(HGEMM_CHECK_SENTINEL_BF16)) && !(HGEMM_CHECK_SENTINEL_BF16 & 0x40),
              "bf16 sentinel is a signalling NaN");
    CHECK_MSG(isnan(d(HGEMM_CHECK_NAN)) && (HGEMM_CHECK_NAN & 0x200) && isnan(d(HGEMM_CHECK_SENTINEL)) &&
                  !(HGEMM_CHECK_SENTINEL & 0x200), "fp16 poison quiet, sentinel signalling");
    CHECK_MSG(isfinite(dbf(HGEMM_CHECK_NAN)) && isfinite(dbf(HGEMM_CHECK_SENTINEL)),
              "the fp16 patterns are finite bf16 numbers (why bf16 has its own)");
    CHECK_MSG(hgemm_check_nan_dt(HGEMM_DTYPE_F16) == HGEMM_CHECK_NAN &&
                  hgemm_check_nan_dt(HGEMM_DTYPE_BF16) == HGEMM_CHECK_NAN_BF16 &&
                  hgemm_check_sentinel_dt(HGEMM_DTYPE_F16) == HGEMM_CHECK_SENTINEL &&
                  hgemm_check_sentinel_dt(HGEMM_DTYPE_BF16) == HGEMM_CHECK_SENTINEL_BF16,
              "patterns by element type");

    /* Every bf16 value survives bf16 -> fp32 -> bf16; a NaN comes back quiet. */
    int bad = 0;
    for (int x = 0; x < F16_PATTERNS; x++) {
        float f = hgemm_check_bf16_to_f32((uint16_t)x);
        if (isnan(f)) {
            bad += bf(f) != (uint16_t)((x & 0x8000) | HGEMM_CHECK_NAN_BF16);
            continue;
        }
        bad += bf(f) != (uint16_t)x;
    }
    CHECK_MSG(bad == 0, "%d bf16 values did not round-trip", bad);

    /* Random fp32 values over the whole range: the nearest bf16, ties to even;
     * never the sentinel. The dtype helpers agree with the typed functions. */
    bad = 0;
    int helpers = 0;
    const double overflow = 0x1.ffp127; /* halfway between the largest bf16 and 2^128 */
    for (int i = 0; i < RANDOM_FLOATS; i++) {
        uint32_t bits = (uint32_t)rng();
        float f = hgemm_check_bits_f32(bits);
        uint16_t r = bf(f);
        helpers += hgemm_check_f32_to_dt(HGEMM_DTYPE_BF16, f) != r ||
                   hgemm_check_f32_to_dt(HGEMM_DTYPE_F16, f) != h(f);
        if (isnan(f)) {
            bad += (r & 0x7fff) != HGEMM_CHECK_NAN_BF16;
            continue;
        }
        double v = (double)f, e = fabs(dbf(r) - v);
        uint16_t mag = r & 0x7fff, sign = r & 0x8000;
        if (mag == 0x7f80) {
            bad += fabs(v) < overflow && !isinf(f);
            continue;
        }
        for (int step = -1; step <= 1; step += 2) {
            int nb = (int)mag + step;
            if (nb < 0 || nb >= 0x7f80) continue;
            double en = fabs(dbf((uint16_t)(sign | nb)) - v);
            if (en < e || (en == e && (r & 1))) bad++;
        }
    }
    CHECK_MSG(bad == 0, "%d random floats were not rounded to the nearest bf16", bad);
    CHECK_MSG(helpers == 0, "%d conversions by element type differ", helpers);
    for (int x = 0; x < F16_PATTERNS; x++) {
        const uint16_t u = (uint16_t)x;
        helpers += hgemm_check_f32_bits(hgemm_check_dt_to_f32(HGEMM_DTYPE_F16, u)) !=
                   hgemm_check_f32_bits(hgemm_check_f16_to_f32(u));
        helpers += hgemm_check_f32_bits(hgemm_check_dt_to_f32(HGEMM_DTYPE_BF16, u)) != (uint32_t)x << 16;
    }
    CHECK_MSG(helpers == 0, "%d conversions to fp32 by element type differ", helpers);

    /* The tolerance: rounding to bf16 moves a value by at most 2^-8 of it, and
     * HGEMM_CHECK_RTOL leaves at least as much again for the accumulation. */
    CHECK_MSG(HGEMM_CHECK_RTOL >= 2 * HGEMM_CHECK_BF16_ROUNDING, "rtol %g, bf16 rounding %g",
              HGEMM_CHECK_RTOL, HGEMM_CHECK_BF16_ROUNDING);
    double worst = 0;
    for (int i = 0; i < RANDOM_FLOATS / 10; i++) {
        float f = hgemm_check_bits_f32(0x3c000000u + (uint32_t)(rng() % (0x42000000u - 0x3c000000u)));
        worst = fmax(worst, fabs(dbf(bf(f)) - f) / f);
    }
    CHECK_MSG(worst <= HGEMM_CHECK_BF16_ROUNDING && worst > HGEMM_CHECK_BF16_ROUNDING / 2,
              "largest relative rounding error %.4g, bound %.4g", worst, HGEMM_CHECK_BF16_ROUNDING);
}

static void test_random(void) {
    CHECK_MSG(fabs(hgemm_check_unit_scale(1) - sqrt(3.0)) < 1e-6, "%g", hgemm_check_unit_scale(1));
    CHECK_MSG(fabs(hgemm_check_unit_scale(16) - sqrt(3.0) / 2) < 1e-6, "%g", hgemm_check_unit_scale(16));
    CHECK_MSG(hgemm_check_unit_scale(0) == hgemm_check_unit_scale(1), "k = 0 counts as 1");

    /* Deterministic, independent of ld, different for another seed or position. */
    enum { R = 37, C = 29, LD1 = 29, LD2 = 48 };
    uint16_t *a = (uint16_t *)malloc(R * LD1 * 2), *b = (uint16_t *)malloc(R * LD2 * 2);
    uint16_t *c = (uint16_t *)malloc(R * LD1 * 2);
    memset(b, 0xab, R * LD2 * 2);
    float s = hgemm_check_unit_scale(64);
    hgemm_check_random_host(a, R, C, LD1, SEED, s);
    hgemm_check_random_host(b, R, C, LD2, SEED, s);
    hgemm_check_random_host(c, R, C, LD1, SEED + 1, s);
    int same_ld = 1, pad_kept = 1, differ = 0, repeats = 0;
    for (int r = 0; r < R; r++) {
        for (int col = 0; col < C; col++) {
            same_ld &= a[r * LD1 + col] == b[r * LD2 + col];
            same_ld &= a[r * LD1 + col] == hgemm_check_random_f16(SEED, r, col, s);
            differ += a[r * LD1 + col] != c[r * LD1 + col];
            repeats += col > 0 && a[r * LD1 + col] == a[r * LD1 + col - 1];
        }
        for (int col = C; col < LD2; col++) pad_kept &= b[r * LD2 + col] == 0xabab;
    }
    CHECK_MSG(same_ld, "the same seed gives the same matrix whatever ld");
    CHECK_MSG(pad_kept, "columns past cols are left alone");
    CHECK_MSG(differ > R * C * 9 / 10, "another seed differs: only %d of %d", differ, R * C);
    CHECK_MSG(repeats < R * C / 20, "neighbours repeat too often: %d", repeats);
    free(a);
    free(b);
    free(c);

    /* Scale: uniform on (-s, s), standard deviation k^-1/4, mean 0. */
    const int64_t k = 1024;
    s = hgemm_check_unit_scale(k);
    double sum = 0, sum2 = 0, maxabs = 0;
    for (int r = 0; r < SAMPLE_ROWS; r++)
        for (int col = 0; col < SAMPLE_COLS; col++) {
            double v = d(hgemm_check_random_f16(SEED, r, col, s));
            sum += v;
            sum2 += v * v;
            maxabs = fmax(maxabs, fabs(v));
        }
    double count = (double)SAMPLE_ROWS * SAMPLE_COLS, mean = sum / count;
    double sd = sqrt(sum2 / count - mean * mean), want = pow((double)k, -0.25);
    CHECK_MSG(fabs(mean) < 0.01 * want, "mean %g", mean);
    CHECK_MSG(fabs(sd / want - 1) < 0.01, "standard deviation %g, want %g", sd, want);
    CHECK_MSG(maxabs <= s * (1 + 0x1p-11) && maxabs > 0.99 * s, "max |x| %g, scale %g", maxabs, s);

    /* The point of the scale: A * B^T has unit variance. */
    uint16_t *A = (uint16_t *)malloc(VAR_ROWS * VAR_K * 2), *B = (uint16_t *)malloc(VAR_ROWS * VAR_K * 2);
    double *ref = (double *)malloc(VAR_ROWS * VAR_ROWS * sizeof(double));
    hgemm_check_random_host(A, VAR_ROWS, VAR_K, VAR_K, 1, hgemm_check_unit_scale(VAR_K));
    hgemm_check_random_host(B, VAR_ROWS, VAR_K, VAR_K, 2, hgemm_check_unit_scale(VAR_K));
    hgemm_check_reference_cpu(VAR_ROWS, VAR_ROWS, VAR_K, 1.0, A, VAR_K, B, VAR_K, 0.0, NULL, 0, ref, VAR_ROWS);
    sum = sum2 = 0;
    for (int i = 0; i < VAR_ROWS * VAR_ROWS; i++) {
        sum += ref[i];
        sum2 += ref[i] * ref[i];
    }
    count = VAR_ROWS * VAR_ROWS;
    double var = sum2 / count - (sum / count) * (sum / count);
    CHECK_MSG(fabs(var - 1) < 0.1, "output variance %g, want 1", var);
    free(A);
    free(B);
    free(ref);
}

static void test_reference(void) {
    /* A (2 x 3, lda 8), B (2 x 3, ldb 4), C0 (2 x 2, ldc0 3); NaN in all padding. */
    const uint16_t N = HGEMM_CHECK_NAN;
    uint16_t A[2 * 8], B[2 * 4], C0[2 * 3];
    for (int i = 0; i < 16; i++) A[i] = N;
    for (int i = 0; i < 8; i++) B[i] = N;
    for (int i = 0; i < 6; i++) C0[i] = N;
    const float a[2][3] = {{1, 2, 3}, {4, 5, 6}}, b[2][3] = {{1, 0, -1}, {0.5f, 0.25f, 2}};
    const float c0[2][2] = {{1, 2}, {3, 4}};
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < 3; i++) {
            A[r * 8 + i] = h(a[r][i]);
            B[r * 4 + i] = h(b[r][i]);
        }
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < 2; c++) C0[r * 3 + c] = h(c0[r][c]);

    /* A * B^T = [[-2, 7], [-2, 15.25]]. */
    double ref[2 * 5];
    for (int i = 0; i < 10; i++) ref[i] = REF_PAD_MARK;
    hgemm_check_reference_cpu(2, 2, 3, 1.0, A, 8, B, 4, 0.0, C0, 3, ref, 5);
    CHECK_MSG(ref[0] == -2 && ref[1] == 7 && ref[5] == -2 && ref[6] == 15.25, "A*B^T: %g %g %g %g",
           ref[0], ref[1], ref[5], ref[6]);
    hgemm_check_reference_cpu(2, 2, 3, 2.0, A, 8, B, 4, -1.0, C0, 3, ref, 5);
    CHECK_MSG(ref[0] == -5 && ref[1] == 12 && ref[5] == -7 && ref[6] == 26.5,
           "2*A*B^T - C0: %g %g %g %g", ref[0], ref[1], ref[5], ref[6]);
    int pad_kept = 1;
    for (int r = 0; r < 2; r++)
        for (int c = 2; c < 5; c++) pad_kept &= ref[r * 5 + c] == REF_PAD_MARK;
    CHECK_MSG(pad_kept, "ref's padding is not written");

    /* alpha == 0: A and B are not read (NaN there would show); k == 0: NULL is fine. */
    uint16_t nanA[2 * 8];
    for (int i = 0; i < 16; i++) nanA[i] = N;
    hgemm_check_reference_cpu(2, 2, 3, 0.0, nanA, 8, nanA, 8, 0.5, C0, 3, ref, 5);
    CHECK_MSG(ref[0] == 0.5 && ref[1] == 1 && ref[5] == 1.5 && ref[6] == 2, "alpha 0: %g %g %g %g",
           ref[0], ref[1], ref[5], ref[6]);
    hgemm_check_reference_cpu(2, 2, 0, 1.0, NULL, 8, NULL, 8, -1.5, C0, 3, ref, 5);
    CHECK_MSG(ref[0] == -1.5 && ref[1] == -3 && ref[5] == -4.5 && ref[6] == -6, "k 0: %g %g %g %g",
           ref[0], ref[1], ref[5], ref[6]);
    /* beta == 0: C0 is not read (NULL, or NaN). */
    hgemm_check_reference_cpu(2, 2, 3, 1.0, A, 8, B, 4, 0.0, NULL, 0, ref, 5);
    CHECK_MSG(ref[0] == -2 && ref[6] == 15.25, "beta 0 without C0");
    hgemm_check_reference_cpu(2, 2, 0, 1.0, NULL, 8, NULL, 8, 0.0, nanA, 8, ref, 5);
    CHECK_MSG(ref[0] == 0 && ref[1] == 0 && ref[5] == 0 && ref[6] == 0, "k 0, beta 0: zeros");

    /* Exactness: fp16 products are exact in double, so a sum of +-2^-24-scale
     * terms and large terms keeps every bit. */
    uint16_t x[3] = {h(2048.0f), h(0x1p-24f), h(-2048.0f)}, y[3] = {h(2048.0f), h(1.0f), h(2048.0f)};
    double one;
    hgemm_check_reference_cpu(1, 1, 3, 1.0, x, 3, y, 3, 0.0, NULL, 0, &one, 1);
    CHECK_MSG(one == 0x1p-24, "exact sum %.17g", one);
}

/* The random matrices in bf16: the fp32 draw of the fp16 ones, rounded to
 * bf16; the fp16 ones through the _dt functions are the original bits. A
 * bf16 product of unit scale has unit variance too, and its output rounded
 * to bf16 passes the fp32-accumulation tolerance. */
static void test_random_dt(void) {
    enum { R = 23, C = 41, LD = 48 };
    uint16_t *f = (uint16_t *)malloc(R * LD * 2), *g = (uint16_t *)malloc(R * LD * 2);
    uint16_t *b = (uint16_t *)malloc(R * LD * 2);
    memset(b, 0xab, R * LD * 2);
    const float s = hgemm_check_unit_scale(64);
    hgemm_check_random_host(f, R, C, LD, SEED, s);
    hgemm_check_random_host_dt(HGEMM_DTYPE_F16, g, R, C, LD, SEED, s);
    hgemm_check_random_host_dt(HGEMM_DTYPE_BF16, b, R, C, LD, SEED, s);
    int same = 1, typed = 1, close = 1, pad_kept = 1, inexact = 0;
    for (int r = 0; r < R; r++) {
        for (int c = 0; c < C; c++) {
            const float x = hgemm_check_random_f32(SEED, r, c, s);
            same &= f[r * LD + c] == g[r * LD + c] && f[r * LD + c] == h(x) &&
                    hgemm_check_random_dt(HGEMM_DTYPE_F16, SEED, r, c, s) == h(x);
            typed &= b[r * LD + c] == bf(x) && hgemm_check_random_dt(HGEMM_DTYPE_BF16, SEED, r, c, s) == bf(x);
            close &= fabs(dbf(b[r * LD + c]) - d(f[r * LD + c])) <= 0x1p-8 * fabs(x) + 0x1p-11 * fabs(x);
            inexact += dbf(b[r * LD + c]) != d(f[r * LD + c]);
        }
        for (int c = C; c < LD; c++) pad_kept &= b[r * LD + c] == 0xabab;
    }
    CHECK_MSG(same, "fp16 through the _dt functions: the same bits as hgemm_check_random_f16");
    CHECK_MSG(typed, "bf16: the fp32 draw rounded to bf16");
    CHECK_MSG(close && inexact > R * C / 2, "bf16 and fp16 of one seed: close (%d), mostly not equal (%d of %d)",
              close, inexact, R * C);
    CHECK_MSG(pad_kept, "columns past cols are left alone");
    free(f);
    free(g);
    free(b);

    uint16_t *A = (uint16_t *)malloc(VAR_ROWS * VAR_K * 2), *B = (uint16_t *)malloc(VAR_ROWS * VAR_K * 2);
    uint16_t *Cb = (uint16_t *)malloc(VAR_ROWS * VAR_ROWS * 2);
    double *ref = (double *)malloc(VAR_ROWS * VAR_ROWS * sizeof(double));
    hgemm_check_random_host_dt(HGEMM_DTYPE_BF16, A, VAR_ROWS, VAR_K, VAR_K, 1, hgemm_check_unit_scale(VAR_K));
    hgemm_check_random_host_dt(HGEMM_DTYPE_BF16, B, VAR_ROWS, VAR_K, VAR_K, 2, hgemm_check_unit_scale(VAR_K));
    hgemm_check_reference_cpu_ex(HGEMM_DTYPE_BF16, HGEMM_OP_N, HGEMM_OP_T, VAR_ROWS, VAR_ROWS, VAR_K, 1.0, A,
                                 VAR_K, B, VAR_K, 0.0, NULL, 0, ref, VAR_ROWS);
    double sum = 0, sum2 = 0;
    for (int i = 0; i < VAR_ROWS * VAR_ROWS; i++) {
        sum += ref[i];
        sum2 += ref[i] * ref[i];
        Cb[i] = bf((float)ref[i]);
    }
    const double count = VAR_ROWS * VAR_ROWS, var = sum2 / count - (sum / count) * (sum / count);
    CHECK_MSG(fabs(var - 1) < 0.1, "bf16 output variance %g, want 1", var);
    hgemm_check_stats st;
    int ok = hgemm_check_compare_host_dt(HGEMM_DTYPE_BF16, Cb, VAR_ROWS, ref, VAR_ROWS, VAR_ROWS, VAR_ROWS,
                                         HGEMM_CHECK_ATOL_ACC_F32, HGEMM_CHECK_RTOL, &st);
    printf("bf16-rounded unit-variance output: max error %.3g, p99 %.3g\n", st.max_abs_err, st.p99_abs_err);
    CHECK_MSG(ok && st.max_abs_err > 0, "bf16 rounding alone passes: %lld failed, max %g", (long long)st.failed,
              st.max_abs_err);
    free(A);
    free(B);
    free(Cb);
    free(ref);
}

/* Stores the logical m x k matrix X (X(r, i) = src[r * lds + i]) as an operand
 * in form op: as it is (N, ld >= k), or transposed (T: k x m, ld >= m). The
 * padding gets `pad`. Returns the buffer; *ld is its leading dimension. */
static uint16_t *store_form(hgemm_op op, const uint16_t *src, int64_t lds, int64_t m, int64_t k,
                            uint16_t pad, int64_t *ld) {
    const int64_t rows = op == HGEMM_OP_N ? m : k, cols = op == HGEMM_OP_N ? k : m;
    *ld = cols + FORM_PAD;
    uint16_t *x = (uint16_t *)malloc((size_t)(rows * *ld) * 2);
    for (int64_t i = 0; i < rows * *ld; i++) x[i] = pad;
    for (int64_t r = 0; r < m; r++)
        for (int64_t i = 0; i < k; i++) {
            if (op == HGEMM_OP_N) x[r * *ld + i] = src[r * lds + i];
            else x[i * *ld + r] = src[r * lds + i];
        }
    return x;
}

static const char *form_name(hgemm_op op_a, hgemm_op op_b) {
    static const char *names[2][2] = {{"NN", "NT"}, {"TN", "TT"}};
    return names[op_a == HGEMM_OP_T][op_b == HGEMM_OP_T];
}

/* The reference in every form and both element types: hand-computed values,
 * exactness, and the same bits as the NT form for the same logical operands.
 * A is the logical m x k, Bt the logical n x k (op_b(B) = Bt^T); op_b N stores
 * B = Bt^T (k x n), op_b T stores Bt. */
static void test_reference_forms(void) {
    static const hgemm_dtype dtypes[2] = {HGEMM_DTYPE_F16, HGEMM_DTYPE_BF16};
    static const hgemm_op ops[2] = {HGEMM_OP_N, HGEMM_OP_T};
    for (int di = 0; di < 2; di++) {
        const hgemm_dtype dt = dtypes[di];
        const char *dn = dt == HGEMM_DTYPE_BF16 ? "bf16" : "fp16";
        const uint16_t nan = hgemm_check_nan_dt(dt);
        const float a[2][3] = {{1, 2, 3}, {4, 5, 6}}, bt[2][3] = {{1, 0, -1}, {0.5f, 0.25f, 2}};
        const float c0[2][2] = {{1, 2}, {3, 4}};
        uint16_t A0[2 * 3], B0[2 * 3], C0[2 * 2];
        for (int r = 0; r < 2; r++)
            for (int i = 0; i < 3; i++) {
                A0[r * 3 + i] = hgemm_check_f32_to_dt(dt, a[r][i]);
                B0[r * 3 + i] = hgemm_check_f32_to_dt(dt, bt[r][i]);
            }
        for (int i = 0; i < 4; i++) C0[i] = hgemm_check_f32_to_dt(dt, c0[i / 2][i % 2]);
        /* Exactness: 2^12 * 2^12 + 2^-24 * 1 - 2^12 * 2^12 = 2^-24: the products
         * are exact in fp64 and so is the running sum (2^24 + 2^-24: 49 bits). */
        const float x[3] = {0x1p12f, 0x1p-24f, -0x1p12f}, y[3] = {0x1p12f, 1.0f, 0x1p12f};
        uint16_t X[3], Y[3];
        for (int i = 0; i < 3; i++) {
            X[i] = hgemm_check_f32_to_dt(dt, x[i]);
            Y[i] = hgemm_check_f32_to_dt(dt, y[i]);
        }
        const double tiny = 0x1p-24;
        for (int fa = 0; fa < 2; fa++)
            for (int fb = 0; fb < 2; fb++) {
                const hgemm_op oa = ops[fa], ob = ops[fb];
                const hgemm_op sb = ob == HGEMM_OP_N ? HGEMM_OP_T : HGEMM_OP_N; /* how Bt is stored */
                int64_t lda, ldb;
                uint16_t *As = store_form(oa, A0, 3, 2, 3, nan, &lda), *Bs = store_form(sb, B0, 3, 2, 3, nan, &ldb);
                double ref[2 * 5];
                for (int i = 0; i < 10; i++) ref[i] = REF_PAD_MARK;
                hgemm_check_reference_cpu_ex(dt, oa, ob, 2, 2, 3, 1.0, As, lda, Bs, ldb, 0.0, NULL, 0, ref, 5);
                CHECK_MSG(ref[0] == -2 && ref[1] == 7 && ref[5] == -2 && ref[6] == 15.25, "%s %s: %g %g %g %g",
                          dn, form_name(oa, ob), ref[0], ref[1], ref[5], ref[6]);
                hgemm_check_reference_cpu_ex(dt, oa, ob, 2, 2, 3, 2.0, As, lda, Bs, ldb, -1.0, C0, 2, ref, 5);
                CHECK_MSG(ref[0] == -5 && ref[1] == 12 && ref[5] == -7 && ref[6] == 26.5 &&
                              ref[2] == REF_PAD_MARK && ref[9] == REF_PAD_MARK,
                          "%s %s, 2 * A * B - C0: %g %g %g %g", dn, form_name(oa, ob), ref[0], ref[1], ref[5],
                          ref[6]);
                free(As);
                free(Bs);
                As = store_form(oa, X, 3, 1, 3, nan, &lda);
                Bs = store_form(sb, Y, 3, 1, 3, nan, &ldb);
                double one = 0;
                hgemm_check_reference_cpu_ex(dt, oa, ob, 1, 1, 3, 1.0, As, lda, Bs, ldb, 0.0, NULL, 0, &one, 1);
                CHECK_MSG(one == tiny, "%s %s: exact sum %.17g, want %.17g", dn, form_name(oa, ob), one, tiny);
                free(As);
                free(Bs);
            }

        /* Random ragged operands: every form gives the NT form's bits; fp16 NT
         * is hgemm_check_reference_cpu. NaN in every padding element. */
        const int64_t m = FORM_M, n = FORM_N, k = FORM_K;
        uint16_t *A = (uint16_t *)malloc(m * k * 2), *Bt = (uint16_t *)malloc(n * k * 2);
        uint16_t *C = (uint16_t *)malloc(m * n * 2);
        hgemm_check_random_host_dt(dt, A, m, k, k, SEED, hgemm_check_unit_scale(k));
        hgemm_check_random_host_dt(dt, Bt, n, k, k, SEED + 1, hgemm_check_unit_scale(k));
        hgemm_check_random_host_dt(dt, C, m, n, n, SEED + 2, hgemm_check_unit_scale(1));
        double *want = (double *)malloc(m * n * sizeof(double)), *got = (double *)malloc(m * n * sizeof(double));
        hgemm_check_reference_cpu_ex(dt, HGEMM_OP_N, HGEMM_OP_T, m, n, k, 0.75, A, k, Bt, k, -0.5, C, n, want, n);
        if (dt == HGEMM_DTYPE_F16) {
            hgemm_check_reference_cpu(m, n, k, 0.75, A, k, Bt, k, -0.5, C, n, got, n);
            CHECK_MSG(memcmp(got, want, m * n * sizeof(double)) == 0, "fp16 NT is hgemm_check_reference_cpu");
        }
        for (int fa = 0; fa < 2; fa++)
            for (int fb = 0; fb < 2; fb++) {
                const hgemm_op oa = ops[fa], ob = ops[fb];
                int64_t lda, ldb;
                uint16_t *As = store_form(oa, A, k, m, k, nan, &lda);
                uint16_t *Bs = store_form(ob == HGEMM_OP_N ? HGEMM_OP_T : HGEMM_OP_N, Bt, k, n, k, nan, &ldb);
                hgemm_check_reference_cpu_ex(dt, oa, ob, m, n, k, 0.75, As, lda, Bs, ldb, -0.5, C, n, got, n);
                int64_t differ = 0;
                for (int64_t i = 0; i < m * n; i++) differ += got[i] != want[i];
                CHECK_MSG(differ == 0, "%s %s: %lld of %lld outputs differ from NT's", dn, form_name(oa, ob),
                          (long long)differ, (long long)(m * n));
                free(As);
                free(Bs);
            }
        free(A);
        free(Bt);
        free(C);
        free(want);
        free(got);
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void test_select(void) {
    CHECK_MSG(hgemm_check_p99_rank(1) == 0, "%lld", (long long)hgemm_check_p99_rank(1));
    CHECK_MSG(hgemm_check_p99_rank(100) == 98, "%lld", (long long)hgemm_check_p99_rank(100));
    CHECK_MSG(hgemm_check_p99_rank(101) == 99, "%lld", (long long)hgemm_check_p99_rank(101));
    CHECK_MSG(hgemm_check_p99_rank(1000) == 989, "%lld", (long long)hgemm_check_p99_rank(1000));
    CHECK_MSG(hgemm_check_p99_rank(67108864) == 66437775, "%lld", (long long)hgemm_check_p99_rank(67108864));

    double v[SELECT_MAX], sorted[SELECT_MAX], work[SELECT_MAX];
    int bad = 0;
    for (int t = 0; t < SELECT_TRIALS; t++) {
        int count = 1 + (int)(rng() % SELECT_MAX);
        int distinct = 1 + (int)(rng() % (t % 3 == 0 ? 4 : 1000)); /* many ties, sometimes */
        for (int i = 0; i < count; i++) v[i] = (double)(rng() % distinct) * 0.125;
        if (t % 7 == 0) v[count - 1] = INFINITY;
        memcpy(sorted, v, sizeof(double) * count);
        qsort(sorted, count, sizeof(double), cmp_double);
        for (int rank = 0; rank < count; rank++) {
            memcpy(work, v, sizeof(double) * count);
            bad += hgemm_check_select(work, count, rank) != sorted[rank];
        }
    }
    CHECK_MSG(bad == 0, "%d quickselect results differ from sorting", bad);
}

static void test_compare_host(void) {
    /* ref = 0..11 (3 x 4, ld 5); C (ld 6) with chosen errors. */
    enum { M = 3, N = 4, LDR = 5, LDC = 6 };
    double ref[M * LDR];
    uint16_t C[M * LDC];
    for (int i = 0; i < M * LDR; i++) ref[i] = NAN; /* padding: never read */
    for (int i = 0; i < M * LDC; i++) C[i] = HGEMM_CHECK_NAN;
    for (int r = 0; r < M; r++)
        for (int c = 0; c < N; c++) {
            ref[r * LDR + c] = r * N + c;
            C[r * LDC + c] = h((float)(r * N + c));
        }
    hgemm_check_stats s;
    int ok = hgemm_check_compare_host(C, LDC, ref, LDR, M, N, 1e-2, 1e-2, &s);
    CHECK_MSG(ok && s.failed == 0 && s.max_abs_err == 0 && s.mean_abs_err == 0 && s.p99_abs_err == 0 &&
           s.count == 12 && s.mismatches_shown == 0, "exact: ok %d failed %lld max %g", ok,
           (long long)s.failed, s.max_abs_err);

    /* Errors: (0,1) +0.5 (fails), (1,2) +0.0625 (6 + 0.06 tolerance: 0.07 -> passes),
     * (2,3) NaN (fails, non-finite). */
    C[0 * LDC + 1] = h(1.5f);
    C[1 * LDC + 2] = h(6.0625f);
    C[2 * LDC + 3] = HGEMM_CHECK_NAN;
    ok = hgemm_check_compare_host(C, LDC, ref, LDR, M, N, 1e-2, 1e-2, &s);
    CHECK_MSG(!ok && s.failed == 2 && s.nonfinite == 1, "failed %lld nonfinite %lld", (long long)s.failed,
           (long long)s.nonfinite);
    CHECK_MSG(isinf(s.max_abs_err) && isinf(s.mean_abs_err), "NaN counts as an infinite error: max %g", s.max_abs_err);
    /* Errors sorted: 0 x 9, 0.0625, 0.5, inf; rank ceil(0.99 * 12) - 1 = 11: inf. */
    CHECK_MSG(isinf(s.p99_abs_err), "p99 %g", s.p99_abs_err);
    CHECK_MSG(s.mismatches_shown == 2 && s.mismatches[0].row == 0 && s.mismatches[0].col == 1 &&
           s.mismatches[0].got == 1.5 && s.mismatches[0].want == 1 && s.mismatches[1].row == 2 &&
           s.mismatches[1].col == 3 && isnan(s.mismatches[1].got), "mismatches in row-major order");
    /* Without the NaN: mean (0.5 + 0.0625) / 12, p99 = the largest. */
    C[2 * LDC + 3] = h(11.0f);
    ok = hgemm_check_compare_host(C, LDC, ref, LDR, M, N, 1e-2, 1e-2, &s);
    CHECK_MSG(!ok && s.failed == 1 && s.max_abs_err == 0.5 && s.p99_abs_err == 0.5 &&
           fabs(s.mean_abs_err - 0.5625 / 12) < 1e-15, "failed %lld max %g p99 %g mean %g",
           (long long)s.failed, s.max_abs_err, s.p99_abs_err, s.mean_abs_err);
    /* rtol: a 1 % error on a large value passes, 2 % fails. */
    ref[0] = 1000;
    C[0] = h(1008.0f); /* |err| 8 <= 0.01 + 10 */
    C[1] = h(1.0f);
    ok = hgemm_check_compare_host(C, LDC, ref, LDR, 1, 2, 1e-2, 1e-2, &s);
    CHECK_MSG(ok, "relative tolerance");
    C[0] = h(1024.0f); /* |err| 24 > 10.01 */
    ok = hgemm_check_compare_host(C, LDC, ref, LDR, 1, 2, 1e-2, 1e-2, &s);
    CHECK_MSG(!ok && s.failed == 1, "beyond the relative tolerance");
    /* Infinity in C fails too. */
    C[0] = 0x7c00;
    ref[0] = 65504;
    ok = hgemm_check_compare_host(C, LDC, ref, LDR, 1, 1, 1e-2, 1e-2, &s);
    CHECK_MSG(!ok && s.nonfinite == 1, "inf fails");
    /* Nothing to compare. */
    ok = hgemm_check_compare_host(C, LDC, ref, LDR, 0, 4, 1e-2, 1e-2, &s);
    CHECK_MSG(ok && s.count == 0, "empty");
}

/* The host comparison of a bf16 C: the same statistics, bf16 values. */
static void test_compare_host_bf16(void) {
    enum { M = 3, N = 4, LDR = 5, LDC = 8 };
    double ref[M * LDR];
    uint16_t C[M * LDC];
    for (int i = 0; i < M * LDR; i++) ref[i] = NAN;
    for (int i = 0; i < M * LDC; i++) C[i] = HGEMM_CHECK_SENTINEL_BF16; /* padding: never read */
    for (int r = 0; r < M; r++)
        for (int c = 0; c < N; c++) {
            ref[r * LDR + c] = r * N + c;
            C[r * LDC + c] = bf((float)(r * N + c));
        }
    hgemm_check_stats s;
    int ok = hgemm_check_compare_host_dt(HGEMM_DTYPE_BF16, C, LDC, ref, LDR, M, N, 1e-2, 1e-2, &s);
    CHECK_MSG(ok && s.failed == 0 && s.max_abs_err == 0 && s.count == 12, "exact: ok %d failed %lld max %g", ok,
              (long long)s.failed, s.max_abs_err);
    /* (0,1) +0.5 fails; (1,2) 6 + 2^-5 (bf16's spacing at 6) passes; (2,3) the
     * bf16 NaN fails as non-finite; (2,0) the fp16 NaN pattern is a huge
     * finite bf16 number: fails, but finite. */
    C[0 * LDC + 1] = bf(1.5f);
    C[1 * LDC + 2] = bf(6.03125f);
    C[2 * LDC + 3] = HGEMM_CHECK_NAN_BF16;
    C[2 * LDC + 0] = HGEMM_CHECK_NAN;
    ok = hgemm_check_compare_host_dt(HGEMM_DTYPE_BF16, C, LDC, ref, LDR, M, N, 1e-2, 1e-2, &s);
    CHECK_MSG(!ok && s.failed == 3 && s.nonfinite == 1, "failed %lld nonfinite %lld", (long long)s.failed,
              (long long)s.nonfinite);
    CHECK_MSG(s.mismatches_shown == 3 && s.mismatches[0].row == 0 && s.mismatches[0].col == 1 &&
                  s.mismatches[0].got == 1.5 && s.mismatches[1].row == 2 && s.mismatches[1].col == 0 &&
                  s.mismatches[1].got == dbf(HGEMM_CHECK_NAN) && isnan(s.mismatches[2].got),
              "mismatches in row-major order, with bf16 values");
    /* The same bits read as fp16 give other values: the element type matters. */
    C[0 * LDC + 1] = bf(1.0f);
    C[1 * LDC + 2] = bf(6.0f);
    C[2 * LDC + 3] = bf(11.0f);
    C[2 * LDC + 0] = bf(8.0f);
    ok = hgemm_check_compare_host_dt(HGEMM_DTYPE_BF16, C, LDC, ref, LDR, M, N, 1e-2, 1e-2, &s);
    CHECK_MSG(ok, "restored");
    ok = hgemm_check_compare_host(C, LDC, ref, LDR, M, N, 1e-2, 1e-2, &s);
    CHECK_MSG(!ok && s.failed == 10, "bf16 bits compared as fp16: %lld failed (all but 0 and 2, 0x4000 in both)",
              (long long)s.failed);
}

int main(void) {
    test_f16_conversion();
    test_bf16_conversion();
    test_random();
    test_random_dt();
    test_reference();
    test_reference_forms();
    test_select();
    test_compare_host();
    test_compare_host_bf16();
    return check_finish();
}
