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
//
//   grouped_scaled_mm(a, b, scale_a, scale_b, offs, *, out_dtype=None) -> Tensor
//     hgemm_grouped_fp8: a (total_rows, k) row-major and b (groups, k, n), each
//     b[g] column-major (an expert's (n, k) weight transposed), float8_e4m3fn;
//     offs (groups,) int32 cumulative ends on a's device (rows past offs[-1]
//     are left as allocated); the scales fp32:
//       tensorwise: a's one value, b's one per group (groups,);
//       rowwise:    a's (total_rows,) or (total_rows, 1), b's (groups, n) contiguous
//                   (torch._scaled_grouped_mm's);
//       blockwise:  a's (total_rows, ceil(k/128)) of strides (1, total_rows), b's
//                   (groups, ceil(k/128), ceil(n/128)), each group's as scaled_mm's.
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

// The grouped call's scale mode, from the scales' shapes and strides.
hgemm_scale_mode grouped_scale_mode(const Tensor &a, const Tensor &b, const Tensor &sa, const Tensor &sb)
{
    TORCH_CHECK_TYPE(sa.scalar_type() == at::kFloat && sb.scalar_type() == at::kFloat,
                     "hgemm::grouped_scaled_mm: scales must be float32, got ", sa.scalar_type(), " and ",
                     sb.scalar_type());
    const int64_t rows = a.size(0), k = a.size(1), groups = b.size(0), n = b.size(2);
    const int64_t kb = (k + 127) / 128, nb = (n + 127) / 128;
    if (sa.numel() == 1 && sb.dim() == 1 && sb.size(0) == groups && (groups == 1 || sb.stride(0) == 1))
        return HGEMM_SCALE_TENSOR;
    const bool a_row = (sa.dim() == 1 || (sa.dim() == 2 && sa.size(1) == 1)) && sa.size(0) == rows &&
                       (rows == 1 || sa.stride(0) == 1);
    if (a_row && sb.dim() == 2 && sb.size(0) == groups && sb.size(1) == n && sb.is_contiguous())
        return HGEMM_SCALE_ROW;
    const bool a_block = sa.dim() == 2 && sa.size(0) == rows && sa.size(1) == kb && (rows == 1 || sa.stride(0) == 1) &&
                         (kb == 1 || sa.stride(1) == rows);
    const bool b_block = sb.dim() == 3 && sb.size(0) == groups && sb.size(1) == kb && sb.size(2) == nb &&
                         (groups == 1 || sb.stride(0) == kb * nb) && (kb == 1 || sb.stride(1) == 1) &&
                         (nb == 1 || sb.stride(2) == kb);
    if (a_block && b_block) return HGEMM_SCALE_BLOCK;
    TORCH_CHECK_VALUE(false, "hgemm::grouped_scaled_mm: scales of shapes ", sa.sizes(), " (strides ", sa.strides(),
                      ") and ", sb.sizes(), " (strides ", sb.strides(), ") for a ", a.sizes(), " and b ", b.sizes(),
                      ": expected one value and (groups,), (total_rows,) and (groups, n), or 1 x 128 blocks "
                      "(total_rows, ceil(k/128)) of strides (1, total_rows) and 128 x 128 blocks "
                      "(groups, ceil(k/128), ceil(n/128)) of strides (ceil(k/128) ceil(n/128), 1, ceil(k/128))");
}

Tensor grouped_scaled_meta(const Tensor &a, const Tensor &b, const Tensor &sa, const Tensor &sb, const Tensor &offs,
                           std::optional<at::ScalarType> out_dtype)
{
    (void)sa;
    (void)sb;
    TORCH_CHECK_VALUE(a.dim() == 2 && b.dim() == 3 && a.sym_size(1) == b.sym_size(1),
                      "hgemm::grouped_scaled_mm: expected a (total_rows, k) and b (groups, k, n), got shapes ",
                      a.sym_sizes(), " and ", b.sym_sizes());
    TORCH_CHECK_VALUE(offs.dim() == 1 && offs.sym_size(0) == b.sym_size(0), "hgemm::grouped_scaled_mm: offs of shape ",
                      offs.sym_sizes(), " for ", b.sym_size(0), " groups");
    TORCH_CHECK_TYPE(offs.scalar_type() == at::kInt, "hgemm::grouped_scaled_mm: offs: expected int32, got ",
                     offs.scalar_type());
    TORCH_CHECK_TYPE(a.scalar_type() == at::kFloat8_e4m3fn && b.scalar_type() == at::kFloat8_e4m3fn,
                     "hgemm::grouped_scaled_mm: expected float8_e4m3fn a and b, got ", a.scalar_type(), " and ",
                     b.scalar_type());
    const c10::SymInt rows = a.sym_size(0), n = b.sym_size(2);
    const c10::SymInt ld = (n + 7) / 8 * 8;
    Tensor wide = at::empty_symint({rows, ld == 0 ? c10::SymInt(8) : ld}, a.options().dtype(out_type(out_dtype)));
    return wide.narrow_symint(1, 0, n);
}

Tensor grouped_scaled_cuda(const Tensor &a, const Tensor &b_in, const Tensor &sa, const Tensor &sb,
                           const Tensor &offs, std::optional<at::ScalarType> out_dtype)
{
    Tensor out = grouped_scaled_meta(a, b_in, sa, sb, offs, out_dtype);
    const int64_t rows = a.size(0), k = a.size(1), groups = b_in.size(0), n = b_in.size(2);
    if (rows == 0 || n == 0 || groups == 0) return out;
    for (const Tensor *t : {&a, &b_in, &sa, &sb, &offs})
        TORCH_CHECK_VALUE(t->is_cuda() && t->get_device() == out.get_device(), "hgemm::grouped_scaled_mm: a, b, "
                          "the scales and offs must be on one CUDA device");
    TORCH_CHECK_VALUE((k <= 1 || a.stride(1) == 1) && (k <= 1 || b_in.stride(1) == 1),
                      "hgemm::grouped_scaled_mm: a must be row-major and each b[g] column-major (an (n, k) "
                      "weight transposed), got strides ", a.strides(), " and ", b_in.strides());
    // one weight expanded over the groups (stride 0) but scales per group: each group its own copy, since
    // hgemm_grouped_fp8 reads one expert's scales where stride_b is 0
    const Tensor b = groups > 1 && b_in.stride(0) == 0 ? b_in.transpose(1, 2).contiguous().transpose(1, 2) : b_in;
    const int64_t packed = std::max<int64_t>(16, (k + 15) / 16 * 16);
    const int64_t lda = rows == 1 || k == 0 ? packed : a.stride(0);
    const int64_t ldb = n == 1 || k == 0 ? packed : b.stride(2);
    const int64_t stride_b = groups == 1 ? 0 : b.stride(0);
    const hgemm_scale_mode mode = grouped_scale_mode(a, b, sa, sb);
    const at::ScalarType ot = out.scalar_type();
    const hgemm_dtype c_dtype = ot == at::kFloat ? HGEMM_DTYPE_F32 : ot == at::kHalf ? HGEMM_DTYPE_F16
                                                                                      : HGEMM_DTYPE_BF16;
    Tensor o = offs.is_contiguous() ? offs : offs.contiguous();
    c10::cuda::CUDAGuard device(out.device());
    cudaStream_t stream = c10::cuda::getCurrentCUDAStream(out.get_device()).stream();
    const hgemm_status s = hgemm_grouped_fp8(HGEMM_KERNEL_AUTO, HGEMM_DTYPE_E4M3, HGEMM_DTYPE_E4M3, c_dtype, rows, n,
                                             k, groups, o.data_ptr<int32_t>(), 1.0f, a.data_ptr(), lda, b.data_ptr(),
                                             ldb, stride_b, mode, sa.data_ptr<float>(), sb.data_ptr<float>(), 0.0f,
                                             out.data_ptr(), out.stride(0), nullptr, stream);
    TORCH_CHECK(s == HGEMM_SUCCESS, "hgemm::grouped_scaled_mm: hgemm_grouped_fp8 failed: ", hgemm_status_string(s),
                " (status ", (int)s, "; k, the rows and the groups must lie multiples of 16 bytes apart, 16-byte "
                "aligned)");
    return out;
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(hgemm, m)
{
    m.def("scaled_mm(Tensor a, Tensor b, Tensor scale_a, Tensor scale_b, *, ScalarType? out_dtype=None) -> Tensor");
    m.def("grouped_scaled_mm(Tensor a, Tensor b, Tensor scale_a, Tensor scale_b, Tensor offs, *, "
          "ScalarType? out_dtype=None) -> Tensor");
}

TORCH_LIBRARY_IMPL(hgemm, CUDA, m)
{
    m.impl("scaled_mm", &scaled_cuda);
    m.impl("grouped_scaled_mm", &grouped_scaled_cuda);
}

TORCH_LIBRARY_IMPL(hgemm, Meta, m)
{
    m.impl("scaled_mm", &scaled_meta);
    m.impl("grouped_scaled_mm", &grouped_scaled_meta);
}

TORCH_LIBRARY_IMPL(hgemm, CPU, m)
{
    m.impl("scaled_mm", torch::CppFunction::makeFromBoxedFunction<&hgemm_refuse_cpu>());
    m.impl("grouped_scaled_mm", torch::CppFunction::makeFromBoxedFunction<&hgemm_refuse_cpu>());
}
