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


def _register():
    from . import nt

    @torch.library.custom_op("hgemm::nt", mutates_args=())
    def hgemm_nt(a: torch.Tensor, b: torch.Tensor, alpha: float = 1.0,
                 kernel: str = "auto") -> torch.Tensor:
        out = a.new_empty((a.shape[0], b.shape[0]))
        # (A tensor off the GPU gets no stream, and nt() says what is wrong with it.)
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
