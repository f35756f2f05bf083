// torch.ops.hgemm.grouped_mm: torch.nn.functional.grouped_mm's 2D x 3D form
// over hgemm_grouped (include/hgemm.h), one launch for every group:
//
//   grouped_mm(a, b, offs, *, out_dtype=None)
//     a (total_rows, k), b (groups, k, n), offs (groups,) int32 cumulative ends
//     on a's device: rows offs[g-1] .. offs[g] of the result are a's same rows
//     @ b[g]; rows past offs[-1] are left as allocated (unspecified, as torch's).
//
// fp16 or bf16 (out_dtype, if given, must be the same), fp32 accumulation,
// torch's current stream. b is read as stored: b[g] with k contiguous (an
// expert weight stored (n, k), passed transposed, as MoE layers do) or n
// contiguous. No autograd formula here: hgemm.functional.grouped_mm has one.
//
//   grouped_mm_k(a, b, offs) -> Tensor
//     F.grouped_mm's 2D x 2D form, grouped along k (hgemm_grouped_k): a
//     (total, m) and b (total, n), offs (groups,) int32 cumulative ends on
//     a's device; out (groups, m, n), out[g] = a[rows of g]^T @ b[rows of g]
//     (zeros for an empty group): the weight gradient of every expert at once.
#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include <cuda_runtime_api.h>

#include "hgemm.h"
#include "refuse.h"
#include "rows.h"

namespace {

using at::Tensor;

hgemm_dtype grouped_dtype(const Tensor &t, const char *name)
{
    if (t.scalar_type() == at::kHalf) return HGEMM_DTYPE_F16;
    if (t.scalar_type() == at::kBFloat16) return HGEMM_DTYPE_BF16;
    TORCH_CHECK_TYPE(false, "hgemm::grouped_mm: ", name, ": expected float16 or bfloat16, got ", t.scalar_type());
}

// What can be checked without running; the result (rows padded to 8 elements).
Tensor grouped_meta(const Tensor &a, const Tensor &b, const Tensor &offs, std::optional<at::ScalarType> out_dtype)
{
    TORCH_CHECK_VALUE(a.dim() == 2 && b.dim() == 3, "hgemm::grouped_mm: expected a (total_rows, k) and b (groups, k, n), "
                      "got shapes ", a.sym_sizes(), " and ", b.sym_sizes(), " (the 2D x 3D form)");
    TORCH_CHECK_VALUE(a.sym_size(1) == b.sym_size(1), "hgemm::grouped_mm: a has k = ", a.sym_size(1), " and b ",
                      b.sym_size(1), " (shapes ", a.sym_sizes(), " and ", b.sym_sizes(), ")");
    TORCH_CHECK_VALUE(offs.dim() == 1 && offs.sym_size(0) == b.sym_size(0), "hgemm::grouped_mm: offs of shape ",
                      offs.sym_sizes(), " for ", b.sym_size(0), " groups");
    TORCH_CHECK_TYPE(offs.scalar_type() == at::kInt, "hgemm::grouped_mm: offs: expected int32, got ",
                     offs.scalar_type());
    grouped_dtype(a, "a");
    grouped_dtype(b, "b");
    TORCH_CHECK_TYPE(a.scalar_type() == b.scalar_type(), "hgemm::grouped_mm: a is ", a.scalar_type(), " and b ",
                     b.scalar_type(), ": both must be the same type");
    TORCH_CHECK_TYPE(!out_dtype || *out_dtype == a.scalar_type(), "hgemm::grouped_mm: out_dtype ", *out_dtype,
                     ": only the inputs' type (", a.scalar_type(), ") is served");
    const c10::SymInt rows = a.sym_size(0), n = b.sym_size(2);
    const c10::SymInt ld = (n + 7) / 8 * 8;
    Tensor wide = at::empty_symint({rows, ld == 0 ? c10::SymInt(8) : ld}, a.options());
    return wide.narrow_symint(1, 0, n);
}

Tensor grouped_cuda(const Tensor &a_in, const Tensor &b, const Tensor &offs, std::optional<at::ScalarType> out_dtype)
{
    Tensor out = grouped_meta(a_in, b, offs, out_dtype);
    const int64_t rows = a_in.size(0), k = a_in.size(1), groups = b.size(0), n = b.size(2);
    if (rows == 0 || n == 0 || groups == 0) return out;
    for (const Tensor *t : {&a_in, &b, &offs})
        TORCH_CHECK_VALUE(t->is_cuda() && t->get_device() == out.get_device(), "hgemm::grouped_mm: a, b and offs "
                          "must be on one CUDA device, got ", a_in.device(), ", ", b.device(), " and ", offs.device());
    // a: rows contiguous at a leading dimension hgemm takes, else a copy
    const Tensor a = hgemm_rows_padded(a_in);
    // b[g]: k contiguous (stored n x k: op T) or n contiguous (stored k x n: op N)
    hgemm_op op_b;
    int64_t ldb;
    Tensor bb = b;
    if (bb.stride(1) == 1 && bb.stride(2) >= k && bb.stride(2) % 8 == 0) {
        op_b = HGEMM_OP_T;
        ldb = bb.stride(2);
    } else if (bb.stride(2) == 1 && bb.stride(1) >= n && bb.stride(1) % 8 == 0) {
        op_b = HGEMM_OP_N;
        ldb = bb.stride(1);
    } else {
        bb = b.contiguous();
        if (n % 8) {
            Tensor padded = at::empty({groups, k, (n + 7) / 8 * 8}, b.options());
            padded.narrow(2, 0, n).copy_(b);
            bb = padded.narrow(2, 0, n);
        }
        op_b = HGEMM_OP_N;
        ldb = bb.stride(1);
    }
    TORCH_CHECK_VALUE(bb.stride(0) % 8 == 0 && reinterpret_cast<uintptr_t>(bb.data_ptr()) % 16 == 0,
                      "hgemm::grouped_mm: b (strides ", b.strides(), "): its groups must lie a multiple of 8 "
                      "elements apart, 16-byte aligned; pass a copy (e.g. .contiguous())");
    Tensor o = offs.is_contiguous() ? offs : offs.contiguous();
    c10::cuda::CUDAGuard device(out.device());
    cudaStream_t stream = c10::cuda::getCurrentCUDAStream(out.get_device()).stream();
    const hgemm_status s = hgemm_grouped(HGEMM_KERNEL_AUTO, grouped_dtype(a, "a"), op_b, rows, n, k, groups,
                                         o.data_ptr<int32_t>(), 1.0f, a.data_ptr(), a.stride(0), bb.data_ptr(), ldb,
                                         bb.stride(0), 0.0f, out.data_ptr(), out.stride(0), nullptr, stream);
    TORCH_CHECK(s == HGEMM_SUCCESS, "hgemm::grouped_mm: hgemm_grouped failed: ", hgemm_status_string(s), " (status ",
                (int)s, ")");
    return out;
}

// grouped_mm_k's result: (groups, m, n), each group's rows padded to 8 elements.
Tensor grouped_k_meta(const Tensor &a, const Tensor &b, const Tensor &offs)
{
    TORCH_CHECK_VALUE(a.dim() == 2 && b.dim() == 2 && a.sym_size(0) == b.sym_size(0),
                      "hgemm::grouped_mm_k: expected a (total, m) and b (total, n) with the same rows, got shapes ",
                      a.sym_sizes(), " and ", b.sym_sizes());
    TORCH_CHECK_VALUE(offs.dim() == 1, "hgemm::grouped_mm_k: offs of shape ", offs.sym_sizes(), ": expected (groups,)");
    TORCH_CHECK_TYPE(offs.scalar_type() == at::kInt, "hgemm::grouped_mm_k: offs: expected int32, got ",
                     offs.scalar_type());
    grouped_dtype(a, "a");
    TORCH_CHECK_TYPE(a.scalar_type() == b.scalar_type(), "hgemm::grouped_mm_k: a is ", a.scalar_type(), " and b ",
                     b.scalar_type(), ": both must be the same type");
    const c10::SymInt groups = offs.sym_size(0), m = a.sym_size(1), n = b.sym_size(1);
    const c10::SymInt ld = (n + 7) / 8 * 8;
    Tensor wide = at::empty_symint({groups, m, ld == 0 ? c10::SymInt(8) : ld}, a.options());
    return wide.narrow_symint(2, 0, n);
}

Tensor grouped_k_cuda(const Tensor &a_in, const Tensor &b_in, const Tensor &offs)
{
    Tensor out = grouped_k_meta(a_in, b_in, offs);
    const int64_t total = a_in.size(0), m = a_in.size(1), n = b_in.size(1), groups = offs.size(0);
    if (m == 0 || n == 0 || groups == 0) return out;
    for (const Tensor *t : {&a_in, &b_in, &offs})
        TORCH_CHECK_VALUE(t->is_cuda() && t->get_device() == out.get_device(), "hgemm::grouped_mm_k: a, b and offs "
                          "must be on one CUDA device, got ", a_in.device(), ", ", b_in.device(), " and ", offs.device());
    const Tensor a = hgemm_rows_padded(a_in), b = hgemm_rows_padded(b_in);
    Tensor o = offs.is_contiguous() ? offs : offs.contiguous();
    c10::cuda::CUDAGuard device(out.device());
    cudaStream_t stream = c10::cuda::getCurrentCUDAStream(out.get_device()).stream();
    const hgemm_status s = hgemm_grouped_k(HGEMM_KERNEL_AUTO, grouped_dtype(a, "a"), m, n, total, groups,
                                           o.data_ptr<int32_t>(), 1.0f, a.data_ptr(), a.stride(0), b.data_ptr(),
                                           b.stride(0), 0.0f, out.data_ptr(), out.stride(1), out.stride(0), nullptr,
                                           stream);
    TORCH_CHECK(s == HGEMM_SUCCESS, "hgemm::grouped_mm_k: hgemm_grouped_k failed: ", hgemm_status_string(s),
                " (status ", (int)s, ")");
    return out;
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(hgemm, m)
{
    m.def("grouped_mm(Tensor a, Tensor b, Tensor offs, *, ScalarType? out_dtype=None) -> Tensor");
    m.def("grouped_mm_k(Tensor a, Tensor b, Tensor offs) -> Tensor");
}

TORCH_LIBRARY_IMPL(hgemm, CUDA, m)
{
    m.impl("grouped_mm", &grouped_cuda);
    m.impl("grouped_mm_k", &grouped_k_cuda);
}

TORCH_LIBRARY_IMPL(hgemm, Meta, m)
{
    m.impl("grouped_mm", &grouped_meta);
    m.impl("grouped_mm_k", &grouped_k_meta);
}

TORCH_LIBRARY_IMPL(hgemm, CPU, m)
{
    m.impl("grouped_mm", torch::CppFunction::makeFromBoxedFunction<&hgemm_refuse_cpu>());
    m.impl("grouped_mm_k", torch::CppFunction::makeFromBoxedFunction<&hgemm_refuse_cpu>());
}
