"""GPU tests of the hgemm Python package: real products through torch and cupy.

    PYTHONPATH=python HGEMM_LIBRARY=build/libhgemm.so python3 python/tests/run_gpu.py

Each class skips itself (unittest.SkipTest) when its library (torch, cupy) is
missing or there is no sm_90 GPU; run_gpu.py exits 77 when nothing ran.
Results are compared with a @ b.T computed in fp32 from the same fp16
inputs, with the tolerances of DESIGN.md: atol 1e-2 for kernels accumulating
in fp32, 5e-2 for v6 (fp16 accumulation), rtol 1e-2 for both. The inputs are
scaled so that the outputs have unit variance. Nothing here is slow: the
timing against torch.matmul is python/bench_torch.py.
"""
import unittest

import hgemm

SHAPES = ((1, 1, 1), (129, 264, 72), (777, 1032, 520))  # (m, n, k), ragged
KERNELS = ("auto", "v6", "v7")
RTOL = 1e-2


def atol(kernel):
    return 5e-2 if kernel in ("v6", "v7") else 1e-2  # v6, v7 accumulate in fp16


def hopper(capability):
    return tuple(capability) == (9, 0)


class TorchTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        try:
            import torch
        except ImportError:
            raise unittest.SkipTest("torch is not installed")
        if not torch.cuda.is_available():
            raise unittest.SkipTest("torch sees no CUDA device")
        if not hopper(torch.cuda.get_device_capability()):
            raise unittest.SkipTest("hgemm needs an sm_90 GPU, this is sm_%d%d"
                                    % torch.cuda.get_device_capability())
        cls.torch = torch
        torch.manual_seed(0)

    def randn(self, rows, cols, k, **kw):
        # Entries of variance 1/sqrt(k): a dot product over k has variance 1.
        torch = self.torch
        return (torch.randn(rows, cols, device="cuda", **kw) * k ** -0.25).half()

    def reference(self, a, b, alpha=1.0, beta=0.0, c=None):
        ref = alpha * (a.float() @ b.float().T)
        return ref if c is None else ref + beta * c.float()

    def assertClose(self, got, ref, kernel, what):
        torch = self.torch
        self.assertEqual(got.dtype, torch.float16, what)
        self.assertEqual(tuple(got.shape), tuple(ref.shape), what)
        err = (got.float() - ref).abs()
        bad = ~(err <= atol(kernel) + RTOL * ref.abs())  # NaN counts as bad
        if bad.any():
            where = bad.nonzero()[:5].tolist()
            lines = ["  [%d, %d]: got %g, expected %g" % (i, j, got[i, j].item(), ref[i, j].item())
                     for i, j in where]
            self.fail("%s: %d of %d elements off (max abs error %g), first ones:\n%s"
                      % (what, int(bad.sum()), bad.numel(), float(err.nan_to_num(float("inf")).max()),
                         "\n".join(lines)))

    def test_shapes_and_kernels(self):
        for m, n, k in SHAPES:
            a, b = self.randn(m, k, k), self.randn(n, k, k)
            for kernel in KERNELS:
                out = hgemm.nt(a, b, kernel=kernel)  # out=None: torch.empty
                self.torch.cuda.synchronize()
                self.assertEqual(out.device, a.device)
                self.assertClose(out, self.reference(a, b), kernel,
                                 "%dx%dx%d %s" % (m, n, k, kernel))

    def test_padded_rows_and_guard_band(self):
        # Slices of wider tensors: leading dimensions larger than the rows. The
        # padding of out is a guard band that must stay as it was, and its
        # m x n region starts as NaN, which beta == 0 must never read.
        torch = self.torch
        m, n, k = 129, 264, 72
        a = self.randn(m, k + 64, k)[:, :k]
        b = self.randn(n, k + 128, k)[:, 8:8 + k]
        out_wide = torch.full((m, n + 40), 7.0, dtype=torch.float16, device="cuda")
        out = out_wide[:, :n]
        out.fill_(float("nan"))
        for kernel in KERNELS:
            self.assertIs(hgemm.nt(a, b, out, kernel=kernel), out)
            torch.cuda.synchronize()
            self.assertClose(out, self.reference(a, b), kernel, "padded " + kernel)
            self.assertTrue(bool((out_wide[:, n:] == 7.0).all()), "the guard band was written")

    def test_alpha_beta(self):
        torch = self.torch
        m, n, k = 777, 1032, 520
        a, b = self.randn(m, k, k), self.randn(n, k, k)
        c = torch.randn(m, n, device="cuda").half()
        for kernel in KERNELS:
            out = c.clone()
            hgemm.nt(a, b, out, alpha=0.5, beta=-1.5, kernel=kernel)
            torch.cuda.synchronize()
            self.assertClose(out, self.reference(a, b, 0.5, -1.5, c), kernel, "alpha/beta " + kernel)

    def test_kernel_by_id(self):
        a, b = self.randn(129, 72, 72), self.randn(264, 72, 72)
        out = hgemm.nt(a, b, kernel=hgemm.kernels().index("v6"))
        self.torch.cuda.synchronize()
        self.assertClose(out, self.reference(a, b), "v6", "kernel id")

    def test_streams(self):
        # On a side stream: given as torch's current stream, and given explicitly.
        torch = self.torch
        a, b = self.randn(777, 520, 520), self.randn(1032, 520, 520)
        side = torch.cuda.Stream()
        torch.cuda.synchronize()  # the inputs were made on the default stream
        with torch.cuda.stream(side):
            out = hgemm.nt(a, b)
        out2 = torch.empty_like(out)
        hgemm.nt(a, b, out2, stream=side)
        side.synchronize()
        self.assertClose(out, self.reference(a, b), "auto", "current side stream")
        self.assertClose(out2, self.reference(a, b), "auto", "stream=side")

    def test_errors_from_real_tensors(self):
        torch = self.torch
        a, b = self.randn(128, 64, 64), self.randn(64, 64, 64)
        with self.assertRaisesRegex(TypeError, "CUDA array"):
            hgemm.nt(a.cpu(), b)
        with self.assertRaisesRegex(TypeError, "fp16"):
            hgemm.nt(a.float(), b)
        # One element in: the pointer is 2 bytes off 16-byte alignment.
        flat = torch.empty(128 * 64 + 8, dtype=torch.float16, device="cuda")
        with self.assertRaises(hgemm.HgemmError) as cm:
            hgemm.nt(flat[1:1 + 128 * 64].view(128, 64), b)
        self.assertEqual(cm.exception.status, hgemm.ERROR_MISALIGNED)

    def test_custom_op(self):
        torch = self.torch
        if not hasattr(torch.ops.hgemm, "nt"):
            self.skipTest("this torch has no torch.library.custom_op")
        a, b = self.randn(129, 72, 72), self.randn(264, 72, 72)
        out = torch.ops.hgemm.nt(a, b)
        out2 = torch.ops.hgemm.nt(a, b, 0.5, "v6")
        torch.cuda.synchronize()
        self.assertClose(out, self.reference(a, b), "auto", "torch.ops.hgemm.nt")
        self.assertClose(out2, self.reference(a, b, 0.5), "v6", "torch.ops.hgemm.nt alpha, v6")
        if hasattr(torch.library, "opcheck"):
            torch.library.opcheck(torch.ops.hgemm.nt.default, (a, b))

    def test_custom_op_torch_path(self):
        # The op hands torch tensors straight to the library: strided rows,
        # one-row inputs (decode: AUTO is V9 there), empty products, and the
        # library's own errors, raised as HgemmError.
        torch = self.torch
        if not hasattr(torch.ops.hgemm, "nt"):
            self.skipTest("this torch has no torch.library.custom_op")
        wide_a, wide_b = self.randn(40, 200, 136), self.randn(520, 200, 136)
        a, b = wide_a[:, 8:144], wide_b[:, 16:152]  # row strides 200, k = 136
        x = self.randn(1, 4096, 4096)
        w = self.randn(1032, 4096, 4096)
        out, out1 = torch.ops.hgemm.nt(a, b, 2.0), torch.ops.hgemm.nt(x, w)
        torch.cuda.synchronize()
        self.assertClose(out, self.reference(a, b, 2.0), "auto", "strided rows")
        self.assertClose(out1, self.reference(x, w), "auto", "m = 1")
        self.assertEqual(tuple(torch.ops.hgemm.nt(a[:0], b).shape), (0, 520))
        flat = torch.empty(128 * 64 + 8, dtype=torch.float16, device="cuda")
        with self.assertRaises(hgemm.HgemmError) as cm:
            torch.ops.hgemm.nt(flat[1:1 + 128 * 64].view(128, 64), self.randn(64, 64, 64))
        self.assertEqual(cm.exception.status, hgemm.ERROR_MISALIGNED)
        with self.assertRaisesRegex(TypeError, "fp16"):
            torch.ops.hgemm.nt(a.float(), b.float())

    def test_torch_compile(self):
        # aot_eager traces with fake tensors (register_fake) and runs the graph
        # as it is, without generating code: the op's part, quickly.
        torch = self.torch
        if not hasattr(torch.ops.hgemm, "nt"):
            self.skipTest("this torch has no torch.library.custom_op")

        def f(x, w):
            return torch.ops.hgemm.nt(x, w, 2.0) * 0.25

        compiled = torch.compile(f, backend="aot_eager", fullgraph=True)
        a, b = self.randn(129, 72, 72), self.randn(264, 72, 72)
        out = compiled(a, b)
        torch.cuda.synchronize()
        self.assertClose(out, self.reference(a, b, 0.5), "auto", "torch.compile")


class CupyTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        try:
            import cupy
        except ImportError:
            raise unittest.SkipTest("cupy is not installed")
        try:
            if cupy.cuda.runtime.getDeviceCount() == 0:
                raise unittest.SkipTest("cupy sees no CUDA device")
            capability = cupy.cuda.Device().compute_capability  # "90"
        except cupy.cuda.runtime.CUDARuntimeError as e:
            raise unittest.SkipTest("cupy sees no CUDA device: %s" % e)
        if capability != "90":
            raise unittest.SkipTest("hgemm needs an sm_90 GPU, this is sm_%s" % capability)
        cls.cupy = cupy
        cupy.random.seed(0)

    def randn(self, rows, cols, k):
        cupy = self.cupy
        x = cupy.random.standard_normal((rows, cols), dtype=cupy.float32) * k ** -0.25
        return x.astype(cupy.float16)

    def reference(self, a, b, alpha=1.0, beta=0.0, c=None):
        cupy = self.cupy
        ref = alpha * (a.astype(cupy.float32) @ b.astype(cupy.float32).T)
        return ref if c is None else ref + beta * c.astype(cupy.float32)

    def assertClose(self, got, ref, kernel, what):
        cupy = self.cupy
        self.assertEqual(got.dtype, cupy.float16, what)
        self.assertEqual(got.shape, ref.shape, what)
        err = cupy.abs(got.astype(cupy.float32) - ref)
        bad = ~(err <= atol(kernel) + RTOL * cupy.abs(ref))
        if bool(bad.any()):
            where = cupy.argwhere(bad)[:5].get().tolist()
            lines = ["  [%d, %d]: got %g, expected %g" % (i, j, float(got[i, j]), float(ref[i, j]))
                     for i, j in where]
            self.fail("%s: %d of %d elements off (max abs error %g), first ones:\n%s"
                      % (what, int(bad.sum()), bad.size, float(cupy.nan_to_num(err, nan=float("inf")).max()),
                         "\n".join(lines)))

    def test_shapes_and_kernels(self):
        cupy = self.cupy
        for m, n, k in SHAPES:
            a, b = self.randn(m, k, k), self.randn(n, k, k)
            for kernel in KERNELS:
                out = hgemm.nt(a, b, kernel=kernel)  # out=None: cupy.empty
                cupy.cuda.Device().synchronize()
                self.assertClose(out, self.reference(a, b), kernel,
                                 "%dx%dx%d %s" % (m, n, k, kernel))

    def test_padded_rows_alpha_beta(self):
        cupy = self.cupy
        m, n, k = 777, 1032, 520
        a = self.randn(m, k + 64, k)[:, :k]
        b = self.randn(n, k + 16, k)[:, 16:]
        c = self.randn(m, n, 1)
        out_wide = cupy.full((m, n + 24), 7.0, dtype=cupy.float16)
        out = out_wide[:, :n]
        for kernel in KERNELS:
            out[...] = c
            self.assertIs(hgemm.nt(a, b, out, alpha=-2.0, beta=0.5, kernel=kernel), out)
            cupy.cuda.Device().synchronize()
            self.assertClose(out, self.reference(a, b, -2.0, 0.5, c), kernel, "padded " + kernel)
            self.assertTrue(bool((out_wide[:, n:] == 7.0).all()), "the guard band was written")

    def test_stream_from_the_interface(self):
        # cupy exports its current stream in __cuda_array_interface__ (v3).
        cupy = self.cupy
        a, b = self.randn(129, 72, 72), self.randn(264, 72, 72)
        cupy.cuda.Device().synchronize()
        side = cupy.cuda.Stream()
        with side:
            out = hgemm.nt(a, b)
        side.synchronize()
        self.assertClose(out, self.reference(a, b), "auto", "cupy side stream")
        out2 = cupy.empty_like(out)
        hgemm.nt(a, b, out2, stream=side)
        side.synchronize()
        self.assertClose(out2, self.reference(a, b), "auto", "stream=cupy stream")


if __name__ == "__main__":
    unittest.main()
