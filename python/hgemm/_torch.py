"""torch.ops.hgemm: hgemm as PyTorch custom operators.

    c = torch.ops.hgemm.nt(a, b)                  # a @ b.T, a new fp16 tensor
    y = hgemm.linear(x, w)                        # x @ w.T, eager: no dispatcher on the way
    ws = hgemm.workspace()                        # zeroed, for one stream's calls
    y = hgemm.linear(x, w, workspace=ws)          # ... splitting work over all SMs
    c = torch.ops.hgemm.nt(a, b, 0.5, "v6")       # alpha, kernel
    c = torch.ops.hgemm.matmul(x, w.t())          # x @ w.t(): torch.matmul's shapes, fp16 or bf16
    torch.ops.hgemm.matmul_out(x, w.t(), c, 1.0, 1.0, "auto")   # c = x @ w.t() + c

Schemas:
    hgemm::nt(Tensor a, Tensor b, float alpha=1.0, str kernel_name="auto") -> Tensor
    hgemm::matmul(Tensor a, Tensor b, float alpha=1.0, str kernel_name="auto") -> Tensor
    hgemm::matmul_out(Tensor a, Tensor b, Tensor(a!) out, float alpha=1.0,
                      float beta=0.0, str kernel_name="auto") -> ()

The kernel's argument is kernel_name, not kernel: Inductor calls an op it
does not lower through FallbackKernel.create(kernel, *args, **kwargs), with
the op's arguments by name, and an argument named `kernel` collides there.

matmul is hgemm.matmul (batch dimensions broadcast; transposed views read in
place); its result is a new tensor whose rows are padded to a multiple of 8
elements when n is not one (a strided tensor, as hgemm.matmul allocates it).
matmul_out writes into out (alpha * a @ b + beta * out). They run on torch's
current stream of the tensors' device, and have fake (meta)
implementations, so torch.compile traces through them (fullgraph too).
There is no autograd formula: they are inference ops.

Registered only when torch is importable and new enough to have
torch.library.custom_op (2.4); otherwise this module does nothing, and
importing hgemm never fails because of torch.
"""
import warnings

# This module is imported last by hgemm/__init__.py, so these names exist by
# now; bound once here, not on every call of the fast path below.
from . import SUCCESS, WORKSPACE_BYTES, _kernel_table, _load, _status_error, matmul, nt
from ._layout import matmul_shapes, padded_strides

try:
    import torch
except ImportError:
    torch = None


def _one_row_ld(cols):
    """The leading dimension of a matrix that never steps to a second row (at
    most one row, or empty rows): the smallest valid one, as nt() uses."""
    return -(-max(cols, 1) // 8) * 8


def _leading_dimension(t):
    """hgemm's leading dimension of a 2-D tensor with contiguous rows, or None
    when its rows are not contiguous (_one_row_ld where there is no second
    row)."""
    rows, cols = t.shape
    if rows <= 1 or cols == 0:
        return _one_row_ld(cols)
    row_step, col_step = t.stride()
    if cols > 1 and col_step != 1:
        return None
    return row_step


def _matmul_result(a, b):
    """The tensor hgemm::matmul returns, empty: the broadcast batch shape and
    (m, n), a's dtype and device, the strides hgemm.matmul allocates with.
    The real op and the fake one both build it here, so that torch.compile's
    idea of the result (strides included) is the result."""
    batch, m, n, _ = matmul_shapes(a.shape, b.shape)
    shape = batch + (m, n)
    return torch.empty_strided(shape, padded_strides(shape), dtype=a.dtype, device=a.device)


def _check_types(a, b, out=None):
    """What the fake ops can tell without running: the element types."""
    types = (torch.float16, torch.bfloat16)
    for name, t in (("a", a), ("b", b), ("out", out)):
        if t is not None and t.dtype not in types:
            raise TypeError("%s: expected float16 or bfloat16, got %s" % (name, t.dtype))
    for name, t in (("b", b), ("out", out)):
        if t is not None and t.dtype != a.dtype:
            raise TypeError("a is %s and %s %s: all must be the same type" % (a.dtype, name, t.dtype))


def _nt_fast(a, b, alpha, kernel_name, workspace=None):
    """a @ b.T straight to hgemm_nt (hgemm_nt_ws with a workspace), or None
    where the common case does not apply: CUDA fp16 matrices with contiguous
    rows on the current device and a known kernel name, and a workspace that
    is a contiguous tensor on that device or None. torch already knows what nt() would ask
    __cuda_array_interface__ and the runtime for, which is most of a decode
    step's host time (m = 1: the GPU work of one call is a few
    microseconds). The library checks the rest.

    Every step here is on each call's path, so each is the cheapest torch
    offers: get_device() is an int where .device builds a torch.device, the
    raw current-device and current-stream queries skip torch.cuda's Python
    wrappers, stride() is one call for both strides, and the library's
    function is bound once (_fast_calls)."""
    fp16 = torch.float16
    calls = _fast
    if calls is None:
        calls = _fast_calls()
    kernel_id = calls[0].get(kernel_name)
    if (kernel_id is None or a.dtype != fp16 or b.dtype != fp16 or not a.is_cuda or not b.is_cuda
            or a.dim() != 2 or b.dim() != 2):
        return None
    index = a.get_device()  # -1 for a tensor in host memory
    if index < 0 or b.get_device() != index or index != calls[1]():
        return None
    m, k = a.shape
    n, kb = b.shape
    if k != kb:
        return None
    lda, ldb = _leading_dimension(a), _leading_dimension(b)
    if lda is None or ldb is None:
        return None
    if workspace is not None and (not isinstance(workspace, torch.Tensor) or workspace.get_device() != index
                                  or not workspace.is_contiguous()):
        return None
    if m > 1 and n % 8:  # rows of n elements are no leading dimension hgemm takes
        return None
    out = torch.empty((m, n), dtype=fp16, device=index)
    if m == 0 or n == 0:
        return out
    ldc = n if m > 1 else _one_row_ld(n)  # _leading_dimension(out), without asking out
    if workspace is None:
        status = calls[3](kernel_id, m, n, k, float(alpha), a.data_ptr(), lda, b.data_ptr(), ldb, 0.0,
                          out.data_ptr(), ldc, calls[2](index))
    else:
        status = calls[4](kernel_id, m, n, k, float(alpha), a.data_ptr(), lda, b.data_ptr(), ldb, 0.0,
                          out.data_ptr(), ldc, workspace.data_ptr(),
                          workspace.numel() * workspace.element_size(), calls[2](index))
    if status != SUCCESS:
        raise _status_error(status)
    return out


# (kernel ids, current device, current raw stream, hgemm_nt, hgemm_nt_ws), bound on the first call of
# _nt_fast: loading the library then, not at import, keeps `import hgemm` free of it.
_fast = None


def _fast_calls():
    global _fast
    current_device = getattr(torch._C, "_cuda_getDevice", None) or torch.cuda.current_device
    lib = _load()
    _fast = (_kernel_table(), current_device, _current_stream_function(), lib.hgemm_nt, lib.hgemm_nt_ws)
    return _fast


def _current_stream_function():
    """A function from a device index to torch's current stream there, as the
    raw cudaStream_t. torch._C._cuda_getCurrentRawStream is what torch's own
    generated code calls for it; torch.cuda.current_stream builds a Python
    Stream first."""
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw
    return lambda index: torch.cuda.current_stream(index).cuda_stream


def linear(x, weight, kernel="auto", workspace=None):
    """y = x @ weight.T (nn.Linear's product, no bias): x of shape (..., k),
    weight (n, k); y (..., n) in x's type (fp16 or bf16).

    Where the native operators are built (hgemm.native_ops()), this is
    torch.ops.hgemm.linear, with autograd and the operators' own workspace
    per stream. Otherwise, or with an explicit workspace (a zero-filled CUDA
    tensor of WORKSPACE_BYTES, hgemm.workspace(); one per stream), it runs
    over ctypes: no autograd (the result carries no gradient), not traceable
    by torch.compile. Where n is not a multiple of 8 (and x has more than one
    row), y is a view of rows padded to one."""
    if torch is None:
        raise RuntimeError("hgemm.linear takes torch tensors, and torch is not installed")
    if native_path is not None and workspace is None and isinstance(kernel, str):
        return _native_linear(x, weight, None, kernel_name=kernel)
    flat = x.dim() != 2
    x2 = x.reshape(-1, x.shape[-1]) if flat else x
    y = _nt_fast(x2, weight, 1.0, kernel, workspace)
    if y is None:  # everything else, checked and explained by matmul
        y = matmul(x2, weight.t(), kernel=kernel, workspace=workspace)
    return y.reshape(*x.shape[:-1], weight.shape[0]) if flat else y


def workspace(device=None):
    """A workspace for hgemm.linear and hgemm.matmul: WORKSPACE_BYTES of
    zeros on `device` (a torch device or index; None: the current CUDA
    device), as a torch uint8 tensor. Every call leaves it ready for the
    next (its flags reset; its partial sums are left as they are); keep one
    per stream."""
    if torch is None:
        raise RuntimeError("hgemm.workspace makes a torch tensor, and torch is not installed")
    if device is None:
        device = torch.device("cuda", torch.cuda.current_device())
    device = torch.device("cuda", device) if isinstance(device, int) else torch.device(device)
    if device.type != "cuda":
        raise ValueError("workspace: expected a CUDA device, got %s" % device)
    return torch.zeros(WORKSPACE_BYTES, dtype=torch.uint8, device=device)


def _register():
    @torch.library.custom_op("hgemm::nt", mutates_args=())
    def hgemm_nt(a: torch.Tensor, b: torch.Tensor, alpha: float = 1.0,
                 kernel_name: str = "auto") -> torch.Tensor:
        out = _nt_fast(a, b, alpha, kernel_name)
        if out is not None:
            return out
        out = a.new_empty((a.shape[0], b.shape[0]))
        # Everything else through nt(), which says what is wrong with it.
        # (A tensor off the GPU gets no stream.)
        stream = torch.cuda.current_stream(a.device) if a.is_cuda else None
        # detach(): __cuda_array_interface__ refuses tensors that require grad.
        nt(a.detach(), b.detach(), out=out, alpha=alpha, kernel=kernel_name, stream=stream)
        return out

    # What torch.compile (and other fake-tensor tracing) sees: shape, dtype and
    # device of the result, without running anything.
    @hgemm_nt.register_fake
    def _(a, b, alpha=1.0, kernel_name="auto"):
        return a.new_empty((a.shape[0], b.shape[0]))

    @torch.library.custom_op("hgemm::matmul", mutates_args=())
    def hgemm_matmul(a: torch.Tensor, b: torch.Tensor, alpha: float = 1.0,
                     kernel_name: str = "auto") -> torch.Tensor:
        _check_types(a, b)
        return matmul(a, b, _matmul_result(a, b), alpha=alpha, kernel=kernel_name)

    @hgemm_matmul.register_fake
    def _(a, b, alpha=1.0, kernel_name="auto"):
        _check_types(a, b)
        return _matmul_result(a, b)

    @torch.library.custom_op("hgemm::matmul_out", mutates_args=("out",))
    def hgemm_matmul_out(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, alpha: float = 1.0,
                         beta: float = 0.0, kernel_name: str = "auto") -> None:
        matmul(a, b, out, alpha=alpha, beta=beta, kernel=kernel_name)

    @hgemm_matmul_out.register_fake
    def _(a, b, out, alpha=1.0, beta=0.0, kernel_name="auto"):
        _check_types(a, b, out)
        batch, m, n, _ = matmul_shapes(a.shape, b.shape)
        if tuple(out.shape) != batch + (m, n):
            raise ValueError("out has shape %s; a @ b has shape %s"
                             % (tuple(out.shape), batch + (m, n)))

    return hgemm_nt, hgemm_matmul, hgemm_matmul_out


def _native_candidates():
    """Where libhgemm_torch.so (python/hgemm/csrc/ops.cpp) may be, in order:
    $HGEMM_TORCH_LIBRARY, beside this file (a wheel), beside the libhgemm.so
    in use (a build tree), build/ of this repository."""
    import os
    explicit = os.environ.get("HGEMM_TORCH_LIBRARY")
    if explicit:
        return [explicit]
    here = os.path.dirname(os.path.abspath(__file__))
    paths = [os.path.join(here, "libhgemm_torch.so")]
    try:
        from . import library_path
        paths.append(os.path.join(os.path.dirname(library_path()), "libhgemm_torch.so"))
    except OSError:
        pass
    paths.append(os.path.join(os.path.dirname(os.path.dirname(here)), "build", "libhgemm_torch.so"))
    return paths


def _load_native():
    """Load the C++ operators into torch; (path, None) on success, else
    (None, why). libhgemm.so is loaded first, so that both use one copy."""
    import os
    tried = []
    for path in _native_candidates():
        if not os.path.exists(path):
            tried.append(path + " (missing)")
            continue
        try:
            _load()
            torch.ops.load_library(path)
            return path, None
        except (OSError, RuntimeError) as e:
            tried.append("%s (%s)" % (path, e))
            if os.environ.get("HGEMM_TORCH_LIBRARY"):
                raise
    return None, "; ".join(tried)


# The native operators (torch.ops.hgemm.mm, .linear, .bmm, .baddbmm, .matmul,
# .matmul_out, .nt from libhgemm_torch.so), or, where that library is not
# built, .nt/.matmul/.matmul_out registered from Python over ctypes.
native_path, native_missing = (None, "torch is not installed") if torch is None else _load_native()
op = matmul_op = matmul_out_op = None
_native_linear = None
if native_path is not None:
    op, matmul_op, matmul_out_op = torch.ops.hgemm.nt, torch.ops.hgemm.matmul, torch.ops.hgemm.matmul_out
    # The op's C++ entry itself: OpOverload.__call__ is one Python frame around it.
    _native_linear = torch.ops.hgemm.linear.default._op
elif torch is not None and hasattr(torch, "library") and hasattr(torch.library, "custom_op"):
    try:
        op, matmul_op, matmul_out_op = _register()
    except Exception as e:  # e.g. registered already by another copy of hgemm
        warnings.warn("hgemm: torch.ops.hgemm not registered: %s" % e, RuntimeWarning)
