// torch.ops.hgemm.scaled_mm: torch._scaled_mm's FP8 product over
// hgemm_gemm_fp8 (include/hgemm.h):
//
//   scaled_mm(a, b, scale_a, scale_b, *, out_dtype=None) -> Tensor
//     a (m, k) row-major and b (k, n) column-major (b.t() row-major), both
//     float8_e4m3fn, or one of them float8_e5m2 (tensorwise only); the scales fp32, their
//     shapes and strides choosing the mode exactly as torch._scaled_mm's do:
//       tensorwise: one value each;
//       rowwise:    a's (m, 1) and b's (1, n);
//       blockwise:  a's (m, ceil(k/128)) of strides (1, m) (1 x 128 blocks)
//                   and b's (ceil(k/128), ceil(n/128)) of strides
//                   (1, ceil(k/128)) (128 x 128 blocks).
//   out_dtype: bfloat16 (the default), float16 or float32.
//
// torch's current stream; nothing is copied: a layout torch._scaled_mm
// refuses is refused here too, with its reason.
#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include <cuda_runtime_api.h>

#include "hgemm.h"
#include "refuse.h"

namespace {

using at::Tensor;

hgemm_dtype fp8_dtype(const Tensor &t, const char *name)
{
    if (t.scalar_type() == at::kFloat8_e4m3fn) return HGEMM_DTYPE_E4M3;
    if (t.scalar_type() == at::kFloat8_e5m2) return HGEMM_DTYPE_E5M2;
    TORCH_CHECK_TYPE(false, "hgemm::scaled_mm: ", name, ": expected float8_e4m3fn or float8_e5m2, got ",
                     t.scalar_type());
}

at::ScalarType out_type(std::optional<at::ScalarType> out_dtype)
{
    const at::ScalarType t = out_dtype ? *out_dtype : at::kBFloat16;
    TORCH_CHECK_TYPE(t == at::kBFloat16 || t == at::kHalf || t == at::kFloat, "hgemm::scaled_mm: out_dtype ", t,
                     ": bfloat16, float16 or float32 are served");
    return t;
}

// The scale mode the scales' shapes and strides ask for, as torch._scaled_mm reads them.
hgemm_scale_mode scale_mode(const Tensor &a, const Tensor &b, const Tensor &sa, const Tensor &sb)
{
    TORCH_CHECK_TYPE(sa.scalar_type() == at::kFloat && sb.scalar_type() == at::kFloat,
                     "hgemm::scaled_mm: scales must be float32, got ", sa.scalar_type(), " and ", sb.scalar_type());
    const int64_t m = a.size(0), k = a.size(1), n = b.size(1), kb = (k + 127) / 128, nb = (n + 127) / 128;
    if (sa.numel() == 1 && sb.numel() == 1) return HGEMM_SCALE_TENSOR;
    if (sa.dim() == 2 && sb.dim() == 2 && sa.size(0) == m && sa.size(1) == 1 && sb.size(0) == 1 && sb.size(1) == n &&
        (m == 1 || sa.stride(0) == 1) && (n == 1 || sb.stride(1) == 1))
        return HGEMM_SCALE_ROW;
    const bool a_block = sa.dim() == 2 && sa.size(0) == m && sa.size(1) == kb && (m == 1 || sa.stride(0) == 1) &&
                         (kb == 1 || sa.stride(1) == m);
    const bool b_block = sb.dim() == 2 && sb.size(0) == kb && sb.size(1) == nb && (kb == 1 || sb.stride(0) == 1) &&
                         (nb == 1 || sb.stride(1) == kb);
    if (a_block && b_block) return HGEMM_SCALE_BLOCK;
    TORCH_CHECK_VALUE(false, "hgemm::scaled_mm: scales of shapes ", sa.sizes(), " (strides ", sa.strides(), ") and ",
                      sb.sizes(), " (strides ", sb.strides(), ") for a ", a.sizes(), " and b ", b.sizes(),
                      ": expected one value each, (m, 1) and (1, n), or 1 x 128 blocks (m, ceil(k/128)) of strides "
                      "(1, m) and 128 x 128 blocks (ceil(k/128), ceil(n/128)) of strides (1, ceil(k/128))");
}

Tensor scaled_meta(const Tensor &a, const Tensor &b, const Tensor &sa, const Tensor &sb,
                   std::optional<at::ScalarType> out_dtype)
{
    (void)sa;
    (void)sb;
    TORCH_CHECK_VALUE(a.dim() == 2 && b.dim() == 2 && a.sym_size(1) == b.sym_size(0),
                      "hgemm::scaled_mm: expected a (m, k) and b (k, n), got shapes ", a.sym_sizes(), " and ",
                      b.sym_sizes());
    fp8_dtype(a, "a");
    fp8_dtype(b, "b");
    const c10::SymInt m = a.sym_size(0), n = b.sym_size(1);
    const c10::SymInt ld = (n + 7) / 8 * 8;
    Tensor wide = at::empty_symint({m, ld == 0 ? c10::SymInt(8) : ld}, a.options().dtype(out_type(out_dtype)));
    return wide.narrow_symint(1, 0, n);
}

Tensor scaled_cuda(const Tensor &a, const Tensor &b, const Tensor &sa, const Tensor &sb,
                   std::optional<at::ScalarType> out_dtype)
{
    Tensor out = scaled_meta(a, b, sa, sb, out_dtype);
    const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
    if (m == 0 || n == 0) return out;
    for (const Tensor *t : {&a, &b, &sa, &sb})
        TORCH_CHECK_VALUE(t->is_cuda() && t->get_device() == out.get_device(), "hgemm::scaled_mm: a, b and the "
                          "scales must be on one CUDA device, got ", a.device(), ", ", b.device(), ", ", sa.device(),
                          " and ", sb.device());
    TORCH_CHECK_VALUE((k <= 1 || a.stride(1) == 1) && (k <= 1 || b.stride(0) == 1),
                      "hgemm::scaled_mm: a must be row-major and b column-major (as torch._scaled_mm takes them), "
                      "got strides ", a.strides(), " and ", b.strides());
    // a single row (or column), or no k, has no row stride that matters: the packed one
    const int64_t packed = std::max<int64_t>(16, (k + 15) / 16 * 16);
    const int64_t lda = m == 1 || k == 0 ? packed : a.stride(0);
    const int64_t ldb = n == 1 || k == 0 ? packed : b.stride(1);
    const hgemm_scale_mode mode = scale_mode(a, b, sa, sb);
    const at::ScalarType ot = out.scalar_type();
    const hgemm_dtype c_dtype = ot == at::kFloat ? HGEMM_DTYPE_F32 : ot == at::kHalf ? HGEMM_DTYPE_F16
                                                                                      : HGEMM_DTYPE_BF16;
    c10::cuda::CUDAGuard device(out.device());
    cudaStream_t stream = c10::cuda::getCurrentCUDAStream(out.get_device()).stream();
    const hgemm_status s = hgemm_gemm_fp8(HGEMM_KERNEL_AUTO, fp8_dtype(a, "a"), fp8_dtype(b, "b"), c_dtype, m, n, k,
                                          1.0f, a.data_ptr(), lda, b.data_ptr(), ldb, mode,
                                          sa.data_ptr<float>(), sb.data_ptr<float>(), 0.0f, out.data_ptr(),
                                          out.stride(0), nullptr, stream);
    TORCH_CHECK(s == HGEMM_SUCCESS, "hgemm::scaled_mm: hgemm_gemm_fp8 failed: ", hgemm_status_string(s), " (status ",
                (int)s, "; k, lda and ldb must be multiples of 16, the operands 16-byte aligned)");
    return out;
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(hgemm, m)
{
    m.def("scaled_mm(Tensor a, Tensor b, Tensor scale_a, Tensor scale_b, *, ScalarType? out_dtype=None) -> Tensor");
}

TORCH_LIBRARY_IMPL(hgemm, CUDA, m)
{
    m.impl("scaled_mm", &scaled_cuda);
}

TORCH_LIBRARY_IMPL(hgemm, Meta, m)
{
    m.impl("scaled_mm", &scaled_meta);
}

TORCH_LIBRARY_IMPL(hgemm, CPU, m)
{
    m.impl("scaled_mm", torch::CppFunction::makeFromBoxedFunction<&hgemm_refuse_cpu>());
}
