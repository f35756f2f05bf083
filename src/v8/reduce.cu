/* V8's split-K second kernel (v8/split_reduce.cuh), built once for every
 * element type and tile the forms' files launch, which find it here
 * (hgemm__v8_split_reduce) instead of each building its own. */
#include <cuda_bf16.h>

#include "v8/split_reduce.cuh"

template <typename T>
static const void *v8_split_reduce_of(int bn, int cluster) {
    switch (bn * 8 + cluster) {
    case 64 * 8 + 2: return (const void *)v8_split_reduce<T, 64, 2, false>;
    case 128 * 8 + 1: return (const void *)v8_split_reduce<T, 128, 1, false>;
    case 128 * 8 + 2: return (const void *)v8_split_reduce<T, 128, 2, false>;
    case 192 * 8 + 2: return (const void *)v8_split_reduce<T, 192, 2, false>;
    case 256 * 8 + 1: return (const void *)v8_split_reduce<T, 256, 1, false>;
    case 256 * 8 + 2: return (const void *)v8_split_reduce<T, 256, 2, false>;
    case 320 * 8 + 2: return (const void *)v8_split_reduce<T, 320, 2, false>;
    default: return NULL;
    }
}

extern "C" const void *hgemm__v8_split_reduce(hgemm_dtype dtype, int bn, int cluster) {
    return dtype == HGEMM_DTYPE_BF16 ? v8_split_reduce_of<__nv_bfloat16>(bn, cluster)
                                     : v8_split_reduce_of<__half>(bn, cluster);
}
