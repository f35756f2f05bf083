"""torch.ops.hgemm.nt: hgemm as a PyTorch custom operator.

    c = torch.ops.hgemm.nt(a, b)                  # a @ b.T, a new fp16 tensor
    c = torch.ops.hgemm.nt(a, b, 0.5, "v6")       # alpha, kernel

Schema: hgemm::nt(Tensor a, Tensor b, float alpha=1.0, str kernel="auto") -> Tensor.
It runs on torch's current stream of a's device, and has a fake (meta)
implementation, so torch.compile can trace through it. There is no autograd
formula: it is an inference op.

Registered only when torch is importable and new enough to have
torch.library.custom_op (2.4); otherwise this module does nothing, and
importing hgemm never fails because of torch.
"""
import warnings

try:
    import torch
except ImportError:
    torch = None


def _leading_dimension(t):
    """hgemm's leading dimension of a 2-D tensor with contiguous rows, or None
    when its rows are not contiguous. A matrix of at most one row, or of empty
    rows, never steps to a second row: the smallest valid one (as nt() does)."""
    rows, cols = t.shape
    if rows <= 1 or cols == 0:
        return -(-max(cols, 1) // 8) * 8
    if cols > 1 and t.stride(1) != 1:
        return None
    return t.stride(0)


def _register():
    from . import SUCCESS, _kernel_table, _load, _status_error, nt

    fp16 = torch.float16

    @torch.library.custom_op("hgemm::nt", mutates_args=())
    def hgemm_nt(a: torch.Tensor, b: torch.Tensor, alpha: float = 1.0,
                 kernel: str = "auto") -> torch.Tensor:
        out = a.new_empty((a.shape[0], b.shape[0]))
        # The common case straight to the library: CUDA fp16 matrices with
        # contiguous rows on the current device. torch already knows what
        # nt() would ask __cuda_array_interface__ and the runtime for, which
        # is most of a decode step's host time (m = 1: the GPU work of one
        # call is a few microseconds). The library checks the rest.
        if (a.is_cuda and b.is_cuda and a.dtype == fp16 and b.dtype == fp16 and a.dim() == 2
                and b.dim() == 2 and a.shape[1] == b.shape[1] and a.device == b.device
                and a.device.index == torch.cuda.current_device() and kernel in _kernel_table()):
            lda, ldb = _leading_dimension(a), _leading_dimension(b)
            if lda is not None and ldb is not None:
                m, n = out.shape
                if m == 0 or n == 0:
                    return out
                status = _load().hgemm_nt(
                    _kernel_table()[kernel], m, n, a.shape[1], float(alpha), a.data_ptr(), lda,
                    b.data_ptr(), ldb, 0.0, out.data_ptr(), _leading_dimension(out),
                    torch.cuda.current_stream(a.device).cuda_stream)
                if status != SUCCESS:
                    raise _status_error(status)
                return out
        # Everything else through nt(), which says what is wrong with it.
        # (A tensor off the GPU gets no stream.)
        stream = torch.cuda.current_stream(a.device) if a.is_cuda else None
        # detach(): __cuda_array_interface__ refuses tensors that require grad.
        nt(a.detach(), b.detach(), out=out, alpha=alpha, kernel=kernel, stream=stream)
        return out

    # What torch.compile (and other fake-tensor tracing) sees: shape, dtype and
    # device of the result, without running anything.
    @hgemm_nt.register_fake
    def _(a, b, alpha=1.0, kernel="auto"):
        return a.new_empty((a.shape[0], b.shape[0]))

    return hgemm_nt


op = None
if torch is not None and hasattr(torch, "library") and hasattr(torch.library, "custom_op"):
    try:
        op = _register()
    except Exception as e:  # e.g. registered already by another copy of hgemm
        warnings.warn("hgemm: torch.ops.hgemm.nt not registered: %s" % e, RuntimeWarning)
