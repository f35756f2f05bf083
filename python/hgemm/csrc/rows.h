// rows.h: a 2-D tensor as rows hgemm reads in place (the ops' shared helper).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

// x (rows, cols) with contiguous rows at a leading dimension that is a
// multiple of 8 elements and 16-byte aligned: x itself where it already is,
// else a copy into rows padded to 8 (a view of cols columns).
inline at::Tensor hgemm_rows_padded(const at::Tensor &x)
{
    const int64_t rows = x.size(0), cols = x.size(1);
    if (x.stride(1) == 1 && x.stride(0) >= cols && x.stride(0) % 8 == 0 &&
        reinterpret_cast<uintptr_t>(x.data_ptr()) % 16 == 0)
        return x;
    at::Tensor padded = at::empty({rows, (cols + 7) / 8 * 8}, x.options());
    padded.narrow(1, 0, cols).copy_(x);
    return padded.narrow(1, 0, cols);
}
