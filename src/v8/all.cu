/*
 * v8/all.cu: the diagnostic build's V8 (-DHGEMM_PHASE_TIMER=ON) in one
 * translation unit: every build's phase clocks are one pair of device
 * arrays, which hgemm-phase-timer reads (tools/phase_timer.c), so the eight
 * forms (and in a lab build V8's ablations) are compiled together here
 * instead of one file each.
 */
#ifndef HGEMM_PHASE_TIMER
#error "src/v8/all.cu is the phase clocks' build; the library compiles src/v8/<dtype>_<form>.cu"
#endif
#include "v8/f16_nt.cu"
#include "v8/f16_tt.cu"
#include "v8/f16_nn.cu"
#include "v8/f16_tn.cu"
#include "v8/bf16_nt.cu"
#include "v8/bf16_tt.cu"
#include "v8/bf16_nn.cu"
#include "v8/bf16_tn.cu"
#include "v8/reduce.cu"
#ifdef HGEMM_LAB
#include "../../lab/v8_lab.cu"
#endif

/* The phase clocks and the unit clocks (tools/phase_timer.c): both zeroed,
 * or copied out (n values, at most V8_PHASE_SLOTS * V8_PHASES * 2, or
 * V8_PHASE_SLOTS * V8_UNIT_MARKS * 2). */
extern "C" int hgemm__v8_phase_clear(void) {
    static const unsigned long long zeros[V8_PHASE_SLOTS * V8_UNIT_MARKS * 2] = {0};
    static_assert((int)V8_UNIT_MARKS >= (int)V8_PHASES, "one zero buffer clears both clocks");
    if (cudaMemcpyToSymbol(v8_phase_clock, zeros, sizeof(unsigned long long) * V8_PHASE_SLOTS * V8_PHASES * 2) !=
        cudaSuccess)
        return -1;
    return cudaMemcpyToSymbol(v8_unit_clock, zeros, sizeof zeros) == cudaSuccess ? 0 : -1;
}
extern "C" int hgemm__v8_unit_read(unsigned long long *out, size_t n) {
    if (n > (size_t)V8_PHASE_SLOTS * V8_UNIT_MARKS * 2) return -1;
    return cudaMemcpyFromSymbol(out, v8_unit_clock, n * sizeof *out) == cudaSuccess ? 0 : -1;
}
extern "C" int hgemm__v8_phase_read(unsigned long long *out, size_t n) {
    if (n > (size_t)V8_PHASE_SLOTS * V8_PHASES * 2) return -1;
    return cudaMemcpyFromSymbol(out, v8_phase_clock, n * sizeof *out) == cudaSuccess ? 0 : -1;
}

