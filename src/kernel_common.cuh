/*
 * kernel_common.cuh: what every version's file includes: the kernel's
 * arguments and tensor maps (gemm_args.cuh), the 128-byte swizzle
 * (swizzle.cuh), the direct epilogue (epilogue_direct.cuh), the hardware
 * numbers (hw.h) and tile rasterization (raster.h). Each has one concern and
 * is included on its own by the shared headers that need it; the kernel
 * files, which need them all, include this one.
 */
#ifndef HGEMM_KERNEL_COMMON_CUH
#define HGEMM_KERNEL_COMMON_CUH

#include "epilogue_direct.cuh"
#include "gemm_args.cuh"
#include "hw.h"
#include "raster.h"
#include "swizzle.cuh"

#endif
