/* regs.cuh: moving registers between warpgroups (PTX ISA "Miscellaneous
 * Instructions: setmaxnreg", sm_90a). Every thread of a warpgroup executes the
 * same setmaxnreg; it only takes effect in a kernel whose register count at
 * launch is capped (__launch_bounds__(threads, 1)). */
#ifndef HGEMM_PTX_REGS_CUH
#define HGEMM_PTX_REGS_CUH

/* setmaxnreg.inc.sync.aligned.u32: raise this warpgroup's per-thread registers
 * to N, waiting until other warpgroups have released enough. */
template <int N>
static __device__ __forceinline__ void setmaxnreg_inc(void) {
    static_assert(N % 8 == 0 && N >= 24 && N <= 256, "setmaxnreg takes a multiple of 8 in 24..256");
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(N));
}

/* setmaxnreg.dec.sync.aligned.u32: lower this warpgroup's per-thread registers to N. */
template <int N>
static __device__ __forceinline__ void setmaxnreg_dec(void) {
    static_assert(N % 8 == 0 && N >= 24 && N <= 256, "setmaxnreg takes a multiple of 8 in 24..256");
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(N));
}

#endif
